//! The damage matrix on a generated database of 30,000
//! events: random bytes over one table leaf page, over one index leaf
//! page, over five table leaf pages; the header zeroed; the file truncated
//! mid-page; a garbage `-wal`; the `-wal` gone after an unclean stop.
//!
//! Salvage must serve every event outside the damaged leaf pages (counted
//! from the pages' own cell counts), exactly as generated, with ids kept
//! and the counter above the highest issued; the damaged file is moved
//! aside byte for byte; a file that is no database is left byte-identical
//! and refused. A damaged interior page loses the leaves under it (the
//! test prints how many). Time budget: about 10 s in a debug build.

mod common;
#[path = "support/pages.rs"]
mod pages;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use aw_datastore::salvage::{self, Health};
use aw_datastore::{Datastore, DatastoreError, EventQuery};
use aw_models::Event;
use common::{bucket, event};
use pages::{pages_of_kind, scramble, INDEX_LEAF, PAGE, TABLE_INTERIOR, TABLE_LEAF};
use serde_json::json;

const BUCKETS: [&str; 3] = [
    "aw-watcher-window_me",
    "aw-watcher-afk_me",
    "aw-watcher-web_me",
];
const EVENTS: usize = 30_000;

/// A generated database at `dir/db.sqlite`, closed cleanly; the events by
/// id as stored.
fn generated(dir: &Path) -> (PathBuf, BTreeMap<i64, Event>) {
    let path = dir.join("db.sqlite");
    let store = Datastore::open(&path).unwrap();
    for id in BUCKETS {
        store.create_bucket(bucket(id)).unwrap();
    }
    let mut stored = BTreeMap::new();
    for chunk in 0..(EVENTS / 1_000) {
        let bucket_id = BUCKETS[chunk % BUCKETS.len()];
        let events: Vec<Event> = (0..1_000)
            .map(|n| {
                let at = (chunk * 1_000 + n) as i64 * 60;
                event(
                    at,
                    50,
                    json!({"app": format!("app{}", n % 9), "title": format!("window {chunk}-{n} of the generated year")}),
                )
            })
            .collect();
        for event in store.insert_events(bucket_id, events).unwrap() {
            stored.insert(event.id.unwrap(), event);
        }
    }
    store.close().unwrap();
    (path, stored)
}

/// The events of every bucket of the database at `path`, by id.
fn served(path: &Path) -> BTreeMap<i64, Event> {
    let store = Datastore::open(path).unwrap();
    let mut events = BTreeMap::new();
    for (id, _) in store.buckets().wait().unwrap() {
        for event in store
            .events(&id, EventQuery::default())
            .wait()
            .unwrap()
            .iter()
        {
            events.insert(event.id.unwrap(), event.clone());
        }
    }
    store.close().unwrap();
    events
}

/// Salvages `path` and checks what every case expects: the file moved
/// aside unchanged, every event served as generated, none twice, new ids
/// above every issued. Returns the events served.
fn salvage_and_check(path: &Path, generated: &BTreeMap<i64, Event>) -> BTreeMap<i64, Event> {
    let damaged_bytes = std::fs::read(path).unwrap();
    assert!(matches!(
        salvage::check(path, None).unwrap(),
        Health::Damaged(_)
    ));
    let report = salvage::salvage(path, None).unwrap();
    assert_eq!(std::fs::read(&report.damaged).unwrap(), damaged_bytes);
    let events = served(path);
    for (id, event) in &events {
        assert_eq!(generated.get(id), Some(event), "event {id} differs");
    }
    assert_eq!(report.events, events.len() as u64);
    // Lost ids are ids the damaged file issued, none above.
    let top = *generated.keys().last().unwrap();
    assert!(report
        .lost_event_ids
        .iter()
        .all(|&(from, to)| from < to && to <= top + 1));
    let recovered: u64 = report.buckets.iter().map(|b| b.recovered).sum();
    assert_eq!(recovered, report.events);
    // New events go on above every id the damaged file issued.
    let store = Datastore::open(path).unwrap();
    let added = store
        .insert_events(
            BUCKETS[0],
            vec![event(10_000_000, 1, json!({"app": "new"}))],
        )
        .unwrap();
    assert!(added[0].id.unwrap() > *generated.keys().last().unwrap());
    store.close().unwrap();
    eprintln!(
        "salvaged {} of {} events in {:.0} ms, lost ids {:?}",
        events.len(),
        generated.len(),
        report.took.as_secs_f64() * 1000.0,
        report.lost_event_ids
    );
    events
}

