//! Merges and renames of generated histories on a file: the merged time
//! is the union of both histories in every hour, and a merge cut short
//! is finished by `resume`.

use std::collections::BTreeMap;

use aw_datastore::Datastore;
use aw_models::{Bucket, BucketMetadata, Duration, Event, Timestamp};
use serde_json::json;

const HOUR: i64 = 3_600_000_000_000;
const SECOND: i64 = 1_000_000_000;

fn bucket(id: &str, kind: &str, host: &str) -> Bucket {
    Bucket {
        id: id.to_string(),
        kind: kind.to_string(),
        client: format!("aw-watcher-{kind}"),
        hostname: host.to_string(),
        created: Some(Timestamp::from_nanos(0)),
        data: Default::default(),
        metadata: BucketMetadata::default(),
        events: None,
        last_updated: None,
    }
}

/// `count` events of a watcher: gaps and lengths from a seed, some
/// without duration.
fn history(seed: u64, count: usize, start: i64) -> Vec<Event> {
    let mut state = seed;
    let mut next = move |n: i64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) as i64) % n
    };
    let mut at = start;
    (0..count)
        .map(|i| {
            at += next(120) * SECOND;
            let length = if i % 17 == 0 { 0 } else { next(600) * SECOND };
            let mut data = serde_json::Map::new();
            data.insert("app".into(), json!(format!("app{}", next(9))));
            let event = Event::new(
                Timestamp::from_nanos(at),
                Duration::from_nanos(length),
                data,
            );
            at += length;
            event
        })
        .collect()
}

/// Covered nanoseconds per hour of a set of spans.
fn per_hour(spans: &[(i64, i64)]) -> BTreeMap<i64, i64> {
    let mut sorted: Vec<(i64, i64)> = spans.iter().copied().filter(|(s, e)| e > s).collect();
    sorted.sort_unstable();
    let mut joined: Vec<(i64, i64)> = Vec::new();
    for (s, e) in sorted {
        match joined.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => joined.push((s, e)),
        }
    }
    let mut hours = BTreeMap::new();
    for (s, e) in joined {
        let mut at = s;
        while at < e {
            let hour = at.div_euclid(HOUR);
            let until = ((hour + 1) * HOUR).min(e);
            *hours.entry(hour).or_insert(0) += until - at;
            at = until;
        }
    }
    hours
}

fn spans(events: &[Event]) -> Vec<(i64, i64)> {
    events
        .iter()
        .map(|e| (e.timestamp.nanos(), e.end().nanos()))
        .collect()
}

struct Two {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
    store: Datastore,
    union: BTreeMap<i64, i64>,
}

fn two_hosts(count: usize) -> Two {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sqlite.db");
    let store = Datastore::open(&path).unwrap();
    let a = history(1, count, 0);
    let b = history(2, count, 40 * HOUR);
    for (host, events) in [("mac.local", &a), ("mac.fritz.box", &b)] {
        store
            .create_bucket(bucket(
                &format!("aw-watcher-window_{host}"),
                "currentwindow",
                host,
            ))
            .unwrap();
        store
            .import_events(&format!("aw-watcher-window_{host}"), events.clone())
            .unwrap();
    }
    store
        .create_bucket(bucket("aw-watcher-afk_mac.local", "afkstatus", "mac.local"))
        .unwrap();
    let union = per_hour(&[spans(&a), spans(&b)].concat());
    Two {
        _dir: dir,
        path,
        store,
        union,
    }
}

fn merged_per_hour(store: &Datastore, bucket: &str) -> BTreeMap<i64, i64> {
    let events = store.events(bucket, Default::default()).wait().unwrap();
    per_hour(&spans(&events))
}

