//! Push: this device's own buckets into its copy in the sync folder.
//!
//! The copy keeps each event under its id in this database, so the two
//! can be compared id by id. A pass is incremental: per bucket it reads
//! the events with ids above the bucket's `high_water` (new events) and
//! those starting at or after its `tail_start` (the newest event, which
//! heartbeats keep extending), both found through an index, and writes
//! only what differs. A no-op pass reads a few rows and writes nothing,
//! so the file and its modification time stay as they are and the
//! folder-sync tool has nothing to send.
//!
//! History changed in other ways (deleted, trimmed, redacted, replaced)
//! moves the bucket's change counter (`Replica::change_count`);
//! a counter that differs from the one the copy recorded makes the pass
//! compare the whole bucket with the copy, id by id, and log every event
//! it deletes or changes in `aw_sync_log`, so pullers can do the same to
//! their copies.
//!
//! Each bucket is written in one transaction of the copy, with its
//! progress: a kill leaves the copy as it was before that bucket.

use std::collections::BTreeMap;

use aw_datastore::format::{created_text, data_text, row_with_id, rows_by_id, StoredRow};
use aw_datastore::restore::IssuedMarks;
use aw_datastore::{DatastoreError, Replica};
use aw_models::Bucket;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};

use crate::files::{open_own, set_meta};

/// The copy's meta key of a bucket renamed at its origin, then its old
/// id; the value is the new id.
pub(crate) const RENAMED_META: &str = "renamed.";
use crate::{
    is_own_bucket, FolderSyncError, PushReport, Result, SyncFilter, SyncFolder, SyncProgress,
    ORIGIN_KEY,
};

/// Events read from this database per read.
const CHUNK: usize = 5_000;

/// How far the copy of one bucket got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pushed {
    high_water: i64,
    /// The bucket's event count here when it was pushed.
    count: u64,
    tail_start: i64,
    changes: i64,
}

pub(crate) fn push(
    store: &dyn Replica,
    folder: &SyncFolder,
    filter: &SyncFilter,
    progress: &mut dyn FnMut(&SyncProgress),
) -> Result<PushReport> {
    let path = folder.own_file();
    let copy = open_own(&path, &folder.device_id, &folder.hostname)?;
    let buckets: Vec<Bucket> = store
        .buckets()?
        .into_iter()
        .filter(|bucket| is_own_bucket(&bucket.id))
        .collect();
    let mut report = PushReport {
        file: path.clone(),
        ..PushReport::default()
    };
    for bucket in buckets
        .iter()
        .filter(|bucket| filter.takes_bucket(&bucket.id))
    {
        let mut stage = SyncProgress {
            stage: format!("Pushing {}", bucket.id),
            done: 0,
            total: None,
        };
        // IMMEDIATE: a second pass writing the copy at the same time (two
        // processes of this device) waits for this one's bucket instead of
        // failing on a lock upgrade, and then sees what it wrote.
        copy.execute_batch("BEGIN IMMEDIATE")?;
        let result = push_bucket(
            store,
            &copy,
            folder,
            filter,
            bucket,
            &mut report,
            &mut |done, total| {
                stage.done = done;
                stage.total = total;
                progress(&stage);
            },
        );
        match result {
            Ok(()) => copy.execute_batch("COMMIT")?,
            // Deleted while being pushed: the next pass removes its copy.
            Err(FolderSyncError::Store(DatastoreError::NoSuchBucket(_))) => {
                copy.execute_batch("ROLLBACK")?;
                continue;
            }
            Err(error) => {
                let _ = copy.execute_batch("ROLLBACK");
                return Err(error);
            }
        }
        report.buckets += 1;
    }
    // Buckets deleted here leave the copy, logged event by event; those
    // only left out by the filter stay.
    let kept: Vec<&str> = buckets.iter().map(|bucket| bucket.id.as_str()).collect();
    let stale: Vec<(i64, String)> = copy
        .prepare("SELECT id, name FROM buckets")?
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?
        .into_iter()
        .filter(|(_, name): &(i64, String)| !kept.contains(&name.as_str()))
        .collect();
    for (row_id, name) in stale {
        copy.execute_batch("BEGIN IMMEDIATE")?;
        let removed = (|| -> Result<u64> {
            let logged = copy.execute(
                "INSERT INTO aw_sync_log (bucket, event_id, starttime, endtime, data)
                 SELECT ?2, id, starttime, endtime, data FROM events WHERE bucketrow = ?1",
                params![row_id, name],
            )?;
            copy.execute("DELETE FROM events WHERE bucketrow = ?1", [row_id])?;
            copy.execute("DELETE FROM buckets WHERE id = ?1", [row_id])?;
            copy.execute("DELETE FROM aw_sync_pushed WHERE bucket = ?1", [&name])?;
            // Renamed here: pullers drop their copy of it once emptied.
            if let Some(to) = store.renamed(&name)? {
                set_meta(&copy, &format!("{RENAMED_META}{name}"), &to)?;
            }
            Ok(logged as u64)
        })();
        match removed {
            Ok(count) => {
                copy.execute_batch("COMMIT")?;
                report.deleted += count;
            }
            Err(error) => {
                let _ = copy.execute_batch("ROLLBACK");
                return Err(error);
            }
        }
    }
    prune_log(&copy)?;
    Ok(report)
}