#[test]
fn one_damaged_table_leaf_page_costs_only_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (path, generated) = generated(dir.path());
    let mut file = std::fs::read(&path).unwrap();
    let leaves = pages_of_kind(&file, TABLE_LEAF);
    let (index, cells) = leaves[leaves.len() / 2];
    scramble(&mut file, index, 7);
    std::fs::write(&path, &file).unwrap();
    let events = salvage_and_check(&path, &generated);
    assert_eq!(events.len(), generated.len() - cells as usize);
}

#[test]
fn a_damaged_index_page_costs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (path, generated) = generated(dir.path());
    let mut file = std::fs::read(&path).unwrap();
    let leaves = pages_of_kind(&file, INDEX_LEAF);
    scramble(&mut file, leaves[leaves.len() / 2].0, 11);
    std::fs::write(&path, &file).unwrap();
    let events = salvage_and_check(&path, &generated);
    assert_eq!(events.len(), generated.len());
}

#[test]
fn five_damaged_table_leaf_pages_cost_only_their_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (path, generated) = generated(dir.path());
    let mut file = std::fs::read(&path).unwrap();
    let leaves = pages_of_kind(&file, TABLE_LEAF);
    let mut lost = 0;
    for k in 1..=5 {
        let (index, cells) = leaves[leaves.len() * k / 6];
        scramble(&mut file, index, 100 + k as u64);
        lost += cells as usize;
    }
    std::fs::write(&path, &file).unwrap();
    let events = salvage_and_check(&path, &generated);
    assert_eq!(events.len(), generated.len() - lost);
}

#[test]
fn a_file_truncated_mid_page_gives_every_event_sqlite_can_still_reach() {
    let dir = tempfile::tempdir().unwrap();
    let (path, generated) = generated(dir.path());
    let file = std::fs::read(&path).unwrap();
    // Mid-page, in the table's last leaf pages, after its last interior
    // page: a cut through an interior page loses the whole subtree under
    // it (every event, when it is the root's child), as it does for
    // SQLite's own reads.
    let last_interior = pages_of_kind(&file, TABLE_INTERIOR).last().unwrap().0;
    let leaves: Vec<usize> = pages_of_kind(&file, TABLE_LEAF)
        .into_iter()
        .map(|(index, _)| index)
        .filter(|&index| index > last_interior)
        .collect();
    assert!(
        leaves.len() > 2,
        "no leaf pages after the last interior page"
    );
    let cut = leaves[leaves.len() / 2] * PAGE + PAGE / 2;
    std::fs::write(&path, &file[..cut]).unwrap();
    // Every event a lookup by id still reaches whole in the truncated file
    // (a row on the cut page may read with zeros for its end).
    let reachable: usize = {
        let conn = rusqlite::Connection::open_with_flags(
            &path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .unwrap();
        // As salvage reads it: SQLite refuses a file shorter than its
        // header says unless told to read the schema as it is.
        conn.pragma_update(None, "writable_schema", "ON").unwrap();
        generated
            .iter()
            .filter(|(id, event)| {
                let data = conn.query_row("SELECT data FROM events WHERE id = ?1", [**id], |row| {
                    row.get::<_, String>(0)
                });
                data.ok()
                    .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
                    .is_some_and(|data| data == serde_json::to_value(&event.data).unwrap())
            })
            .count()
    };
    assert!(
        reachable > 0 && reachable < generated.len(),
        "{reachable} of {} reachable",
        generated.len()
    );
    let events = salvage_and_check(&path, &generated);
    assert_eq!(events.len(), reachable);
}

#[test]
fn a_file_that_is_no_database_is_refused_and_left_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = generated(dir.path());
    let file = std::fs::read(&path).unwrap();
    let mut zeroed = file.clone();
    zeroed[..100].fill(0);
    let short = file[..300].to_vec();
    for (case, bytes) in [("header zeroed", zeroed), ("shorter than a page", short)] {
        std::fs::write(&path, &bytes).unwrap();
        let health = salvage::check(&path, None).unwrap();
        assert!(
            matches!(health, Health::Unreadable(_)),
            "{case}: {health:?}"
        );
        let refused = salvage::salvage(&path, None);
        assert!(
            matches!(refused, Err(DatastoreError::InvalidInput(_))),
            "{case}: {refused:?}"
        );
        assert_eq!(
            std::fs::read(&path).unwrap(),
            bytes,
            "{case}: the file changed"
        );
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            !names
                .iter()
                .any(|n| n.contains(".damaged-") || n.ends_with(".salvage")),
            "{case}: {names:?}"
        );
    }
}

