//! The figures of privacy and control over stored data on the
//! generated year, through a release server's HTTP API:
//!
//! - applying two privacy rules to the stored year (`POST
//!   /api/0/privacy/apply`), and deleting one month of it from every
//!   bucket (`DELETE /api/0/buckets/<id>/events?start&end`), each timed;
//! - heartbeat latency while each runs: one heartbeat every 20 ms to a
//!   bucket of its own, p50, p99 and the maximum;
//! - the database file's size after the import, after deleting the first
//!   half of the year, and after `POST /api/0/vacuum`.
//!
//! ```text
//! cargo build --release -p aw-server -p aw-benches
//! target/release/privacy [--server target/release/aw-server] [--days 365] [--rounds 3]
//! ```

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use aw_benches::dataset::{self, DatasetSpec};
use aw_benches::heartbeats::{quantile_ms, timed, Timed};
use aw_benches::http::{self, check};
use aw_benches::server::ServerProcess;
use aw_models::Timestamp;
use clap::Parser;
use serde_json::{json, Value};

/// Times the history operations and the heartbeats beside them.
#[derive(Debug, Parser)]
struct Args {
    /// The server binary.
    #[arg(long, default_value = "target/release/aw-server")]
    server: PathBuf,
    /// Days of history in the dataset.
    #[arg(long, default_value_t = 365)]
    days: u32,
    /// Rounds, each on a fresh server and database; the heartbeat
    /// latencies of all rounds are pooled per operation.
    #[arg(long, default_value_t = 3)]
    rounds: u32,
}

fn megabytes(path: &Path) -> f64 {
    let size = |path: &Path| std::fs::metadata(path).map_or(0, |meta| meta.len());
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    (size(path) + size(Path::new(&wal))) as f64 / 1e6
}

fn delete(agent: &ureq::Agent, url: &str) -> http::Reply {
    let mut response = agent.delete(url).call().expect("DELETE");
    let status = response.status().as_u16();
    let body = response.body_mut().read_to_vec().expect("body");
    http::Reply { status, body }
}

/// `?start=..&end=..` of a range, percent-encoded.
fn range(start: Timestamp, end: Timestamp) -> String {
    let encode = |t: Timestamp| t.to_string().replace('+', "%2B").replace(':', "%3A");
    format!("start={}&end={}", encode(start), encode(end))
}

fn main() -> io::Result<()> {
    let args = Args::parse();
    let spec = DatasetSpec::with_days(args.days);
    let documents = dataset::export_documents(&spec)?;
    let ids = [spec.window_bucket(), spec.afk_bucket(), spec.web_bucket()];
    let mut rounds: Vec<Vec<Timed>> = Vec::new();
    for round in 0..args.rounds {
        eprintln!("Round {}...", round + 1);
        rounds.push(run_round(&args, &spec, &documents, &ids)?);
    }
    println!("| operation | time per round (s) | heartbeats | p50 ms | p99 ms | max ms | answer of round 1 |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for index in 0..rounds[0].len() {
        let mut pooled: Vec<Duration> = rounds
            .iter()
            .flat_map(|round| round[index].latencies.iter().copied())
            .collect();
        pooled.sort();
        let times: Vec<String> = rounds
            .iter()
            .map(|round| format!("{:.2}", round[index].took.as_secs_f64()))
            .collect();
        println!(
            "| {} | {} | {} | {:.2} | {:.2} | {:.2} | {} |",
            rounds[0][index].name,
            times.join(", "),
            pooled.len(),
            quantile_ms(&pooled, 0.5),
            quantile_ms(&pooled, 0.99),
            pooled
                .last()
                .map_or(f64::NAN, |max| max.as_secs_f64() * 1e3),
            rounds[0][index].answer,
        );
    }
    Ok(())
}

