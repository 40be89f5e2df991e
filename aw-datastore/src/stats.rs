//! Per-bucket event count, earliest start and latest end, kept by the
//! writer and read without SQL.
//!
//! Counting a bucket or finding its latest end walks its whole index, which
//! grows with history (`benches/runs/2026-11-21-bucket-facts.md`); the
//! writer instead keeps these facts
//! for every bucket it knows and updates them with each write: an insert or
//! import adds an event, a heartbeat merge moves an end, a replace by id or
//! a delete removes one (looking the earliest start or latest end up again
//! on the index when the removed event held it). Readers take the facts
//! from an immutable map behind an [`ArcSwap`], which the writer publishes
//! after each commit and before answering the writers, so a read sent after
//! an acknowledgement sees that write, and a read never sees a write that
//! was rolled back. A bucket missing from the map, and every count over a
//! time range, is read with SQL.
//!
//! The writer works on its own copy: changes of a command that fails are
//! undone from a log, and a failed batch reverts to the published map.
//!
//! # Persistence
//!
//! Rebuilding the facts at open would cost the scan they avoid, so a clean
//! close stores them (with each bucket's longest duration, `bounds.rs`) in
//! `key_value` under [`STATS_KEY`], outside the `settings.` prefix, in the
//! final transaction, and after a checkpoint that empties the WAL writes a
//! fingerprint of the database file into the lock file (`lock.rs`). Open
//! trusts the stored facts only if the fingerprint (size, modification
//! time, inode, an empty WAL) still matches, erasing it at once, and the
//! facts name exactly the file's buckets and its last event id; so a
//! crash, a run that could not store them, or another program writing the
//! file in between (which changes the file or leaves a WAL) means the facts
//! are learnt again: the writer counts each bucket once its duration scan
//! is done, and until then reads use SQL.

use std::collections::HashMap;
use std::sync::Arc;

use arc_swap::ArcSwap;
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::{json, Value};

use crate::bounds::DurationBounds;
use crate::key_value::{self, STATS_KEY};

/// What readers may know of a bucket without SQL.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct BucketStats {
    /// Number of events.
    pub(crate) count: u64,
    /// Earliest starttime, `None` when empty.
    pub(crate) first_start: Option<i64>,
    /// Latest endtime, `None` when empty.
    pub(crate) last_end: Option<i64>,
}

/// The published facts, shared by the writer and the readers.
#[derive(Debug, Default)]
pub(crate) struct SharedStats {
    known: ArcSwap<HashMap<i64, BucketStats>>,
}

impl SharedStats {
    /// The facts of a bucket as of the last commit, `None` while unknown.
    pub(crate) fn get(&self, bucket_row: i64) -> Option<BucketStats> {
        self.known.load().get(&bucket_row).copied()
    }
}

/// The writer's working copy: the published facts plus the open batch.
#[derive(Debug)]
pub(crate) struct StatsWriter {
    shared: Arc<SharedStats>,
    pending: HashMap<i64, BucketStats>,
    /// The value each bucket the current command changed had before it
    /// (a command touches one bucket, so this stays tiny even for an
    /// import of a year).
    undo: Vec<(i64, Option<BucketStats>)>,
    changed: bool,
}

impl StatsWriter {
    /// Starts from `initial` and publishes it.
    pub(crate) fn new(shared: Arc<SharedStats>, initial: HashMap<i64, BucketStats>) -> StatsWriter {
        shared.known.store(Arc::new(initial.clone()));
        StatsWriter {
            shared,
            pending: initial,
            undo: Vec::new(),
            changed: false,
        }
    }

    /// The published facts, for reads served by the writer.
    pub(crate) fn shared(&self) -> &SharedStats {
        &self.shared
    }

    /// The facts of a bucket including the open batch.
    pub(crate) fn get(&self, bucket_row: i64) -> Option<BucketStats> {
        self.pending.get(&bucket_row).copied()
    }

    /// Every known bucket, including the open batch.
    pub(crate) fn all(&self) -> &HashMap<i64, BucketStats> {
        &self.pending
    }

