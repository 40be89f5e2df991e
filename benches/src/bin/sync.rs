//! The figures of sync through a shared folder on the
//! generated year, through release servers' HTTP API:
//!
//! - the first push of the year into an empty folder, and the first pull
//!   of it by a second server with an empty database;
//! - a no-op pass (pull and push, nothing new) on each, repeated;
//! - heartbeat latency while each first pass runs: one heartbeat every
//!   20 ms to a bucket of its own, p50, p99 and the maximum.
//!
//! ```text
//! cargo build --release -p aw-server -p aw-benches
//! target/release/sync [--server target/release/aw-server] [--days 365] [--noop 10]
//! ```

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use aw_benches::dataset::{self, DatasetSpec};
use aw_benches::heartbeats::{quantile_ms, timed, Timed};
use aw_benches::http::{self, check};
use aw_benches::server::ServerProcess;
use clap::Parser;
use serde_json::{json, Value};

/// Times the sync passes and the heartbeats beside them.
#[derive(Debug, Parser)]
struct Args {
    /// The server binary.
    #[arg(long, default_value = "target/release/aw-server")]
    server: PathBuf,
    /// Days of history in the dataset.
    #[arg(long, default_value_t = 365)]
    days: u32,
    /// No-op passes timed per server.
    #[arg(long, default_value_t = 10)]
    noop: u32,
}

/// Restarts `server` with a `[sync]` section whose schedule only does
/// `mode` once a day: its pass at start finds nothing to do (and creates
/// the server's own copy in the folder), so every measured pass is one
/// asked for.
fn configure(server: &mut ServerProcess, folder: &std::path::Path, mode: &str) -> io::Result<()> {
    let file = server.config_file();
    std::fs::create_dir_all(file.parent().expect("a config folder"))?;
    std::fs::write(
        file,
        format!(
            "[sync]\nenabled = true\nfolder = {:?}\ninterval = 86400\nmode = \"{mode}\"\n",
            folder.to_str().expect("a UTF-8 temp path")
        ),
    )?;
    server.restart()?;
    Ok(())
}

/// A pass through the API; its report.
fn pass(agent: &ureq::Agent, url: &str, mode: &str) -> Value {
    check(
        http::post_json(agent, &format!("{url}/api/0/sync/run?mode={mode}"), b"").expect("run"),
        "sync run",
    )
}

/// A bucket for the heartbeats; the path they go to.
fn beat_bucket(agent: &ureq::Agent, url: &str) -> String {
    let id = "bench-heartbeats";
    let reply = http::post_json(
        agent,
        &format!("{url}/api/0/buckets/{id}"),
        json!({"type": "bench", "client": "bench", "hostname": "h"})
            .to_string()
            .as_bytes(),
    )
    .expect("bucket");
    assert!(reply.status == 200 || reply.status == 304);
    format!("/api/0/buckets/{id}/heartbeat?pulsetime=2")
}

/// The pass's own duration (`duration_ms`) of `count` no-op passes.
fn noop_passes(agent: &ureq::Agent, url: &str, count: u32) -> Vec<f64> {
    let mut times: Vec<f64> = (0..count)
        .map(|_| {
            pass(agent, url, "both")["duration_ms"]
                .as_f64()
                .unwrap_or(f64::NAN)
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times
}

fn main() -> io::Result<()> {
    let args = Args::parse();
    let spec = DatasetSpec::with_days(args.days);
    let documents = dataset::export_documents(&spec)?;
    let folder = tempfile::Builder::new()
        .prefix("aw-sync-bench-")
        .tempdir()?;
    let agent = http::agent();

    let mut origin = ServerProcess::start("origin", &args.server)?;
    for document in &documents {
        check(
            http::post_json(&agent, &format!("{}/api/0/import", origin.url()), document)
                .map_err(io::Error::other)?,
            "import",
        );
    }
    configure(&mut origin, folder.path(), "pull")?;
    let url = origin.url();
    let beats = beat_bucket(&agent, &url);
    let mut done: Vec<Timed> = Vec::new();
    done.push(timed("nothing (baseline, 1 s)", &url, &beats, || {
        std::thread::sleep(Duration::from_secs(1));
        Value::Null
    }));
    done.push(timed("first push of the year", &url, &beats, || {
        pass(&agent, &url, "push")["push"].clone()
    }));
    let origin_noop = noop_passes(&agent, &url, args.noop);

    let mut puller = ServerProcess::start("puller", &args.server)?;
    configure(&mut puller, folder.path(), "push")?;
    let url = puller.url();
    let beats = beat_bucket(&agent, &url);
    done.push(timed("first pull of the year", &url, &beats, || {
        let report = pass(&agent, &url, "pull");
        json!({"seconds": report["duration_ms"].as_f64().unwrap_or(0.0) / 1e3,
               "sources": report["pull"]["sources"]})
    }));
    // The WAL the pull filled is checkpointed about a second after it:
    // measured on its own, so the no-op pass's row shows the pass.
    done.push(timed(
        "nothing, right after the pull (1 s)",
        &url,
        &beats,
        || {
            std::thread::sleep(Duration::from_secs(1));
            Value::Null
        },
    ));
    let puller_noop = noop_passes(&agent, &url, args.noop);
    done.push(timed("no-op pass (pull and push)", &url, &beats, || {
        pass(&agent, &url, "both")["duration_ms"].clone()
    }));

    println!("| operation | time (s) | heartbeats | p50 ms | p99 ms | max ms | answer |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for timed in &done {
        println!(
            "| {} | {:.2} | {} | {:.2} | {:.2} | {:.2} | {} |",
            timed.name,
            timed.took.as_secs_f64(),
            timed.latencies.len(),
            quantile_ms(&timed.latencies, 0.5),
            quantile_ms(&timed.latencies, 0.99),
            timed
                .latencies
                .last()
                .map_or(f64::NAN, |max| max.as_secs_f64() * 1e3),
            timed.answer,
        );
    }
    let show = |times: &[f64]| {
        format!(
            "min {:.1} ms, median {:.1} ms, max {:.1} ms",
            times.first().copied().unwrap_or(f64::NAN),
            times.get(times.len() / 2).copied().unwrap_or(f64::NAN),
            times.last().copied().unwrap_or(f64::NAN)
        )
    };
    println!();
    println!(
        "no-op pass on the origin (pass's own time, {} passes): {}",
        origin_noop.len(),
        show(&origin_noop)
    );
    println!(
        "no-op pass on the puller (pass's own time, {} passes): {}",
        puller_noop.len(),
        show(&puller_noop)
    );
    let size = std::fs::read_dir(folder.path())?
        .filter_map(Result::ok)
        .map(|device| device.path().join("test.db"))
        .filter_map(|file| std::fs::metadata(file).ok())
        .map(|meta| meta.len())
        .max()
        .unwrap_or(0);
    println!("the year's copy in the folder: {:.1} MB", size as f64 / 1e6);
    origin.stop()?;
    puller.stop()?;
    Ok(())
}
