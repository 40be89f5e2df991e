//! What hosting several people costs the watchers, on loopback:
//!
//! - **one file**: a server of one person, `--active` devices with three
//!   watchers each (window, AFK, web) sending a heartbeat every second,
//!   all into its one file;
//! - **people**: the same binary with `[users] enabled`, `--users` people
//!   added through `POST /api/0/users`, of whom `--active` each have one
//!   device with the same three watchers, each into their own file.
//!
//! The two alternate (`--rounds`), each for `--seconds`. Per phase: the
//! server's CPU per heartbeat, heartbeat p50/p99/max, resident memory and
//! threads at the end, and, for people, the threads the open files add
//! (per open person). Every heartbeat must answer 200.
//!
//! ```text
//! cargo build --release -p aw-server -p aw-benches
//! target/release/users [--server target/release/aw-server] [--users 1000] [--active 50]
//!                      [--seconds 300] [--rounds 1] [--json FILE]
//! ```

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use aw_benches::heartbeats::quantile_ms;
use aw_benches::http;
use aw_benches::server::{make_token, ServerProcess};
use clap::Parser;
use serde_json::{json, Value};

/// Measures heartbeats of many people on one server against one file.
#[derive(Debug, Parser)]
struct Args {
    /// The server binary.
    #[arg(long, default_value = "target/release/aw-server")]
    server: PathBuf,
    /// People added.
    #[arg(long, default_value_t = 1000)]
    users: usize,
    /// People (devices, for one file) sending heartbeats.
    #[arg(long, default_value_t = 50)]
    active: usize,
    /// Seconds each phase sends for.
    #[arg(long, default_value_t = 300)]
    seconds: u64,
    /// Rounds of the two phases, alternated.
    #[arg(long, default_value_t = 1)]
    rounds: usize,
    /// Also write the figures as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

const SERVER_KEY: &str = "bench-server-administrator";
const WATCHERS: [(&str, &str); 3] = [
    ("aw-watcher-window", "currentwindow"),
    ("aw-watcher-afk", "afkstatus"),
    ("aw-watcher-web-firefox", "web.tab.current"),
];

/// One device: its host, the token its watchers send.
struct Device {
    host: String,
    token: String,
}

/// What one phase measured.
#[derive(Debug)]
struct Phase {
    name: &'static str,
    heartbeats: usize,
    cpu: Duration,
    latencies: Vec<Duration>,
    rss: u64,
    threads: usize,
    threads_before: usize,
}

impl Phase {
    fn cpu_us_per_heartbeat(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e6 / self.heartbeats.max(1) as f64
    }

