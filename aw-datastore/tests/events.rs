//! Event insert, replace, listing, paging, single get, delete and count.

mod common;

use aw_datastore::{Datastore, DatastoreError, EventQuery};
use aw_models::{Duration, Event, SharedEvent};
use common::*;
use serde_json::json;
use std::future::IntoFuture;

fn query(start: Option<i64>, end: Option<i64>, limit: Option<usize>) -> EventQuery {
    EventQuery {
        start: start.map(at),
        end: end.map(at),
        limit,
    }
}

#[test]
fn inserted_events_come_back_newest_first_with_ids() {
    let (_db, store) = with_bucket();
    let stored = store
        .insert_events(
            "b",
            vec![
                event(10, 5, app("a")),
                event(30, 5, app("c")),
                event(20, 5, app("b")),
            ],
        )
        .unwrap();
    assert!(stored.iter().all(|e| e.id.is_some()));
    let listed = store.events("b", EventQuery::default()).wait().unwrap();
    assert_eq!(spans(&listed), vec![(30, 5), (20, 5), (10, 5)]);
    assert_eq!(listed[0].data, object(app("c")));
    assert_eq!(store.insert_events("b", vec![]).unwrap(), vec![]);
}

#[test]
fn data_and_nanoseconds_are_kept_exactly() {
    let (_db, store) = with_bucket();
    let data = object(json!({"": 1, "a.b": [1, 1.0, {"$x": null}], "ünï": "☃"}));
    let exact = Event::new(
        aw_models::Timestamp::from_nanos(1_622_538_000_123_456_789),
        Duration::from_nanos(1_500_000_001),
        data,
    );
    let id = store.insert_events("b", vec![exact.clone()]).unwrap()[0].id;
    let fetched = store.event("b", id.unwrap()).wait().unwrap();
    assert_eq!(
        Event {
            id: None,
            ..fetched
        },
        exact
    );
}

#[test]
fn range_selects_inclusively_and_clips() {
    let (_db, store) = with_bucket();
    store
        .insert_events(
            "b",
            vec![
                event(0, 10, app("ends-at-start")),
                event(5, 10, app("crosses-start")),
                event(20, 5, app("inside")),
                event(28, 10, app("crosses-end")),
                event(30, 5, app("starts-at-end")),
                event(31, 5, app("after")),
            ],
        )
        .unwrap();
    let listed = store
        .events("b", query(Some(10), Some(30), None))
        .wait()
        .unwrap();
    assert_eq!(
        spans(&listed),
        vec![(30, 0), (28, 2), (20, 5), (10, 5), (10, 0)]
    );
    assert_eq!(
        store
            .count_events("b", Some(at(10)), Some(at(30)))
            .wait()
            .unwrap(),
        5
    );
    // Limit keeps the newest.
    let limited = store
        .events("b", query(Some(10), Some(30), Some(2)))
        .wait()
        .unwrap();
    assert_eq!(spans(&limited), vec![(30, 0), (28, 2)]);
    assert!(store
        .events("b", query(None, None, Some(0)))
        .wait()
        .unwrap()
        .is_empty());
    // start > end selects nothing.
    assert!(store
        .events("b", query(Some(30), Some(10), None))
        .wait()
        .unwrap()
        .is_empty());
    assert_eq!(
        store
            .count_events("b", Some(at(30)), Some(at(10)))
            .wait()
            .unwrap(),
        0
    );
    // One-sided bounds (B-2: count honours them).
    assert_eq!(
        store.count_events("b", Some(at(31)), None).wait().unwrap(),
        3
    );
    assert_eq!(
        store.count_events("b", None, Some(at(5))).wait().unwrap(),
        2
    );
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 6);
    let before = store
        .events("b", query(None, Some(5), None))
        .wait()
        .unwrap();
    assert_eq!(spans(&before), vec![(5, 0), (0, 5)]);
}

