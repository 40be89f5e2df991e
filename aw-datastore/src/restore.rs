//! Restore: a snapshot (`snapshot.rs`) put back in place of the database
//! file, with nothing deleted and nothing handed out twice.
//!
//! [`restore`] runs on a file no process serves (it takes the file's lock,
//! `lock.rs`, for the whole run). It checks the snapshot (it opens with
//! the key, passes `quick_check`, has a schema this server reads), copies
//! it beside the database as `<db>.restoring`, prepares the copy (below),
//! syncs it, moves the current database and its `-wal` and `-shm` aside to
//! `<db>.before-restore-<time>` (never deleting them; the moved files keep
//! SQLite's names, so the old database still opens there), and renames the
//! copy into place.
//!
//! A restored file is older than the one it replaces, and other devices
//! may hold copies of events the newer one wrote (folder sync keeps each
//! event under its id here). So the copy is prepared from the marks of
//! what was already issued ([`IssuedMarks`]: read from the current file
//! here, and given by the caller from anywhere else that saw them, such as
//! this device's copy in a sync folder):
//! - **event ids** go on above the highest ever issued (the events
//!   table's `AUTOINCREMENT` counter in `sqlite_sequence` is raised), so a
//!   new event never takes the id of one another device already has;
//! - **each bucket's change counter** (`changes.rs`) is set above any the
//!   marks saw, so the next push compares every bucket with its copy
//!   whole: events the copy holds that the restored file lacks are deleted
//!   there and logged for the other devices, and nothing is duplicated.
//!
//! The pull state (which events of other devices are here) lives in the
//! file itself, so the restored file's is true of its content: the next
//! pull fetches again what other devices wrote since the snapshot.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use aw_models::{is_own_bucket, Timestamp};
use rusqlite::{Connection, OptionalExtension};

use crate::files::{open_read_only, side_path};
use crate::key_value::{self, CHANGES_PREFIX};
use crate::{key, lock, schema, DatabaseKey, DatastoreError, Result};

/// What was already handed out: the highest event id, and each bucket's
/// change counter as others may have recorded it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IssuedMarks {
    /// The highest event id issued (0: none).
    pub highest_event_id: i64,
    /// Change counters by bucket id.
    pub changes: BTreeMap<String, i64>,
}

impl IssuedMarks {
    /// Takes the larger of each mark.
    pub fn merge(&mut self, other: &IssuedMarks) {
        self.highest_event_id = self.highest_event_id.max(other.highest_event_id);
        for (bucket, &count) in &other.changes {
            let mine = self.changes.entry(bucket.clone()).or_insert(count);
            *mine = (*mine).max(count);
        }
    }

    /// The marks of the database file at `path` (read-only; the file must
    /// not be mid-write: a served file's marks move on).
    pub fn of_file(path: &Path, key: Option<&DatabaseKey>) -> Result<IssuedMarks> {
        let conn = open_read_only(path, key, false)?;
        marks_of(&conn)
    }
}

/// What a snapshot holds, as checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotFacts {
    /// Its buckets.
    pub buckets: u64,
    /// Its events.
    pub events: u64,
    /// Its newest event's end (`None`: no events).
    pub newest: Option<Timestamp>,
}

/// What [`restore`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    /// The snapshot's content.
    pub facts: SnapshotFacts,
    /// Where the files that were in place went (the database, its `-wal`
    /// and `-shm` when there were any); empty when there was no database.
    pub moved_aside: Vec<PathBuf>,
    /// The first id a new event gets.
    pub next_event_id: i64,
    /// Why the current file's marks could not be read, if they could not
    /// (then only the caller's marks and the snapshot's own were used).
    pub unread_marks: Option<String>,
}