    fn to_json(&self) -> Value {
        json!({
            "phase": self.name,
            "heartbeats": self.heartbeats,
            "cpu_us_per_heartbeat": self.cpu_us_per_heartbeat(),
            "p50_ms": quantile_ms(&self.latencies, 0.5),
            "p99_ms": quantile_ms(&self.latencies, 0.99),
            "max_ms": quantile_ms(&self.latencies, 1.0),
            "rss_mb": self.rss as f64 / 1e6,
            "threads": self.threads,
            "threads_before": self.threads_before,
        })
    }
}

fn threads_of(server: &ServerProcess) -> usize {
    server.thread_switches().len()
}

fn make_buckets(url: &str, device: &Device) {
    let mut connection = http::Connection::new(url)
        .with_header("Authorization", &format!("Bearer {}", device.token));
    for (watcher, kind) in WATCHERS {
        let id = format!("{watcher}_{}", device.host);
        let body = json!({"type": kind, "client": watcher, "hostname": device.host});
        let reply = connection
            .post_json(&format!("/api/0/buckets/{id}"), body.to_string().as_bytes())
            .expect("create a bucket");
        assert!(
            reply.status == 200 || reply.status == 304,
            "create: {}",
            reply.status
        );
    }
}

/// The watchers of `devices` at 1 Hz each for `seconds`, on one thread
/// per device; the latencies, sorted.
fn send(url: &str, devices: &[Device], seconds: u64) -> Vec<Duration> {
    let running = Arc::new(AtomicBool::new(true));
    let threads: Vec<_> = devices
        .iter()
        .enumerate()
        .map(|(index, device)| {
            let mut connection = http::Connection::new(url)
                .with_header("Authorization", &format!("Bearer {}", device.token));
            let host = device.host.clone();
            let running = Arc::clone(&running);
            let count = devices.len();
            std::thread::spawn(move || {
                // Spread over the second, as real watchers are.
                std::thread::sleep(Duration::from_millis((index * 1000 / count) as u64));
                let mut latencies = Vec::new();
                let mut next = Instant::now();
                let mut tick: u64 = 0;
                while running.load(Ordering::Relaxed) {
                    let now = chrono::Utc::now().to_rfc3339();
                    for (watcher, _) in WATCHERS {
                        let data = match watcher {
                            "aw-watcher-window" => json!({"app": "Editor",
                                "title": format!("file {}.rs", tick / 20 % 7)}),
                            "aw-watcher-afk" => json!({"status": "not-afk"}),
                            _ => json!({"url": format!("https://example.org/{}", tick / 45 % 5),
                                "title": "Example", "audible": false, "incognito": false}),
                        };
                        let body = json!({"timestamp": now, "duration": 0, "data": data});
                        let path = format!("/api/0/buckets/{watcher}_{host}/heartbeat?pulsetime=2");
                        let sent = Instant::now();
                        let reply = connection
                            .post_json(&path, body.to_string().as_bytes())
                            .expect("heartbeat");
                        latencies.push(sent.elapsed());
                        assert_eq!(reply.status, 200, "heartbeat answered {}", reply.status);
                    }
                    tick += 1;
                    next += Duration::from_secs(1);
                    if let Some(wait) = next.checked_duration_since(Instant::now()) {
                        std::thread::sleep(wait);
                    }
                }
                latencies
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(seconds));
    running.store(false, Ordering::Relaxed);
    let mut all: Vec<Duration> = threads
        .into_iter()
        .flat_map(|thread| thread.join().expect("device thread"))
        .collect();
    all.sort();
    all
}

fn measure(
    name: &'static str,
    server: &ServerProcess,
    devices: &[Device],
    seconds: u64,
    threads_before: usize,
) -> Phase {
    server.reset_peak_memory();
    let cpu = server.cpu_time();
    let latencies = send(&server.url(), devices, seconds);
    let cpu = server.cpu_time().saturating_sub(cpu);
    Phase {
        name,
        heartbeats: latencies.len(),
        cpu,
        latencies,
        rss: server.memory().0,
        threads: threads_of(server),
        threads_before,
    }
}

fn main() {
    let args = Args::parse();
    let started = Instant::now();

    // One file: a server of one person, every device's watchers in it.
    let single = ServerProcess::start("one file", &args.server).expect("start");
    let admin = make_token(&single, None, json!({"name": "admin", "scope": "admin"}));
    let single_devices: Vec<Device> = (0..args.active)
        .map(|n| Device {
            host: format!("device-{n}"),
            token: admin.clone(),
        })
        .collect();
    for device in &single_devices {
        make_buckets(&single.url(), device);
    }
    let single_threads = threads_of(&single);

    // People: the same binary hosting --users people.
    let mut hosting = ServerProcess::start("people", &args.server).expect("start");
    std::fs::write(
        hosting.config_file(),
        format!(
            "[auth]\napi_key = \"{SERVER_KEY}\"\n\n[users]\nenabled = true\nmax_open = {}\n",
            args.active.max(64)
        ),
    )
    .expect("config");
    hosting.restart().ok();
    let mut admin_connection = http::Connection::new(&hosting.url())
        .with_header("Authorization", &format!("Bearer {SERVER_KEY}"));
    let adding = Instant::now();
    let mut tokens = Vec::new();
    for n in 0..args.users {
        let body = json!({"name": format!("person-{n:04}")});
        let reply = admin_connection
            .post_json("/api/0/users", body.to_string().as_bytes())
            .expect("add a person");
        assert_eq!(
            reply.status,
            201,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
        let added: Value = serde_json::from_slice(&reply.body).expect("JSON");
        tokens.push(added["token"].as_str().expect("token").to_string());
    }
    let added_in = adding.elapsed();
    eprintln!(
        "added {} people in {:.1} s ({:.1} ms each)",
        args.users,
        added_in.as_secs_f64(),
        added_in.as_secs_f64() * 1e3 / args.users.max(1) as f64
    );
    let people_threads_idle = threads_of(&hosting);
    let people: Vec<Device> = tokens
        .iter()
        .take(args.active)
        .map(|token| Device {
            host: "laptop".to_string(),
            token: token.clone(),
        })
        .collect();
    for device in &people {
        make_buckets(&hosting.url(), device);
    }

    let mut phases = Vec::new();
    for round in 0..args.rounds {
        eprintln!("round {}: one file", round + 1);
        phases.push(measure(
            "one file",
            &single,
            &single_devices,
            args.seconds,
            single_threads,
        ));
        eprintln!("round {}: people", round + 1);
        phases.push(measure(
            "people",
            &hosting,
            &people,
            args.seconds,
            people_threads_idle,
        ));
    }

    println!(
        "{:<10} {:>10} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "phase", "heartbeats", "CPU us/hb", "p50 ms", "p99 ms", "max ms", "RSS MB", "threads"
    );
    for phase in &phases {
        println!(
            "{:<10} {:>10} {:>10.1} {:>8.2} {:>8.2} {:>8.1} {:>8.1} {:>8}",
            phase.name,
            phase.heartbeats,
            phase.cpu_us_per_heartbeat(),
            quantile_ms(&phase.latencies, 0.5),
            quantile_ms(&phase.latencies, 0.99),
            quantile_ms(&phase.latencies, 1.0),
            phase.rss as f64 / 1e6,
            phase.threads
        );
    }
    let ratios: Vec<f64> = phases
        .chunks(2)
        .filter(|pair| pair.len() == 2)
        .map(|pair| pair[1].cpu_us_per_heartbeat() / pair[0].cpu_us_per_heartbeat())
        .collect();
    let last_people = phases.iter().rev().find(|phase| phase.name == "people");
    let per_person = last_people.map(|phase| {
        (phase.threads as f64 - phase.threads_before as f64) / args.active.max(1) as f64
    });
    println!("CPU per heartbeat, people / one file, by round: {ratios:.2?}");
    if let Some(per_person) = per_person {
        println!(
            "threads: {} idle with {} people added, {} with {} open: {per_person:.1} per open person",
            people_threads_idle,
            args.users,
            last_people.map_or(0, |phase| phase.threads),
            args.active
        );
    }
    println!("took {:.0} s", started.elapsed().as_secs_f64());
    if let Some(path) = &args.json {
        let document = json!({
            "users": args.users,
            "active": args.active,
            "seconds": args.seconds,
            "added_seconds": added_in.as_secs_f64(),
            "phases": phases.iter().map(Phase::to_json).collect::<Vec<_>>(),
            "cpu_ratios": ratios,
            "threads_per_open_person": per_person,
        });
        std::fs::write(
            path,
            serde_json::to_string_pretty(&document).unwrap_or_default(),
        )
        .expect("write the JSON");
    }
}