#[test]
fn equal_timestamps_order_by_end_then_insertion() {
    let (_db, store) = with_bucket();
    let stored = store
        .insert_events(
            "b",
            vec![
                event(10, 9, app("x")),
                event(10, 3, app("y")),
                event(10, 3, app("z")),
            ],
        )
        .unwrap();
    let listed = store.events("b", EventQuery::default()).wait().unwrap();
    let ids: Vec<_> = listed.iter().map(|e| e.id).collect();
    assert_eq!(ids, vec![stored[1].id, stored[2].id, stored[0].id]);
}

#[test]
fn reads_with_and_without_a_limit_agree_on_the_order_of_ties() {
    // Reads without a limit may walk the index oldest first and reverse
    // what they found; reads with one walk it newest first. All must give
    // the order of the spec, ties included.
    // Rows written oldest first ("b") are walked oldest first, rows
    // written newest first ("c") newest first.
    let (_db, store) = with_bucket();
    store.create_bucket(bucket("c")).unwrap();
    let mut events = Vec::new();
    for start in [10, 20, 20, 20, 30, 30] {
        for length in [4, 1, 4] {
            events.push(event(start, length, app(&format!("{start}-{length}"))));
        }
    }
    store.insert_events("b", events.clone()).unwrap();
    events.reverse();
    store.insert_events("c", events).unwrap();
    let ranges = [(None, None), (Some(12), Some(31)), (Some(20), Some(20))];
    for (bucket, (start, end)) in ["b", "c"]
        .into_iter()
        .flat_map(|bucket| ranges.map(|range| (bucket, range)))
    {
        let unlimited = store
            .events(bucket, query(start, end, None))
            .wait()
            .unwrap();
        let limited = store
            .events(bucket, query(start, end, Some(1000)))
            .wait()
            .unwrap();
        assert_eq!(unlimited, limited);
        let shared: Vec<Event> = store
            .events_as(bucket, query(start, end, None), aw_datastore::Shared)
            .wait()
            .unwrap()
            .into_iter()
            .map(Event::from)
            .collect();
        assert_eq!(shared, limited);
        let json: Vec<Event> = serde_json::from_slice(
            &store
                .events_as(bucket, query(start, end, None), aw_datastore::Json)
                .wait()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(json, limited);
        let newest: Vec<_> = limited.iter().take(3).cloned().collect();
        assert_eq!(
            store
                .events(bucket, query(start, end, Some(3)))
                .wait()
                .unwrap(),
            newest
        );
    }
}

#[test]
fn long_events_are_found_by_bounded_range_reads() {
    // The scan is bounded below by the bucket's longest duration: an event
    // starting long before the range but reaching into it must be found,
    // both when the bound was learned from writes and after reopening,
    // when it is scanned in the background (or unknown).
    let db = TempDb::new();
    let store = db.open();
    store.create_bucket(bucket("b")).unwrap();
    let mut events: Vec<_> = (0..200).map(|i| event(i * 100, 10, app("short"))).collect();
    events.push(event(5, 50_000, app("long")));
    store.insert_events("b", events).unwrap();
    let check = |store: &Datastore| {
        let listed = store
            .events("b", query(Some(19_000), Some(19_050), None))
            .wait()
            .unwrap();
        assert_eq!(spans(&listed), vec![(19_000, 10), (19_000, 50)]);
        assert_eq!(
            store
                .count_events("b", Some(at(19_000)), Some(at(19_050)))
                .wait()
                .unwrap(),
            2
        );
        assert_eq!(
            store.bucket("b").wait().unwrap().metadata.end,
            Some(at(50_005))
        );
    };
    check(&store);
    // A heartbeat that extends an event raises the bound before it is acknowledged.
    store.create_bucket(bucket("h")).unwrap();
    store
        .heartbeat("h", event(0, 0, app("a")), Duration::from_secs(10))
        .unwrap();
    for i in 1..=100 {
        store
            .heartbeat("h", event(i * 10, 0, app("a")), Duration::from_secs(10))
            .unwrap();
    }
    let listed = store
        .events("h", query(Some(995), Some(996), None))
        .wait()
        .unwrap();
    assert_eq!(spans(&listed), vec![(995, 1)]);
    store.close().unwrap();
    let store = db.open();
    check(&store);
    assert_eq!(
        store.count_events("h", Some(at(999)), None).wait().unwrap(),
        1
    );
}

#[test]
fn explicit_id_replaces_only_within_the_bucket() {
    let (_db, store) = with_bucket();
    store.create_bucket(bucket("other")).unwrap();
    let original = store
        .insert_events("b", vec![event(10, 5, app("a"))])
        .unwrap()[0]
        .clone();
    let foreign = store
        .insert_events("other", vec![event(10, 5, app("o"))])
        .unwrap()[0]
        .clone();
    // Same bucket: replaced in place, id kept.
    let mut replacement = event(11, 7, app("edited"));
    replacement.id = original.id;
    let stored = store.insert_events("b", vec![replacement.clone()]).unwrap();
    assert_eq!(stored[0].id, original.id);
    assert_eq!(
        store.event("b", original.id.unwrap()).wait().unwrap(),
        replacement
    );
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 1);
    // Another bucket's id (B-5): that event is untouched, ours gets a fresh id.
    let mut intruder = event(50, 1, app("intruder"));
    intruder.id = foreign.id;
    let stored = store.insert_events("b", vec![intruder]).unwrap();
    assert_ne!(stored[0].id, foreign.id);
    assert_eq!(
        store.event("other", foreign.id.unwrap()).wait().unwrap(),
        foreign
    );
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 2);
    // An id nobody has is kept.
    let mut unused = event(60, 1, app("kept"));
    unused.id = Some(1_000_000);
    let stored = store.insert_events("b", vec![unused]).unwrap();
    assert_eq!(stored[0].id, Some(1_000_000));
    assert_eq!(
        store.event("b", 1_000_000).wait().unwrap().data,
        object(app("kept"))
    );
}

