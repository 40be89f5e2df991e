//! Restore (`restore.rs`): a checked snapshot put in place of a file no
//! process serves, the file that was there moved aside whole, new ids
//! above every id issued, and every bucket marked for a whole comparison
//! by the next push. A bad snapshot, or a served file, changes nothing.

mod common;

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;

use aw_datastore::restore::{self, IssuedMarks};
use aw_datastore::{Datastore, DatastoreError, EventQuery, Replica};
use common::{bucket, event, TempDb};
use serde_json::json;

const BUCKET: &str = "aw-watcher-window_me";

fn titles_in(path: &Path) -> Vec<String> {
    let store = Datastore::open(path).unwrap();
    let titles = titles(&store);
    store.close().unwrap();
    titles
}

fn titles(store: &Datastore) -> Vec<String> {
    let mut titles: Vec<String> = store
        .events(BUCKET, EventQuery::default())
        .wait()
        .unwrap()
        .iter()
        .map(|event| event.data["title"].as_str().unwrap().to_string())
        .collect();
    titles.sort();
    titles
}

fn insert(store: &Datastore, start: i64, title: &str) -> i64 {
    store
        .insert_events(BUCKET, vec![event(start, 1, json!({ "title": title }))])
        .unwrap()[0]
        .id
        .unwrap()
}

/// The names in a folder and a hash of each file's bytes.
fn folder_state(folder: &Path) -> BTreeMap<String, u64> {
    std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            (entry.file_name().to_string_lossy().into_owned(), {
                let mut hasher = DefaultHasher::new();
                std::fs::read(entry.path())
                    .unwrap_or_default()
                    .hash(&mut hasher);
                hasher.finish()
            })
        })
        .collect()
}

#[test]
fn a_restore_puts_the_snapshot_in_place_and_moves_the_database_aside() {
    let db = TempDb::new();
    let store = db.open();
    store.create_bucket(bucket(BUCKET)).unwrap();
    for (n, title) in ["a", "b", "c"].iter().enumerate() {
        insert(&store, n as i64 * 10, title);
    }
    let snapshot = db.path().with_file_name("snapshot.db");
    store.snapshot(&snapshot).unwrap();
    let d = insert(&store, 30, "d");
    let e = insert(&store, 40, "e");
    assert!(store.delete_event(BUCKET, d).unwrap());
    let changes_before = store.change_count(BUCKET).unwrap();

    // Served: refused, nothing moved.
    let folder = db.path().parent().unwrap().to_path_buf();
    let names_before: Vec<String> = folder_state(&folder).into_keys().collect();
    let refused = restore::restore(&snapshot, &db.path(), None, &IssuedMarks::default());
    assert!(
        matches!(refused, Err(DatastoreError::InUse(_))),
        "{refused:?}"
    );
    let names_after: Vec<String> = folder_state(&folder).into_keys().collect();
    assert_eq!(names_after, names_before);
    assert_eq!(titles(&store), ["a", "b", "c", "e"]);
    store.close().unwrap();

    let restored = restore::restore(&snapshot, &db.path(), None, &IssuedMarks::default()).unwrap();
    assert_eq!(restored.facts.events, 3);
    assert_eq!(restored.facts.buckets, 1);
    assert_eq!(restored.next_event_id, e + 1);
    assert_eq!(restored.unread_marks, None);
    // The file that was in place opens where it went, whole.
    let aside = &restored.moved_aside[0];
    assert!(aside
        .file_name()
        .unwrap()
        .to_string_lossy()
        .contains(".before-restore-"));
    assert_eq!(titles_in(aside), ["a", "b", "c", "e"]);
    // The snapshot's history, new ids above every one issued, and a change
    // counter no push recorded before.
    let store = db.open();
    assert_eq!(titles(&store), ["a", "b", "c"]);
    let f = insert(&store, 50, "f");
    assert_eq!(f, e + 1);
    assert!(store.change_count(BUCKET).unwrap() > changes_before);
    store.close().unwrap();
    // The snapshot itself is untouched.
    assert_eq!(titles_in(&snapshot), ["a", "b", "c"]);
}

#[test]
fn marks_seen_elsewhere_raise_the_ids_and_the_change_counters() {
    let db = TempDb::new();
    let store = db.open();
    store.create_bucket(bucket(BUCKET)).unwrap();
    insert(&store, 0, "a");
    let snapshot = db.path().with_file_name("snapshot.db");
    store.snapshot(&snapshot).unwrap();
    store.close().unwrap();
    std::fs::remove_file(db.path()).unwrap();

    let issued = IssuedMarks {
        highest_event_id: 1_000,
        changes: BTreeMap::from([(BUCKET.to_string(), 50)]),
    };
    // No database in place: the snapshot becomes it; only leftover side
    // files (an old `-shm`) are moved aside.
    let restored = restore::restore(&snapshot, &db.path(), None, &issued).unwrap();
    for moved in &restored.moved_aside {
        let name = moved.to_string_lossy();
        assert!(name.ends_with("-shm") || name.ends_with("-wal"), "{name}");
    }
    assert_eq!(restored.next_event_id, 1_001);
    let store = db.open();
    assert_eq!(insert(&store, 10, "b"), 1_001);
    assert_eq!(store.change_count(BUCKET).unwrap(), 51);
    store.close().unwrap();
}

#[test]
fn a_bad_snapshot_changes_nothing() {
    let db = TempDb::new();
    let store = db.open();
    store.create_bucket(bucket(BUCKET)).unwrap();
    insert(&store, 0, "kept");
    let good = db.path().with_file_name("good.db");
    store.snapshot(&good).unwrap();
    store.close().unwrap();
    let folder = db.path().parent().unwrap().to_path_buf();

    let text = folder.join("notes.txt");
    std::fs::write(&text, "not a database at all, just some words").unwrap();
    let half = folder.join("half.db");
    let bytes = std::fs::read(&good).unwrap();
    std::fs::write(&half, &bytes[..bytes.len() / 2]).unwrap();
    let empty_sqlite = folder.join("other.sqlite");
    {
        let conn = rusqlite::Connection::open(&empty_sqlite).unwrap();
        conn.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .unwrap();
    }
    let missing = folder.join("missing.db");

    let before = folder_state(&folder);
    for (bad, wanted) in [
        (&text, "not a database"),
        (&half, "damaged"),
        (&empty_sqlite, "not an ActivityWatch database"),
        (&missing, "no snapshot file"),
        (&db.path(), "the database itself"),
    ] {
        let error = restore::restore(bad, &db.path(), None, &IssuedMarks::default())
            .expect_err("restored a bad snapshot")
            .to_string();
        assert!(error.contains(wanted), "{}: {error}", bad.display());
        assert_eq!(
            folder_state(&folder),
            before,
            "{} changed files",
            bad.display()
        );
    }
    assert_eq!(titles_in(&db.path()), ["kept"]);
}
