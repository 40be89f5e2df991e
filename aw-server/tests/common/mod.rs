//! Test helpers: an in-process server on a free port and a tiny HTTP/1.1
//! client over `TcpStream`, which sends paths byte for byte (client
//! libraries would normalise `/%61pi/` or `//api`, hiding exactly what the
//! security tests are about).
#![allow(dead_code)] // each test file uses a different subset

pub mod hosting;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::thread::JoinHandle;

use aw_datastore::Datastore;
use aw_server::{build_rocket, Found, ServerConfig};
use rocket::fairing::AdHoc;
use rocket::{Build, Rocket};
use serde_json::{json, Value};

/// A fresh store in a file of a temporary folder, so tests read through
/// the routes production uses (reader threads and pooled connections,
/// which an in-memory store does not have). Keep the folder while the
/// store is open.
pub fn datastore() -> (tempfile::TempDir, Datastore) {
    let folder = tempfile::tempdir().expect("a temporary folder");
    let store = Datastore::open(folder.path().join(DB_FILE)).expect("a file datastore");
    (folder, store)
}

/// The name of the test server's database file.
pub const DB_FILE: &str = "test.db";

/// A server running in a background thread; stopped on drop.
pub struct TestServer {
    pub port: u16,
    pub datastore: Datastore,
    /// Holds the database file.
    _folder: Option<tempfile::TempDir>,
    shutdown: rocket::Shutdown,
    thread: Option<JoinHandle<()>>,
}

impl TestServer {
    /// Default configuration (127.0.0.1, no key, no web UI).
    pub fn start() -> TestServer {
        TestServer::start_with(|_| {})
    }

    /// With changes to the configuration.
    pub fn start_with(configure: impl FnOnce(&mut ServerConfig)) -> TestServer {
        TestServer::start_full(configure, |rocket| rocket)
    }

    /// With changes to the configuration and to the built application.
    pub fn start_full(
        configure: impl FnOnce(&mut ServerConfig),
        extend: impl FnOnce(Rocket<Build>) -> Rocket<Build>,
    ) -> TestServer {
        let (folder, datastore) = datastore();
        TestServer::start_on(Some(folder), datastore, configure, extend)
    }

    /// Over a given store; `folder`, if any, holds its file while the
    /// server runs, and the configured `db_path` is taken in it.
    pub fn start_on(
        folder: Option<tempfile::TempDir>,
        datastore: Datastore,
        configure: impl FnOnce(&mut ServerConfig),
        extend: impl FnOnce(Rocket<Build>) -> Rocket<Build>,
    ) -> TestServer {
        TestServer::start_found(folder, datastore, Found::default(), configure, extend)
    }

    /// Over a given store, with what a start would have found (an
    /// embedded aw-webui, a salvage's report).
    pub fn start_found(
        folder: Option<tempfile::TempDir>,
        datastore: Datastore,
        found: Found,
        configure: impl FnOnce(&mut ServerConfig),
        extend: impl FnOnce(Rocket<Build>) -> Rocket<Build>,
    ) -> TestServer {
        let mut config = ServerConfig {
            port: 0,
            hostname: "testhost".to_string(),
            device_id: "test-device-id".to_string(),
            db_path: DB_FILE.into(),
            // The suite turns pre-warming off: a test that wants it says so.
            cache: Some(aw_cache::CacheConfig {
                prewarm: false,
                ..aw_cache::CacheConfig::default()
            }),
            ..ServerConfig::default()
        };
        configure(&mut config);
        if let Some(folder) = &folder {
            config.db_path = folder.path().join(&config.db_path);
        }
        let rocket = extend(build_rocket(datastore.clone(), config, found).expect("valid config"));
        let (sender, receiver) = mpsc::channel();
        let thread = std::thread::spawn(move || {
            let rocket = rocket.attach(AdHoc::on_liftoff("test port", move |rocket| {
                Box::pin(async move {
                    let _ = sender.send((rocket.config().port, rocket.shutdown()));
                })
            }));
            if let Err(error) = rocket::execute(rocket.launch()) {
                eprintln!("test server failed: {error}");
            }
        });
        let (port, shutdown) = receiver.recv().expect("server started");
        TestServer {
            port,
            datastore,
            _folder: folder,
            shutdown,
            thread: Some(thread),
        }
    }

