//! The cache of finished periods under a long history: Year views of
//! every year of a generated history (ten years by default), each as
//! ActivityWatch 0.14's dashboard loads it (365 one-day requests of the
//! desktop program) and as the built-in dashboard does (one summary of
//! the year), on a release server with the default `[cache]`. After each
//! year: the cache's entries, bytes and evictions (`/metrics`) and the
//! server's resident memory. Fails when the cache's bytes ever exceed its
//! limit, or when the last year, asked again, is not answered from it.
//!
//! ```text
//! cargo build --release -p aw-server -p aw-benches
//! target/release/cache_memory [--server target/release/aw-server] [--days 3650]
//! ```

use std::io;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use aw_benches::dashboard::{self, DashboardBuckets};
use aw_benches::dataset::{self, DatasetSpec};
use aw_benches::http::{self, check};
use aw_benches::server::ServerProcess;
use aw_models::{Duration as AwDuration, Timestamp};
use clap::Parser;
use serde_json::json;

/// Year views of every year of a long history, and what the cache holds.
#[derive(Debug, Parser)]
struct Args {
    /// The server binary.
    #[arg(long, default_value = "target/release/aw-server")]
    server: PathBuf,
    /// Days of history in the dataset.
    #[arg(long, default_value_t = 3650)]
    days: u32,
}

const DAY: i64 = 86_400;

/// The figures `/metrics` gives of the cache.
#[derive(Debug, Default, Clone, Copy)]
struct Figures {
    entries: f64,
    bytes: f64,
    max_bytes: f64,
    evictions: f64,
    hits: f64,
}

fn figures(agent: &ureq::Agent, url: &str) -> Figures {
    let reply = http::get(agent, &format!("{url}/metrics")).expect("metrics");
    let text = String::from_utf8_lossy(&reply.body).into_owned();
    let value = |name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or(f64::NAN)
    };
    let status = check(
        http::get(agent, &format!("{url}/api/0/database/status")).expect("status"),
        "database status",
    );
    Figures {
        entries: value("aw_server_cache_entries"),
        bytes: value("aw_server_cache_size_bytes"),
        max_bytes: status["cache"]["max_bytes"].as_f64().unwrap_or(f64::NAN),
        evictions: value("aw_server_cache_evictions_total"),
        hits: value("aw_server_cache_hits_total"),
    }
}

fn main() -> io::Result<()> {
    let args = Args::parse();
    // Ending before yesterday, so that every day is finished (the
    // benchmark's own year starts 2025-01-01 and ten years of it would
    // reach into the future, which the cache never keeps).
    let today = Timestamp::now().nanos().div_euclid(DAY * 1_000_000_000) * DAY;
    let start = today - (i64::from(args.days) + 2) * DAY + 4 * 3600;
    let spec = DatasetSpec {
        start: Timestamp::from_nanos(start * 1_000_000_000),
        ..DatasetSpec::with_days(args.days)
    };
    eprintln!("Generating {} days of history...", spec.days);
    let documents = dataset::export_documents(&spec)?;
    let mut server = ServerProcess::start("current", &args.server)?;
    let url = server.url();
    let agent = http::agent();
    let started = Instant::now();
    for document in &documents {
        check(
            http::post_json(&agent, &format!("{url}/api/0/import"), document)
                .map_err(io::Error::other)?,
            "import",
        );
    }
    drop(documents);
    eprintln!("Imported in {:.1} s", started.elapsed().as_secs_f64());
    server.restart()?;
    let buckets = DashboardBuckets {
        window: spec.window_bucket(),
        afk: spec.afk_bucket(),
        chrome: spec.web_bucket(),
    };
    let program = dashboard::full_desktop_query(&buckets);
    let query_url = format!("{url}/api/0/query/");
    let year_view = |year: u32| -> f64 {
        let started = Instant::now();
        for day in 0..365 {
            let start = spec.day_start(year * 365 + day);
            let end = start.saturating_add(AwDuration::from_secs(DAY));
            let periods = [format!("{start}/{end}")];
            let body = json!({"timeperiods": periods, "query": program}).to_string();
            check(
                http::post_json(&agent, &query_url, body.as_bytes()).expect("query"),
                "query",
            );
        }
        started.elapsed().as_secs_f64()
    };
    let summary = |year: u32| -> f64 {
        let path = dashboard::year_summary_path(
            spec.day_start(year * 365),
            spec.day_start((year + 1) * 365),
            &spec.hostname,
            "UTC",
        );
        let started = Instant::now();
        check(
            http::get(&agent, &format!("{url}{path}")).expect("summary"),
            "summary",
        );
        started.elapsed().as_secs_f64()
    };
    println!("| after | Year view (s) | summary (s) | entries | cache MiB | limit MiB | evictions | RSS MiB | peak RSS MiB |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let mib = |bytes: f64| bytes / f64::from(1 << 20);
    let mut over = false;
    let years = spec.days / 365;
    let row = |what: String, view: f64, sum: f64, server: &ServerProcess| -> Figures {
        let f = figures(&agent, &url);
        let (rss, peak) = server.memory();
        println!(
            "| {what} | {view:.2} | {sum:.2} | {} | {:.1} | {:.0} | {} | {:.0} | {:.0} |",
            f.entries,
            mib(f.bytes),
            mib(f.max_bytes),
            f.evictions,
            mib(rss as f64),
            mib(peak as f64),
        );
        f
    };
    for year in 0..years {
        let view = year_view(year);
        let sum = summary(year);
        let f = row(format!("year {}", year + 1), view, sum, &server);
        // A missing figure (NaN) counts as over.
        over |= f.bytes.is_nan() || f.max_bytes.is_nan() || f.bytes > f.max_bytes;
    }
    // The last year again: least recently used out first, so it is kept.
    let before = figures(&agent, &url).hits;
    let view = year_view(years - 1);
    let sum = summary(years - 1);
    let f = row(format!("year {} again", years), view, sum, &server);
    let hits = f.hits - before;
    println!(
        "\nhits on asking the last year again: {hits} (365 days of the query, 365 of the summary)"
    );
    server.stop()?;
    std::thread::sleep(Duration::from_millis(100));
    if over {
        eprintln!("the cache's bytes exceeded its limit");
        std::process::exit(1);
    }
    if hits < 730.0 {
        eprintln!("the last year was not answered from the cache");
        std::process::exit(1);
    }
    Ok(())
}
