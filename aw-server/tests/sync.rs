//! Folder sync through the binary: two servers and a
//! database file exchange buckets through one folder with `aw-server
//! sync`, online and offline; passes are idempotent and heartbeats extend
//! copies; unreadable files are reported and skipped; the `[sync]`
//! schedule runs on its own when enabled and `GET /api/0/sync/status`
//! tells what it did; a pass killed midway is finished by the next;
//! `--buckets` and `--start-date` limit a pass, online and offline;
//! overlapping passes (the schedule, requests, commands) store nothing
//! twice.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

mod common;

use aw_datastore::{Datastore, EventQuery};
use common::{binary, fails, ok, spawn_listening, Client, Stopped};
use serde_json::{json, Value};
use tempfile::TempDir;

/// Writes the testing config file of `root` with an enabled `[sync]`
/// section.
fn configure_sync(root: &Path, folder: &Path, interval: u64) {
    configure_sync_with(
        root,
        folder,
        &format!("enabled = true\ninterval = {interval}\n"),
    );
}

/// Writes the testing config file of `root` with a `[sync]` section of
/// `folder` and `extra` keys.
fn configure_sync_with(root: &Path, folder: &Path, extra: &str) {
    let path = root
        .join("config")
        .join("activitywatch")
        .join("aw-server-rust")
        .join("config-testing.toml");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(
        path,
        format!("[sync]\nfolder = {:?}\n{extra}", folder.to_str().unwrap()),
    )
    .unwrap();
}

/// A server on a free port with its own root and device id, stopped
/// (SIGTERM) when dropped.
struct Server {
    _child: Stopped,
    port: String,
    root: PathBuf,
}

impl Server {
    fn start(root: &Path, device_id: &str) -> Server {
        let (child, port) = spawn_listening(
            binary(root)
                .args([
                    "--testing",
                    "--port",
                    "0",
                    "--device-id",
                    device_id,
                    "--dbpath",
                ])
                .arg(root.join("server.db"))
                .stdout(Stdio::null()),
        );
        Server {
            _child: Stopped(child),
            port: port.to_string(),
            root: root.to_path_buf(),
        }
    }

    fn client(&self) -> Client {
        Client {
            port: self.port.parse().unwrap(),
            headers: Vec::new(),
        }
    }

    /// `aw-server sync` through this server; its stderr.
    fn sync(&self, extra: &[&str]) -> String {
        let mut args = vec!["sync", "--testing", "--port", &self.port];
        args.extend(extra);
        ok(&self.root, &args)
    }

    fn count(&self, bucket_id: &str) -> u64 {
        let reply = self.client().get(&format!(
            "/api/0/buckets/{}/events/count",
            common::encode(bucket_id)
        ));
        assert_eq!(reply.status, 200, "{}", reply.text());
        reply.text().trim().parse().unwrap()
    }

    fn events(&self, bucket_id: &str) -> Vec<Value> {
        let reply = self.client().get(&format!(
            "/api/0/buckets/{}/events",
            common::encode(bucket_id)
        ));
        assert_eq!(reply.status, 200, "{}", reply.text());
        reply.json().as_array().unwrap().clone()
    }
}

const WINDOW: &str = "aw-watcher-window_laptop";
const WINDOW_COPY: &str = "aw-watcher-window_laptop-synced-from-laptop";

