//! The figures of backups while serving on the generated year,
//! through a release server's HTTP API:
//!
//! - snapshots of the year (`POST /api/0/backup`), one after another: the
//!   server's own time for each (`duration_ms`), the client's round trip,
//!   the bytes written, the server CPU they took;
//! - heartbeat latency meanwhile: several watchers, each with a bucket of
//!   its own, each sending a heartbeat every 100 ms; p50, p99 and the
//!   maximum with heartbeats alone (the baseline), beside the snapshots,
//!   and between and after them;
//! - the server's resident memory before the first snapshot and its peak
//!   (`VmHWM`) during each.
//!
//! The server runs on a copy of `target/bench/dashboard-year.db` (written
//! by `scripts/bench-dashboard`) in a temporary directory, with `[backup]
//! dir` set to a folder beside it; the original is only read. Each
//! snapshot is checked (there, of the size the server reported) and
//! deleted at the end, with the copy.
//!
//! ```text
//! cargo build --release -p aw-server -p aw-benches
//! target/release/snapshot [--server target/release/aw-server] [--db target/bench/dashboard-year.db]
//!                         [--clients 8] [--interval-ms 100] [--snapshots 3] [--json FILE]
//! ```

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use aw_benches::http;
use aw_benches::server::{with_suffix, ServerProcess};
use aw_benches::stats::Measurement;
use aw_models::Timestamp;
use clap::Parser;
use serde_json::{json, Value};

