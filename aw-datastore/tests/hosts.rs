//! Buckets renamed, merged and reached through host aliases, on a file.

mod common;

use aw_datastore::{BucketRename, DatastoreError, HostChange, MergeCounts};
use aw_models::{Bucket, Duration};
use common::*;

fn host_bucket(stem: &str, host: &str) -> Bucket {
    let mut made = bucket(&format!("{stem}_{host}"));
    made.hostname = host.to_string();
    made
}

#[test]
fn a_merge_keeps_the_union_of_both_histories_and_the_ids_it_can() {
    let db = TempDb::new();
    let store = db.open();
    store.create_bucket(host_bucket("w", "a")).unwrap();
    store.create_bucket(host_bucket("w", "b")).unwrap();
    // a: [0,10) [20,30) [40,40]   b: [5,25) [50,60)
    let moved = store
        .insert_events(
            "w_a",
            vec![
                event(0, 10, app("a0")),
                event(20, 10, app("a1")),
                event(40, 0, app("a2")),
                event(52, 3, app("a3")),
            ],
        )
        .unwrap();
    store
        .insert_events(
            "w_b",
            vec![event(5, 20, app("b0")), event(50, 10, app("b1"))],
        )
        .unwrap();
    assert_eq!(
        store.merge_preview("w_a", "w_b").unwrap(),
        MergeCounts {
            moved: 1,
            cut: 2,
            dropped: 1,
            overlap: 13_000_000_000
        }
    );
    // Two steps of two events, then the bucket is empty.
    let first = store.merge_events("w_a", "w_b", 2).unwrap();
    assert!(first.remaining);
    let second = store.merge_events("w_a", "w_b", 2).unwrap();
    assert!(!second.remaining);
    let mut total = first.counts;
    total.add(second.counts);
    assert_eq!(total, store_counts(1, 2, 1, 13));
    let merged = store.events("w_b", Default::default()).wait().unwrap();
    let mut got = spans(&merged);
    got.sort_unstable();
    assert_eq!(got, vec![(0, 5), (5, 20), (25, 5), (40, 0), (50, 10)]);
    // Moved events are new ones, with ids above every earlier id.
    let whole = merged.iter().find(|e| e.data["app"] == "a2").unwrap();
    assert!(
        whole.id > moved.iter().map(|e| e.id).max().unwrap(),
        "{whole:?}"
    );
    assert_eq!(
        store.bucket("w_b").wait().unwrap().metadata.end,
        Some(at(60))
    );
    assert_eq!(
        store.events("w_a", Default::default()).wait().unwrap(),
        vec![]
    );
    // The bucket facts followed, and survive a reopen.
    store.close().unwrap();
    let store = db.open();
    assert_eq!(
        store.count_events("w_b", None, None).wait().unwrap(),
        5,
        "five events after the merge"
    );
}

fn store_counts(moved: u64, cut: u64, dropped: u64, overlap_secs: i64) -> MergeCounts {
    MergeCounts {
        moved,
        cut,
        dropped,
        overlap: overlap_secs * 1_000_000_000,
    }
}

