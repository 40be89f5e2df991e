//! Removing history: deleting a time range, expiring old events, and
//! applying the privacy rules to stored events, one chunk at a time.
//!
//! Each function here is one chunk of such an operation, run by the writer
//! as one command (`worker.rs`), so inside one transaction: a kill leaves
//! each event either untouched or fully processed, and heartbeats queued
//! behind a chunk wait for at most that chunk. The loops that send chunk
//! after chunk are `Datastore`'s (`maintenance.rs`). Every chunk selects
//! what is still left to do, so running an operation again after a crash
//! completes it.
//!
//! The writer's memory is kept true: the remembered last heartbeat of a
//! bucket that changed is forgotten, the bucket facts follow every delete,
//! trim and insert (`stats.rs`), and the duration bounds need nothing, as
//! events only get shorter and a bound is an upper bound (`bounds.rs`).
//! Every chunk that changes a bucket counts a change for the sync push
//! (`note_change`), which then compares that bucket with its copy; one
//! that deletes from a pulled copy records the deleted time
//! (`note_deleted`), so no later pull stores it again.

use std::collections::HashMap;

use aw_models::{RangeDeletion, RulesOutcome};
use rusqlite::{params, Connection, OptionalExtension};

use crate::bounds::DurationBounds;
use crate::changes::{note_change, note_deleted};
use crate::format::{rows_by_id, StoredRow};
use crate::memory::WriterMemory;
use crate::privacy::PrivacyRules;
use crate::queries::bucket_row;
use crate::writes::{filter_text, Filtered};
use crate::Result;

/// Events one chunk processes at most: about a millisecond of the
/// writer's time for deletes and trims.
pub(crate) const CHUNK: usize = 500;

/// One chunk's result and whether the operation has more to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Chunk<T> {
    pub(crate) done: T,
    /// Whether the chunk was full, so another may find more.
    pub(crate) more: bool,
    /// Where the next chunk starts (the last event id looked at), for
    /// operations that walk by id.
    pub(crate) after: i64,
}

