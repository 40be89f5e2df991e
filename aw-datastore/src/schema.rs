//! The on-disk schema, connection settings and migrations.
//!
//! The tables, columns and indexes are exactly those of aw-server-rust at
//! `user_version` 5, so a file can move between the two servers in either
//! direction: `buckets` (with the `data_deprecated` column left behind by
//! the v3 migration), `events` (start and end as integer nanoseconds, `data`
//! as JSON text) and `key_value` (settings under `settings.<key>`). A fresh
//! file is built by running the same numbered migrations an old file goes
//! through, so the stored `CREATE TABLE` text also matches the reference's (up to
//! whitespace).
//!
//! Migrations are append-only and each runs in one transaction together
//! with its `user_version` bump: a crash mid-migration leaves the file at
//! the previous version, and the next open retries.

use std::time::Duration as StdDuration;

use rusqlite::Connection;

use crate::{DatastoreError, Result};

/// The version this program creates and migrates to.
pub(crate) const CURRENT_VERSION: i64 = 5;

/// Newest version accepted as is. aw-server-rust's v6 only adds the index
/// `events_bucketrow_endtime_starttime_index`; tables and columns are those
/// of v5, and SQLite maintains the extra index on our writes, so such a
/// file is opened without changing its version.
pub const NEWEST_COMPATIBLE_VERSION: i64 = 6;

/// Name of the composite index every event range read is forced onto.
#[cfg(test)]
pub(crate) const EVENTS_INDEX: &str = "events_bucketrow_starttime_endtime_index";

/// One migration: the version it produces and its statements.
struct Migration {
    to_version: i64,
    sql: &'static str,
}

/// The shipped migrations, in order. Never edit one: add another.
const MIGRATIONS: &[Migration] = &[
    Migration {
        to_version: 1,
        sql: "CREATE TABLE IF NOT EXISTS buckets (
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
            CREATE INDEX IF NOT EXISTS events_endtime_index ON events(endtime);",
    },
    Migration {
        to_version: 2,
        sql: "ALTER TABLE buckets ADD COLUMN data TEXT DEFAULT '{}';",
    },
    Migration {
        // The v2 column could hold NULL; the reference keeps it under a new
        // name and adds a NOT NULL one, and so must we to stay identical.
        to_version: 3,
        sql: "ALTER TABLE buckets RENAME COLUMN data TO data_deprecated;
              ALTER TABLE buckets ADD COLUMN data TEXT NOT NULL DEFAULT '{}';",
    },
    Migration {
        to_version: 4,
        sql: "CREATE TABLE key_value (
                key TEXT PRIMARY KEY,
                value TEXT,
                last_modified NUMBER NOT NULL
            );",
    },
    Migration {
        // Every range read filters on bucketrow and a time range ordered by
        // starttime: one composite index serves the seek, the range and the
        // order, and checks endtime without touching the row. The old
        // single-column indexes are dropped first so the pages they free
        // are reused for the new one inside this transaction; creating it
        // first would grow the file by the index's size for good.
        to_version: 5,
        sql: "DROP INDEX IF EXISTS events_bucketrow_index;
              DROP INDEX IF EXISTS events_starttime_index;
              DROP INDEX IF EXISTS events_endtime_index;
              CREATE INDEX IF NOT EXISTS events_bucketrow_starttime_endtime_index
                  ON events(bucketrow, starttime DESC, endtime);",
    },
];

/// The file's `user_version`.
pub(crate) fn version(conn: &Connection) -> Result<i64> {
    Ok(conn
        .prepare_cached("PRAGMA user_version")?
        .query_row([], |row| row.get(0))?)
}

/// Brings the file to [`CURRENT_VERSION`], one transaction per step.
pub(crate) fn migrate(conn: &Connection) -> Result<()> {
    let found = version(conn)?;
    if found > NEWEST_COMPATIBLE_VERSION {
        return Err(DatastoreError::UnsupportedVersion(found));
    }
    if found < 0 {
        return Err(DatastoreError::UnsupportedVersion(found));
    }
    if found >= CURRENT_VERSION {
        return Ok(());
    }
    // A new file takes every step: one line says so, not one per step.
    if found == 0 {
        log::info!("Creating the database's tables (schema version {CURRENT_VERSION})");
    }
    for migration in MIGRATIONS.iter().filter(|m| m.to_version > found) {
        conn.execute_batch("BEGIN IMMEDIATE")?;
        // Another connection may have taken this step since `found` was
        // read (two sync passes of one device creating its copy in the
        // folder at once; a server's own file is locked to one process):
        // the version is read again under the write lock, so a step runs
        // once and the version never goes back.
        let step = version(conn).and_then(|now| {
            if now >= migration.to_version {
                return Ok(());
            }
            if found > 0 {
                log::info!("Migrating the database to version {}", migration.to_version);
            }
            // execute_batch because a migration is several statements run
            // once; caching them would only hold memory.
            Ok(conn.execute_batch(&format!(
                "{}\nPRAGMA user_version = {};",
                migration.sql, migration.to_version
            ))?)
        });
        match step {
            Ok(()) => conn.execute_batch("COMMIT")?,
            Err(error) => {
                // A failed step must leave no half-applied state behind.
                let _ = conn.execute_batch("ROLLBACK");
                return Err(error);
            }
        }
    }
    Ok(())
}

