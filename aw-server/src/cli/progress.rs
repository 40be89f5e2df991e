//! Progress on stderr: an indicatif bar with the rate and ETA when stderr
//! is a terminal, nothing otherwise (scripts and logs get only the
//! one-line summary).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{HumanCount, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// What a bar counts.
#[derive(Debug, Clone, Copy)]
pub enum Unit {
    /// Events, with events per second.
    Events,
    /// Bytes of a file.
    Bytes,
}

/// A bar of `total` units (a spinner when unknown) labelled `message`.
pub fn bar(total: Option<u64>, unit: Unit, message: String) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
    let counts = match unit {
        Unit::Events => "{human_pos}/{human_len} events ({rate} events/s, ETA {eta})",
        Unit::Bytes => "{bytes}/{total_bytes} ({bytes_per_sec}, ETA {eta})",
    };
    let template = format!("{{msg}} [{{bar:30}}] {counts}");
    if let Ok(style) = ProgressStyle::with_template(&template) {
        // indicatif's own {per_sec} prints four decimals.
        let rate = |state: &ProgressState, out: &mut dyn std::fmt::Write| {
            let _ = write!(out, "{}", HumanCount(state.per_sec() as u64));
        };
        bar.set_style(style.progress_chars("=> ").with_key("rate", rate));
    }
    bar.set_message(message);
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// A spinner labelled `message` while something of unknown length runs
/// (hidden when stderr is no terminal).
pub fn spinner(message: String) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let spinner = ProgressBar::new_spinner().with_message(message);
    spinner.enable_steady_tick(Duration::from_millis(200));
    spinner
}

/// A size for a message: `12.3 MB`.
pub fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}