#[test]
fn a_merge_keeps_the_union_of_two_generated_histories_hour_by_hour() {
    let two = two_hosts(12_000);
    let store = &two.store;
    let buckets = store.buckets().wait().unwrap();
    let plan = aw_hosts::plan_merge(&buckets, "mac.local", "mac.fritz.box").unwrap();
    let preview = aw_hosts::preview(store, &plan).unwrap();
    assert!(preview.dry_run);
    // The dry run changed nothing.
    assert_eq!(store.buckets().wait().unwrap().len(), 3);
    let mut heard = Vec::new();
    let report =
        aw_hosts::apply(store, &plan, &mut |done, total| heard.push((done, total))).unwrap();
    assert!(
        heard.len() > 10,
        "progress heard per chunk: {}",
        heard.len()
    );
    assert_eq!(heard.last(), Some(&(12_000, 12_000)));
    // The dry run's figures were the merge's.
    let window = |r: &aw_models::HostReport| {
        r.buckets
            .iter()
            .find(|b| b.from == "aw-watcher-window_mac.local")
            .cloned()
            .unwrap()
    };
    assert_eq!(window(&preview), window(&report));
    let ids: Vec<String> = store.buckets().wait().unwrap().into_keys().collect();
    assert_eq!(
        ids,
        vec![
            "aw-watcher-afk_mac.fritz.box",
            "aw-watcher-window_mac.fritz.box"
        ]
    );
    assert_eq!(
        merged_per_hour(store, "aw-watcher-window_mac.fritz.box"),
        two.union
    );
    let events = store
        .events("aw-watcher-window_mac.fritz.box", Default::default())
        .wait()
        .unwrap();
    let summed: i64 = events.iter().map(|e| e.duration.nanos()).sum();
    let union: i64 = two.union.values().sum();
    // Each generated history has no overlaps of its own, so a merge
    // that counts no time twice stores exactly the union.
    assert_eq!(summed, union, "no time doubled");
    let figures = window(&report);
    assert_eq!(
        figures.moved + figures.cut + figures.dropped,
        figures.events,
        "every event accounted for"
    );
    assert_eq!(store.host_aliases().unwrap()["mac.local"], "mac.fritz.box");
    assert_eq!(store.hosts_journal().unwrap(), None);
}

#[test]
fn a_merge_cut_short_is_finished_at_the_next_start() {
    let two = two_hosts(6_000);
    let buckets = two.store.buckets().wait().unwrap();
    let plan = aw_hosts::plan_merge(&buckets, "mac.local", "mac.fritz.box").unwrap();
    // As `apply` starts it, then three chunks, then the process "dies".
    two.store
        .set_hosts_journal(Some(serde_json::to_string(&plan).unwrap()))
        .unwrap();
    for _ in 0..3 {
        two.store
            .merge_events(
                "aw-watcher-window_mac.local",
                "aw-watcher-window_mac.fritz.box",
                1_000,
            )
            .unwrap();
    }
    // Nothing else runs while it is under way.
    assert!(matches!(
        aw_hosts::apply(&two.store, &plan, &mut |_, _| {}),
        Err(aw_hosts::HostsError::Busy(_))
    ));
    two.store.close().unwrap();
    let store = Datastore::open(&two.path).unwrap();
    let resumed = aw_hosts::resume(&store)
        .unwrap()
        .expect("a merge was under way");
    assert_eq!(resumed.operation, "merge");
    let ids: Vec<String> = store.buckets().wait().unwrap().into_keys().collect();
    assert_eq!(
        ids,
        vec![
            "aw-watcher-afk_mac.fritz.box",
            "aw-watcher-window_mac.fritz.box"
        ]
    );
    assert_eq!(
        merged_per_hour(&store, "aw-watcher-window_mac.fritz.box"),
        two.union
    );
    assert_eq!(store.hosts_journal().unwrap(), None);
    assert!(aw_hosts::resume(&store).unwrap().is_none());
}

#[test]
fn a_rename_keeps_every_event_and_id() {
    let two = two_hosts(3_000);
    let store = &two.store;
    let before = store
        .events("aw-watcher-window_mac.local", Default::default())
        .wait()
        .unwrap();
    let buckets = store.buckets().wait().unwrap();
    let plan = aw_hosts::plan_rename(&buckets, "mac.local", "mac").unwrap();
    let report = aw_hosts::apply(store, &plan, &mut |_, _| {}).unwrap();
    assert_eq!(report.buckets.len(), 2);
    let after = store
        .events("aw-watcher-window_mac", Default::default())
        .wait()
        .unwrap();
    assert_eq!(before, after);
    let hosts = aw_hosts::hosts(store).unwrap();
    let mac = hosts.iter().find(|h| h.host == "mac").unwrap();
    assert_eq!(mac.aliases, vec!["mac.local"]);
    assert_eq!(mac.events, 3_000);
    assert_eq!(
        mac.buckets,
        vec!["aw-watcher-afk_mac", "aw-watcher-window_mac"]
    );
    // The old id still reads the same events.
    assert_eq!(
        store
            .events("aw-watcher-window_mac.local", Default::default())
            .wait()
            .unwrap(),
        after
    );
}