    fn replace(&mut self, bucket_row: i64, value: Option<BucketStats>) {
        let old = match value {
            Some(value) => self.pending.insert(bucket_row, value),
            None => self.pending.remove(&bucket_row),
        };
        if !self.undo.iter().any(|(row, _)| *row == bucket_row) {
            self.undo.push((bucket_row, old));
        }
        self.changed = true;
    }

    /// A command starts: its changes can be undone until the next one.
    pub(crate) fn begin_command(&mut self) {
        self.undo.clear();
    }

    /// Undoes the changes of the current command (its savepoint was rolled
    /// back).
    pub(crate) fn undo_command(&mut self) {
        for (bucket_row, old) in self.undo.drain(..) {
            match old {
                Some(old) => self.pending.insert(bucket_row, old),
                None => self.pending.remove(&bucket_row),
            };
        }
    }

    /// The batch committed: readers see its facts from now on.
    pub(crate) fn publish(&mut self) {
        self.undo.clear();
        if self.changed {
            self.shared.known.store(Arc::new(self.pending.clone()));
            self.changed = false;
        }
    }

    /// The batch was rolled back: back to what readers see.
    pub(crate) fn discard(&mut self) {
        self.undo.clear();
        self.pending = HashMap::clone(&self.shared.known.load());
        self.changed = false;
    }

    /// A bucket was created: known and empty.
    pub(crate) fn created(&mut self, bucket_row: i64) {
        self.replace(bucket_row, Some(BucketStats::default()));
    }

    /// A bucket was deleted.
    pub(crate) fn forget(&mut self, bucket_row: i64) {
        if self.pending.contains_key(&bucket_row) {
            self.replace(bucket_row, None);
        }
    }

    /// Facts learnt by counting a bucket outside any batch; published at
    /// once since they describe committed rows.
    pub(crate) fn learned(&mut self, bucket_row: i64, stats: BucketStats) {
        self.replace(bucket_row, Some(stats));
        self.publish();
    }

    /// An event `[start, end]` was added to a bucket.
    pub(crate) fn added(&mut self, bucket_row: i64, start: i64, end: i64) {
        let Some(mut stats) = self.get(bucket_row) else {
            return;
        };
        stats.count += 1;
        stats.first_start = Some(stats.first_start.map_or(start, |first| first.min(start)));
        stats.last_end = Some(stats.last_end.map_or(end, |last| last.max(end)));
        self.replace(bucket_row, Some(stats));
    }

    /// An event of a bucket now ends at `end` (a heartbeat merge, which
    /// never shortens an event).
    pub(crate) fn extended(&mut self, bucket_row: i64, end: i64) {
        let Some(mut stats) = self.get(bucket_row) else {
            return;
        };
        if stats.last_end.is_some_and(|last| last >= end) {
            return;
        }
        stats.last_end = Some(end);
        self.replace(bucket_row, Some(stats));
    }

    /// The event `[start, end]` was removed from a bucket (deleted, or
    /// replaced: call this after the SQL, so the lookups see the result).
    pub(crate) fn removed(
        &mut self,
        conn: &Connection,
        bounds: &DurationBounds,
        bucket_row: i64,
        start: i64,
        end: i64,
    ) -> rusqlite::Result<()> {
        let Some(mut stats) = self.get(bucket_row) else {
            return Ok(());
        };
        stats.count = stats.count.saturating_sub(1);
        if stats.first_start == Some(start) {
            stats.first_start = first_start(conn, bucket_row)?;
        }
        if stats.last_end == Some(end) {
            stats.last_end = last_end(conn, bounds, bucket_row)?;
        }
        self.replace(bucket_row, Some(stats));
        Ok(())
    }
}

/// The earliest starttime of a bucket: the first entry of its index.
pub(crate) fn first_start(conn: &Connection, bucket_row: i64) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached(
        "SELECT starttime FROM events INDEXED BY events_bucketrow_starttime_endtime_index
         WHERE bucketrow = ?1 ORDER BY starttime ASC LIMIT 1",
    )?
    .query_row([bucket_row], |row| row.get(0))
    .optional()
}

