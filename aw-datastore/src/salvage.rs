//! Damage: telling a damaged database file from a healthy one and from a
//! file that is no database at all, and salvaging every row that can
//! still be read from a damaged one into a new file.
//!
//! [`check`] opens the file read-only and runs `quick_check`: the file is
//! [`Health::Healthy`], [`Health::Damaged`] (SQLite reads its header and
//! schema, but some page is wrong), or [`Health::Unreadable`] (a zeroed or
//! foreign header, a wrong key, a file shorter than a page, a damaged
//! schema page): nothing can be salvaged from that, and nothing is done
//! to it.
//!
//! [`salvage`] takes the file's lock, reads the damaged file in place
//! (read-only, its `-wal` included: a garbage `-wal` is ignored by SQLite,
//! a hot one replayed), and copies into `<db>.salvage`, a new file of this
//! server's schema, every bucket, event and key-value row it can read. The
//! rows are read by rowid ranges of the tables themselves (`NOT INDEXED`:
//! a damaged index costs nothing), and a range that fails is halved until
//! the rows that cannot be read are narrowed down to the ids of the
//! damaged pages; every row read is checked (types, JSON data) before it
//! is kept. Event ids stay as they were, and the counter goes on above the
//! highest the damaged file issued, so copies of these events on other
//! devices stay right. The new file is checked and synced; then the
//! damaged file and its `-wal` and `-shm` are moved aside as
//! `<db>.damaged-<time>` (so SQLite still opens the pair there) and the
//! new file is renamed into place. The damaged file is never written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{params, Connection, ErrorCode, OptionalExtension};

use crate::files::{open_read_only, side_path};
use crate::spans::{self, Ends};
use crate::{key, lock, schema, DatabaseKey, DatastoreError, Result};

/// What [`check`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// `quick_check` says ok.
    Healthy,
    /// Readable as a database, with damage: `quick_check`'s first lines.
    Damaged(String),
    /// Not readable as a database at all, and why: nothing to salvage.
    Unreadable(String),
}

/// What [`salvage`] recovered of one bucket.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BucketSalvage {
    /// The bucket's id (a made-up one for events whose bucket row was
    /// lost: `aw-server-salvaged-<row>`).
    pub id: String,
    /// Events copied into the new file.
    pub recovered: u64,
    /// Events the damaged file's index claimed the bucket had, when the
    /// index could be counted.
    pub claimed: Option<u64>,
}

/// What [`salvage`] did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SalvageReport {
    /// Where the damaged file went (its `-wal` beside it, if it had one).
    pub damaged: PathBuf,
    /// Every file moved aside.
    pub moved_aside: Vec<PathBuf>,
    /// What `quick_check` said of the damaged file.
    pub damage: String,
    /// Per bucket, what was recovered.
    pub buckets: Vec<BucketSalvage>,
    /// Events copied, in all.
    pub events: u64,
    /// Key-value rows (settings, privacy rules, sync state) copied.
    pub key_values: u64,
    /// Event id ranges `[from, to)` that could not be read.
    pub lost_event_ids: Vec<(i64, i64)>,
    /// The highest event id the damaged file had issued; new ones go above.
    pub highest_event_id: i64,
    /// How long the salvage took (`took_ms` in JSON).
    #[serde(rename = "took_ms", serialize_with = "millis")]
    pub took: Duration,
}

fn millis<S: serde::Serializer>(
    took: &Duration,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    serializer.serialize_f64(took.as_secs_f64() * 1000.0)
}

/// Damage met while serving, shared by the writer, the readers and the
/// handles: the first finding is kept, every read or write that meets
/// damage answers [`DatastoreError::Damaged`], and once it is seen the
/// writer writes no more and the close does not vouch for the file, so
/// the next open checks it whole (and the server salvages it).
#[derive(Debug)]
pub(crate) struct DamageSeen {
    path: PathBuf,
    detail: std::sync::OnceLock<String>,
}

impl DamageSeen {
    /// No damage seen yet in the file at `path` (empty: in memory).
    pub(crate) fn new(path: PathBuf) -> DamageSeen {
        DamageSeen {
            path,
            detail: std::sync::OnceLock::new(),
        }
    }

