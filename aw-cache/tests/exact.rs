//! The cache on a file-backed datastore: every answer equals the same
//! query computed without it, through random interleavings of every kind
//! of write with queries over random periods, and an answer computed
//! while a write touched its period is not kept.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use aw_cache::{Cache, CacheConfig, Period};
use aw_datastore::{Datastore, EventQuery};
use aw_models::{Bucket, Duration, Event, SharedEvent, TimeInterval, Timestamp, UpdateBucket};
use aw_query::{EventSource, SourceError};
use proptest::prelude::*;

const HOUR: i64 = 3600;
/// Events fall in the first `DAYS` days after `ORIGIN`.
const DAYS: i64 = 4;
const ORIGIN: i64 = 1_700_000_000;

fn at(secs: i64) -> Timestamp {
    Timestamp::from_nanos((ORIGIN + secs) * 1_000_000_000)
}

fn event(start: i64, duration: i64, app: &str) -> Event {
    Event::new(
        at(start),
        Duration::from_secs(duration),
        serde_json::from_value(serde_json::json!({ "app": app })).unwrap(),
    )
}

fn bucket(id: &str, events: Vec<Event>) -> Bucket {
    let mut bucket: Bucket = serde_json::from_value(serde_json::json!({
        "id": id,
        "type": "currentwindow",
        "client": "test",
        "hostname": "host",
    }))
    .unwrap();
    bucket.events = Some(events);
    bucket
}

/// Programs of the kinds dashboards send: reads of named buckets and of
/// buckets found by name, merged, intersected, summed.
const PROGRAMS: [&str; 3] = [
    r#"events = flood(query_bucket("window"));
       events = merge_events_by_keys(events, ["app"]);
       RETURN = sort_by_duration(events);"#,
    r#"window = query_bucket(find_bucket("window"));
       other = query_bucket(find_bucket("other"));
       RETURN = filter_period_intersect(window, other);"#,
    r#"RETURN = sum_durations(query_bucket("third"));"#,
];

#[derive(Debug, Clone)]
enum Op {
    Heartbeat {
        bucket: usize,
        start: i64,
        length: i64,
        app: u8,
    },
    Insert {
        bucket: usize,
        start: i64,
        length: i64,
        app: u8,
    },
    DeleteOne {
        bucket: usize,
        nth: usize,
    },
    DeleteRange {
        bucket: usize,
        start: i64,
        length: i64,
    },
    Expire {
        before: i64,
    },
    ThirdBucket {
        events: Vec<(i64, i64)>,
    },
    /// An import into an existing bucket (the writer's bulk path).
    Import {
        bucket: usize,
        events: Vec<(i64, i64)>,
    },
    DropThird,
    /// A privacy rule applied to the stored events: redacting or
    /// dropping an application's events.
    Privacy {
        drop: bool,
        app: u8,
    },
    Rename {
        hostname: u8,
    },
    Query {
        program: usize,
        start: i64,
        length: i64,
        now: i64,
    },
}

const BUCKETS: [&str; 2] = ["window", "other"];

fn op() -> impl Strategy<Value = Op> {
    let span = DAYS * 24 * HOUR;
    prop_oneof![
        4 => (0..2usize, 0..span, 1..3 * HOUR, 0..3u8)
            .prop_map(|(bucket, start, length, app)| Op::Heartbeat { bucket, start, length, app }),
        3 => (0..2usize, 0..span, 1..6 * HOUR, 0..3u8)
            .prop_map(|(bucket, start, length, app)| Op::Insert { bucket, start, length, app }),
        1 => (0..2usize, 0..20usize).prop_map(|(bucket, nth)| Op::DeleteOne { bucket, nth }),
        1 => (0..2usize, 0..span, 1..12 * HOUR)
            .prop_map(|(bucket, start, length)| Op::DeleteRange { bucket, start, length }),
        1 => (0..span / 2).prop_map(|before| Op::Expire { before }),
        1 => prop::collection::vec((0..span, 1..4 * HOUR), 0..4)
            .prop_map(|events| Op::ThirdBucket { events }),
        1 => Just(Op::DropThird),
        1 => (any::<bool>(), 0..3u8).prop_map(|(drop, app)| Op::Privacy { drop, app }),
        2 => (0..2usize, prop::collection::vec((0..span, 1..4 * HOUR), 1..5))
            .prop_map(|(bucket, events)| Op::Import { bucket, events }),
        1 => (0..2u8).prop_map(|hostname| Op::Rename { hostname }),
        // Few distinct periods, so that the same one is asked again after
        // writes; `now` anywhere, so some periods are not finished yet.
        8 => (0..3usize, 0..4 * DAYS, prop_oneof![Just(6 * HOUR), Just(24 * HOUR)], 0..span + 24 * HOUR)
            .prop_map(|(program, quarter, length, now)| Op::Query {
                program,
                start: quarter * 6 * HOUR,
                length,
                now,
            }),
    ]
}