/// The events of the bucket (row) that overlap `[start, end)`: ending
/// after `start`, or starting in the range (so an event of no duration at
/// `start` is inside, one at `end` is not), oldest first.
fn overlapping(
    conn: &Connection,
    bounds: &DurationBounds,
    row_id: i64,
    start: i64,
    end: i64,
    limit: usize,
) -> Result<Vec<(i64, i64, i64)>> {
    // No event that overlaps starts before `start - longest`.
    let low = bounds
        .get(row_id)
        .map_or(i64::MIN, |longest| start.saturating_sub(longest));
    let rows = conn
        .prepare_cached(
            "SELECT id, starttime, endtime FROM events
                 INDEXED BY events_bucketrow_starttime_endtime_index
             WHERE bucketrow = ?1 AND starttime >= ?2 AND starttime < ?3
                 AND (endtime > ?4 OR starttime >= ?4)
             ORDER BY starttime ASC LIMIT ?5",
        )?
        .query_map(params![row_id, low, end, start, limit as i64], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// Counts what deleting `[start, end)` from the bucket would do. Runs on
/// any connection: a reader's, so a long range does not hold the writer.
pub(crate) fn preview_range(
    conn: &Connection,
    bounds: &DurationBounds,
    bucket_id: &str,
    start: i64,
    end: i64,
) -> Result<RangeDeletion> {
    let row_id = bucket_row(conn, bucket_id)?;
    let mut preview = RangeDeletion::default();
    for (_, event_start, event_end) in overlapping(conn, bounds, row_id, start, end, usize::MAX)? {
        if event_start >= start && event_end <= end {
            preview.deleted += 1;
        } else {
            preview.trimmed += 1;
        }
    }
    Ok(preview)
}

/// Deletes up to [`CHUNK`] events' worth of `[start, end)` from the bucket.
pub(crate) fn delete_range_chunk(
    conn: &Connection,
    memory: &mut WriterMemory<'_>,
    bucket_id: &str,
    start: i64,
    end: i64,
) -> Result<Chunk<RangeDeletion>> {
    let row_id = bucket_row(conn, bucket_id)?;
    let events = overlapping(conn, memory.bounds, row_id, start, end, CHUNK)?;
    let mut done = RangeDeletion::default();
    if !events.is_empty() {
        memory.last_events.forget(row_id);
        // Trimmed and split events start at `start` or `end` afterwards.
        let low = events.iter().map(|&(_, event_start, _)| event_start).min();
        let high = events.iter().map(|&(_, event_start, _)| event_start).max();
        let starts = low
            .zip(high)
            .map(|(low, high)| (low.min(start), high.max(end)));
        note_change(conn, bucket_id, starts)?;
        note_deleted(conn, bucket_id, Some(start), end)?;
    }
    for &(id, event_start, event_end) in &events {
        if event_start >= start && event_end <= end {
            conn.prepare_cached("DELETE FROM events WHERE id = ?1")?
                .execute([id])?;
            done.deleted += 1;
        } else {
            if event_start < start && event_end > end {
                // The part after the range becomes an event of its own.
                conn.prepare_cached(
                    "INSERT INTO events (bucketrow, starttime, endtime, data)
                     SELECT bucketrow, ?2, endtime, data FROM events WHERE id = ?1",
                )?
                .execute(params![id, end])?;
                memory.stats.added(row_id, end, event_end);
            }
            if event_start < start {
                conn.prepare_cached("UPDATE events SET endtime = ?2 WHERE id = ?1")?
                    .execute(params![id, start])?;
                memory.stats.added(row_id, event_start, start);
            } else {
                conn.prepare_cached("UPDATE events SET starttime = ?2 WHERE id = ?1")?
                    .execute(params![id, end])?;
                memory.stats.added(row_id, end, event_end);
            }
            done.trimmed += 1;
        }
        memory
            .stats
            .removed(conn, memory.bounds, row_id, event_start, event_end)?;
    }
    Ok(Chunk {
        done,
        more: events.len() == CHUNK,
        after: 0,
    })
}

/// Deletes up to [`CHUNK`] events of the bucket that ended before
/// `cutoff`; returns how many.
pub(crate) fn expire_chunk(
    conn: &Connection,
    memory: &mut WriterMemory<'_>,
    bucket_id: &str,
    cutoff: i64,
) -> Result<Chunk<u64>> {
    let row_id = bucket_row(conn, bucket_id)?;
    let events = conn
        .prepare_cached(
            "SELECT id, starttime, endtime FROM events
                 INDEXED BY events_bucketrow_starttime_endtime_index
             WHERE bucketrow = ?1 AND starttime < ?2 AND endtime < ?2
             LIMIT ?3",
        )?
        .query_map(params![row_id, cutoff, CHUNK as i64], |row| {
            Ok((row.get::<_, i64>(0)?, row.get(1)?, row.get(2)?))
        })?
        .collect::<rusqlite::Result<Vec<(i64, i64, i64)>>>()?;
    if !events.is_empty() {
        memory.last_events.forget(row_id);
        let low = events.iter().map(|&(_, start, _)| start).min();
        let high = events.iter().map(|&(_, start, _)| start).max();
        note_change(conn, bucket_id, low.zip(high))?;
        note_deleted(conn, bucket_id, None, cutoff)?;
    }
    for &(id, start, end) in &events {
        conn.prepare_cached("DELETE FROM events WHERE id = ?1")?
            .execute([id])?;
        memory
            .stats
            .removed(conn, memory.bounds, row_id, start, end)?;
    }
    Ok(Chunk {
        done: events.len() as u64,
        more: events.len() == CHUNK,
        after: 0,
    })
}

/// Whether a rules chunk changes the events or only counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RulesMode {
    /// Count what the rules would do (a dry run).
    Count,
    /// Delete dropped events and store redacted data.
    Apply,
}

/// What the rules do to one stored event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// Delete the event (`id`, its data text as read).
    Drop { id: i64, text: String },
    /// Store `redacted` in place of `text`.
    Redact {
        id: i64,
        text: String,
        redacted: String,
    },
}

