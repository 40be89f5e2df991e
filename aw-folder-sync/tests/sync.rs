//! Sync through a folder: two devices' databases on temp
//! files and a temp folder between them. Pushes and pulls are incremental
//! and idempotent, heartbeats extend pulled copies, deletions and
//! redactions reach the copies while a copy's own deletions stand, the
//! puller's privacy rules apply, aw-sync's layouts and files (built here
//! as aw-server-rust v6 builds them) are read without a byte written
//! beside them; bad device folders (empty, truncated, half-written,
//! wrong schema, locked, conflict copies, a device claimed twice) are
//! skipped and reported without a loss; `--buckets` and `--start-date`
//! limit a pass as aw-sync's do; overlapping passes store nothing twice;
//! a device restored from a snapshot and its peer end with each event once.

#[path = "../../aw-datastore/tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};

use aw_datastore::{Datastore, EventQuery, PRIVACY_FILTERS_KEY};
use aw_folder_sync::{PullReport, PushReport, SyncFilter, SyncFolder};
use aw_models::{Duration, Event};
use common::{bucket, event, TempDb};
use rusqlite::{params, Connection};
use serde_json::json;

const WINDOW: &str = "aw-watcher-window_laptop";
const COPY: &str = "aw-watcher-window_laptop-synced-from-laptop";

fn folder_for(dir: &Path, device: &str) -> SyncFolder {
    SyncFolder {
        folder: dir.to_path_buf(),
        device_id: device.to_string(),
        hostname: format!("host-of-{device}"),
    }
}

/// What two devices sharing a sync folder keep on disk; the files go
/// when it is dropped.
struct Shared {
    folder: tempfile::TempDir,
    _databases: (TempDb, TempDb),
}

/// Two devices and the folder they sync through: `a` holds the laptop's
/// window bucket, `b` nothing yet; each with its own `SyncFolder`.
fn two_devices() -> (Shared, Datastore, Datastore, SyncFolder, SyncFolder) {
    let folder = tempfile::tempdir().unwrap();
    let (a_db, b_db) = (TempDb::new(), TempDb::new());
    let (a, b) = (a_db.open(), b_db.open());
    a.create_bucket(laptop_bucket()).unwrap();
    let a_folder = folder_for(folder.path(), "dev-a");
    let b_folder = folder_for(folder.path(), "dev-b");
    let shared = Shared {
        folder,
        _databases: (a_db, b_db),
    };
    (shared, a, b, a_folder, b_folder)
}

fn laptop_bucket() -> aw_models::Bucket {
    let mut bucket = bucket(WINDOW);
    bucket.hostname = "laptop".to_string();
    bucket
}

