//! Heartbeat merging through the handle (`docs/API.md` §4, B-3, B-4).

mod common;

use aw_datastore::EventQuery;
use aw_models::Duration;
use common::*;
use serde_json::json;

const PULSE: Duration = Duration::from_secs(5);

fn all(store: &aw_datastore::Datastore) -> Vec<(i64, i64)> {
    spans(&store.events("b", EventQuery::default()).wait().unwrap())
}

#[test]
fn first_heartbeat_is_inserted_with_its_duration() {
    let (_db, store) = with_bucket();
    let stored = store.heartbeat("b", event(10, 3, app("a")), PULSE).unwrap();
    assert!(stored.id.is_some());
    assert_eq!(all(&store), vec![(10, 3)]);
}

#[test]
fn heartbeat_merges_within_pulsetime_with_inclusive_boundary() {
    let (_db, store) = with_bucket();
    let first = store.heartbeat("b", event(10, 0, app("a")), PULSE).unwrap();
    let merged = store.heartbeat("b", event(15, 0, app("a")), PULSE).unwrap();
    assert_eq!(merged.id, first.id);
    assert_eq!(spans(&[merged]), vec![(10, 5)]);
    // Exactly end + pulsetime still merges.
    store.heartbeat("b", event(20, 0, app("a")), PULSE).unwrap();
    assert_eq!(all(&store), vec![(10, 10)]);
    // One nanosecond later does not.
    let mut late = event(25, 0, app("a"));
    late.timestamp = aw_models::Timestamp::from_nanos(25_000_000_001);
    let separate = store.heartbeat("b", late, PULSE).unwrap();
    assert_ne!(separate.id, first.id);
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 2);
}

#[test]
fn different_data_starts_a_new_event_and_never_merges_back() {
    let (_db, store) = with_bucket();
    store.heartbeat("b", event(10, 0, app("a")), PULSE).unwrap();
    store.heartbeat("b", event(12, 0, app("b")), PULSE).unwrap();
    store.heartbeat("b", event(14, 0, app("a")), PULSE).unwrap();
    assert_eq!(all(&store), vec![(14, 0), (12, 0), (10, 0)]);
    // Key order does not matter.
    store
        .heartbeat("b", event(15, 0, json!({"app": "a"})), PULSE)
        .unwrap();
    store.create_bucket(bucket("k")).unwrap();
    store
        .heartbeat("k", event(1, 0, json!({"x": 1, "y": 2})), PULSE)
        .unwrap();
    store
        .heartbeat("k", event(2, 0, json!({"y": 2, "x": 1})), PULSE)
        .unwrap();
    assert_eq!(store.count_events("k", None, None).wait().unwrap(), 1);
}

#[test]
fn older_heartbeat_is_stored_apart_and_becomes_last() {
    let (_db, store) = with_bucket();
    store
        .heartbeat("b", event(100, 0, app("a")), PULSE)
        .unwrap();
    store.heartbeat("b", event(50, 0, app("a")), PULSE).unwrap();
    // The next heartbeat compares with the out-of-order one.
    store.heartbeat("b", event(53, 0, app("a")), PULSE).unwrap();
    assert_eq!(all(&store), vec![(100, 0), (50, 3)]);
}

#[test]
fn pulsetime_zero_merges_only_up_to_the_end() {
    let (_db, store) = with_bucket();
    store
        .heartbeat("b", event(10, 5, app("a")), Duration::ZERO)
        .unwrap();
    store
        .heartbeat("b", event(15, 0, app("a")), Duration::ZERO)
        .unwrap();
    assert_eq!(all(&store), vec![(10, 5)]);
    store
        .heartbeat("b", event(16, 0, app("a")), Duration::ZERO)
        .unwrap();
    assert_eq!(all(&store), vec![(16, 0), (10, 5)]);
}

#[test]
fn positive_duration_extends_and_inside_never_shortens() {
    let (_db, store) = with_bucket();
    store
        .heartbeat("b", event(10, 10, app("a")), PULSE)
        .unwrap();
    let inside = store.heartbeat("b", event(12, 2, app("a")), PULSE).unwrap();
    assert_eq!(spans(&[inside]), vec![(10, 10)]);
    let extended = store
        .heartbeat("b", event(18, 10, app("a")), PULSE)
        .unwrap();
    assert_eq!(spans(&[extended]), vec![(10, 18)]);
    assert_eq!(all(&store), vec![(10, 18)]);
}

#[test]
fn heartbeat_id_is_ignored() {
    let (_db, store) = with_bucket();
    store.create_bucket(bucket("other")).unwrap();
    let foreign = store
        .insert_events("other", vec![event(1, 1, app("o"))])
        .unwrap()[0]
        .clone();
    let mut beat = event(10, 0, app("a"));
    beat.id = foreign.id;
    let stored = store.heartbeat("b", beat, PULSE).unwrap();
    assert_ne!(stored.id, foreign.id);
    assert_eq!(
        store.event("other", foreign.id.unwrap()).wait().unwrap(),
        foreign
    );
}

