//! The `aw-server` command: parses flags (`docs/API.md` §10), sets up logging,
//! config, the datastore and the device id, runs the server until SIGINT
//! or SIGTERM, then closes the datastore so every acknowledged write is on
//! disk before exiting 0.
//!
//! The server is the default command; `export`, `import`,
//! `delete-range`, `apply-privacy-filters`, `vacuum` and `sync` are
//! `aw_server::cli`'s. Errors print as one message and exit with 1 (clap's
//! usage errors with 2).

mod allocator;
mod service;

use std::path::PathBuf;

use anyhow::Context;
use aw_server::{cli, config, damage, dirs, logging, ServerConfig};
use clap::{Args, Parser, Subcommand};

/// ActivityWatch server: stores events from watchers and serves them to
/// the web UI and clients.
#[derive(Debug, Parser)]
#[command(version, about, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    server: ServerArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the server (the default when no command is given).
    Serve(ServerArgs),
    /// Write buckets and their events to a file or stdout, through a
    /// running server or from the database file.
    Export(cli::export::ExportArgs),
    /// Merge export files into the buckets of a running server or of the
    /// database file; events already there are skipped.
    Import(cli::import::ImportArgs),
    /// Remove all activity in [start, end) from some or all buckets:
    /// events inside are deleted, events crossing an edge are trimmed.
    DeleteRange(cli::history::DeleteRangeArgs),
    /// Apply the privacy filters (the `privacy_filters` setting) to the
    /// events already stored: drop and redact as for new events.
    ApplyPrivacyFilters(cli::history::ApplyRulesArgs),
    /// Give the space of deleted events back to the file system by
    /// rebuilding the database file (needs free space about its size).
    Vacuum(cli::vacuum::VacuumArgs),
    /// Push this device's buckets into a shared folder and pull the other
    /// devices' (aw-sync's layout), through a running server or on the
    /// database file.
    Sync(cli::sync::SyncArgs),
    /// Write a consistent snapshot of the database, through a running
    /// server (into its backup folder) or from the database file.
    Backup(cli::backup::BackupArgs),
    /// Put a snapshot back in place of the database file (no server may
    /// be using it); the current file is moved aside, not deleted.
    Restore(cli::restore::RestoreArgs),
    /// Check whether the database file is healthy; with --repair, salvage
    /// a damaged one (no server may be using it).
    Check(cli::check::CheckArgs),
    /// API tokens with scopes (read, write, admin): add (printed once),
    /// list, revoke; through the running server or on the database file.
    Token(cli::token::TokenArgs),
    /// Hosts: list, rename, merge and alias them (a snapshot first;
    /// --dry-run shows the plan); through the running server or on the
    /// database file.
    Hosts(cli::hosts::HostsArgs),
    /// Alerts of `[alerts]`: a test message to every channel, or the
    /// digest of yesterday (--week: last week) shown or sent (--send).
    Alerts(cli::alerts::AlertsArgs),
    /// Several people on one server, each with a database file of their
    /// own: add (their first admin token printed once), list, remove.
    User(cli::user::UserArgs),
    /// Active time of a day, week, month or period, grouped by app,
    /// category, domain, day...: a table, Markdown, CSV or JSON; through
    /// the running server or on the database file.
    Report(cli::report::ReportArgs),
    /// A Model Context Protocol server on stdin/stdout, so an AI assistant
    /// can read (never write) your activity: list_buckets, summary,
    /// search, query.
    Mcp(cli::mcp::McpArgs),
}

