//! The `aw-server` binary: files in the reference's folders, flags, a
//! graceful SIGTERM/SIGINT that loses no acknowledged write, and bucket
//! counts and metadata that stay exact across restarts and kills.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;

use common::{event, spawn_listening, Client, Signal};
use serde_json::{json, Value};
use tempfile::TempDir;

/// A running binary with private XDG folders.
struct Process {
    child: Child,
    client: Client,
}

fn xdg(root: &Path, name: &str) -> PathBuf {
    root.join(name)
}

/// Starts the binary and returns once it logged that it listens.
fn start(root: &Path, args: &[&str]) -> Process {
    let (child, port) = spawn_listening(
        Command::new(env!("CARGO_BIN_EXE_aw-server"))
            .args(["--testing", "--port", "0"])
            .args(args)
            .env("XDG_CONFIG_HOME", xdg(root, "config"))
            .env("XDG_DATA_HOME", xdg(root, "data"))
            .env("XDG_CACHE_HOME", xdg(root, "cache"))
            .env("HOME", root)
            .env_remove("RUST_LOG")
            .env_remove("LOG_LEVEL")
            .stdin(Stdio::null())
            .stdout(Stdio::null()),
    );
    Process {
        child,
        client: Client {
            port,
            headers: Vec::new(),
        },
    }
}

fn stop(mut process: Process, signal: Signal) {
    common::signal(&process.child, signal).unwrap();
    let status = process.child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "exit status after {signal:?}");
}

#[test]
fn files_live_where_aw_server_rust_keeps_them() {
    let root = TempDir::new().unwrap();
    let process = start(root.path(), &[]);
    let info = process.client.get("/api/0/info").json();
    assert_eq!(info["testing"], true);
    let data = root.path().join("data/activitywatch/aw-server-rust");
    let device_id = fs::read_to_string(data.join("device_id")).unwrap();
    assert_eq!(info["device_id"], device_id.trim());
    assert!(data.join("sqlite-testing.db").exists());
    let config = root
        .path()
        .join("config/activitywatch/aw-server-rust/config-testing.toml");
    let text = fs::read_to_string(&config).unwrap();
    assert!(text.contains("#port = 5666"), "{text}");
    let logs: Vec<_> = fs::read_dir(root.path().join("cache/activitywatch/log/aw-server-rust"))
        .unwrap()
        .collect();
    assert_eq!(logs.len(), 1);
    stop(process, Signal::INT);

    // The device id is kept across starts; --device-id overrides it.
    let process = start(root.path(), &["--device-id", "override"]);
    assert_eq!(
        process.client.get("/api/0/info").json()["device_id"],
        "override"
    );
    stop(process, Signal::TERM);
    let process = start(root.path(), &[]);
    assert_eq!(
        process.client.get("/api/0/info").json()["device_id"],
        device_id.trim()
    );
    stop(process, Signal::TERM);
}

#[test]
fn config_file_and_flags_are_honoured() {
    let root = TempDir::new().unwrap();
    let config = root.path().join("my-config.toml");
    fs::write(
        &config,
        "cors = [\"http://dashboard.example\"]\n[auth]\napi_key = \"k\"\n",
    )
    .unwrap();
    let web = root.path().join("web");
    fs::create_dir_all(&web).unwrap();
    fs::write(web.join("index.html"), "webui").unwrap();
    let page = root.path().join("page");
    fs::create_dir_all(&page).unwrap();
    fs::write(page.join("index.html"), "page").unwrap();
    let db = root.path().join("sub/dir/custom.db");
    let process = start(
        root.path(),
        &[
            "-c",
            config.to_str().unwrap(),
            "--dbpath",
            db.to_str().unwrap(),
            "--webpath",
            web.to_str().unwrap(),
            "--custom-static",
            &format!("p={}", page.display()),
            "--no-legacy-import",
        ],
    );
    let client = &process.client;
    assert_eq!(client.get("/").text(), "webui");
    assert_eq!(client.get("/pages/p/").text(), "page");
    assert_eq!(client.get("/api/0/buckets/").status, 401);
    let authorised = client.clone().with_header("Authorization", "Bearer k");
    assert_eq!(authorised.get("/api/0/buckets/").status, 200);
    let reply = client.request(
        "GET",
        "/api/0/info",
        &[("Origin", "http://dashboard.example")],
        None,
    );
    assert_eq!(
        reply.header("Access-Control-Allow-Origin"),
        Some("http://dashboard.example")
    );
    assert!(db.exists());
    stop(process, Signal::TERM);
}

