//! Failure of a batch, through the worker's test hooks: writers of a batch
//! whose commit fails get an error and nothing of theirs is stored; the
//! worker keeps serving and later writes succeed. (`tests/disk_full.rs`
//! does the same with a really full file system where it can mount one.)
//! Also when the writer's bucket facts (`stats.rs`) are trusted, through
//! the `stats_known` hook.

use aw_models::{Bucket, BucketMetadata, Data, Duration, Event, Timestamp};
use serde_json::json;

use crate::{Datastore, DatastoreError, EventQuery};

fn bucket(id: &str) -> Bucket {
    Bucket {
        id: id.to_string(),
        kind: "test".to_string(),
        client: "test".to_string(),
        hostname: "host".to_string(),
        created: None,
        data: Data::new(),
        metadata: BucketMetadata::default(),
        events: None,
        last_updated: None,
    }
}

fn event(secs: i64, data: serde_json::Value) -> Event {
    let serde_json::Value::Object(data) = data else {
        panic!("not an object")
    };
    Event::new(
        Timestamp::from_nanos(secs * 1_000_000_000),
        Duration::ZERO,
        data,
    )
}

fn file_store() -> (tempfile::TempDir, Datastore) {
    let dir = tempfile::tempdir().unwrap();
    let store = Datastore::open(dir.path().join("db.sqlite")).unwrap();
    (dir, store)
}