/// Times snapshots of a running server and the heartbeats beside them.
#[derive(Debug, Parser)]
struct Args {
    /// The server binary.
    #[arg(long, default_value = "target/release/aw-server")]
    server: PathBuf,
    /// The database to serve; the server gets a copy, this file is only read.
    #[arg(long, default_value = "target/bench/dashboard-year.db")]
    db: PathBuf,
    /// Heartbeat clients, each with a bucket of its own.
    #[arg(long, default_value_t = 8)]
    clients: usize,
    /// Milliseconds between one client's heartbeats.
    #[arg(long, default_value_t = 100)]
    interval_ms: u64,
    /// Snapshots taken, one after another.
    #[arg(long, default_value_t = 3)]
    snapshots: usize,
    /// Seconds of heartbeats alone before the first snapshot.
    #[arg(long, default_value = "5", value_parser = seconds)]
    baseline_secs: Duration,
    /// Seconds between one snapshot's answer and the next request.
    #[arg(long, default_value = "1.5", value_parser = seconds)]
    pause_secs: Duration,
    /// Seconds of heartbeats after the last snapshot.
    #[arg(long, default_value = "3", value_parser = seconds)]
    tail_secs: Duration,
    /// Also write the figures as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

fn seconds(text: &str) -> Result<Duration, String> {
    let value: f64 = text.parse().map_err(|_| format!("not a number: {text}"))?;
    Duration::try_from_secs_f64(value).map_err(|error| format!("{text}: {error}"))
}

/// Heartbeats before the baseline starts, not counted in any row: each
/// client's first request opens its connection and creates its first event.
const WARM_UP: Duration = Duration::from_secs(1);

/// Windows a watcher moves between, as `(app, title)`.
const WINDOWS: [(&str, &str); 8] = [
    ("Firefox", "Inbox (3) - mail.example.org - Mozilla Firefox"),
    ("Code", "snapshot.rs - aw-server - Visual Studio Code"),
    ("Alacritty", "cargo build --release -p aw-server"),
    ("Slack", "#backups - Example Team - Slack"),
    (
        "Firefox",
        "Backups - ActivityWatch documentation - Mozilla Firefox",
    ),
    ("evince", "quarterly-report.pdf"),
    ("Code", "config.rs - aw-server - Visual Studio Code"),
    ("Spotify", "Spotify Premium"),
];

/// A stretch of the run, as offsets from its start.
#[derive(Debug, Clone, Copy)]
struct Window {
    start: Duration,
    end: Duration,
}

impl Window {
    fn length(&self) -> Duration {
        self.end.saturating_sub(self.start)
    }
}

/// One heartbeat: when it was sent (from the run's start), how long its
/// answer took, and whether that answer was a 2xx.
#[derive(Debug, Clone, Copy)]
struct Beat {
    sent: Duration,
    latency: Duration,
    ok: bool,
}

impl Beat {
    /// Whether the request was in flight at some moment of `window`.
    fn overlaps(&self, window: &Window) -> bool {
        self.sent < window.end && self.sent + self.latency > window.start
    }
}

/// What one client sent, and the first error it met.
#[derive(Debug, Default)]
struct ClientLog {
    beats: Vec<Beat>,
    first_error: Option<String>,
}

/// What `POST /api/0/backup` answered.
#[derive(Debug)]
struct Written {
    path: PathBuf,
    bytes: u64,
    duration_ms: f64,
}

/// One snapshot as the client saw it.
#[derive(Debug)]
struct Taken {
    /// From the request's sending to its answer.
    window: Window,
    answer: Result<Written, String>,
    /// Server CPU time over the request (the heartbeats' included).
    server_cpu: Duration,
    /// The server's peak resident memory during the request.
    peak_rss: u64,
    /// Whether the file is there with the reported size; what is wrong if not.
    check: Result<(), String>,
}

/// Everything the run measured, for the report.
#[derive(Debug)]
struct Run {
    beats: Vec<Beat>,
    client_errors: Vec<String>,
    baseline: Window,
    baseline_cpu: Duration,
    taken: Vec<Taken>,
    /// From the end of the baseline to the end of the run.
    after_baseline: Window,
    after_baseline_cpu: Duration,
    rss_before: u64,
    rss_after: u64,
}

fn main() -> io::Result<()> {
    let args = Args::parse();
    if args.clients == 0 || args.interval_ms == 0 {
        return Err(io::Error::other(
            "--clients and --interval-ms must be at least 1",
        ));
    }
    let year_bytes = file_and_wal_bytes(&args.db)?;

    let mut server = ServerProcess::start("snapshot", &args.server)?;
    let backup_dir = serve_copy(&mut server, &args.db)?;
    let url = server.url();
    let agent = http::agent();
    let (events, buckets) = count_events(&agent, &url)?;
    let paths = (0..args.clients)
        .map(|client| create_bucket(&agent, &url, client))
        .collect::<io::Result<Vec<String>>>()?;
    settle_disk();

    eprintln!(
        "Serving a copy of {} ({:.1} MB, {events} events in {buckets} buckets); {} clients, \
         a heartbeat every {} ms each; {} snapshots...",
        args.db.display(),
        megabytes(year_bytes),
        args.clients,
        args.interval_ms,
        args.snapshots
    );
    let mut run = measure(&args, &server, &agent, &paths);

    // Every snapshot is checked, then deleted: each is as large as the year.
    for taken in &mut run.taken {
        if let Ok(written) = &taken.answer {
            taken.check = check_file(written, &backup_dir);
            let _ = fs::remove_file(&written.path);
        }
    }
    let leftover = fs::read_dir(&backup_dir).map_or(0, |entries| entries.count());
    server.stop()?;
    // The temporary directory (the copy, the backup folder) goes with it.
    drop(server);

    print_report(&args, year_bytes, events, buckets, &run);
    if leftover > 0 {
        eprintln!("{leftover} other files were left in the backup folder (deleted with it)");
    }
    if let Some(path) = &args.json {
        write_json(path, &args, year_bytes, events, &run)?;
    }

    let heartbeat_errors = run.beats.iter().filter(|beat| !beat.ok).count();
    let bad_snapshots = run
        .taken
        .iter()
        .filter(|taken| taken.answer.is_err() || taken.check.is_err())
        .count();
    if heartbeat_errors > 0 || bad_snapshots > 0 {
        return Err(io::Error::other(format!(
            "{heartbeat_errors} heartbeat errors, {bad_snapshots} failed snapshots"
        )));
    }
    Ok(())
}

/// Puts a copy of `source` (and of its WAL, if it has one with content) in
/// place of the server's empty database, points `[backup] dir` at a folder
/// beside it and restarts the server; returns that folder.
fn serve_copy(server: &mut ServerProcess, source: &Path) -> io::Result<PathBuf> {
    server.replace_database(source)?;
    let db = server.db_path();
    let backup_dir = db
        .parent()
        .expect("the database is in the server's temporary directory")
        .join("backups");
    let config = server.config_file();
    fs::create_dir_all(config.parent().expect("a config folder"))?;
    fs::write(
        config,
        format!(
            "[backup]\ndir = {:?}\n",
            backup_dir.to_str().expect("a UTF-8 temp path")
        ),
    )?;
    let took = server.restart()?;
    eprintln!(
        "Server started on the copy in {:.0} ms",
        took.as_secs_f64() * 1e3
    );
    Ok(backup_dir)
}

/// The events stored and the buckets holding them.
fn count_events(agent: &ureq::Agent, url: &str) -> io::Result<(u64, usize)> {
    let buckets = answer(
        http::get(agent, &format!("{url}/api/0/buckets/")),
        "buckets",
    )?;
    let ids: Vec<&String> = buckets
        .as_object()
        .map(|map| map.keys().collect())
        .unwrap_or_default();
    let mut events = 0;
    for id in &ids {
        let count = answer(
            http::get(agent, &format!("{url}/api/0/buckets/{id}/events/count")),
            "count",
        )?;
        events += count.as_u64().unwrap_or(0);
    }
    Ok((events, ids.len()))
}

/// Creates client `client`'s bucket; the path of its heartbeats.
fn create_bucket(agent: &ureq::Agent, url: &str, client: usize) -> io::Result<String> {
    let path = format!("/api/0/buckets/bench-snapshot-window-{client}");
    let body = json!({"client": "bench", "type": "currentwindow", "hostname": "bench"});
    let reply = http::post_json(agent, &format!("{url}{path}"), body.to_string().as_bytes())
        .map_err(io::Error::other)?;
    // 304: the bucket was there already, which is as good.
    if reply.status != 200 && reply.status != 304 {
        return Err(io::Error::other(format!(
            "creating {path} answered {}: {}",
            reply.status,
            String::from_utf8_lossy(&reply.body)
        )));
    }
    Ok(format!("{path}/heartbeat?pulsetime=2"))
}

/// The heartbeats and snapshots: warm-up, baseline, the snapshots with
/// pauses between them, the tail.
fn measure(args: &Args, server: &ServerProcess, agent: &ureq::Agent, paths: &[String]) -> Run {
    let url = server.url();
    let interval = Duration::from_millis(args.interval_ms);
    let running = AtomicBool::new(true);
    let origin = Instant::now();
    std::thread::scope(|scope| {
        let clients: Vec<_> = paths
            .iter()
            .enumerate()
            .map(|(index, path)| {
                // Spread over the interval, as independent watchers would be.
                let offset = interval * index as u32 / paths.len() as u32;
                let (url, running) = (&url, &running);
                let clock = Clock {
                    origin,
                    first: origin + offset,
                    interval,
                };
                scope.spawn(move || watch(url, path, index, clock, running))
            })
            .collect();

        std::thread::sleep(WARM_UP);
        let cpu_start = server.cpu_time();
        let baseline_start = origin.elapsed();
        std::thread::sleep(args.baseline_secs);
        let baseline = Window {
            start: baseline_start,
            end: origin.elapsed(),
        };
        let cpu_baseline_end = server.cpu_time();
        let (rss_before, _) = server.memory();

        let mut taken = Vec::new();
        for index in 0..args.snapshots {
            if index > 0 {
                std::thread::sleep(args.pause_secs);
            }
            eprintln!("Snapshot {}...", index + 1);
            taken.push(snapshot(server, agent, &url, origin));
        }
        std::thread::sleep(args.tail_secs);
        let (rss_after, _) = server.memory();
        let after_baseline = Window {
            start: baseline.end,
            end: origin.elapsed(),
        };
        let cpu_end = server.cpu_time();
        running.store(false, Ordering::Relaxed);

        let mut beats = Vec::new();
        let mut client_errors = Vec::new();
        for (index, client) in clients.into_iter().enumerate() {
            let log = client.join().unwrap_or_else(|_| ClientLog {
                first_error: Some("the client's thread panicked".to_string()),
                ..ClientLog::default()
            });
            beats.extend(log.beats);
            if let Some(error) = log.first_error {
                client_errors.push(format!("client {index}: {error}"));
            }
        }
        Run {
            beats,
            client_errors,
            baseline,
            baseline_cpu: cpu_baseline_end.saturating_sub(cpu_start),
            taken,
            after_baseline,
            after_baseline_cpu: cpu_end.saturating_sub(cpu_baseline_end),
            rss_before,
            rss_after,
        }
    })
}

/// When a client sends: the run's start (what [`Beat::sent`] counts
/// from), its first heartbeat, the time between two.
#[derive(Debug, Clone, Copy)]
struct Clock {
    origin: Instant,
    first: Instant,
    interval: Duration,
}

/// One watcher: a heartbeat to `path` on `clock` until `running` is
/// cleared, on a kept-alive connection of its own. Its window changes
/// every 20-100 heartbeats (2-10 s at 100 ms), so most heartbeats extend
/// the last event and some start a new one, as a window watcher's do.
fn watch(url: &str, path: &str, client: usize, clock: Clock, running: &AtomicBool) -> ClientLog {
    let mut connection = http::Connection::new(url);
    let mut log = ClientLog::default();
    let mut random = 0x9E37_79B9_7F4A_7C15_u64 ^ (client as u64 + 1);
    let mut next_random = move || {
        // xorshift64: a fixed sequence per client, enough for switching windows.
        random ^= random << 13;
        random ^= random >> 7;
        random ^= random << 17;
        random
    };
    let mut window = client % WINDOWS.len();
    let mut beats_left = 20 + next_random() % 80;
    let mut next = clock.first;
    while running.load(Ordering::Relaxed) {
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        if beats_left == 0 {
            window = (window + 1 + next_random() as usize % (WINDOWS.len() - 1)) % WINDOWS.len();
            beats_left = 20 + next_random() % 80;
        }
        beats_left -= 1;
        let (app, title) = WINDOWS[window];
        let body = json!({
            "timestamp": Timestamp::now(),
            "duration": 0,
            "data": {"app": app, "title": title},
        });
        let sent = Instant::now();
        let reply = connection.post_json(path, body.to_string().as_bytes());
        let latency = sent.elapsed();
        let ok = match reply {
            Ok(reply) if (200..300).contains(&reply.status) => true,
            Ok(reply) => {
                log.first_error.get_or_insert_with(|| {
                    format!(
                        "answered {}: {}",
                        reply.status,
                        String::from_utf8_lossy(&reply.body)
                    )
                });
                false
            }
            Err(error) => {
                log.first_error.get_or_insert_with(|| error.to_string());
                false
            }
        };
        log.beats.push(Beat {
            sent: sent.duration_since(clock.origin),
            latency,
            ok,
        });
        // A client that fell behind sends its next heartbeat at once but
        // does not catch up on the ones it missed, as a watcher polling
        // its window would not.
        next = (next + clock.interval).max(Instant::now());
    }
    log
}

/// `POST /api/0/backup` with the server's peak memory and CPU over it.
fn snapshot(server: &ServerProcess, agent: &ureq::Agent, url: &str, origin: Instant) -> Taken {
    server.reset_peak_memory();
    let cpu_before = server.cpu_time();
    let start = origin.elapsed();
    let reply = http::post_json(agent, &format!("{url}/api/0/backup"), b"");
    let end = origin.elapsed();
    let server_cpu = server.cpu_time().saturating_sub(cpu_before);
    let (_, peak_rss) = server.memory();
    let answer = answer(reply, "backup")
        .map_err(|error| error.to_string())
        .and_then(|body| {
            Ok(Written {
                path: PathBuf::from(body["path"].as_str().ok_or("no path in the answer")?),
                bytes: body["bytes"].as_u64().ok_or("no bytes in the answer")?,
                duration_ms: body["duration_ms"]
                    .as_f64()
                    .ok_or("no duration_ms in the answer")?,
            })
        });
    Taken {
        window: Window { start, end },
        answer,
        server_cpu,
        peak_rss,
        check: Err("not checked".to_string()),
    }
}

/// Whether the snapshot is where the server said, in the backup folder,
/// with the size it reported.
fn check_file(written: &Written, backup_dir: &Path) -> Result<(), String> {
    if written.path.parent() != Some(backup_dir) {
        return Err(format!(
            "written outside the backup folder: {}",
            written.path.display()
        ));
    }
    let size = fs::metadata(&written.path)
        .map_err(|error| format!("{}: {error}", written.path.display()))?
        .len();
    if size != written.bytes {
        return Err(format!("{size} bytes on disk, {} reported", written.bytes));
    }
    Ok(())
}

/// The JSON body of a 200 answer.
fn answer(reply: Result<http::Reply, ureq::Error>, what: &str) -> io::Result<Value> {
    let reply = reply.map_err(|error| io::Error::other(format!("{what}: {error}")))?;
    if reply.status != 200 {
        return Err(io::Error::other(format!(
            "{what} answered {}: {}",
            reply.status,
            String::from_utf8_lossy(&reply.body)
        )));
    }
    serde_json::from_slice(&reply.body)
        .map_err(|error| io::Error::other(format!("{what}: {error}")))
}

/// The latencies of `beats` with their failures, over `wall` and `cpu`.
fn measurement<'a>(
    beats: impl Iterator<Item = &'a Beat>,
    wall: Duration,
    server_cpu: Duration,
) -> Measurement {
    let mut measurement = Measurement {
        wall,
        server_cpu,
        ..Measurement::default()
    };
    for beat in beats {
        measurement.latencies.push(beat.latency);
        measurement.failures += usize::from(!beat.ok);
    }
    measurement
}