/// One round on a fresh server: import, the operations, the sizes.
fn run_round(
    args: &Args,
    spec: &DatasetSpec,
    documents: &[Vec<u8>],
    ids: &[String],
) -> io::Result<Vec<Timed>> {
    let mut server = ServerProcess::start("current", &args.server)?;
    let url = server.url();
    let agent = http::agent();
    for document in documents {
        check(
            http::post_json(&agent, &format!("{url}/api/0/import"), document)
                .map_err(io::Error::other)?,
            "import",
        );
    }
    // A clean restart leaves the WAL empty: the sizes are the file's.
    server.restart()?;
    let beat_bucket = "bench-heartbeats";
    check(
        http::post_json(
            &agent,
            &format!("{url}/api/0/buckets/{beat_bucket}"),
            json!({"type": "bench", "client": "bench", "hostname": "h"})
                .to_string()
                .as_bytes(),
        )
        .map_err(io::Error::other)?,
        "bucket",
    );
    let beat_path = format!("/api/0/buckets/{beat_bucket}/heartbeat?pulsetime=2");
    let size_imported = megabytes(&server.db_path());
    let mut done = Vec::new();
    // The machine's own noise: heartbeats beside nothing.
    done.push(timed("nothing (baseline, 1 s)", &url, &beat_path, || {
        std::thread::sleep(Duration::from_secs(1));
        Value::Null
    }));
    // Two rules that match the dataset: window titles of one site dropped,
    // one site's URLs redacted.
    let rules = json!([
        {"enabled": true, "bucket_prefix": "aw-watcher-window", "field": "title",
         "pattern": "(?i)reddit", "action": "drop"},
        {"enabled": true, "field": "url", "pattern": "(?i)mail\\.google",
         "action": "redact", "replacement": "REDACTED"}
    ]);
    let saved = http::post_json(
        &agent,
        &format!("{url}/api/0/settings/privacy_filters"),
        rules.to_string().as_bytes(),
    )
    .map_err(io::Error::other)?;
    assert_eq!(saved.status, 201);
    done.push(timed("apply two rules, dry run", &url, &beat_path, || {
        let answer = check(
            http::post_json(
                &agent,
                &format!("{url}/api/0/privacy/apply?dry_run=true"),
                b"",
            )
            .expect("apply"),
            "dry run",
        );
        json!({"dropped": answer["dropped"], "redacted": answer["redacted"]})
    }));
    done.push(timed("apply two rules", &url, &beat_path, || {
        let answer = check(
            http::post_json(&agent, &format!("{url}/api/0/privacy/apply"), b"").expect("apply"),
            "apply",
        );
        json!({"dropped": answer["dropped"], "redacted": answer["redacted"]})
    }));
    let month_start = spec.day_start(spec.days / 2);
    let month_end = spec.day_start(spec.days / 2 + 30);
    // Clears `[start, end)` of every bucket; answers each bucket's counts.
    let delete_all = |start: Timestamp, end: Timestamp, what: &str| {
        let totals: Vec<Value> = ids
            .iter()
            .map(|id| {
                let path = format!("{url}/api/0/buckets/{id}/events?{}", range(start, end));
                check(delete(&agent, &path), what)
            })
            .collect();
        json!(totals)
    };
    done.push(timed(
        "delete one month, 3 buckets",
        &url,
        &beat_path,
        || delete_all(month_start, month_end, "delete month"),
    ));
    let half = spec.day_start(spec.days / 2);
    done.push(timed(
        "delete the first half year, 3 buckets",
        &url,
        &beat_path,
        || delete_all(spec.day_start(0), half, "delete half"),
    ));
    server.restart()?;
    let size_deleted = megabytes(&server.db_path());
    done.push(timed("vacuum", &url, &beat_path, || {
        check(
            http::post_json(&agent, &format!("{url}/api/0/vacuum"), b"").expect("vacuum"),
            "vacuum",
        )
    }));
    server.restart()?;
    let size_vacuumed = megabytes(&server.db_path());
    eprintln!(
        "file size: {size_imported:.1} MB imported, {size_deleted:.1} MB after deleting half and a month (incremental vacuum), {size_vacuumed:.1} MB after vacuum"
    );
    server.stop()?;
    Ok(done)
}