#[test]
fn single_event_of_another_bucket_is_no_such_event() {
    let (_db, store) = with_bucket();
    store.create_bucket(bucket("other")).unwrap();
    let foreign = store
        .insert_events("other", vec![event(1, 1, app("o"))])
        .unwrap()[0]
        .id
        .unwrap();
    for id in [foreign, 12345] {
        assert!(matches!(
            store.event("b", id).wait(),
            Err(DatastoreError::NoSuchEvent { bucket_id, event_id }) if bucket_id == "b" && event_id == id
        ));
    }
    // Deleting it through the wrong bucket changes nothing.
    assert!(!store.delete_event("b", foreign).unwrap());
    assert!(store.event("other", foreign).wait().is_ok());
    assert!(store.delete_event("other", foreign).unwrap());
    assert!(!store.delete_event("other", foreign).unwrap());
}

#[test]
fn events_page_walks_everything_once() {
    let (_db, store) = with_bucket();
    let mut events: Vec<_> = (0..57).map(|i| event(i / 3, 1, json!({"i": i}))).collect();
    events.reverse();
    store.insert_events("b", events).unwrap();
    let mut seen = Vec::new();
    let mut after: Option<Event> = None;
    loop {
        let page = store.events_page("b", after.as_ref(), 10).wait().unwrap();
        if page.is_empty() {
            break;
        }
        after = page.last().cloned();
        seen.extend(page);
    }
    assert_eq!(seen.len(), 57);
    for pair in seen.windows(2) {
        let key = |e: &Event| (e.timestamp, e.id);
        assert!(key(&pair[0]) > key(&pair[1]), "{:?}", pair);
    }
    assert!(matches!(
        store
            .events_page("b", Some(&event(1, 1, app("no id"))), 10)
            .wait(),
        Err(DatastoreError::InvalidInput(_))
    ));
}

