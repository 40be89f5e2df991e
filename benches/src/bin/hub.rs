//! The figures of a hub under the load of many devices while
//! one device forwards its backlog to it. On loopback:
//!
//! - a hub server with an admin token and one write token per device;
//! - `--devices` devices' watchers (three buckets each: window, AFK,
//!   browser), each device a thread with its own token and kept-alive
//!   connection, sending one heartbeat per bucket per second;
//! - `--dashboards` dashboards, each sending the dashboard's Activity
//!   query over one device's day, one after the other;
//! - a device server whose `[hub]` forwards to the hub: a day of history
//!   (the reference workload, 1,500 events a day) is imported into it and
//!   forwarded (`POST /api/0/sync/run?mode=hub`), then a year.
//!
//! It prints the heartbeats' and queries' latency quantiles, the errors
//! (any answer but 200, any failed connection) and how long each backlog
//! took, and checks that the hub then holds each forwarded bucket's events.
//!
//! ```text
//! cargo build --release -p aw-server -p aw-benches
//! target/release/hub [--server target/release/aw-server] [--devices 100]
//!                    [--dashboards 2] [--json FILE]
//! ```

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aw_benches::dashboard::{full_desktop_query, DashboardBuckets};
use aw_benches::dataset::{export_documents, DatasetSpec};
use aw_benches::heartbeats::quantile_ms;
use aw_benches::http::{self, Connection};
use aw_benches::server::{make_token, ServerProcess};
use aw_models::{Duration as AwDuration, Timestamp};
use clap::Parser;
use serde_json::json;

/// Loads a hub with many devices and times a forwarded backlog beside it.
#[derive(Debug, Parser)]
struct Args {
    /// The server binary (hub and forwarding device).
    #[arg(long, default_value = "target/release/aw-server")]
    server: PathBuf,
    /// Devices whose watchers send heartbeats to the hub.
    #[arg(long, default_value_t = 100)]
    devices: usize,
    /// Dashboards querying the hub.
    #[arg(long, default_value_t = 2)]
    dashboards: usize,
    /// Seconds of load before the first backlog and after the last.
    #[arg(long, default_value_t = 10)]
    settle: u64,
    /// Also write the figures as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// What the load threads record.
#[derive(Debug, Default)]
struct Record {
    heartbeats: Mutex<Vec<Duration>>,
    queries: Mutex<Vec<Duration>>,
    errors: AtomicU64,
    first_error: Mutex<Option<String>>,
}

impl Record {
    fn error(&self, what: String) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        let mut first = self.first_error.lock().unwrap();
        if first.is_none() {
            *first = Some(what);
        }
    }
}

const KINDS: [(&str, &str); 3] = [
    ("aw-watcher-window", "currentwindow"),
    ("aw-watcher-afk", "afkstatus"),
    ("aw-watcher-web-chrome", "web.tab.current"),
];