#[test]
fn sigterm_under_load_loses_no_acknowledged_write() {
    let root = TempDir::new().unwrap();
    let db = root.path().join("load.db");
    let process = start(root.path(), &["--dbpath", db.to_str().unwrap()]);
    let client = process.client.clone();
    let reply = client.post_json(
        "/api/0/buckets/load",
        &json!({"type": "t", "client": "c", "hostname": "h"}),
    );
    assert_eq!(reply.status, 200);

    let (acks, acknowledged) = mpsc::channel::<(usize, usize)>();
    let workers: Vec<_> = (0..4)
        .map(|worker| {
            let client = client.clone();
            let acks = acks.clone();
            std::thread::spawn(move || {
                // Bounded: the server is stopped long before this.
                for index in 0..100_000 {
                    let body = json!([event(
                        "2021-06-01T10:00:00Z",
                        1.0,
                        json!({"worker": worker, "index": index})
                    )])
                    .to_string();
                    let request = format!(
                        "POST /api/0/buckets/load/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\
                         Content-Type: application/json\r\nContent-Length: {}\r\n\
                         Connection: close\r\n\r\n{body}",
                        body.len()
                    );
                    match client.try_raw(request.as_bytes()) {
                        Ok(reply) if reply.status == 200 => {
                            if acks.send((worker, index)).is_err() {
                                return;
                            }
                        }
                        // Refused, reset or 503 once the server stops.
                        _ => return,
                    }
                }
            })
        })
        .collect();
    drop(acks);

    let mut acked = Vec::new();
    while acked.len() < 300 {
        acked.push(acknowledged.recv().expect("workers stopped early"));
    }
    stop(process, Signal::TERM);
    acked.extend(acknowledged.iter());
    for worker in workers {
        worker.join().unwrap();
    }

    let process = start(root.path(), &["--dbpath", db.to_str().unwrap()]);
    let events = process
        .client
        .get("/api/0/buckets/load/events?limit=-1")
        .json();
    let stored: std::collections::HashSet<(u64, u64)> = events
        .as_array()
        .unwrap()
        .iter()
        .map(|event: &Value| {
            (
                event["data"]["worker"].as_u64().unwrap(),
                event["data"]["index"].as_u64().unwrap(),
            )
        })
        .collect();
    for (worker, index) in &acked {
        assert!(
            stored.contains(&(*worker as u64, *index as u64)),
            "acknowledged event {worker}/{index} was lost ({} acknowledged, {} stored)",
            acked.len(),
            stored.len()
        );
    }
    stop(process, Signal::TERM);
}

/// Count and metadata of a bucket against its events, over HTTP.
fn assert_facts_match_events(client: &Client, bucket: &str) {
    let events = client
        .get(&format!("/api/0/buckets/{bucket}/events?limit=-1"))
        .json();
    let events = events.as_array().unwrap();
    let count = client
        .get(&format!("/api/0/buckets/{bucket}/events/count"))
        .json();
    assert_eq!(count.as_u64(), Some(events.len() as u64), "count");
    let parse = |text: &Value| {
        chrono::DateTime::parse_from_rfc3339(text.as_str().unwrap())
            .unwrap()
            .timestamp_nanos_opt()
            .unwrap()
    };
    let start = events.iter().map(|e| parse(&e["timestamp"])).min();
    let end = events
        .iter()
        .map(|e| parse(&e["timestamp"]) + (e["duration"].as_f64().unwrap() * 1e9) as i64)
        .max();
    let metadata = client.get(&format!("/api/0/buckets/{bucket}")).json()["metadata"].clone();
    let stored = |key: &str| Some(&metadata[key]).filter(|v| !v.is_null()).map(parse);
    assert_eq!((stored("start"), stored("end")), (start, end), "{metadata}");
}