/// Flags of the server, named as aw-server-rust's.
#[derive(Debug, Clone, Args)]
struct ServerArgs {
    /// Testing mode: port 5666, separate config and database files.
    #[arg(long)]
    testing: bool,
    /// Address to bind (default 127.0.0.1, or the config file's).
    #[arg(long)]
    host: Option<String>,
    /// Port to listen on (default 5600, 5666 with --testing).
    #[arg(long)]
    port: Option<u16>,
    /// The SQLite database file.
    #[arg(long)]
    dbpath: Option<PathBuf>,
    /// Folder of a built aw-webui to serve at /.
    #[arg(long)]
    webpath: Option<PathBuf>,
    /// Extra static folders at /pages/<name>/: name=path,name2=path2.
    #[arg(long)]
    custom_static: Option<String>,
    /// Config file (created with commented defaults if missing).
    #[arg(short, long)]
    config: Option<PathBuf>,
    /// Use this device id instead of the persisted one.
    #[arg(long)]
    device_id: Option<String>,
    /// Do not import the Python aw-server's database on the first start
    /// with a new database (as aw-server-rust).
    #[arg(long)]
    no_legacy_import: bool,
    /// Password of the encrypted database (builds with the `sqlcipher`
    /// feature); a new database is created encrypted with it. Prefer the
    /// environment variable: a flag is visible to other users in `ps`.
    #[arg(long, env = "AW_DB_PASSWORD", hide_env_values = true)]
    db_password: Option<String>,
    /// Debug logging, including every request.
    #[arg(long)]
    verbose: bool,
    /// Listen beyond loopback even with no API key or token: only behind
    /// a proxy that authenticates (also [auth] allow_unauthenticated_remote).
    #[arg(long)]
    allow_unauthenticated_remote: bool,
}

/// Asks Linux not to back this process's memory with transparent huge
/// pages. mimalloc asks for them by default, and the kernel then zeroes a
/// whole huge page the first time a query touches any byte of it, which
/// cost CPU and peak memory (`benches/runs/2026-11-history.md`,
/// transparent huge pages).
fn no_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    if let Err(err) = rustix::thread::disable_transparent_huge_pages(true) {
        // Only an old kernel refuses; the server works the same.
        eprintln!("Could not turn transparent huge pages off: {err}");
    }
}

/// The runtime the HTTP side runs on: one async worker. It parses, routes
/// and writes answers, and reads short event listings (estimated at no more
/// than `aw_datastore::SMALL_READ` events) itself; everything heavier runs
/// on the datastore's threads or the background pool. With more workers,
/// tokio hands a task woken from outside (a heartbeat answered by the
/// writer) to whichever worker sleeps, so a heartbeat from a sequential
/// client woke both workers: 4.5 context switches per heartbeat against 3.1
/// with one (`benches/runs/2026-11-28-heartbeat-cpu.md`).
fn serving_runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("rocket-worker-thread")
        .enable_all()
        .build()
        .context("cannot start the server's runtime")
}

fn main() -> anyhow::Result<()> {
    let purge_delay = allocator::set_purge_delay();
    no_transparent_huge_pages();
    let cli = Cli::parse();
    if !matches!(cli.command, None | Some(Command::Serve(_))) {
        logging::init_for_command();
    }
    let args = match cli.command {
        Some(Command::Serve(args)) => args,
        Some(Command::Export(args)) => return finish(cli::export::run(args)),
        Some(Command::Import(args)) => return finish(cli::import::run(args)),
        Some(Command::DeleteRange(args)) => return finish(cli::history::delete_range(args)),
        Some(Command::ApplyPrivacyFilters(args)) => return finish(cli::history::apply_rules(args)),
        Some(Command::Vacuum(args)) => return finish(cli::vacuum::run(args)),
        Some(Command::Sync(args)) => return finish(cli::sync::run(args)),
        Some(Command::Backup(args)) => return finish(cli::backup::run(args)),
        Some(Command::Restore(args)) => return finish(cli::restore::run(args)),
        Some(Command::Check(args)) => return finish(cli::check::run(args)),
        Some(Command::Token(args)) => return finish(cli::token::run(args)),
        Some(Command::Hosts(args)) => return finish(cli::hosts::run(args)),
        Some(Command::Alerts(args)) => return finish(cli::alerts::run(args)),
        Some(Command::User(args)) => return finish(cli::user::run(args)),
        Some(Command::Report(args)) => return finish(cli::report::run(args)),
        Some(Command::Mcp(args)) => return finish(cli::mcp::run(args)),
        None => cli.server,
    };
    if let Err(error) = serve(args, purge_delay) {
        // The reason and its causes on one line, without the backtrace
        // anyhow adds when RUST_BACKTRACE is set: a refused start is the
        // user's to fix, not a crash.
        eprintln!("aw-server: {error:#}");
        std::process::exit(1);
    }
    Ok(())
}

