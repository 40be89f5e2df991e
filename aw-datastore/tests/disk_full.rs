//! A really full file system: commits fail with an error to their writers,
//! nothing unacknowledged is stored, and writes work again once space is
//! freed.
//!
//! Needs to mount a small tmpfs (root, as in CI). Under CI (`CI=true`),
//! which runs as root, a test that cannot mount fails. Elsewhere it says
//! so loudly (NOT RUN) and passes: the same batch failure path is proven
//! by the unit tests in `src/tests.rs` (injected commit failures and
//! `SQLITE_FULL` from `max_page_count`), and the WAL syncer's schedule
//! (size checks, recovery) by its unit tests.
//!
//! `writes_come_back_soon_after_space_is_freed_under_constant_writes`
//! prints how long writes took to come back and the WAL's largest size
//! (`--nocapture`).

mod common;
#[path = "support/tmpfs.rs"]
mod tmpfs;

use std::path::Path;

use aw_datastore::{Datastore, DatastoreError};
use common::*;
use serde_json::json;
use tmpfs::{fill, Mount};

#[test]
fn full_disk_fails_commits_and_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let Some(_mount) = mounted(dir.path(), "4m", "full_disk_fails_commits_and_recovers") else {
        return;
    };
    let store = Datastore::open(dir.path().join("db.sqlite")).unwrap();
    store.create_bucket(bucket("b")).unwrap();
    store.force_commit().unwrap();
    let filler = fill(dir.path());
    let big = "y".repeat(16 * 1024);
    let mut acknowledged = Vec::new();
    let mut failed = 0;
    for i in 0..200 {
        match store.insert_events("b", vec![event(i, 0, json!({"i": i, "big": big}))]) {
            Ok(stored) => acknowledged.push(stored[0].clone()),
            Err(DatastoreError::Storage(err)) => {
                assert_eq!(
                    err.sqlite_error_code(),
                    Some(rusqlite::ErrorCode::DiskFull),
                    "{err}"
                );
                failed += 1;
            }
            Err(other) => panic!("unexpected error {other}"),
        }
    }
    println!(
        "full disk: {} acknowledged, {failed} refused",
        acknowledged.len()
    );
    assert!(failed > 0, "the file system never filled up");
    store.health().unwrap();
    // Nothing refused is stored; everything acknowledged is.
    assert_eq!(
        store.count_events("b", None, None).wait().unwrap(),
        acknowledged.len() as u64
    );
    for event in &acknowledged {
        assert_eq!(&store.event("b", event.id.unwrap()).wait().unwrap(), event);
    }
    // Space comes back: writes work again and survive a reopen.
    std::fs::remove_file(filler).unwrap();
    let after = store
        .insert_events("b", vec![event(1000, 0, json!({"after": true}))])
        .unwrap();
    store.close().unwrap();
    let store = Datastore::open(dir.path().join("db.sqlite")).unwrap();
    assert_eq!(
        store.count_events("b", None, None).wait().unwrap(),
        acknowledged.len() as u64 + 1
    );
    assert!(store.event("b", after[0].id.unwrap()).wait().is_ok());
    store.close().unwrap();
    let conn = rusqlite::Connection::open(dir.path().join("db.sqlite")).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}

/// [`tmpfs::mounted`] with what covers these tests where it cannot run.
fn mounted(dir: &Path, size: &str, test: &str) -> Option<Mount> {
    tmpfs::mounted(
        dir,
        size,
        test,
        "the schedule it relies on is covered by the WAL syncer's unit tests and the injected \
         failures of src/tests.rs",
    )
}

/// What the writing thread saw.
#[derive(Default)]
struct Outcomes {
    acknowledged: Vec<aw_models::Event>,
    /// When each refused write was refused.
    refused: Vec<std::time::Instant>,
    /// When each acknowledged write was acknowledged.
    acknowledged_at: Vec<std::time::Instant>,
}

