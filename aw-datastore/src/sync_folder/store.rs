//! The writer's side of sync: storing a chunk of pulled events with the
//! pull's progress in one command, and counting the changes to a bucket's
//! history that the push must look for.
//!
//! Pulled events go through the import path (`writes::import_events`):
//! the privacy rules in force apply to them as to any write, and an event
//! already stored as it is (same times and data) is skipped, so a pass
//! run twice, or cut short and run again, stores nothing twice. Events
//! that changed at their origin after they were pulled are found here by
//! their old times (and data, where several share the times) and changed
//! or deleted; one that is not found was deleted here, and stays deleted.
//!
//! What is deleted here from a pulled copy (a range delete, retention, a
//! single event) is recorded per copy ([`DELETED_PREFIX`], `note_deleted`)
//! and pulled events in it are not stored again, so a deletion here
//! stands even when the origin's file is rebuilt and read from the start.
//!
//! The counters, the progress and the record live in `key_value` outside
//! the `settings.` prefix, as the bucket facts do (`stats.rs`), so
//! aw-server-rust ignores them.

use aw_models::{Bucket, Timestamp};
use rusqlite::{params, Connection, OptionalExtension};

use super::is_own_bucket;
use crate::queries::bucket_row;
use crate::writes::{filter_text, import_events, insert_bucket_row, Filtered, WriterMemory};
use crate::{DatastoreError, PreparedEvent, Result};

/// Key prefix of a bucket's change counter (then the bucket id).
pub(crate) const CHANGES_PREFIX: &str = "aw-server.history-changes.";
/// Key prefix of a pull's progress (then the source and the bucket).
pub(crate) const PULLED_PREFIX: &str = "aw-server.sync-pulled.";
/// Key prefix of what was deleted here from a pulled copy (then its id).
pub(crate) const DELETED_PREFIX: &str = "aw-server.sync-deleted.";
/// Most ranges the record of a copy keeps; past it, the oldest are
/// joined (a larger range withholds more, never less).
const MAX_RANGES: usize = 1_000;

/// What was deleted here from a pulled copy.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Deleted {
    /// Events that end before this were deleted (retention).
    before: Option<i64>,
    /// Time ranges `[start, end)` deleted, sorted, disjoint.
    ranges: Vec<(i64, i64)>,
}

impl Deleted {
    /// Whether an event from `start` to `end` lies in deleted time.
    fn covers(&self, start: i64, end: i64) -> bool {
        if self.before.is_some_and(|before| end < before) {
            return true;
        }
        let at = self
            .ranges
            .partition_point(|&(_, range_end)| range_end <= start);
        self.ranges
            .get(at)
            .is_some_and(|&(range_start, _)| range_start < end.max(start + 1))
    }

    fn add(&mut self, start: i64, end: i64) {
        self.ranges.push((start, end.max(start + 1)));
        self.ranges.sort_unstable();
        let mut joined: Vec<(i64, i64)> = Vec::with_capacity(self.ranges.len());
        for &(start, end) in &self.ranges {
            match joined.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => joined.push((start, end)),
            }
        }
        while joined.len() > MAX_RANGES {
            let second = joined.remove(1);
            joined[0].1 = second.1;
        }
        self.ranges = joined;
    }
}

fn load_deleted(conn: &Connection, bucket_id: &str) -> Result<Deleted> {
    let text: Option<String> = conn
        .prepare_cached("SELECT value FROM key_value WHERE key = ?1")?
        .query_row([format!("{DELETED_PREFIX}{bucket_id}")], |row| row.get(0))
        .optional()?;
    Ok(text
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default())
}

/// What was deleted from a pulled copy: the events of `[start, end)`, or
/// (`start` = `None`) those ending before `end`. Nothing for an own
/// bucket, whose deletions reach the copies through the push.
pub(crate) fn note_deleted(
    conn: &Connection,
    bucket_id: &str,
    start: Option<i64>,
    end: i64,
) -> Result<()> {
    if is_own_bucket(bucket_id) {
        return Ok(());
    }
    let mut deleted = load_deleted(conn, bucket_id)?;
    match start {
        Some(start) => deleted.add(start, end),
        None => deleted.before = Some(deleted.before.map_or(end, |before| before.max(end))),
    }
    conn.prepare_cached(
        "INSERT OR REPLACE INTO key_value (key, value, last_modified) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![
        format!("{DELETED_PREFIX}{bucket_id}"),
        serde_json::to_string(&deleted).unwrap_or_default(),
        Timestamp::now().nanos() / 1_000_000_000
    ])?;
    Ok(())
}

/// A pulled event that changed or was deleted at its origin: its times
/// (and data, when known) as it was pulled, and what it is now.
#[derive(Debug, Clone)]
pub(crate) struct Replacement {
    pub(crate) start: i64,
    pub(crate) end: i64,
    pub(crate) old_data: Option<String>,
    /// `None`: deleted at the origin.
    pub(crate) new: Option<PreparedEvent>,
}

/// What a pull stored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PullCounts {
    /// Events added.
    pub inserted: u64,
    /// Events already stored as they are, or in time deleted here.
    pub skipped: u64,
    /// Events the privacy rules dropped.
    pub dropped: u64,
    /// Stored events changed as their origin changed them.
    pub updated: u64,
    /// Stored events deleted as their origin deleted them.
    pub deleted: u64,
}