/// The heartbeat rows: alone, beside any snapshot, between and after them.
fn phases(run: &Run) -> Vec<(&'static str, Measurement)> {
    let windows: Vec<Window> = run.taken.iter().map(|taken| taken.window).collect();
    let beside = |beat: &Beat| windows.iter().any(|window| beat.overlaps(window));
    let snapshot_wall: Duration = windows.iter().map(Window::length).sum();
    let snapshot_cpu: Duration = run.taken.iter().map(|taken| taken.server_cpu).sum();
    let baseline = &run.baseline;
    vec![
        (
            "heartbeats alone (baseline)",
            measurement(
                run.beats
                    .iter()
                    .filter(|beat| beat.sent >= baseline.start && beat.sent < baseline.end),
                baseline.length(),
                run.baseline_cpu,
            ),
        ),
        (
            "beside a snapshot",
            measurement(
                run.beats.iter().filter(|beat| beside(beat)),
                snapshot_wall,
                snapshot_cpu,
            ),
        ),
        (
            "between and after the snapshots",
            measurement(
                run.beats
                    .iter()
                    .filter(|beat| beat.sent >= baseline.end && !beside(beat)),
                run.after_baseline.length().saturating_sub(snapshot_wall),
                run.after_baseline_cpu.saturating_sub(snapshot_cpu),
            ),
        ),
    ]
}