fn apply(store: &Datastore, op: &Op) {
    let apps = ["editor", "browser", "terminal"];
    match op {
        Op::Heartbeat {
            bucket,
            start,
            length,
            app,
        } => {
            let _ = store.heartbeat(
                BUCKETS[*bucket],
                event(*start, *length, apps[*app as usize]),
                Duration::from_secs(2 * HOUR),
            );
        }
        Op::Insert {
            bucket,
            start,
            length,
            app,
        } => {
            store
                .insert_events(
                    BUCKETS[*bucket],
                    vec![event(*start, *length, apps[*app as usize])],
                )
                .unwrap();
        }
        Op::DeleteOne { bucket, nth } => {
            let events = store
                .events(BUCKETS[*bucket], EventQuery::default())
                .wait()
                .unwrap();
            if let Some(id) = events.get(*nth).and_then(|e| e.id) {
                store.delete_event(BUCKETS[*bucket], id).unwrap();
            }
        }
        Op::DeleteRange {
            bucket,
            start,
            length,
        } => {
            store
                .delete_range(
                    BUCKETS[*bucket],
                    at(*start),
                    at(start + length),
                    &mut |_| {},
                )
                .unwrap();
        }
        Op::Expire { before } => {
            store.expire(at(*before), &mut |_| {}).unwrap();
        }
        Op::ThirdBucket { events } => {
            let _ = store.delete_bucket("third");
            let events = events.iter().map(|&(s, l)| event(s, l, "third")).collect();
            store.import_bucket(bucket("third", events)).unwrap();
        }
        Op::Import { bucket, events } => {
            let events = events
                .iter()
                .map(|&(s, l)| event(s, l, "imported"))
                .collect();
            store.import_events(BUCKETS[*bucket], events).unwrap();
        }
        Op::Privacy { drop, app } => {
            let apps = ["editor", "browser", "terminal"];
            let rule = serde_json::json!([{
                "enabled": true,
                "field": "app",
                "pattern": format!("^{}$", apps[*app as usize]),
                "action": if *drop { "drop" } else { "redact" },
                "replacement": "hidden",
            }]);
            store.set_setting("privacy_filters", rule).unwrap();
            store.apply_privacy_rules(&mut |_| {}).unwrap();
            store
                .set_setting("privacy_filters", serde_json::json!([]))
                .unwrap();
        }
        Op::DropThird => {
            let _ = store.delete_bucket("third");
        }
        Op::Rename { hostname } => {
            let update: UpdateBucket = serde_json::from_value(serde_json::json!({
                "hostname": format!("host{hostname}"),
            }))
            .unwrap();
            store.update_bucket("window", update).unwrap();
        }
        Op::Query { .. } => {}
    }
}

fn config() -> CacheConfig {
    CacheConfig {
        max_bytes: 1 << 20,
        margin: Duration::from_secs(600),
        prewarm: false,
    }
}

fn open() -> (tempfile::TempDir, Datastore, Arc<Cache>) {
    let folder = tempfile::tempdir().unwrap();
    let store = Datastore::open(folder.path().join("test.db")).unwrap();
    let cache = Arc::new(Cache::new(config()));
    store.watch_writes(cache.watcher());
    for id in BUCKETS {
        store.create_bucket(bucket(id, Vec::new())).unwrap();
    }
    (folder, store, cache)
}

fn answer(result: Result<String, aw_query::QueryError>) -> Result<String, String> {
    result.map_err(|err| err.to_string())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn every_answer_equals_the_uncached_one(ops in prop::collection::vec(op(), 1..60)) {
        let (_folder, store, cache) = open();
        for op in &ops {
            apply(&store, op);
            if let Op::Query { program, start, length, now } = *op {
                // Asked twice: the second is the cache's answer when the
                // first was kept.
                let periods = [
                    TimeInterval::new(at(start), at(start + length)),
                    TimeInterval::new(at(start + length), at(start + 2 * length)),
                ];
                let hits = cache.stats().hits;
                let mut ok = true;
                for _ in 0..2 {
                    let cached = answer(aw_cache::query_json(
                        &cache, PROGRAMS[program], &periods, &store, at(now),
                    ));
                    let fresh = answer(aw_query::query_json(PROGRAMS[program], &periods, &store));
                    ok = fresh.is_ok();
                    prop_assert_eq!(cached, fresh, "after {:?}", op);
                }
                // The second time, a finished period's answer came from
                // the cache.
                let finished = periods
                    .iter()
                    .filter(|p| cache.is_finished(Period::new(p.start, p.end), at(now)))
                    .count() as u64;
                if ok {
                    prop_assert!(cache.stats().hits >= hits + finished);
                }
            }
        }
        prop_assert!(cache.stats().bytes <= config().max_bytes as u64);
    }
}

