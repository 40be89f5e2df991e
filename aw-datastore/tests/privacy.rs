//! Privacy filters: the `privacy_filters` setting applies to
//! every write path from the moment it is stored, and to history on
//! request; deleting a time range; retention; space given back.

mod common;
#[path = "support/privacy_rules.rs"]
mod privacy_rules;

use aw_datastore::{Datastore, DatastoreError, EventQuery, PRIVACY_FILTERS_KEY};
use aw_models::{Duration, Event};
use common::*;
use privacy_rules::webui_defaults;
use serde_json::{json, Value};

const WINDOW: &str = "aw-watcher-window_host";

fn title(text: &str) -> Value {
    json!({"app": "firefox", "title": text})
}

fn titles(store: &Datastore, bucket_id: &str) -> Vec<String> {
    common::oldest_first(store, bucket_id)
        .iter()
        .map(|event| event.data["title"].as_str().unwrap_or("").to_string())
        .collect()
}

fn window_store() -> (TempDb, Datastore) {
    let db = TempDb::new();
    let store = db.open();
    store.create_bucket(bucket(WINDOW)).unwrap();
    store.create_bucket(bucket("other")).unwrap();
    (db, store)
}

#[test]
fn rules_apply_to_inserts_heartbeats_and_imports_from_the_moment_they_are_saved() {
    let (db, store) = window_store();
    store
        .insert_events(WINDOW, vec![event(0, 5, title("Incognito tab"))])
        .unwrap();
    store
        .set_setting(PRIVACY_FILTERS_KEY, webui_defaults())
        .unwrap();
    let stored = store
        .insert_events(
            WINDOW,
            vec![
                event(10, 5, title("Private Browsing")),
                event(20, 5, title("My banking page")),
                event(30, 5, title("news")),
            ],
        )
        .unwrap();
    assert_eq!(stored.len(), 2, "the dropped event is not answered");
    store
        .heartbeat(
            WINDOW,
            event(40, 0, title("INCOGNITO")),
            Duration::from_secs(5),
        )
        .unwrap();
    let mut imported = bucket("aw-watcher-window_other-host");
    imported.events = Some(vec![
        event(50, 5, title("incognito")),
        event(60, 5, title("banking")),
    ]);
    let summary = store.import_bucket(imported).unwrap();
    assert_eq!((summary.inserted, summary.dropped), (1, 1));
    let summary = store
        .import_events(
            WINDOW,
            vec![
                event(70, 5, title("private browsing")),
                event(80, 5, title("BANKING 2")),
            ],
        )
        .unwrap();
    assert_eq!((summary.inserted, summary.dropped), (1, 1));
    // A bucket created with its events.
    let mut created = bucket("aw-watcher-window_third");
    created.events = Some(vec![
        event(90, 5, title("incognito")),
        event(95, 1, title("ok")),
    ]);
    store.create_bucket(created).unwrap();
    // Other buckets are untouched.
    store
        .insert_events("other", vec![event(10, 5, title("incognito"))])
        .unwrap();

    assert_eq!(
        titles(&store, WINDOW),
        ["Incognito tab", "REDACTED", "news", "REDACTED"],
        "history before the rules stays until they are applied to it"
    );
    assert_eq!(titles(&store, "aw-watcher-window_other-host"), ["REDACTED"]);
    assert_eq!(titles(&store, "aw-watcher-window_third"), ["ok"]);
    assert_eq!(titles(&store, "other"), ["incognito"]);

    // The rules are stored, so a reopened file applies them too.
    store.close().unwrap();
    let store = db.open();
    store
        .insert_events(WINDOW, vec![event(100, 5, title("incognito"))])
        .unwrap();
    assert_eq!(store.count_events(WINDOW, None, None).wait().unwrap(), 4);
    // Deleting the setting turns filtering off.
    store.delete_setting(PRIVACY_FILTERS_KEY).unwrap();
    store
        .insert_events(WINDOW, vec![event(110, 5, title("incognito"))])
        .unwrap();
    assert_eq!(store.count_events(WINDOW, None, None).wait().unwrap(), 5);
}