#[test]
fn failed_commit_fails_every_writer_of_the_batch() {
    let (_dir, store) = file_store();
    store.create_bucket(bucket("b")).unwrap();
    store.fail_commits(u32::MAX).unwrap();
    let results: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|thread| {
                let store = store.clone();
                scope.spawn(move || {
                    (0..20)
                        .map(|i| store.insert_events("b", vec![event(thread * 100 + i, json!({}))]))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert_eq!(results.len(), 160);
    for result in results {
        assert!(
            matches!(result, Err(DatastoreError::Storage(_))),
            "{result:?}"
        );
    }
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 0);
    // The cause is gone: the worker serves on.
    store.fail_commits(0).unwrap();
    store.insert_events("b", vec![event(1, json!({}))]).unwrap();
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 1);
}

#[test]
fn only_acknowledged_writes_of_a_mixed_run_are_stored() {
    let (_dir, store) = file_store();
    store.create_bucket(bucket("b")).unwrap();
    store.fail_commits(3).unwrap();
    let results: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|thread| {
                let store = store.clone();
                scope.spawn(move || {
                    (0..50)
                        .map(|i| {
                            let data = json!({"t": thread, "i": i});
                            (data.clone(), store.insert_events("b", vec![event(i, data)]))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let stored = store.events("b", EventQuery::default()).wait().unwrap();
    let failed = results.iter().filter(|(_, result)| result.is_err()).count();
    assert!(
        failed >= 3,
        "three commits failed, each failing at least one writer"
    );
    assert_eq!(stored.len(), results.len() - failed);
    for (data, result) in &results {
        let present = stored
            .iter()
            .any(|e| serde_json::Value::Object(e.data.clone()) == *data);
        assert_eq!(present, result.is_ok(), "{data}: {result:?}");
    }
}

#[test]
fn failed_commit_drops_the_remembered_heartbeat() {
    let (_dir, store) = file_store();
    store.create_bucket(bucket("b")).unwrap();
    let pulse = Duration::from_secs(10);
    let first = store
        .heartbeat("b", event(0, json!({"a": 1})), pulse)
        .unwrap();
    store.fail_commits(1).unwrap();
    // This would start a new event; its batch fails.
    assert!(store
        .heartbeat("b", event(5, json!({"a": 2})), pulse)
        .is_err());
    // So the next heartbeat merges with the stored event, not the lost one.
    let merged = store
        .heartbeat("b", event(8, json!({"a": 1})), pulse)
        .unwrap();
    assert_eq!(merged.id, first.id);
    let all = store.events("b", EventQuery::default()).wait().unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].duration, Duration::from_secs(8));
}

#[test]
fn the_writer_counts_its_commits_failed_ones_too() {
    let (_dir, store) = file_store();
    store.create_bucket(bucket("b")).unwrap();
    let before = store.writer_stats();
    assert_eq!(before.queued, 0);
    let pulse = Duration::from_secs(10);
    // One at a time, each answered after its own commit.
    for secs in [0, 5, 30] {
        store
            .heartbeat("b", event(secs, json!({"a": 1})), pulse)
            .unwrap();
    }
    store.fail_commits(1).unwrap();
    assert!(store.heartbeat("b", event(60, json!({})), pulse).is_err());
    let after = store.writer_stats();
    assert_eq!(after.commits.count(), before.commits.count() + 4);
    assert!(after.commits.total > before.commits.total);
    assert_eq!(after.queued, 0);
}

#[test]
fn full_file_fails_the_write_and_recovers_when_space_returns() {
    // max_page_count makes SQLite refuse to grow the file with SQLITE_FULL,
    // the error a full disk gives while pages are allocated. (A full disk
    // at commit time, when WAL frames are written, is tests/disk_full.rs.)
    let (_dir, store) = file_store();
    store.create_bucket(bucket("b")).unwrap();
    store.force_commit().unwrap();
    let current = store.limit_pages(1).unwrap();
    assert!(current >= 1);
    let big = "x".repeat(64 * 1024);
    let mut acknowledged = 0;
    let mut failures = 0;
    for i in 0..50 {
        match store.insert_events("b", vec![event(i, json!({ "big": big }))]) {
            Ok(_) => acknowledged += 1,
            Err(DatastoreError::Storage(err)) => {
                assert_eq!(err.sqlite_error_code(), Some(rusqlite::ErrorCode::DiskFull));
                failures += 1;
            }
            Err(other) => panic!("{other}"),
        }
    }
    assert_eq!(acknowledged, 0);
    assert_eq!(failures, 50);
    store.health().unwrap();
    store.limit_pages(1_000_000).unwrap();
    store
        .insert_events("b", vec![event(100, json!({ "big": big }))])
        .unwrap();
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 1);
}

#[test]
fn a_dead_worker_answers_closed_and_never_hangs() {
    for in_memory in [false, true] {
        let (_dir, file) = file_store();
        let store = if in_memory {
            Datastore::open_in_memory().unwrap()
        } else {
            file
        };
        store.create_bucket(bucket("b")).unwrap();
        // Callers busy at the moment of death finish with Ok or Closed.
        std::thread::scope(|scope| {
            for thread in 0..4 {
                let store = store.clone();
                scope.spawn(move || {
                    for i in 0.. {
                        let write = store.insert_events("b", vec![event(i, json!({}))]);
                        let read = store.count_events("b", None, None).wait();
                        match (write, read) {
                            (Err(DatastoreError::Closed), _) | (_, Err(DatastoreError::Closed)) => {
                                break
                            }
                            (Ok(_), Ok(_)) => {}
                            other => panic!("thread {thread}: {other:?}"),
                        }
                    }
                });
            }
            let _ = store.writer.send(crate::worker::WorkerMessage::Panic);
        });
        assert!(matches!(store.health(), Err(DatastoreError::Closed)));
        assert!(matches!(
            store.insert_events("b", vec![event(1, json!({}))]),
            Err(DatastoreError::Closed)
        ));
        assert!(matches!(
            store.buckets().wait(),
            Err(DatastoreError::Closed)
        ));
        assert!(matches!(
            store.events("b", EventQuery::default()).wait(),
            Err(DatastoreError::Closed)
        ));
        assert!(matches!(store.close(), Err(DatastoreError::Closed)));
    }
}

/// Pings the writer until it knows the facts of `bucket_id` (its idle
/// scans run between the pings); whether it came to know them.
fn learns_stats(store: &Datastore, bucket_id: &str) -> bool {
    for _ in 0..100_000 {
        if store.stats_known(bucket_id).unwrap() {
            return true;
        }
        std::thread::yield_now();
    }
    false
}

#[test]
fn facts_are_trusted_after_a_clean_close_only() {
    let (dir, store) = file_store();
    let path = dir.path().join("db.sqlite");
    store.create_bucket(bucket("b")).unwrap();
    store
        .insert_events("b", vec![event(1, json!({})), event(2, json!({}))])
        .unwrap();
    assert!(store.stats_known("b").unwrap());
    store.close().unwrap();
    // A clean close: known at once, no scan needed.
    let store = Datastore::open(&path).unwrap();
    assert!(store.stats_known("b").unwrap());
    store.insert_events("b", vec![event(3, json!({}))]).unwrap();
    // The writer dies: the facts stored by the close above are stale and
    // must not be taken back; they are learnt again instead.
    let _ = store.writer.send(crate::worker::WorkerMessage::Panic);
    while store.health().is_ok() {
        std::thread::yield_now();
    }
    let store = Datastore::open(&path).unwrap();
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 3);
    assert!(learns_stats(&store, "b"));
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 3);
    drop(store);
    let store = Datastore::open(&path).unwrap();
    assert!(store.stats_known("b").unwrap());
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 3);
    store.close().unwrap();
    // Another program writes: learnt again.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("DELETE FROM events WHERE id = 1", []).unwrap();
    drop(conn);
    let store = Datastore::open(&path).unwrap();
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 2);
    assert!(learns_stats(&store, "b"));
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 2);
}