#[test]
fn a_finished_day_is_answered_from_the_cache_until_a_write_touches_it() {
    let (_folder, store, cache) = open();
    store
        .insert_events("window", vec![event(HOUR, HOUR, "editor")])
        .unwrap();
    let day = [TimeInterval::new(at(0), at(24 * HOUR))];
    let now = at(10 * 24 * HOUR);
    let program = PROGRAMS[0];
    let first = aw_cache::query_json(&cache, program, &day, &store, now).unwrap();
    assert_eq!(cache.stats().entries, 1);
    let again = aw_cache::query_json(&cache, program, &day, &store, now).unwrap();
    assert_eq!(again, first);
    assert_eq!(cache.stats().hits, 1);
    // A heartbeat extending an event of another day leaves it.
    store
        .heartbeat(
            "window",
            event(30 * HOUR, 1, "editor"),
            Duration::from_secs(60),
        )
        .unwrap();
    store
        .heartbeat(
            "window",
            event(30 * HOUR + 30, 1, "editor"),
            Duration::from_secs(60),
        )
        .unwrap();
    assert_eq!(cache.stats().entries, 1);
    // One inside the day drops it, and the next answer has it.
    store
        .insert_events("window", vec![event(5 * HOUR, HOUR, "browser")])
        .unwrap();
    assert_eq!(cache.stats().entries, 0);
    let after = aw_cache::query_json(&cache, program, &day, &store, now).unwrap();
    assert!(after.contains("browser"), "{after}");
    // An import into the bucket (the writer's bulk path, without the
    // insert trigger) drops the day too, and the trigger is back after.
    assert_eq!(cache.stats().entries, 1);
    store
        .import_events("window", vec![event(7 * HOUR, HOUR, "imported")])
        .unwrap();
    assert_eq!(cache.stats().entries, 0);
    let imported = aw_cache::query_json(&cache, program, &day, &store, now).unwrap();
    assert!(imported.contains("imported"), "{imported}");
    store
        .insert_events("window", vec![event(9 * HOUR, HOUR, "terminal")])
        .unwrap();
    assert_eq!(cache.stats().entries, 0);
}

#[test]
fn an_unfinished_period_and_a_program_naming_timeinterval_are_not_kept() {
    let (_folder, store, cache) = open();
    let day = [TimeInterval::new(at(0), at(24 * HOUR))];
    aw_cache::query_json(&cache, PROGRAMS[0], &day, &store, at(24 * HOUR + 60)).unwrap();
    assert_eq!(cache.stats().entries, 0);
    let widening = r#"TIMEINTERVAL = "2000-01-01T00:00:00Z/2100-01-01T00:00:00Z";
        RETURN = query_bucket("window");"#;
    aw_cache::query_json(&cache, widening, &day, &store, at(30 * 24 * HOUR)).unwrap();
    assert_eq!(cache.stats().entries, 0);
}

/// Reads like the datastore, but the first read, once it has its events,
/// waits for a write into the same period to commit before it returns
/// them: the answer computed from them is stale from the start.
struct RacedSource<'a> {
    store: &'a Datastore,
    raced: AtomicBool,
}

impl EventSource for RacedSource<'_> {
    fn query_bucket(
        &self,
        bucket_id: &str,
        interval: &TimeInterval,
    ) -> Result<Vec<SharedEvent>, SourceError> {
        let events = EventSource::query_bucket(self.store, bucket_id, interval)?;
        if !self.raced.swap(true, Ordering::SeqCst) {
            self.store
                .insert_events("window", vec![event(7 * HOUR, HOUR, "raced")])
                .unwrap();
        }
        Ok(events)
    }

    fn buckets(&self) -> Result<Vec<(String, String)>, SourceError> {
        EventSource::buckets(self.store)
    }

    fn count_events(&self, bucket_id: &str, interval: &TimeInterval) -> Result<u64, SourceError> {
        EventSource::count_events(self.store, bucket_id, interval)
    }
}

#[test]
fn an_answer_raced_by_a_write_to_its_period_is_not_kept() {
    let (_folder, store, cache) = open();
    let day = [TimeInterval::new(at(0), at(24 * HOUR))];
    let now = at(10 * 24 * HOUR);
    let raced = RacedSource {
        store: &store,
        raced: AtomicBool::new(false),
    };
    let stale = aw_cache::query_json(&cache, PROGRAMS[0], &day, &raced, now).unwrap();
    assert!(!stale.contains("raced"), "{stale}");
    assert_eq!(cache.stats().entries, 0);
    assert_eq!(cache.stats().refused, 1);
    let fresh = aw_cache::query_json(&cache, PROGRAMS[0], &day, &store, now).unwrap();
    assert!(fresh.contains("raced"), "{fresh}");
    // That one is kept, and is what the next request gets.
    assert_eq!(cache.stats().entries, 1);
}