#[test]
fn a_dropped_heartbeat_answers_the_last_event_and_ends_the_merge_chain() {
    let (_db, store) = window_store();
    store
        .set_setting(PRIVACY_FILTERS_KEY, webui_defaults())
        .unwrap();
    let pulse = Duration::from_secs(60);
    // In an empty bucket: the heartbeat's time, no data.
    let answer = store
        .heartbeat(WINDOW, event(0, 0, title("incognito")), pulse)
        .unwrap();
    assert_eq!(
        (answer.id, answer.timestamp, answer.data.len()),
        (None, at(0), 0)
    );
    store
        .heartbeat(WINDOW, event(10, 0, title("a")), pulse)
        .unwrap();
    let first = store
        .heartbeat(WINDOW, event(15, 0, title("a")), pulse)
        .unwrap();
    assert_eq!(first.duration, Duration::from_secs(5));
    let answer = store
        .heartbeat(WINDOW, event(20, 0, title("Private Browsing")), pulse)
        .unwrap();
    assert_eq!(
        answer, first,
        "the last stored event, never the private one"
    );
    let after = store
        .heartbeat(WINDOW, event(30, 0, title("a")), pulse)
        .unwrap();
    assert_ne!(
        after.id, first.id,
        "no event stretches over the private interval"
    );
    assert_eq!(
        spans(&store.events(WINDOW, EventQuery::default()).wait().unwrap()),
        [(30, 0), (10, 5)]
    );
    // The chain goes on from there.
    let merged = store
        .heartbeat(WINDOW, event(35, 0, title("a")), pulse)
        .unwrap();
    assert_eq!(
        (merged.id, merged.duration),
        (after.id, Duration::from_secs(5))
    );
}

#[test]
fn redacted_heartbeats_merge_on_their_redacted_data() {
    let (_db, store) = window_store();
    store
        .set_setting(PRIVACY_FILTERS_KEY, webui_defaults())
        .unwrap();
    let pulse = Duration::from_secs(60);
    let first = store
        .heartbeat(
            WINDOW,
            event(0, 0, json!({"title": "Banking: balance"})),
            pulse,
        )
        .unwrap();
    let second = store
        .heartbeat(
            WINDOW,
            event(10, 0, json!({"title": "Banking: transfers"})),
            pulse,
        )
        .unwrap();
    assert_eq!(second.id, first.id);
    assert_eq!(second.data, object(json!({"title": "REDACTED"})));
    assert_eq!(store.count_events(WINDOW, None, None).wait().unwrap(), 1);
}