#[test]
fn a_change_renames_merges_and_aliases_in_one_step() {
    let db = TempDb::new();
    let store = db.open();
    for bucket in [
        host_bucket("w", "old"),
        host_bucket("afk", "old"),
        host_bucket("afk", "new"),
    ] {
        store.create_bucket(bucket).unwrap();
    }
    let kept = store
        .insert_events("w_old", vec![event(0, 10, app("x"))])
        .unwrap();
    store
        .insert_events("afk_old", vec![event(0, 10, app("afk"))])
        .unwrap();
    store
        .insert_events("afk_new", vec![event(5, 10, app("afk"))])
        .unwrap();
    let created = store.bucket("w_old").wait().unwrap().created;
    store
        .change_hosts(HostChange {
            renames: vec![BucketRename {
                from: "w_old".into(),
                to: "w_new".into(),
                hostname: "new".into(),
            }],
            merges: vec![("afk_old".into(), "afk_new".into())],
            alias: Some(("old".into(), "new".into())),
            clear_journal: true,
            states: Vec::new(),
        })
        .unwrap();
    let ids: Vec<String> = store.buckets().wait().unwrap().into_keys().collect();
    assert_eq!(ids, vec!["afk_new", "w_new"]);
    let renamed = store.bucket("w_new").wait().unwrap();
    assert_eq!(renamed.hostname, "new");
    assert_eq!(renamed.created, created);
    assert_eq!(
        store.events("w_new", Default::default()).wait().unwrap()[0].id,
        kept[0].id
    );
    // The old ids reach the new buckets: reads, heartbeats, creation.
    assert_eq!(store.bucket("w_old").wait().unwrap().id, "w_new");
    assert_eq!(
        spans(&store.events("afk_old", Default::default()).wait().unwrap()),
        vec![(5, 10), (0, 5)]
    );
    store
        .heartbeat("w_old", event(10, 0, app("x")), Duration::from_secs(5))
        .unwrap();
    assert_eq!(
        spans(&store.events("w_new", Default::default()).wait().unwrap()),
        vec![(0, 10)]
    );
    assert!(matches!(
        store.create_bucket(host_bucket("w", "old")),
        Err(DatastoreError::BucketExists(_))
    ));
    assert!(matches!(
        store.bucket("w_other").wait(),
        Err(DatastoreError::NoSuchBucket(_))
    ));
    assert_eq!(
        store
            .host_aliases()
            .unwrap()
            .into_iter()
            .collect::<Vec<_>>(),
        vec![("old".to_string(), "new".to_string())]
    );
    // Removed, the alias reaches nothing.
    store.set_host_alias("old", None).unwrap();
    assert!(matches!(
        store.bucket("w_old").wait(),
        Err(DatastoreError::NoSuchBucket(_))
    ));
}

#[test]
fn a_rename_onto_a_taken_id_changes_nothing() {
    let db = TempDb::new();
    let store = db.open();
    store.create_bucket(host_bucket("w", "a")).unwrap();
    store.create_bucket(host_bucket("w", "b")).unwrap();
    store.create_bucket(host_bucket("afk", "a")).unwrap();
    let refused = store.change_hosts(HostChange {
        renames: vec![
            BucketRename {
                from: "afk_a".into(),
                to: "afk_b".into(),
                hostname: "b".into(),
            },
            BucketRename {
                from: "w_a".into(),
                to: "w_b".into(),
                hostname: "b".into(),
            },
        ],
        alias: Some(("a".into(), "b".into())),
        ..HostChange::default()
    });
    assert!(matches!(refused, Err(DatastoreError::BucketExists(id)) if id == "w_b"));
    let ids: Vec<String> = store.buckets().wait().unwrap().into_keys().collect();
    assert_eq!(ids, vec!["afk_a", "w_a", "w_b"]);
    assert!(store.host_aliases().unwrap().is_empty());
}

#[test]
fn an_alias_of_an_alias_names_the_host_itself() {
    let db = TempDb::new();
    let store = db.open();
    store.create_bucket(host_bucket("w", "c")).unwrap();
    store.set_host_alias("b", Some("c")).unwrap();
    store.set_host_alias("a", Some("b")).unwrap();
    let aliases = store.host_aliases().unwrap();
    assert_eq!((aliases["a"].as_str(), aliases["b"].as_str()), ("c", "c"));
    assert_eq!(store.bucket("w_a").wait().unwrap().id, "w_c");
    // And a host that becomes an alias takes its aliases along.
    store.set_host_alias("c", Some("d")).unwrap();
    let aliases = store.host_aliases().unwrap();
    assert!(aliases.values().all(|host| host == "d"), "{aliases:?}");
}

#[test]
fn the_journal_round_trips() {
    let db = TempDb::new();
    let store = db.open();
    store
        .set_hosts_journal(Some("{\"merge\":1}".into()))
        .unwrap();
    store.close().unwrap();
    let store = db.open();
    assert_eq!(
        store.hosts_journal().unwrap().as_deref(),
        Some("{\"merge\":1}")
    );
    store.set_hosts_journal(None).unwrap();
    assert_eq!(store.hosts_journal().unwrap(), None);
}