/// Turns incremental vacuum on in a file that is still empty (SQLite
/// fixes the mode when it first writes the file: switching to WAL does): pages freed by deletes
/// can then be given back to the file system without rebuilding the file
/// (`cleanup.rs`). The mode is a field of the file header that SQLite
/// handles by itself, so aw-server-rust reads and writes such a file as
/// any other.
fn start_incremental_vacuum(conn: &Connection) -> Result<()> {
    let tables: i64 = conn.query_row("SELECT count(*) FROM sqlite_master", [], |row| row.get(0))?;
    if tables == 0 {
        conn.execute_batch("PRAGMA auto_vacuum = INCREMENTAL")?;
    }
    Ok(())
}

/// Settings of the writer connection.
///
/// WAL lets the reader connections read beside the writer, and with
/// `synchronous=NORMAL` a commit is a `write()` of the WAL frames without
/// `fsync`: it survives the process being killed (the frames are in the OS
/// page cache) and is synced later by the worker (see `worker.rs`).
pub(crate) fn configure_writer(conn: &Connection, file_backed: bool) -> Result<()> {
    conn.busy_timeout(StdDuration::from_secs(5))?;
    start_incremental_vacuum(conn)?;
    if file_backed {
        let mode: String = conn
            .prepare_cached("PRAGMA journal_mode = WAL")?
            .query_row([], |row| row.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(DatastoreError::InvalidInput(format!(
                "the database file cannot use WAL journaling (got '{mode}')"
            )));
        }
    }
    conn.prepare_cached("PRAGMA synchronous = NORMAL")?
        .execute([])?;
    if file_backed {
        // SQLite's automatic checkpoint would run inside some commit every
        // 1000 pages, with two fsyncs, delaying whichever heartbeat hit it;
        // the worker checkpoints on its own schedule instead (`worker.rs`).
        conn.query_row("PRAGMA wal_autocheckpoint = 0", [], |_| Ok(()))?;
        // A WAL grown by a burst is cut back to this size once reset.
        conn.query_row("PRAGMA journal_size_limit = 33554432", [], |_| Ok(()))?;
    }
    conn.set_prepared_statement_cache_capacity(64);
    Ok(())
}

/// Settings of the WAL syncer's connection, which only checkpoints.
/// How long the WAL syncer's connection waits for a lock before it reports
/// busy.
pub(crate) const SYNCER_BUSY_TIMEOUT: StdDuration = StdDuration::from_secs(5);

pub(crate) fn configure_wal_sync(conn: &Connection) -> Result<()> {
    conn.busy_timeout(SYNCER_BUSY_TIMEOUT)?;
    // A first read makes the connection open the WAL and its index, so
    // its checkpoints find them.
    conn.query_row("PRAGMA user_version", [], |_| Ok(()))?;
    Ok(())
}

/// Settings of a read-only connection.
pub(crate) fn configure_reader(conn: &Connection) -> Result<()> {
    conn.busy_timeout(StdDuration::from_secs(5))?;
    // A range read walks the time index and looks each row up in the
    // table, fetching most pages from the OS's cache through `pread`; a
    // scan reads each page once, so a small cache (the index's upper
    // levels and more) reads as fast as a large one and keeps less memory
    // per connection (`benches/runs/2026-11-history.md`, the page cache).
    conn.execute_batch("PRAGMA cache_size = -512")?;
    conn.set_prepared_statement_cache_capacity(64);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_database_reaches_current_version_with_composite_index_only() {
        let conn = Connection::open_in_memory().unwrap();
        configure_writer(&conn, false).unwrap();
        migrate(&conn).unwrap();
        assert_eq!(version(&conn).unwrap(), CURRENT_VERSION);
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' AND sql IS NOT NULL")
            .unwrap();
        let names: Vec<String> = stmt
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(names, vec![EVENTS_INDEX.to_string()]);
        let auto_vacuum: i64 = conn
            .query_row("PRAGMA auto_vacuum", [], |row| row.get(0))
            .unwrap();
        assert_eq!(auto_vacuum, 2, "incremental");
        // Running again is a no-op.
        migrate(&conn).unwrap();
    }

    #[test]
    fn newer_versions_are_refused() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("PRAGMA user_version = 7").unwrap();
        assert!(matches!(
            migrate(&conn),
            Err(DatastoreError::UnsupportedVersion(7))
        ));
    }
}