#[test]
fn insert_resets_the_remembered_event() {
    let (_db, store) = with_bucket();
    store
        .heartbeat("b", event(100, 0, app("a")), PULSE)
        .unwrap();
    store.heartbeat("b", event(50, 0, app("a")), PULSE).unwrap();
    // Remembered: the event at 50. After an insert, the newest stored event
    // (at 200) is compared instead.
    store
        .insert_events("b", vec![event(200, 1, app("a"))])
        .unwrap();
    store
        .heartbeat("b", event(203, 0, app("a")), PULSE)
        .unwrap();
    assert_eq!(all(&store), vec![(200, 3), (100, 0), (50, 0)]);
}

#[test]
fn heartbeat_after_its_event_was_deleted_b3() {
    let (_db, store) = with_bucket();
    let older = store.heartbeat("b", event(10, 0, app("a")), PULSE).unwrap();
    let last = store.heartbeat("b", event(20, 0, app("a")), PULSE).unwrap();
    assert_ne!(older.id, last.id);
    store.delete_event("b", last.id.unwrap()).unwrap();
    // Merges with the newest remaining event.
    let merged = store.heartbeat("b", event(14, 0, app("a")), PULSE).unwrap();
    assert_eq!(merged.id, older.id);
    assert_eq!(all(&store), vec![(10, 4)]);
    store.delete_event("b", older.id.unwrap()).unwrap();
    let fresh = store.heartbeat("b", event(30, 0, app("a")), PULSE).unwrap();
    assert_eq!(all(&store), vec![(30, 0)]);
    assert_ne!(fresh.id, older.id);
}

#[test]
fn heartbeat_after_bucket_recreated_b4() {
    let (_db, store) = with_bucket();
    store.heartbeat("b", event(10, 0, app("a")), PULSE).unwrap();
    store.delete_bucket("b").unwrap();
    store.create_bucket(bucket("b")).unwrap();
    let stored = store.heartbeat("b", event(12, 0, app("a")), PULSE).unwrap();
    assert_eq!(spans(&[stored]), vec![(12, 0)]);
    assert_eq!(all(&store), vec![(12, 0)]);
}

#[test]
fn heartbeats_to_many_buckets_from_many_threads() {
    let (_db, store) = with_bucket();
    std::thread::scope(|scope| {
        for thread in 0..4 {
            let store = store.clone();
            scope.spawn(move || {
                let id = format!("t{thread}");
                store.create_bucket(bucket(&id)).unwrap();
                for i in 0..100 {
                    store.heartbeat(&id, event(i, 0, app("a")), PULSE).unwrap();
                }
                assert_eq!(
                    spans(&store.events(&id, EventQuery::default()).wait().unwrap()),
                    vec![(0, 99)]
                );
            });
        }
    });
}

#[test]
fn awaited_heartbeats_merge_like_blocking_ones() {
    let (_db, store) = with_bucket();
    let first = block_on(store.heartbeat_async("b", event(10, 0, app("a")), PULSE)).unwrap();
    let merged = store.heartbeat("b", event(12, 0, app("a")), PULSE).unwrap();
    assert_eq!(merged.id, first.id);
    let again = block_on(store.heartbeat_async("b", event(14, 1, app("a")), PULSE)).unwrap();
    assert_eq!(again.id, first.id);
    assert_eq!(all(&store), vec![(10, 5)]);
    // Errors arrive the same way.
    assert!(matches!(
        block_on(store.heartbeat_async("missing", event(1, 0, app("a")), PULSE)),
        Err(aw_datastore::DatastoreError::NoSuchBucket(_))
    ));
    store.close().unwrap();
    assert!(matches!(
        block_on(store.heartbeat_async("b", event(20, 0, app("a")), PULSE)),
        Err(aw_datastore::DatastoreError::Closed)
    ));
}

#[test]
fn awaited_heartbeats_back_to_back_and_after_pauses() {
    // Back to back, the writer is awake and the caller watches for its
    // answer; after a pause the writer sleeps and the caller is woken.
    let (_db, store) = with_bucket();
    let mut ids = Vec::new();
    for i in 0..300 {
        if i % 100 == 99 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        // A new event every 50 heartbeats (other data), else merged.
        let data = app(if (i / 50) % 2 == 0 { "a" } else { "b" });
        let stored = block_on(store.heartbeat_async("b", event(i, 0, data), PULSE)).unwrap();
        ids.push(stored.id.unwrap());
    }
    ids.dedup();
    assert_eq!(ids.len(), 6);
    let mut expected: Vec<(i64, i64)> = (0..6).map(|k| (k * 50, 49)).collect();
    expected.reverse();
    assert_eq!(all(&store), expected);
}