#[test]
fn a_command_failing_after_some_writes_leaves_none_of_them() {
    // Each call below is alone in its batch, so the failing insert is the
    // command that opened its transaction (no savepoint of its own): the
    // transaction's rollback must take back the events it wrote first.
    let (_dir, store) = file_store();
    store.create_bucket(bucket("b")).unwrap();
    store
        .insert_events("b", vec![event(1, json!({"a": 1}))])
        .unwrap();
    let mut bad = event(4, json!({"a": 4}));
    bad.duration = Duration::from_nanos(-1);
    let batch = vec![event(2, json!({"a": 2})), event(3, json!({"a": 3})), bad];
    assert!(matches!(
        store.insert_events("b", batch),
        Err(DatastoreError::InvalidInput(_))
    ));
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 1);
    let stored = store.events("b", EventQuery::default()).wait().unwrap();
    assert_eq!(stored.len(), 1);
    // The bucket's facts were not moved by the failed command either,
    // and the next write works.
    let second = |secs: i64| Some(Timestamp::from_nanos(secs * 1_000_000_000));
    assert_eq!(store.bucket("b").wait().unwrap().metadata.end, second(1));
    store
        .insert_events("b", vec![event(5, json!({"a": 5}))])
        .unwrap();
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 2);
    assert_eq!(store.bucket("b").wait().unwrap().metadata.end, second(5));
    store.force_commit().unwrap();
    assert_eq!(
        store
            .events("b", EventQuery::default())
            .wait()
            .unwrap()
            .len(),
        2
    );
}

/// A database file with bucket "b" holding 30,000 half-second events, one
/// a second with the data `data` makes of its number, and rows another
/// program stored as it liked (start second, SQL of the data), reopened
/// with its bucket facts learnt.
fn long_bucket(
    data: impl Fn(i64) -> serde_json::Value,
    stored: &[(i64, &str)],
) -> (tempfile::TempDir, Datastore) {
    let (dir, store) = file_store();
    let path = dir.path().join("db.sqlite");
    store.create_bucket(bucket("b")).unwrap();
    let events: Vec<Event> = (0..30_000)
        .map(|i| {
            let mut event = event(i, data(i));
            event.duration = Duration::from_nanos(500_000_000);
            event
        })
        .collect();
    for chunk in events.chunks(10_000) {
        store.insert_events("b", chunk.to_vec()).unwrap();
    }
    store.close().unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    for (start, value) in stored {
        conn.execute(
            &format!(
                "INSERT INTO events (bucketrow, starttime, endtime, data)
                 SELECT id, ?1, ?2, {value} FROM buckets WHERE name = 'b'"
            ),
            rusqlite::params![start * 1_000_000_000_i64, start * 1_000_000_000_i64 + 1],
        )
        .unwrap();
    }
    drop(conn);
    let store = Datastore::open(&path).unwrap();
    assert!(learns_stats(&store, "b"));
    (dir, store)
}

