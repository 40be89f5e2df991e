//! Reads of only the keys a program can observe (`keys.rs`) must give the
//! answers of whole reads: from memory and from the datastore (on one
//! thread and, for a long read, on two), with `flood` merging and
//! splitting as it does on whole objects.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use aw_datastore::Datastore;
use aw_models::{Bucket, BucketMetadata, Data, Event, ProjectedEvents, SharedEvent, TimeInterval};
use aw_query::{fork_always, query_json, EventSource, MemorySource, SourceError};
use common::*;
use serde_json::json;

/// `fork_always` is one switch for the process: the tests take turns.
static TURN: Mutex<()> = Mutex::new(());

/// A source that counts the projected reads it is asked for.
struct Counting<S> {
    inner: S,
    projected: AtomicUsize,
}

impl<S: EventSource> EventSource for Counting<S> {
    fn query_bucket(
        &self,
        bucket_id: &str,
        interval: &TimeInterval,
    ) -> Result<Vec<SharedEvent>, SourceError> {
        self.inner.query_bucket(bucket_id, interval)
    }

    fn buckets(&self) -> Result<Vec<(String, String)>, SourceError> {
        self.inner.buckets()
    }

    fn count_events(&self, bucket_id: &str, interval: &TimeInterval) -> Result<u64, SourceError> {
        self.inner.count_events(bucket_id, interval)
    }

    fn query_bucket_projected(
        &self,
        bucket_id: &str,
        interval: &TimeInterval,
        keys: &[String],
    ) -> Result<ProjectedEvents, SourceError> {
        self.projected.fetch_add(1, Ordering::SeqCst);
        self.inner.query_bucket_projected(bucket_id, interval, keys)
    }
}

const WINDOW: &str = "aw-watcher-window_laptop";
const AFK: &str = "aw-watcher-afk_laptop";
const WEB: &str = "aw-watcher-web-firefox_laptop";

/// The buckets: browser events every 5 s whose neighbours differ only in
/// their tab count (so `flood` must not merge them), some overlapping by a
/// second and some leaving a gap of one nanosecond (an odd gap is split
/// with a nanosecond lost), `web` of them in all; window and AFK events
/// around them.
fn buckets(web: i64) -> Vec<(&'static str, Vec<Event>)> {
    let second = 1_000_000_000_i64;
    let at = |nanos: i64, duration: i64, data: serde_json::Value| {
        let mut event = ev(0, 0.0, 0.0, data);
        event.timestamp = aw_models::Timestamp::from_nanos(at(0.0).nanos() + nanos);
        event.duration = aw_models::Duration::from_nanos(duration);
        event.id = None;
        event
    };
    let browser = (0..web)
        .map(|i| {
            let duration = if i % 2 == 0 {
                6 * second
            } else {
                5 * second - 1
            };
            let page = (i / 4) % 3;
            let data = json!({
                "url": format!("https://site{page}.example/p?q={}", (i / 12) % 5),
                "title": format!("Page {page}"),
                "audible": (i / 40) % 2 == 0,
                "tabCount": i % 2,
                "incognito": false,
            });
            at(5 * second * i, duration, data)
        })
        .collect();
    let window = (0..web / 4 + 1)
        .map(|j| {
            let app = if j % 3 == 2 { "vim" } else { "Firefox" };
            let data = json!({"app": app, "title": format!("{app} {}", j % 4)});
            at(20 * second * j, 20 * second, data)
        })
        .collect();
    let afk = (0..web / 60 + 1)
        .map(|k| {
            let status = if k % 4 == 3 { "afk" } else { "not-afk" };
            at(300 * second * k, 300 * second, json!({"status": status}))
        })
        .collect();
    vec![(WINDOW, window), (AFK, afk), (WEB, browser)]
}

fn memory(web: i64) -> MemorySource {
    let mut source = MemorySource::new();
    for (id, events) in buckets(web) {
        source.insert(id, "laptop", events);
    }
    source
}

fn datastore(web: i64) -> Datastore {
    let store = Datastore::open_in_memory().unwrap();
    for (id, events) in buckets(web) {
        store
            .create_bucket(Bucket {
                id: id.to_string(),
                kind: "test".to_string(),
                client: "test".to_string(),
                hostname: "laptop".to_string(),
                created: None,
                data: Data::new(),
                metadata: BucketMetadata::default(),
                events: None,
                last_updated: None,
            })
            .unwrap();
        store.insert_events(id, events).unwrap();
    }
    store
}