fn window_bucket(client: &Client) {
    let reply = client.post_json(
        &format!("/api/0/buckets/{WINDOW}"),
        &json!({"type": "currentwindow", "client": "aw-watcher-window", "hostname": "laptop"}),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
}

fn heartbeat(client: &Client, timestamp: &str, title: &str) {
    let reply = client.post_json(
        &format!("/api/0/buckets/{WINDOW}/heartbeat?pulsetime=60"),
        &common::event(timestamp, 0.0, json!({"app": "editor", "title": title})),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
}

/// Polls `check` until it holds, for at most a minute.
fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn two_servers_and_a_database_file_sync_through_one_folder() {
    let dir = TempDir::new().unwrap();
    let folder = dir.path().join("ActivityWatchSync");
    fs::create_dir_all(&folder).unwrap();
    let (a_root, b_root, c_root) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
    );
    // An hour between scheduled passes: only the first, at start, runs
    // by itself; the rest are the command's.
    configure_sync(&a_root, &folder, 3600);
    configure_sync(&b_root, &folder, 3600);
    let a = Server::start(&a_root, "dev-a");
    let b = Server::start(&b_root, "dev-b");

    window_bucket(&a.client());
    heartbeat(&a.client(), "2026-11-20T10:00:00Z", "notes");
    heartbeat(&a.client(), "2026-11-20T10:00:30Z", "notes");
    heartbeat(&a.client(), "2026-11-20T10:01:00Z", "mail");

    let pushed = a.sync(&["--mode", "push"]);
    assert!(pushed.contains("pushed 1 bucket"), "{pushed}");
    assert!(folder.join("dev-a").join("test.db").is_file());
    let pulled = b.sync(&[]);
    assert!(
        pulled.contains("dev-a/test.db (device dev-a): 2 new"),
        "{pulled}"
    );
    assert_eq!(b.count(WINDOW_COPY), 2);
    // Again: nothing new, nothing twice.
    let again = b.sync(&[]);
    assert!(again.contains("0 new, 0 updated, 0 deleted"), "{again}");
    assert_eq!(b.count(WINDOW_COPY), 2);

    // A heartbeat extends the newest event; the copy follows, in place.
    heartbeat(&a.client(), "2026-11-20T10:01:40Z", "mail");
    a.sync(&[]);
    let followed = b.sync(&[]);
    assert!(followed.contains("0 new, 1 updated"), "{followed}");
    let events = b.events(WINDOW_COPY);
    assert_eq!(events.len(), 2);
    assert_eq!(events[0]["duration"], 40.0);

    // A file that is not a database is reported and skipped.
    let bad = folder.join("dev-bad");
    fs::create_dir_all(&bad).unwrap();
    fs::write(
        bad.join("test.db"),
        b"not a database, just some text in a file",
    )
    .unwrap();
    let reported = b.sync(&[]);
    assert!(reported.contains("skipped dev-bad/test.db"), "{reported}");

    // Offline: a database file with a bucket of its own pulls A's bucket
    // and pushes its own in the daemon layout.
    let c_db = c_root.join("c.db");
    fs::create_dir_all(&c_root).unwrap();
    let document = c_root.join("afk.json");
    fs::write(
        &document,
        json!({"buckets": {"aw-watcher-afk_desk": {
            "id": "aw-watcher-afk_desk", "type": "afkstatus", "client": "aw-watcher-afk",
            "hostname": "desk",
            "events": [{"timestamp": "2026-11-20T09:00:00Z", "duration": 600.0,
                        "data": {"status": "not-afk"}}]}}})
        .to_string(),
    )
    .unwrap();
    let c_args = ["--dbpath", c_db.to_str().unwrap()];
    ok(
        &c_root,
        &[&["import"][..], &c_args, &[document.to_str().unwrap()]].concat(),
    );
    let offline = ok(
        &c_root,
        &[
            &[
                "sync",
                "--device-id",
                "dev-c",
                "--sync-dir",
                folder.to_str().unwrap(),
            ][..],
            &c_args,
        ]
        .concat(),
    );
    assert!(
        offline.contains("dev-a/test.db (device dev-a): 2 new"),
        "{offline}"
    );
    assert!(offline.contains("skipped dev-bad/test.db"), "{offline}");
    assert!(folder.join("dev-c").join("test.db").is_file());
    let c = Datastore::open(&c_db).unwrap();
    let copy = c.events(WINDOW_COPY, EventQuery::default()).wait().unwrap();
    assert_eq!(copy.len(), 2);
    c.close().unwrap();
    drop(c);
    // A pulls C's bucket; B pulls it too, and never A's bucket back.
    a.sync(&[]);
    b.sync(&[]);
    assert_eq!(a.count("aw-watcher-afk_desk-synced-from-desk"), 1);
    assert_eq!(b.count("aw-watcher-afk_desk-synced-from-desk"), 1);
    let buckets = a.client().get("/api/0/buckets/").json();
    assert_eq!(buckets.as_object().unwrap().len(), 2, "{buckets}");

    // Online, the folder is the server's.
    let other = dir.path().join("elsewhere");
    fs::create_dir_all(&other).unwrap();
    let refused = fails(
        &a_root,
        &[
            "sync",
            "--testing",
            "--port",
            &a.port,
            "--folder",
            other.to_str().unwrap(),
        ],
        1,
    );
    assert!(refused.contains("syncs with"), "{refused}");

    // The status tells what the passes did.
    let status = b.client().get("/api/0/sync/status").json();
    assert_eq!(status["enabled"], true);
    assert_eq!(status["folder"], folder.to_str().unwrap());
    assert!(status["passes"].as_u64().unwrap() >= 5, "{status}");
    assert_eq!(status["running"], false);
    let last = &status["last_pass"];
    assert_eq!(last["mode"], "both");
    assert_eq!(
        last["push"]["file"],
        folder.join("dev-b").join("test.db").to_str().unwrap()
    );
    let skipped = last["pull"]["skipped"].as_array().unwrap();
    assert_eq!(skipped[0]["name"], "dev-bad/test.db", "{status}");
}

#[test]
fn the_schedule_pulls_by_itself_and_bad_requests_are_refused() {
    // Another device's file, pushed offline.
    let (dir, folder, other_root, other_db) = folder_and_device("other");
    {
        let store = Datastore::open(&other_db).unwrap();
        let mut bucket: aw_models::Bucket = serde_json::from_value(json!({
            "id": WINDOW, "type": "currentwindow", "client": "w", "hostname": "laptop"}))
        .unwrap();
        bucket.events = Some(vec![serde_json::from_value(json!({
            "timestamp": "2026-11-20T10:00:00Z", "duration": 5.0, "data": {"title": "x"}}))
        .unwrap()]);
        store.create_bucket(bucket).unwrap();
        store.close().unwrap();
    }
    ok(
        &other_root,
        &[
            "sync",
            "--mode",
            "push",
            "--device-id",
            "dev-o",
            "--folder",
            folder.to_str().unwrap(),
            "--dbpath",
            other_db.to_str().unwrap(),
        ],
    );

    // A conflict copy Syncthing made beside it: skipped, in the log and
    // the status too.
    let conflict = "dev-o/test.sync-conflict-20261127-010203-ABCDEFG.db";
    fs::copy(folder.join("dev-o").join("test.db"), folder.join(conflict)).unwrap();

    let root = dir.path().join("server");
    configure_sync(&root, &folder, 1);
    let server = Server::start(&root, "dev-s");
    let client = server.client();
    eventually("a scheduled pass to pull the other device's bucket", || {
        let status = client.get("/api/0/sync/status").json();
        status["passes"].as_u64().unwrap_or(0) >= 2
            && client
                .get(&format!("/api/0/buckets/{}", common::encode(WINDOW_COPY)))
                .status
                == 200
    });
    assert_eq!(server.count(WINDOW_COPY), 1);
    // Each pass is logged, in the server's log file too.
    let logs = root
        .join("cache")
        .join("activitywatch")
        .join("log")
        .join("aw-server-rust");
    eventually("a pass in the log file", || {
        fs::read_dir(&logs)
            .into_iter()
            .flatten()
            .flatten()
            .any(|entry| {
                fs::read_to_string(entry.path()).is_ok_and(|text| {
                    text.contains("Sync (both) with")
                        && text.contains("1 new")
                        && text.contains(&format!("Sync skipped {conflict}: a conflict copy"))
                })
            })
    });
    let status = client.get("/api/0/sync/status").json();
    assert_eq!(status["interval_seconds"], 1);
    assert_eq!(
        status["last_pass"]["pull"]["skipped"][0]["name"], conflict,
        "{status}"
    );
    assert!(status["next_pass"].is_string(), "{status}");
    assert_eq!(status["last_error"], Value::Null);

    let reply = client.post("/api/0/sync/run?mode=sideways", b"");
    assert!(reply.assert_error(400).contains("mode"));
    let reply = client.post("/api/0/sync/run?mode=pull", b"");
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.json()["push"], Value::Null);

    // A server without [sync] refuses a pass and says how to set it up.
    let bare_root = dir.path().join("bare");
    let bare = Server::start(&bare_root, "dev-bare");
    let reply = bare.client().post("/api/0/sync/run", b"");
    assert!(reply.assert_error(409).contains("[sync]"));
    let status = bare.client().get("/api/0/sync/status").json();
    assert_eq!(status["enabled"], false);
    let refused = fails(&bare_root, &["sync", "--testing", "--port", &bare.port], 1);
    assert!(refused.contains("no [sync] section"), "{refused}");
}

