//! Health, force commit, close and what a closed datastore answers.

mod common;

use aw_datastore::{Datastore, DatastoreError, EventQuery};
use common::*;

fn assert_closed<T: std::fmt::Debug>(result: aw_datastore::Result<T>) {
    assert!(matches!(result, Err(DatastoreError::Closed)), "{result:?}");
}

#[test]
fn close_commits_and_every_later_call_is_closed() {
    for in_memory in [false, true] {
        let db = TempDb::new();
        let store = if in_memory {
            Datastore::open_in_memory().unwrap()
        } else {
            db.open()
        };
        store.create_bucket(bucket("b")).unwrap();
        store.health().unwrap();
        store.force_commit().unwrap();
        let clone = store.clone();
        store.close().unwrap();
        assert_closed(clone.health());
        assert_closed(clone.buckets().wait());
        assert_closed(clone.events("b", EventQuery::default()).wait());
        assert_closed(clone.insert_events("b", vec![event(1, 1, app("a"))]));
        assert_closed(clone.setting("x").wait());
        assert_closed(clone.close());
        if !in_memory {
            assert!(db.open().bucket("b").wait().is_ok());
        }
    }
}

#[test]
fn dropping_every_handle_keeps_acknowledged_writes() {
    let db = TempDb::new();
    let store = db.open();
    store.create_bucket(bucket("b")).unwrap();
    store
        .heartbeat("b", event(1, 1, app("a")), Default::default())
        .unwrap();
    drop(store);
    // The old worker may still be finishing; opening beside it is safe.
    let store = db.open();
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 1);
}

#[test]
fn a_file_that_is_not_a_database_is_an_error() {
    let db = TempDb::new();
    std::fs::write(
        db.path(),
        b"this is not a database, just some text that is long enough",
    )
    .unwrap();
    // SQLite cannot tell such a file from an encrypted one; the message
    // names both (`key.rs`).
    match Datastore::open(db.path()) {
        Err(DatastoreError::Encryption(message)) => {
            assert!(message.contains("not a database"), "{message}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_newer_schema_is_refused() {
    let db = TempDb::new();
    let conn = rusqlite::Connection::open(db.path()).unwrap();
    conn.execute_batch("PRAGMA user_version = 7").unwrap();
    drop(conn);
    assert!(matches!(
        Datastore::open(db.path()),
        Err(DatastoreError::UnsupportedVersion(7))
    ));
}

#[test]
fn handle_is_cheap_to_share_between_threads() {
    fn assert_shareable<T: Clone + Send + Sync + 'static>() {}
    assert_shareable::<Datastore>();
}

#[test]
fn a_file_in_use_is_refused_until_it_is_closed() {
    let db = TempDb::new();
    let store = db.open();
    store.create_bucket(bucket("b")).unwrap();
    match Datastore::open(db.path()) {
        Err(DatastoreError::InUse(path)) => assert_eq!(path, db.path()),
        other => panic!("opened twice: {other:?}"),
    }
    // The refused open touched nothing: the first handle still works.
    assert!(store.bucket("b").wait().is_ok());
    store.close().unwrap();
    assert!(db.open().bucket("b").wait().is_ok());
}

/// The timed sync runs beside the writer: a second after the last commit
/// the events are in the main file (the WAL was checkpointed), while the
/// datastore stays open. Polls for a bounded time: the sync is timed.
#[test]
fn idle_sync_checkpoints_commits_into_the_main_file() {
    let db = TempDb::new();
    let store = db.open();
    store.create_bucket(bucket("b")).unwrap();
    store
        .insert_events("b", vec![event(1, 1, app("a")), event(3, 1, app("b"))])
        .unwrap();
    let copy = tempfile::tempdir().unwrap();
    let main_file_only = copy.path().join("main.sqlite");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        // A copy of the main file without its WAL holds only what was
        // checkpointed.
        std::fs::copy(db.path(), &main_file_only).unwrap();
        let conn = rusqlite::Connection::open(&main_file_only).unwrap();
        let events: rusqlite::Result<i64> =
            conn.query_row("SELECT count(*) FROM events", [], |row| row.get(0));
        if events.as_ref().is_ok_and(|count| *count == 2) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not checkpointed: {events:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    store.health().unwrap();
}

/// Close empties the WAL, so the next open has no log to read through.
#[test]
fn close_leaves_an_empty_wal() {
    let db = TempDb::new();
    let store = db.open();
    store.create_bucket(bucket("b")).unwrap();
    let events: Vec<_> = (0..2_000).map(|i| event(i, 1, app("a"))).collect();
    store.insert_events("b", events).unwrap();
    store.close().unwrap();
    let wal = std::path::PathBuf::from(format!("{}-wal", db.path().display()));
    let size = std::fs::metadata(&wal).map_or(0, |meta| meta.len());
    assert_eq!(size, 0);
    assert_eq!(
        db.open().count_events("b", None, None).wait().unwrap(),
        2_000
    );
}