#[test]
fn a_garbage_wal_is_ignored_and_a_healthy_file_is_not_salvaged() {
    let dir = tempfile::tempdir().unwrap();
    let (path, generated) = generated(dir.path());
    let mut garbage = vec![0u8; 64 * 1024];
    scramble(&mut garbage, 3, 99);
    std::fs::write(dir.path().join("db.sqlite-wal"), &garbage).unwrap();
    assert_eq!(salvage::check(&path, None).unwrap(), Health::Healthy);
    let refused = salvage::salvage(&path, None);
    assert!(
        matches!(refused, Err(DatastoreError::InvalidInput(_))),
        "{refused:?}"
    );
    assert_eq!(served(&path).len(), generated.len());
}

#[test]
fn a_wal_lost_after_an_unclean_stop_leaves_the_checkpointed_events() {
    let dir = tempfile::tempdir().unwrap();
    let (path, generated) = generated(dir.path());
    // More events in the WAL only, never checkpointed; then the main file
    // is taken alone, as if the -wal were lost with the machine.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;")
        .unwrap();
    conn.execute(
        "INSERT INTO events (bucketrow, starttime, endtime, data)
         SELECT bucketrow, starttime + 1, endtime + 1, data FROM events WHERE id <= 100",
        [],
    )
    .unwrap();
    let alone = dir.path().join("alone.sqlite");
    std::fs::copy(&path, &alone).unwrap();
    drop(conn);
    assert_eq!(salvage::check(&alone, None).unwrap(), Health::Healthy);
    assert_eq!(served(&alone).len(), generated.len());
}

#[test]
fn damage_met_while_serving_is_answered_as_such_and_stops_writes() {
    let dir = tempfile::tempdir().unwrap();
    let (path, generated) = generated(dir.path());
    // Damage the file behind the datastore's back, keeping its time, so
    // the clean close still vouches for it and the open checks nothing:
    // the damage is met by a read, as bit rot would be.
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
    let mut file = std::fs::read(&path).unwrap();
    let leaves = pages_of_kind(&file, TABLE_LEAF);
    scramble(&mut file, leaves[leaves.len() / 2].0, 5);
    std::fs::write(&path, &file).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(modified)
        .unwrap();
    let store = Datastore::open(&path).unwrap();
    assert_eq!(store.damage(), None);
    let answers: Vec<_> = BUCKETS
        .iter()
        .map(|id| store.events(id, EventQuery::default()).wait())
        .collect();
    let damaged = answers
        .iter()
        .filter(|answer| matches!(answer, Err(DatastoreError::Damaged { .. })))
        .count();
    assert_eq!(
        damaged,
        1,
        "{:?}",
        answers.iter().map(|a| a.as_ref().err()).collect::<Vec<_>>()
    );
    assert!(store.damage().is_some());
    // No more writes into a damaged file.
    let refused = store.insert_events(BUCKETS[0], vec![event(1, 1, json!({"app": "x"}))]);
    assert!(
        matches!(refused, Err(DatastoreError::Damaged { .. })),
        "{refused:?}"
    );
    store.close().unwrap();
    // The close did not vouch for it: the next open checks and refuses it.
    let reopened = Datastore::open(&path);
    assert!(
        matches!(reopened, Err(DatastoreError::Damaged { .. })),
        "{reopened:?}"
    );
    let report = salvage::salvage(&path, None).unwrap();
    assert!(report.events > 0 && (report.events as usize) < generated.len());
    assert_eq!(served(&path).len() as u64, report.events);
}

#[test]
fn a_damaged_interior_page_costs_at_most_its_subtree() {
    let dir = tempfile::tempdir().unwrap();
    let (path, generated) = generated(dir.path());
    let original = std::fs::read(&path).unwrap();
    // Interior pages of the events table (the largest): the one with the
    // most children that the check then finds damaged (a page on the
    // free list can start with the same byte; it is not damage).
    // (At most about 450 cells fit a 4 KB interior page: more is not one.)
    let mut interior: Vec<(usize, u16)> = pages_of_kind(&original, TABLE_INTERIOR)
        .into_iter()
        .filter(|&(_, cells)| cells < 450)
        .collect();
    interior.sort_by_key(|(_, cells)| std::cmp::Reverse(*cells));
    let children = interior
        .iter()
        .find_map(|&(index, cells)| {
            let mut file = original.clone();
            scramble(&mut file, index, 77);
            std::fs::write(&path, &file).unwrap();
            matches!(salvage::check(&path, None).unwrap(), Health::Damaged(_)).then_some(cells + 1)
        })
        .expect("no interior page whose damage the check finds");
    let events = salvage_and_check(&path, &generated);
    eprintln!(
        "an interior page with {children} children lost: {} of {} events served",
        events.len(),
        generated.len()
    );
    assert!(!events.is_empty() && events.len() < generated.len());
}