/// Ends a command: its error on stderr and exit status 1.
fn finish(result: Result<(), cli::CliError>) -> anyhow::Result<()> {
    if let Err(error) = result {
        eprintln!("aw-server: {error}");
        std::process::exit(1);
    }
    Ok(())
}

fn serve(args: ServerArgs, purge_delay: std::ffi::c_long) -> anyhow::Result<()> {
    let log_path = logging::init(&dirs::log_dir()?, args.testing, args.verbose)
        .context("cannot set up logging")?;
    log::info!("Logging to {}", log_path.display());
    log::info!("Allocator purge delay: {purge_delay} ms");

    let config_path = match &args.config {
        Some(path) => path.clone(),
        None => dirs::config_path(args.testing)?,
    };
    let file = config::FileConfig::load_or_create(&config_path, args.testing)?;
    log::info!("Using config {}", config_path.display());

    let mut config = ServerConfig {
        testing: args.testing,
        verbose: args.verbose,
        ..ServerConfig::default()
    };
    config.apply_file(file)?;
    match &config.sync {
        Some(sync) if sync.enabled => log::info!(
            "Sync: a {} pass with {} every {} s",
            sync.mode,
            sync.folder.display(),
            sync.interval.as_secs()
        ),
        Some(sync) => log::info!(
            "Sync: {} is configured but not enabled: passes run only when asked for",
            sync.folder.display()
        ),
        None => {}
    }
    if let Some(hub) = &config.hub {
        log::info!(
            "Hub: this device's own buckets are forwarded to {} every {} s",
            hub.url,
            hub.interval.as_secs()
        );
    }
    if let Some(keep_days) = config.keep_days {
        log::info!("Retention: events that ended more than {keep_days} days ago are deleted daily");
    }
    if let Some(host) = &args.host {
        config.address = config::parse_address(host)?;
    }
    config.allow_unauthenticated_remote |= args.allow_unauthenticated_remote;
    if let Some(port) = args.port {
        config.port = port;
    }
    if let Some(spec) = &args.custom_static {
        config
            .custom_static
            .extend(config::parse_custom_static(spec)?);
    }
    if let Some(folder) = &args.webpath {
        if !folder.join("index.html").is_file() {
            anyhow::bail!(
                "--webpath {}: {}; give the folder of a built aw-webui (its dist/, made by \
                 `make build`), or leave the flag out for the built-in dashboard",
                folder.display(),
                if folder.is_dir() {
                    "the folder has no index.html"
                } else {
                    "there is no such folder"
                }
            );
        }
    }
    config.webpath = args.webpath.clone();
    config.db_path = match &args.dbpath {
        Some(path) => path.clone(),
        None => dirs::db_path(args.testing)?,
    };
    if let Some(parent) = config
        .db_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    config.device_id = match &args.device_id {
        Some(id) => id.clone(),
        None => dirs::device_id(&dirs::data_dir()?).context("cannot read the device id")?,
    };
    config.hostname = dirs::hostname();

    if config.users.is_some() {
        if args.db_password.is_some() || std::env::var_os("AW_DB_PASSWORD").is_some() {
            anyhow::bail!(
                "[users] enabled: people's files are not encrypted by this server yet; start \
                 without --db-password (and AW_DB_PASSWORD), or without [users]"
            );
        }
        return serve_users(config);
    }
    let key =
        cli::database_key(args.db_password.as_deref()).map_err(|error| anyhow::anyhow!(error))?;
    if key.is_some() {
        log::info!("The database is encrypted (SQLCipher)");
    }
    log::info!("Using database {}", config.db_path.display());
    // aw-server-rust's conditions: the default database, new, and not
    // told otherwise.
    if args.dbpath.is_none() && !args.no_legacy_import {
        match dirs::legacy_db_path(args.testing) {
            Ok(source) => {
                aw_transfer::legacy::import_on_first_start(&source, &config.db_path, key.as_ref())
            }
            Err(error) => log::warn!("Not looking for a Python aw-server database: {error}"),
        }
    }
    let opened = damage::open(&config.db_path, key.as_ref())
        .with_context(|| format!("cannot open the database {}", config.db_path.display()))?;
    let (datastore, salvage) = match opened {
        damage::Opened::Ready(datastore, salvage) => (datastore, salvage),
        damage::Opened::Unreadable(why) => {
            let message = damage::unreadable_message(&config.db_path, &why, key.is_some());
            // Once: the log goes to stderr too.
            log::error!("{message}");
            std::process::exit(damage::EXIT_UNREADABLE);
        }
    };
    aw_server::finish_host_change(&datastore);
    let found = aw_server::Found {
        embedded_webui: aw_server::embedded_webui(),
        salvage,
    };
    let rocket = aw_server::build_rocket(datastore.clone(), config, found)?.attach(
        rocket::fairing::AdHoc::on_liftoff("systemd readiness", |_| {
            Box::pin(async { service::ready() })
        }),
    );

    let launched = launch(rocket);
    service::stopping();
    // Whatever ended the server, make every acknowledged write durable.
    let closed = datastore.close();
    launched.context("server failed")?;
    closed.context("closing the database failed")?;
    log::info!("Shut down cleanly");
    Ok(())
}

