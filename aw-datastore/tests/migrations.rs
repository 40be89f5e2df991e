//! Databases written by aw-server-rust at schema versions 1 to 6, built
//! here with the SQL that version ran, open, migrate and work; a file we
//! create has the very schema the reference's migrations produce.

mod common;

use aw_datastore::{Datastore, EventQuery};
use aw_models::Duration;
use common::*;
use rusqlite::Connection;
use serde_json::json;

/// The reference's schema statements, by the version they produced.
const V1: &str = "
    CREATE TABLE IF NOT EXISTS buckets (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT UNIQUE NOT NULL,
        type TEXT NOT NULL,
        client TEXT NOT NULL,
        hostname TEXT NOT NULL,
        created TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS bucket_id_index ON buckets(id);
    CREATE TABLE IF NOT EXISTS events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        bucketrow INTEGER NOT NULL,
        starttime INTEGER NOT NULL,
        endtime INTEGER NOT NULL,
        data TEXT NOT NULL,
        FOREIGN KEY (bucketrow) REFERENCES buckets(id)
    );
    CREATE INDEX IF NOT EXISTS events_bucketrow_index ON events(bucketrow);
    CREATE INDEX IF NOT EXISTS events_starttime_index ON events(starttime);
    CREATE INDEX IF NOT EXISTS events_endtime_index ON events(endtime);
    PRAGMA user_version = 1;";
const V2: &str = "ALTER TABLE buckets ADD COLUMN data TEXT DEFAULT '{}'; PRAGMA user_version = 2;";
const V3: &str = "ALTER TABLE buckets RENAME COLUMN data TO data_deprecated;
    ALTER TABLE buckets ADD COLUMN data TEXT NOT NULL DEFAULT '{}'; PRAGMA user_version = 3;";
const V4: &str = "CREATE TABLE key_value (
        key TEXT PRIMARY KEY,
        value TEXT,
        last_modified NUMBER NOT NULL
    ); PRAGMA user_version = 4;";
const V5: &str = "DROP INDEX IF EXISTS events_bucketrow_index;
    DROP INDEX IF EXISTS events_starttime_index;
    DROP INDEX IF EXISTS events_endtime_index;
    CREATE INDEX IF NOT EXISTS events_bucketrow_starttime_endtime_index
        ON events(bucketrow, starttime DESC, endtime);
    PRAGMA user_version = 5;";
const V6: &str = "CREATE INDEX IF NOT EXISTS events_bucketrow_endtime_starttime_index
        ON events(bucketrow, endtime, starttime DESC);
    PRAGMA user_version = 6;";

const NS: i64 = 1_000_000_000;

/// A reference database at `version`, with two buckets, events and (from
/// v4) settings, written the way that version wrote them.
fn reference_db(db: &TempDb, version: usize, events: i64) -> Connection {
    let conn = Connection::open(db.path()).unwrap();
    for step in [V1, V2, V3, V4, V5, V6].iter().take(version) {
        conn.execute_batch(step).unwrap();
    }
    conn.execute(
        "INSERT INTO buckets (name, type, client, hostname, created) VALUES
         ('aw-watcher-window_host', 'currentwindow', 'aw-watcher-window', 'host',
          '2021-06-01 09:00:00.123456789+00:00'),
         ('aw-watcher-afk_host', 'afkstatus', 'aw-watcher-afk', 'host', '2021-06-01T09:00:00+00:00')",
        [],
    )
    .unwrap();
    if version >= 3 {
        conn.execute(
            "UPDATE buckets SET data = '{\"device_id\": \"abc\"}' WHERE name = 'aw-watcher-afk_host'",
            [],
        )
        .unwrap();
    }
    conn.execute_batch("BEGIN").unwrap();
    let mut insert = conn
        .prepare("INSERT INTO events (bucketrow, starttime, endtime, data) VALUES (?1, ?2, ?3, ?4)")
        .unwrap();
    for i in 0..events {
        let start = (1_600_000_000 + i * 60) * NS;
        insert
            .execute(rusqlite::params![
                1,
                start,
                start + 30 * NS,
                format!("{{\"app\": \"a{}\", \"title\": \"t\"}}", i % 7)
            ])
            .unwrap();
    }
    insert
        .execute(rusqlite::params![
            2,
            1_600_000_000 * NS,
            1_600_000_000 * NS + events * 60 * NS,
            "{\"status\": \"not-afk\"}"
        ])
        .unwrap();
    drop(insert);
    conn.execute_batch("COMMIT").unwrap();
    if version >= 4 {
        conn.execute(
            "INSERT INTO key_value VALUES ('settings.theme', '\"dark\"', 1600000000)",
            [],
        )
        .unwrap();
    }
    conn
}