/// A long read decodes its data texts on a second thread
/// (`queries::pipelined_shared_events`); it must answer what a read on one
/// thread answers, rows another program stored badly left out alike.
#[test]
fn a_long_read_decoded_on_a_second_thread_answers_as_one_thread_does() {
    let data = |i: i64| json!({"app": format!("app{}", i % 7), "title": format!("page {}", i % 3_001), "n": i % 5});
    let (_dir, store) = long_bucket(
        data,
        &[
            (10, "'not json'"),
            (20, "'[1, 2]'"),
            (30, "CAST('{}' AS BLOB)"),
            // Not UTF-8, twice: both rows are left out.
            (40, "CAST(x'7b2261223a22ff227d' AS TEXT)"),
            (29_000, "CAST(x'7b2261223a22ff227d' AS TEXT)"),
        ],
    );
    let second = |secs: i64| Some(Timestamp::from_nanos(secs * 1_000_000_000));
    let before = crate::queries::PIPELINED_READS.load(std::sync::atomic::Ordering::SeqCst);
    for (start, end) in [
        (None, None),
        (second(5), second(28_000)),
        (second(0), second(30_000)),
    ] {
        let query = EventQuery {
            start,
            end,
            limit: None,
        };
        let shared: Vec<Event> = store
            .events_as("b", query, crate::Shared)
            .wait()
            .unwrap()
            .into_iter()
            .map(aw_models::SharedEvent::into_event)
            .collect();
        let decoded = store.events("b", query).wait().unwrap();
        assert!(decoded.len() > 20_000);
        assert_eq!(shared, decoded, "{query:?}");
    }
    let after = crate::queries::PIPELINED_READS.load(std::sync::atomic::Ordering::SeqCst);
    assert!(after >= before + 3, "the reads took the two-thread path");
    let all = store.events("b", EventQuery::default()).wait().unwrap();
    assert_eq!(all.len(), 30_000);
}

/// What a `Projected` read must answer for `query`: the events `events` gives,
/// with their data reduced to `keys`, equal reduced objects shared, and
/// one class per distinct whole object.
/// A short read (`reduced` false) gives its events whole, and no classes.
fn assert_kept(store: &Datastore, query: EventQuery, keys: &[String], reduced: bool) {
    let kept = store
        .events_as("b", query, crate::Projected(keys.to_vec()))
        .wait()
        .unwrap();
    let whole = store.events("b", query).wait().unwrap();
    assert_eq!(kept.events.len(), whole.len(), "{query:?}");
    if !reduced {
        assert!(kept.classes.is_empty());
        let events: Vec<Event> = kept
            .events
            .into_iter()
            .map(aw_models::SharedEvent::into_event)
            .collect();
        assert_eq!(events, whole);
        return;
    }
    assert_eq!(kept.classes.len(), whole.len(), "{query:?}");
    let mut of_class: std::collections::HashMap<u32, &aw_models::Data> = Default::default();
    let mut by_content: Vec<(aw_models::Data, *const aw_models::EventData)> = Vec::new();
    for ((event, class), whole) in kept.events.iter().zip(&kept.classes).zip(&whole) {
        assert_eq!(
            (event.id, event.timestamp, event.duration),
            (whole.id, whole.timestamp, whole.duration)
        );
        let reduced: aw_models::Data = whole
            .data
            .iter()
            .filter(|(key, _)| keys.contains(key))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        assert_eq!(event.data.to_map(), reduced);
        match by_content.iter().find(|(content, _)| *content == reduced) {
            Some((_, object)) => assert!(std::ptr::eq(*object, &*event.data), "shared"),
            None => by_content.push((reduced, &*event.data)),
        }
        let known = of_class.entry(*class).or_insert(&whole.data);
        assert_eq!(*known, &whole.data, "one class, one whole object");
    }
    let distinct: std::collections::HashSet<String> = whole
        .iter()
        .map(|event| serde_json::to_string(&event.data).unwrap())
        .collect();
    assert_eq!(
        of_class.len(),
        distinct.len(),
        "one whole object, one class"
    );
}