/// Size of a file, 0 if missing.
fn size(path: &Path) -> u64 {
    fs::metadata(path).map_or(0, |meta| meta.len())
}

/// Runs `aw-server args` and SIGKILLs it once `started` holds, while it
/// still runs; panics if it ended first.
fn kill_when(root: &Path, args: &[&str], mut started: impl FnMut() -> bool) {
    let mut child = binary(root)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Polled often: a pass of this size takes a fraction of a second.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !started() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("{args:?} ended ({status}) before it could be killed midway");
        }
        assert!(Instant::now() < deadline, "the pass did not get under way");
        std::thread::sleep(Duration::from_millis(1));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn a_pass_killed_midway_is_finished_by_the_next() {
    const EVENTS: i64 = 30_000;
    let dir = TempDir::new().unwrap();
    let root = dir.path();
    let folder = root.join("sync");
    fs::create_dir_all(&folder).unwrap();
    let origin_db = root.join("origin.db");
    {
        let store = Datastore::open(&origin_db).unwrap();
        let bucket: aw_models::Bucket = serde_json::from_value(json!({
            "id": WINDOW, "type": "currentwindow", "client": "w", "hostname": "laptop"}))
        .unwrap();
        store.create_bucket(bucket).unwrap();
        for chunk in 0..EVENTS / 5_000 {
            let events = (0..5_000)
                .map(|i| {
                    let second = (chunk * 5_000 + i) * 10;
                    serde_json::from_value(json!({
                        "timestamp": aw_models::Timestamp::from_nanos(second * 1_000_000_000 + 1_600_000_000_000_000_000),
                        "duration": 5.0,
                        "data": {"app": "editor", "title": format!("file {}", second % 977)}}))
                    .unwrap()
                })
                .collect();
            store.import_events(WINDOW, events).unwrap();
        }
        store.close().unwrap();
    }
    let origin = [
        "--device-id",
        "dev-o",
        "--folder",
        folder.to_str().unwrap(),
        "--dbpath",
        origin_db.to_str().unwrap(),
    ];
    let copy = folder.join("dev-o").join("test.db");
    // The push is killed while it writes the copy: the copy rolls back to
    // what it was, and a file with a journal beside it is not pulled.
    kill_when(
        root,
        &[&["sync", "--mode", "push"][..], &origin].concat(),
        || {
            size(&PathBuf::from(format!("{}-journal", copy.display()))) > 0
                && size(&copy) > 256 << 10
        },
    );
    let puller_db = root.join("puller.db");
    let puller = [
        "--device-id",
        "dev-p",
        "--folder",
        folder.to_str().unwrap(),
        "--dbpath",
        puller_db.to_str().unwrap(),
    ];
    let refused = ok(root, &[&["sync", "--mode", "pull"][..], &puller].concat());
    assert!(refused.contains("skipped dev-o/test.db"), "{refused}");
    ok(root, &[&["sync", "--mode", "push"][..], &origin].concat());
    // The pull is killed after some chunks are stored.
    let wal = PathBuf::from(format!("{}-wal", puller_db.display()));
    kill_when(
        root,
        &[&["sync", "--mode", "pull"][..], &puller].concat(),
        || size(&wal) > 256 << 10,
    );
    let finished = ok(root, &[&["sync", "--mode", "pull"][..], &puller].concat());
    assert!(
        finished.contains("dev-o/test.db (device dev-o)"),
        "{finished}"
    );
    let store = Datastore::open(&puller_db).unwrap();
    assert_eq!(
        store.count_events(WINDOW_COPY, None, None).wait().unwrap(),
        EVENTS as u64,
        "every event once: {finished}"
    );
    store.close().unwrap();
}