    /// `error` as answered: a storage error that says the file is damaged
    /// is recorded (and logged, the first time) and becomes `Damaged`.
    pub(crate) fn check(&self, error: DatastoreError) -> DatastoreError {
        match error {
            DatastoreError::Storage(storage) if is_damage(&storage) => {
                let detail = storage.to_string();
                if self.detail.set(detail.clone()).is_ok() {
                    log::error!(
                        "The database {} is damaged ({detail}): writes are refused from now on; \
                         a restart salvages what can be read",
                        self.path.display()
                    );
                }
                self.damaged(detail)
            }
            other => other,
        }
    }

    /// The error a write gets once damage was seen.
    pub(crate) fn refusal(&self) -> Option<DatastoreError> {
        self.detail.get().map(|detail| self.damaged(detail.clone()))
    }

    /// What was found, if anything.
    pub(crate) fn seen(&self) -> Option<&str> {
        self.detail.get().map(String::as_str)
    }

    fn damaged(&self, detail: String) -> DatastoreError {
        DatastoreError::Damaged {
            path: self.path.clone(),
            detail,
        }
    }
}

/// Whether an error is SQLite finding a damaged or foreign file.
pub fn is_damage(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
    )
}

/// Checks the database file at `path` without writing it. An error is
/// returned only for what is not about the file's content (it cannot be
/// opened at all, a key in a build without encryption).
pub fn check(path: &Path, key: Option<&DatabaseKey>) -> Result<Health> {
    key::usable(key)?;
    let metadata = std::fs::metadata(path)?;
    if metadata.len() < 512 {
        return Ok(Health::Unreadable(format!(
            "{} is {} bytes long, shorter than a database page",
            path.display(),
            metadata.len()
        )));
    }
    let conn = match open_read_only(path, key, true) {
        Ok(conn) => conn,
        Err(DatastoreError::Encryption(why)) => return Ok(Health::Unreadable(why)),
        Err(DatastoreError::Storage(error)) if is_damage(&error) => {
            return Ok(Health::Unreadable(format!(
                "{} cannot be read as a database: {error}",
                path.display()
            )))
        }
        Err(error) => return Err(error),
    };
    match quick_check_lines(&conn) {
        Ok(lines) if lines == ["ok"] => Ok(Health::Healthy),
        Ok(lines) => Ok(Health::Damaged(lines.join("; "))),
        Err(error) if is_damage(&error) => Ok(Health::Damaged(stopped_check(&conn, &error))),
        Err(error) => Err(error.into()),
    }
}

/// What can be said when `quick_check` itself stops at damage (it then
/// gives no findings, only SQLite's error): that error, and which tables
/// cannot be read to their end.
fn stopped_check(conn: &Connection, error: &rusqlite::Error) -> String {
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .and_then(|mut statement| {
            statement
                .query_map([], |row| row.get(0))?
                .collect::<rusqlite::Result<Vec<String>>>()
        })
        .unwrap_or_default();
    let unreadable: Vec<String> = tables
        .into_iter()
        .filter(|table| {
            let sql = format!("SELECT count(*) FROM \"{}\"", table.replace('"', "\"\""));
            conn.query_row(&sql, [], |row| row.get::<_, i64>(0))
                .is_err()
        })
        .collect();
    let which = if unreadable.is_empty() {
        "every table reads to its end (an index is damaged)".to_string()
    } else {
        format!(
            "unreadable to its end: table {}",
            unreadable.join(", table ")
        )
    };
    format!("quick_check stopped at a damaged page ({error}); {which}")
}

/// Runs `quick_check` on an open connection: `Ok` when it says ok, a
/// damage error (`SQLITE_CORRUPT`) with its first lines otherwise.
pub(crate) fn quick_check(conn: &Connection) -> Result<()> {
    let lines = quick_check_lines(conn)?;
    if lines == ["ok"] {
        return Ok(());
    }
    Err(DatastoreError::Storage(rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
        Some(lines.join("; ")),
    )))
}

/// What `quick_check` says: `["ok"]`, or its first 20 findings.
fn quick_check_lines(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    conn.prepare("PRAGMA quick_check(20)")?
        .query_map([], |row| row.get(0))?
        .collect()
}

/// Rows read per range before halving.
const RANGE: i64 = 4_096;

