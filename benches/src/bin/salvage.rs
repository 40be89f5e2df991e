//! The figures of a damaged database on the generated year:
//!
//! - the whole-file check (`aw-server check`, SQLite's `quick_check`), which
//!   a start runs after anything but a clean close;
//! - the salvage of the year with one damaged table leaf page in the middle
//!   of the file (`aw-server check --repair`): its time, and the events it
//!   recovered against the year's count minus the rows of that page;
//! - the server's start on the year after a clean stop (no check) and after
//!   a kill (the check runs), until `/api/0/buckets/` answers; each server
//!   runs `--settle-secs` first, as a clean close vouches for the file only
//!   once the server has counted its buckets.
//!
//! Everything runs on copies of `target/bench/dashboard-year.db` in a
//! temporary folder; the original is only read.
//!
//! ```text
//! cargo build --release -p aw-server -p aw-benches --bin aw-server --bin salvage
//! target/release/salvage [--server target/release/aw-server] [--db target/bench/dashboard-year.db] [--rounds 5]
//! ```

#[path = "../../../aw-datastore/tests/support/pages.rs"]
mod pages;

use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use aw_benches::server::ServerProcess;
use aw_datastore::Datastore;
use clap::Parser;
use pages::{pages_of_kind, scramble, TABLE_LEAF};

/// Times the check, the salvage and the starts of issue #38.
#[derive(Debug, Parser)]
struct Args {
    /// The server binary.
    #[arg(long, default_value = "target/release/aw-server")]
    server: PathBuf,
    /// The database to copy; only read.
    #[arg(long, default_value = "target/bench/dashboard-year.db")]
    db: PathBuf,
    /// Runs of each figure.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Seconds a started server runs before it is stopped or killed: a
    /// clean close vouches for the file (so the next start skips the check)
    /// once the server has counted its buckets, a moment after a start on
    /// a file it meets for the first time.
    #[arg(long, default_value_t = 3)]
    settle_secs: u64,
}

fn main() -> io::Result<()> {
    let args = Args::parse();
    let folder = tempfile::Builder::new()
        .prefix("aw-bench-salvage-")
        .tempdir()?;
    let copy = folder.path().join("year.db");
    std::fs::copy(&args.db, &copy)?;
    let events = count_events(&copy)?;
    let bytes = std::fs::metadata(&copy)?.len();
    println!(
        "The year: {} ({:.1} MB, {events} events), {} rounds each\n",
        args.db.display(),
        bytes as f64 / 1e6,
        args.rounds
    );

    let mut checks = Vec::new();
    for _ in 0..args.rounds {
        let started = Instant::now();
        let said = aw_server(&args.server, &["check", "--dbpath"], &copy)?;
        if !said.contains("is healthy") {
            return Err(io::Error::other(format!("the copy is not healthy: {said}")));
        }
        checks.push(started.elapsed());
    }

    let mut salvages = Vec::new();
    let mut recovered = Vec::new();
    for round in 0..args.rounds {
        let damaged = folder.path().join(format!("damaged-{round}.db"));
        let mut file = std::fs::read(&args.db)?;
        let leaves = pages_of_kind(&file, TABLE_LEAF);
        let (index, cells) = leaves[leaves.len() / 2 + round];
        scramble(&mut file, index, 1_000 + round as u64);
        std::fs::write(&damaged, &file)?;
        drop(file);
        let started = Instant::now();
        let said = aw_server(&args.server, &["check", "--repair", "--dbpath"], &damaged)?;
        salvages.push(started.elapsed());
        let salvaged = said
            .split("Salvaged ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|count| count.parse::<u64>().ok())
            .ok_or_else(|| io::Error::other(format!("no salvage reported: {said}")))?;
        let served = count_events(&damaged)?;
        if served != salvaged || served != events - u64::from(cells) {
            return Err(io::Error::other(format!(
                "round {round}: {salvaged} salvaged, {served} served, expected {} - {cells}",
                events
            )));
        }
        recovered.push((served, cells));
        for entry in std::fs::read_dir(folder.path())? {
            let path = entry?.path();
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            if name.starts_with(&format!("damaged-{round}.db")) {
                let _ = std::fs::remove_file(&path);
            }
        }
    }

    let settle = || std::thread::sleep(Duration::from_secs(args.settle_secs));
    let mut server = ServerProcess::start("salvage", &args.server)?;
    server.replace_database(&copy)?;
    server.restart()?;
    let mut clean = Vec::new();
    let mut crashed = Vec::new();
    for _ in 0..args.rounds {
        settle();
        clean.push(server.restart()?);
        settle();
        crashed.push(server.crash_and_restart()?);
    }
    server.stop()?;

    println!("| figure | median | min | max |");
    println!("| --- | --- | --- | --- |");
    for (figure, times) in [
        ("`check` of the healthy year (quick_check)", &checks),
        (
            "`check --repair` of the year, one leaf page damaged",
            &salvages,
        ),
        ("start after a clean stop (no check)", &clean),
        ("start after a kill (the check runs)", &crashed),
    ] {
        let (median, min, max) = spread(times);
        println!(
            "| {figure} | {:.0} ms | {:.0} ms | {:.0} ms |",
            millis(median),
            millis(min),
            millis(max)
        );
    }
    println!();
    for (round, (served, cells)) in recovered.iter().enumerate() {
        println!(
            "salvage {}: {served} of {events} events served, the damaged page held {cells}",
            round + 1
        );
    }
    Ok(())
}

/// Runs `aw-server ARGS... PATH` and returns its stderr; fails on a
/// non-zero exit.
fn aw_server(binary: &Path, args: &[&str], path: &Path) -> io::Result<String> {
    let output = Command::new(binary).args(args).arg(path).output()?;
    let said = String::from_utf8_lossy(&output.stderr).into_owned();
    if !output.status.success() {
        return Err(io::Error::other(format!("{args:?} failed: {said}")));
    }
    Ok(said)
}

/// Every event of the database at `path`, counted by the datastore.
fn count_events(path: &Path) -> io::Result<u64> {
    let store = Datastore::open(path).map_err(io::Error::other)?;
    let mut total = 0;
    for (id, _) in store.buckets().wait().map_err(io::Error::other)? {
        total += store
            .count_events(&id, None, None)
            .wait()
            .map_err(io::Error::other)?;
    }
    store.close().map_err(io::Error::other)?;
    Ok(total)
}

fn spread(times: &[Duration]) -> (Duration, Duration, Duration) {
    let mut sorted = times.to_vec();
    sorted.sort();
    (
        sorted[sorted.len() / 2],
        sorted[0],
        sorted[sorted.len() - 1],
    )
}

fn millis(time: Duration) -> f64 {
    time.as_secs_f64() * 1000.0
}