/// Entries `aw_sync_log` keeps: a few months of daily retention on a
/// busy year (about 1,500 events a day), some 15 MB. A device that has
/// not pulled for longer misses the deletions among the older ones
/// (`pull.rs` says so in the log).
const LOG_KEEP: i64 = 100_000;

/// Drops the log's entries older than the newest [`LOG_KEEP`]; writes
/// nothing when there are none.
fn prune_log(copy: &Connection) -> Result<()> {
    let newest: Option<i64> =
        copy.query_row("SELECT max(seq) FROM aw_sync_log", [], |row| row.get(0))?;
    if let Some(newest) = newest.filter(|&newest| newest > LOG_KEEP) {
        copy.execute(
            "DELETE FROM aw_sync_log WHERE seq <= ?1",
            [newest - LOG_KEEP],
        )?;
    }
    Ok(())
}

/// Pushes one bucket; `progress` hears the events done and, when the
/// whole bucket is compared, its size (counting it costs a scan of its
/// index when its facts are not known, too much for every pass).
#[allow(
    clippy::too_many_arguments,
    reason = "one bucket's push, told everything once"
)]
fn push_bucket(
    store: &dyn Replica,
    copy: &Connection,
    folder: &SyncFolder,
    filter: &SyncFilter,
    bucket: &Bucket,
    report: &mut PushReport,
    progress: &mut dyn FnMut(u64, Option<u64>),
) -> Result<()> {
    let (copy_row, recreated) = copy_bucket(copy, folder, bucket)?;
    let pushed = copy
        .query_row(
            "SELECT high_water, tail_start, changes, count FROM aw_sync_pushed
             WHERE bucket = ?1",
            [&bucket.id],
            |row| {
                Ok(Pushed {
                    high_water: row.get(0)?,
                    count: row.get(3)?,
                    tail_start: row.get(1)?,
                    changes: row.get(2)?,
                })
            },
        )
        .optional()?;
    let changes = store.change_count(&bucket.id)?;
    // Read before the events: one added meanwhile makes the next pass look.
    let count = store.count_events(&bucket.id)?;
    let mut high_water = pushed.map_or(0, |pushed| pushed.high_water);
    let mut done = 0;
    match pushed {
        Some(pushed) if pushed.changes == changes && !recreated => {
            // New events, then the tail that heartbeats extend. Only adding
            // events changes the count without counting a change, so an
            // equal count means none was added: the walk by id, which
            // passes over the other buckets' later events, is skipped.
            let mut after = pushed.high_water;
            if count != pushed.count {
                loop {
                    let rows = store.rows_after(&bucket.id, after, CHUNK)?;
                    for row in rows.iter().filter(|row| filter.takes_end(row.end)) {
                        report.written += write_row(copy, copy_row, &bucket.id, row, false)?;
                    }
                    done += rows.len() as u64;
                    progress(done, None);
                    after = rows.last().map_or(after, |row| row.id);
                    high_water = high_water.max(after);
                    if rows.len() < CHUNK {
                        break;
                    }
                }
            }
            let tail = store.rows_from(&bucket.id, pushed.tail_start, pushed.high_water)?;
            for row in tail.iter().filter(|row| filter.takes_end(row.end)) {
                report.written += write_row(copy, copy_row, &bucket.id, row, true)?;
            }
        }
        _ => {
            // The whole bucket against the copy, a range of ids at a time.
            progress(0, Some(count));
            let mut after = 0;
            loop {
                let rows = store.rows_after(&bucket.id, after, CHUNK)?;
                let last = match (rows.last(), rows.len() == CHUNK) {
                    (Some(row), true) => row.id,
                    _ => i64::MAX,
                };
                let mut present = copy_rows(copy, copy_row, after, last)?;
                for row in &rows {
                    match present.remove(&row.id) {
                        Some(old) if old == *row => {}
                        // Before the filter's start: the copy keeps what it has.
                        _ if !filter.takes_end(row.end) => {}
                        _ => report.written += write_row(copy, copy_row, &bucket.id, row, false)?,
                    }
                }
                for old in present
                    .into_values()
                    .filter(|old| filter.takes_end(old.end))
                {
                    log(copy, &bucket.id, &old)?;
                    copy.execute("DELETE FROM events WHERE id = ?1", [old.id])?;
                    report.deleted += 1;
                }
                done += rows.len() as u64;
                progress(done, Some(count));
                high_water = high_water.max(rows.last().map_or(0, |row| row.id));
                if last == i64::MAX {
                    break;
                }
                after = last;
            }
        }
    }
    let tail_start: i64 = copy.query_row(
        "SELECT ifnull(max(starttime), -9223372036854775808) FROM events WHERE bucketrow = ?1",
        [copy_row],
        |row| row.get(0),
    )?;
    let now = Pushed {
        high_water,
        count,
        tail_start,
        changes,
    };
    if pushed != Some(now) {
        copy.execute(
            "INSERT OR REPLACE INTO aw_sync_pushed
                 (bucket, high_water, tail_start, changes, count)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                bucket.id,
                now.high_water,
                now.tail_start,
                now.changes,
                now.count
            ],
        )?;
    }
    Ok(())
}

