//! The HTTP benchmark: every scenario of the workload against one or more
//! server binaries, in one run.
//!
//! ```text
//! cargo build --release -p aw-server -p aw-benches
//! target/release/load                                   # target/release/aw-server
//! target/release/load --server old=/tmp/aw-old --server new=target/release/aw-server
//! ```
//!
//! Each server gets its own temporary database, imports the generated
//! dataset (one request per bucket), is restarted once to time startup on
//! the full database, and then runs every scenario. With several servers the
//! scenarios alternate between them round by round, so drift of this shared
//! machine hits all of them alike, and the table ends with the p50 ratio of
//! each server to the first. Every loop is bounded in requests and time.
//! Query periods move from request to request, so no answer is served twice.

use std::fs;
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use aw_benches::dashboard::{self, DashboardBuckets};
use aw_benches::dataset::{self, DatasetSpec};
use aw_benches::http;
use aw_benches::server::{ServerProcess, Switches};
use aw_benches::stats::Measurement;
use aw_models::{Duration as AwDuration, Timestamp};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{json, Value};

/// Runs the HTTP benchmark and prints a table; writes the figures as JSON.
#[derive(Debug, Parser)]
struct Args {
    /// `LABEL=PATH` of a server binary; repeat to compare (ratios are to the first).
    #[arg(long = "server", value_parser = parse_server)]
    servers: Vec<(String, PathBuf)>,
    /// Days of history in the dataset.
    #[arg(long, default_value_t = 365)]
    days: u32,
    /// Rounds per scenario and server (samples of a round are pooled).
    #[arg(long, default_value_t = 2)]
    rounds: u32,
    /// Fewer requests per scenario, for a quick look.
    #[arg(long)]
    quick: bool,
    /// Only scenarios whose name contains this text (repeatable: any of them).
    #[arg(long)]
    only: Vec<String>,
    /// Import each bucket's events oldest first (export documents, and so
    /// the default, list them newest first). Servers since dbc86c5 store
    /// imports oldest first either way, as heartbeats do; older ones
    /// stored them in document order.
    #[arg(long)]
    oldest_first: bool,
    /// Minutes of the watcher-load row (three watchers at 1 Hz on every
    /// server at once); 0 leaves it out. A `--only` that names no part of
    /// "watcher load" leaves it out too.
    #[arg(long, default_value_t = 5.0)]
    watch_minutes: f64,
    /// Where to write the JSON results.
    #[arg(long, default_value = "target/bench/load.json")]
    json: PathBuf,
}

fn parse_server(text: &str) -> Result<(String, PathBuf), String> {
    match text.split_once('=') {
        Some((label, path)) => Ok((label.to_string(), PathBuf::from(path))),
        None => Ok((text.to_string(), PathBuf::from(text))),
    }
}

const DAY: i64 = 86_400;

/// What a scenario needs to know about the data.
struct Workload {
    spec: DatasetSpec,
    buckets: DashboardBuckets,
    quick: bool,
}

impl Workload {
    fn window_events_url(&self, server: &ServerProcess) -> String {
        format!(
            "{}/api/0/buckets/{}/events",
            server.url(),
            self.buckets.window
        )
    }

    /// Day `back` days before the last day of the history.
    fn recent_day(&self, back: u32) -> Timestamp {
        self.spec.day_start(
            self.spec
                .days
                .saturating_sub(1 + back % self.spec.days.max(1)),
        )
    }

    fn count(&self, full: usize) -> usize {
        if self.quick {
            full.div_ceil(5).max(2)
        } else {
            full
        }
    }

    fn query_body(&self, program: &[String], periods: &[(Timestamp, Timestamp)]) -> Vec<u8> {
        let periods: Vec<String> = periods.iter().map(|(s, e)| format!("{s}/{e}")).collect();
        serde_json::to_vec(&json!({"timeperiods": periods, "query": program})).unwrap_or_default()
    }
}

/// The query API with the cache of finished periods bypassed
/// (`?cache=false`; a server without one ignores it): the rows that
/// measure computing, whose rounds ask for the same periods again.
fn computed_query_url(server: &ServerProcess) -> String {
    format!("{}/api/0/query/?cache=false", server.url())
}

/// One Year view as ActivityWatch 0.14's dashboard loads it: 365 requests
/// of the desktop program, one day each, in order, on one connection. The
/// days start `offset` after the dataset's midnights, so a pass at a new
/// offset asks for periods no pass asked before. Answers the last reply,
/// or `None` when any request failed.
fn year_view_pass(
    w: &Workload,
    agent: &ureq::Agent,
    url: &str,
    program: &[String],
    offset: AwDuration,
) -> Option<http::Reply> {
    let mut last = None;
    for day in 0..w.spec.days.min(365) {
        let start = w.spec.day_start(day).saturating_add(offset);
        let body = w.query_body(program, &[(start, plus_days(start, 1))]);
        last = Some(http::post_json(agent, url, &body).ok()?);
    }
    last
}

fn plus_days(start: Timestamp, days: i64) -> Timestamp {
    start.saturating_add(AwDuration::from_secs(days * DAY))
}

/// Runs a scenario once on one server.
type RunScenario = Box<dyn Fn(&Workload, &ServerProcess) -> Measurement>;

/// One benchmark row.
struct Scenario {
    name: &'static str,
    /// The reference server's p50 (or throughput) from the workload description.
    reference: &'static str,
    run: RunScenario,
}