fn schema_of(conn: &Connection) -> Vec<(String, String, Option<String>)> {
    let mut stmt = conn
        .prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")
        .unwrap();
    // Whitespace inside the stored CREATE text is layout, not schema.
    let normalize = |sql: Option<String>| {
        sql.map(|sql| {
            sql.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .replace("( ", "(")
                .replace(" )", ")")
        })
    };
    stmt.query_map([], |row| {
        Ok((row.get(0)?, row.get(1)?, normalize(row.get(2)?)))
    })
    .unwrap()
    .collect::<rusqlite::Result<_>>()
    .unwrap()
}

fn user_version(conn: &Connection) -> i64 {
    conn.query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap()
}

/// Reads, writes and checks a database holding `reference_db`'s rows.
fn check_works(store: &Datastore, version: usize, events: i64) {
    let buckets = store.buckets().wait().unwrap();
    assert_eq!(buckets.len(), 2);
    let window = &buckets["aw-watcher-window_host"];
    assert_eq!(window.kind, "currentwindow");
    assert_eq!(window.created.unwrap().nanos(), 1_622_538_000_123_456_789);
    assert_eq!(window.metadata.start, Some(at(1_600_000_000)));
    assert_eq!(
        window.metadata.end,
        Some(at(1_600_000_000 + (events - 1) * 60 + 30))
    );
    let afk = &buckets["aw-watcher-afk_host"];
    assert_eq!(afk.created, Some(at(1_622_538_000)));
    if version >= 3 {
        assert_eq!(afk.data, object(json!({"device_id": "abc"})));
    } else {
        assert!(afk.data.is_empty());
    }
    assert_eq!(
        store
            .count_events("aw-watcher-window_host", None, None)
            .wait()
            .unwrap() as i64,
        events
    );
    let newest = store
        .events(
            "aw-watcher-window_host",
            EventQuery {
                limit: Some(1),
                ..Default::default()
            },
        )
        .wait()
        .unwrap();
    assert_eq!(
        newest[0].data,
        object(json!({"app": format!("a{}", (events - 1) % 7), "title": "t"}))
    );
    // A range inside the long afk event finds it.
    let middle = at(1_600_000_000 + events * 30);
    assert_eq!(
        store
            .count_events("aw-watcher-afk_host", Some(middle), Some(middle))
            .wait()
            .unwrap(),
        1
    );
    // Writes work: a heartbeat merges into the newest stored event.
    let last = newest[0].clone();
    let beat = aw_models::Event::new(last.end(), Duration::ZERO, last.data.clone());
    let merged = store
        .heartbeat("aw-watcher-window_host", beat, Duration::from_secs(1))
        .unwrap();
    assert_eq!(merged.id, last.id);
    store.set_setting("fresh", json!([1])).unwrap();
    if version >= 4 {
        assert_eq!(store.setting("theme").wait().unwrap(), Some(json!("dark")));
    }
}