/// A temporary folder holding the shared folder `sync/` and the home of
/// another device, `<name>/`: (the temporary folder, the shared folder,
/// the device's home, its database `<name>/<name>.db`, not made yet).
fn folder_and_device(name: &str) -> (TempDir, PathBuf, PathBuf, PathBuf) {
    let dir = TempDir::new().unwrap();
    let folder = dir.path().join("sync");
    fs::create_dir_all(&folder).unwrap();
    let home = dir.path().join(name);
    fs::create_dir_all(&home).unwrap();
    let db = home.join(format!("{name}.db"));
    (dir, folder, home, db)
}

/// A database file at `path` with `events` window events (ten seconds
/// apart from 2026-11-20, five long) and one afk event, both of host
/// `laptop`.
fn origin_file(path: &Path, events: i64) {
    let store = Datastore::open(path).unwrap();
    for (id, kind) in [
        (WINDOW, "currentwindow"),
        ("aw-watcher-afk_laptop", "afkstatus"),
    ] {
        let bucket: aw_models::Bucket = serde_json::from_value(json!({
            "id": id, "type": kind, "client": "w", "hostname": "laptop"}))
        .unwrap();
        store.create_bucket(bucket).unwrap();
    }
    let start = aw_models::Timestamp::parse("2026-11-20T00:00:00Z")
        .unwrap()
        .nanos();
    let window: Vec<aw_models::Event> = (0..events)
        .map(|i| {
            serde_json::from_value(json!({
                "timestamp": aw_models::Timestamp::from_nanos(start + i * 10_000_000_000),
                "duration": 5.0,
                "data": {"app": "editor", "title": format!("file {i}")}}))
            .unwrap()
        })
        .collect();
    store.import_events(WINDOW, window).unwrap();
    let afk = serde_json::from_value(json!({
        "timestamp": "2026-11-19T10:00:00Z", "duration": 60.0, "data": {"status": "afk"}}))
    .unwrap();
    store
        .import_events("aw-watcher-afk_laptop", vec![afk])
        .unwrap();
    store.close().unwrap();
}