impl Scenario {
    /// Whether each run starts on a quiet disk (see [`settle_disk`]): the
    /// heartbeat rows, which write in bursts or time each write.
    fn needs_quiet_disk(&self) -> bool {
        self.name.starts_with("heartbeat")
    }

    /// Whether each run starts with a restart of the server (SIGTERM, so
    /// it stores what it keeps for the next start): the Year view after a
    /// restart.
    fn restarts_first(&self) -> bool {
        self.name.contains("after a restart")
    }
}

/// Waits (at most two minutes) until the server's pre-warm is over, by
/// `/api/0/database/status`; a server without one is over at once.
/// Answers the pre-warm's CPU seconds, if it said.
fn prewarmed(server: &ServerProcess) -> Option<f64> {
    let agent = http::agent();
    let url = format!("{}/api/0/database/status", server.url());
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        let status: Value = agent.get(&url).call().ok()?.body_mut().read_json().ok()?;
        let prewarm = &status["cache"]["prewarm"];
        if prewarm.is_null() || prewarm["enabled"] == false {
            return None;
        }
        if prewarm["finished"] == true {
            return prewarm["cpu_seconds"].as_f64();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!(
        "{}: the pre-warm did not finish in two minutes",
        server.label
    );
    None
}

/// Runs `request(i)` sequentially on one connection, at most `max` times or
/// for `budget`, and measures each.
fn sequential(
    server: &ServerProcess,
    max: usize,
    budget: Duration,
    request: impl Fn(&ureq::Agent, usize) -> Option<http::Reply>,
) -> Measurement {
    paced(server, max, budget, Duration::ZERO, request)
}

/// [`sequential`] with a pause before each request, not counted in its
/// latency (a watcher's rhythm).
fn paced(
    server: &ServerProcess,
    max: usize,
    budget: Duration,
    pause: Duration,
    request: impl Fn(&ureq::Agent, usize) -> Option<http::Reply>,
) -> Measurement {
    let agent = http::agent();
    paced_on(server, max, budget, pause, |index| request(&agent, index))
}

/// [`paced`] on the lean client ([`http::Connection`]), for the rows
/// whose requests cost less than ureq's own work.
fn paced_lean(
    server: &ServerProcess,
    max: usize,
    budget: Duration,
    pause: Duration,
    request: impl Fn(&mut http::Connection, usize) -> Option<http::Reply>,
) -> Measurement {
    let mut connection = http::Connection::new(&server.url());
    paced_on(server, max, budget, pause, |index| {
        request(&mut connection, index)
    })
}

fn paced_on(
    server: &ServerProcess,
    max: usize,
    budget: Duration,
    pause: Duration,
    mut request: impl FnMut(usize) -> Option<http::Reply>,
) -> Measurement {
    let cpu_before = server.cpu_time();
    let mut switches = Switches::start(server);
    let started = Instant::now();
    let mut measurement = Measurement::default();
    for index in 0..max {
        if index > 0 && started.elapsed() > budget {
            break;
        }
        if !pause.is_zero() {
            std::thread::sleep(pause);
        }
        let sent = Instant::now();
        let reply = request(index);
        measurement.latencies.push(sent.elapsed());
        if !reply.is_some_and(|reply| (200..300).contains(&reply.status)) {
            measurement.failures += 1;
        }
    }
    measurement.wall = started.elapsed();
    measurement.server_cpu = server.cpu_time().saturating_sub(cpu_before);
    switches.sample(server);
    measurement.server_switches = switches.count();
    measurement
}

/// `clients` threads each running `request` like [`sequential`].
fn parallel(
    server: &ServerProcess,
    clients: usize,
    max_each: usize,
    budget: Duration,
    request: &(dyn Fn(&ureq::Agent, usize) -> Option<http::Reply> + Sync),
) -> Measurement {
    let cpu_before = server.cpu_time();
    let switches = Switches::start(server);
    let started = Instant::now();
    let parts: Vec<Measurement> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..clients)
            .map(|client| {
                scope.spawn(move || {
                    let agent = http::agent();
                    let mut part = Measurement::default();
                    for index in 0..max_each {
                        if index > 0 && started.elapsed() > budget {
                            break;
                        }
                        let sent = Instant::now();
                        let reply = request(&agent, client * 1_000 + index);
                        part.latencies.push(sent.elapsed());
                        if !reply.is_some_and(|reply| (200..300).contains(&reply.status)) {
                            part.failures += 1;
                        }
                    }
                    part
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    pooled(parts, server, started, cpu_before, switches)
}

/// The parts of a parallel run as one measurement, with the server's CPU
/// and wake-ups since `cpu_before` and `switches` started.
fn pooled(
    parts: Vec<Measurement>,
    server: &ServerProcess,
    started: Instant,
    cpu_before: Duration,
    mut switches: Switches,
) -> Measurement {
    let mut measurement = Measurement::default();
    for part in parts {
        measurement.absorb(part);
    }
    measurement.wall = started.elapsed();
    measurement.server_cpu = server.cpu_time().saturating_sub(cpu_before);
    switches.sample(server);
    measurement.server_switches = switches.count();
    measurement
}

fn get(agent: &ureq::Agent, url: &str) -> Option<http::Reply> {
    http::get(agent, url).ok()
}

/// The built-in dashboard's Year view of the dataset's year in `zone`
/// (`/api/0/summary`, docs/API.md 3.13).
fn year_summary_url(w: &Workload, server: &ServerProcess, zone: &str) -> String {
    let last = w.spec.day_start(w.spec.days.saturating_sub(1));
    let path = dashboard::year_summary_path(
        w.spec.day_start(0),
        plus_days(last, 1),
        &w.spec.hostname,
        zone,
    );
    format!("{}{path}", server.url())
}

fn range_url(base: &str, start: Timestamp, end: Timestamp) -> String {
    format!("{base}?start={start}&end={end}&limit=-1")
}

fn scenarios() -> Vec<Scenario> {
    let mut list: Vec<Scenario> = Vec::new();
    let mut add = |name, reference, run: RunScenario| {
        list.push(Scenario {
            name,
            reference,
            run,
        })
    };

    add(
        "GET /api/0/info (no datastore call)",
        "",
        Box::new(|w, s| {
            let url = format!("{}/api/0/info", s.url());
            sequential(s, w.count(1_000), Duration::from_secs(5), |a, _| {
                get(a, &url)
            })
        }),
    );
    add(
        "GET /api/0/info, lean client",
        "",
        Box::new(|w, s| {
            paced_lean(
                s,
                w.count(5_000),
                Duration::from_secs(5),
                Duration::ZERO,
                |c, _| c.get("/api/0/info").ok(),
            )
        }),
    );
    add(
        "GET /api/0/buckets/",
        "0.19 ms",
        Box::new(|w, s| {
            let url = format!("{}/api/0/buckets/", s.url());
            sequential(s, w.count(1_000), Duration::from_secs(5), |a, _| {
                get(a, &url)
            })
        }),
    );
    for (name, reference, limit, count) in [
        ("events limit=100", "0.36 ms", 100, 500),
        ("events limit=1000", "1.8 ms", 1_000, 200),
        ("events limit=10000", "16.9 ms", 10_000, 50),
    ] {
        add(
            name,
            reference,
            Box::new(move |w, s| {
                let url = format!("{}?limit={limit}", w.window_events_url(s));
                sequential(s, w.count(count), Duration::from_secs(8), |a, _| {
                    get(a, &url)
                })
            }),
        );
    }
    for (name, reference, days, count, mid) in [
        ("events 1-day range", "20.4 ms", 1, 200, false),
        ("events 1-week range", "26.1 ms", 7, 100, false),
        ("events 1-month range", "62.8 ms", 30, 40, false),
        ("events 1-week range mid-history", "17.6 ms", 7, 100, true),
    ] {
        add(
            name,
            reference,
            Box::new(move |w, s| {
                let base = w.window_events_url(s);
                sequential(s, w.count(count), Duration::from_secs(8), |a, i| {
                    let start = if mid {
                        w.spec.day_start(w.spec.days / 2 + (i % 30) as u32)
                    } else {
                        w.recent_day(days as u32 - 1 + (i % 60) as u32)
                    };
                    get(a, &range_url(&base, start, plus_days(start, days)))
                })
            }),
        );
    }
    add(
        "events/count full bucket",
        "16.2 ms",
        Box::new(|w, s| {
            let url = format!("{}/count", w.window_events_url(s));
            sequential(s, w.count(200), Duration::from_secs(5), |a, _| get(a, &url))
        }),
    );
    for (name, reference, days, count) in [
        ("dashboard query 1 day", "28.7 ms", 1_i64, 60),
        ("dashboard query 1 week", "52.5 ms", 7, 30),
        ("dashboard query 1 month", "214 ms", 30, 12),
        ("dashboard query 1 year", "2,983 ms", 365, 4),
    ] {
        add(
            name,
            reference,
            Box::new(move |w, s| {
                let url = computed_query_url(s);
                let program = dashboard::full_desktop_query(&w.buckets);
                if days == 365 {
                    // The peak of these queries, not of the scenarios
                    // before them (8 parallel clients, long listings).
                    s.reset_peak_memory();
                }
                let mut measurement =
                    sequential(s, w.count(count), Duration::from_secs(20), |a, i| {
                        // Ends move back a day per request: every answer is new.
                        let end = plus_days(w.spec.end(), -(i as i64));
                        let body = w.query_body(&program, &[(plus_days(end, -days), end)]);
                        http::post_json(a, &url, &body).ok()
                    });
                if days == 365 {
                    let (_, peak) = s.memory();
                    measurement
                        .extra
                        .push(("peak_rss_mb".into(), peak as f64 / 1e6));
                }
                measurement
            }),
        );
    }
    add(
        "browser query 1 week",
        "136 ms",
        Box::new(|w, s| {
            let url = computed_query_url(s);
            let program = dashboard::browser_query(&w.buckets);
            sequential(s, w.count(30), Duration::from_secs(10), |a, i| {
                let start = w.recent_day(6 + i as u32);
                let body = w.query_body(&program, &[(start, plus_days(start, 7))]);
                http::post_json(a, &url, &body).ok()
            })
        }),
    );
    add(
        "7 one-day periods in one request",
        "174 ms",
        Box::new(|w, s| {
            let url = computed_query_url(s);
            let program = dashboard::full_desktop_query(&w.buckets);
            sequential(s, w.count(30), Duration::from_secs(10), |a, i| {
                let first = w.recent_day(6 + 7 * i as u32);
                let periods: Vec<_> = (0..7)
                    .map(|d| (plus_days(first, d), plus_days(first, d + 1)))
                    .collect();
                http::post_json(a, &url, &w.query_body(&program, &periods)).ok()
            })
        }),
    );
    // Each first pass at an offset of its own (minutes), so it meets an
    // empty cache in every round; the repeat passes at one offset, after
    // an untimed pass that fills the cache.
    static FIRST_PASSES: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(0);
    add(
        "Year view, 365 one-day requests: first pass (ms a pass)",
        "7,750 ms",
        Box::new(|w, s| {
            let url = format!("{}/api/0/query/", s.url());
            let program = dashboard::full_desktop_query(&w.buckets);
            sequential(s, 1, Duration::from_secs(120), |a, _| {
                let pass = FIRST_PASSES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let offset = AwDuration::from_secs(60 * (pass + 1));
                year_view_pass(w, a, &url, &program, offset)
            })
        }),
    );
    add(
        "Year view, 365 one-day requests: repeat pass (ms a pass)",
        "7,750 ms",
        Box::new(|w, s| {
            let url = format!("{}/api/0/query/", s.url());
            let program = dashboard::full_desktop_query(&w.buckets);
            let agent = http::agent();
            let offset = AwDuration::ZERO;
            year_view_pass(w, &agent, &url, &program, offset);
            sequential(s, w.count(5), Duration::from_secs(60), |a, _| {
                year_view_pass(w, a, &url, &program, offset)
            })
        }),
    );
    add(
        "Year view, 365 one-day requests: after a restart, pre-warmed (ms a pass)",
        "7,750 ms",
        Box::new(|w, s| {
            let url = format!("{}/api/0/query/", s.url());
            let program = dashboard::full_desktop_query(&w.buckets);
            let cpu = prewarmed(s);
            let mut measurement = sequential(s, 1, Duration::from_secs(120), |a, _| {
                year_view_pass(w, a, &url, &program, AwDuration::ZERO)
            });
            if let Some(cpu) = cpu {
                measurement.extra.push(("prewarm_cpu_s".into(), cpu));
            }
            measurement
        }),
    );
    // The built-in dashboard's Year view: one summary of the year, by
    // application, title, category, domain and day. Cold at a time zone of
    // its own in every request (every day computed and kept), warm at one
    // zone after an untimed request. A server without the summary fails
    // the row.
    static COLD_SUMMARIES: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(0);
    add(
        "summary of the year: cold (ms)",
        "",
        Box::new(|w, s| {
            sequential(s, w.count(4), Duration::from_secs(60), |a, _| {
                // Etc/GMT-1 .. Etc/GMT-14, Etc/GMT+1 .. Etc/GMT+12 (+ encoded), in turn.
                let n = COLD_SUMMARIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 26;
                let zone = if n < 14 {
                    format!("Etc/GMT-{}", n + 1)
                } else {
                    format!("Etc/GMT%2B{}", n - 13)
                };
                get(a, &year_summary_url(w, s, &zone))
            })
        }),
    );
    add(
        "summary of the year: warm (ms)",
        "",
        Box::new(|w, s| {
            let url = year_summary_url(w, s, "UTC");
            get(&http::agent(), &url);
            sequential(s, w.count(20), Duration::from_secs(20), |a, _| get(a, &url))
        }),
    );
    add(
        "8 clients: 1-day queries (req/s)",
        "37/s",
        Box::new(|w, s| {
            let url = computed_query_url(s);
            let program = dashboard::full_desktop_query(&w.buckets);
            parallel(s, 8, w.count(40), Duration::from_secs(10), &|a, i| {
                let start = w.recent_day((i % 300) as u32);
                let body = w.query_body(&program, &[(start, plus_days(start, 1))]);
                http::post_json(a, &url, &body).ok()
            })
        }),
    );
    add(
        "8 clients: 1-day event ranges (req/s)",
        "48/s",
        Box::new(|w, s| {
            let base = w.window_events_url(s);
            parallel(s, 8, w.count(60), Duration::from_secs(10), &|a, i| {
                let start = w.recent_day((i % 300) as u32);
                get(a, &range_url(&base, start, plus_days(start, 1)))
            })
        }),
    );
    for (name, reference, distinct) in [
        ("heartbeats, distinct data (req/s)", "3.8k/s", true),
        ("heartbeats, merging data (req/s)", "4.7k/s", false),
    ] {
        add(
            name,
            reference,
            Box::new(move |w, s| {
                let bucket = format!("bench-heartbeat-{}", unique());
                let path = create_bucket(s, &bucket);
                let start = plus_days(w.spec.end(), 30);
                let (count, budget) = (w.count(20_000), Duration::from_secs(5));
                paced_lean(s, count, budget, Duration::ZERO, |c, i| {
                    let timestamp = start.saturating_add(AwDuration::from_secs(i as i64));
                    let data = if distinct {
                        json!({"n": i})
                    } else {
                        json!({"app": "bench"})
                    };
                    let body = json!({"timestamp": timestamp, "duration": 0, "data": data});
                    c.post_json(&path, body.to_string().as_bytes()).ok()
                })
            }),
        );
    }
    add(
        "100 devices' watchers: 300 heartbeats/s spread evenly",
        "",
        Box::new(|w, s| devices(s, if w.quick { 5 } else { 20 })),
    );
    add(
        "heartbeat every 20 ms while 1-year queries loop",
        "p50 0.9, max 3,300-4,100 ms",
        Box::new(|w, s| {
            let bucket = format!("bench-heartbeat-{}", unique());
            let heartbeat_path = create_bucket(s, &bucket);
            let query_url = computed_query_url(s);
            let program = dashboard::full_desktop_query(&w.buckets);
            let stop = AtomicBool::new(false);
            let start = plus_days(w.spec.end(), 60);
            std::thread::scope(|scope| {
                let queries = scope.spawn(|| {
                    let agent = http::agent();
                    let mut shift = 0;
                    while !stop.load(Ordering::Relaxed) && shift < 500 {
                        let end = plus_days(w.spec.end(), -shift);
                        let body = w.query_body(&program, &[(plus_days(end, -365), end)]);
                        let _ = http::post_json(&agent, &query_url, &body);
                        shift += 1;
                    }
                });
                let pause = Duration::from_millis(20);
                let (count, budget) = (w.count(500), Duration::from_secs(12));
                let measurement = paced_lean(s, count, budget, pause, |c, i| {
                    let timestamp = start.saturating_add(AwDuration::from_secs(i as i64));
                    let body =
                        json!({"timestamp": timestamp, "duration": 0, "data": {"app": "bench"}});
                    c.post_json(&heartbeat_path, body.to_string().as_bytes())
                        .ok()
                });
                stop.store(true, Ordering::Relaxed);
                let _ = queries.join();
                measurement
            })
        }),
    );
    list
}

/// The name of the watcher-load row.
const WATCHER_ROW: &str = "watcher load: 3 buckets at 1 Hz, all servers at once";

fn unique() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// Creates a bucket and returns the path of its heartbeats.
fn create_bucket(server: &ServerProcess, bucket: &str) -> String {
    let agent = http::agent();
    let body = json!({"type": "bench", "client": "aw-bench", "hostname": "benchhost"});
    let path = format!("/api/0/buckets/{bucket}");
    let url = format!("{}{path}", server.url());
    let _ = http::post_json(&agent, &url, body.to_string().as_bytes());
    format!("{path}/heartbeat?pulsetime=2")
}

/// Devices in the many-devices row, each with three watchers.
const DEVICES: usize = 100;

/// The hub's load: [`DEVICES`] devices, each a thread with its own
/// kept-alive connection and (where the server has tokens) its own write
/// token, each sending one heartbeat a second to each of its three
/// buckets, for `seconds`. The 300 heartbeats of a second are spread
/// evenly over it: bucket `b` of device `d` at `(b * 100 + d) / 300` s.
fn devices(server: &ServerProcess, seconds: u64) -> Measurement {
    let run = unique();
    // Where the server has tokens: an admin token makes one write token
    // per device, each for its own host only.
    let admin_name = format!("bench-admin-{}", run % 1_000_000);
    let admin = make_token(server, None, json!({"name": admin_name, "scope": "admin"}));
    let tokens: Vec<Option<String>> = (0..DEVICES)
        .map(|device| {
            let host = device_host(run, device);
            let admin = admin.as_deref()?;
            make_token(
                server,
                Some(admin),
                json!({"name": host, "scope": "write", "hosts": [host]}),
            )
        })
        .collect();
    let paths: Vec<[String; 3]> = (0..DEVICES)
        .map(|device| {
            let host = device_host(run, device);
            WATCHERS.map(|(watcher, kind, _)| {
                create_bucket_as(
                    server,
                    &format!("{watcher}_{host}"),
                    kind,
                    &host,
                    tokens[device].as_deref(),
                )
            })
        })
        .collect();
    let cpu_before = server.cpu_time();
    let switches = Switches::start(server);
    let started = Instant::now() + Duration::from_millis(100);
    let beats = seconds as usize;
    let parts: Vec<Measurement> = std::thread::scope(|scope| {
        let handles: Vec<_> = paths
            .iter()
            .zip(&tokens)
            .enumerate()
            .map(|(device, (paths, token))| {
                scope.spawn(move || {
                    let mut connection = http::Connection::new(&server.url());
                    if let Some(token) = token {
                        connection =
                            connection.with_header("Authorization", &format!("Bearer {token}"));
                    }
                    let mut part = Measurement::default();
                    for beat in 0..beats {
                        for (watcher, path) in paths.iter().enumerate() {
                            let slot = (watcher * DEVICES + device) as u32;
                            let at = started
                                + Duration::from_secs(beat as u64)
                                + Duration::from_secs(1) * slot / (3 * DEVICES as u32);
                            sleep_until(at);
                            send_heartbeat(&mut connection, path, watcher, beat, &mut part);
                        }
                    }
                    part
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    let measurement = pooled(parts, server, started, cpu_before, switches);
    // The server as it was: without tokens it asks local clients for none.
    if let Some(admin) = &admin {
        let mut connection = http::Connection::new(&server.url())
            .with_header("Authorization", &format!("Bearer {admin}"));
        for name in (0..DEVICES)
            .map(|device| device_host(run, device))
            .chain([admin_name])
        {
            let _ = connection.delete(&format!("/api/0/tokens/{name}"));
        }
    }
    measurement
}

fn device_host(run: u128, device: usize) -> String {
    format!("device-{}-{device}", run % 1_000_000)
}

/// The three watchers of a device: bucket name prefix, event type, and
/// whether the Python `aw-client` sends its heartbeats (a new connection
/// for each, as `requests.post` makes).
const WATCHERS: [(&str, &str, bool); 3] = [
    ("aw-watcher-window", "currentwindow", true),
    ("aw-watcher-afk", "afkstatus", true),
    ("aw-watcher-web-chrome", "web.tab.current", false),
];

/// Watcher `watcher`'s heartbeat number `beat`: the window changes every
/// 30 s, the tab every 60 s, the AFK state never, so most heartbeats
/// merge, as a watcher's do.
fn watcher_heartbeat(watcher: usize, beat: usize, now: Timestamp) -> String {
    let data = match watcher {
        0 => {
            json!({"app": format!("app-{}", beat / 30 % 5), "title": format!("window {}", beat / 30)})
        }
        1 => json!({"status": "not-afk"}),
        _ => json!({"url": format!("https://example.org/{}", beat / 60), "title": "page",
                    "audible": false, "incognito": false}),
    };
    json!({"timestamp": now, "duration": 0, "data": data}).to_string()
}

/// Sends watcher `watcher`'s heartbeat number `beat`, stamped now, and
/// records its latency (and a failure for any answer but 200) in `part`.
fn send_heartbeat(
    connection: &mut http::Connection,
    path: &str,
    watcher: usize,
    beat: usize,
    part: &mut Measurement,
) {
    let body = watcher_heartbeat(watcher, beat, Timestamp::now());
    let sent = Instant::now();
    let reply = connection.post_json(path, body.as_bytes()).ok();
    part.latencies.push(sent.elapsed());
    if reply.is_none_or(|reply| reply.status != 200) {
        part.failures += 1;
    }
}

/// Makes a token (`body`), with `admin` as the credential if given; `None`
/// if the server has no tokens (the reference: its watchers then send no
/// `Authorization` header).
fn make_token(server: &ServerProcess, admin: Option<&str>, body: Value) -> Option<String> {
    let mut connection = http::Connection::new(&server.url());
    if let Some(admin) = admin {
        connection = connection.with_header("Authorization", &format!("Bearer {admin}"));
    }
    let reply = connection
        .post_json("/api/0/tokens", body.to_string().as_bytes())
        .ok()?;
    if reply.status != 201 {
        return None;
    }
    let made: Value = serde_json::from_slice(&reply.body).ok()?;
    Some(made["token"].as_str()?.to_string())
}

/// Creates a watcher's bucket on `host` (with `token`, if any); returns
/// the path of its heartbeats.
fn create_bucket_as(
    server: &ServerProcess,
    bucket: &str,
    kind: &str,
    host: &str,
    token: Option<&str>,
) -> String {
    let mut connection = http::Connection::new(&server.url());
    if let Some(token) = token {
        connection = connection.with_header("Authorization", &format!("Bearer {token}"));
    }
    let body = json!({"type": kind, "client": "aw-bench", "hostname": host});
    let path = format!("/api/0/buckets/{bucket}");
    let _ = connection.post_json(&path, body.to_string().as_bytes());
    format!("{path}/heartbeat?pulsetime=2")
}

/// The watcher-load row: three watchers at 1 Hz on every server at once
/// (the load is light enough not to disturb the others; running together,
/// every server meets the same machine) for `duration`. Per server: the
/// heartbeats' latencies, its CPU per minute and its wake-ups (context
/// switches of all its threads) per second.
fn watcher_load(servers: &[ServerProcess], duration: Duration) -> Vec<Measurement> {
    let run = unique();
    let host = format!("watched-{}", run % 1_000_000);
    let paths: Vec<[String; 3]> = servers
        .iter()
        .map(|server| {
            WATCHERS.map(|(watcher, kind, _)| {
                create_bucket_as(server, &format!("{watcher}_{host}"), kind, &host, None)
            })
        })
        .collect();
    settle_disk();
    let cpu_before: Vec<Duration> = servers.iter().map(ServerProcess::cpu_time).collect();
    let mut switches: Vec<Switches> = servers.iter().map(Switches::start).collect();
    let started = Instant::now();
    let done = AtomicBool::new(false);
    let beats = duration.as_secs() as usize;
    let mut measurements: Vec<Measurement> = std::thread::scope(|scope| {
        // Every second, so threads that end are counted (see `Switches`).
        let sampler = scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_secs(1));
                for (counter, server) in switches.iter_mut().zip(servers) {
                    counter.sample(server);
                }
            }
        });
        let handles: Vec<_> = servers
            .iter()
            .zip(&paths)
            .enumerate()
            .map(|(index, (server, paths))| {
                scope.spawn(move || {
                    let watchers: Vec<_> = paths
                        .iter()
                        .enumerate()
                        .map(|(watcher, path)| {
                            scope.spawn(move || {
                                let fresh_connections = WATCHERS[watcher].2;
                                let mut connection = http::Connection::new(&server.url());
                                let mut part = Measurement::default();
                                // Watchers and servers a little apart, as
                                // separate processes would be.
                                let offset = Duration::from_millis(
                                    (watcher * 333 + index * 111) as u64 % 1000,
                                );
                                for beat in 0..beats {
                                    let at = started + offset + Duration::from_secs(beat as u64);
                                    sleep_until(at);
                                    if fresh_connections {
                                        connection = http::Connection::new(&server.url());
                                    }
                                    send_heartbeat(&mut connection, path, watcher, beat, &mut part);
                                }
                                part
                            })
                        })
                        .collect();
                    let mut measurement = Measurement::default();
                    for part in watchers.into_iter().filter_map(|h| h.join().ok()) {
                        measurement.absorb(part);
                    }
                    measurement
                })
            })
            .collect();
        let measurements = handles.into_iter().filter_map(|h| h.join().ok()).collect();
        done.store(true, Ordering::Relaxed);
        let _ = sampler.join();
        measurements
    });
    let wall = started.elapsed();
    for (((measurement, server), cpu), mut counter) in measurements
        .iter_mut()
        .zip(servers)
        .zip(cpu_before)
        .zip(switches)
    {
        measurement.wall = wall;
        measurement.server_cpu = server.cpu_time().saturating_sub(cpu);
        counter.sample(server);
        measurement.server_switches = counter.count();
        let minutes = wall.as_secs_f64() / 60.0;
        measurement.extra.push((
            "cpu_ms_per_min".into(),
            measurement.server_cpu.as_secs_f64() * 1e3 / minutes,
        ));
        measurement.extra.push((
            "wakeups_per_s".into(),
            measurement.server_switches as f64 / wall.as_secs_f64(),
        ));
    }
    measurements
}

/// Sleeps until `at`, or not at all when it has passed: the watcher and
/// device rows send each heartbeat at its slot.
fn sleep_until(at: Instant) {
    if let Some(wait) = at.checked_duration_since(Instant::now()) {
        std::thread::sleep(wait);
    }
}

/// Imports the dataset (one request per bucket) and restarts the server on
/// the full database; returns the import and startup rows.
fn load_dataset(
    server: &mut ServerProcess,
    documents: &[Vec<u8>],
) -> io::Result<(Measurement, Measurement)> {
    let agent = http::agent();
    let url = format!("{}/api/0/import", server.url());
    let cpu_before = server.cpu_time();
    let started = Instant::now();
    let mut import = Measurement::default();
    for document in documents {
        let sent = Instant::now();
        let reply = http::post_json(&agent, &url, document).map_err(io::Error::other)?;
        import.latencies.push(sent.elapsed());
        if reply.status != 200 {
            return Err(io::Error::other(format!(
                "{}: import answered {}: {}",
                server.label,
                reply.status,
                String::from_utf8_lossy(&reply.body)
            )));
        }
    }
    import.wall = started.elapsed();
    import.server_cpu = server.cpu_time().saturating_sub(cpu_before);
    let (_, peak) = server.memory();
    import
        .extra
        .push(("total_s".into(), import.wall.as_secs_f64()));
    import.extra.push(("peak_rss_mb".into(), peak as f64 / 1e6));
    let mut startup = Measurement::default();
    for _ in 0..3 {
        let took = server.restart()?;
        startup.latencies.push(took);
        startup.wall += took;
    }
    let (rss, _) = server.memory();
    startup.extra.push(("idle_rss_mb".into(), rss as f64 / 1e6));
    Ok((import, startup))
}

fn progress(total: u64, what: &str) -> ProgressBar {
    if !io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    let template = format!("{{bar:40}} {{pos}}/{{len}} {what} {{msg}} ({{elapsed}}, eta {{eta}})");
    if let Ok(style) = ProgressStyle::with_template(&template) {
        bar.set_style(style);
    }
    bar
}

fn main() -> io::Result<()> {
    let mut args = Args::parse();
    if args.servers.is_empty() {
        args.servers
            .push(("current".into(), PathBuf::from("target/release/aw-server")));
    }
    let spec = DatasetSpec::with_days(args.days);
    eprintln!("Generating {} days of history...", spec.days);
    let data = dataset::generate(&spec, |_| {});
    let events = data.len();
    let documents: Vec<Vec<u8>> = dataset::buckets(&spec, data)
        .into_iter()
        .map(|mut bucket| {
            if args.oldest_first {
                // `write_export` writes the events last to first.
                if let Some(events) = bucket.events.as_mut() {
                    events.reverse();
                }
            }
            let mut document = Vec::new();
            dataset::write_export(&[bucket], &mut document, |_| {}).map(|()| document)
        })
        .collect::<io::Result<_>>()?;
    let workload = Workload {
        buckets: DashboardBuckets {
            window: spec.window_bucket(),
            afk: spec.afk_bucket(),
            chrome: spec.web_bucket(),
        },
        spec,
        quick: args.quick,
    };

    let mut servers = Vec::new();
    let mut rows: Vec<(String, String, Vec<Measurement>)> = Vec::new();
    let mut import_row = Vec::new();
    let mut startup_row = Vec::new();
    for (label, binary) in &args.servers {
        eprintln!(
            "Starting {label} ({}) and importing {events} events...",
            binary.display()
        );
        let mut server = ServerProcess::start(label, binary)?;
        let (import, startup) = load_dataset(&mut server, &documents)?;
        import_row.push(import);
        startup_row.push(startup);
        servers.push(server);
    }
    rows.push((
        "import of the dataset (3 requests)".into(),
        "3.3-6.8 s, 0.6-1.0 GB".into(),
        import_row,
    ));
    rows.push((
        "startup on the full database".into(),
        "58-79 ms".into(),
        startup_row,
    ));

    let selected: Vec<Scenario> = scenarios()
        .into_iter()
        .filter(|s| args.only.is_empty() || args.only.iter().any(|only| s.name.contains(only)))
        .collect();
    let bar = progress(
        (selected.len() * servers.len()) as u64 * u64::from(args.rounds),
        "runs",
    );
    for scenario in &selected {
        let mut per_server = vec![Measurement::default(); servers.len()];
        for round in 0..args.rounds as usize {
            // Each round starts with the next server: over an even number
            // of rounds each runs first as often, so the order favours
            // none of them.
            for offset in 0..servers.len() {
                let index = (round + offset) % servers.len();
                if scenario.restarts_first() {
                    servers[index].restart()?;
                }
                let server = &servers[index];
                bar.set_message(format!("{} on {}", scenario.name, server.label));
                if scenario.needs_quiet_disk() {
                    settle_disk();
                }
                per_server[index].absorb((scenario.run)(&workload, server));
                bar.inc(1);
            }
        }
        rows.push((
            scenario.name.to_string(),
            scenario.reference.to_string(),
            per_server,
        ));
    }
    bar.finish_and_clear();
    let watched = WATCHER_ROW;
    if args.watch_minutes > 0.0
        && (args.only.is_empty() || args.only.iter().any(|only| watched.contains(only.as_str())))
    {
        let minutes = if args.quick {
            args.watch_minutes.min(1.0)
        } else {
            args.watch_minutes
        };
        eprintln!("Watcher load: {minutes} min on every server at once...");
        let measurements = watcher_load(&servers, Duration::from_secs_f64(minutes * 60.0));
        rows.push((watched.to_string(), String::new(), measurements));
    }
    for server in &mut servers {
        server.stop()?;
    }

    print_table(&servers, &rows);
    write_json(&args, &workload, &servers, &rows)
}

/// Waits for the disk to be quiet before a run of a heartbeat row, so
/// that it does not pay for the writes of the run before. A burst row
/// leaves up to 15 s of WAL unsynced (~1 GB at 14k heartbeats/s); the
/// server's `fsync` of it took 0.7 s at the start of the next row, and
/// every commit made meanwhile waited up to 30 ms for the disk (a timer
/// in the writer, `benches/runs/2026-11-25-week-and-month.md`), which
/// showed as a heartbeat beside year queries taking up to 35 ms. So: the
/// OS's dirty pages are written (`sync`), the server is left idle long
/// enough for its idle sync and checkpoint (1 s after its last commit,
/// `aw-datastore`'s `wal_sync.rs`), and what that wrote is written too.
fn settle_disk() {
    let sync = || {
        if let Err(err) = std::process::Command::new("sync").status() {
            eprintln!("sync failed ({err}); runs may pay for each other's writes");
        }
    };
    sync();
    std::thread::sleep(Duration::from_millis(1500));
    sync();
}

fn print_table(servers: &[ServerProcess], rows: &[(String, String, Vec<Measurement>)]) {
    let mut out = io::stdout().lock();
    let mut header = format!("{:<50} {:>28}", "scenario", "reference");
    for server in servers {
        header += &format!(
            " | {:>9} {:>9} {:>9} {:>8}",
            format!("{} p50", server.label),
            "p95",
            "req/s",
            "cpu/req"
        );
    }
    if servers.len() > 1 {
        header += " | p50 ratio to first";
    }
    let _ = writeln!(out, "{header}");
    for (name, reference, measurements) in rows {
        let mut line = format!("{name:<50} {reference:>28}");
        for measurement in measurements {
            line += &format!(
                " | {:>9.3} {:>9.3} {:>9.1} {:>8.3}",
                measurement.quantile_ms(0.5),
                measurement.quantile_ms(0.95),
                measurement.throughput(),
                measurement.cpu_ms_per_request()
            );
        }
        if let Some(first) = measurements.first() {
            for other in &measurements[1..] {
                line += &format!(" | {:.2}", other.quantile_ms(0.5) / first.quantile_ms(0.5));
            }
        }
        let extras: Vec<String> = measurements
            .iter()
            .flat_map(|m| m.extra.iter())
            .map(|(k, v)| format!("{k}={v:.1}"))
            .chain(
                measurements
                    .iter()
                    .filter(|m| m.failures > 0)
                    .map(|m| format!("FAILURES={}", m.failures)),
            )
            .chain(
                // Rows whose tail matters report it.
                measurements
                    .iter()
                    .filter(|_| name.starts_with("heartbeat"))
                    .map(|m| format!("wakeups/req={:.2}", m.switches_per_request())),
            )
            .chain(
                measurements
                    .iter()
                    .filter(|_| {
                        name.starts_with("heartbeat every") || name.starts_with("100 devices")
                    })
                    .map(|m| {
                        format!(
                            "p99={:.1} max={:.1}",
                            m.quantile_ms(0.99),
                            m.quantile_ms(1.0)
                        )
                    }),
            )
            .collect();
        if !extras.is_empty() {
            line += &format!("  [{}]", extras.join(", "));
        }
        let _ = writeln!(out, "{line}");
    }
}

fn write_json(
    args: &Args,
    workload: &Workload,
    servers: &[ServerProcess],
    rows: &[(String, String, Vec<Measurement>)],
) -> io::Result<()> {
    let results: Vec<Value> = rows
        .iter()
        .map(|(name, reference, measurements)| {
            let by_server: serde_json::Map<String, Value> = servers
                .iter()
                .zip(measurements)
                .map(|(server, m)| (server.label.clone(), m.to_json()))
                .collect();
            json!({"scenario": name, "reference": reference, "servers": by_server})
        })
        .collect();
    let document = json!({
        "days": workload.spec.days,
        "rounds": args.rounds,
        "quick": args.quick,
        "servers": args.servers.iter().map(|(l, p)| json!({"label": l, "binary": p})).collect::<Vec<_>>(),
        "results": results,
    });
    if let Some(parent) = args.json.parent() {
        fs::create_dir_all(parent)?;
    }
    fs::write(&args.json, serde_json::to_vec_pretty(&document)?)?;
    eprintln!("Wrote {}", args.json.display());
    Ok(())
}