fn migrate_and_check(version: usize) {
    let db = TempDb::new();
    let events = 3000;
    let conn = reference_db(&db, version, events);
    let pages_before: i64 = conn
        .query_row("PRAGMA page_count", [], |row| row.get(0))
        .unwrap();
    drop(conn);
    let store = db.open();
    check_works(&store, version, events);
    store.close().unwrap();
    let conn = Connection::open(db.path()).unwrap();
    assert_eq!(user_version(&conn), 5);
    // Same schema as a file this program creates.
    let fresh = TempDb::new();
    fresh.open().close().unwrap();
    assert_eq!(
        schema_of(&conn),
        schema_of(&Connection::open(fresh.path()).unwrap())
    );
    // Dropping the three old indexes before building the composite one
    // reuses their pages: the file does not grow, beyond the two pages of
    // the v4 `key_value` table and its key index for files older than v4.
    if version < 5 {
        let key_value_pages = if version < 4 { 2 } else { 0 };
        let pages_after: i64 = conn
            .query_row("PRAGMA page_count", [], |row| row.get(0))
            .unwrap();
        assert!(
            pages_after <= pages_before + key_value_pages,
            "{pages_before} -> {pages_after}"
        );
    }
    assert_eq!(
        conn.query_row("PRAGMA integrity_check", [], |row| row.get::<_, String>(0))
            .unwrap(),
        "ok"
    );
}

#[test]
fn migrates_version_1() {
    migrate_and_check(1);
}

#[test]
fn migrates_version_2() {
    migrate_and_check(2);
}

#[test]
fn migrates_version_3() {
    migrate_and_check(3);
}

#[test]
fn migrates_version_4() {
    migrate_and_check(4);
}

#[test]
fn opens_a_reference_version_5_file() {
    migrate_and_check(5);
}

#[test]
fn fresh_schema_equals_the_reference_version_5() {
    let reference = TempDb::new();
    let conn = reference_db(&reference, 5, 0);
    let fresh = TempDb::new();
    fresh.open().close().unwrap();
    let ours = Connection::open(fresh.path()).unwrap();
    assert_eq!(schema_of(&ours), schema_of(&conn));
    assert_eq!(user_version(&ours), 5);
    let mode: String = ours
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn a_version_6_file_is_used_as_is() {
    let db = TempDb::new();
    drop(reference_db(&db, 6, 500));
    let store = db.open();
    check_works(&store, 6, 500);
    store.close().unwrap();
    assert_eq!(user_version(&Connection::open(db.path()).unwrap()), 6);
}

#[test]
fn what_we_write_reads_back_as_the_reference_reads_it() {
    // The reference reads buckets and events with plain SQL over these
    // columns; check the values it would get.
    let db = TempDb::new();
    let store = db.open();
    let mut created = bucket("b");
    created.data = object(json!({"device_id": "x"}));
    store.create_bucket(created).unwrap();
    store
        .insert_events(
            "b",
            vec![aw_models::Event::new(
                at(100),
                Duration::from_millis(1500),
                object(app("a")),
            )],
        )
        .unwrap();
    store.close().unwrap();
    let conn = Connection::open(db.path()).unwrap();
    let (name, created, data): (String, String, String) = conn
        .query_row("SELECT name, created, data FROM buckets", [], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })
        .unwrap();
    assert_eq!(name, "b");
    assert_eq!(created, "2021-06-01 09:00:00.123456789+00:00");
    assert_eq!(data, r#"{"device_id":"x"}"#);
    let (bucketrow, start, end, data): (i64, i64, i64, String) = conn
        .query_row(
            "SELECT bucketrow, starttime, endtime, data FROM events",
            [],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
        )
        .unwrap();
    let bucket_row: i64 = conn
        .query_row("SELECT id FROM buckets", [], |row| row.get(0))
        .unwrap();
    assert_eq!(
        (bucketrow, start, end),
        (bucket_row, 100 * NS, 100 * NS + 1_500_000_000)
    );
    assert_eq!(data, r#"{"app":"a"}"#);
}
