//! Bucket create, get, list and delete.

mod common;

use aw_datastore::{Datastore, DatastoreError};
use aw_models::Timestamp;
use common::*;
use serde_json::json;

#[test]
fn bucket_round_trips_every_field() {
    let db = TempDb::new();
    let store = db.open();
    let mut created = bucket("b");
    created.data = object(json!({"device_id": "x", "nested": {"k": [1, 2.5]}}));
    store.create_bucket(created.clone()).unwrap();
    let fetched = store.bucket("b").wait().unwrap();
    assert_eq!(fetched, created);
    assert_eq!(fetched.metadata.start, None);
    assert_eq!(store.buckets().wait().unwrap().len(), 1);
    // Survives reopening.
    store.close().unwrap();
    assert_eq!(db.open().bucket("b").wait().unwrap(), created);
}

#[test]
fn created_defaults_to_now() {
    let store = Datastore::open_in_memory().unwrap();
    let mut created = bucket("b");
    created.created = None;
    let before = Timestamp::now();
    store.create_bucket(created).unwrap();
    let stored = store.bucket("b").wait().unwrap().created.unwrap();
    assert!(stored >= before && stored <= Timestamp::now());
}

#[test]
fn duplicate_and_missing_buckets_are_errors() {
    let (_db, store) = with_bucket();
    assert!(matches!(
        store.create_bucket(bucket("b")),
        Err(DatastoreError::BucketExists(id)) if id == "b"
    ));
    assert!(matches!(
        store.bucket("nope").wait(),
        Err(DatastoreError::NoSuchBucket(_))
    ));
    assert!(matches!(
        store.delete_bucket("nope"),
        Err(DatastoreError::NoSuchBucket(_))
    ));
    assert!(matches!(
        store.events("nope", Default::default()).wait(),
        Err(DatastoreError::NoSuchBucket(_))
    ));
    assert!(matches!(
        store.insert_events("nope", vec![event(1, 1, app("a"))]),
        Err(DatastoreError::NoSuchBucket(_))
    ));
    assert!(matches!(
        store.heartbeat("nope", event(1, 1, app("a")), Default::default()),
        Err(DatastoreError::NoSuchBucket(_))
    ));
    // A failed command leaves the worker serving.
    store.health().unwrap();
}

#[test]
fn bucket_with_events_inserts_them() {
    let store = Datastore::open_in_memory().unwrap();
    let mut created = bucket("b");
    created.events = Some(vec![event(10, 5, app("a")), event(20, 5, app("b"))]);
    store.create_bucket(created).unwrap();
    assert_eq!(
        spans(&store.events("b", Default::default()).wait().unwrap()),
        vec![(20, 5), (10, 5)]
    );
}

#[test]
fn metadata_follows_inserts_and_deletes() {
    let (_db, store) = with_bucket();
    let stored = store
        .insert_events(
            "b",
            vec![
                event(100, 10, app("a")),
                event(50, 500, app("long")),
                event(200, 5, app("c")),
            ],
        )
        .unwrap();
    let metadata = store.bucket("b").wait().unwrap().metadata;
    assert_eq!(metadata.start, Some(at(50)));
    assert_eq!(metadata.end, Some(at(550)));
    // Deleting the long event shrinks both ends (B-6).
    assert!(store.delete_event("b", stored[1].id.unwrap()).unwrap());
    let metadata = store.buckets().wait().unwrap()["b"].metadata.clone();
    assert_eq!(metadata.start, Some(at(100)));
    assert_eq!(metadata.end, Some(at(205)));
    for event in &stored {
        store.delete_event("b", event.id.unwrap()).unwrap();
    }
    let metadata = store.bucket("b").wait().unwrap().metadata;
    assert_eq!((metadata.start, metadata.end), (None, None));
}

#[test]
fn deleted_bucket_can_be_created_again_empty() {
    let (_db, store) = with_bucket();
    store
        .insert_events("b", vec![event(1, 1, app("a"))])
        .unwrap();
    store.create_bucket(bucket("other")).unwrap();
    store
        .insert_events("other", vec![event(1, 1, app("a"))])
        .unwrap();
    store.delete_bucket("b").unwrap();
    assert!(matches!(
        store.bucket("b").wait(),
        Err(DatastoreError::NoSuchBucket(_))
    ));
    assert_eq!(
        store.buckets().wait().unwrap().keys().collect::<Vec<_>>(),
        vec!["other"]
    );
    store.create_bucket(bucket("b")).unwrap();
    assert!(store
        .events("b", Default::default())
        .wait()
        .unwrap()
        .is_empty());
    assert_eq!(store.count_events("other", None, None).wait().unwrap(), 1);
}