fn main() -> std::io::Result<()> {
    let args = Args::parse();
    let hub = ServerProcess::start("hub", &args.server)?;
    let admin = make_token(&hub, None, json!({"name": "admin", "scope": "admin"}));
    let day = DatasetSpec {
        hostname: "forwarded-day".to_string(),
        ..DatasetSpec::with_days(1)
    };
    let year = DatasetSpec {
        hostname: "forwarded-year".to_string(),
        ..DatasetSpec::with_days(365)
    };
    let device_token = make_token(
        &hub,
        Some(&admin),
        json!({"name": "forwarding-device", "scope": "write",
               "hosts": [day.hostname, year.hostname]}),
    );
    let watcher_tokens: Vec<String> = (0..args.devices)
        .map(|index| {
            make_token(
                &hub,
                Some(&admin),
                json!({"name": format!("device-{index}"), "scope": "write",
                       "hosts": [host(index)]}),
            )
        })
        .collect();

    // The forwarding device: [hub] with a long interval, so passes run
    // when asked for (the first, at start, finds nothing).
    let mut device = ServerProcess::start("device", &args.server)?;
    std::fs::create_dir_all(device.config_file().parent().unwrap())?;
    std::fs::write(
        device.config_file(),
        format!(
            "[hub]\nurl = \"{}\"\ntoken = \"{device_token}\"\ninterval = 86400\n",
            hub.url()
        ),
    )?;
    device.restart()?;
    let day_documents = export_documents(&day)?;
    let year_documents = export_documents(&year)?;

    let record = Arc::new(Record::default());
    let running = Arc::new(AtomicBool::new(true));
    let mut threads = Vec::new();
    for (index, token) in watcher_tokens.into_iter().enumerate() {
        let (url, record, running) = (hub.url(), Arc::clone(&record), Arc::clone(&running));
        threads.push(std::thread::spawn(move || {
            watcher(&url, index, &token, &record, &running);
        }));
    }
    // Every device's buckets exist before the dashboards ask.
    std::thread::sleep(Duration::from_secs(2));
    for index in 0..args.dashboards {
        let (url, record, running) = (hub.url(), Arc::clone(&record), Arc::clone(&running));
        let admin = admin.clone();
        let devices = args.devices;
        threads.push(std::thread::spawn(move || {
            dashboard(&url, index, devices, &admin, &record, &running);
        }));
    }
    std::thread::sleep(Duration::from_secs(args.settle));

    let mut backlogs = Vec::new();
    for (spec, documents) in [(&day, &day_documents), (&year, &year_documents)] {
        let agent = http::agent();
        let mut events = 0;
        for document in documents {
            let reply =
                http::post_json(&agent, &format!("{}/api/0/import", device.url()), document)
                    .expect("import");
            http::check(reply, "import into the device");
        }
        for bucket in [spec.window_bucket(), spec.afk_bucket(), spec.web_bucket()] {
            events += count(&agent, &device.url(), &bucket, None);
        }
        let started = Instant::now();
        let reply = http::post_json(
            &agent,
            &format!("{}/api/0/sync/run?mode=hub", device.url()),
            b"",
        )
        .expect("forwarding pass");
        let wall = started.elapsed();
        let pass = http::check(reply, "forwarding pass");
        let mut on_hub = 0;
        for bucket in [spec.window_bucket(), spec.afk_bucket(), spec.web_bucket()] {
            on_hub += count(&agent, &hub.url(), &bucket, Some(&admin));
        }
        assert_eq!(on_hub, events, "the hub holds every forwarded event");
        eprintln!(
            "{} days: {events} events forwarded in {:.2} s ({} chunks)",
            spec.days,
            wall.as_secs_f64(),
            pass["chunks"]
        );
        backlogs.push(json!({
            "days": spec.days,
            "events": events,
            "seconds": wall.as_secs_f64(),
            "pass": pass,
        }));
    }
    std::thread::sleep(Duration::from_secs(args.settle));
    running.store(false, Ordering::Relaxed);
    for thread in threads {
        thread.join().expect("load thread");
    }

    let mut heartbeats = record.heartbeats.lock().unwrap().clone();
    heartbeats.sort();
    let mut queries = record.queries.lock().unwrap().clone();
    queries.sort();
    let errors = record.errors.load(Ordering::Relaxed);
    println!(
        "| load | requests | p50 | p99 | max |\n| --- | --- | --- | --- | --- |\n\
         | heartbeats ({} devices x 3 buckets, 1 Hz) | {} | {:.2} ms | {:.2} ms | {:.1} ms |\n\
         | dashboard queries ({} dashboards) | {} | {:.1} ms | {:.1} ms | {:.1} ms |",
        args.devices,
        heartbeats.len(),
        quantile_ms(&heartbeats, 0.5),
        quantile_ms(&heartbeats, 0.99),
        quantile_ms(&heartbeats, 1.0),
        args.dashboards,
        queries.len(),
        quantile_ms(&queries, 0.5),
        quantile_ms(&queries, 0.99),
        quantile_ms(&queries, 1.0),
    );
    println!("errors: {errors}");
    if let Some(first) = record.first_error.lock().unwrap().as_ref() {
        println!("first error: {first}");
    }
    for backlog in &backlogs {
        println!(
            "backlog of {} days: {} events in {:.2} s",
            backlog["days"],
            backlog["events"],
            backlog["seconds"].as_f64().unwrap_or(0.0)
        );
    }
    if let Some(path) = &args.json {
        let document = json!({
            "devices": args.devices,
            "dashboards": args.dashboards,
            "errors": errors,
            "heartbeats": {"count": heartbeats.len(),
                           "p50_ms": quantile_ms(&heartbeats, 0.5),
                           "p99_ms": quantile_ms(&heartbeats, 0.99),
                           "max_ms": quantile_ms(&heartbeats, 1.0)},
            "queries": {"count": queries.len(),
                        "p50_ms": quantile_ms(&queries, 0.5),
                        "p99_ms": quantile_ms(&queries, 0.99),
                        "max_ms": quantile_ms(&queries, 1.0)},
            "backlogs": backlogs,
        });
        std::fs::write(path, serde_json::to_vec_pretty(&document)?)?;
    }
    drop(device);
    Ok(())
}