/// Heartbeats in flight during `window`.
fn beside_window(run: &Run, window: &Window, cpu: Duration) -> Measurement {
    measurement(
        run.beats.iter().filter(|beat| beat.overlaps(window)),
        window.length(),
        cpu,
    )
}

fn print_report(args: &Args, year_bytes: u64, events: u64, buckets: usize, run: &Run) {
    println!(
        "Snapshots of {} ({year_bytes} bytes, {:.1} MB; {events} events in {buckets} buckets) \
         through {}, {} heartbeat clients every {} ms",
        args.db.display(),
        megabytes(year_bytes),
        args.server.display(),
        args.clients,
        args.interval_ms
    );
    println!();
    println!(
        "| snapshot | server's time (ms) | round trip (ms) | bytes | server CPU (ms) | \
         peak RSS (MB) | heartbeats beside | p50 ms | p99 ms | max ms | file |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for (index, taken) in run.taken.iter().enumerate() {
        let beside = beside_window(run, &taken.window, taken.server_cpu);
        let (duration, bytes) = match &taken.answer {
            Ok(written) => (
                format!("{:.1}", written.duration_ms),
                written.bytes.to_string(),
            ),
            Err(error) => (format!("failed: {error}"), String::new()),
        };
        let file = match (&taken.answer, &taken.check) {
            (Err(_), _) => "none".to_string(),
            (Ok(_), Ok(())) => "there, size as reported; deleted".to_string(),
            (Ok(_), Err(problem)) => format!("WRONG: {problem}"),
        };
        println!(
            "| {} | {duration} | {:.1} | {bytes} | {:.0} | {:.1} | {} | {:.2} | {:.2} | {:.2} | {file} |",
            index + 1,
            taken.window.length().as_secs_f64() * 1e3,
            taken.server_cpu.as_secs_f64() * 1e3,
            megabytes(taken.peak_rss),
            beside.latencies.len(),
            beside.quantile_ms(0.5),
            beside.quantile_ms(0.99),
            beside.quantile_ms(1.0),
        );
    }
    println!();
    println!(
        "| heartbeats | seconds | requests | req/s | p50 ms | p99 ms | max ms | errors | \
         server CPU (% of a core) |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for (name, phase) in phases(run) {
        println!(
            "| {name} | {:.1} | {} | {:.1} | {:.2} | {:.2} | {:.2} | {} | {:.1} |",
            phase.wall.as_secs_f64(),
            phase.latencies.len(),
            phase.throughput(),
            phase.quantile_ms(0.5),
            phase.quantile_ms(0.99),
            phase.quantile_ms(1.0),
            phase.failures,
            phase.server_cpu.as_secs_f64() * 100.0 / phase.wall.as_secs_f64().max(1e-9),
        );
    }
    let all_errors = run.beats.iter().filter(|beat| !beat.ok).count();
    println!();
    let peak = run
        .taken
        .iter()
        .map(|taken| taken.peak_rss)
        .max()
        .unwrap_or(0);
    println!("| server memory | MB |");
    println!("| --- | --- |");
    println!(
        "| RSS before the first snapshot | {:.1} |",
        megabytes(run.rss_before)
    );
    println!(
        "| peak RSS during the snapshots (VmHWM) | {:.1} |",
        megabytes(peak)
    );
    println!(
        "| growth | {:+.1} |",
        (peak as f64 - run.rss_before as f64) / 1e6
    );
    println!(
        "| RSS at the end of the tail | {:.1} |",
        megabytes(run.rss_after)
    );
    println!();
    println!(
        "Heartbeat errors (non-2xx or no answer), warm-up included: {all_errors} of {}",
        run.beats.len()
    );
    for error in &run.client_errors {
        println!("  {error}");
    }
}

