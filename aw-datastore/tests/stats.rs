//! The count of a whole bucket and the bucket metadata (earliest start,
//! latest end) come from the writer's facts when known; they must always
//! equal what the stored events say: after every kind of write, after a
//! clean close, after a stop without one and after another program wrote
//! the file between two opens.

mod common;

use aw_datastore::{Datastore, EventQuery};
use aw_models::{Duration, Event, Timestamp};
use common::*;
use rusqlite::{params, Connection};

/// Asserts that the count and metadata of `bucket_id` (alone and in the
/// list) are those of its stored events.
fn check(store: &Datastore, bucket_id: &str) {
    let events = store
        .events(bucket_id, EventQuery::default())
        .wait()
        .unwrap();
    let start = events.iter().map(|e| e.timestamp).min();
    let end = events.iter().map(Event::end).max();
    assert_eq!(
        store.count_events(bucket_id, None, None).wait().unwrap(),
        events.len() as u64,
        "count of {bucket_id}"
    );
    let bucket = store.bucket(bucket_id).wait().unwrap();
    assert_eq!(
        (bucket.metadata.start, bucket.metadata.end),
        (start, end),
        "metadata of {bucket_id}"
    );
    let listed = store.buckets().wait().unwrap().remove(bucket_id).unwrap();
    assert_eq!(listed.metadata, bucket.metadata, "listed metadata");
}

fn with_events(id: &str, events: Vec<Event>) -> aw_models::Bucket {
    let mut bucket = bucket(id);
    bucket.events = Some(events);
    bucket
}

/// Every kind of write, checked after each.
fn exercise(store: &Datastore) {
    store
        .create_bucket(with_events(
            "b",
            vec![event(100, 10, app("a")), event(200, 5, app("b"))],
        ))
        .unwrap();
    check(store, "b");
    store.create_bucket(bucket("empty")).unwrap();
    check(store, "empty");
    let stored = store
        .insert_events("b", vec![event(50, 1, app("c")), event(300, 100, app("d"))])
        .unwrap();
    check(store, "b");
    // Replacing by id moves the first event later and the last one earlier.
    let mut first = stored[0].clone();
    first.timestamp = at(150);
    store.insert_events("b", vec![first]).unwrap();
    check(store, "b");
    let mut last = stored[1].clone();
    last.duration = Duration::from_secs(1);
    store.insert_events("b", vec![last.clone()]).unwrap();
    check(store, "b");
    // Heartbeats: a new event, merges that extend it, one that does not merge.
    let pulse = Duration::from_secs(10);
    store
        .heartbeat("b", event(400, 0, app("h")), pulse)
        .unwrap();
    check(store, "b");
    store
        .heartbeat("b", event(405, 3, app("h")), pulse)
        .unwrap();
    check(store, "b");
    store
        .heartbeat("b", event(406, 0, app("h")), pulse)
        .unwrap();
    check(store, "b");
    let newest = store
        .heartbeat("b", event(409, 0, app("x")), pulse)
        .unwrap();
    check(store, "b");
    // Deleting the newest, the oldest, a middle event and a missing one.
    assert!(store.delete_event("b", newest.id.unwrap()).unwrap());
    check(store, "b");
    let events = store.events("b", EventQuery::default()).wait().unwrap();
    let oldest = events.last().unwrap().id.unwrap();
    assert!(store.delete_event("b", oldest).unwrap());
    check(store, "b");
    assert!(store.delete_event("b", events[2].id.unwrap()).unwrap());
    check(store, "b");
    assert!(!store.delete_event("b", 999_999).unwrap());
    check(store, "b");
    // A failing command changes nothing.
    let bad = Event {
        duration: Duration::from_nanos(-1),
        ..event(1, 0, app("bad"))
    };
    assert!(store
        .insert_events("b", vec![event(10, 1, app("ok")), bad])
        .is_err());
    check(store, "b");
    // Imports: a new bucket, then a merge with duplicates.
    store
        .import_bucket(with_events(
            "imported",
            vec![event(1000, 5, app("i")), event(2000, 5, app("j"))],
        ))
        .unwrap();
    check(store, "imported");
    store
        .import_bucket(with_events(
            "imported",
            vec![event(1000, 5, app("i")), event(500, 1, app("k"))],
        ))
        .unwrap();
    check(store, "imported");
    store
        .import_events("imported", vec![event(3000, 7, app("l"))])
        .unwrap();
    check(store, "imported");
    // Deleting every event, then the bucket, then creating it again.
    for event in store
        .events("imported", EventQuery::default())
        .wait()
        .unwrap()
    {
        store.delete_event("imported", event.id.unwrap()).unwrap();
        check(store, "imported");
    }
    store.delete_bucket("b").unwrap();
    store.create_bucket(bucket("b")).unwrap();
    check(store, "b");
    store
        .insert_events("b", vec![event(7, 7, app("n"))])
        .unwrap();
    check(store, "b");
}

#[test]
fn counts_and_metadata_follow_every_kind_of_write() {
    exercise(&Datastore::open_in_memory().unwrap());
    let db = TempDb::new();
    exercise(&db.open());
}