/// Salvages the damaged database at `db` (see the module's text). Refuses
/// with [`DatastoreError::InUse`] while a process serves it, and with
/// [`DatastoreError::InvalidInput`] for a file [`check`] finds healthy or
/// unreadable: nothing is moved then.
pub fn salvage(db: &Path, key: Option<&DatabaseKey>) -> Result<SalvageReport> {
    let started = Instant::now();
    let mut held = lock::lock(db)?;
    let damage = match check(db, key)? {
        Health::Damaged(damage) => damage,
        Health::Healthy => {
            return Err(DatastoreError::InvalidInput(format!(
                "{} is not damaged: nothing to salvage",
                db.display()
            )))
        }
        Health::Unreadable(why) => {
            return Err(DatastoreError::InvalidInput(format!(
                "nothing can be salvaged: {why}"
            )))
        }
    };
    let target = side_path(db, ".salvage");
    for suffix in ["", "-journal", "-wal", "-shm"] {
        let _ = std::fs::remove_file(side_path(&target, suffix));
    }
    let copied = copy_rows(db, &target, key);
    let mut report = match copied {
        Ok(report) => report,
        Err(error) => {
            let _ = std::fs::remove_file(&target);
            return Err(error);
        }
    };
    report.damage = damage;
    held.take_fingerprint()?;
    let aside = side_path(
        db,
        &format!(
            ".damaged-{}",
            aw_models::Timestamp::now()
                .to_datetime()
                .format("%Y-%m-%dT%H-%M-%SZ")
        ),
    );
    for suffix in ["", "-wal", "-shm"] {
        let from = side_path(db, suffix);
        if from.symlink_metadata().is_ok() {
            let to = side_path(&aside, suffix);
            std::fs::rename(&from, &to)?;
            report.moved_aside.push(to);
        }
    }
    std::fs::rename(&target, db)?;
    if let Some(folder) = db.parent().filter(|f| !f.as_os_str().is_empty()) {
        if let Ok(handle) = std::fs::File::open(folder) {
            let _ = handle.sync_all();
        }
    }
    report.damaged = aside;
    report.took = started.elapsed();
    Ok(report)
}