/// The latest endtime of a bucket.
///
/// It is at least the end of the newest-starting event `E`, and any event
/// ending later starts after `E.end - longest`, so only that tail of the
/// index is scanned when the bound is known.
pub(crate) fn last_end(
    conn: &Connection,
    bounds: &DurationBounds,
    bucket_row: i64,
) -> rusqlite::Result<Option<i64>> {
    let newest: Option<i64> = conn
        .prepare_cached(
            "SELECT endtime FROM events INDEXED BY events_bucketrow_starttime_endtime_index
             WHERE bucketrow = ?1 ORDER BY starttime DESC LIMIT 1",
        )?
        .query_row([bucket_row], |row| row.get(0))
        .optional()?;
    let Some(newest_end) = newest else {
        return Ok(None);
    };
    let low = bounds
        .get(bucket_row)
        .map_or(i64::MIN, |longest| newest_end.saturating_sub(longest));
    let end: Option<i64> = conn
        .prepare_cached(
            "SELECT max(endtime) FROM events INDEXED BY events_bucketrow_starttime_endtime_index
             WHERE bucketrow = ?1 AND starttime >= ?2",
        )?
        .query_row(params![bucket_row, low], |row| row.get(0))?;
    Ok(Some(end.map_or(newest_end, |end| end.max(newest_end))))
}

/// Counts a bucket with SQL: its whole index for the count (time in
/// proportion to its history), two short lookups for the edges.
pub(crate) fn count_bucket(
    conn: &Connection,
    bounds: &DurationBounds,
    bucket_row: i64,
) -> rusqlite::Result<BucketStats> {
    let count: i64 = conn
        .prepare_cached(
            "SELECT count(*) FROM events INDEXED BY events_bucketrow_starttime_endtime_index
             WHERE bucketrow = ?1",
        )?
        .query_row([bucket_row], |row| row.get(0))?;
    Ok(BucketStats {
        count: u64::try_from(count).unwrap_or(0),
        first_start: first_start(conn, bucket_row)?,
        last_end: last_end(conn, bounds, bucket_row)?,
    })
}

/// What a stored copy gives back: the facts and longest durations of
/// every bucket.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Stored {
    pub(crate) stats: HashMap<i64, BucketStats>,
    pub(crate) longest: HashMap<i64, i64>,
}

/// The last id handed to an event, which any insert of a program using
/// AUTOINCREMENT moves.
fn events_sequence(conn: &Connection) -> rusqlite::Result<i64> {
    Ok(conn
        .prepare_cached("SELECT seq FROM sqlite_sequence WHERE name = 'events'")?
        .query_row([], |row| row.get::<_, i64>(0))
        .optional()?
        .unwrap_or(0))
}

/// Stores the facts of every bucket, in the close's final transaction.
/// Stores nothing (and says so) unless every bucket's facts and bound are
/// known.
pub(crate) fn store(
    conn: &Connection,
    stats: &HashMap<i64, BucketStats>,
    bounds: &DurationBounds,
) -> rusqlite::Result<bool> {
    let rows = bucket_rows(conn)?;
    let mut buckets = Vec::with_capacity(rows.len());
    for row in rows {
        let (Some(facts), Some(longest)) = (stats.get(&row), bounds.get(row)) else {
            return Ok(false);
        };
        buckets.push(json!([
            row,
            facts.count,
            facts.first_start,
            facts.last_end,
            longest
        ]));
    }
    let text = json!({
        "version": 1,
        "events_seq": events_sequence(conn)?,
        "buckets": buckets,
    })
    .to_string();
    key_value::put(conn, STATS_KEY, &text)?;
    Ok(true)
}

/// Reads the stored facts, `None` unless they name exactly the file's
/// buckets and its last event id. Call only when the fingerprint matched.
pub(crate) fn load(conn: &Connection) -> rusqlite::Result<Option<Stored>> {
    let Some(text) = key_value::get(conn, STATS_KEY)? else {
        return Ok(None);
    };
    let Some(stored) = parse(&text, events_sequence(conn)?) else {
        log::warn!("Ignoring unreadable stored bucket statistics");
        return Ok(None);
    };
    let mut rows = bucket_rows(conn)?;
    rows.sort_unstable();
    let mut stored_rows: Vec<i64> = stored.stats.keys().copied().collect();
    stored_rows.sort_unstable();
    Ok((rows == stored_rows).then_some(stored))
}