/// Checks that `snapshot` is a database this server can restore with
/// `key`, and counts what it holds. Changes nothing.
pub fn check_snapshot(snapshot: &Path, key: Option<&DatabaseKey>) -> Result<SnapshotFacts> {
    if !snapshot.is_file() {
        return Err(DatastoreError::InvalidInput(format!(
            "there is no snapshot file {}",
            snapshot.display()
        )));
    }
    let unreadable = |error: rusqlite::Error| {
        DatastoreError::InvalidInput(format!(
            "{} is damaged or not a database: {error}",
            snapshot.display()
        ))
    };
    let conn = open_read_only(snapshot, key, false).map_err(|error| match error {
        DatastoreError::Storage(error) => unreadable(error),
        other => other,
    })?;
    let check: String = conn
        .query_row("PRAGMA quick_check", [], |row| row.get(0))
        .map_err(unreadable)?;
    if check != "ok" {
        return Err(DatastoreError::InvalidInput(format!(
            "{} failed its check ({check}): it is damaged",
            snapshot.display()
        )));
    }
    let version = schema::version(&conn).map_err(|error| match error {
        DatastoreError::Storage(error) => unreadable(error),
        other => other,
    })?;
    if !(0..=schema::NEWEST_COMPATIBLE_VERSION).contains(&version) {
        return Err(DatastoreError::UnsupportedVersion(version));
    }
    let tables: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('buckets', 'events')",
            [],
            |row| row.get(0),
        )
        .map_err(unreadable)?;
    if tables != 2 {
        return Err(DatastoreError::InvalidInput(format!(
            "{} is an SQLite file but not an ActivityWatch database (no buckets and events tables)",
            snapshot.display()
        )));
    }
    let (buckets, events, newest): (i64, i64, Option<i64>) = conn
        .query_row(
            "SELECT (SELECT count(*) FROM buckets), (SELECT count(*) FROM events),
                    (SELECT max(endtime) FROM events)",
            [],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .map_err(unreadable)?;
    Ok(SnapshotFacts {
        buckets: buckets.max(0) as u64,
        events: events.max(0) as u64,
        newest: newest.map(Timestamp::from_nanos),
    })
}

/// Puts `snapshot` in place of the database at `db` (which need not
/// exist), keyed with `key` like the snapshot; `issued` adds marks seen
/// outside the current file. Refuses with [`DatastoreError::InUse`] while
/// a process serves `db`. See the module's text.
pub fn restore(
    snapshot: &Path,
    db: &Path,
    key: Option<&DatabaseKey>,
    issued: &IssuedMarks,
) -> Result<Restored> {
    key::usable(key)?;
    if same_file(snapshot, db) {
        return Err(DatastoreError::InvalidInput(format!(
            "{} is the database itself, not a snapshot of it",
            snapshot.display()
        )));
    }
    let mut held = lock::lock(db)?;
    let facts = check_snapshot(snapshot, key)?;
    let mut marks = issued.clone();
    let unread_marks = if db.exists() {
        match IssuedMarks::of_file(db, key) {
            Ok(current) => {
                marks.merge(&current);
                None
            }
            Err(error) => Some(error.to_string()),
        }
    } else {
        None
    };
    let restoring = side_path(db, ".restoring");
    let prepared = prepare(snapshot, &restoring, key, &marks);
    let next_event_id = match prepared {
        Ok(next) => next,
        Err(error) => {
            let _ = std::fs::remove_file(&restoring);
            return Err(error);
        }
    };
    // The fingerprint vouches for the file being replaced, not this one.
    held.take_fingerprint()?;
    let aside = side_path(db, &format!(".before-restore-{}", stamp(Timestamp::now())));
    let mut moved: Vec<(PathBuf, PathBuf)> = Vec::new();
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let from = side_path(db, suffix);
        if from.symlink_metadata().is_err() {
            continue;
        }
        let to = side_path(&aside, suffix);
        let result = if to.symlink_metadata().is_ok() {
            Err(DatastoreError::InvalidInput(format!(
                "{} exists already",
                to.display()
            )))
        } else {
            std::fs::rename(&from, &to).map_err(DatastoreError::Io)
        };
        if let Err(error) = result {
            // Put back what moved, so the database is as it was.
            for (from, to) in moved.iter().rev() {
                let _ = std::fs::rename(to, from);
            }
            let _ = std::fs::remove_file(&restoring);
            return Err(error);
        }
        moved.push((from, to));
    }
    let moved_aside = moved.into_iter().map(|(_, to)| to).collect();
    std::fs::rename(&restoring, db)?;
    if let Some(folder) = db.parent().filter(|f| !f.as_os_str().is_empty()) {
        if let Ok(handle) = std::fs::File::open(folder) {
            let _ = handle.sync_all();
        }
    }
    Ok(Restored {
        facts,
        moved_aside,
        next_event_id,
        unread_marks,
    })
}