impl PullCounts {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: PullCounts) {
        self.inserted += other.inserted;
        self.skipped += other.skipped;
        self.dropped += other.dropped;
        self.updated += other.updated;
        self.deleted += other.deleted;
    }
}

/// Stores one chunk of a pull into `target` (created if missing):
/// replacements first, then new events, then the progress (`key`, JSON
/// text), all in the writer's transaction.
pub(crate) fn pull_chunk(
    conn: &Connection,
    memory: &mut WriterMemory<'_>,
    target: &Bucket,
    replacements: &[Replacement],
    events: Vec<PreparedEvent>,
    progress: Option<(String, String)>,
) -> Result<PullCounts> {
    let row_id = match bucket_row(conn, &target.id) {
        Ok(row_id) => row_id,
        Err(DatastoreError::NoSuchBucket(_)) => insert_bucket_row(conn, memory, target)?,
        Err(error) => return Err(error),
    };
    let mut counts = PullCounts::default();
    for replacement in replacements {
        replace(conn, memory, &target.id, row_id, replacement, &mut counts)?;
    }
    let deleted = load_deleted(conn, &target.id)?;
    let before = events.len();
    let events: Vec<PreparedEvent> = events
        .into_iter()
        .filter(|event| !deleted.covers(event.start, event.end))
        .collect();
    counts.skipped += (before - events.len()) as u64;
    if !events.is_empty() {
        let summary = import_events(conn, memory, &target.id, events)?;
        counts.inserted += summary.inserted;
        counts.skipped += summary.skipped;
        counts.dropped += summary.dropped;
    }
    if let Some((key, value)) = progress {
        conn.prepare_cached(
            "INSERT OR REPLACE INTO key_value (key, value, last_modified) VALUES (?1, ?2, ?3)",
        )?
        .execute(params![
            key,
            value,
            Timestamp::now().nanos() / 1_000_000_000
        ])?;
    }
    Ok(counts)
}

fn replace(
    conn: &Connection,
    memory: &mut WriterMemory<'_>,
    bucket_id: &str,
    row_id: i64,
    replacement: &Replacement,
    counts: &mut PullCounts,
) -> Result<()> {
    let candidates: Vec<(i64, String)> = conn
        .prepare_cached(
            "SELECT id, data FROM events INDEXED BY events_bucketrow_starttime_endtime_index
             WHERE bucketrow = ?1 AND starttime = ?2 AND endtime = ?3",
        )?
        .query_map(params![row_id, replacement.start, replacement.end], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    // The stored copy has the data the rules made of the origin's.
    let filtered = |text: &str| match filter_text(memory.privacy, bucket_id, text) {
        Filtered::Kept => Some(text.to_string()),
        Filtered::Redacted(redacted) => Some(redacted),
        Filtered::Dropped => None,
    };
    let old_data = replacement
        .old_data
        .as_deref()
        .or(replacement.new.as_ref().map(|new| new.data.as_str()))
        .and_then(filtered);
    let found = candidates
        .iter()
        .find(|(_, data)| Some(data) == old_data.as_ref())
        .or(if candidates.len() == 1 {
            candidates.first()
        } else {
            None
        });
    let Some((id, _)) = found else {
        // Deleted here (or never stored): a local deletion stands.
        return Ok(());
    };
    let new = replacement
        .new
        .as_ref()
        .and_then(|new| filtered(&new.data).map(|data| (new.start, new.end, data)));
    memory.last_events.forget(row_id);
    match new {
        Some((start, end, data)) => {
            conn.prepare_cached(
                "UPDATE events SET starttime = ?2, endtime = ?3, data = ?4 WHERE id = ?1",
            )?
            .execute(params![id, start, end, data])?;
            memory.bounds.note(row_id, end - start);
            memory.stats.added(row_id, start, end);
            counts.updated += 1;
        }
        None => {
            conn.prepare_cached("DELETE FROM events WHERE id = ?1")?
                .execute([id])?;
            counts.deleted += 1;
        }
    }
    memory.stats.removed(
        conn,
        memory.bounds,
        row_id,
        replacement.start,
        replacement.end,
    )?;
    Ok(())
}

/// Counts a change to the bucket's stored history other than an added or
/// extended event, so the next push compares the whole bucket.
pub(crate) fn note_change(conn: &Connection, bucket_id: &str) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO key_value (key, value, last_modified) VALUES (?1, '1', ?2)
         ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1,
             last_modified = ?2",
    )?
    .execute(params![
        format!("{CHANGES_PREFIX}{bucket_id}"),
        Timestamp::now().nanos() / 1_000_000_000
    ])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deleted_time_is_joined_and_covers_what_overlaps_it() {
        let mut deleted = Deleted::default();
        deleted.add(100, 200);
        deleted.add(150, 250);
        deleted.add(400, 400);
        assert_eq!(deleted.ranges, [(100, 250), (400, 401)]);
        assert!(deleted.covers(90, 110));
        assert!(deleted.covers(249, 300));
        assert!(!deleted.covers(250, 300));
        assert!(!deleted.covers(0, 100));
        assert!(deleted.covers(400, 400));
        deleted.before = Some(50);
        assert!(deleted.covers(0, 49));
        assert!(!deleted.covers(0, 50));
    }
}
