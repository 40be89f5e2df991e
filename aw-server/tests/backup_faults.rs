//! Snapshots under faults: taken while eight watchers send
//! heartbeats and a year query loops, a snapshot holds every event
//! acknowledged before it started, exported exactly as the source exports
//! them; a server killed (SIGKILL) in the middle of a snapshot leaves no
//! file under the snapshot's name, and the next one succeeds.
//!
//! Time budget: about 15 s in a debug build.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aw_datastore::Datastore;
use aw_models::{Bucket, BucketMetadata, Data, Event, Timestamp};
use common::{create_bucket, export_copy, names_in, serve_file, Signal, TestServer};
use serde_json::{json, Value};

const CLIENTS: usize = 8;

/// The events of each bucket of an export document, by bucket id.
fn exported_events(document: &Value) -> BTreeMap<String, Vec<Value>> {
    document["buckets"]
        .as_object()
        .unwrap_or_else(|| panic!("not an export: {document}"))
        .iter()
        .map(|(id, bucket)| {
            let mut events = bucket["events"].as_array().cloned().unwrap_or_default();
            events.sort_by_key(|event| event["id"].as_i64());
            (id.clone(), events)
        })
        .collect()
}

fn history_bucket() -> Bucket {
    Bucket {
        id: "history".to_string(),
        kind: "currentwindow".to_string(),
        client: "test".to_string(),
        hostname: "host".to_string(),
        created: None,
        data: Data::new(),
        metadata: BucketMetadata::default(),
        events: None,
        last_updated: None,
    }
}

/// `count` events of `bytes` of title each, a minute apart from `start`.
fn history(count: usize, bytes: usize, start: &str) -> Vec<Event> {
    let start = Timestamp::parse(start).unwrap();
    (0..count)
        .map(|n| {
            let mut data = Data::new();
            data.insert("app".into(), format!("app{}", n % 7).into());
            data.insert("title".into(), format!("{n} {}", "t".repeat(bytes)).into());
            Event {
                id: None,
                timestamp: start.saturating_add(aw_models::Duration::from_secs(60 * n as i64)),
                duration: aw_models::Duration::from_secs(50),
                data,
            }
        })
        .collect()
}

#[test]
fn a_snapshot_under_load_holds_every_acknowledged_event() {
    let folder = tempfile::tempdir().unwrap();
    let backups = folder.path().join("backups");
    let db = folder.path().join("served.db");
    let datastore = Datastore::open(&db).unwrap();
    datastore.create_bucket(history_bucket()).unwrap();
    // A year of history for the query to walk: one event every hour.
    let year: Vec<Event> = history(8_760, 40, "2025-11-28T00:00:00Z")
        .into_iter()
        .enumerate()
        .map(|(n, mut event)| {
            event.timestamp = Timestamp::parse("2025-11-28T00:00:00Z")
                .unwrap()
                .saturating_add(aw_models::Duration::from_secs(3600 * n as i64));
            event
        })
        .collect();
    datastore.insert_events("history", year).unwrap();
    let server = TestServer::start_on(
        None,
        datastore,
        |config| config.backup.dir = backups.clone(),
        |rocket| rocket,
    );
    let client = server.client();
    for n in 0..CLIENTS {
        create_bucket(&client, &format!("watcher-{n}"));
    }

    let stop = Arc::new(AtomicBool::new(false));
    // (bucket, title, when its heartbeat was acknowledged)
    let acknowledged = Arc::new(Mutex::new(Vec::<(String, String, Instant)>::new()));
    let watchers: Vec<_> = (0..CLIENTS)
        .map(|n| {
            let (client, stop, acknowledged) =
                (client.clone(), Arc::clone(&stop), Arc::clone(&acknowledged));
            std::thread::spawn(move || {
                let bucket = format!("watcher-{n}");
                let start = Timestamp::parse("2026-11-28T08:00:00Z").unwrap();
                let mut beat = 0i64;
                while !stop.load(Ordering::SeqCst) {
                    // A new title each time: each heartbeat is an event of
                    // its own, final once acknowledged.
                    let title = format!("{bucket} window {beat}");
                    let at = start.saturating_add(aw_models::Duration::from_secs(beat));
                    let reply = client.post_json(
                        &format!("/api/0/buckets/{bucket}/heartbeat?pulsetime=2"),
                        &json!({"timestamp": at.to_string(), "duration": 0, "data": {"title": title}}),
                    );
                    assert_eq!(reply.status, 200, "{}", reply.text());
                    acknowledged
                        .lock()
                        .unwrap()
                        .push((bucket.clone(), title, Instant::now()));
                    beat += 1;
                    std::thread::sleep(Duration::from_millis(5));
                }
            })
        })
        .collect();
    let queries = Arc::new(AtomicU64::new(0));
    let querier = {
        let (client, stop, queries) = (client.clone(), Arc::clone(&stop), Arc::clone(&queries));
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                let reply = client.post_json(
                    "/api/0/query/",
                    &json!({
                        "timeperiods": ["2025-11-28T00:00:00Z/2026-11-29T00:00:00Z"],
                        "query": [
                            "events = query_bucket(\"history\");",
                            "RETURN = sort_by_duration(merge_events_by_keys(events, [\"app\"]));"
                        ]
                    }),
                );
                assert_eq!(reply.status, 200, "{}", reply.text());
                queries.fetch_add(1, Ordering::SeqCst);
            }
        })
    };

    std::thread::sleep(Duration::from_millis(1_500));
    let started = Instant::now();
    let reply = client.post("/api/0/backup", b"");
    assert_eq!(reply.status, 200, "{}", reply.text());
    let snapshot = reply.json()["path"].as_str().unwrap().to_string();
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::SeqCst);
    for watcher in watchers {
        watcher.join().unwrap();
    }
    querier.join().unwrap();
    assert!(
        queries.load(Ordering::SeqCst) > 0,
        "the year query never ran"
    );

    let before: Vec<(String, String)> = acknowledged
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, _, at)| *at < started)
        .map(|(bucket, title, _)| (bucket.clone(), title.clone()))
        .collect();
    assert!(
        before.len() > CLIENTS * 10,
        "too few heartbeats: {}",
        before.len()
    );
    let wanted: BTreeSet<&str> = before.iter().map(|(_, title)| title.as_str()).collect();
    let in_set = |events: &[Value]| -> Vec<Value> {
        events
            .iter()
            .filter(|event| {
                event["data"]["title"]
                    .as_str()
                    .is_some_and(|title| wanted.contains(title))
            })
            .cloned()
            .collect()
    };

    // The source's export (the server, still running) and the snapshot's
    // (the export command on a copy of it, so the snapshot stays as it is).
    let source = exported_events(&client.get("/api/0/export").json());
    let taken = exported_events(&export_copy(folder.path(), Path::new(&snapshot)));

    assert_eq!(taken["history"], source["history"]);
    let mut found = 0;
    for n in 0..CLIENTS {
        let bucket = format!("watcher-{n}");
        let from_snapshot = in_set(&taken[&bucket]);
        assert_eq!(from_snapshot, in_set(&source[&bucket]), "{bucket}");
        found += from_snapshot.len();
    }
    assert_eq!(
        found,
        before.len(),
        "every heartbeat acknowledged before the snapshot started is in it, once"
    );
    drop(server);
}

