//! Several nodes behind HAProxy, drilled (`docs/API.md` §3.18), on
//! loopback:
//!
//! - three nodes (the server binary, `[users] enabled`) and HAProxy with
//!   the configuration the docs ship (`docs/haproxy/aw-hub.cfg`, its
//!   addresses and paths replaced), routing by the person a token names
//!   through a map file;
//! - `--people` people placed on the nodes in turn, each with `--devices`
//!   devices: a device is its own database file whose watchers' heartbeats
//!   (window and AFK, every second) are forwarded to the proxy by the
//!   server's own forwarding job (`aw_jobs::hub`) every `--interval`
//!   seconds, with the person's token;
//! - a quarter of the way in, the second node is killed (SIGKILL) and
//!   started again `--down` seconds later; halfway, the first person is
//!   moved from the first node to the third with `aw-server user move`
//!   (through the proxy's runtime API and map file) while their devices
//!   forward;
//! - at the end the watchers stop, the devices forward until nothing is
//!   left, and every person's data on the hub (read through the proxy)
//!   must equal their devices', event for event, bucket for bucket; no
//!   node may have refused a person it does not hold (its log, over its
//!   restarts; one request sent to a wrong node on purpose at the start
//!   proves the count works).
//!
//! With `--history-days N` the moved person first imports N days of the
//! reference workload, so the move's figures are those of a person with
//! that much history. It prints the figures and exits non-zero on any
//! difference.
//!
//! ```text
//! cargo build --release -p aw-server -p aw-benches
//! target/release/nodes [--server target/release/aw-server] [--haproxy haproxy]
//!                      [--people 30] [--devices 2] [--seconds 40] [--history-days 0]
//!                      [--json FILE]
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aw_benches::dataset::{export_documents, DatasetSpec};
use aw_benches::http::{self, Connection};
use aw_benches::server::ServerProcess;
use aw_datastore::{Datastore, EventQuery};
use aw_jobs::hub::{HubSettings, HubState};
use aw_models::{Bucket, Event, Timestamp};
use aw_nodes::haproxy::{read_route, RuntimeApi};
use clap::Parser;
use serde_json::{json, Value};