/// Copies the snapshot to `restoring` and raises its marks above
/// `marks`; returns the next event id. The copy is synced.
fn prepare(
    snapshot: &Path,
    restoring: &Path,
    key: Option<&DatabaseKey>,
    marks: &IssuedMarks,
) -> Result<i64> {
    let _ = std::fs::remove_file(restoring);
    std::fs::copy(snapshot, restoring)?;
    let conn = Connection::open(restoring)?;
    key::apply(&conn, key)?;
    key::check(&conn, restoring, key)?;
    schema::migrate(&conn)?;
    let own = marks_of(&conn)?;
    let mut all = marks.clone();
    all.merge(&own);
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let applied = (|| -> Result<i64> {
        let raised = conn.execute(
            "UPDATE sqlite_sequence SET seq = ?1 WHERE name = 'events' AND seq < ?1",
            [all.highest_event_id],
        )?;
        let present: bool = conn.query_row(
            "SELECT count(*) FROM sqlite_sequence WHERE name = 'events'",
            [],
            |row| row.get::<_, i64>(0).map(|n| n > 0),
        )?;
        if raised == 0 && !present && all.highest_event_id > 0 {
            conn.execute(
                "INSERT INTO sqlite_sequence (name, seq) VALUES ('events', ?1)",
                [all.highest_event_id],
            )?;
        }
        let buckets: Vec<String> = conn
            .prepare("SELECT name FROM buckets")?
            .query_map([], |row| row.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for bucket in buckets.iter().filter(|id| is_own_bucket(id)) {
            let above = all.changes.get(bucket).copied().unwrap_or(0) + 1;
            key_value::put(
                &conn,
                &format!("{CHANGES_PREFIX}{bucket}"),
                &above.to_string(),
            )?;
        }
        Ok(all.highest_event_id + 1)
    })();
    match applied {
        Ok(next) => {
            conn.execute_batch("COMMIT")?;
            conn.close().map_err(|(_, error)| error)?;
            std::fs::File::open(restoring)?.sync_all()?;
            Ok(next)
        }
        Err(error) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(error)
        }
    }
}

/// The marks a database file holds.
fn marks_of(conn: &Connection) -> Result<IssuedMarks> {
    let sequence: Option<i64> = conn
        .query_row(
            "SELECT seq FROM sqlite_sequence WHERE name = 'events'",
            [],
            |row| row.get(0),
        )
        .optional()
        .or_else(|error| match error {
            // A file that never had an AUTOINCREMENT row has no table.
            rusqlite::Error::SqliteFailure(_, Some(ref message))
                if message.contains("no such table") =>
            {
                Ok(None)
            }
            other => Err(other),
        })?;
    let largest: Option<i64> =
        conn.query_row("SELECT max(id) FROM events", [], |row| row.get(0))?;
    let mut marks = IssuedMarks {
        highest_event_id: sequence.unwrap_or(0).max(largest.unwrap_or(0)),
        changes: BTreeMap::new(),
    };
    let has_key_value: bool = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'key_value'",
        [],
        |row| row.get::<_, i64>(0).map(|n| n > 0),
    )?;
    if has_key_value {
        for (name, value) in key_value::under(conn, CHANGES_PREFIX)? {
            let count = value.and_then(|value| value.parse().ok()).unwrap_or(0);
            marks
                .changes
                .insert(name[CHANGES_PREFIX.len()..].to_string(), count);
        }
    }
    Ok(marks)
}

/// Whether two paths name the same file.
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// `2026-11-28T05-12-09Z`: a time for a file name.
fn stamp(now: Timestamp) -> String {
    now.to_datetime().format("%Y-%m-%dT%H-%M-%SZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_merge_to_the_larger() {
        let mut a = IssuedMarks {
            highest_event_id: 10,
            changes: BTreeMap::from([("x".to_string(), 3), ("y".to_string(), 1)]),
        };
        a.merge(&IssuedMarks {
            highest_event_id: 7,
            changes: BTreeMap::from([("x".to_string(), 2), ("z".to_string(), 5)]),
        });
        assert_eq!(a.highest_event_id, 10);
        assert_eq!(a.changes["x"], 3);
        assert_eq!(a.changes["y"], 1);
        assert_eq!(a.changes["z"], 5);
    }

    #[test]
    fn side_paths_keep_sqlite_names() {
        let aside = side_path(Path::new("/d/a.db"), ".before-restore-T");
        assert_eq!(
            side_path(&aside, "-wal"),
            Path::new("/d/a.db.before-restore-T-wal")
        );
    }
}
