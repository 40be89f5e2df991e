//! After a restart, the periods asked for before are computed again in
//! the background, so the first visit finds them kept; the hints travel
//! in the database file, never the answers.

use std::sync::Arc;
use std::time::{Duration as StdDuration, Instant};

use aw_cache::{prewarm, Cache, CacheConfig, Kind, Period, Prewarm};
use aw_datastore::Datastore;
use aw_models::{Bucket, Duration, Event, TimeInterval, Timestamp};

const DAY: i64 = 86_400;
const ORIGIN: i64 = 1_700_000_000;

fn at(secs: i64) -> Timestamp {
    Timestamp::from_nanos((ORIGIN + secs) * 1_000_000_000)
}

const PROGRAM: &str = r#"events = flood(query_bucket("window"));
RETURN = sort_by_duration(merge_events_by_keys(events, ["app"]));"#;

fn days(count: i64) -> Vec<TimeInterval> {
    (0..count)
        .map(|day| TimeInterval::new(at(day * DAY), at((day + 1) * DAY)))
        .collect()
}

fn seed(store: &Datastore) {
    let bucket: Bucket = serde_json::from_value(serde_json::json!({
        "id": "window", "type": "currentwindow", "client": "test", "hostname": "host",
    }))
    .unwrap();
    store.create_bucket(bucket).unwrap();
    let events: Vec<Event> = (0..20)
        .map(|i| {
            Event::new(
                at(i * DAY / 2 + 3600),
                Duration::from_secs(1800 + i * 60),
                serde_json::from_value(serde_json::json!({ "app": format!("app{}", i % 3) }))
                    .unwrap(),
            )
        })
        .collect();
    store.insert_events("window", events).unwrap();
}

fn cache_on(store: &Datastore) -> Arc<Cache> {
    let cache = Arc::new(Cache::new(CacheConfig::default()));
    store.watch_writes(cache.watcher());
    cache
}

#[test]
fn a_restart_computes_the_remembered_periods_again() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("test.db");
    let now = Timestamp::now();
    let periods = days(10);
    let summary_text = Kind::Summary.key(PROGRAM);
    let expected = {
        let store = Datastore::open(&path).unwrap();
        seed(&store);
        let cache = cache_on(&store);
        let answer = aw_cache::query_json(&cache, PROGRAM, &periods, &store, now).unwrap();
        // As a summary notes its days.
        let summary_days: Vec<Period> = periods[..3]
            .iter()
            .map(|p| Period::new(p.start, p.end))
            .collect();
        cache.hints().note(&summary_text, &summary_days);
        prewarm::save_hints(&cache, &store);
        store.close().unwrap();
        answer
    };

    let store = Datastore::open(&path).unwrap();
    let cache = cache_on(&store);
    assert_eq!(cache.stats().entries, 0, "answers are never stored");
    let progress = Arc::new(Prewarm::new(true));
    prewarm::start(&cache, &store, &progress);
    let deadline = Instant::now() + StdDuration::from_secs(60);
    while !progress.status().finished {
        assert!(
            Instant::now() < deadline,
            "pre-warm never finished: {:?}",
            progress.status()
        );
        std::thread::sleep(StdDuration::from_millis(20));
    }
    let status = progress.status();
    assert_eq!((status.total, status.done), (13, 13), "{status:?}");
    assert_eq!(cache.stats().entries, 13);
    assert_eq!(
        cache.stats().misses,
        0,
        "the pre-warm's lookups are not misses"
    );
    let again = aw_cache::query_json(&cache, PROGRAM, &periods, &store, now).unwrap();
    assert_eq!(again, expected);
    assert_eq!(cache.stats().hits, 10);
    assert_eq!(cache.stats().misses, 0);
    // The summary's days are kept as values, equal to computed ones.
    for (period, interval) in periods[..3]
        .iter()
        .map(|p| (Period::new(p.start, p.end), p))
    {
        let kept = cache.lookup::<serde_json::Value>(&summary_text, &[period])[0]
            .clone()
            .unwrap();
        let computed = aw_query::query(PROGRAM, &[*interval], &store).unwrap();
        assert_eq!(*kept, computed[0]);
    }
}

#[test]
fn without_prewarm_nothing_is_read_or_computed() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("test.db");
    {
        let store = Datastore::open(&path).unwrap();
        seed(&store);
        let cache = cache_on(&store);
        aw_cache::query_json(&cache, PROGRAM, &days(2), &store, Timestamp::now()).unwrap();
        prewarm::save_hints(&cache, &store);
        store.close().unwrap();
    }
    let store = Datastore::open(&path).unwrap();
    let cache = cache_on(&store);
    let progress = Arc::new(Prewarm::new(false));
    prewarm::start(&cache, &store, &progress);
    assert!(cache.hints().programs().is_empty());
    assert_eq!(cache.stats().entries, 0);
    assert!(!progress.status().finished);
    // And no thread holds the store: its last handle closes it.
    drop(store);
    Datastore::open(&path).unwrap();
}