/// Up to [`CHUNK`] events of the bucket with ids above `after`, in id
/// order. Runs on any connection: a reader's, so the writer only stores
/// the changes.
pub(crate) fn rows_after(conn: &Connection, bucket_id: &str, after: i64) -> Result<Vec<StoredRow>> {
    let row_id = bucket_row(conn, bucket_id)?;
    Ok(rows_by_id(conn, row_id, after, i64::MAX, CHUNK)?)
}

/// What the rules do to `rows`: the counts and the changes.
pub(crate) fn judge(
    rules: &PrivacyRules,
    bucket_id: &str,
    rows: &[StoredRow],
) -> (RulesOutcome, Vec<Change>) {
    let mut outcome = RulesOutcome::default();
    let mut changes = Vec::new();
    // Histories repeat their data texts: decide each distinct one once.
    let mut verdicts: HashMap<&str, Filtered> = HashMap::new();
    for StoredRow { id, data: text, .. } in rows {
        outcome.examined += 1;
        let verdict = verdicts
            .entry(text.as_str())
            .or_insert_with(|| filter_text(rules, bucket_id, text));
        match verdict {
            Filtered::Kept => {}
            Filtered::Dropped => {
                outcome.dropped += 1;
                changes.push(Change::Drop {
                    id: *id,
                    text: text.clone(),
                });
            }
            Filtered::Redacted(redacted) => {
                outcome.redacted += 1;
                changes.push(Change::Redact {
                    id: *id,
                    text: text.clone(),
                    redacted: redacted.clone(),
                });
            }
        }
    }
    (outcome, changes)
}

/// Stores changes the rules decided on events of the bucket, each only if
/// the event still has the data it was judged on (a write in between
/// leaves it to the next run); returns what was stored.
pub(crate) fn store_changes(
    conn: &Connection,
    memory: &mut WriterMemory<'_>,
    bucket_id: &str,
    changes: &[Change],
) -> Result<RulesOutcome> {
    let row_id = bucket_row(conn, bucket_id)?;
    let mut done = RulesOutcome::default();
    let mut starts: Option<(i64, i64)> = None;
    let mut touched = |start: i64| {
        starts = Some(starts.map_or((start, start), |(low, high)| {
            (low.min(start), high.max(start))
        }));
    };
    for change in changes {
        match change {
            Change::Drop { id, text } => {
                let deleted: Option<(i64, i64)> = conn
                    .prepare_cached(
                        "DELETE FROM events WHERE id = ?1 AND bucketrow = ?2 AND data = ?3
                         RETURNING starttime, endtime",
                    )?
                    .query_row(params![id, row_id, text], |row| {
                        Ok((row.get(0)?, row.get(1)?))
                    })
                    .optional()?;
                if let Some((start, end)) = deleted {
                    memory
                        .stats
                        .removed(conn, memory.bounds, row_id, start, end)?;
                    touched(start);
                    done.dropped += 1;
                }
            }
            Change::Redact { id, text, redacted } => {
                let changed: Option<i64> = conn
                    .prepare_cached(
                        "UPDATE events SET data = ?4 WHERE id = ?1 AND bucketrow = ?2 AND data = ?3
                         RETURNING starttime",
                    )?
                    .query_row(params![id, row_id, text, redacted], |row| row.get(0))
                    .optional()?;
                if let Some(start) = changed {
                    touched(start);
                    done.redacted += 1;
                }
            }
        }
    }
    done.examined = changes.len() as u64;
    if done.dropped + done.redacted > 0 {
        memory.last_events.forget(row_id);
        note_change(conn, bucket_id, starts)?;
    }
    Ok(done)
}

/// Gives up to `pages` free pages of the file back to the file system
/// (a database created with `auto_vacuum=INCREMENTAL`; elsewhere SQLite
/// does nothing); returns the free pages left.
pub(crate) fn release_pages(conn: &Connection, pages: i64) -> Result<i64> {
    conn.execute_batch(&format!("PRAGMA incremental_vacuum({pages})"))?;
    Ok(conn.query_row("PRAGMA freelist_count", [], |row| row.get(0))?)
}
