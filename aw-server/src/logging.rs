//! Logging to stderr and to a file per start, in the reference's log
//! folder (`dirs::log_dir`).
//!
//! At the default level there is no per-request logging: Rocket's own
//! messages are limited to warnings unless `--verbose`. `RUST_LOG` (or the
//! reference's `LOG_LEVEL`) overrides the level, but Rocket and hyper never
//! log below info: their debug lines show whole requests, credentials
//! included.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Writes every log line to stderr and to the log file (env_logger
/// serialises the calls).
struct Tee {
    file: File,
}

impl Write for Tee {
    fn write(&mut self, buffer: &[u8]) -> io::Result<usize> {
        io::stderr().write_all(buffer)?;
        // A full disk must not stop the server; stderr still has the line.
        let _ = self.file.write_all(buffer);
        Ok(buffer.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        let _ = self.file.flush();
        io::stderr().flush()
    }
}

/// Installs the logger; returns the log file's path.
pub fn init(log_dir: &Path, testing: bool, verbose: bool) -> io::Result<PathBuf> {
    let name = if testing {
        "aw-server-rust-testing"
    } else {
        "aw-server-rust"
    };
    let stamp = chrono::Local::now().format("%Y-%m-%dT%H-%M-%S%z");
    let path = log_dir.join(format!("{name}_{stamp}.log"));
    let file = File::options().create(true).append(true).open(&path)?;

    let default_level = if verbose { "debug" } else { "info" };
    let mut builder = env_logger::Builder::new();
    builder.parse_filters(default_level);
    if !verbose {
        // Rocket logs each request at info level under the `_` target.
        builder.filter_module("_", log::LevelFilter::Warn);
    }
    let asked = std::env::var("LOG_LEVEL").or_else(|_| std::env::var("RUST_LOG"));
    if let Ok(filters) = &asked {
        builder.parse_filters(filters);
    }
    // At debug level Rocket and hyper print whole requests, headers
    // (`Authorization`) and addresses included: never below info, so no
    // log shows a key or token, whatever the level asked for. Nor above
    // what was asked: `LOG_LEVEL=warn` keeps Rocket's line per request out.
    for module in ["rocket", "hyper"] {
        let cap = if verbose {
            log::LevelFilter::Info
        } else if let Ok(filters) = &asked {
            asked_level(filters, module).min(log::LevelFilter::Info)
        } else {
            log::LevelFilter::Warn
        };
        builder.filter_module(module, cap);
    }
    builder
        .format_timestamp_millis()
        .write_style(env_logger::WriteStyle::Never)
        .target(env_logger::Target::Pipe(Box::new(Tee { file })));
    let logger = builder.build();
    let max_level = logger.filter();
    log::set_boxed_logger(Box::new(Lowered(logger)))
        .map_err(|error| io::Error::other(error.to_string()))?;
    log::set_max_level(max_level);
    Ok(path)
}

/// The logger with two lines Rocket logs as warnings as the information
/// they are: its launch ("Rocket has launched from …": `aw-server
/// listening on` says the same) and a stop asked for ("Received SIGTERM.
/// Requesting shutdown."). Logged with `--verbose`; never a warning in
/// the log of every run.
struct Lowered(env_logger::Logger);

impl Lowered {
    fn lowers(record: &log::Record<'_>) -> bool {
        if record.level() != log::Level::Warn || !record.target().starts_with("rocket::") {
            return false;
        }
        record.target().starts_with("rocket::launch")
            || (record.target().starts_with("rocket::server")
                && record.args().to_string().starts_with("Received SIG"))
    }
}

impl log::Log for Lowered {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        self.0.enabled(metadata)
    }

    fn log(&self, record: &log::Record<'_>) {
        if Lowered::lowers(record) {
            self.0.log(
                &log::Record::builder()
                    .args(*record.args())
                    .level(log::Level::Info)
                    .target(record.target())
                    .module_path(record.module_path())
                    .file(record.file())
                    .line(record.line())
                    .build(),
            );
        } else {
            self.0.log(record);
        }
    }

    fn flush(&self) {
        self.0.flush();
    }
}

/// The most detailed level `filters` (`RUST_LOG` syntax) lets through for
/// `module`'s messages; warnings where they name neither the module nor a
/// default.
fn asked_level(filters: &str, module: &str) -> log::LevelFilter {
    use log::Log;
    let logger = env_logger::Builder::new()
        .parse_filters("warn")
        .parse_filters(filters)
        .build();
    let enabled = |level: log::Level| {
        logger.enabled(&log::Metadata::builder().target(module).level(level).build())
    };
    let levels: Vec<log::LevelFilter> = log::LevelFilter::iter().collect();
    levels
        .into_iter()
        .rev()
        .find(|level| level.to_level().is_none_or(enabled))
        .unwrap_or(log::LevelFilter::Off)
}

/// Warnings and errors of a command (`export`, `import`, `sync`...) on
/// stderr, with no log file: the datastore reports through `log` what a
/// user of the command must see, such as skipped corrupt rows, a full
/// disk or stored privacy rules it leaves out. `RUST_LOG` (or `LOG_LEVEL`)
/// shows more.
pub fn init_for_command() {
    let mut builder = env_logger::Builder::new();
    builder.parse_filters("warn");
    if let Ok(filters) = std::env::var("LOG_LEVEL").or_else(|_| std::env::var("RUST_LOG")) {
        builder.parse_filters(&filters);
    }
    builder
        .format(|out, record| {
            let level = record.level().as_str().to_ascii_lowercase();
            writeln!(out, "aw-server: {level}: {}", record.args())
        })
        .write_style(env_logger::WriteStyle::Never)
        .target(env_logger::Target::Stderr);
    // Only fails if a logger is already installed, which then logs.
    let _ = builder.try_init();
}

#[cfg(test)]
mod tests {
    use super::*;
    use log::LevelFilter;

    #[test]
    fn rocket_logs_no_more_than_asked_and_never_below_info() {
        let cap = |filters: &str| asked_level(filters, "rocket").min(LevelFilter::Info);
        assert_eq!(cap("warn"), LevelFilter::Warn);
        assert_eq!(cap("error"), LevelFilter::Error);
        assert_eq!(cap("off"), LevelFilter::Off);
        assert_eq!(cap("info"), LevelFilter::Info);
        assert_eq!(cap("trace"), LevelFilter::Info);
        assert_eq!(cap("warn,rocket=debug"), LevelFilter::Info);
        assert_eq!(cap("debug,rocket=error"), LevelFilter::Error);
        assert_eq!(cap("aw_server=debug"), LevelFilter::Warn);
    }
}