/// The bucket's row in the copy, created or brought up to date (only when
/// it differs), and whether the copy's bucket was new or another bucket
/// of the same id (created at another time): then the whole bucket is
/// compared.
fn copy_bucket(copy: &Connection, folder: &SyncFolder, bucket: &Bucket) -> Result<(i64, bool)> {
    let hostname = if bucket.hostname.is_empty() || bucket.hostname == "unknown" {
        // As aw-sync does: a bucket must say where it came from.
        folder.device_id.clone()
    } else {
        bucket.hostname.clone()
    };
    let mut data = bucket.data.clone();
    data.insert(
        ORIGIN_KEY.to_string(),
        serde_json::Value::String(hostname.clone()),
    );
    let data = data_text(&data);
    let created = created_text(bucket.created.unwrap_or_else(aw_models::Timestamp::now));
    let found: Option<(i64, String, String, String, String, String)> = copy
        .query_row(
            "SELECT id, type, client, hostname, created, data FROM buckets WHERE name = ?1",
            [&bucket.id],
            |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                    row.get(5)?,
                ))
            },
        )
        .optional()?;
    match found {
        None => {
            copy.execute(
                "INSERT INTO buckets (name, type, client, hostname, created, data)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    bucket.id,
                    bucket.kind,
                    bucket.client,
                    hostname,
                    created,
                    data
                ],
            )?;
            Ok((copy.last_insert_rowid(), true))
        }
        Some(row) => {
            let wanted = (
                row.0,
                bucket.kind.clone(),
                bucket.client.clone(),
                hostname,
                created,
                data,
            );
            if row != wanted {
                copy.execute(
                    "UPDATE buckets SET type = ?2, client = ?3, hostname = ?4, created = ?5,
                         data = ?6 WHERE id = ?1",
                    params![wanted.0, wanted.1, wanted.2, wanted.3, wanted.4, wanted.5],
                )?;
            }
            Ok((row.0, row.4 != wanted.4))
        }
    }
}