    /// A client for this server.
    pub fn client(&self) -> Client {
        Client {
            port: self.port,
            headers: Vec::new(),
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        // Not joined: when a connection task drops its last handle a moment
        // after hyper finished, Rocket waits out the whole grace period
        // (10 s) before `launch` returns. Graceful shutdown itself is tested
        // on the binary (tests/shutdown.rs).
        self.shutdown.clone().notify();
        drop(self.thread.take());
        // The server's handles to the store may outlive this (a connection
        // still draining); closing it here lets a test reopen the file,
        // or run a command on it, right away.
        let _ = self.datastore.close();
    }
}

/// A parsed HTTP response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    /// The first header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON; panics with the body if it is not.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|error| panic!("not JSON ({error}): {:?}", self.text()))
    }

    /// Asserts an error response: `status` and a `{"message": "..."}` body.
    pub fn assert_error(&self, status: u16) -> String {
        assert_eq!(self.status, status, "body: {}", self.text());
        assert_eq!(
            self.header("Content-Type")
                .map(|c| c.starts_with("application/json")),
            Some(true),
            "{self:?}"
        );
        let body = self.json();
        body["message"]
            .as_str()
            .unwrap_or_else(|| panic!("no message in {body}"))
            .to_string()
    }
}

/// A minimal HTTP/1.1 client: one connection per request.
#[derive(Debug, Clone)]
pub struct Client {
    pub port: u16,
    /// Sent with every request.
    pub headers: Vec<(String, String)>,
}

impl Client {
    /// The same client sending `name: value` on every request.
    pub fn with_header(mut self, name: &str, value: &str) -> Client {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    pub fn get(&self, path: &str) -> Reply {
        self.request("GET", path, &[], None)
    }

    /// GET of a list: asserts a 200 and answers its items.
    pub fn list(&self, path: &str) -> Vec<Value> {
        let reply = self.get(path);
        assert_eq!(reply.status, 200, "GET {path}: {}", reply.text());
        match reply.json() {
            Value::Array(items) => items,
            other => panic!("GET {path} is no list: {other}"),
        }
    }

    pub fn delete(&self, path: &str) -> Reply {
        self.request("DELETE", path, &[], None)
    }

    pub fn post_json(&self, path: &str, body: &Value) -> Reply {
        self.post(path, body.to_string().as_bytes())
    }

    pub fn post(&self, path: &str, body: &[u8]) -> Reply {
        self.request(
            "POST",
            path,
            &[("Content-Type", "application/json")],
            Some(body),
        )
    }

    /// A request with extra headers; a `Host` among them replaces the
    /// default one.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Reply {
        let mut head = format!("{method} {path} HTTP/1.1\r\n");
        let all: Vec<(String, String)> = self
            .headers
            .iter()
            .cloned()
            .chain(headers.iter().map(|(k, v)| (k.to_string(), v.to_string())))
            .collect();
        if !all.iter().any(|(key, _)| key.eq_ignore_ascii_case("host")) {
            head.push_str(&format!("Host: 127.0.0.1:{}\r\n", self.port));
        }
        for (key, value) in &all {
            head.push_str(&format!("{key}: {value}\r\n"));
        }
        head.push_str("Connection: close\r\n");
        let body = body.unwrap_or_default();
        if !body.is_empty() || method == "POST" {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body);
        self.raw(&bytes)
    }

    /// Sends `bytes` as they are and parses the answer.
    pub fn raw(&self, bytes: &[u8]) -> Reply {
        self.try_raw(bytes).expect("HTTP exchange")
    }

    /// Like `raw`, but a refused, reset or unanswered connection is an
    /// error instead of a panic (for servers being stopped).
    pub fn try_raw(&self, bytes: &[u8]) -> std::io::Result<Reply> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port))?;
        stream.write_all(bytes)?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer)?;
        if !answer.windows(4).any(|window| window == b"\r\n\r\n") {
            return Err(std::io::Error::other("no complete response"));
        }
        Ok(parse_reply(&answer))
    }
}