#[test]
fn buckets_and_start_date_limit_a_pass_online_and_offline() {
    let (dir, folder, origin_root, origin_db) = folder_and_device("origin");
    origin_file(&origin_db, 20);
    // Offline, with the old name of --sync-dir: only the window bucket,
    // only from 2026-11-20 on (the afk event is of the 19th anyway).
    let pushed = ok(
        &origin_root,
        &[
            "sync",
            "--mode",
            "push",
            "--device-id",
            "dev-o",
            "--folder",
            folder.to_str().unwrap(),
            "--buckets",
            WINDOW,
            "--start-date",
            "2026-11-20",
            "--dbpath",
            origin_db.to_str().unwrap(),
        ],
    );
    assert!(pushed.contains("pushed 1 bucket"), "{pushed}");
    assert!(pushed.contains("20 events written"), "{pushed}");
    let bad = fails(
        &origin_root,
        &[
            "sync",
            "--start-date",
            "20-11-2026",
            "--dbpath",
            origin_db.to_str().unwrap(),
        ],
        2,
    );
    assert!(bad.contains("YYYY-MM-DD"), "{bad}");
    ok(
        &origin_root,
        &[
            "sync",
            "--mode",
            "push",
            "--device-id",
            "dev-o",
            "--sync-dir",
            folder.to_str().unwrap(),
            "--dbpath",
            origin_db.to_str().unwrap(),
        ],
    );

    // Online: a [sync] section that is not enabled runs no pass by
    // itself, but passes asked for, limited by the request.
    let root = dir.path().join("server");
    configure_sync_with(&root, &folder, "interval = 1\n");
    let server = Server::start(&root, "dev-s");
    let status = server.client().get("/api/0/sync/status").json();
    assert_eq!(status["enabled"], false, "{status}");
    assert_eq!(status["configured"], true, "{status}");
    let pulled = server.sync(&[
        "--mode",
        "pull",
        "--buckets",
        "aw-watcher-window_laptop,aw-watcher-nothing_laptop",
        "--start-date",
        "2026-11-20",
    ]);
    assert!(
        pulled.contains("dev-o/test.db (device dev-o): 20 new"),
        "{pulled}"
    );
    let buckets = server.client().get("/api/0/buckets/").json();
    assert_eq!(buckets.as_object().unwrap().len(), 1, "{buckets}");
    // Through the API, by the copy's id, from a later time.
    let reply = server.client().post(
        "/api/0/sync/run?mode=pull&buckets=aw-watcher-afk_laptop-synced-from-laptop&start=2026-11-19T10:00:30Z",
        b"",
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    let report = reply.json();
    assert_eq!(
        report["buckets"][0],
        "aw-watcher-afk_laptop-synced-from-laptop"
    );
    assert!(
        report["start"]
            .as_str()
            .is_some_and(|start| start.starts_with("2026-11-19T10:00:30")),
        "{report}"
    );
    assert_eq!(server.count("aw-watcher-afk_laptop-synced-from-laptop"), 1);
    let reply = server.client().post("/api/0/sync/run?start=yesterday", b"");
    assert!(reply.assert_error(400).contains("start"));
    let status = server.client().get("/api/0/sync/status").json();
    assert_eq!(status["passes"], 2, "only the passes asked for: {status}");
}

#[test]
fn overlapping_passes_leave_no_duplicates() {
    const EVENTS: i64 = 5_000;
    let (dir, folder, origin_root, origin_db) = folder_and_device("origin");
    origin_file(&origin_db, EVENTS);
    let origin = |mode: &str| {
        ok(
            &origin_root,
            &[
                "sync",
                "--mode",
                mode,
                "--device-id",
                "dev-o",
                "--sync-dir",
                folder.to_str().unwrap(),
                "--dbpath",
                origin_db.to_str().unwrap(),
            ],
        )
    };
    origin("push");
    // The schedule every second, two commands and three requests at once.
    let root = dir.path().join("server");
    configure_sync(&root, &folder, 1);
    let server = Server::start(&root, "dev-s");
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| server.sync(&[]));
        }
        for mode in ["pull", "both", "pull"] {
            let client = server.client();
            scope.spawn(move || {
                let reply = client.post(&format!("/api/0/sync/run?mode={mode}"), b"");
                assert_eq!(reply.status, 200, "{}", reply.text());
            });
        }
    });
    assert_eq!(server.count(WINDOW_COPY), EVENTS as u64);
    assert_eq!(server.count("aw-watcher-afk_laptop-synced-from-laptop"), 1);
    // Heartbeats grow the origin's newest event; passes overlap again.
    {
        let store = Datastore::open(&origin_db).unwrap();
        let last = aw_models::Timestamp::parse("2026-11-20T00:00:00Z")
            .unwrap()
            .nanos()
            + (EVENTS - 1) * 10_000_000_000;
        let beat: aw_models::Event = serde_json::from_value(json!({
            "timestamp": aw_models::Timestamp::from_nanos(last + 4_000_000_000),
            "duration": 5.0,
            "data": {"app": "editor", "title": format!("file {}", EVENTS - 1)}}))
        .unwrap();
        store
            .heartbeat(WINDOW, beat, aw_models::Duration::from_secs(60))
            .unwrap();
        store.close().unwrap();
    }
    origin("push");
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| server.sync(&["--mode", "pull"]));
        }
        let client = server.client();
        scope.spawn(move || {
            let reply = client.post("/api/0/sync/run", b"");
            assert_eq!(reply.status, 200, "{}", reply.text());
        });
    });
    assert_eq!(server.count(WINDOW_COPY), EVENTS as u64);
    let newest = &server.events(WINDOW_COPY)[0];
    assert_eq!(newest["duration"], 9.0, "{newest}");
}
