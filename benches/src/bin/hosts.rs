//! What renaming and merging hosts of a year each costs, on loopback:
//!
//! - a hub server, and a device server whose `[hub]` reaches it through a
//!   proxy that counts the bytes each way;
//! - the reference workload's year imported into the device twice, as
//!   hosts `mac-a` and `mac-b` (different seeds), then forwarded: the
//!   bytes of sending two years whole;
//! - `mac-a` renamed to `mac` and forwarded: the bytes of a rename sent
//!   as a rename (against half the first figure: a year sent whole);
//! - `mac-b` merged into `mac` while heartbeats go to another bucket of
//!   the device every 20 ms: the merge's time, the device's peak memory,
//!   the heartbeats' latency; then forwarded: what the hub received.
//!
//! It checks that the hub then holds each of the device's buckets with
//! as many events.
//!
//! ```text
//! cargo build --release -p aw-server -p aw-benches
//! target/release/hosts [--server target/release/aw-server] [--days 365] [--json FILE]
//! ```

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use aw_benches::dataset::{export_documents, DatasetSpec};
use aw_benches::heartbeats::{quantile_ms, Heartbeats};
use aw_benches::http;
use aw_benches::server::{make_token, ServerProcess};
use clap::Parser;
use serde_json::{json, Value};

/// Renames and merges hosts of a year each and measures what it costs.
#[derive(Debug, Parser)]
struct Args {
    /// The server binary (hub and device).
    #[arg(long, default_value = "target/release/aw-server")]
    server: PathBuf,
    /// Days of history per host.
    #[arg(long, default_value_t = 365)]
    days: u32,
    /// Also write the figures as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// Bytes through the proxy: device to hub, hub to device.
#[derive(Debug, Default)]
struct Wire {
    up: AtomicU64,
    down: AtomicU64,
}

impl Wire {
    fn read(&self) -> (u64, u64) {
        (
            self.up.load(Ordering::Relaxed),
            self.down.load(Ordering::Relaxed),
        )
    }
}

/// A proxy on a free port to `target` (`127.0.0.1:port`) counting bytes.
fn proxy(target: String, wire: Arc<Wire>) -> std::io::Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    std::thread::spawn(move || {
        for client in listener.incoming().map_while(Result::ok) {
            let Ok(server) = TcpStream::connect(&target) else {
                continue;
            };
            let pipe = |mut from: TcpStream, mut to: TcpStream, count: Arc<Wire>, up: bool| {
                std::thread::spawn(move || {
                    let mut buffer = [0u8; 64 * 1024];
                    while let Ok(read) = from.read(&mut buffer) {
                        if read == 0 || to.write_all(&buffer[..read]).is_err() {
                            break;
                        }
                        let counter = if up { &count.up } else { &count.down };
                        counter.fetch_add(read as u64, Ordering::Relaxed);
                    }
                    let _ = to.shutdown(std::net::Shutdown::Both);
                });
            };
            let (Ok(client_copy), Ok(server_copy)) = (client.try_clone(), server.try_clone())
            else {
                continue;
            };
            pipe(client, server, Arc::clone(&wire), true);
            pipe(server_copy, client_copy, Arc::clone(&wire), false);
        }
    });
    Ok(port)
}

fn post(agent: &ureq::Agent, url: &str, body: &[u8], what: &str) -> Value {
    http::check(http::post_json(agent, url, body).expect(what), what)
}

fn count(agent: &ureq::Agent, url: &str, bucket: &str, token: Option<&str>) -> u64 {
    let mut request = agent.get(format!("{url}/api/0/buckets/{bucket}/events/count"));
    if let Some(token) = token {
        request = request.header("Authorization", format!("Bearer {token}"));
    }
    match request.call() {
        Ok(response) if response.status() == 200 => response
            .into_body()
            .read_to_string()
            .ok()
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or(0),
        _ => 0,
    }
}

/// A forwarding pass of the device: its report, wall time and the bytes
/// it moved each way.
fn forward(agent: &ureq::Agent, device: &ServerProcess, wire: &Wire) -> (Value, f64, u64, u64) {
    let (up, down) = wire.read();
    let started = Instant::now();
    let pass = post(
        agent,
        &format!("{}/api/0/sync/run?mode=hub", device.url()),
        b"",
        "forwarding pass",
    );
    let seconds = started.elapsed().as_secs_f64();
    let (up_after, down_after) = wire.read();
    (pass, seconds, up_after - up, down_after - down)
}