/// The copy's events of the bucket with ids in `(after, before]`.
fn copy_rows(
    copy: &Connection,
    copy_row: i64,
    after: i64,
    before: i64,
) -> Result<BTreeMap<i64, StoredRow>> {
    let rows = rows_by_id(copy, copy_row, after, before, usize::MAX)?;
    Ok(rows.into_iter().map(|row| (row.id, row)).collect())
}

/// Writes one event to the copy under its id unless the copy has it as it
/// is; a changed event is logged first, except the newest event grown
/// longer by heartbeats (`tail`), which pullers follow by themselves: a
/// log entry per bucket and pass would outgrow the history. Returns 1 if
/// it wrote.
fn write_row(
    copy: &Connection,
    copy_row: i64,
    bucket_id: &str,
    row: &StoredRow,
    tail: bool,
) -> Result<u64> {
    // The copy keeps each event under its id here, in any bucket.
    let old = row_with_id(copy, row.id)?;
    // An event moved here from another bucket (a host renamed or merged)
    // leaves that bucket's copy as a deletion pullers see.
    let elsewhere: Option<String> = match old {
        Some(_) => copy
            .prepare_cached(
                "SELECT buckets.name FROM events JOIN buckets ON buckets.id = events.bucketrow
                 WHERE events.id = ?1 AND events.bucketrow != ?2",
            )?
            .query_row(params![row.id, copy_row], |found| found.get(0))
            .optional()?,
        None => None,
    };
    match old {
        Some(old) if old == *row && elsewhere.is_none() => return Ok(0),
        Some(old) => {
            let extended = old.start == row.start && old.data == row.data && row.end >= old.end;
            if let Some(before) = &elsewhere {
                log(copy, before, &old)?;
            } else if !(tail && extended) {
                log(copy, bucket_id, &old)?;
            }
            copy.prepare_cached(
                "UPDATE events SET bucketrow = ?2, starttime = ?3, endtime = ?4, data = ?5
                 WHERE id = ?1",
            )?
            .execute(params![row.id, copy_row, row.start, row.end, row.data])?;
        }
        None => {
            copy.prepare_cached(
                "INSERT INTO events (id, bucketrow, starttime, endtime, data)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![row.id, copy_row, row.start, row.end, row.data])?;
        }
    }
    Ok(1)
}

/// Records in `aw_sync_log` that the copy's event `old` is deleted or
/// changed, so pullers find their copy of it by its old times and data.
fn log(copy: &Connection, bucket_id: &str, old: &StoredRow) -> Result<()> {
    copy.prepare_cached(
        "INSERT INTO aw_sync_log (bucket, event_id, starttime, endtime, data)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![bucket_id, old.id, old.start, old.end, old.data])?;
    Ok(())
}

/// What this device's copy in the folder says was issued here: its
/// highest event id and the change counter it recorded per bucket, or
/// `None` when there is no copy. A restore raises the restored file's
/// marks above these (`aw_datastore::restore`).
pub(crate) fn issued_marks(folder: &SyncFolder) -> Result<Option<IssuedMarks>> {
    let path = folder.own_file();
    if !path.is_file() {
        return Ok(None);
    }
    let copy = Connection::open_with_flags(
        &path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let largest: Option<i64> =
        copy.query_row("SELECT max(id) FROM events", [], |row| row.get(0))?;
    let mut marks = IssuedMarks {
        highest_event_id: largest.unwrap_or(0),
        ..IssuedMarks::default()
    };
    let pushed: Vec<(String, i64, i64)> = copy
        .prepare("SELECT bucket, high_water, changes FROM aw_sync_pushed")?
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (bucket, high_water, changes) in pushed {
        marks.highest_event_id = marks.highest_event_id.max(high_water);
        marks.changes.insert(bucket, changes);
    }
    Ok(Some(marks))
}