/// Copies what can be read of `source` into a new file at `target`.
fn copy_rows(source: &Path, target: &Path, key: Option<&DatabaseKey>) -> Result<SalvageReport> {
    let from = open_read_only(source, key, true)?;
    let to = Connection::open(target)?;
    key::apply(&to, key)?;
    schema::migrate(&to)?;
    to.execute_batch("BEGIN")?;
    let mut lost_buckets = Vec::new();
    let buckets: Vec<BucketRow> = read_ranges(
        &from,
        "SELECT id, name, type, client, hostname, created, data FROM buckets NOT INDEXED
         WHERE id >= ?1 AND id < ?2",
        "SELECT id, name, type, client, hostname, created, data FROM buckets NOT INDEXED
         WHERE id = ?1",
        upper_bound(&from, "buckets"),
        &mut lost_buckets,
        |row| {
            Ok(BucketRow {
                row: row.get(0)?,
                name: row.get(1)?,
                kind: row.get(2)?,
                client: row.get(3)?,
                hostname: row.get(4)?,
                created: row.get(5)?,
                data: row
                    .get::<_, Option<String>>(6)?
                    .unwrap_or_else(|| "{}".into()),
            })
        },
    )?;
    let mut names: BTreeMap<i64, String> = BTreeMap::new();
    for bucket in &buckets {
        to.execute(
            "INSERT INTO buckets (id, name, type, client, hostname, created, data)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                bucket.row,
                bucket.name,
                bucket.kind,
                bucket.client,
                bucket.hostname,
                bucket.created,
                bucket.data
            ],
        )?;
        names.insert(bucket.row, bucket.name.clone());
    }
    let highest = upper_bound(&from, "events");
    let mut lost_event_ids: Vec<(i64, i64)> = Vec::new();
    let mut recovered: BTreeMap<i64, u64> = BTreeMap::new();
    let mut events = 0;
    let mut at = 0;
    while at < highest.to {
        // Never past the highest id issued: ids above it were never lost.
        let end = at.saturating_add(RANGE).min(highest.to);
        let rows: Vec<EventRow> = read_ranges(
            &from,
            "SELECT id, bucketrow, starttime, endtime, data FROM events NOT INDEXED
             WHERE id >= ?1 AND id < ?2",
            "SELECT id, bucketrow, starttime, endtime, data FROM events NOT INDEXED
             WHERE id = ?1",
            Bounds { from: at, to: end },
            &mut lost_event_ids,
            |row| {
                let data: String = row.get(4)?;
                Ok(EventRow {
                    id: row.get(0)?,
                    bucket: row.get(1)?,
                    start: row.get(2)?,
                    end: row.get(3)?,
                    data,
                })
            },
        )?;
        for event in rows {
            // Random bytes over a page can read as a row of the right
            // types; stored data is always a JSON object.
            let sound = event.end >= event.start
                && serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&event.data)
                    .is_ok();
            if !sound {
                note_lost(&mut lost_event_ids, event.id, event.id + 1);
                continue;
            }
            if let std::collections::btree_map::Entry::Vacant(entry) = names.entry(event.bucket) {
                let name = format!("aw-server-salvaged-{}", event.bucket);
                to.execute(
                    "INSERT INTO buckets (id, name, type, client, hostname, created, data)
                     VALUES (?1, ?2, 'unknown', 'aw-server', 'unknown', ?3, '{}')",
                    params![
                        event.bucket,
                        name,
                        crate::format::created_text(aw_models::Timestamp::now())
                    ],
                )?;
                entry.insert(name);
            }
            to.prepare_cached(
                "INSERT INTO events (id, bucketrow, starttime, endtime, data)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![
                event.id,
                event.bucket,
                event.start,
                event.end,
                event.data
            ])?;
            *recovered.entry(event.bucket).or_default() += 1;
            events += 1;
        }
        at = end;
    }
    let mut lost_keys = Vec::new();
    let key_values: Vec<(String, Option<String>, f64)> = read_ranges(
        &from,
        "SELECT key, value, last_modified FROM key_value NOT INDEXED
         WHERE rowid >= ?1 AND rowid < ?2",
        "SELECT key, value, last_modified FROM key_value NOT INDEXED WHERE rowid = ?1",
        upper_bound(&from, "key_value"),
        &mut lost_keys,
        |row| {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get::<_, Option<f64>>(2)?.unwrap_or(0.0),
            ))
        },
    )
    .or_else(|error| match error {
        // A file of a schema before the key-value table.
        DatastoreError::Storage(ref storage) if storage.to_string().contains("no such table") => {
            Ok(Vec::new())
        }
        other => Err(other),
    })?;
    for (name, value, modified) in &key_values {
        to.execute(
            "INSERT OR REPLACE INTO key_value (key, value, last_modified) VALUES (?1, ?2, ?3)",
            params![name, value, modified],
        )?;
    }
    let lost_event_ids = spans::join(lost_event_ids, Ends::HalfOpen);
    let highest = highest.to.saturating_sub(1);
    let issued = sequence(&from, "events").unwrap_or(0).max(highest);
    to.execute(
        "INSERT OR REPLACE INTO sqlite_sequence (rowid, name, seq)
         VALUES ((SELECT rowid FROM sqlite_sequence WHERE name = 'events'), 'events', ?1)",
        [issued],
    )?;
    let claimed = claimed_counts(&from);
    to.execute_batch("COMMIT")?;
    let check: String = to.query_row("PRAGMA quick_check", [], |row| row.get(0))?;
    if check != "ok" {
        return Err(DatastoreError::InvalidInput(format!(
            "the salvaged copy failed its check: {check}"
        )));
    }
    to.close().map_err(|(_, error)| error)?;
    std::fs::File::open(target)?.sync_all()?;
    Ok(SalvageReport {
        damaged: PathBuf::new(),
        moved_aside: Vec::new(),
        damage: String::new(),
        buckets: names
            .iter()
            .map(|(row, name)| BucketSalvage {
                id: name.clone(),
                recovered: recovered.get(row).copied().unwrap_or(0),
                claimed: claimed
                    .as_ref()
                    .map(|counts| counts.get(row).copied().unwrap_or(0)),
            })
            .collect(),
        events,
        key_values: key_values.len() as u64,
        lost_event_ids,
        highest_event_id: issued,
        took: Duration::ZERO,
    })
}

struct BucketRow {
    row: i64,
    name: String,
    kind: String,
    client: String,
    hostname: String,
    created: String,
    data: String,
}

struct EventRow {
    id: i64,
    bucket: i64,
    start: i64,
    end: i64,
    data: String,
}