#[test]
fn counts_and_metadata_survive_reopening() {
    let db = TempDb::new();
    let store = db.open();
    exercise(&store);
    store.close().unwrap();
    let store = db.open();
    for id in ["b", "empty", "imported"] {
        check(&store, id);
    }
    store
        .insert_events("b", vec![event(1, 1, app("o"))])
        .unwrap();
    check(&store, "b");
    // Dropping every handle closes too.
    drop(store);
    let store = db.open();
    check(&store, "b");
    store
        .heartbeat("b", event(8, 0, app("n")), Duration::from_secs(5))
        .unwrap();
    check(&store, "b");
    store.close().unwrap();
    check(&db.open(), "b");
}

/// A file left as by a crash: copied while a datastore has it open.
#[test]
fn counts_and_metadata_are_exact_after_a_stop_without_close() {
    let db = TempDb::new();
    let store = db.open();
    exercise(&store);
    store
        .insert_events("b", (20..30).map(|i| event(i, 1, app("p"))).collect())
        .unwrap();
    store.close().unwrap();
    let store = db.open();
    // Writes that leave the id sequence alone, so only the missing close
    // tells that the stored facts are stale.
    let events = store.events("b", EventQuery::default()).wait().unwrap();
    store.delete_event("b", events[1].id.unwrap()).unwrap();
    let mut moved = events[0].clone();
    moved.timestamp = at(-100);
    store.insert_events("b", vec![moved]).unwrap();
    store.force_commit().unwrap();
    let crashed = TempDb::new();
    for suffix in ["", "-wal", ".lock"] {
        let from = format!("{}{suffix}", db.path().display());
        if std::path::Path::new(&from).exists() {
            std::fs::copy(&from, format!("{}{suffix}", crashed.path().display())).unwrap();
        }
    }
    let reopened = crashed.open();
    for id in ["b", "empty", "imported"] {
        check(&reopened, id);
    }
    assert_eq!(
        reopened.count_events("b", None, None).wait().unwrap(),
        store.count_events("b", None, None).wait().unwrap()
    );
}

/// Another program (the reference server, a script) writing the file
/// between two opens: every change must show.
#[test]
fn counts_and_metadata_see_writes_of_another_program() {
    let db = TempDb::new();
    let store = db.open();
    store
        .create_bucket(with_events(
            "b",
            (0..20).map(|i| event(i * 100, 10, app("a"))).collect(),
        ))
        .unwrap();
    store.close().unwrap();
    let foreign: [&dyn Fn(&Connection); 5] = [
        // Deleting an event in the middle.
        &|conn| {
            conn.execute(
                "DELETE FROM events WHERE id = (SELECT id FROM events WHERE starttime = ?1)",
                [at(500).nanos()],
            )
            .unwrap();
        },
        // Moving the end of an event in the middle past every other end.
        &|conn| {
            conn.execute(
                "UPDATE events SET endtime = ?1 WHERE starttime = ?2",
                params![at(99_999).nanos(), at(600).nanos()],
            )
            .unwrap();
        },
        // Inserting with the id the first round freed, below the last id
        // handed out, so the id sequence does not move.
        &|conn| {
            conn.execute(
                "INSERT INTO events (id, bucketrow, starttime, endtime, data)
                 SELECT 6, id, ?1, ?1, '{}' FROM buckets WHERE name = 'b'",
                [at(-10).nanos()],
            )
            .unwrap();
        },
        // A heartbeat of the reference: the newest event grows.
        &|conn| {
            conn.execute(
                "UPDATE events SET endtime = endtime + 1 WHERE starttime = ?1",
                [at(1900).nanos()],
            )
            .unwrap();
        },
        // A new bucket with events.
        &|conn| {
            conn.execute_batch(
                "INSERT INTO buckets (name, type, client, hostname, created) VALUES ('c', 't', 'c', 'h', '');
                 INSERT INTO events (bucketrow, starttime, endtime, data)
                     SELECT id, 5, 6, '{}' FROM buckets WHERE name = 'c';",
            )
            .unwrap();
        },
    ];
    for (round, write) in foreign.iter().enumerate() {
        {
            let conn = Connection::open(db.path()).unwrap();
            write(&conn);
        }
        let store = db.open();
        check(&store, "b");
        if round == 4 {
            check(&store, "c");
        }
        store.close().unwrap();
    }
}

/// The facts track the writes after a reopen too, not just the reopen.
#[test]
fn writes_after_reopening_keep_counts_exact() {
    let db = TempDb::new();
    let store = db.open();
    store.create_bucket(bucket("b")).unwrap();
    for i in 0..50 {
        store
            .heartbeat("b", event(i, 1, app("a")), Duration::from_secs(1))
            .unwrap();
    }
    store.close().unwrap();
    let store = db.open();
    let events = store.events("b", EventQuery::default()).wait().unwrap();
    store.delete_event("b", events[0].id.unwrap()).unwrap();
    check(&store, "b");
    store
        .insert_events(
            "b",
            vec![Event::new(
                Timestamp::from_nanos(-5),
                Duration::ZERO,
                Default::default(),
            )],
        )
        .unwrap();
    check(&store, "b");
    store.close().unwrap();
    check(&db.open(), "b");
}
