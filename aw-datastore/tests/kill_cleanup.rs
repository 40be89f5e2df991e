//! A SIGKILL in the middle of applying the privacy rules to history, a
//! range delete or a retention run leaves each event either untouched or
//! fully processed, and running the operation again completes it.
//!
//! As in `crash.rs`, the test binary re-runs itself as a child (selected
//! by an environment variable) that runs the operation and prints a line
//! after each chunk; the parent kills it with SIGKILL after a few chunks,
//! while it goes on with the next, reopens the file and checks every
//! event, then runs the operation to its end and checks again.

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use aw_datastore::{Datastore, EventQuery, PRIVACY_FILTERS_KEY};
use aw_models::Event;
use common::*;
use serde_json::json;

const CHILD_DB: &str = "AW_DATASTORE_KILL_CHILD_DB";
const CHILD_OPERATION: &str = "AW_DATASTORE_KILL_CHILD_OPERATION";
/// Events per bucket: 20 chunks of each operation.
const EVENTS: i64 = 20_000;
const WINDOW: &str = "aw-watcher-window_h";
/// The range deleted: seconds [1000, 150_000).
const RANGE: (i64, i64) = (1000, 150_000);
/// Events are 15 s long, one every 10 s: neighbours overlap, so events
/// cross both edges of the range.
const LENGTH: i64 = 15;

fn title(i: i64) -> String {
    match i % 4 {
        0 => format!("incognito {i}"),
        1 => format!("banking {i}"),
        _ => format!("page {i}"),
    }
}

fn setup(db: &TempDb) {
    let store = db.open();
    store.create_bucket(bucket(WINDOW)).unwrap();
    store.create_bucket(bucket("b")).unwrap();
    let events: Vec<Event> = (0..EVENTS)
        .map(|i| event(i * 10, LENGTH, json!({"i": i, "title": title(i)})))
        .collect();
    store.insert_events(WINDOW, events.clone()).unwrap();
    store.insert_events("b", events).unwrap();
    store
        .set_setting(
            PRIVACY_FILTERS_KEY,
            json!([
                {"enabled": true, "bucket_prefix": "aw-watcher-window", "field": "title",
                 "pattern": "(?i)incognito", "action": "drop"},
                {"enabled": true, "bucket_prefix": "aw-watcher-window", "field": "title",
                 "pattern": "(?i)banking", "action": "redact", "replacement": "REDACTED"}
            ]),
        )
        .unwrap();
    store.close().unwrap();
}

/// Runs `operation` in a child and kills it after `chunks` chunks.
fn run_and_kill(db: &TempDb, operation: &str, chunks: usize) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "kills_mid_operation",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DB, db.path())
        .env(CHILD_OPERATION, operation)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = 0;
    for line in lines.map_while(Result::ok) {
        if line.starts_with("CHUNK") {
            seen += 1;
            if seen == chunks {
                break;
            }
        }
    }
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    assert!(seen >= 1, "{operation}: the child did no chunk");
}

/// Runs the operation in this process.
fn run(store: &Datastore, operation: &str, progress: &mut dyn FnMut()) {
    match operation {
        "rules" => {
            store.apply_privacy_rules(&mut |_| progress()).unwrap();
        }
        "range" => {
            store
                .delete_range("b", at(RANGE.0), at(RANGE.1), &mut |_| progress())
                .unwrap();
        }
        "expire" => {
            store.expire(at(RANGE.1), &mut |_| progress()).unwrap();
        }
        other => panic!("unknown operation {other}"),
    }
}

/// Every stored event of a bucket by its `i`: its spans and title.
fn stored(store: &Datastore, bucket_id: &str) -> HashMap<i64, Vec<(i64, i64, String)>> {
    let mut by_index: HashMap<i64, Vec<(i64, i64, String)>> = HashMap::new();
    for event in store
        .events(bucket_id, EventQuery::default())
        .wait()
        .unwrap()
    {
        let i = event.data["i"].as_i64().unwrap();
        let span = (
            event.timestamp.nanos() / 1_000_000_000,
            event.end().nanos() / 1_000_000_000,
            event.data["title"].as_str().unwrap().to_string(),
        );
        by_index.entry(i).or_default().push(span);
    }
    by_index
}

/// Checks each event is untouched or fully processed; whether all are
/// processed.
fn check(store: &Datastore, operation: &str) -> bool {
    match operation {
        "rules" => unchanged(store, "b") && check_bucket(store, operation, WINDOW),
        "range" => unchanged(store, WINDOW) && check_bucket(store, operation, "b"),
        // Retention applies to every bucket.
        _ => check_bucket(store, operation, WINDOW) & check_bucket(store, operation, "b"),
    }
}

fn unchanged(store: &Datastore, bucket_id: &str) -> bool {
    let events = stored(store, bucket_id);
    for i in 0..EVENTS {
        assert_eq!(
            events[&i],
            [(i * 10, i * 10 + LENGTH, title(i))],
            "{bucket_id} changed"
        );
    }
    true
}

fn check_bucket(store: &Datastore, operation: &str, bucket_id: &str) -> bool {
    let events = stored(store, bucket_id);
    let mut all_done = true;
    for i in 0..EVENTS {
        let (start, end) = (i * 10, i * 10 + LENGTH);
        let untouched = vec![(start, end, title(i))];
        let processed = match operation {
            "rules" => match i % 4 {
                0 => vec![],
                1 => vec![(start, end, "REDACTED".to_string())],
                _ => untouched.clone(),
            },
            "range" => {
                let mut parts = Vec::new();
                if start < RANGE.0 {
                    parts.push((start, end.min(RANGE.0), title(i)));
                }
                if end > RANGE.1 && start < RANGE.1 {
                    parts.push((RANGE.1, end, title(i)));
                } else if start >= RANGE.1 {
                    parts.push((start, end, title(i)));
                }
                parts
            }
            _ => {
                if end < RANGE.1 {
                    vec![]
                } else {
                    untouched.clone()
                }
            }
        };
        let found = events.get(&i).cloned().unwrap_or_default();
        assert!(
            found == untouched || found == processed,
            "{operation}: event {i} half processed: {found:?}"
        );
        all_done &= found == processed;
    }
    all_done
}

#[test]
fn kills_mid_operation() {
    if let Ok(path) = std::env::var(CHILD_DB) {
        let operation = std::env::var(CHILD_OPERATION).unwrap();
        let store = Datastore::open(path).unwrap();
        run(&store, &operation, &mut || {
            let mut out = std::io::stdout().lock();
            writeln!(out, "CHUNK").unwrap();
            out.flush().unwrap();
        });
        store.close().unwrap();
        return;
    }
    for operation in ["rules", "range", "expire"] {
        let db = TempDb::new();
        setup(&db);
        run_and_kill(&db, operation, 3);
        let store = db.open();
        let done = check(&store, operation);
        eprintln!("{operation}: killed, all processed before the re-run: {done}");
        run(&store, operation, &mut || {});
        assert!(
            check(&store, operation),
            "{operation}: the re-run did not finish it"
        );
        store.close().unwrap();
        let conn = rusqlite::Connection::open(db.path()).unwrap();
        let integrity: String = conn
            .query_row("PRAGMA integrity_check", [], |row| row.get(0))
            .unwrap();
        assert_eq!(integrity, "ok", "{operation}");
    }
}