fn parse_reply(answer: &[u8]) -> Reply {
    let split = answer
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no header end in {:?}", String::from_utf8_lossy(answer)));
    let head = String::from_utf8_lossy(&answer[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(key, value)| (key.trim().to_string(), value.trim().to_string()))
        .collect();
    let rest = &answer[split + 4..];
    let chunked = headers.iter().any(|(key, value)| {
        key.eq_ignore_ascii_case("transfer-encoding") && value.eq_ignore_ascii_case("chunked")
    });
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_vec()
    };
    Reply {
        status,
        headers,
        body,
    }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let line_end = data
            .windows(2)
            .position(|window| window == b"\r\n")
            .expect("chunk size line");
        let size_text = String::from_utf8_lossy(&data[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .expect("chunk size");
        data = &data[line_end + 2..];
        if size == 0 {
            return body;
        }
        body.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}

/// A bucket creation body.
pub fn bucket_body(kind: &str) -> Value {
    serde_json::json!({"type": kind, "client": "test-client", "hostname": "host"})
}

/// Creates bucket `id` and asserts 200.
pub fn create_bucket(client: &Client, id: &str) {
    let reply = client.post_json(&format!("/api/0/buckets/{id}"), &bucket_body("test"));
    assert_eq!(reply.status, 200, "{}", reply.text());
}

/// An event at `timestamp` lasting `duration` seconds with `data`.
pub fn event(timestamp: &str, duration: f64, data: Value) -> Value {
    serde_json::json!({"timestamp": timestamp, "duration": duration, "data": data})
}

/// Percent-encodes a path segment for the tests' own requests.
pub fn encode(segment: &str) -> String {
    segment
        .bytes()
        .map(|byte| {
            if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
                (byte as char).to_string()
            } else {
                format!("%{byte:02X}")
            }
        })
        .collect()
}

/// A TCP port on the loopback interface that nothing listens on now: for
/// a client that must find no server there. (A server a test starts gets
/// its port from the system: `spawn_listening`.)
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Spawns the server `command` (stderr piped) and returns once it logged
/// that it listens, with the port it announced. Give it `--port 0`: the
/// system picks a free port as the server binds it, so two tests never
/// race for one. A thread keeps draining stderr, so the server never
/// blocks on a full pipe.
pub fn spawn_listening(command: &mut std::process::Command) -> (std::process::Child, u16) {
    use std::io::{BufRead, BufReader};

    let mut child = command
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn aw-server");
    let stderr = child.stderr.take().unwrap();
    let (ready, listening) = mpsc::channel();
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            // The harness shows a failing test's output: the server's log
            // then says why it stopped.
            eprintln!("server: {line}");
            if !sent {
                if let Some(port) = announced_port(&line) {
                    let _ = ready.send(port);
                    sent = true;
                }
            }
        }
    });
    let port = listening
        .recv()
        .expect("the server exited before listening");
    (child, port)
}

/// The port of the server's `aw-server listening on http://ADDRESS:PORT`
/// (or `https://`) line.
pub fn announced_port(line: &str) -> Option<u16> {
    let (_, address) = line.split_once("aw-server listening on ")?;
    let address = address
        .strip_prefix("http://")
        .or_else(|| address.strip_prefix("https://"))?;
    address.trim().rsplit_once(':')?.1.parse().ok()
}

/// The built binary with private XDG folders (and `HOME`) under `root`,
/// so nothing of the user's is read or written and a first start finds
/// only what the test put there.
pub fn binary(root: &std::path::Path) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_aw-server"));
    command
        .env("XDG_CONFIG_HOME", root.join("config"))
        .env("XDG_DATA_HOME", root.join("data"))
        .env("XDG_CACHE_HOME", root.join("cache"))
        .env("HOME", root)
        .env_remove("AW_SYNC_DIR")
        .env_remove("AW_DB_PASSWORD")
        .env_remove("RUST_LOG")
        .stdin(std::process::Stdio::null());
    command
}

/// A server process asked to stop (SIGTERM) and waited for when dropped,
/// so that a test failing midway leaves nothing running.
pub struct Stopped(pub std::process::Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = signal(&self.0, Signal::TERM);
        let _ = self.0.wait();
    }
}

pub use rustix::process::Signal;

/// Sends `signal` to a spawned process.
pub fn signal(child: &std::process::Child, signal: Signal) -> rustix::io::Result<()> {
    rustix::process::kill_process(rustix::process::Pid::from_child(child), signal)
}

/// Runs a command to its end.
pub fn run(root: &std::path::Path, args: &[&str]) -> std::process::Output {
    binary(root).args(args).output().expect("run aw-server")
}

/// Runs a command that must succeed; returns its stderr.
pub fn ok(root: &std::path::Path, args: &[&str]) -> String {
    let output = run(root, args);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
    stderr
}

/// Runs a command that must fail with `code`; returns its stderr.
pub fn fails(root: &std::path::Path, args: &[&str], code: i32) -> String {
    let output = run(root, args);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(code), "{args:?}: {stderr}");
    stderr
}