fn write_json(path: &Path, args: &Args, year_bytes: u64, events: u64, run: &Run) -> io::Result<()> {
    let snapshots: Vec<Value> = run
        .taken
        .iter()
        .map(|taken| {
            let beside = beside_window(run, &taken.window, taken.server_cpu);
            let mut entry = json!({
                "round_trip_ms": taken.window.length().as_secs_f64() * 1e3,
                "server_cpu_ms": taken.server_cpu.as_secs_f64() * 1e3,
                "peak_rss_bytes": taken.peak_rss,
                "heartbeats_beside": beside.to_json(),
                "file_checked": taken.check.is_ok(),
            });
            match &taken.answer {
                Ok(written) => {
                    entry["duration_ms"] = json!(written.duration_ms);
                    entry["bytes"] = json!(written.bytes);
                }
                Err(error) => entry["error"] = json!(error),
            }
            entry
        })
        .collect();
    let heartbeats: serde_json::Map<String, Value> = phases(run)
        .into_iter()
        .map(|(name, phase)| (name.to_string(), phase.to_json()))
        .collect();
    let document = json!({
        "server": args.server,
        "db": args.db,
        "db_bytes": year_bytes,
        "events": events,
        "clients": args.clients,
        "interval_ms": args.interval_ms,
        "snapshots": snapshots,
        "heartbeats": heartbeats,
        "heartbeat_errors": run.beats.iter().filter(|beat| !beat.ok).count(),
        "rss_before_bytes": run.rss_before,
        "rss_after_bytes": run.rss_after,
    });
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    fs::write(path, serde_json::to_vec_pretty(&document)?)?;
    eprintln!("Wrote {}", path.display());
    Ok(())
}

/// Waits for a quiet disk (see `settle_disk` in `load.rs`): the copy of the
/// year is still being written out when the server starts, and its `fsync`
/// would show in the baseline.
fn settle_disk() {
    let sync = || {
        if let Err(error) = std::process::Command::new("sync").status() {
            eprintln!("sync failed ({error}); the baseline may pay for the copy's writes");
        }
    };
    sync();
    std::thread::sleep(Duration::from_millis(1500));
    sync();
}

/// The database file's size and its WAL's.
fn file_and_wal_bytes(path: &Path) -> io::Result<u64> {
    let wal = fs::metadata(with_suffix(path, "-wal")).map_or(0, |meta| meta.len());
    Ok(fs::metadata(path)?.len() + wal)
}

fn megabytes(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}