fn parse(text: &str, events_seq: i64) -> Option<Stored> {
    let value: Value = serde_json::from_str(text).ok()?;
    if value.get("version")?.as_i64()? != 1 || value.get("events_seq")?.as_i64()? != events_seq {
        return None;
    }
    let mut stored = Stored::default();
    for bucket in value.get("buckets")?.as_array()? {
        let [row, count, first, last, longest] = bucket.as_array()?.as_slice() else {
            return None;
        };
        let row = row.as_i64()?;
        let edge = |value: &Value| match value {
            Value::Null => Some(None),
            other => other.as_i64().map(Some),
        };
        let stats = BucketStats {
            count: count.as_u64()?,
            first_start: edge(first)?,
            last_end: edge(last)?,
        };
        if (stats.count == 0) != stats.first_start.is_none()
            || stats.first_start.is_none() != stats.last_end.is_none()
        {
            return None;
        }
        stored.stats.insert(row, stats);
        stored.longest.insert(row, longest.as_i64()?);
    }
    Some(stored)
}

fn bucket_rows(conn: &Connection) -> rusqlite::Result<Vec<i64>> {
    conn.prepare_cached("SELECT id FROM buckets")?
        .query_map([], |row| row.get(0))?
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_command_and_a_failed_batch_leave_no_trace() {
        let shared = Arc::new(SharedStats::default());
        let mut writer = StatsWriter::new(Arc::clone(&shared), HashMap::new());
        writer.begin_command();
        writer.created(1);
        writer.added(1, 10, 20);
        writer.publish();
        assert_eq!(shared.get(1).map(|s| s.count), Some(1));
        writer.begin_command();
        writer.added(1, 5, 30);
        writer.undo_command();
        assert_eq!(writer.get(1), shared.get(1));
        writer.begin_command();
        writer.added(1, 5, 30);
        writer.extended(1, 40);
        writer.begin_command();
        writer.forget(1);
        assert_eq!(shared.get(1).map(|s| s.count), Some(1));
        writer.discard();
        assert_eq!(
            writer.get(1),
            Some(BucketStats {
                count: 1,
                first_start: Some(10),
                last_end: Some(20)
            })
        );
    }

    #[test]
    fn stored_facts_round_trip_and_are_refused_when_the_file_moved_on() {
        let conn = Connection::open_in_memory().unwrap();
        crate::schema::migrate(&conn).unwrap();
        conn.execute_batch(
            "INSERT INTO buckets (id, name, type, client, hostname, created) VALUES (1, 'a', 't', 'c', 'h', '');
             INSERT INTO buckets (id, name, type, client, hostname, created) VALUES (2, 'b', 't', 'c', 'h', '');
             INSERT INTO events (bucketrow, starttime, endtime, data) VALUES (1, 5, 9, '{}');",
        )
        .unwrap();
        let bounds = DurationBounds::default();
        bounds.reset(1);
        bounds.note(1, 4);
        let mut stats = HashMap::new();
        stats.insert(1, count_bucket(&conn, &bounds, 1).unwrap());
        // Bucket 2 is unknown: nothing is stored.
        assert!(!store(&conn, &stats, &bounds).unwrap());
        assert_eq!(load(&conn).unwrap(), None);
        bounds.reset(2);
        stats.insert(2, count_bucket(&conn, &bounds, 2).unwrap());
        assert!(store(&conn, &stats, &bounds).unwrap());
        let loaded = load(&conn).unwrap().unwrap();
        assert_eq!(loaded.stats, stats);
        assert_eq!(loaded.longest, HashMap::from([(1, 4), (2, 0)]));
        assert_eq!(stats[&1].count, 1);
        assert_eq!(stats[&2], BucketStats::default());
        // Another insert moves the sequence; another bucket changes the set.
        conn.execute_batch(
            "INSERT INTO events (bucketrow, starttime, endtime, data) VALUES (2, 1, 1, '{}')",
        )
        .unwrap();
        assert_eq!(load(&conn).unwrap(), None);
        assert!(store(&conn, &stats, &bounds).unwrap());
        assert!(load(&conn).unwrap().is_some());
        conn.execute_batch(
            "DELETE FROM events WHERE bucketrow = 2; DELETE FROM buckets WHERE id = 2",
        )
        .unwrap();
        assert_eq!(load(&conn).unwrap(), None);
    }
}