#[test]
fn invalid_rules_are_refused_and_the_rules_in_force_stay() {
    let (_db, store) = window_store();
    store
        .set_setting(PRIVACY_FILTERS_KEY, webui_defaults())
        .unwrap();
    let bad = json!([{"enabled": true, "field": "title", "pattern": "(", "action": "drop"}]);
    match store.set_setting(PRIVACY_FILTERS_KEY, bad) {
        Err(DatastoreError::InvalidInput(message)) => {
            assert!(message.contains("rule 1"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        store.setting(PRIVACY_FILTERS_KEY).wait().unwrap(),
        Some(webui_defaults())
    );
    store
        .insert_events(WINDOW, vec![event(0, 1, title("incognito"))])
        .unwrap();
    assert_eq!(store.count_events(WINDOW, None, None).wait().unwrap(), 0);
}

#[test]
fn rules_a_file_holds_apply_without_those_that_cannot_be_used() {
    // aw-server-rust stores any JSON under the key: a set with one rule
    // that does not compile and one this server does not know.
    let (db, store) = window_store();
    store
        .insert_events(WINDOW, vec![event(0, 5, title("incognito before"))])
        .unwrap();
    store.close().unwrap();
    let mut rules = webui_defaults();
    let list = rules.as_array_mut().unwrap();
    list.insert(
        1,
        json!({"enabled": true, "field": "title", "pattern": "(", "action": "drop"}),
    );
    list.push(json!({"enabled": true, "field": "title", "pattern": "news", "action": "hide"}));
    let conn = rusqlite::Connection::open(db.path()).unwrap();
    conn.execute(
        "INSERT OR REPLACE INTO key_value (key, value, last_modified) VALUES (?1, ?2, 0)",
        rusqlite::params![format!("settings.{PRIVACY_FILTERS_KEY}"), rules.to_string()],
    )
    .unwrap();
    drop(conn);

    let store = db.open();
    store
        .insert_events(
            WINDOW,
            vec![
                event(10, 5, title("Incognito tab")),
                event(20, 5, title("My banking page")),
                event(30, 5, title("news")),
            ],
        )
        .unwrap();
    assert_eq!(
        titles(&store, WINDOW),
        ["incognito before", "REDACTED", "news"],
        "the two usable rules apply; the others are left out"
    );
    let preview = store.preview_privacy_rules(&mut |_| {}).unwrap();
    assert_eq!(preview[0].outcome.dropped, 1, "{preview:?}");
    // Saving the set as it is stays refused, naming the first bad rule.
    match store.set_setting(PRIVACY_FILTERS_KEY, rules) {
        Err(DatastoreError::InvalidInput(message)) => {
            assert!(message.contains("rule 2"), "{message}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn applying_rules_to_history_counts_the_same_dry_and_real_and_is_idempotent() {
    let (_db, store) = window_store();
    let mut events = Vec::new();
    for index in 0..2500 {
        let text = match index % 5 {
            0 => "Incognito".to_string(),
            1 => format!("banking {index}"),
            _ => format!("page {}", index % 7),
        };
        events.push(event(index * 10, 5, title(&text)));
    }
    store.insert_events(WINDOW, events.clone()).unwrap();
    store.insert_events("other", events).unwrap();
    store
        .set_setting(PRIVACY_FILTERS_KEY, webui_defaults())
        .unwrap();
    let preview = store.preview_privacy_rules(&mut |_| {}).unwrap();
    assert_eq!(preview.len(), 1, "only the window bucket: {preview:?}");
    assert_eq!(preview[0].bucket_id, WINDOW);
    assert_eq!(
        (preview[0].outcome.dropped, preview[0].outcome.redacted),
        (500, 500)
    );
    assert_eq!(
        store.count_events(WINDOW, None, None).wait().unwrap(),
        2500,
        "a dry run changes nothing"
    );
    let mut heard = 0;
    let applied = store.apply_privacy_rules(&mut |_| heard += 1).unwrap();
    assert_eq!(applied, preview);
    assert!(heard >= 3, "progress after each chunk");
    assert_eq!(store.count_events(WINDOW, None, None).wait().unwrap(), 2000);
    assert_eq!(
        store.count_events("other", None, None).wait().unwrap(),
        2500
    );
    let titles = titles(&store, WINDOW);
    assert_eq!(titles.iter().filter(|t| *t == "REDACTED").count(), 500);
    assert!(!titles
        .iter()
        .any(|t| t.contains("banking") || t == "Incognito"));
    let again = store.apply_privacy_rules(&mut |_| {}).unwrap();
    assert_eq!(
        (again[0].outcome.dropped, again[0].outcome.redacted),
        (0, 0)
    );
}

/// Events of bucket "b": 0-10, 20-30, 40-50, 60-70 (seconds), and one in
/// "c" over the same range.
fn four_events() -> (TempDb, Datastore) {
    let (db, store) = with_bucket();
    store.create_bucket(bucket("c")).unwrap();
    let events: Vec<Event> = (0..4).map(|i| event(i * 20, 10, app("a"))).collect();
    store.insert_events("b", events.clone()).unwrap();
    store.insert_events("c", events).unwrap();
    (db, store)
}

fn remaining(store: &Datastore, bucket_id: &str) -> Vec<(i64, i64)> {
    let mut spans = spans(
        &store
            .events(bucket_id, EventQuery::default())
            .wait()
            .unwrap(),
    );
    spans.reverse();
    spans
}

#[test]
fn deleting_a_range_deletes_inside_and_trims_crossing_events() {
    let (_db, store) = four_events();
    let preview = store.preview_range_deletion("b", at(5), at(45)).unwrap();
    let done = store.delete_range("b", at(5), at(45), &mut |_| {}).unwrap();
    assert_eq!(done, preview);
    assert_eq!((done.deleted, done.trimmed), (1, 2));
    assert_eq!(remaining(&store, "b"), [(0, 5), (45, 5), (60, 10)]);
    assert_eq!(remaining(&store, "c").len(), 4, "other buckets untouched");
    // The bucket facts follow: count and edges without SQL.
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 3);
    assert_eq!(
        store
            .count_events("b", Some(at(41)), Some(at(44)))
            .wait()
            .unwrap(),
        0
    );
    // Again: nothing left to do.
    let again = store.delete_range("b", at(5), at(45), &mut |_| {}).unwrap();
    assert_eq!((again.deleted, again.trimmed), (0, 0));
}

#[test]
fn an_event_spanning_the_range_is_split_and_counted_once() {
    let (_db, store) = with_bucket();
    let stored = store
        .insert_events("b", vec![event(0, 100, app("long"))])
        .unwrap();
    let done = store
        .delete_range("b", at(40), at(60), &mut |_| {})
        .unwrap();
    assert_eq!((done.deleted, done.trimmed), (0, 1));
    let events = store.events("b", EventQuery::default()).wait().unwrap();
    assert_eq!(spans(&events), [(60, 40), (0, 40)]);
    assert!(events.iter().all(|e| e.data == object(app("long"))));
    assert_eq!(events[1].id, stored[0].id);
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 2);
}

#[test]
fn empty_ranges_and_edges_touch_nothing() {
    let (_db, store) = four_events();
    // No event in it.
    let done = store
        .delete_range("b", at(10), at(20), &mut |_| {})
        .unwrap();
    assert_eq!((done.deleted, done.trimmed), (0, 0));
    // A range of no length, inside an event.
    let done = store
        .delete_range("b", at(25), at(25), &mut |_| {})
        .unwrap();
    assert_eq!((done.deleted, done.trimmed), (0, 0));
    assert_eq!(
        remaining(&store, "b"),
        [(0, 10), (20, 10), (40, 10), (60, 10)]
    );
    // An event of no length at the start is inside, one at the end is not.
    store
        .insert_events("b", vec![event(80, 0, app("x")), event(90, 0, app("y"))])
        .unwrap();
    let done = store
        .delete_range("b", at(80), at(90), &mut |_| {})
        .unwrap();
    assert_eq!((done.deleted, done.trimmed), (1, 0));
    assert!(matches!(
        store.delete_range("b", at(30), at(20), &mut |_| {}),
        Err(DatastoreError::InvalidInput(_))
    ));
    assert!(matches!(
        store.delete_range("nope", at(0), at(20), &mut |_| {}),
        Err(DatastoreError::NoSuchBucket(_))
    ));
}

#[test]
fn a_heartbeat_after_a_range_delete_does_not_merge_into_a_deleted_event() {
    let (_db, store) = with_bucket();
    let pulse = Duration::from_secs(60);
    store.heartbeat("b", event(0, 0, app("a")), pulse).unwrap();
    store.heartbeat("b", event(10, 0, app("a")), pulse).unwrap();
    store
        .delete_range("b", at(0), at(100), &mut |_| {})
        .unwrap();
    let next = store.heartbeat("b", event(20, 0, app("a")), pulse).unwrap();
    assert_eq!(next.timestamp, at(20));
    assert_eq!(remaining(&store, "b"), [(20, 0)]);
}

#[test]
fn many_events_are_deleted_chunk_by_chunk() {
    let (_db, store) = with_bucket();
    let events: Vec<Event> = (0..3500).map(|i| event(i * 10, 10, app("a"))).collect();
    store.insert_events("b", events).unwrap();
    let mut chunks = 0;
    let done = store
        .delete_range("b", at(5), at(30_005), &mut |_| chunks += 1)
        .unwrap();
    assert_eq!((done.deleted, done.trimmed), (2999, 2));
    assert!(chunks >= 3, "{chunks}");
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 501);
}

#[test]
fn expiry_deletes_events_that_ended_before_the_cutoff() {
    let (_db, store) = four_events();
    let expired = store.expire(at(40), &mut |_| {}).unwrap();
    // 0-10 and 20-30 ended before 40; 40-50 did not.
    assert_eq!(
        expired
            .iter()
            .map(|e| (e.bucket_id.as_str(), e.deleted))
            .collect::<Vec<_>>(),
        [("b", 2), ("c", 2)]
    );
    assert_eq!(remaining(&store, "b"), [(40, 10), (60, 10)]);
    assert!(store.expire(at(40), &mut |_| {}).unwrap().is_empty());
}

fn big_events(store: &Datastore) {
    let big = "x".repeat(2000);
    let events: Vec<Event> = (0..4000)
        .map(|i| event(i * 10, 10, json!({"title": format!("{big}{i}")})))
        .collect();
    store.insert_events("b", events).unwrap();
}

fn file_size(db: &TempDb) -> u64 {
    std::fs::metadata(db.path()).unwrap().len()
}

fn auto_vacuum(db: &TempDb) -> i64 {
    let conn = rusqlite::Connection::open(db.path()).unwrap();
    conn.query_row("PRAGMA auto_vacuum", [], |row| row.get(0))
        .unwrap()
}

#[test]
fn new_files_give_deleted_space_back() {
    let (db, store) = with_bucket();
    big_events(&store);
    store.close().unwrap();
    assert_eq!(auto_vacuum(&db), 2, "incremental");
    let full = file_size(&db);
    let store = db.open();
    store
        .delete_range("b", at(0), at(30_000), &mut |_| {})
        .unwrap();
    store.close().unwrap();
    let after = file_size(&db);
    assert!(after < full / 2, "{full} -> {after}");
}

#[test]
fn vacuum_shrinks_a_file_without_incremental_vacuum_and_turns_it_on() {
    let (db, store) = with_bucket();
    store.close().unwrap();
    {
        // As aw-server-rust creates files.
        let conn = rusqlite::Connection::open(db.path()).unwrap();
        conn.execute_batch("PRAGMA auto_vacuum = NONE; VACUUM;")
            .unwrap();
    }
    assert_eq!(auto_vacuum(&db), 0);
    let store = db.open();
    big_events(&store);
    store
        .delete_range("b", at(0), at(30_000), &mut |_| {})
        .unwrap();
    store.close().unwrap();
    let before = file_size(&db);
    let store = db.open();
    store.vacuum().unwrap();
    store.close().unwrap();
    let after = file_size(&db);
    assert!(after < before / 2, "{before} -> {after}");
    assert_eq!(auto_vacuum(&db), 2);
    let store = db.open();
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 1000);
    store
        .insert_events("b", vec![event(1_000_000, 1, app("after"))])
        .unwrap();
    assert_eq!(store.count_events("b", None, None).wait().unwrap(), 1001);
}

#[test]
fn a_scratch_store_applies_rules_to_history_as_a_file_does() {
    let store = Datastore::open_in_memory().unwrap();
    store.create_bucket(bucket(WINDOW)).unwrap();
    let events: Vec<Event> = (0..1200)
        .map(|i| {
            event(
                i * 10,
                5,
                title(["incognito", "banking", "page"][i as usize % 3]),
            )
        })
        .collect();
    store.insert_events(WINDOW, events).unwrap();
    store
        .set_setting(PRIVACY_FILTERS_KEY, webui_defaults())
        .unwrap();
    let preview = store.preview_privacy_rules(&mut |_| {}).unwrap();
    assert_eq!(
        (preview[0].outcome.dropped, preview[0].outcome.redacted),
        (400, 400)
    );
    let applied = store.apply_privacy_rules(&mut |_| {}).unwrap();
    assert_eq!(applied, preview);
    assert_eq!(store.count_events(WINDOW, None, None).wait().unwrap(), 800);
}