/// A read of some keys only (`Projected`), on one thread and on two,
/// with texts of equal objects written differently and bad rows.
#[test]
fn a_kept_read_reduces_the_data_and_classes_the_whole_objects() {
    let data = |i: i64| json!({"url": format!("u{}", i % 11), "title": format!("t{}", i % 3), "tabs": i % 5});
    let (_dir, store) = long_bucket(
        data,
        &[
            (10, r#"'{"tabs":1,"title":"t1","url":"u10"}'"#),
            (11, r#"'{"url":"u10","tabs":1,"title":"t1"}'"#),
            (12, r#"'{"url":"u10","title":"t1","tabs":1.0}'"#),
            (13, r#"'{"url":"u10","url":"u3","title":"t1"}'"#),
            (14, "'not json'"),
            (15, "'{}'"),
        ],
    );
    let second = |secs: i64| Some(Timestamp::from_nanos(secs * 1_000_000_000));
    let keys = ["url".to_string(), "title".to_string()];
    let before = crate::queries::PIPELINED_READS.load(std::sync::atomic::Ordering::SeqCst);
    for (start, end, reduced) in [
        (None, None, true),
        (second(5), second(200), false),
        (second(5), second(15_000), false),
        (second(0), second(30_000), true),
    ] {
        let query = EventQuery {
            start,
            end,
            limit: None,
        };
        assert_kept(&store, query, &keys, reduced);
        assert_kept(&store, query, &[], reduced);
    }
    let after = crate::queries::PIPELINED_READS.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        after >= before + 4,
        "the long reads took the two-thread path"
    );
}

/// A write operation a feature would add: one job in the feature's own
/// module (here, this test), and nothing in the writer, the messages or
/// the handle. It stamps a note into every event of a bucket and keeps the
/// writer's memory true: the last heartbeat is forgotten (its row
/// changed) and the change counter moves, so a push compares the bucket.
impl Datastore {
    fn stamp(&self, bucket_id: &str, note: &str) -> crate::Result<usize> {
        let (bucket_id, note) = (bucket_id.to_string(), note.to_string());
        self.write(move |conn, memory| {
            let row_id = crate::queries::bucket_row(conn, &bucket_id)?;
            let stamped = conn.execute(
                "UPDATE events SET data = json_set(data, '$.note', ?2) WHERE bucketrow = ?1",
                rusqlite::params![row_id, note],
            )?;
            memory.last_events.forget(row_id);
            crate::changes::note_change(conn, &bucket_id, None)?;
            if note.is_empty() {
                // A job that fails after writing: nothing of it stays.
                return Err(DatastoreError::InvalidInput("an empty note".to_string()));
            }
            Ok(stamped)
        })
    }
}

#[test]
fn a_feature_adds_a_write_as_one_job() {
    let (dir, store) = file_store();
    store.create_bucket(bucket("b")).unwrap();
    let zero = Duration::ZERO;
    store
        .heartbeat("b", event(0, json!({"app": "x"})), Duration::from_secs(10))
        .unwrap();
    store
        .heartbeat("b", event(5, json!({"app": "x"})), Duration::from_secs(10))
        .unwrap();
    assert_eq!(store.stamp("b", "seen").unwrap(), 1);
    let events = store.events("b", EventQuery::default()).wait().unwrap();
    assert_eq!(events[0].data["note"], "seen");
    // The stamped event is not the remembered one any more: an equal
    // heartbeat without the note starts a new event.
    store
        .heartbeat("b", event(6, json!({"app": "x"})), zero)
        .unwrap();
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 2);
    let changes = |store: &Datastore| {
        store
            .read_pooled(|conn, _| crate::changes::change_count(conn, "b"))
            .unwrap()
    };
    assert_eq!(changes(&store), 1);
    // A job that fails changes nothing, and the writer goes on.
    assert!(matches!(
        store.stamp("b", ""),
        Err(DatastoreError::InvalidInput(_))
    ));
    assert!(matches!(
        store.stamp("missing", "x"),
        Err(DatastoreError::NoSuchBucket(_))
    ));
    let events = store.events("b", EventQuery::default()).wait().unwrap();
    assert_eq!(events.len(), 2);
    assert!(events[0].data.get("note").is_none());
    assert_eq!(events[1].data["note"], "seen");
    assert_eq!(changes(&store), 1);
    // And stored as any write: acknowledged means committed.
    drop(store);
    let store = Datastore::open(dir.path().join("db.sqlite")).unwrap();
    let events = store.events("b", EventQuery::default()).wait().unwrap();
    assert_eq!(events[1].data["note"], "seen");
}