/// Whether `name` is a finished snapshot's (not a `.partial`).
fn is_snapshot(name: &str) -> bool {
    name.starts_with("aw-server-") && name.ends_with(".db")
}

#[test]
fn a_server_killed_during_a_snapshot_leaves_no_file_under_its_name() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let db = root.join("served.db");
    let backups = root.join("backups");
    common::write_testing_config(root, &common::backup_config(&backups));
    // About 25 MB: a snapshot long enough to be caught in the middle.
    let events = 100_000;
    {
        let store = Datastore::open(&db).unwrap();
        store.create_bucket(history_bucket()).unwrap();
        store
            .insert_events("history", history(events, 200, "2025-01-01T00:00:00Z"))
            .unwrap();
        store.close().unwrap();
    }
    let start = || {
        let (server, client) = serve_file(root, &db);
        (server, client.port)
    };

    let mut caught = false;
    for attempt in 1..=5 {
        let (mut server, port) = start();
        let client = common::Client {
            port,
            headers: Vec::new(),
        };
        let asked = std::thread::spawn(move || {
            client.try_raw(
            format!(
                "POST /api/0/backup HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )
            .as_bytes(),
        )
        });
        // Kill as soon as the partial file is there.
        let deadline = Instant::now() + Duration::from_secs(60);
        let seen = loop {
            let names = names_in(&backups);
            if names.iter().any(|name| name.ends_with(".db.partial")) {
                common::signal(&server.0, Signal::KILL).unwrap();
                break true;
            }
            if names.iter().any(|name| is_snapshot(name)) || Instant::now() > deadline {
                break false;
            }
            std::thread::sleep(Duration::from_micros(200));
        };
        server.0.wait().unwrap();
        let _ = asked.join().unwrap();
        let finished: Vec<String> = names_in(&backups)
            .into_iter()
            .filter(|name| is_snapshot(name))
            .collect();
        if seen && finished.is_empty() {
            caught = true;
            eprintln!("attempt {attempt}: killed in the middle, no snapshot under its name");
            break;
        }
        // Too late: what is there must be whole; try again.
        for name in finished {
            let path = backups.join(&name);
            assert_eq!(history_in(root, &path), events);
            std::fs::remove_file(path).unwrap();
        }
    }
    assert!(
        caught,
        "no attempt killed the server in the middle of a snapshot"
    );

    // The database is intact and the next snapshot is good.
    let (server, port) = start();
    let client = common::Client {
        port,
        headers: Vec::new(),
    };
    assert_eq!(client.get("/api/0/buckets/history").json()["id"], "history");
    let reply = client.post("/api/0/backup", b"");
    assert_eq!(reply.status, 200, "{}", reply.text());
    let path = reply.json()["path"].as_str().unwrap().to_string();
    let status = client.get("/api/0/backup/status").json();
    let listed: Vec<&str> = status["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|snapshot| snapshot["path"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [path.as_str()], "a partial file is never listed");
    drop(server);
    assert_eq!(history_in(root, Path::new(&path)), events);
}

/// The events of the history bucket in a snapshot (read from its export,
/// so the snapshot stays as it is).
fn history_in(root: &Path, snapshot: &Path) -> usize {
    exported_events(&export_copy(root, snapshot))["history"].len()
}