/// Drills several nodes behind HAProxy.
#[derive(Debug, Parser)]
struct Args {
    /// The server binary (the nodes, and `user move`).
    #[arg(long, default_value = "target/release/aw-server")]
    server: PathBuf,
    /// HAProxy.
    #[arg(long, default_value = "haproxy")]
    haproxy: PathBuf,
    /// People, placed on the three nodes in turn.
    #[arg(long, default_value_t = 30)]
    people: usize,
    /// Devices per person.
    #[arg(long, default_value_t = 2)]
    devices: usize,
    /// Seconds the watchers write while the devices forward.
    #[arg(long, default_value_t = 40)]
    seconds: u64,
    /// Seconds between a device's forwarding passes.
    #[arg(long, default_value_t = 2)]
    interval: u64,
    /// Seconds the killed node stays down.
    #[arg(long, default_value_t = 3)]
    down: u64,
    /// Days of history the moved person imports first.
    #[arg(long, default_value_t = 0)]
    history_days: u32,
    /// Also write the figures as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

const KEY: &str = "drill-server-administrator";
const NODES: usize = 3;
/// What a node logs when it refuses a person it does not hold.
const MISDIRECTED: &str = "a token of a person this node does not hold";
/// The shipped configuration, drilled as it is.
const SHIPPED: &str = include_str!("../../../docs/haproxy/aw-hub.cfg");
const WATCHERS: [(&str, &str); 2] = [
    ("aw-watcher-window", "currentwindow"),
    ("aw-watcher-afk", "afkstatus"),
];

/// One device: its own database, its forwarding job, what it met.
struct Device {
    person: usize,
    host: String,
    store: Datastore,
    hub: HubState,
    passes: AtomicU64,
    failures: Mutex<BTreeMap<String, u64>>,
    /// Passes that succeeded after the watchers stopped.
    clean_after_stop: AtomicU64,
}

fn person_name(index: usize) -> String {
    format!("p{index:02}")
}

fn node_name(index: usize) -> String {
    format!("node{}", index + 1)
}

fn main() {
    let args = Args::parse();
    if let Err(error) = drill(&args) {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

fn drill(args: &Args) -> Result<(), String> {
    let began = Instant::now();
    let root = tempfile::Builder::new()
        .prefix("aw-nodes-drill-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let root = root.path();
    let version = Command::new(&args.haproxy)
        .arg("-v")
        .output()
        .map_err(|e| format!("{}: {e} (install Debian's haproxy)", args.haproxy.display()))?;
    let version = String::from_utf8_lossy(&version.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    eprintln!("{version}");

    // The nodes.
    let mut nodes = Vec::new();
    for index in 0..NODES {
        let mut node = ServerProcess::start(&node_name(index), &args.server)
            .map_err(|e| format!("start {}: {e}", node_name(index)))?;
        std::fs::write(
            node.config_file(),
            format!(
                "trusted_proxies = [\"127.0.0.1\"]\n\n[auth]\napi_key = \"{KEY}\"\n\n\
                 [users]\nenabled = true\n"
            ),
        )
        .map_err(|e| e.to_string())?;
        node.restart().map_err(|e| e.to_string())?;
        nodes.push(node);
    }

    // The people, each on a node, and the map.
    let mut tokens = Vec::new();
    let mut map = String::from("# person node\n");
    for person in 0..args.people {
        let node = &nodes[person % NODES];
        let reply = admin(node)
            .post_json(
                "/api/0/users",
                json!({ "name": person_name(person) })
                    .to_string()
                    .as_bytes(),
            )
            .map_err(|e| e.to_string())?;
        let added = expect(reply, 201, "add a person")?;
        tokens.push(added["token"].as_str().unwrap_or_default().to_string());
        map.push_str(&format!(
            "{} {}\n",
            person_name(person),
            node_name(person % NODES)
        ));
    }
    let map_file = root.join("aw-people.map");
    std::fs::write(&map_file, &map).map_err(|e| e.to_string())?;

    // HAProxy with the shipped configuration.
    let socket = root.join("haproxy-admin.sock");
    let proxy_port = aw_benches::server::free_port().map_err(|e| e.to_string())?;
    let mut config = SHIPPED
        .replace(
            "/etc/haproxy/aw-people.map",
            &map_file.display().to_string(),
        )
        .replace("/run/haproxy/aw-admin.sock", &socket.display().to_string())
        .replace("127.0.0.1:5600", &format!("127.0.0.1:{proxy_port}"));
    for (index, node) in nodes.iter().enumerate() {
        config = config.replace(&format!("127.0.0.1:560{}", index + 1), &address(node));
    }
    let config_file = root.join("aw-hub.cfg");
    std::fs::write(&config_file, config).map_err(|e| e.to_string())?;
    let proxy_log = root.join("haproxy.log");
    let mut proxy = Proxy(
        Command::new(&args.haproxy)
            .arg("-db")
            .arg("-f")
            .arg(&config_file)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&proxy_log).map_err(|e| e.to_string())?)
            .stderr(std::fs::File::create(root.join("haproxy.err")).map_err(|e| e.to_string())?)
            .spawn()
            .map_err(|e| format!("start haproxy: {e}"))?,
    );
    let proxy_url = format!("http://127.0.0.1:{proxy_port}");
    wait_for(&proxy_url, &mut proxy.0)?;

    // One request on purpose to a node that does not hold its person: the
    // count of misdirected requests must see exactly it.
    let wrong = Connection::new(&nodes[1].url())
        .with_header("Authorization", &format!("Bearer {}", tokens[0]))
        .get("/api/0/buckets/")
        .map_err(|e| e.to_string())?;
    if wrong.status != 421 {
        return Err(format!(
            "a person's token at a node not holding them answered {}",
            wrong.status
        ));
    }

    if args.history_days > 0 {
        import_history(&proxy_url, &tokens[0], args.history_days)?;
    }
    let history_before = history_counts(&proxy_url, &tokens[0])?;

    // The devices.
    let devices: Vec<Arc<Device>> = (0..args.people)
        .flat_map(|person| (0..args.devices).map(move |device| (person, device)))
        .map(|(person, device)| {
            let host = format!("{}-laptop{}", person_name(person), device + 1);
            let store = Datastore::open(root.join(format!("{host}.db")))
                .map_err(|e| format!("{host}: {e}"))?;
            for (watcher, kind) in WATCHERS {
                let bucket: Bucket = serde_json::from_value(json!({
                    "id": format!("{watcher}_{host}"), "type": kind,
                    "client": watcher, "hostname": host,
                }))
                .map_err(|e| e.to_string())?;
                store.create_bucket(bucket).map_err(|e| e.to_string())?;
            }
            let settings = HubSettings {
                url: proxy_url.clone(),
                token: tokens[person].clone(),
                ca_file: None,
                interval: Duration::from_secs(args.interval),
                buckets: None,
            };
            Ok(Arc::new(Device {
                person,
                hub: HubState::new(Some(settings), format!("{host}-id"), host.clone()),
                host,
                store,
                passes: AtomicU64::new(0),
                failures: Mutex::new(BTreeMap::new()),
                clean_after_stop: AtomicU64::new(0),
            }))
        })
        .collect::<Result<_, String>>()?;
    eprintln!(
        "{} people on {NODES} nodes, {} devices forwarding every {} s through HAProxy",
        args.people,
        devices.len(),
        args.interval
    );

    let writing = Arc::new(AtomicBool::new(true));
    let forwarding = Arc::new(AtomicBool::new(true));
    let watcher = {
        let (devices, writing) = (devices.clone(), Arc::clone(&writing));
        std::thread::spawn(move || watch(&devices, &writing))
    };
    let forwarders: Vec<_> = (0..6)
        .map(|lane| {
            let mine: Vec<Arc<Device>> = devices.iter().skip(lane).step_by(6).cloned().collect();
            let (forwarding, writing) = (Arc::clone(&forwarding), Arc::clone(&writing));
            let interval = Duration::from_secs(args.interval);
            std::thread::spawn(move || forward(&mine, interval, &forwarding, &writing))
        })
        .collect();

    // The faults, while everyone forwards.
    let run_started = Instant::now();
    std::thread::sleep(Duration::from_secs(args.seconds / 4));
    eprintln!("Killing node2 (SIGKILL) for {} s", args.down);
    nodes[1].crash().map_err(|e| e.to_string())?;
    std::thread::sleep(Duration::from_secs(args.down));
    let restart = nodes[1].start_again().map_err(|e| e.to_string())?;
    eprintln!("node2 answers again after {:.2} s", restart.as_secs_f64());

    let until_move = (args.seconds / 2).saturating_sub(run_started.elapsed().as_secs());
    std::thread::sleep(Duration::from_secs(until_move));
    let moved = move_first_person(args, &nodes, &socket, &map_file)?;
    eprintln!("{}", moved.said.trim());

    let rest = args.seconds.saturating_sub(run_started.elapsed().as_secs());
    std::thread::sleep(Duration::from_secs(rest));
    writing.store(false, Ordering::SeqCst);
    watcher
        .join()
        .map_err(|_| "the watchers' thread panicked")?;
    eprintln!("Watchers stopped; the devices forward what is left");
    let deadline = Instant::now() + Duration::from_secs(180);
    while devices
        .iter()
        .any(|device| device.clean_after_stop.load(Ordering::SeqCst) < 2)
    {
        if Instant::now() > deadline {
            let behind: Vec<_> = devices
                .iter()
                .filter(|d| d.clean_after_stop.load(Ordering::SeqCst) < 2)
                .map(|d| format!("{} {:?}", d.host, d.failures.lock().unwrap()))
                .collect();
            return Err(format!(
                "devices still failing 180 s after the watchers stopped: {behind:?}"
            ));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    forwarding.store(false, Ordering::SeqCst);
    for thread in forwarders {
        thread.join().map_err(|_| "a forwarding thread panicked")?;
    }

    // Every person's data on the hub equals their devices'.
    let compared = compare(&proxy_url, &tokens, &devices, args)?;
    let misdirected: Vec<usize> = nodes
        .iter()
        .map(|node| {
            std::fs::read_to_string(node.log_path())
                .unwrap_or_default()
                .matches(MISDIRECTED)
                .count()
        })
        .collect();
    let history_after = history_counts(&proxy_url, &tokens[0])?;
    let where_now = proxy_route(&socket, &map_file, &person_name(0))?;
    let held: Vec<Vec<String>> = nodes.iter().map(people_of).collect::<Result<_, _>>()?;

    let mut failures: BTreeMap<String, u64> = BTreeMap::new();
    for device in &devices {
        for (kind, count) in device.failures.lock().unwrap().iter() {
            *failures.entry(kind.clone()).or_default() += count;
        }
    }
    let passes: u64 = devices
        .iter()
        .map(|d| d.passes.load(Ordering::SeqCst))
        .sum();
    let figures = json!({
        "haproxy": version,
        "people": args.people,
        "devices": devices.len(),
        "history_days": args.history_days,
        "events_compared": compared,
        "history_events_moved": history_after.values().sum::<u64>(),
        "passes": passes,
        "failed_passes": failures,
        "node_down_seconds": args.down,
        "node_restart_seconds": restart.as_secs_f64(),
        "move": {
            "person": person_name(0),
            "bytes": moved.bytes,
            "seconds": moved.seconds,
            "answered_503_seconds": moved.frozen,
            "command_seconds": moved.command.as_secs_f64(),
            "route_now": where_now,
        },
        "misdirected_per_node": misdirected,
        "people_per_node": held.iter().map(Vec::len).collect::<Vec<_>>(),
        "seconds": began.elapsed().as_secs_f64(),
    });
    println!(
        "{}",
        serde_json::to_string_pretty(&figures).unwrap_or_default()
    );
    if let Some(path) = &args.json {
        std::fs::write(path, figures.to_string()).map_err(|e| e.to_string())?;
    }

    // What must hold.
    let mut wrong = Vec::new();
    if misdirected != [0, 1, 0] {
        wrong.push(format!(
            "requests refused as misdirected per node {misdirected:?}, expected [0, 1, 0] (the one sent on purpose)"
        ));
    }
    if history_after != history_before {
        wrong.push(format!(
            "the moved history's events per bucket were {history_before:?}, now {history_after:?}"
        ));
    }
    if where_now != ["node3", "node3"] {
        wrong.push(format!("{}'s route is {where_now:?}", person_name(0)));
    }
    if held[0].contains(&person_name(0)) || !held[2].contains(&person_name(0)) {
        wrong.push(format!("after the move the nodes hold {held:?}"));
    }
    if held.iter().map(Vec::len).sum::<usize>() != args.people {
        wrong.push(format!("the nodes hold {held:?}"));
    }
    drop(proxy);
    if wrong.is_empty() {
        eprintln!(
            "OK: {compared} events equal on the hub and the devices; no request reached a wrong node; {:.0} s",
            began.elapsed().as_secs_f64()
        );
        Ok(())
    } else {
        Err(wrong.join("; "))
    }
}

/// The JSON of a reply of status `status`, else why not.
fn expect(reply: http::Reply, status: u16, what: &str) -> Result<Value, String> {
    if reply.status != status {
        return Err(format!(
            "{what}: {} {}",
            reply.status,
            String::from_utf8_lossy(&reply.body)
        ));
    }
    if reply.body.is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_slice(&reply.body).map_err(|e| format!("{what}: {e}"))
}

/// HAProxy, stopped when dropped.
struct Proxy(Child);

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn address(node: &ServerProcess) -> String {
    node.url().trim_start_matches("http://").to_string()
}

fn admin(node: &ServerProcess) -> Connection {
    Connection::new(&node.url()).with_header("Authorization", &format!("Bearer {KEY}"))
}

fn people_of(node: &ServerProcess) -> Result<Vec<String>, String> {
    let reply = admin(node).get("/api/0/users").map_err(|e| e.to_string())?;
    Ok(expect(reply, 200, "list the people")?
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|user| user["name"].as_str().map(str::to_string))
                // The node's first database, adopted at its start with
                // users enabled (`first_user`): nobody's devices.
                .filter(|name| name != "owner")
                .collect()
        })
        .unwrap_or_default())
}

fn wait_for(url: &str, proxy: &mut Child) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if Connection::new(url).get("/api/0/info").is_ok() {
            return Ok(());
        }
        if let Ok(Some(status)) = proxy.try_wait() {
            return Err(format!("haproxy exited at its start ({status})"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err("haproxy did not answer within 30 s".to_string())
}

/// `days` of the reference workload into the first person's file,
/// through the proxy with their token.
fn import_history(proxy: &str, token: &str, days: u32) -> Result<(), String> {
    let spec = DatasetSpec {
        days,
        hostname: format!("{}-history", person_name(0)),
        ..DatasetSpec::default()
    };
    let started = Instant::now();
    for document in export_documents(&spec).map_err(|e| e.to_string())? {
        let reply = Connection::new(proxy)
            .with_header("Authorization", &format!("Bearer {token}"))
            .post_json("/api/0/import", &document)
            .map_err(|e| e.to_string())?;
        expect(reply, 200, "import the history")?;
    }
    eprintln!(
        "{} imported {days} days of history in {:.1} s",
        person_name(0),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The events of each imported history bucket of the person `token` is
/// theirs, through the proxy.
fn history_counts(proxy: &str, token: &str) -> Result<BTreeMap<String, u64>, String> {
    let mut hub = Connection::new(proxy).with_header("Authorization", &format!("Bearer {token}"));
    let reply = hub.get("/api/0/buckets/").map_err(|e| e.to_string())?;
    let buckets = expect(reply, 200, "the buckets")?;
    let mut counts = BTreeMap::new();
    for id in buckets.as_object().into_iter().flat_map(|all| all.keys()) {
        if !id.ends_with("-history") {
            continue;
        }
        let reply = hub
            .get(&format!("/api/0/buckets/{id}/events/count"))
            .map_err(|e| e.to_string())?;
        let count = expect(reply, 200, "a bucket's count")?;
        counts.insert(id.clone(), count.as_u64().unwrap_or_default());
    }
    Ok(counts)
}

/// The watchers: a heartbeat into each device's buckets every second.
fn watch(devices: &[Arc<Device>], writing: &AtomicBool) {
    let pulsetime = aw_models::Duration::from_secs_f64(2.0).expect("a duration");
    let mut tick: u64 = 0;
    let mut next = Instant::now();
    while writing.load(Ordering::SeqCst) {
        let now = Timestamp::now().to_rfc3339_offset();
        for (index, device) in devices.iter().enumerate() {
            for (watcher, _) in WATCHERS {
                let data = match watcher {
                    "aw-watcher-window" => json!({"app": "Editor",
                        "title": format!("file {}.rs", (tick + index as u64) / 7 % 5)}),
                    _ => {
                        json!({"status": if ((tick + index as u64) / 11).is_multiple_of(4) { "afk" } else { "not-afk" }})
                    }
                };
                let event: Event =
                    serde_json::from_value(json!({"timestamp": now, "duration": 0, "data": data}))
                        .expect("an event");
                let bucket = format!("{watcher}_{}", device.host);
                if let Err(error) = device.store.heartbeat(&bucket, event, pulsetime) {
                    eprintln!("heartbeat into {bucket}: {error}");
                }
            }
        }
        tick += 1;
        next += Duration::from_secs(1);
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
}

/// A lane of devices' forwarding jobs, each every `interval`.
fn forward(
    devices: &[Arc<Device>],
    interval: Duration,
    forwarding: &AtomicBool,
    writing: &AtomicBool,
) {
    let mut due: Vec<Instant> = (0..devices.len())
        .map(|index| Instant::now() + interval * index as u32 / devices.len().max(1) as u32)
        .collect();
    while forwarding.load(Ordering::SeqCst) {
        for (device, when) in devices.iter().zip(due.iter_mut()) {
            if Instant::now() < *when {
                continue;
            }
            let stopped = !writing.load(Ordering::SeqCst);
            device.passes.fetch_add(1, Ordering::SeqCst);
            match device.hub.run(&device.store) {
                Ok(_) if stopped => {
                    device.clean_after_stop.fetch_add(1, Ordering::SeqCst);
                }
                Ok(_) => {}
                Err(error) => {
                    let text = error.to_string();
                    let kind = ["503", "421", "401", "refused", "reset", "500"]
                        .into_iter()
                        .find(|kind| text.contains(kind))
                        .unwrap_or("other");
                    *device
                        .failures
                        .lock()
                        .unwrap()
                        .entry(kind.to_string())
                        .or_default() += 1;
                    if kind == "other" || kind == "500" || kind == "401" || kind == "421" {
                        eprintln!("{}: {text}", device.host);
                    }
                }
            }
            // As the job: the next pass an interval on, sooner after a
            // failure (here: a second).
            *when = Instant::now() + interval;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What the move did.
struct MoveFigures {
    said: String,
    bytes: u64,
    seconds: f64,
    frozen: f64,
    command: Duration,
}

/// `aw-server user move p00` from the first node to the third, through
/// the proxy's runtime API and map file.
fn move_first_person(
    args: &Args,
    nodes: &[ServerProcess],
    socket: &Path,
    map_file: &Path,
) -> Result<MoveFigures, String> {
    let person = person_name(0);
    let bytes = people_sizes(&nodes[0])?
        .get(&person)
        .copied()
        .unwrap_or_default();
    let started = Instant::now();
    let output = Command::new(&args.server)
        .args(["user", "move", &person, "--from"])
        .arg(nodes[0].url())
        .arg("--to")
        .arg(nodes[2].url())
        .arg("--haproxy")
        .arg(socket)
        .arg("--map-file")
        .arg(map_file)
        .args(["--to-backend", "node3"])
        .env("AW_SERVER_KEY", KEY)
        .env("XDG_CONFIG_HOME", map_file.with_file_name("mover-config"))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("user move: {e}"))?;
    let command = started.elapsed();
    let said = String::from_utf8_lossy(&output.stderr).into_owned();
    if !output.status.success() {
        return Err(format!("user move failed: {said}"));
    }
    // "... in X s; their requests were answered 503 for Y s."
    let number_before = |marker: &str| -> f64 {
        said.split(marker)
            .next()
            .and_then(|head| head.rsplit(' ').next())
            .and_then(|text| text.parse().ok())
            .unwrap_or(f64::NAN)
    };
    Ok(MoveFigures {
        bytes,
        seconds: number_before(" s; their"),
        frozen: said
            .split("answered 503 for ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|text| text.parse().ok())
            .unwrap_or(f64::NAN),
        command,
        said,
    })
}

fn people_sizes(node: &ServerProcess) -> Result<BTreeMap<String, u64>, String> {
    let reply = admin(node).get("/api/0/users").map_err(|e| e.to_string())?;
    Ok(expect(reply, 200, "list the people")?
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|user| {
                    Some((
                        user["name"].as_str()?.to_string(),
                        user["bytes"].as_u64().unwrap_or_default(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default())
}

/// The person's route: the running proxy's (`show map`) and the map
/// file's.
fn proxy_route(socket: &Path, map_file: &Path, person: &str) -> Result<Vec<String>, String> {
    let api = RuntimeApi::Unix(socket.to_path_buf());
    let map = map_file.display().to_string();
    let running = api.route(&map, person).map_err(|e| e.to_string())?;
    let file = read_route(map_file, person).map_err(|e| e.to_string())?;
    Ok(vec![running.unwrap_or_default(), file.unwrap_or_default()])
}

/// Each device's buckets on the hub (through the proxy, with its
/// person's token) against the device's own, event for event; each
/// person's hub holds exactly their devices' buckets (and the imported
/// history's). Answers the events compared.
fn compare(
    proxy: &str,
    tokens: &[String],
    devices: &[Arc<Device>],
    args: &Args,
) -> Result<usize, String> {
    let mut compared = 0;
    let mut differences = Vec::new();
    for (person, token) in tokens.iter().enumerate() {
        let mut hub =
            Connection::new(proxy).with_header("Authorization", &format!("Bearer {token}"));
        let reply = hub.get("/api/0/buckets/").map_err(|e| e.to_string())?;
        let buckets = expect(reply, 200, "the hub's buckets")?;
        let mut expected: Vec<String> = devices
            .iter()
            .filter(|device| device.person == person)
            .flat_map(|device| {
                WATCHERS
                    .iter()
                    .map(move |(watcher, _)| format!("{watcher}_{}", device.host))
            })
            .collect();
        let mut found: Vec<String> = buckets
            .as_object()
            .map(|all| all.keys().cloned().collect())
            .unwrap_or_default();
        if person == 0 && args.history_days > 0 {
            found.retain(|id| !id.ends_with(&format!("{}-history", person_name(0))));
        }
        expected.sort();
        found.sort();
        if expected != found {
            differences.push(format!(
                "{}: the hub has buckets {found:?}, the devices {expected:?}",
                person_name(person)
            ));
        }
        for device in devices.iter().filter(|device| device.person == person) {
            for (watcher, _) in WATCHERS {
                let bucket = format!("{watcher}_{}", device.host);
                let mine = device
                    .store
                    .events(&bucket, EventQuery::default())
                    .wait()
                    .map_err(|e| e.to_string())?;
                let reply = hub
                    .get(&format!("/api/0/buckets/{bucket}/events?limit=-1"))
                    .map_err(|e| e.to_string())?;
                let theirs: Vec<Event> =
                    serde_json::from_value(expect(reply, 200, "the hub's events")?)
                        .map_err(|e| e.to_string())?;
                let strip = |events: &[Event]| -> Vec<Value> {
                    events
                        .iter()
                        .map(|event| json!([event.timestamp, event.duration, event.data]))
                        .collect()
                };
                let (mine, theirs) = (strip(&mine), strip(&theirs));
                if mine != theirs {
                    differences.push(format!(
                        "{bucket}: the device has {} events, the hub {} (first difference at {:?})",
                        mine.len(),
                        theirs.len(),
                        mine.iter().zip(&theirs).position(|(a, b)| a != b)
                    ));
                }
                compared += mine.len();
            }
        }
    }
    if differences.is_empty() {
        Ok(compared)
    } else {
        Err(format!(
            "the hub differs from the devices: {}",
            differences.join("; ")
        ))
    }
}
