//! What the writer records of changes to stored history that replication
//! must see beyond added and extended events.
//!
//! - **The change counter** of a bucket ([`note_change`]): every delete,
//!   trim, redaction or replacement bumps it, so a push that finds it
//!   different from the one it recorded compares the whole bucket with
//!   its copy instead of only what was added.
//! - **The deleted time** of a pulled copy ([`note_deleted`]): what is
//!   deleted here from a copy of another device's bucket (a range delete,
//!   retention, a single event) is recorded, and pulled events in it are
//!   not stored again, so a deletion here stands even when the origin's
//!   file is rebuilt and read from the start.
//!
//! Both live in `key_value` (`key_value.rs`), outside the settings, so
//! aw-server-rust ignores them; both are written in the transaction of the
//! change they record.

use aw_models::is_own_bucket;
use rusqlite::Connection;

use crate::key_value::{self, CHANGES_PREFIX, DELETED_PREFIX};
use crate::Result;

/// Most ranges the record of a copy keeps; past it, the oldest are
/// joined (a larger range withholds more, never less).
const MAX_RANGES: usize = 1_000;

/// Counts a change to the bucket's stored history other than an added or
/// extended event, so the next push compares the whole bucket.
pub(crate) fn note_change(conn: &Connection, bucket_id: &str) -> Result<()> {
    key_value::bump(conn, &format!("{CHANGES_PREFIX}{bucket_id}"))?;
    Ok(())
}

/// The bucket's change counter (0 when never bumped).
pub(crate) fn change_count(conn: &Connection, bucket_id: &str) -> Result<i64> {
    let text = key_value::get(conn, &format!("{CHANGES_PREFIX}{bucket_id}"))?;
    Ok(text.and_then(|text| text.parse().ok()).unwrap_or(0))
}

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
    pub(crate) fn covers(&self, start: i64, end: i64) -> bool {
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

/// The time deleted here from the pulled copy `bucket_id`.
pub(crate) fn deleted(conn: &Connection, bucket_id: &str) -> Result<Deleted> {
    let text = key_value::get(conn, &format!("{DELETED_PREFIX}{bucket_id}"))?;
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
    let mut record = deleted(conn, bucket_id)?;
    match start {
        Some(start) => record.add(start, end),
        None => record.before = Some(record.before.map_or(end, |before| before.max(end))),
    }
    key_value::put(
        conn,
        &format!("{DELETED_PREFIX}{bucket_id}"),
        &serde_json::to_string(&record).unwrap_or_default(),
    )?;
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