fn titles(store: &Datastore, bucket_id: &str) -> Vec<(i64, i64, String)> {
    common::oldest_first(store, bucket_id)
        .iter()
        .map(|e| {
            (
                e.timestamp.nanos() / 1_000_000_000,
                e.duration.nanos() / 1_000_000_000,
                e.data["title"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn window(start: i64, duration: i64, title: &str) -> Event {
    event(start, duration, json!({"app": "firefox", "title": title}))
}

fn push(store: &Datastore, folder: &SyncFolder) -> PushReport {
    aw_folder_sync::push(store, folder, &SyncFilter::default(), &mut |_| {}).unwrap()
}

fn pull(store: &Datastore, folder: &SyncFolder) -> PullReport {
    aw_folder_sync::pull(store, folder, &SyncFilter::default(), &mut |_| {}).unwrap()
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files_in(&path));
        } else {
            found.push(path);
        }
    }
    found.sort();
    found
}

#[test]
fn push_and_pull_are_incremental_and_idempotent() {
    let (shared, a, b, a_folder, b_folder) = two_devices();
    a.insert_events(WINDOW, (0..10).map(|i| window(i * 100, 50, "t")).collect())
        .unwrap();

    let first = push(&a, &a_folder);
    assert_eq!((first.buckets, first.written), (1, 10));
    assert_eq!(
        first.file,
        shared.folder.path().join("dev-a").join("test.db")
    );
    let modified = std::fs::metadata(&first.file).unwrap().modified().unwrap();
    assert_eq!(
        push(&a, &a_folder).written,
        0,
        "a second push writes nothing"
    );
    assert_eq!(
        std::fs::metadata(&first.file).unwrap().modified().unwrap(),
        modified,
        "a no-op push leaves the file alone"
    );

    let pulled = pull(&b, &b_folder);
    assert_eq!(pulled.sources.len(), 1);
    assert_eq!(pulled.sources[0].device, "dev-a");
    assert_eq!(pulled.sources[0].buckets, [COPY]);
    assert_eq!(pulled.sources[0].counts.inserted, 10);
    let copy = b.bucket(COPY).wait().unwrap();
    assert_eq!(copy.data["$aw.sync.origin"], "laptop");
    assert_eq!(copy.kind, "currentwindow");
    let again = pull(&b, &b_folder);
    assert_eq!(again.sources[0].counts, Default::default());
    assert_eq!(b.count_events(COPY, None, None).wait().unwrap(), 10);

    // B pushes too, but never its copy of A's bucket; A pulls nothing back.
    let b_push = push(&b, &b_folder);
    assert_eq!((b_push.buckets, b_push.written), (0, 0));
    let back = pull(&a, &a_folder);
    assert!(back.sources.iter().all(|s| s.buckets.is_empty()));
    assert_eq!(a.buckets().wait().unwrap().len(), 1);

    // New events arrive as new events only.
    a.insert_events(WINDOW, vec![window(5_000, 10, "new")])
        .unwrap();
    assert_eq!(push(&a, &a_folder).written, 1);
    assert_eq!(pull(&b, &b_folder).sources[0].counts.inserted, 1);
    assert_eq!(b.count_events(COPY, None, None).wait().unwrap(), 11);
}

#[test]
fn heartbeats_extend_the_pulled_copy_instead_of_adding_to_it() {
    let (_shared, a, b, a_folder, b_folder) = two_devices();
    let pulse = Duration::from_secs(60);
    a.heartbeat(WINDOW, window(0, 0, "doc"), pulse).unwrap();
    a.heartbeat(WINDOW, window(10, 0, "doc"), pulse).unwrap();
    push(&a, &a_folder);
    pull(&b, &b_folder);
    assert_eq!(titles(&b, COPY), [(0, 10, "doc".to_string())]);
    a.heartbeat(WINDOW, window(30, 0, "doc"), pulse).unwrap();
    assert_eq!(push(&a, &a_folder).written, 1);
    let counts = pull(&b, &b_folder).sources[0].counts;
    assert_eq!((counts.inserted, counts.updated), (0, 1));
    assert_eq!(titles(&b, COPY), [(0, 30, "doc".to_string())]);
    a.heartbeat(WINDOW, window(40, 0, "mail"), pulse).unwrap();
    a.heartbeat(WINDOW, window(50, 0, "mail"), pulse).unwrap();
    push(&a, &a_folder);
    pull(&b, &b_folder);
    assert_eq!(
        titles(&b, COPY),
        [(0, 30, "doc".to_string()), (40, 10, "mail".to_string())]
    );
}

#[test]
fn deletions_and_redactions_reach_copies_and_a_copys_own_deletions_stand() {
    let (_shared, a, b, a_folder, b_folder) = two_devices();
    let stored = a
        .insert_events(
            WINDOW,
            vec![
                window(0, 10, "one"),
                window(100, 10, "my banking"),
                window(200, 10, "three"),
                window(300, 10, "four"),
            ],
        )
        .unwrap();
    push(&a, &a_folder);
    pull(&b, &b_folder);
    assert_eq!(b.count_events(COPY, None, None).wait().unwrap(), 4);

    // At the origin: one event deleted, one redacted.
    assert!(a.delete_event(WINDOW, stored[0].id.unwrap()).unwrap());
    a.set_setting(
        PRIVACY_FILTERS_KEY,
        json!([{"enabled": true, "bucket_prefix": "aw-watcher-window", "field": "title",
                "pattern": "(?i).*banking.*", "action": "redact", "replacement": "REDACTED"}]),
    )
    .unwrap();
    a.apply_privacy_rules(&mut |_| {}).unwrap();
    let pushed = push(&a, &a_folder);
    assert_eq!((pushed.written, pushed.deleted), (1, 1));
    // In the copy: event "four" deleted here; it must stay deleted.
    let four = b
        .events(COPY, EventQuery::default())
        .wait()
        .unwrap()
        .into_iter()
        .find(|e| e.data["title"] == "four")
        .unwrap();
    b.delete_event(COPY, four.id.unwrap()).unwrap();
    let counts = pull(&b, &b_folder).sources[0].counts;
    assert_eq!((counts.updated, counts.deleted), (1, 1));
    assert_eq!(
        titles(&b, COPY),
        [
            (100, 10, "REDACTED".to_string()),
            (200, 10, "three".to_string())
        ]
    );
    // The origin extends "four" in place (an insert with its id): the
    // copy's deletion still stands, and nothing comes back on later pulls.
    let mut longer = stored[3].clone();
    longer.duration = Duration::from_secs(20);
    a.insert_events(WINDOW, vec![longer]).unwrap();
    push(&a, &a_folder);
    pull(&b, &b_folder);
    pull(&b, &b_folder);
    assert_eq!(b.count_events(COPY, None, None).wait().unwrap(), 2);
    // A range delete at the origin reaches the copy as well.
    a.delete_range(WINDOW, common::at(150), common::at(250), &mut |_| {})
        .unwrap();
    push(&a, &a_folder);
    pull(&b, &b_folder);
    assert_eq!(titles(&b, COPY), [(100, 10, "REDACTED".to_string())]);
    // The origin deletes the whole bucket: its events leave the copy.
    a.delete_bucket(WINDOW).unwrap();
    push(&a, &a_folder);
    let counts = pull(&b, &b_folder).sources[0].counts;
    assert_eq!(counts.deleted, 1);
    assert_eq!(b.count_events(COPY, None, None).wait().unwrap(), 0);
}

#[test]
fn a_copys_range_deletes_and_retention_stand_when_the_origin_rebuilds_its_file() {
    let (_shared, a, b, a_folder, b_folder) = two_devices();
    a.insert_events(WINDOW, (0..10).map(|i| window(i * 100, 50, "t")).collect())
        .unwrap();
    push(&a, &a_folder);
    pull(&b, &b_folder);
    // Here: retention takes what ended before 260, a range delete 500-700.
    let expired = b.expire(common::at(260), &mut |_| {}).unwrap();
    assert_eq!(expired[0].deleted, 3);
    b.delete_range(COPY, common::at(500), common::at(700), &mut |_| {})
        .unwrap();
    assert_eq!(b.count_events(COPY, None, None).wait().unwrap(), 5);
    // The origin's file is rebuilt (a new epoch): read again from the start.
    std::fs::remove_file(a_folder.own_file()).unwrap();
    assert_eq!(push(&a, &a_folder).written, 10);
    let counts = pull(&b, &b_folder).sources[0].counts;
    assert_eq!((counts.inserted, counts.skipped), (0, 10));
    let starts: Vec<i64> = titles(&b, COPY).iter().map(|t| t.0).collect();
    assert_eq!(starts, [300, 400, 700, 800, 900]);
    // New activity at the origin still arrives.
    a.insert_events(WINDOW, vec![window(1_000, 10, "new")])
        .unwrap();
    push(&a, &a_folder);
    assert_eq!(pull(&b, &b_folder).sources[0].counts.inserted, 1);
}

#[test]
fn pulled_events_obey_the_pullers_privacy_rules() {
    let (_shared, a, b, a_folder, b_folder) = two_devices();
    a.insert_events(
        WINDOW,
        vec![window(0, 10, "fine"), window(100, 10, "Incognito tab")],
    )
    .unwrap();
    b.set_setting(
        PRIVACY_FILTERS_KEY,
        json!([{"enabled": true, "bucket_prefix": "aw-watcher-window", "field": "title",
                "pattern": "(?i)incognito", "action": "drop"}]),
    )
    .unwrap();
    push(&a, &a_folder);
    let counts = pull(&b, &b_folder).sources[0].counts;
    assert_eq!((counts.inserted, counts.dropped), (1, 1));
    assert_eq!(titles(&b, COPY), [(0, 10, "fine".to_string())]);
}

/// aw-server-rust v6's schema, as its migrations leave it.
const REFERENCE_SCHEMA: &str = "
    CREATE TABLE buckets (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE NOT NULL,
        type TEXT NOT NULL, client TEXT NOT NULL, hostname TEXT NOT NULL, created TEXT NOT NULL,
        data_deprecated TEXT DEFAULT '{}', data TEXT NOT NULL DEFAULT '{}');
    CREATE INDEX bucket_id_index ON buckets(id);
    CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, bucketrow INTEGER NOT NULL,
        starttime INTEGER NOT NULL, endtime INTEGER NOT NULL, data TEXT NOT NULL,
        FOREIGN KEY (bucketrow) REFERENCES buckets(id));
    CREATE INDEX events_bucketrow_starttime_endtime_index
        ON events(bucketrow, starttime DESC, endtime);
    CREATE INDEX events_bucketrow_endtime_starttime_index
        ON events(bucketrow, endtime, starttime);
    CREATE TABLE key_value (key TEXT PRIMARY KEY, value TEXT, last_modified NUMBER NOT NULL);
    PRAGMA user_version = 6;";

/// A file as aw-sync's `sync` command leaves it for host `desk`, device
/// `dev-r`: a WAL database (checkpointed at close), the bucket's origin
/// in its data, events with rising ids.
fn reference_file(folder: &Path) -> PathBuf {
    let path = folder.join("desk").join("dev-r").join("test.db");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let conn = Connection::open(&path).unwrap();
    conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
        .unwrap();
    conn.execute_batch(REFERENCE_SCHEMA).unwrap();
    conn.execute(
        "INSERT INTO buckets (name, type, client, hostname, created, data)
         VALUES ('aw-watcher-afk_desk', 'afkstatus', 'aw-watcher-afk', 'desk',
                 '2024-01-01 10:00:00+00:00', '{\"$aw.sync.origin\":\"desk\"}')",
        [],
    )
    .unwrap();
    for i in 0..5i64 {
        reference_event(
            &conn,
            i * 100,
            i * 100 + 60,
            if i % 2 == 0 { "afk" } else { "not-afk" },
        );
    }
    drop(conn);
    path
}

fn reference_event(conn: &Connection, start: i64, end: i64, status: &str) {
    conn.execute(
        "INSERT INTO events (bucketrow, starttime, endtime, data) VALUES (1, ?1, ?2, ?3)",
        params![
            start * 1_000_000_000,
            end * 1_000_000_000,
            json!({"status": status}).to_string()
        ],
    )
    .unwrap();
}

#[test]
fn aw_sync_files_are_pulled_without_writing_beside_them() {
    let sync = tempfile::tempdir().unwrap();
    let path = reference_file(sync.path());
    let before = files_in(sync.path());
    assert_eq!(
        before,
        std::slice::from_ref(&path),
        "the WAL was checkpointed at close"
    );
    let db = TempDb::new();
    let store = db.open();
    let folder = folder_for(sync.path(), "dev-b");
    let report = pull(&store, &folder);
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    assert_eq!(report.sources[0].file, "desk/dev-r/test.db");
    assert_eq!(report.sources[0].device, "dev-r");
    let copy = "aw-watcher-afk_desk-synced-from-desk";
    assert_eq!(report.sources[0].buckets, [copy]);
    assert_eq!(store.count_events(copy, None, None).wait().unwrap(), 5);
    assert_eq!(files_in(sync.path()), before, "nothing written beside it");

    // aw-sync extends the newest event and adds one; the pull follows.
    let conn = Connection::open(&path).unwrap();
    conn.execute(
        "UPDATE events SET endtime = ?1 WHERE id = 5",
        [490 * 1_000_000_000i64],
    )
    .unwrap();
    reference_event(&conn, 500, 560, "not-afk");
    drop(conn);
    let counts = pull(&store, &folder).sources[0].counts;
    assert_eq!((counts.inserted, counts.updated), (1, 1));
    let newest = store
        .events(
            copy,
            EventQuery {
                limit: Some(2),
                ..EventQuery::default()
            },
        )
        .wait()
        .unwrap();
    assert_eq!(newest[1].duration, Duration::from_secs(90));
    assert_eq!(pull(&store, &folder).sources[0].counts, Default::default());
    assert_eq!(files_in(sync.path()), before);
}

#[test]
fn unreadable_files_are_skipped_and_reported() {
    let (shared, a, b, a_folder, b_folder) = two_devices();
    a.insert_events(WINDOW, vec![window(0, 10, "t")]).unwrap();
    push(&a, &a_folder);
    let garbage = shared.folder.path().join("dev-garbage");
    std::fs::create_dir_all(&garbage).unwrap();
    std::fs::write(
        garbage.join("test.db"),
        b"this is not a database at all, not even close",
    )
    .unwrap();
    let newer = shared.folder.path().join("dev-newer");
    std::fs::create_dir_all(&newer).unwrap();
    Connection::open(newer.join("test.db"))
        .unwrap()
        .execute_batch("CREATE TABLE t (x); PRAGMA user_version = 99;")
        .unwrap();
    let report = pull(&b, &b_folder);
    let skipped: Vec<&str> = report.skipped.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(skipped, ["dev-garbage/test.db", "dev-newer/test.db"]);
    assert!(
        report.skipped[1].reason.contains("99"),
        "{:?}",
        report.skipped
    );
    assert_eq!(report.sources.len(), 1);
    assert_eq!(b.count_events(COPY, None, None).wait().unwrap(), 1);
}

/// The reasons given for skipping, by name.
fn skips(report: &PullReport) -> Vec<(String, String)> {
    report
        .skipped
        .iter()
        .map(|s| (s.name.clone(), s.reason.clone()))
        .collect()
}

/// A device's copy with one bucket of `events` events, pushed by a
/// database of its own; the copy's path.
fn pushed_copy(folder: &Path, device: &str, hostname: &str, events: i64) -> PathBuf {
    let db = TempDb::new();
    let store = db.open();
    let mut laptop = laptop_bucket();
    laptop.id = format!("aw-watcher-window_{hostname}");
    laptop.hostname = hostname.to_string();
    store.create_bucket(laptop.clone()).unwrap();
    store
        .insert_events(
            &laptop.id,
            (0..events).map(|i| window(i * 100, 50, "t")).collect(),
        )
        .unwrap();
    push(&store, &folder_for(folder, device)).file
}

#[test]
fn bad_device_folders_are_skipped_and_reported_without_loss() {
    let sync = tempfile::tempdir().unwrap();
    let root = sync.path();
    let good = pushed_copy(root, "dev-good", "good", 3);
    let whole = std::fs::read(&good).unwrap();
    let put = |name: &str, bytes: &[u8]| {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    };
    // Empty, truncated, half-copied in place, not SQLite.
    put("dev-empty/test.db", b"");
    put("dev-truncated/test.db", &whole[..whole.len() / 2]);
    put("dev-short/test.db", &whole[..whole.len() - 100]);
    put(
        "dev-text/test.db",
        b"this is not a database at all, not even close",
    );
    // A schema of another program: version 6, but no events table.
    let wrong = root.join("dev-schema").join("test.db");
    std::fs::create_dir_all(wrong.parent().unwrap()).unwrap();
    Connection::open(&wrong)
        .unwrap()
        .execute_batch(
            "CREATE TABLE buckets (id INTEGER PRIMARY KEY, name TEXT, type TEXT,
                 client TEXT, hostname TEXT, created TEXT, data TEXT);
             PRAGMA user_version = 6;",
        )
        .unwrap();
    // Being written: a rollback journal beside it.
    let writing = pushed_copy(root, "dev-writing", "writing", 2);
    std::fs::write(format!("{}-journal", writing.display()), b"journal").unwrap();
    // Conflict copies beside the good file, with other events in them.
    for name in [
        "test.sync-conflict-20261127-010203-ABCDEFG.db",
        "test (conflicted copy 2026-11-27).db",
        "test (conflicted copy 2026-11-27 010203)",
    ] {
        let other = tempfile::tempdir().unwrap();
        let conflict = pushed_copy(other.path(), "dev-good", "good", 7);
        std::fs::copy(conflict, root.join("dev-good").join(name)).unwrap();
    }
    // One device id under two host folders and in the daemon layout.
    let twice = pushed_copy(root, "dev-twice", "twice", 4);
    for host in ["host-old", "host-new"] {
        let nested = root.join(host).join("dev-twice");
        std::fs::create_dir_all(&nested).unwrap();
        std::fs::copy(&twice, nested.join("test.db")).unwrap();
    }

    let db = TempDb::new();
    let store = db.open();
    let folder = folder_for(root, "dev-b");
    let report = pull(&store, &folder);
    let skipped = skips(&report);
    let names: Vec<&str> = skipped.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "dev-good/test (conflicted copy 2026-11-27 010203)",
            "dev-good/test (conflicted copy 2026-11-27).db",
            "dev-good/test.sync-conflict-20261127-010203-ABCDEFG.db",
            "dev-twice/test.db",
            "host-new/dev-twice/test.db",
            "host-old/dev-twice/test.db",
            "dev-empty/test.db",
            "dev-schema/test.db",
            "dev-short/test.db",
            "dev-text/test.db",
            "dev-truncated/test.db",
            "dev-writing/test.db",
        ],
        "{skipped:#?}"
    );
    let reason = |name: &str| {
        skipped
            .iter()
            .find(|(skipped, _)| skipped == name)
            .map(|(_, reason)| reason.clone())
            .unwrap()
    };
    assert!(reason("dev-good/test (conflicted copy 2026-11-27).db").contains("conflict copy"));
    assert!(reason("dev-twice/test.db").contains("claimed by 3 files"));
    assert!(reason("dev-empty/test.db").contains("empty"));
    assert!(reason("dev-schema/test.db").contains("no table events"));
    assert!(reason("dev-short/test.db").contains("incomplete"));
    assert!(reason("dev-text/test.db").contains("not an SQLite database"));
    assert!(reason("dev-truncated/test.db").contains("incomplete"));
    assert!(reason("dev-writing/test.db").contains("-journal"));
    // Only the good file is pulled, whole, and nothing twice.
    assert_eq!(report.sources.len(), 1);
    assert_eq!(report.sources[0].file, "dev-good/test.db");
    let copy = "aw-watcher-window_good-synced-from-good";
    assert_eq!(store.count_events(copy, None, None).wait().unwrap(), 3);
    assert_eq!(store.buckets().wait().unwrap().len(), 1);

    // The half-copied file, once whole, and the device once claimed by one
    // folder only, are read on the next pass.
    put("dev-short/test.db", &whole);
    std::fs::remove_dir_all(root.join("host-old")).unwrap();
    std::fs::remove_dir_all(root.join("host-new")).unwrap();
    let report = pull(&store, &folder);
    let read: Vec<&str> = report.sources.iter().map(|s| s.file.as_str()).collect();
    assert_eq!(
        read,
        ["dev-good/test.db", "dev-short/test.db", "dev-twice/test.db"]
    );
    assert_eq!(
        store
            .count_events("aw-watcher-window_twice-synced-from-twice", None, None)
            .wait()
            .unwrap(),
        4
    );
    assert_eq!(store.count_events(copy, None, None).wait().unwrap(), 3);
}

