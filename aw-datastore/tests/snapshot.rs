//! Snapshots (`snapshot.rs`): a consistent copy written while writes go
//! on, complete under its name or not there, never replacing a file.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use aw_datastore::{Datastore, DatastoreError, EventQuery};
use common::{bucket, event, TempDb};
use serde_json::json;

const BUCKET: &str = "b";

/// Every title stored in the database file at `path`.
fn titles_in(path: &Path) -> BTreeSet<String> {
    let store = Datastore::open(path).unwrap();
    let titles = store
        .events(BUCKET, EventQuery::default())
        .wait()
        .unwrap()
        .iter()
        .map(|event| event.data["title"].as_str().unwrap().to_string())
        .collect();
    store.close().unwrap();
    titles
}

fn siblings(folder: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_snapshot_taken_while_writes_flow_holds_every_acknowledged_write() {
    let db = TempDb::new();
    let store = db.open();
    store.create_bucket(bucket(BUCKET)).unwrap();
    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..4)
        .map(|writer| {
            let (store, acknowledged, stop) =
                (store.clone(), Arc::clone(&acknowledged), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::SeqCst) || n < 200 {
                    let title = format!("w{writer}-{n}");
                    let written = event(n, 1, json!({ "title": title }));
                    store.insert_events(BUCKET, vec![written]).unwrap();
                    acknowledged.lock().unwrap().push(title);
                    n += 1;
                }
            })
        })
        .collect();
    // Let the writers get going, then snapshot in the middle of them.
    while acknowledged.lock().unwrap().len() < 400 {
        std::thread::yield_now();
    }
    let folder = tempfile::tempdir().unwrap();
    let target = folder.path().join("snapshot.db");
    let before: BTreeSet<String> = acknowledged.lock().unwrap().iter().cloned().collect();
    let snapshot = store.snapshot(&target).unwrap();
    stop.store(true, Ordering::SeqCst);
    for writer in writers {
        writer.join().unwrap();
    }
    let all: BTreeSet<String> = acknowledged.lock().unwrap().iter().cloned().collect();
    store.close().unwrap();

    assert_eq!(snapshot.path, target);
    assert_eq!(snapshot.bytes, std::fs::metadata(&target).unwrap().len());
    // One checked file: no journal, WAL or partial file beside it.
    assert_eq!(siblings(folder.path()), ["snapshot.db"]);
    let held = titles_in(&target);
    assert!(
        before.is_subset(&held),
        "{} acknowledged before the snapshot are missing",
        before.difference(&held).count()
    );
    assert!(held.is_subset(&all), "the snapshot holds unwritten events");
    assert!(all.len() > held.len(), "writes went on beside the snapshot");
    // The source is intact and complete.
    assert_eq!(titles_in(&db.path()), all);
}

#[test]
fn a_snapshot_never_replaces_a_file_and_needs_its_folder() {
    let db = TempDb::new();
    let store = db.open();
    store.create_bucket(bucket(BUCKET)).unwrap();
    let folder = tempfile::tempdir().unwrap();
    let existing = folder.path().join("taken.db");
    std::fs::write(&existing, b"someone's file").unwrap();
    let refused = |target: &Path| match store.snapshot(target) {
        Err(DatastoreError::InvalidInput(message)) => message,
        other => panic!("not refused: {other:?}"),
    };
    assert!(refused(&existing).contains("exists"));
    assert_eq!(std::fs::read(&existing).unwrap(), b"someone's file");
    let missing = folder.path().join("no-such-folder").join("s.db");
    assert!(refused(&missing).contains("no folder"));
    assert_eq!(siblings(folder.path()), ["taken.db"]);
    // A scratch store is a file like any other: its snapshot is whole.
    let scratch = Datastore::open_in_memory().unwrap();
    scratch.create_bucket(bucket(BUCKET)).unwrap();
    let copy = folder.path().join("m.db");
    scratch.snapshot(&copy).unwrap();
    let copied = Datastore::open(&copy).unwrap();
    assert!(copied.bucket(BUCKET).wait().is_ok());
    copied.close().unwrap();
    store.close().unwrap();
}

#[test]
fn the_partial_file_of_a_killed_snapshot_is_replaced_by_the_next() {
    let db = TempDb::new();
    let store = db.open();
    store.create_bucket(bucket(BUCKET)).unwrap();
    store
        .insert_events(BUCKET, vec![event(0, 1, json!({"title": "kept"}))])
        .unwrap();
    let folder = tempfile::tempdir().unwrap();
    let target = folder.path().join("s.db");
    // What a snapshot killed midway leaves: half a copy and its journal.
    std::fs::write(folder.path().join("s.db.partial"), b"half a copy").unwrap();
    std::fs::write(folder.path().join("s.db.partial-journal"), b"junk").unwrap();
    store.snapshot(&target).unwrap();
    store.close().unwrap();
    assert_eq!(siblings(folder.path()), ["s.db"]);
    assert_eq!(titles_in(&target), BTreeSet::from(["kept".to_string()]));
}
