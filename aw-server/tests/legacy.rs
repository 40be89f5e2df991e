//! Importing the Python aw-server's database (`docs/API.md` §10): on the
//! first start with a new database, and with `import --legacy`.
//!
//! `fixtures/legacy-peewee.v2.db` was written by aw-core's own peewee
//! storage (`fixtures/make_legacy_db.py`); `legacy-peewee.v2.json` says
//! what it holds, read from its rows. Larger files for the kill tests are
//! written here in peewee's schema. Every process gets private XDG folders,
//! so a first start never reads a real user's files.

mod common;

use std::ffi::OsStr;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use aw_models::Timestamp;
use common::{binary, Client};
use serde_json::Value;
use tempfile::TempDir;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/legacy-peewee.v2.db"
);
const EXPECTED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/legacy-peewee.v2.json"
);

/// Where a `--testing` server looks for the Python server's database.
fn legacy_path(root: &Path) -> PathBuf {
    root.join("data/activitywatch/aw-server/peewee-sqlite-testing.v2.db")
}

/// Where a `--testing` server keeps its own database.
fn db_path(root: &Path) -> PathBuf {
    root.join("data/activitywatch/aw-server-rust/sqlite-testing.db")
}

fn place_legacy(root: &Path, from: &Path) {
    let to = legacy_path(root);
    fs::create_dir_all(to.parent().unwrap()).unwrap();
    fs::copy(from, to).unwrap();
}

