//! What authentication costs a heartbeat. Two
//! servers of the same binary, each on an empty database of its own:
//!
//! - `open`: no key, no token (every request passes unauthenticated);
//! - `tokens`: an admin token and `--tokens` write tokens stored, each for
//!   a host of its own; every heartbeat carries one of them
//!   (`Authorization: Bearer`), so each request is authenticated, checked
//!   for its scope and for its bucket's host.
//!
//! Each round sends `--requests` sequential heartbeats on one kept-alive
//! connection to each server in turn (which one goes first alternates),
//! in two rows as `load` has them: data merging into the last event, and
//! distinct data each time. Per row and server: the server's CPU per
//! request and requests per second, medians over the rounds, and the
//! ratio of the medians.
//!
//! ```text
//! cargo build --release -p aw-server -p aw-benches
//! target/release/auth [--server target/release/aw-server] [--rounds 5]
//!                     [--requests 10000] [--tokens 100] [--json FILE]
//! ```

use std::path::PathBuf;
use std::time::Instant;

use aw_benches::http::{self, Connection};
use aw_benches::server::{make_token, ServerProcess};
use aw_models::{Duration as AwDuration, Timestamp};
use clap::Parser;
use serde_json::{json, Value};

/// Times heartbeats with and without authentication.
#[derive(Debug, Parser)]
struct Args {
    /// The server binary.
    #[arg(long, default_value = "target/release/aw-server")]
    server: PathBuf,
    /// Rounds; each sends every row to both servers.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Heartbeats per row, server and round.
    #[arg(long, default_value_t = 10_000)]
    requests: usize,
    /// Write tokens stored on the authenticated server.
    #[arg(long, default_value_t = 100)]
    tokens: usize,
    /// Also write the figures as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// One server of the comparison, with the connection its heartbeats use.
struct Side {
    name: &'static str,
    server: ServerProcess,
    connection: Connection,
    /// The next heartbeat's timestamp.
    at: Timestamp,
}

/// One row's figures on one server in one round.
#[derive(Debug, Clone, Copy)]
struct Run {
    cpu_us: f64,
    per_second: f64,
}

const ROWS: [&str; 2] = ["merging data", "distinct data"];
const BUCKET: &str = "bench-auth";

fn main() -> std::io::Result<()> {
    let args = Args::parse();
    let open = ServerProcess::start("open", &args.server)?;
    let tokens = ServerProcess::start("tokens", &args.server)?;
    let agent = http::agent();

    // The open server: a bucket, nothing else.
    let host = format!("bench-host-{}", args.tokens / 2);
    let bucket = json!({"type": "currentwindow", "client": "bench", "hostname": host});
    let url = format!("{}/api/0/buckets/{BUCKET}", open.url());
    http::post_json(&agent, &url, bucket.to_string().as_bytes()).expect("bucket");

    // The other: an admin token first (the server is open until then),
    // then the write tokens with it; the heartbeats use the middle one.
    let made = make_token(&tokens, None, json!({"name": "admin", "scope": "admin"}));
    let mut watcher = String::new();
    for index in 0..args.tokens {
        let secret = make_token(
            &tokens,
            Some(&made),
            json!({"name": format!("watcher-{index}"), "scope": "write",
                   "hosts": [format!("bench-host-{index}")]}),
        );
        if index == args.tokens / 2 {
            watcher = secret;
        }
    }
    let mut authenticated =
        Connection::new(&tokens.url()).with_header("Authorization", &format!("Bearer {watcher}"));
    let path = format!("/api/0/buckets/{BUCKET}");
    let reply = authenticated
        .post_json(&path, bucket.to_string().as_bytes())
        .expect("bucket");
    assert_eq!(reply.status, 200, "the write token creates its bucket");

    let mut sides = [
        Side {
            name: "open",
            connection: Connection::new(&open.url()),
            server: open,
            at: Timestamp::now(),
        },
        Side {
            name: "tokens",
            connection: authenticated,
            server: tokens,
            at: Timestamp::now(),
        },
    ];
    // Warm-up: connections, caches, the first events.
    for side in &mut sides {
        for row in ROWS {
            send(side, row, 1_000);
        }
    }

    let mut runs: Vec<Vec<[Run; 2]>> = vec![Vec::new(); ROWS.len()];
    for round in 0..args.rounds {
        for (row_index, row) in ROWS.iter().enumerate() {
            let mut pair = [Run {
                cpu_us: 0.0,
                per_second: 0.0,
            }; 2];
            let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            for index in order {
                pair[index] = send(&mut sides[index], row, args.requests);
            }
            eprintln!(
                "round {} {row}: open {:.1} us/req {:.0}/s, tokens {:.1} us/req {:.0}/s",
                round + 1,
                pair[0].cpu_us,
                pair[0].per_second,
                pair[1].cpu_us,
                pair[1].per_second
            );
            runs[row_index].push(pair);
        }
    }

    let mut report = Vec::new();
    println!(
        "| row ({} requests x {} rounds) | CPU/req open | CPU/req tokens | ratio | req/s open | req/s tokens |",
        args.requests, args.rounds
    );
    println!("| --- | --- | --- | --- | --- | --- |");
    for (row_index, row) in ROWS.iter().enumerate() {
        let median_of = |side: usize, cpu: bool| {
            median(
                runs[row_index]
                    .iter()
                    .map(|pair| {
                        if cpu {
                            pair[side].cpu_us
                        } else {
                            pair[side].per_second
                        }
                    })
                    .collect(),
            )
        };
        let (cpu_open, cpu_tokens) = (median_of(0, true), median_of(1, true));
        let (rate_open, rate_tokens) = (median_of(0, false), median_of(1, false));
        println!(
            "| {row} | {cpu_open:.1} us | {cpu_tokens:.1} us | {:.3} | {rate_open:.0} | {rate_tokens:.0} |",
            cpu_tokens / cpu_open
        );
        report.push(json!({
            "row": row,
            "cpu_us_per_request": {"open": cpu_open, "tokens": cpu_tokens},
            "ratio": cpu_tokens / cpu_open,
            "requests_per_second": {"open": rate_open, "tokens": rate_tokens},
            "rounds": runs[row_index].iter().map(|pair| json!({
                "open": {"cpu_us": pair[0].cpu_us, "per_second": pair[0].per_second},
                "tokens": {"cpu_us": pair[1].cpu_us, "per_second": pair[1].per_second},
            })).collect::<Vec<Value>>(),
        }));
    }
    if let Some(path) = &args.json {
        let document = json!({
            "requests": args.requests,
            "rounds": args.rounds,
            "tokens": args.tokens,
            "rows": report,
        });
        std::fs::write(path, serde_json::to_vec_pretty(&document)?)?;
    }
    for side in &mut sides {
        side.server.stop()?;
    }
    Ok(())
}

/// Sends `count` heartbeats of `row` on the side's connection; the
/// server's CPU per request and the rate.
fn send(side: &mut Side, row: &str, count: usize) -> Run {
    let path = format!("/api/0/buckets/{BUCKET}/heartbeat?pulsetime=2");
    let cpu_before = side.server.cpu_time();
    let started = Instant::now();
    for index in 0..count {
        side.at = side.at.saturating_add(AwDuration::from_millis(1_000));
        let data = if row == "merging data" {
            json!({"app": "editor", "title": "notes.md"})
        } else {
            json!({"app": "editor", "title": format!("file-{index}.md")})
        };
        let body = json!({"timestamp": side.at, "duration": 0, "data": data});
        let reply = side
            .connection
            .post_json(&path, body.to_string().as_bytes())
            .expect("heartbeat");
        assert_eq!(
            reply.status, 200,
            "{} heartbeat: {}",
            side.name, reply.status
        );
    }
    let elapsed = started.elapsed();
    let cpu = side.server.cpu_time().saturating_sub(cpu_before);
    Run {
        cpu_us: cpu.as_secs_f64() * 1e6 / count as f64,
        per_second: count as f64 / elapsed.as_secs_f64(),
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len() % 2 == 1 {
        values[middle]
    } else {
        (values[middle - 1] + values[middle]) / 2.0
    }
}