fn megabytes(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

fn main() -> std::io::Result<()> {
    let args = Args::parse();
    let agent = http::agent();
    let hub = ServerProcess::start("hub", &args.server)?;
    let admin = make_token(&hub, None, json!({"name": "admin", "scope": "admin"}));
    let device_token = make_token(
        &hub,
        Some(&admin),
        json!({"name": "mac", "scope": "write", "hosts": ["mac-a", "mac-b"]}),
    );
    let wire = Arc::new(Wire::default());
    let hub_port = hub.url().rsplit(':').next().unwrap_or_default().to_string();
    let through = proxy(format!("127.0.0.1:{hub_port}"), Arc::clone(&wire))?;
    let mut device = ServerProcess::start("device", &args.server)?;
    std::fs::create_dir_all(device.config_file().parent().unwrap())?;
    std::fs::write(
        device.config_file(),
        format!(
            "[hub]\nurl = \"http://127.0.0.1:{through}\"\ntoken = \"{device_token}\"\n\
             interval = 86400\n"
        ),
    )?;
    device.restart()?;

    let specs = [
        DatasetSpec {
            hostname: "mac-a".to_string(),
            ..DatasetSpec::with_days(args.days)
        },
        DatasetSpec {
            hostname: "mac-b".to_string(),
            seed: 0x5EED_2026,
            ..DatasetSpec::with_days(args.days)
        },
    ];
    let mut events_per_host = Vec::new();
    for spec in &specs {
        for document in export_documents(spec)? {
            post(
                &agent,
                &format!("{}/api/0/import", device.url()),
                &document,
                "import",
            );
        }
        let events: u64 = [spec.window_bucket(), spec.afk_bucket(), spec.web_bucket()]
            .iter()
            .map(|bucket| count(&agent, &device.url(), bucket, None))
            .sum();
        events_per_host.push(events);
    }
    let (first, first_seconds, first_up, first_down) = forward(&agent, &device, &wire);
    eprintln!(
        "two years forwarded whole: {:.1} MB up, {:.1} MB down in {first_seconds:.1} s ({} sent)",
        megabytes(first_up),
        megabytes(first_down),
        first["sent"]
    );

    // A rename of a year, then its forwarding.
    let started = Instant::now();
    let renamed = post(
        &agent,
        &format!("{}/api/0/hosts/mac-a/rename", device.url()),
        json!({"to": "mac"}).to_string().as_bytes(),
        "rename",
    );
    let rename_seconds = started.elapsed().as_secs_f64();
    let (after_rename, rename_pass_seconds, rename_up, rename_down) =
        forward(&agent, &device, &wire);
    eprintln!(
        "rename of a year: {rename_seconds:.2} s; forwarded as a rename: {} bytes up, {} down \
         in {rename_pass_seconds:.2} s ({} renamed, {} sent)",
        rename_up, rename_down, after_rename["renamed"], after_rename["sent"]
    );

    // A merge of a year into a year, heartbeats beside it.
    let beat_bucket = "aw-watcher-beside_mac";
    post(
        &agent,
        &format!("{}/api/0/buckets/{beat_bucket}", device.url()),
        json!({"type": "currentwindow", "client": "bench", "hostname": "mac"})
            .to_string()
            .as_bytes(),
        "the heartbeats' bucket",
    );
    let (before_rss, _) = device.memory();
    device.reset_peak_memory();
    let cpu_before = device.cpu_time();
    let beats = Heartbeats::start(
        &device.url(),
        format!("/api/0/buckets/{beat_bucket}/heartbeat?pulsetime=1"),
    );
    std::thread::sleep(Duration::from_secs(2));
    let started = Instant::now();
    let merged = post(
        &agent,
        &format!("{}/api/0/hosts/mac-b/merge", device.url()),
        json!({"into": "mac"}).to_string().as_bytes(),
        "merge",
    );
    let merge_seconds = started.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_secs(1));
    let latencies = beats.stop();
    let merge_cpu = (device.cpu_time() - cpu_before).as_secs_f64();
    let (_, peak_rss) = device.memory();
    let moved: u64 = merged["buckets"]
        .as_array()
        .map(|buckets| {
            buckets
                .iter()
                .map(|b| b["moved"].as_u64().unwrap_or(0) + b["cut"].as_u64().unwrap_or(0))
                .sum()
        })
        .unwrap_or(0);
    eprintln!(
        "merge of a year into a year: {merge_seconds:.1} s ({merge_cpu:.1} s CPU), {moved} events \
         moved or cut, peak RSS {:.0} MB (before {:.0} MB); heartbeats beside it: p50 {:.2} ms, \
         p99 {:.2} ms, max {:.1} ms over {}",
        megabytes(peak_rss),
        megabytes(before_rss),
        quantile_ms(&latencies, 0.5),
        quantile_ms(&latencies, 0.99),
        quantile_ms(&latencies, 1.0),
        latencies.len()
    );
    let (after_merge, merge_pass_seconds, merge_up, merge_down) = forward(&agent, &device, &wire);
    eprintln!(
        "the merge forwarded: {:.1} MB up, {:.1} MB down in {merge_pass_seconds:.1} s \
         ({} sent, {} compared, {} forgotten)",
        megabytes(merge_up),
        megabytes(merge_down),
        after_merge["sent"],
        after_merge["compared"],
        after_merge["forgotten"]
    );

    // The hub holds what the device holds.
    let buckets: Value = http::check(
        http::get(&agent, &format!("{}/api/0/buckets/", device.url())).expect("buckets"),
        "buckets",
    );
    let mut equal = true;
    for id in buckets
        .as_object()
        .map(|b| b.keys().cloned().collect::<Vec<_>>())
        .unwrap_or_default()
    {
        let (here, there) = (
            count(&agent, &device.url(), &id, None),
            count(&agent, &hub.url(), &id, Some(&admin)),
        );
        if here != there {
            eprintln!("{id}: device {here} events, hub {there}");
            equal = false;
        }
    }
    assert!(equal, "the hub holds each of the device's buckets");

    let table = format!(
        "| step | time | on the wire (up / down) | notes |\n| --- | --- | --- | --- |\n\
         | two years forwarded whole | {first_seconds:.1} s | {:.1} MB / {:.2} MB | {} events sent |\n\
         | rename of a year ({} events) | {rename_seconds:.2} s | | one transaction |\n\
         | its forwarding, as a rename | {rename_pass_seconds:.2} s | {:.1} kB / {:.1} kB | {} renamed, {} sent (a year whole: about {:.1} MB up) |\n\
         | merge of a year into a year | {merge_seconds:.1} s ({merge_cpu:.1} s CPU) | | {moved} moved or cut; peak RSS {:.0} MB (before {:.0} MB) |\n\
         | heartbeats beside the merge | | | p50 {:.2} ms, p99 {:.2} ms, max {:.1} ms ({} at 50 Hz) |\n\
         | the merge forwarded | {merge_pass_seconds:.1} s | {:.1} MB / {:.2} MB | {} sent, {} compared, {} forgotten |",
        megabytes(first_up),
        megabytes(first_down),
        first["sent"],
        events_per_host[0],
        rename_up as f64 / 1e3,
        rename_down as f64 / 1e3,
        after_rename["renamed"],
        after_rename["sent"],
        megabytes(first_up) / 2.0,
        megabytes(peak_rss),
        megabytes(before_rss),
        quantile_ms(&latencies, 0.5),
        quantile_ms(&latencies, 0.99),
        quantile_ms(&latencies, 1.0),
        latencies.len(),
        megabytes(merge_up),
        megabytes(merge_down),
        after_merge["sent"],
        after_merge["compared"],
        after_merge["forgotten"],
    );
    println!("{table}");
    if let Some(path) = &args.json {
        let document = json!({
            "days": args.days,
            "events_per_host": events_per_host,
            "forward_whole": {"seconds": first_seconds, "up": first_up, "down": first_down, "pass": first},
            "rename": {"seconds": rename_seconds, "report": renamed},
            "rename_forward": {"seconds": rename_pass_seconds, "up": rename_up, "down": rename_down, "pass": after_rename},
            "merge": {"seconds": merge_seconds, "cpu_seconds": merge_cpu, "peak_rss": peak_rss,
                      "rss_before": before_rss, "report": merged},
            "heartbeats": {"count": latencies.len(), "p50_ms": quantile_ms(&latencies, 0.5),
                           "p99_ms": quantile_ms(&latencies, 0.99), "max_ms": quantile_ms(&latencies, 1.0)},
            "merge_forward": {"seconds": merge_pass_seconds, "up": merge_up, "down": merge_down, "pass": after_merge},
        });
        std::fs::write(path, serde_json::to_vec_pretty(&document)?)?;
    }
    drop(device);
    Ok(())
}