fn command(root: &Path, args: &[&str]) -> Command {
    let mut command = binary(root);
    command
        .args(["--testing", "--port", "0"])
        .args(args)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

/// A started server and its log lines as they come.
struct Server {
    child: Child,
    client: Client,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Server {
    fn spawn(root: &Path, args: &[&str]) -> Server {
        let mut child = command(root, args).spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                eprintln!("server: {line}");
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Server {
            child,
            // Known once it listens (`Server::start`).
            client: Client {
                port: 0,
                headers: Vec::new(),
            },
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits (60 s at most) for a log line containing `text`.
    fn wait_for(&mut self, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(text) {
                        return line;
                    }
                }
                Err(_) => break,
            }
        }
        panic!("no log line with {text:?}; seen: {:#?}", self.seen);
    }

    fn start(root: &Path, args: &[&str]) -> Server {
        let mut server = Server::spawn(root, args);
        let line = server.wait_for("aw-server listening on");
        server.client.port = common::announced_port(&line).expect("the port it listens on");
        server
    }

    fn log_has(&self, text: &str) -> bool {
        self.seen.iter().any(|line| line.contains(text))
    }

    fn stop(mut self) {
        common::signal(&self.child, common::Signal::TERM).unwrap();
        assert_eq!(self.child.wait().unwrap().code(), Some(0));
        // Drop then finds the process gone.
    }
}

/// A test that fails midway must not leave its server running.
impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn micros(timestamp: &str) -> i64 {
    Timestamp::parse(timestamp).unwrap().nanos() / 1000
}

/// Every bucket of the fixture is on the server exactly: fields, count,
/// summed duration, first and last start, and sample events (data with
/// non-ASCII text, times to the microsecond).
fn assert_holds_the_fixture(client: &Client) {
    let expected: Value = serde_json::from_str(&fs::read_to_string(EXPECTED).unwrap()).unwrap();
    let buckets = client.get("/api/0/buckets/").json();
    let expected = expected.as_object().unwrap();
    assert_eq!(
        buckets.as_object().unwrap().len(),
        expected.len(),
        "{buckets}"
    );
    for (id, want) in expected {
        let bucket = &buckets[id];
        for field in ["type", "client", "hostname"] {
            assert_eq!(bucket[field], want[field], "{id} {field}");
        }
        let events = client
            .get(&format!("/api/0/buckets/{id}/events?limit=-1"))
            .json();
        let mut events: Vec<(i64, i64, Value)> = events
            .as_array()
            .unwrap()
            .iter()
            .map(|event| {
                (
                    micros(event["timestamp"].as_str().unwrap()),
                    (event["duration"].as_f64().unwrap() * 1e6).round() as i64,
                    event["data"].clone(),
                )
            })
            .collect();
        events.sort_by_key(|event| (event.0, event.1));
        assert_eq!(events.len() as u64, want["count"].as_u64().unwrap(), "{id}");
        let total: i64 = events.iter().map(|event| event.1).sum();
        assert_eq!(total, want["duration_micros"].as_i64().unwrap(), "{id}");
        assert_eq!(events[0].0, micros(want["first"].as_str().unwrap()), "{id}");
        assert_eq!(
            events.last().unwrap().0,
            micros(want["last"].as_str().unwrap()),
            "{id}"
        );
        for sample in want["samples"].as_array().unwrap() {
            let wanted = (
                micros(sample["timestamp"].as_str().unwrap()),
                sample["duration_micros"].as_i64().unwrap(),
                sample["data"].clone(),
            );
            assert!(events.contains(&wanted), "{id}: {wanted:?} missing");
        }
    }
    let window = &buckets["aw-watcher-window_legacyhost"];
    assert_eq!(window["created"], "2020-02-29T08:00:00Z");
    assert_eq!(window["data"]["note"], "from the Python server");
}

#[test]
fn the_first_start_imports_the_python_servers_database_exactly() {
    let root = TempDir::new().unwrap();
    place_legacy(root.path(), Path::new(FIXTURE));
    let before = fs::read(legacy_path(root.path())).unwrap();
    let server = Server::start(root.path(), &[]);
    assert!(server.log_has("Imported"), "{:#?}", server.seen);
    assert_holds_the_fixture(&server.client);
    // The one import: a later start of the same database adds nothing.
    server.client.post_json(
        "/api/0/buckets/aw-watcher-afk_legacyhost/events",
        &serde_json::json!([{"timestamp": "2021-01-01T00:00:00Z", "duration": 1, "data": {}}]),
    );
    server.stop();
    let server = Server::start(root.path(), &[]);
    let count = server
        .client
        .get("/api/0/buckets/aw-watcher-afk_legacyhost/events/count")
        .json();
    assert_eq!(count, 1001);
    assert!(!server.log_has("Imported"));
    server.stop();
    assert_eq!(
        fs::read(legacy_path(root.path())).unwrap(),
        before,
        "the Python server's file is only read"
    );
    let staging = format!("{}.legacy-import", db_path(root.path()).display());
    assert!(!Path::new(&staging).exists());
}

#[test]
fn no_import_with_dbpath_or_no_legacy_import() {
    for args in [&["--no-legacy-import"][..], &["--dbpath", "DB"][..]] {
        let root = TempDir::new().unwrap();
        place_legacy(root.path(), Path::new(FIXTURE));
        let db = root.path().join("other.db");
        let args: Vec<&str> = args
            .iter()
            .map(|arg| {
                if *arg == "DB" {
                    db.to_str().unwrap()
                } else {
                    arg
                }
            })
            .collect();
        let server = Server::start(root.path(), &args);
        assert_eq!(
            server.client.get("/api/0/buckets/").json(),
            serde_json::json!({})
        );
        server.stop();
    }
}

#[test]
fn no_python_database_starts_quietly_with_an_empty_one() {
    let root = TempDir::new().unwrap();
    let server = Server::start(root.path(), &[]);
    assert_eq!(
        server.client.get("/api/0/buckets/").json(),
        serde_json::json!({})
    );
    assert!(
        !server.seen.iter().any(|line| line.contains("WARN")),
        "{:#?}",
        server.seen
    );
    server.stop();
}

/// An empty file, garbage, a truncated copy, an SQLite file of another
/// schema and a locked file: each gets a warning naming the file, the
/// server starts with an empty database and nothing is half imported.
#[test]
fn an_unreadable_python_database_is_reported_and_the_server_starts() {
    let fixture = fs::read(FIXTURE).unwrap();
    let other_schema = {
        let dir = TempDir::new().unwrap();
        let path = dir.path().join("other.db");
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('x');")
            .unwrap();
        drop(conn);
        fs::read(&path).unwrap()
    };
    let cases: [(&str, Vec<u8>); 4] = [
        ("empty", Vec::new()),
        ("garbage", b"not a database at all, just text\n".repeat(200)),
        ("truncated", fixture[..fixture.len() / 3].to_vec()),
        ("other schema", other_schema),
    ];
    for (name, bytes) in cases {
        let root = TempDir::new().unwrap();
        let legacy = legacy_path(root.path());
        fs::create_dir_all(legacy.parent().unwrap()).unwrap();
        fs::write(&legacy, &bytes).unwrap();
        let server = Server::start(root.path(), &[]);
        let warning = server
            .seen
            .iter()
            .find(|line| line.contains("Could not import the Python aw-server database"))
            .unwrap_or_else(|| panic!("{name}: no warning in {:#?}", server.seen));
        assert!(
            warning.contains(&legacy.display().to_string()),
            "{name}: {warning}"
        );
        assert_eq!(
            server.client.get("/api/0/buckets/").json(),
            serde_json::json!({}),
            "{name}"
        );
        server.stop();
    }
}

#[test]
fn a_locked_python_database_is_reported_and_the_server_starts() {
    let root = TempDir::new().unwrap();
    place_legacy(root.path(), Path::new(FIXTURE));
    // The Python server (or anything else) holding an exclusive lock.
    let holder = rusqlite::Connection::open(legacy_path(root.path())).unwrap();
    holder
        .execute_batch(
            "PRAGMA journal_mode = DELETE; PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE;",
        )
        .unwrap();
    let server = Server::start(root.path(), &[]);
    assert!(
        server.log_has("Could not import the Python aw-server database"),
        "{:#?}",
        server.seen
    );
    assert!(server.log_has("locked"), "{:#?}", server.seen);
    assert_eq!(
        server.client.get("/api/0/buckets/").json(),
        serde_json::json!({})
    );
    server.stop();
    drop(holder);
}

/// A Python server database of `buckets` x `per_bucket` events in
/// peewee's schema (as aw-core creates it), written in one transaction.
fn write_large_legacy(path: &Path, buckets: usize, per_bucket: usize) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        r#"CREATE TABLE "bucketmodel" ("key" INTEGER NOT NULL PRIMARY KEY, "id" VARCHAR(255) NOT NULL, "created" DATETIME NOT NULL, "name" VARCHAR(255), "type" VARCHAR(255) NOT NULL, "client" VARCHAR(255) NOT NULL, "hostname" VARCHAR(255) NOT NULL, "datastr" VARCHAR(255));
           CREATE UNIQUE INDEX "bucketmodel_id" ON "bucketmodel" ("id");
           CREATE TABLE "eventmodel" ("id" INTEGER NOT NULL PRIMARY KEY, "bucket_id" INTEGER NOT NULL, "timestamp" DATETIME NOT NULL, "duration" DECIMAL(10, 5) NOT NULL, "datastr" VARCHAR(255) NOT NULL, FOREIGN KEY ("bucket_id") REFERENCES "bucketmodel" ("key"));
           CREATE INDEX eventmodel_bucket_id_timestamp ON eventmodel (bucket_id, timestamp);
           BEGIN;"#,
    )
    .unwrap();
    for bucket in 0..buckets {
        conn.execute(
            "INSERT INTO bucketmodel (id, created, type, client, hostname, datastr)
             VALUES (?1, '2019-12-31 00:00:00+00:00', 'currentwindow', 'aw-watcher-window', 'bighost', '{}')",
            [format!("big-{bucket}")],
        )
        .unwrap();
        let key = conn.last_insert_rowid();
        let mut insert = conn
            .prepare("INSERT INTO eventmodel (bucket_id, timestamp, duration, datastr) VALUES (?1, ?2, ?3, ?4)")
            .unwrap();
        let start = Timestamp::parse("2020-01-01T00:00:00Z")
            .unwrap()
            .to_datetime();
        for n in 0..per_bucket {
            let time = start + chrono::Duration::milliseconds(n as i64 * 5001);
            insert
                .execute(rusqlite::params![
                    key,
                    time.format("%Y-%m-%d %H:%M:%S%.6f+00:00").to_string(),
                    (n % 60) as f64 + 0.5,
                    format!(
                        r#"{{"app": "app{}", "title": "title {}"}}"#,
                        n % 17,
                        n % 1000
                    )
                ])
                .unwrap();
        }
    }
    conn.execute_batch("COMMIT;").unwrap();
}