#[test]
fn a_locked_file_is_skipped_and_read_on_the_next_pass() {
    let sync = tempfile::tempdir().unwrap();
    let copy = pushed_copy(sync.path(), "dev-a", "laptop", 5);
    let db = TempDb::new();
    let store = db.open();
    let folder = folder_for(sync.path(), "dev-b");
    let writer = Connection::open(&copy).unwrap();
    writer.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let report = pull(&store, &folder);
    assert!(report.sources.is_empty(), "{report:?}");
    let skipped = skips(&report);
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0].0, "dev-a/test.db");
    assert!(skipped[0].1.contains("locked"), "{skipped:?}");
    assert!(!store.buckets().wait().unwrap().contains_key(COPY));
    writer.execute_batch("COMMIT").unwrap();
    drop(writer);
    let report = pull(&store, &folder);
    assert!(report.skipped.is_empty(), "{report:?}");
    assert_eq!(report.sources[0].counts.inserted, 5);
    assert_eq!(store.count_events(COPY, None, None).wait().unwrap(), 5);
}

#[test]
fn buckets_and_start_limit_a_pass_as_aw_syncs_do() {
    let (_shared, a, b, a_folder, b_folder) = two_devices();
    let mut afk = bucket("aw-watcher-afk_laptop");
    afk.hostname = "laptop".to_string();
    a.create_bucket(afk).unwrap();
    a.insert_events(WINDOW, (0..10).map(|i| window(i * 100, 50, "t")).collect())
        .unwrap();
    a.insert_events(
        "aw-watcher-afk_laptop",
        vec![event(0, 10, json!({"status": "afk"}))],
    )
    .unwrap();
    let only = |ids: &[&str], start: Option<i64>| SyncFilter {
        buckets: Some(ids.iter().map(|id| id.to_string()).collect()),
        start: start.map(common::at),
    };

    // Push only the window bucket, from second 500 on: events ending at
    // or after it (the one of 400 to 450 does not).
    let pushed =
        aw_folder_sync::push(&a, &a_folder, &only(&[WINDOW], Some(500)), &mut |_| {}).unwrap();
    assert_eq!((pushed.buckets, pushed.written), (1, 5));
    // A pull limited to the other bucket finds nothing of it yet.
    let report = aw_folder_sync::pull(
        &b,
        &b_folder,
        &only(&["aw-watcher-afk_laptop"], None),
        &mut |_| {},
    )
    .unwrap();
    assert!(report.sources[0].buckets.is_empty());
    // The whole push: the afk bucket joins; the window bucket, left out
    // before, keeps its earlier events out of the copy (as aw-sync, which
    // goes on from the newest event it copied).
    let pushed = push(&a, &a_folder);
    assert_eq!((pushed.buckets, pushed.written, pushed.deleted), (2, 1, 0));
    // A pull of one bucket, by its id here, from second 700 on.
    let report =
        aw_folder_sync::pull(&b, &b_folder, &only(&[COPY], Some(700)), &mut |_| {}).unwrap();
    assert_eq!(report.sources[0].buckets, [COPY]);
    assert_eq!(
        titles(&b, COPY).iter().map(|e| e.0).collect::<Vec<_>>(),
        [700, 800, 900]
    );
    assert!(!b
        .buckets()
        .wait()
        .unwrap()
        .contains_key("aw-watcher-afk_laptop-synced-from-laptop"));
    // `*` takes every bucket.
    let report = aw_folder_sync::pull(&b, &b_folder, &only(&["*"], None), &mut |_| {}).unwrap();
    assert_eq!(report.sources[0].buckets.len(), 2);
    assert_eq!(
        b.count_events("aw-watcher-afk_laptop-synced-from-laptop", None, None)
            .wait()
            .unwrap(),
        1
    );
    // A push left out of a bucket never deletes it from the copy.
    let pushed = aw_folder_sync::push(
        &a,
        &a_folder,
        &only(&["aw-watcher-afk_laptop"], None),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!((pushed.buckets, pushed.deleted), (1, 0));
    let counts = pull(&b, &b_folder).sources[0].counts;
    assert_eq!(counts.deleted, 0);
}

#[test]
fn overlapping_passes_store_nothing_twice() {
    let (_shared, a, b, a_folder, b_folder) = two_devices();
    a.insert_events(
        WINDOW,
        (0..3_000).map(|i| window(i * 100, 50, "t")).collect(),
    )
    .unwrap();
    // Two pushes of one device at once, then four pulls at once, each
    // with a handle of its own.
    std::thread::scope(|scope| {
        for _ in 0..2 {
            let (a, folder) = (a.clone(), a_folder.clone());
            scope.spawn(move || push(&a, &folder));
        }
    });
    let copy = Connection::open(a_folder.own_file()).unwrap();
    let in_copy: i64 = copy
        .query_row("SELECT count(*) FROM events", [], |row| row.get(0))
        .unwrap();
    assert_eq!(in_copy, 3_000);
    drop(copy);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            let (b, folder) = (b.clone(), b_folder.clone());
            scope.spawn(move || pull(&b, &folder));
        }
    });
    assert_eq!(b.count_events(COPY, None, None).wait().unwrap(), 3_000);
    // New events and a longer newest event, pulled by overlapping passes.
    a.insert_events(WINDOW, vec![window(400_000, 10, "new")])
        .unwrap();
    a.heartbeat(WINDOW, window(400_000, 30, "new"), Duration::from_secs(60))
        .unwrap();
    push(&a, &a_folder);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            let (b, folder) = (b.clone(), b_folder.clone());
            scope.spawn(move || pull(&b, &folder));
        }
    });
    assert_eq!(b.count_events(COPY, None, None).wait().unwrap(), 3_001);
    assert_eq!(
        titles(&b, COPY).last().unwrap(),
        &(400_000, 30, "new".to_string())
    );
}