/// Serves several people ([users] enabled): a file each under the data
/// folder's users/, opened as their requests come.
fn serve_users(config: aw_server::ServerConfig) -> anyhow::Result<()> {
    for (section, set) in [
        ("[sync]", config.sync.is_some()),
        ("[hub]", config.hub.is_some()),
        ("[alerts]", config.alerts.is_some()),
    ] {
        if set {
            log::warn!(
                "{section} is not applied while [users] is enabled: each person's file has no \
                 {section} of its own yet"
            );
        }
    }
    let hosting = aw_server::Hosting::open(&config).context("cannot open the users")?;
    log::info!(
        "Hosting several people: their files are in {}",
        hosting.users.root().display()
    );
    let hosting = std::sync::Arc::new(hosting);
    let rocket = aw_server::build_hosting(
        std::sync::Arc::clone(&hosting),
        config,
        aw_server::Found {
            embedded_webui: aw_server::embedded_webui(),
            salvage: None,
        },
    )?
    .attach(rocket::fairing::AdHoc::on_liftoff(
        "systemd readiness",
        |_| Box::pin(async { service::ready() }),
    ));
    let launched = launch(rocket);
    service::stopping();
    hosting.close_all();
    launched.context("server failed")?;
    log::info!("Shut down cleanly");
    Ok(())
}

/// Runs the server until SIGINT or SIGTERM.
fn launch(rocket: rocket::Rocket<rocket::Build>) -> anyhow::Result<()> {
    let launched = match serving_runtime()?.block_on(rocket.launch()) {
        // Rocket reports a shutdown as failed when connection tasks still
        // ran as its accept loop ended, which a busy server hit now and
        // then right after SIGTERM. Those requests either got their answer
        // or were never acknowledged, and the datastore closes below all
        // the same, so it is a normal stop.
        Err(error) if matches!(error.kind(), rocket::error::ErrorKind::Shutdown(_, None)) => {
            log::warn!("Stopped while requests were still being answered");
            Ok(())
        }
        other => other.map(|_| ()),
    };
    Ok(launched?)
}