fn counts(client: &Client, buckets: usize) -> Vec<u64> {
    (0..buckets)
        .map(|bucket| {
            client
                .get(&format!("/api/0/buckets/big-{bucket}/events/count"))
                .json()
                .as_u64()
                .unwrap()
        })
        .collect()
}

/// SIGKILL in the middle of the first start's import leaves no database
/// (the import goes to a staging file); the next start imports it all,
/// once.
#[test]
fn a_first_start_killed_midway_imports_everything_once_on_the_next() {
    let root = TempDir::new().unwrap();
    let legacy = legacy_path(root.path());
    fs::create_dir_all(legacy.parent().unwrap()).unwrap();
    write_large_legacy(&legacy, 2, 100_000);

    let mut server = Server::spawn(root.path(), &[]);
    server.wait_for("Imported 5000 of 200000 events");
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    assert!(
        !db_path(root.path()).exists(),
        "the import finished before the kill: nothing was tested"
    );

    let server = Server::start(root.path(), &[]);
    assert_eq!(counts(&server.client, 2), vec![100_000, 100_000]);
    server.stop();
    let staging = format!("{}.legacy-import", db_path(root.path()).display());
    assert!(!Path::new(&staging).exists());
}

/// `import --legacy` killed midway and run again stores every event once:
/// the merge skips what the first run stored.
#[test]
fn import_legacy_killed_midway_and_rerun_stores_everything_once() {
    let root = TempDir::new().unwrap();
    let legacy = root.path().join("old.db");
    write_large_legacy(&legacy, 2, 100_000);
    let db = root.path().join("new.db");
    let import = |root: &Path| {
        let mut command = binary(root);
        command
            .args(["import", "--legacy", "--dbpath"])
            .arg(&db)
            .arg(&legacy)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        command
    };
    let mut first = import(root.path()).spawn().unwrap();
    // Killed once the first events are stored (the WAL grows).
    let wal = root.path().join("new.db-wal");
    let deadline = Instant::now() + Duration::from_secs(60);
    while fs::metadata(&wal).map(|m| m.len()).unwrap_or(0) < 1_000_000 {
        assert!(
            Instant::now() < deadline,
            "the import never started storing"
        );
        assert!(
            first.try_wait().unwrap().is_none(),
            "the import ended before the kill"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    first.kill().unwrap();
    first.wait().unwrap();

    let output = import(root.path()).output().unwrap();
    let report = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{report}");
    assert!(report.contains("200000 events"), "{report}");
    assert!(
        !report.contains(" 0 already there"),
        "the rerun skipped nothing: {report}"
    );

    let server = Server::start(root.path(), &["--dbpath", db.to_str().unwrap()]);
    assert_eq!(counts(&server.client, 2), vec![100_000, 100_000]);
    server.stop();
}

/// Runs `aw-server import --legacy ARGS...` with the test's private
/// folders: its exit status and report.
fn import_legacy(root: &Path, args: &[&OsStr]) -> (Option<i32>, String) {
    let output = binary(root)
        .args(["import", "--legacy"])
        .args(args)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&output.stderr).into_owned();
    (output.status.code(), report)
}

/// Imports the fixture twice with `target` flags: all of it, then nothing.
fn imports_all_then_nothing(root: &Path, target: &[&OsStr]) {
    for (run, stored) in ["3002 stored", "0 stored"].into_iter().enumerate() {
        let mut args = target.to_vec();
        args.push(FIXTURE.as_ref());
        let (status, report) = import_legacy(root, &args);
        assert_eq!(status, Some(0), "{report}");
        assert!(report.contains(stored), "run {run}: {report}");
    }
}

#[test]
fn import_legacy_twice_adds_nothing_the_second_time() {
    let root = TempDir::new().unwrap();
    let db = root.path().join("new.db");
    imports_all_then_nothing(root.path(), &["--dbpath".as_ref(), db.as_os_str()]);
    let server = Server::start(root.path(), &["--dbpath", db.to_str().unwrap()]);
    assert_holds_the_fixture(&server.client);
    server.stop();
}

#[test]
fn import_legacy_refuses_a_file_that_is_not_one_and_stores_nothing() {
    let root = TempDir::new().unwrap();
    let db = root.path().join("new.db");
    let bad = root.path().join("bad.db");
    fs::write(&bad, b"garbage".repeat(1000)).unwrap();
    let (status, report) = import_legacy(
        root.path(),
        &[
            "--dbpath".as_ref(),
            db.as_os_str(),
            FIXTURE.as_ref(),
            bad.as_os_str(),
        ],
    );
    assert_eq!(status, Some(1), "{report}");
    assert!(
        report.contains("bad.db") && report.contains("nothing imported"),
        "{report}"
    );
    assert!(!db.exists(), "nothing is stored when one file is bad");
}

/// `import --legacy` through a running server: the file is sent as an
/// export document to `POST /api/0/import`.
#[test]
fn import_legacy_through_a_running_server() {
    let root = TempDir::new().unwrap();
    let db = root.path().join("served.db");
    let server = Server::start(root.path(), &["--dbpath", db.to_str().unwrap()]);
    let port = server.client.port.to_string();
    imports_all_then_nothing(
        root.path(),
        &["--testing".as_ref(), "--port".as_ref(), port.as_ref()],
    );
    assert_holds_the_fixture(&server.client);
    server.stop();
}

/// The privacy rules in force apply to what `import --legacy` brings in,
/// as to any other incoming data.
#[test]
fn import_legacy_applies_the_privacy_rules() {
    let root = TempDir::new().unwrap();
    let db = root.path().join("private.db");
    let server = Server::start(root.path(), &["--dbpath", db.to_str().unwrap()]);
    let rules = serde_json::json!([
        {"enabled": true, "bucket_prefix": "aw-watcher-window", "field": "app",
         "pattern": "^app3$", "action": "drop"},
        {"enabled": true, "field": "title", "pattern": "café", "action": "redact",
         "replacement": "[private]"}
    ]);
    let reply = server
        .client
        .post_json("/api/0/settings/privacy_filters", &rules);
    assert!(matches!(reply.status, 200 | 201), "{}", reply.text());
    let port = server.client.port.to_string();
    let (status, report) = import_legacy(
        root.path(),
        &[
            "--testing".as_ref(),
            "--port".as_ref(),
            port.as_ref(),
            FIXTURE.as_ref(),
        ],
    );
    assert_eq!(status, Some(0), "{report}");
    assert!(
        !report.contains(" 0 dropped by privacy filters"),
        "{report}"
    );
    let events = server
        .client
        .get("/api/0/buckets/aw-watcher-window_legacyhost/events?limit=-1")
        .json();
    let events = events.as_array().unwrap();
    assert!(!events.is_empty());
    assert!(events.iter().all(|event| event["data"]["app"] != "app3"));
    let titles: Vec<&str> = events
        .iter()
        .filter_map(|event| event["data"]["title"].as_str())
        .collect();
    assert!(titles.contains(&"[private]"));
    assert!(!titles.iter().any(|title| title.contains("café")));
    server.stop();
}
