//! Writes the benchmark dataset as an export document.
//!
//! `cargo run --release -p aw-benches --bin gen-dataset -- --days 365 -o year.json`

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::PathBuf;

use aw_benches::dataset::{self, DatasetSpec};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};

/// Generates one host's activity history for `POST /api/0/import`.
#[derive(Debug, Parser)]
struct Args {
    /// Days of history.
    #[arg(long, default_value_t = 365)]
    days: u32,
    /// Average events a day over the three buckets.
    #[arg(long, default_value_t = 1_500)]
    events_per_day: u32,
    /// Host name in the bucket ids.
    #[arg(long, default_value = "benchhost")]
    hostname: String,
    /// Output file; `-` for standard output.
    #[arg(short, long, default_value = "-")]
    output: PathBuf,
}

fn main() -> io::Result<()> {
    let args = Args::parse();
    let spec = DatasetSpec {
        days: args.days,
        events_per_day: args.events_per_day,
        hostname: args.hostname,
        ..DatasetSpec::default()
    };
    let bar = progress_bar(u64::from(spec.days), "days generated");
    let data = dataset::generate(&spec, |day| bar.set_position(u64::from(day) + 1));
    bar.finish_and_clear();
    let counts = [data.window.len(), data.web.len(), data.afk.len()];
    let total = data.len() as u64;
    let bar = progress_bar(total, "events written");
    let buckets = dataset::buckets(&spec, data);
    let out: Box<dyn Write> = if args.output.as_os_str() == "-" {
        Box::new(io::stdout().lock())
    } else {
        Box::new(File::create(&args.output)?)
    };
    dataset::write_export(&buckets, BufWriter::new(out), |n| bar.set_position(n))?;
    bar.finish_and_clear();
    eprintln!(
        "{} days: {total} events (window {}, web {}, afk {})",
        spec.days, counts[0], counts[1], counts[2]
    );
    Ok(())
}

/// A bar on stderr when it is a terminal, nothing otherwise.
fn progress_bar(length: u64, what: &str) -> ProgressBar {
    if !io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(length);
    let template = format!("{{bar:40}} {{pos}}/{{len}} {what} ({{per_sec}}, eta {{eta}})");
    if let Ok(style) = ProgressStyle::with_template(&template) {
        bar.set_style(style);
    }
    bar
}