#[test]
fn bucket_changes_at_the_origin_reach_the_copies() {
    let (_shared, a, b, a_folder, b_folder) = two_devices();
    a.insert_events(WINDOW, vec![window(0, 10, "t")]).unwrap();
    push(&a, &a_folder);
    pull(&b, &b_folder);
    let mut data = aw_models::Data::new();
    data.insert("note".to_string(), json!("renamed"));
    a.update_bucket(
        WINDOW,
        aw_models::UpdateBucket {
            kind: None,
            client: Some("aw-watcher-window-v2".to_string()),
            hostname: None,
            data: Some(data),
        },
    )
    .unwrap();
    push(&a, &a_folder);
    pull(&b, &b_folder);
    let copy = b.bucket(COPY).wait().unwrap();
    assert_eq!(copy.client, "aw-watcher-window-v2");
    assert_eq!(copy.data["note"], "renamed");
    assert_eq!(copy.data["$aw.sync.origin"], "laptop");
    assert_eq!(b.count_events(COPY, None, None).wait().unwrap(), 1);
}

/// The titles of a bucket, sorted, each as often as it is stored.
fn titles_only(store: &Datastore, bucket_id: &str) -> Vec<String> {
    let mut titles: Vec<String> = titles(store, bucket_id)
        .into_iter()
        .map(|(_, _, title)| title)
        .collect();
    titles.sort();
    titles
}