/// Rowids `[from, to)`.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    from: i64,
    to: i64,
}

/// Rowids from 0 to one past the largest the table's counter or its
/// rightmost page knows.
fn upper_bound(conn: &Connection, table: &str) -> Bounds {
    let largest: Option<i64> = conn
        .query_row(
            &format!("SELECT max(rowid) FROM {table} NOT INDEXED"),
            [],
            |row| row.get(0),
        )
        .ok()
        .flatten();
    let top = largest.unwrap_or(0).max(sequence(conn, table).unwrap_or(0));
    Bounds {
        from: 0,
        to: top.saturating_add(1),
    }
}

/// The table's `AUTOINCREMENT` counter, when it can be read.
fn sequence(conn: &Connection, table: &str) -> Option<i64> {
    conn.query_row(
        "SELECT seq FROM sqlite_sequence WHERE name = ?1",
        [table],
        |row| row.get(0),
    )
    .optional()
    .ok()
    .flatten()
}

/// Every row of `sql` (with `?1`, `?2` the bounds) in `bounds` that can
/// be read; ranges that fail with damage are halved down to single rowids,
/// looked up with `point_sql` (`?1` the rowid), and those that still fail
/// are recorded in `lost`.
fn read_ranges<T>(
    conn: &Connection,
    sql: &str,
    point_sql: &str,
    bounds: Bounds,
    lost: &mut Vec<(i64, i64)>,
    read: impl Fn(&rusqlite::Row<'_>) -> rusqlite::Result<T> + Copy,
) -> Result<Vec<T>> {
    let mut found = Vec::new();
    let mut pending = vec![bounds];
    while let Some(range) = pending.pop() {
        if range.from >= range.to {
            continue;
        }
        // A single rowid is looked up, not scanned: a scan steps past its
        // row to check the bound, into the next page, which may be the
        // damaged one.
        let rows: rusqlite::Result<Vec<T>> = if range.to - range.from == 1 {
            conn.prepare_cached(point_sql).and_then(|mut statement| {
                statement
                    .query_map([range.from], read)?
                    .collect::<rusqlite::Result<Vec<T>>>()
            })
        } else {
            conn.prepare_cached(sql).and_then(|mut statement| {
                statement
                    .query_map([range.from, range.to], read)?
                    .collect::<rusqlite::Result<Vec<T>>>()
            })
        };
        match rows {
            Ok(rows) => found.extend(rows),
            Err(error) if is_damage(&error) || is_garbage(&error) => {
                if range.to - range.from <= 1 {
                    note_lost(lost, range.from, range.to);
                } else {
                    let middle = range.from + (range.to - range.from) / 2;
                    // Low half first (popped last-in, first-out).
                    pending.push(Bounds {
                        from: middle,
                        to: range.to,
                    });
                    pending.push(Bounds {
                        from: range.from,
                        to: middle,
                    });
                }
            }
            Err(error) => return Err(error.into()),
        }
    }
    Ok(found)
}

/// Adds `[from, to)` to the sorted lost ranges, joined with the last one
/// when they touch.
fn note_lost(lost: &mut Vec<(i64, i64)>, from: i64, to: i64) {
    match lost.last_mut() {
        Some(last) if last.1 == from => last.1 = to,
        _ => lost.push((from, to)),
    }
}

/// A row whose values have the wrong types: what random bytes over a page
/// can read as.
fn is_garbage(error: &rusqlite::Error) -> bool {
    matches!(
        error,
        rusqlite::Error::InvalidColumnType(..)
            | rusqlite::Error::FromSqlConversionFailure(..)
            | rusqlite::Error::Utf8Error(..)
    )
}

/// What the damaged file's composite index says each bucket row holds,
/// when the index can be read whole.
fn claimed_counts(conn: &Connection) -> Option<BTreeMap<i64, u64>> {
    let mut statement = conn
        .prepare(
            "SELECT bucketrow, count(*) FROM events
             INDEXED BY events_bucketrow_starttime_endtime_index GROUP BY bucketrow",
        )
        .ok()?;
    let counts = statement
        .query_map([], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?)))
        .ok()?
        .collect::<rusqlite::Result<Vec<_>>>()
        .ok()?;
    Some(
        counts
            .into_iter()
            .map(|(row, count)| (row, count.max(0) as u64))
            .collect(),
    )
}