#[test]
fn invalid_events_are_refused_not_stored() {
    let (_db, store) = with_bucket();
    let bad = Event::new(at(1), Duration::from_nanos(-5), object(app("a")));
    assert!(matches!(
        store.insert_events("b", vec![event(1, 1, app("ok")), bad.clone()]),
        Err(DatastoreError::InvalidInput(_))
    ));
    // The whole command failed, so its valid event is not stored either.
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 0);
    assert!(matches!(
        store.heartbeat("b", bad, Duration::ZERO),
        Err(DatastoreError::InvalidInput(_))
    ));
    let overflow = Event::new(
        aw_models::Timestamp::MAX,
        Duration::from_secs(1),
        object(app("a")),
    );
    assert!(store.insert_events("b", vec![overflow]).is_err());
    assert!(matches!(
        store.heartbeat("b", event(1, 1, app("a")), Duration::from_nanos(-1)),
        Err(DatastoreError::InvalidInput(_))
    ));
}

#[test]
fn reads_see_every_acknowledged_write_from_many_threads() {
    let (_db, store) = with_bucket();
    std::thread::scope(|scope| {
        for thread in 0..4 {
            let store = store.clone();
            scope.spawn(move || {
                for i in 0..50 {
                    let stored = store
                        .insert_events("b", vec![event(thread * 1000 + i, 1, app("x"))])
                        .unwrap();
                    // Read-your-writes through the reader threads.
                    store.event("b", stored[0].id.unwrap()).wait().unwrap();
                }
            });
        }
    });
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 200);
}

#[test]
fn shared_events_equal_events_and_share_equal_data() {
    let (_db, store) = with_bucket();
    store
        .insert_events(
            "b",
            vec![
                event(10, 5, app("a")),
                event(20, 5, app("b")),
                event(30, 5, app("a")),
                event(40, 5, app("a")),
            ],
        )
        .unwrap();
    for range in [
        query(None, None, None),
        query(Some(12), Some(42), None),
        query(Some(12), Some(42), Some(2)),
        query(Some(50), Some(60), None),
    ] {
        let plain = store.events("b", range).wait().unwrap();
        let shared = store
            .events_as("b", range, aw_datastore::Shared)
            .wait()
            .unwrap();
        let converted: Vec<Event> = shared.iter().cloned().map(Event::from).collect();
        assert_eq!(converted, plain);
    }
    let shared = store
        .events_as("b", EventQuery::default(), aw_datastore::Shared)
        .wait()
        .unwrap();
    assert!(std::sync::Arc::ptr_eq(&shared[0].data, &shared[1].data));
    assert!(!std::sync::Arc::ptr_eq(&shared[0].data, &shared[2].data));
    assert!(matches!(
        store
            .events_as("missing", EventQuery::default(), aw_datastore::Shared)
            .wait(),
        Err(DatastoreError::NoSuchBucket(_))
    ));
}