/// The dashboard's program, and others whose reads are projected.
const PROGRAMS: &[&str] = &[
    r#"
    events = flood(query_bucket("aw-watcher-window_laptop"));
    not_afk = flood(query_bucket("aw-watcher-afk_laptop"));
    not_afk = filter_keyvals(not_afk, "status", ["not-afk"]);
    events_web = flood(query_bucket("aw-watcher-web-firefox_laptop"));
    window_web = filter_keyvals(events, "app", ["Firefox"]);
    events_web = filter_period_intersect(events_web, window_web);
    events_web = split_url_events(events_web);
    browser_events = sort_by_timestamp(concat(events_web));
    audible_events = filter_keyvals(browser_events, "audible", [true]);
    not_afk = period_union(not_afk, audible_events);
    events = filter_period_intersect(events, not_afk);
    events = categorize(events, [[["Work"], {"type": "regex", "regex": "vim"}]]);
    title_events = sort_by_duration(merge_events_by_keys(events, ["app", "title"]));
    browser_events = split_url_events(browser_events);
    urls = sort_by_duration(merge_events_by_keys(browser_events, ["url"]));
    domains = sort_by_duration(merge_events_by_keys(browser_events, ["$domain"]));
    titles = sort_by_duration(merge_events_by_keys(browser_events, ["title"]));
    RETURN = {"titles": title_events, "active": not_afk, "duration": sum_durations(events),
              "urls": urls, "domains": domains, "web_titles": titles,
              "web_duration": sum_durations(browser_events)};
    "#,
    r#"
    web = flood(query_bucket(find_bucket("aw-watcher-web-")));
    web = exclude_keyvals(web, "audible", [false]);
    chunks = chunk_events_by_key(web, "title");
    both = union_no_overlap(limit_events(web, 50), sort_by_duration(web));
    RETURN = {"chunks": merge_events_by_keys(chunks, ["title"]), "n": sum_durations(web),
              "union": merge_events_by_keys(both, ["url"])};
    "#,
    r#"
    web = query_bucket("aw-watcher-web-firefox_laptop");
    web = flood(web);
    RETURN = merge_events_by_keys(web, ["url"]);
    "#,
];

/// The answers of `program` on `source`, read whole (a day is too short
/// for projected reads) and with projected reads forced, and how many projected reads
/// the second asked for.
fn both<S: EventSource>(program: &str, source: &Counting<S>) -> (String, String, usize) {
    let periods = [period()];
    let run = || match query_json(program, &periods, source) {
        Ok(text) => text,
        Err(error) => format!("error {:?} {:?} {}", error.kind, error.pos, error.message),
    };
    fork_always(false);
    let whole = run();
    let before = source.projected.load(Ordering::SeqCst);
    fork_always(true);
    let projected = run();
    fork_always(false);
    (
        whole,
        projected,
        source.projected.load(Ordering::SeqCst) - before,
    )
}

fn check<S: EventSource>(source: &Counting<S>, projected_reads: &[usize]) {
    let _turn = TURN.lock().unwrap_or_else(PoisonError::into_inner);
    for (program, expected) in PROGRAMS.iter().zip(projected_reads) {
        let (whole, projected, reads) = both(program, source);
        assert!(!whole.starts_with("error"), "{whole}");
        assert_eq!(projected, whole, "{program}");
        assert_eq!(reads, *expected, "projected reads of {program}");
    }
}

#[test]
fn projected_reads_from_memory_answer_as_whole_reads() {
    let source = Counting {
        inner: memory(600),
        projected: AtomicUsize::new(0),
    };
    // The dashboard: the AFK and browser reads (the window's events are
    // categorized, which matches every value).
    check(&source, &[2, 1, 0]);
}

#[test]
fn projected_reads_from_the_datastore_answer_as_whole_reads() {
    for web in [600, 25_000] {
        let source = Counting {
            inner: datastore(web),
            projected: AtomicUsize::new(0),
        };
        check(&source, &[2, 1, 0]);
    }
}