/// The names in a folder, sorted; none when it does not exist.
pub fn names_in(folder: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .map(|entries| {
            entries
                .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The export document of a database file, as the `export` command writes
/// it, taken from a copy (exporting opens the file, which must stay as it
/// is: a snapshot, a file about to be restored).
pub fn export_copy(root: &std::path::Path, db: &std::path::Path) -> Value {
    let copy = root.join("export-copy.db");
    for suffix in ["", "-wal", "-shm", ".lock"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", copy.display()));
    }
    std::fs::copy(db, &copy).unwrap();
    let output = binary(root)
        .args(["export", "--dbpath"])
        .arg(&copy)
        .output()
        .expect("run aw-server export");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("an export document")
}

/// Writes the testing-mode config file that [`binary`] finds under `root`
/// (`config-testing.toml`), with `text`.
pub fn write_testing_config(root: &std::path::Path, text: &str) {
    let folder = root.join("config/activitywatch/aw-server-rust");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("config-testing.toml"), text).unwrap();
}

/// A testing config whose `[backup] dir` is `folder`.
pub fn backup_config(folder: &std::path::Path) -> String {
    format!("[backup]\ndir = {:?}\n", folder.to_str().unwrap())
}

/// The binary serving the database file `db` in testing mode on a port of
/// its own, with private folders under `root` ([`binary`]); stopped when
/// the first value is dropped.
pub fn serve_file(root: &std::path::Path, db: &std::path::Path) -> (Stopped, Client) {
    let (child, port) = spawn_listening(
        binary(root)
            .args(["--testing", "--port", "0", "--dbpath"])
            .arg(db)
            .stdout(std::process::Stdio::null()),
    );
    (
        Stopped(child),
        Client {
            port,
            headers: Vec::new(),
        },
    )
}

/// The summaries' test data (`summary.rs`, `report.rs`). Two hosts: `laptop` (window, AFK, a Firefox watcher reporting no host
/// name) and `desktop` (window only).
pub fn seed_two_hosts(client: &Client) {
    let buckets = [
        ("window_laptop", "currentwindow", "laptop"),
        ("afk_laptop", "afkstatus", "laptop"),
        ("aw-watcher-web-firefox", "web.tab.current", "unknown"),
        ("window_desktop", "currentwindow", "desktop"),
    ];
    for (id, kind, host) in buckets {
        let body = json!({"type": kind, "client": "test", "hostname": host});
        let reply = client.post_json(&format!("/api/0/buckets/{id}"), &body);
        assert_eq!(reply.status, 200, "{}", reply.text());
    }
    let insert = |id: &str, events: Value| {
        let reply = client.post_json(&format!("/api/0/buckets/{id}/events"), &events);
        assert_eq!(reply.status, 200, "{}", reply.text());
    };
    // Berlin, Sunday 2026-03-29: clocks go from 02:00 to 03:00. Days start
    // at 04:00 local (the default `startOfDay`).
    insert(
        "window_laptop",
        json!([
            // 09:00-10:30 local (CEST, +02:00)
            event(
                "2026-03-29T07:00:00Z",
                5400.0,
                json!({"app": "Code", "title": "main.rs - Code"})
            ),
            // 10:30-11:00, Firefox: 20 minutes of it on GitHub in the browser
            event(
                "2026-03-29T08:30:00Z",
                1800.0,
                json!({"app": "Firefox", "title": "GitHub - Mozilla Firefox"})
            ),
            // 11:00-11:30 but AFK from 11:10: 10 minutes count
            event(
                "2026-03-29T09:00:00Z",
                1800.0,
                json!({"app": "Terminal", "title": "bash"})
            ),
            // 03:00-03:30 local on the next calendar day: still Sunday's
            event(
                "2026-03-30T01:00:00Z",
                1800.0,
                json!({"app": "Code", "title": "late.rs - Code"})
            ),
            // No title: counted in the total and the category, not in the top lists
            event("2026-03-29T12:00:00Z", 60.0, json!({"app": "Code"})),
        ]),
    );
    insert(
        "afk_laptop",
        json!([
            event("2026-03-29T07:00:00Z", 7800.0, json!({"status": "not-afk"})),
            event("2026-03-29T09:10:00Z", 600.0, json!({"status": "afk"})),
            event("2026-03-29T12:00:00Z", 60.0, json!({"status": "not-afk"})),
            event("2026-03-30T01:00:00Z", 1800.0, json!({"status": "not-afk"})),
        ]),
    );
    insert(
        "aw-watcher-web-firefox",
        json!([
            event(
                "2026-03-29T08:30:00Z",
                1200.0,
                json!({"url": "https://github.com/ActivityWatch", "title": "ActivityWatch"})
            ),
            // Outside any Firefox window: not browser time
            event(
                "2026-03-29T12:30:00Z",
                600.0,
                json!({"url": "https://example.org/", "title": "Example"})
            ),
        ]),
    );
    insert(
        "window_desktop",
        json!([
            event(
                "2026-03-29T15:00:00Z",
                3600.0,
                json!({"app": "Blender", "title": "scene.blend"})
            ),
            // Firefox open here too while the laptop's browser was on GitHub.
            event(
                "2026-03-29T08:30:00Z",
                1800.0,
                json!({"app": "Firefox", "title": "Firefox"})
            ),
        ]),
    );
}