fn host(index: usize) -> String {
    format!("device-{index}")
}

/// One device's watchers: its three buckets, then a heartbeat to each
/// every second (the device's start spread over the first second).
fn watcher(url: &str, index: usize, token: &str, record: &Record, running: &AtomicBool) {
    let mut connection =
        Connection::new(url).with_header("Authorization", &format!("Bearer {token}"));
    let host = host(index);
    for (client, kind) in KINDS {
        let body = json!({"type": kind, "client": client, "hostname": host});
        match connection.post_json(
            &format!("/api/0/buckets/{client}_{host}"),
            body.to_string().as_bytes(),
        ) {
            Ok(reply) if reply.status == 200 || reply.status == 304 => {}
            Ok(reply) => record.error(format!("bucket of {host}: {}", reply.status)),
            Err(error) => record.error(format!("bucket of {host}: {error}")),
        }
    }
    std::thread::sleep(Duration::from_millis((index as u64 * 10) % 1_000));
    let mut next = Instant::now();
    let mut at = Timestamp::now();
    let mut second = 0u64;
    while running.load(Ordering::Relaxed) {
        at = at.saturating_add(AwDuration::from_millis(1_000));
        second += 1;
        for (client, _) in KINDS {
            let data = match client {
                "aw-watcher-afk" => json!({"status": "not-afk"}),
                "aw-watcher-window" => {
                    json!({"app": "editor", "title": format!("notes {}", second / 30)})
                }
                _ => json!({"url": "https://example.com/", "title": "Example", "audible": false,
                            "incognito": false, "tabCount": 3}),
            };
            let body = json!({"timestamp": at, "duration": 0, "data": data});
            let sent = Instant::now();
            let path = format!("/api/0/buckets/{client}_{host}/heartbeat?pulsetime=2");
            match connection.post_json(&path, body.to_string().as_bytes()) {
                Ok(reply) if reply.status == 200 => {
                    record.heartbeats.lock().unwrap().push(sent.elapsed());
                }
                Ok(reply) => record.error(format!("heartbeat of {host}: {}", reply.status)),
                Err(error) => record.error(format!("heartbeat of {host}: {error}")),
            }
        }
        next += Duration::from_secs(1);
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
}

/// A dashboard: the Activity view's query over today of one device after
/// another, back to back.
fn dashboard(
    url: &str,
    index: usize,
    devices: usize,
    admin: &str,
    record: &Record,
    running: &AtomicBool,
) {
    let mut connection =
        Connection::new(url).with_header("Authorization", &format!("Bearer {admin}"));
    let mut device = index;
    while running.load(Ordering::Relaxed) {
        let host = host(device % devices.max(1));
        device += 1;
        let buckets = DashboardBuckets {
            window: format!("aw-watcher-window_{host}"),
            afk: format!("aw-watcher-afk_{host}"),
            chrome: format!("aw-watcher-web-chrome_{host}"),
        };
        let now = Timestamp::now();
        let period = format!(
            "{}/{}",
            now.saturating_add(AwDuration::from_secs(-86_400)),
            now.saturating_add(AwDuration::from_secs(86_400))
        );
        let body = json!({"timeperiods": [period], "query": full_desktop_query(&buckets)});
        let sent = Instant::now();
        match connection.post_json("/api/0/query/", body.to_string().as_bytes()) {
            Ok(reply) if reply.status == 200 => {
                record.queries.lock().unwrap().push(sent.elapsed());
            }
            Ok(reply) => record.error(format!(
                "query of {host}: {} {}",
                reply.status,
                String::from_utf8_lossy(&reply.body)
            )),
            Err(error) => record.error(format!("query of {host}: {error}")),
        }
    }
}

fn count(agent: &ureq::Agent, url: &str, bucket: &str, admin: Option<&str>) -> u64 {
    let mut request = agent.get(format!("{url}/api/0/buckets/{bucket}/events/count"));
    if let Some(admin) = admin {
        request = request.header("Authorization", format!("Bearer {admin}"));
    }
    let text = request
        .call()
        .expect("count")
        .into_body()
        .read_to_string()
        .expect("count");
    text.trim().parse().expect("a count")
}
