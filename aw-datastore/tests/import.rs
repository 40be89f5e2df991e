//! Import merge (`docs/API.md` §5, B-5).

mod common;

use aw_datastore::{EventQuery, ImportSummary};
use aw_models::Event;
use common::*;
use serde_json::json;

fn exported(id: &str, events: Vec<Event>) -> aw_models::Bucket {
    let mut bucket = bucket(id);
    bucket.kind = "imported-type".into();
    bucket.events = Some(events);
    bucket
}

#[test]
fn import_creates_a_missing_bucket_with_fresh_ids() {
    let (_db, store) = with_bucket();
    let victim = store
        .insert_events("b", vec![event(1, 1, app("mine"))])
        .unwrap()[0]
        .clone();
    let mut foreign = event(10, 5, app("x"));
    foreign.id = victim.id;
    let summary = store
        .import_bucket(exported("new", vec![foreign, event(20, 5, app("y"))]))
        .unwrap();
    assert_eq!(
        summary,
        ImportSummary {
            buckets_created: 1,
            inserted: 2,
            skipped: 0,
            dropped: 0
        }
    );
    assert_eq!(store.bucket("new").wait().unwrap().kind, "imported-type");
    assert_eq!(store.event("b", victim.id.unwrap()).wait().unwrap(), victim);
    let imported = store.events("new", EventQuery::default()).wait().unwrap();
    assert_eq!(spans(&imported), vec![(20, 5), (10, 5)]);
    assert!(imported.iter().all(|e| e.id != victim.id));
}

#[test]
fn import_merges_by_identity_and_is_idempotent() {
    let (_db, store) = with_bucket();
    store
        .insert_events("b", vec![event(10, 100, json!({"a": 1, "b": [1, 2]}))])
        .unwrap();
    let incoming = vec![
        // Same identity, other key order: skipped.
        event(10, 100, json!({"b": [1, 2], "a": 1})),
        // Contained in the existing event but not identical: added.
        event(20, 5, json!({"a": 1, "b": [1, 2]})),
        // Number kind differs: added.
        event(10, 100, json!({"a": 1.0, "b": [1, 2]})),
    ];
    let mut document = exported("b", incoming.clone());
    document.kind = "ignored".into();
    let summary = store.import_bucket(document.clone()).unwrap();
    assert_eq!(
        (summary.buckets_created, summary.inserted, summary.skipped),
        (0, 2, 1)
    );
    assert_eq!(store.bucket("b").wait().unwrap().kind, "currentwindow");
    // Again: nothing new.
    let summary = store.import_bucket(document).unwrap();
    assert_eq!((summary.inserted, summary.skipped), (0, 3));
    let summary = store.import_events("b", incoming).unwrap();
    assert_eq!((summary.inserted, summary.skipped), (0, 3));
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 3);
}

#[test]
fn export_delete_import_round_trip() {
    let (_db, store) = with_bucket();
    store
        .insert_events(
            "b",
            (0..25).map(|i| event(i * 10, 3, json!({"i": i}))).collect(),
        )
        .unwrap();
    let mut export = store.bucket("b").wait().unwrap();
    let mut events = Vec::new();
    let mut after: Option<Event> = None;
    loop {
        let page = store.events_page("b", after.as_ref(), 7).wait().unwrap();
        let Some(last) = page.last().cloned() else {
            break;
        };
        after = Some(last);
        events.extend(page);
    }
    export.events = Some(events.clone());
    store.delete_bucket("b").unwrap();
    store.import_bucket(export.clone()).unwrap();
    let mut back = store.bucket("b").wait().unwrap();
    assert_eq!(
        (back.created, &back.data, &back.kind),
        (export.created, &export.data, &export.kind)
    );
    back.events = None;
    let strip = |events: Vec<Event>| {
        events
            .into_iter()
            .map(|e| (e.timestamp, e.duration, e.data))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        strip(store.events("b", EventQuery::default()).wait().unwrap()),
        strip(events)
    );
}

#[test]
fn merging_skips_identical_events_before_after_and_within_the_stored_span() {
    let (_db, store) = with_bucket();
    let stored = event(100, 10, app("a"));
    store.insert_events("b", vec![stored.clone()]).unwrap();
    let incoming = vec![
        // After everything stored, twice: the second is a duplicate.
        event(200, 10, app("new")),
        event(200, 10, app("new")),
        // Before everything stored, twice.
        event(10, 5, app("old")),
        event(10, 5, app("old")),
        // The stored one, and one inside its span that differs.
        stored,
        event(102, 3, app("a")),
    ];
    let summary = store.import_events("b", incoming).unwrap();
    assert_eq!((summary.inserted, summary.skipped), (3, 3));
    // Into an empty bucket: duplicates within one chunk are skipped too.
    store.create_bucket(bucket("empty")).unwrap();
    let twice = vec![event(5, 1, app("x")), event(5, 1, app("x"))];
    let summary = store.import_events("empty", twice).unwrap();
    assert_eq!((summary.inserted, summary.skipped), (1, 1));
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 4);
}

#[test]
fn a_long_import_with_repeats_stores_each_event_once_in_order() {
    let (_db, store) = with_bucket();
    // 200 events: written by the 64-row statement and one by one; the
    // second half repeats the first (identical, so skipped) after a few
    // new ones, some repeats arriving while their originals wait to be
    // written in the same chunk.
    let fresh: Vec<Event> = (0..150)
        .map(|i| event(i * 10, 5, json!({"i": i})))
        .collect();
    let mut incoming = fresh.clone();
    incoming.extend(fresh[100..].iter().cloned());
    incoming.push(event(5000, 5, json!({"i": "last"})));
    let summary = store.import_events("b", incoming).unwrap();
    assert_eq!((summary.inserted, summary.skipped), (151, 50));
    let stored = store.events("b", EventQuery::default()).wait().unwrap();
    assert_eq!(stored.len(), 151);
    // Ids rise in the order the events came.
    let mut by_id = stored.clone();
    by_id.sort_by_key(|event| event.id);
    let mut expected: Vec<Event> = fresh;
    expected.push(event(5000, 5, json!({"i": "last"})));
    let strip = |events: &[Event]| {
        events
            .iter()
            .map(|e| (e.timestamp, e.duration, e.data.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&by_id), strip(&expected));
    // Again: all skipped.
    let again = store.import_events("b", expected).unwrap();
    assert_eq!((again.inserted, again.skipped), (0, 151));
}