#[test]
fn json_listing_equals_the_decoded_listing() {
    let db = TempDb::new();
    let store = db.open();
    store.create_bucket(bucket("b")).unwrap();
    store.create_bucket(bucket("other")).unwrap();
    let data = json!({"": 1, "a.b": [1, 1.5, {"$x": null}], "ünï": "☃\"\\\n", "t": "x"});
    store
        .insert_events(
            "b",
            vec![
                event(0, 10, app("first")),
                event(5, 10, data.clone()),
                event(20, 5, json!({})),
                event(28, 10, app("crosses-end")),
            ],
        )
        .unwrap();
    store
        .insert_events("other", vec![event(6, 1, app("elsewhere"))])
        .unwrap();
    store.close().unwrap();
    // Rows another program stored badly are left out of both listings.
    let conn = rusqlite::Connection::open(db.path()).unwrap();
    let bucket_row: i64 = conn
        .query_row("SELECT id FROM buckets WHERE name = 'b'", [], |r| r.get(0))
        .unwrap();
    for (start, text) in [
        (1, "not json"),
        (2, "[1, 2]"),
        (3, "\"text\""),
        (4, "{\"a\": "),
    ] {
        conn.execute(
            "INSERT INTO events (bucketrow, starttime, endtime, data) VALUES (?1, ?2, ?3, ?4)",
            rusqlite::params![
                bucket_row,
                start * 1_000_000_000_i64,
                (start + 1) * 1_000_000_000_i64,
                text
            ],
        )
        .unwrap();
    }
    // A blob, and text that is not UTF-8 (only checked when first seen:
    // the same bytes twice must fail twice).
    for (start, value) in [
        (1, "CAST('{}' AS BLOB)"),
        (2, "CAST(x'7b2261223a22ff227d' AS TEXT)"),
        (3, "CAST(x'7b2261223a22ff227d' AS TEXT)"),
    ] {
        conn.execute(
            &format!(
                "INSERT INTO events (bucketrow, starttime, endtime, data) VALUES (?1, ?2, ?3, {value})"
            ),
            rusqlite::params![
                bucket_row,
                start * 1_000_000_000_i64,
                (start + 1) * 1_000_000_000_i64,
            ],
        )
        .unwrap();
    }
    drop(conn);
    let store = db.open();
    for query in [
        query(None, None, None),
        query(Some(6), Some(30), None),
        query(Some(6), Some(30), Some(2)),
        query(None, None, Some(0)),
        query(Some(30), Some(6), None),
        query(Some(100), None, None),
    ] {
        let decoded = serde_json::to_value(store.events("b", query).wait().unwrap()).unwrap();
        let raw: serde_json::Value = serde_json::from_slice(
            &store
                .events_as("b", query, aw_datastore::Json)
                .wait()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(raw, decoded, "{query:?}");
        let shared: Vec<_> = store
            .events_as("b", query, aw_datastore::Shared)
            .wait()
            .unwrap()
            .into_iter()
            .map(SharedEvent::into_event)
            .collect();
        let shared = serde_json::to_value(shared).unwrap();
        assert_eq!(shared, decoded, "{query:?}");
    }
    let all: serde_json::Value = serde_json::from_slice(
        &store
            .events_as("b", query(None, None, None), aw_datastore::Json)
            .wait()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(all.as_array().unwrap().len(), 4);
    // A limit counts the events answered, not the bad rows left out.
    let newest: serde_json::Value = serde_json::from_slice(
        &store
            .events_as("b", query(None, None, Some(4)), aw_datastore::Json)
            .wait()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(newest, all);
    assert_eq!(
        store
            .events("b", query(None, None, Some(4)))
            .wait()
            .unwrap()
            .len(),
        4
    );
    assert_eq!(all[2]["data"], data);
    assert!(matches!(
        store
            .events_as("missing", EventQuery::default(), aw_datastore::Json)
            .wait(),
        Err(DatastoreError::NoSuchBucket(_))
    ));
}

#[test]
fn awaited_reads_equal_waited_ones() {
    let (_db, store) = with_bucket();
    let memory = Datastore::open_in_memory().unwrap();
    memory.create_bucket(bucket("b")).unwrap();
    for store in [&store, &memory] {
        let stored = store
            .insert_events("b", vec![event(0, 10, app("a")), event(20, 5, app("b"))])
            .unwrap();
        let id = stored[1].id.unwrap();
        for query in [query(None, None, None), query(Some(5), Some(22), Some(1))] {
            assert_eq!(
                block_on(
                    store
                        .events_as("b", query, aw_datastore::Json)
                        .into_future()
                )
                .unwrap(),
                store
                    .events_as("b", query, aw_datastore::Json)
                    .wait()
                    .unwrap()
            );
            assert_eq!(
                block_on(store.events("b", query).into_future()).unwrap(),
                store.events("b", query).wait().unwrap()
            );
        }
        assert_eq!(
            block_on(store.buckets().into_future()).unwrap(),
            store.buckets().wait().unwrap()
        );
        assert_eq!(
            block_on(store.bucket("b").into_future()).unwrap(),
            store.bucket("b").wait().unwrap()
        );
        assert_eq!(
            block_on(store.event("b", id).into_future()).unwrap(),
            store.event("b", id).wait().unwrap()
        );
        assert_eq!(
            block_on(store.count_events("b", Some(at(12)), None).into_future()).unwrap(),
            1
        );
        assert!(matches!(
            block_on(
                store
                    .events_as("missing", EventQuery::default(), aw_datastore::Json)
                    .into_future()
            ),
            Err(DatastoreError::NoSuchBucket(_))
        ));
        assert!(matches!(
            block_on(store.event("b", id + 100).into_future()),
            Err(DatastoreError::NoSuchEvent { .. })
        ));
    }

    // Long listings, awaited, are read on a reader thread; the answer is
    // the same.
    store.create_bucket(bucket("long")).unwrap();
    let many: Vec<Event> = (0..3_000).map(|i| event(i * 10, 5, app("x"))).collect();
    store.insert_events("long", many).unwrap();
    for query in [
        EventQuery::default(),
        query(None, None, Some(5_000)),
        query(None, None, Some(100)),
        query(Some(10_000), Some(13_600), None),
    ] {
        assert_eq!(
            block_on(
                store
                    .events_as("long", query, aw_datastore::Json)
                    .into_future()
            )
            .unwrap(),
            store
                .events_as("long", query, aw_datastore::Json)
                .wait()
                .unwrap()
        );
    }

    store.close().unwrap();
    assert!(matches!(
        block_on(
            store
                .events_as("b", EventQuery::default(), aw_datastore::Json)
                .into_future()
        ),
        Err(DatastoreError::Closed)
    ));
    assert!(matches!(
        block_on(store.buckets().into_future()),
        Err(DatastoreError::Closed)
    ));
    assert!(matches!(
        store.buckets().wait(),
        Err(DatastoreError::Closed)
    ));
}

#[test]
fn many_threads_reading_at_once_share_the_connections() {
    let (_db, store) = with_bucket();
    store
        .insert_events("b", (0..50).map(|i| event(i * 10, 5, app("x"))).collect())
        .unwrap();
    let expected = store
        .events_as("b", EventQuery::default(), aw_datastore::Json)
        .wait()
        .unwrap();
    // More threads than pooled connections: the rest go to the readers.
    std::thread::scope(|scope| {
        for _ in 0..20 {
            scope.spawn(|| {
                for _ in 0..20 {
                    assert_eq!(
                        store
                            .events_as("b", EventQuery::default(), aw_datastore::Json)
                            .wait()
                            .unwrap(),
                        expected
                    );
                    assert_eq!(
                        block_on(
                            store
                                .events_as("b", EventQuery::default(), aw_datastore::Json)
                                .into_future()
                        )
                        .unwrap(),
                        expected
                    );
                    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 50);
                }
            });
        }
    });
}

/// An id at the top of SQLite's range left no fresh id for any later
/// insert of the database (found by fuzzing the API).
#[test]
fn an_event_id_past_the_chosen_range_is_refused_and_inserts_go_on() {
    let (_db, store) = with_bucket();
    for id in [i64::MAX, (1 << 53), 0, -5] {
        let mut wanted = event(0, 1, app("a"));
        wanted.id = Some(id);
        assert!(
            matches!(
                store.insert_events("b", vec![wanted]),
                Err(DatastoreError::InvalidInput(_))
            ),
            "{id}"
        );
    }
    let mut highest = event(0, 1, app("a"));
    highest.id = Some((1 << 53) - 1);
    store.insert_events("b", vec![highest]).unwrap();
    let fresh = store
        .insert_events("b", vec![event(5, 1, app("b"))])
        .unwrap();
    assert_eq!(fresh[0].id, Some(1 << 53));
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 2);
}

/// A bucket whose events span the whole range of timestamps: the listing
/// estimate must not overflow (found by fuzzing the API).
#[test]
fn a_bucket_spanning_every_representable_year_lists_its_events() {
    let (_db, store) = with_bucket();
    let first = Event {
        timestamp: aw_models::Timestamp::parse("1678-01-01T00:00:00Z").unwrap(),
        ..event(0, 0, app("early"))
    };
    let last = Event {
        timestamp: aw_models::Timestamp::parse("2261-12-31T00:00:00Z").unwrap(),
        ..event(0, 0, app("late"))
    };
    store.insert_events("b", vec![first, last]).unwrap();
    let listed = block_on(
        store
            .events_as("b", query(None, None, Some(10)), aw_datastore::Json)
            .into_future(),
    )
    .unwrap();
    let listed: serde_json::Value = serde_json::from_slice(&listed).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 2);
}