#[test]
fn count_and_metadata_stay_exact_across_restarts_and_kills() {
    let root = TempDir::new().unwrap();
    let db = root.path().join("facts.db");
    let args = ["--dbpath", db.to_str().unwrap()];
    let process = start(root.path(), &args);
    let client = process.client.clone();
    common::create_bucket(&client, "facts");
    let events = json!([
        event("2021-06-01T10:00:00Z", 60.0, json!({"a": 1})),
        event("2021-06-01T09:00:00Z", 5.0, json!({"a": 2})),
        event("2021-06-01T11:00:00Z", 1.0, json!({"a": 3})),
    ]);
    assert_eq!(
        client
            .post_json("/api/0/buckets/facts/events", &events)
            .status,
        200
    );
    for second in 0..3 {
        let beat = event(
            &format!("2021-06-01T12:00:0{second}Z"),
            0.0,
            json!({"h": 1}),
        );
        let reply = client.post_json("/api/0/buckets/facts/heartbeat?pulsetime=5", &beat);
        assert_eq!(reply.status, 200);
    }
    assert_facts_match_events(&client, "facts");
    stop(process, Signal::TERM);
    // A clean stop left the fingerprint that lets the next start trust
    // the stored facts instead of scanning the history (aw-datastore).
    let lock = root.path().join("facts.db.lock");
    assert!(!fs::read_to_string(&lock).unwrap().is_empty());

    // A clean restart, then writes that move both edges, then a kill.
    let process = start(root.path(), &args);
    let client = process.client.clone();
    assert_facts_match_events(&client, "facts");
    let listed = client.get("/api/0/buckets/facts/events?limit=-1").json();
    let ids: Vec<u64> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_u64().unwrap())
        .collect();
    for id in [ids[0], ids[ids.len() - 1]] {
        let reply = client.delete(&format!("/api/0/buckets/facts/events/{id}"));
        assert_eq!(reply.status, 200);
    }
    assert_facts_match_events(&client, "facts");
    let mut process = process;
    process.child.kill().unwrap();
    process.child.wait().unwrap();
    assert!(fs::read_to_string(&lock).unwrap().is_empty());

    // After the kill the facts stored by the first stop are stale.
    let process = start(root.path(), &args);
    assert_facts_match_events(&process.client, "facts");
    stop(process, Signal::TERM);
}

/// The allocator purge delay a server started with `delay` in its
/// environment logs: what mimalloc reports through the option the server
/// sets, so it checks the option's index against the variable's name.
fn purge_delay_of(root: &Path, delay: Option<&str>) -> Vec<String> {
    let cache = xdg(root, "cache");
    let _ = fs::remove_dir_all(&cache);
    let mut command = Command::new(env!("CARGO_BIN_EXE_aw-server"));
    command
        .args(["--testing", "--port", "0"])
        .env("XDG_CONFIG_HOME", xdg(root, "config"))
        .env("XDG_DATA_HOME", xdg(root, "data"))
        .env("XDG_CACHE_HOME", &cache)
        .env("HOME", root)
        .env_remove("MIMALLOC_PURGE_DELAY")
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    if let Some(delay) = delay {
        command.env("MIMALLOC_PURGE_DELAY", delay);
    }
    let (child, port) = spawn_listening(&mut command);
    let process = Process {
        child,
        client: Client {
            port,
            headers: Vec::new(),
        },
    };
    assert_eq!(process.client.get("/api/0/info").json()["testing"], true);
    stop(process, Signal::TERM);
    let mut logged = Vec::new();
    let mut folders = vec![cache];
    while let Some(folder) = folders.pop() {
        for entry in fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else {
                let text = fs::read_to_string(&path).unwrap_or_default();
                logged.extend(text.lines().filter_map(|line| {
                    let (_, rest) = line.split_once("Allocator purge delay: ")?;
                    Some(rest.trim_end_matches(" ms").to_string())
                }));
            }
        }
    }
    logged
}

#[test]
fn the_server_runs_with_a_short_purge_delay_unless_told_otherwise() {
    let root = TempDir::new().unwrap();
    assert_eq!(purge_delay_of(root.path(), None), ["100"]);
    assert_eq!(purge_delay_of(root.path(), Some("1000")), ["1000"]);
}