#[test]
fn writes_come_back_soon_after_space_is_freed_under_constant_writes() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    let dir = tempfile::tempdir().unwrap();
    let Some(_mount) = mounted(
        dir.path(),
        "64m",
        "writes_come_back_soon_after_space_is_freed",
    ) else {
        return;
    };
    let path = dir.path().join("db.sqlite");
    let wal = dir.path().join("db.sqlite-wal");
    let store = Datastore::open(&path).unwrap();
    store.create_bucket(bucket("b")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let outcomes = Arc::new(Mutex::new(Outcomes::default()));
    // A watcher that never stops: a 1 KB event every 4 ms. Each commit
    // adds a few pages to the WAL, several times the event's size.
    let writer = std::thread::spawn({
        let (store, stop, outcomes) = (store.clone(), stop.clone(), outcomes.clone());
        move || {
            let text = "w".repeat(1024);
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                let result =
                    store.insert_events("b", vec![event(i, 0, json!({"i": i, "t": text}))]);
                let mut seen = outcomes.lock().unwrap();
                match result {
                    Ok(stored) => {
                        seen.acknowledged.push(stored[0].clone());
                        seen.acknowledged_at.push(Instant::now());
                    }
                    Err(DatastoreError::Storage(_)) => seen.refused.push(Instant::now()),
                    Err(other) => panic!("unexpected error {other}"),
                }
                drop(seen);
                i += 1;
                std::thread::sleep(Duration::from_millis(4));
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut largest_wal = 0u64;
    let mut watch = |until: &dyn Fn(&Outcomes) -> bool| loop {
        largest_wal = largest_wal.max(std::fs::metadata(&wal).map_or(0, |m| m.len()));
        if until(&outcomes.lock().unwrap()) {
            break;
        }
        assert!(Instant::now() < deadline, "timed out");
        std::thread::sleep(Duration::from_millis(10));
    };
    watch(&|seen| seen.acknowledged.len() >= 50);
    let filler = fill(dir.path());
    // The disk is full: writes are refused for a while.
    watch(&|seen| seen.refused.len() >= 40);
    // Some space comes back: several times what the writes of the next
    // seconds store (~2 MB), but less than a WAL that is not folded in
    // would take meanwhile (~2 MB a second).
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&filler)
        .unwrap();
    let length = file.metadata().unwrap().len();
    file.set_len(length.saturating_sub(12 << 20)).unwrap();
    drop(file);
    let freed = Instant::now();
    watch(&|seen| seen.acknowledged_at.last().is_some_and(|at| *at > freed));
    let back = *outcomes.lock().unwrap().acknowledged_at.last().unwrap();
    // And they keep working: eight more seconds of writes, none refused
    // once the first came back.
    std::thread::sleep(Duration::from_secs(8));
    watch(&|_| true);
    stop.store(true, Ordering::SeqCst);
    writer.join().unwrap();
    let seen = std::mem::take(&mut *outcomes.lock().unwrap());
    let refused_after = seen.refused.iter().filter(|at| **at > back).count();
    println!(
        "full disk, then freed: writes came back {:?} after the space was freed; \
         largest WAL {} KB; {} acknowledged, {} refused ({} after they came back)",
        back - freed,
        largest_wal / 1024,
        seen.acknowledged.len(),
        seen.refused.len(),
        refused_after
    );
    assert_eq!(refused_after, 0, "writes failed again after coming back");
    // A graceful stop, then every acknowledged event is there.
    store.close().unwrap();
    std::fs::remove_file(&filler).unwrap();
    let store = Datastore::open(&path).unwrap();
    let stored = store.events("b", Default::default()).wait().unwrap();
    assert_eq!(stored.len(), seen.acknowledged.len());
    let mut ids: Vec<i64> = stored.iter().map(|event| event.id.unwrap()).collect();
    ids.sort_unstable();
    let mut expected: Vec<i64> = seen
        .acknowledged
        .iter()
        .map(|event| event.id.unwrap())
        .collect();
    expected.sort_unstable();
    assert_eq!(ids, expected);
    store.close().unwrap();
}

#[test]
fn a_graceful_stop_on_a_full_disk_keeps_what_was_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let Some(_mount) = mounted(dir.path(), "4m", "a_graceful_stop_on_a_full_disk") else {
        return;
    };
    let path = dir.path().join("db.sqlite");
    let store = Datastore::open(&path).unwrap();
    store.create_bucket(bucket("b")).unwrap();
    let big = "z".repeat(8 * 1024);
    let mut acknowledged = 0;
    let mut refused = 0;
    let _filler = fill(dir.path());
    for i in 0..400 {
        match store.insert_events("b", vec![event(i, 0, json!({"i": i, "big": big}))]) {
            Ok(_) => acknowledged += 1,
            Err(DatastoreError::Storage(_)) => refused += 1,
            Err(other) => panic!("unexpected error {other}"),
        }
    }
    assert!(refused > 0, "the disk never filled");
    // Still full: the stop closes cleanly all the same.
    store.close().unwrap();
    // Reopened with room again: everything acknowledged is there.
    drop(_filler);
    std::fs::remove_file(dir.path().join("filler")).unwrap();
    let store = Datastore::open(&path).unwrap();
    assert_eq!(
        store.count_events("b", None, None).wait().unwrap(),
        acknowledged
    );
    store.close().unwrap();
}