#[test]
fn a_restored_device_and_its_peer_end_with_no_duplicate_and_no_lost_event() {
    const DESK: &str = "aw-watcher-window_desk";
    const DESK_COPY: &str = "aw-watcher-window_desk-synced-from-desk";
    let dir = tempfile::tempdir().unwrap();
    let (a_db, b_db) = (TempDb::new(), TempDb::new());
    let (a, b) = (a_db.open(), b_db.open());
    let a_folder = folder_for(dir.path(), "dev-a");
    let b_folder = folder_for(dir.path(), "dev-b");
    a.create_bucket(laptop_bucket()).unwrap();
    let mut desk = bucket(DESK);
    desk.hostname = "desk".to_string();
    b.create_bucket(desk).unwrap();
    let both = |a: &Datastore, b: &Datastore| {
        pull(a, &a_folder);
        push(a, &a_folder);
        pull(b, &b_folder);
        push(b, &b_folder);
        pull(a, &a_folder);
    };

    a.insert_events(
        WINDOW,
        (0..3)
            .map(|i| window(i * 100, 50, &format!("a{i}")))
            .collect(),
    )
    .unwrap();
    b.insert_events(DESK, vec![window(0, 50, "b0")]).unwrap();
    both(&a, &b);
    let snapshot = dir.path().join("a-snapshot.db");
    a.snapshot(&snapshot).unwrap();

    // After the snapshot: a writes two more, b one; all of it syncs.
    let later = a
        .insert_events(WINDOW, vec![window(300, 50, "a3"), window(400, 50, "a4")])
        .unwrap();
    b.insert_events(DESK, vec![window(100, 50, "b1")]).unwrap();
    both(&a, &b);
    assert_eq!(titles_only(&b, COPY), ["a0", "a1", "a2", "a3", "a4"]);
    assert_eq!(titles_only(&a, DESK_COPY), ["b0", "b1"]);

    // a's database is lost; it goes back to the snapshot, with only the
    // marks of its copy in the folder to say which ids were issued.
    a.close().unwrap();
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", a_db.path().display()));
    }
    let issued = aw_folder_sync::issued_marks(&a_folder).unwrap().unwrap();
    assert!(issued.highest_event_id >= later[1].id.unwrap());
    aw_datastore::restore::restore(&snapshot, &a_db.path(), None, &issued).unwrap();
    let a = a_db.open();
    assert_eq!(titles_only(&a, WINDOW), ["a0", "a1", "a2"]);
    assert_eq!(titles_only(&a, DESK_COPY), ["b0"]);
    let new = a
        .insert_events(WINDOW, vec![window(500, 50, "a5")])
        .unwrap();
    assert!(
        new[0].id.unwrap() > later[1].id.unwrap(),
        "a new event took an id issued before the restore"
    );

    both(&a, &b);
    // b follows a's restored history plus what a wrote since, each once;
    // a gets b's later event back, once.
    assert_eq!(titles_only(&a, WINDOW), ["a0", "a1", "a2", "a5"]);
    assert_eq!(titles_only(&b, COPY), ["a0", "a1", "a2", "a5"]);
    assert_eq!(titles_only(&a, DESK_COPY), ["b0", "b1"]);
    assert_eq!(titles_only(&b, DESK), ["b0", "b1"]);
    // And it stays that way.
    both(&a, &b);
    assert_eq!(push(&a, &a_folder).written, 0);
    assert_eq!(titles_only(&b, COPY), ["a0", "a1", "a2", "a5"]);
    assert_eq!(titles_only(&a, DESK_COPY), ["b0", "b1"]);
    a.close().unwrap();
    b.close().unwrap();
}