/// Under systemd (`Type=notify`, `aw-server.service`) the server says
/// READY=1 on `$NOTIFY_SOCKET` once it accepts connections, and STOPPING=1
/// on SIGTERM. The socket here is a plain Unix datagram socket standing in
/// for systemd's, which is all the protocol is.
#[cfg(unix)]
#[test]
fn systemd_hears_ready_once_the_server_answers() {
    use std::os::unix::net::UnixDatagram;
    use std::time::Duration;

    let root = TempDir::new().unwrap();
    let socket_path = root.path().join("notify.sock");
    let socket = UnixDatagram::bind(&socket_path).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_aw-server"))
        .args(["--testing", "--port", "0"])
        .env("XDG_CONFIG_HOME", xdg(root.path(), "config"))
        .env("XDG_DATA_HOME", xdg(root.path(), "data"))
        .env("XDG_CACHE_HOME", xdg(root.path(), "cache"))
        .env("HOME", root.path())
        .env("NOTIFY_SOCKET", &socket_path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The port the system gave it, from its log, read on the side so the
    // readiness message is what the test waits for.
    let stderr = child.stderr.take().unwrap();
    let (port_sender, announced) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if let Some(port) = common::announced_port(&line) {
                let _ = port_sender.send(port);
            }
        }
    });
    let mut message = [0u8; 512];
    let received = |message: &mut [u8; 512]| {
        let length = socket.recv(message).expect("no notification within 60 s");
        String::from_utf8_lossy(&message[..length]).into_owned()
    };
    let ready = received(&mut message);
    assert!(ready.lines().any(|line| line == "READY=1"), "{ready:?}");
    // Ready means answering: no retry needed.
    let port = announced.recv_timeout(Duration::from_secs(60)).unwrap();
    let client = Client {
        port,
        headers: Vec::new(),
    };
    assert_eq!(client.get("/api/0/info").status, 200);

    let process = Process { child, client };
    common::signal(&process.child, Signal::TERM).unwrap();
    let stopping = received(&mut message);
    assert!(
        stopping.lines().any(|line| line == "STOPPING=1"),
        "{stopping:?}"
    );
    child = process.child;
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

/// The lines of every log file the binary wrote under `root`.
fn log_lines(root: &Path) -> Vec<String> {
    let folder = xdg(root, "cache").join("activitywatch/log/aw-server-rust");
    let mut lines = Vec::new();
    for entry in fs::read_dir(&folder).unwrap() {
        let text = fs::read_to_string(entry.unwrap().path()).unwrap();
        lines.extend(text.lines().map(str::to_string));
    }
    lines
}

#[test]
fn a_first_start_a_page_load_and_heartbeats_log_no_warning() {
    let root = TempDir::new().unwrap();
    let process = start(root.path(), &[]);
    let client = process.client.clone();
    // The dashboard's page and the files it loads.
    let page = client.get("/");
    assert_eq!(page.status, 200);
    for path in ["/css/app.css", "/js/dashboard.js", "/static/icon.svg"] {
        let reply = client.get(path);
        assert_eq!(reply.status, 200, "{path}");
        assert_eq!(reply.header("X-Content-Type-Options"), Some("nosniff"));
    }
    let made = client.post_json(
        "/api/0/buckets/aw-watcher-window_h",
        &json!({"type": "currentwindow", "client": "test", "hostname": "h"}),
    );
    assert_eq!(made.status, 200);
    for second in 0..20 {
        let reply = client.post_json(
            "/api/0/buckets/aw-watcher-window_h/heartbeat?pulsetime=2",
            &json!({"timestamp": format!("2026-12-01T09:00:{second:02}Z"), "duration": 0,
                    "data": {"app": "editor", "title": "a"}}),
        );
        assert_eq!(reply.status, 200);
    }
    stop(process, Signal::TERM);
    let lines = log_lines(root.path());
    let warnings: Vec<&String> = lines
        .iter()
        .filter(|line| line.contains(" WARN ") || line.contains(" ERROR "))
        .collect();
    assert!(warnings.is_empty(), "{warnings:#?}");
    let created = lines
        .iter()
        .filter(|line| line.contains("Creating the database's tables"))
        .count();
    assert_eq!(created, 1, "{lines:#?}");
    assert!(
        !lines.iter().any(|line| line.contains("Migrating")),
        "{lines:#?}"
    );
}

#[test]
fn a_webpath_without_a_built_ui_stops_the_start_with_a_message() {
    let root = TempDir::new().unwrap();
    let empty = root.path().join("empty");
    fs::create_dir_all(&empty).unwrap();
    for (folder, why) in [
        (root.path().join("nonexistent"), "there is no such folder"),
        (empty, "the folder has no index.html"),
    ] {
        let output = common::binary(root.path())
            .args(["--testing", "--port", "0", "--webpath"])
            .arg(&folder)
            .stdout(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains(why)
                && stderr.contains("--webpath")
                && stderr.contains("built aw-webui"),
            "{stderr}"
        );
        assert!(!stderr.contains("listening"), "{stderr}");
    }
}
