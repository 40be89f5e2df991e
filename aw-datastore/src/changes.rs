//! What the writer records of changes to stored history that replication
//! must see beyond added and extended events.
//!
//! - **The change counter** of a bucket ([`note_change`]): every delete,
//!   trim, redaction or replacement bumps it, so a push that finds it
//!   different from the one it recorded compares the whole bucket with
//!   its copy instead of only what was added.
//! - **Where each change happened** ([`changed_since`]): the span of the
//!   starts of the events each counted change touched, so forwarding to a
//!   hub compares only those times, not the whole bucket.
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

use crate::key_value::{self, CHANGED_PREFIX, CHANGES_PREFIX, DELETED_PREFIX};
use crate::spans::{self, Ends};
use crate::Result;

/// Most ranges the record of a copy keeps; past it, the oldest are
/// joined (a larger range withholds more, never less).
const MAX_RANGES: usize = 1_000;

/// Most spans the record of a bucket's changes keeps; past it, the two
/// oldest are joined (a larger span is compared more, never less).
const MAX_SPANS: usize = 200;

/// Counts a change to the bucket's stored history other than an added or
/// extended event, so the next push compares the whole bucket, and
/// records where it was: `starts` spans the start times (nanoseconds,
/// both ends included) of every event it deleted or changed, old and new;
/// `None` when they are not known (then the whole bucket is compared).
pub(crate) fn note_change(
    conn: &Connection,
    bucket_id: &str,
    starts: Option<(i64, i64)>,
) -> Result<()> {
    key_value::bump(conn, &format!("{CHANGES_PREFIX}{bucket_id}"))?;
    let counter = change_count(conn, bucket_id)?;
    let key = format!("{CHANGED_PREFIX}{bucket_id}");
    let mut record = key_value::get(conn, &key)?
        .and_then(|text| serde_json::from_str::<ChangedSpans>(&text).ok())
        // A record that does not reach this change's predecessor (none
        // yet, or kept by an older version) starts here.
        .filter(|record| record.through == counter - 1)
        .unwrap_or(ChangedSpans {
            since: counter - 1,
            through: counter - 1,
            spans: Vec::new(),
        });
    let (low, high) = starts.unwrap_or((i64::MIN, i64::MAX));
    record.spans.push((counter, low.min(high), high.max(low)));
    record.through = counter;
    while record.spans.len() > MAX_SPANS {
        let oldest = record.spans.remove(0);
        let next = &mut record.spans[0];
        next.1 = next.1.min(oldest.1);
        next.2 = next.2.max(oldest.2);
    }
    key_value::put(
        conn,
        &key,
        &serde_json::to_string(&record).unwrap_or_default(),
    )?;
    Ok(())
}

/// Where a bucket's history changed after each counted change, from the
/// change after `since` through `through`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct ChangedSpans {
    since: i64,
    through: i64,
    /// The counter after a change (or after the last of joined changes),
    /// and the span of starts, both ends included.
    spans: Vec<(i64, i64, i64)>,
}

/// The spans of start times (both ends included) where the bucket's
/// history changed after its change counter stood at `counter`, sorted
/// and joined; `None` when the record does not reach back that far (then
/// anything may have changed). An empty list: nothing changed since.
pub(crate) fn changed_since(
    conn: &Connection,
    bucket_id: &str,
    counter: i64,
) -> Result<Option<Vec<(i64, i64)>>> {
    let now = change_count(conn, bucket_id)?;
    if counter == now {
        return Ok(Some(Vec::new()));
    }
    let record = key_value::get(conn, &format!("{CHANGED_PREFIX}{bucket_id}"))?
        .and_then(|text| serde_json::from_str::<ChangedSpans>(&text).ok());
    let Some(record) =
        record.filter(|record| record.through == now && record.since <= counter && counter < now)
    else {
        return Ok(None);
    };
    let spans: Vec<(i64, i64)> = record
        .spans
        .iter()
        .filter(|&&(after, _, _)| after > counter)
        .map(|&(_, low, high)| (low, high))
        .collect();
    Ok(Some(spans::join(spans, Ends::Closed)))
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
        let mut joined = spans::join(std::mem::take(&mut self.ranges), Ends::HalfOpen);
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
    fn change_spans_say_where_history_changed_since_a_counter() {
        let conn = Connection::open_in_memory().unwrap();
        crate::schema::migrate(&conn).unwrap();
        let id = "b";
        assert_eq!(changed_since(&conn, id, 0).unwrap(), Some(vec![]));
        note_change(&conn, id, Some((100, 200))).unwrap();
        note_change(&conn, id, Some((500, 400))).unwrap();
        note_change(&conn, id, Some((150, 300))).unwrap();
        assert_eq!(change_count(&conn, id).unwrap(), 3);
        assert_eq!(
            changed_since(&conn, id, 0).unwrap(),
            Some(vec![(100, 300), (400, 500)])
        );
        assert_eq!(changed_since(&conn, id, 2).unwrap(), Some(vec![(150, 300)]));
        assert_eq!(changed_since(&conn, id, 3).unwrap(), Some(vec![]));
        // From the future or a counter the record never saw: unknown.
        assert_eq!(changed_since(&conn, id, 7).unwrap(), None);
        note_change(&conn, id, None).unwrap();
        assert_eq!(
            changed_since(&conn, id, 3).unwrap(),
            Some(vec![(i64::MIN, i64::MAX)])
        );
        for at in 0..MAX_SPANS as i64 + 10 {
            note_change(&conn, id, Some((at * 1000, at * 1000))).unwrap();
        }
        // Joined, never dropped: the oldest counters are still covered.
        let since_two = changed_since(&conn, id, 2).unwrap().unwrap();
        assert_eq!(since_two.first(), Some(&(i64::MIN, i64::MAX)));
        let last = change_count(&conn, id).unwrap();
        assert_eq!(
            changed_since(&conn, id, last - 1).unwrap(),
            Some(vec![(
                (MAX_SPANS as i64 + 9) * 1000,
                (MAX_SPANS as i64 + 9) * 1000
            )])
        );
    }

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
