//! The heartbeat merge rule (`docs/API.md` §4) and the per-bucket last event.
//!
//! The rule is a pure function; the writer applies it against the bucket's
//! remembered last heartbeat result, or the newest stored event when none is
//! remembered. The memory is keyed by bucket row id, so a bucket deleted
//! and created again (new row id) never sees the old bucket's event (B-4),
//! and it is forgotten on every insert into, event delete in, and deletion
//! of the bucket, and after a failed batch (B-3).
//!
//! A heartbeat a privacy rule drops ends the bucket's merge chain: the next
//! heartbeat is stored as a new event even if it could merge, so no event
//! stretches across the private interval. That mark outlives a failed
//! batch (the dropped heartbeat stored nothing that could be rolled back).

use std::collections::{HashMap, HashSet};

use aw_models::{Duration, Event};

/// The remembered last heartbeat result per bucket row id.
#[derive(Debug, Default)]
pub(crate) struct LastEvents {
    by_bucket: HashMap<i64, Event>,
    /// Buckets whose last heartbeat was dropped by a privacy rule.
    broken: HashSet<i64>,
}

impl LastEvents {
    /// The remembered event of a bucket.
    pub(crate) fn get(&self, bucket_row: i64) -> Option<&Event> {
        self.by_bucket.get(&bucket_row)
    }

    /// Remembers a heartbeat result.
    pub(crate) fn remember(&mut self, bucket_row: i64, event: Event) {
        self.by_bucket.insert(bucket_row, event);
    }

    /// Forgets a bucket's event (inserts, deletes, bucket deletion).
    pub(crate) fn forget(&mut self, bucket_row: i64) {
        self.by_bucket.remove(&bucket_row);
    }

    /// Forgets everything (a batch was rolled back).
    pub(crate) fn clear(&mut self) {
        self.by_bucket.clear();
    }

    /// A heartbeat of the bucket was dropped: the next one must not merge.
    pub(crate) fn break_chain(&mut self, bucket_row: i64) {
        self.broken.insert(bucket_row);
    }

    /// Whether the bucket's chain was broken, mending it: the caller stores
    /// the heartbeat as a new event.
    pub(crate) fn take_broken(&mut self, bucket_row: i64) -> bool {
        self.broken.remove(&bucket_row)
    }
}

/// `heartbeat` merged into `last`, or `None` if it must be stored as a new
/// event.
///
/// Merges iff the data are equal, `last.ts <= heartbeat.ts` and
/// `heartbeat.ts <= last.end + pulsetime`; the merged event keeps `last`'s
/// id, start and data and ends at the later of both ends.
///
/// ```text
/// last      [10s ----- 20s)        pulsetime 5s
/// heartbeat            [24s - 26s)
/// merged    [10s ------------- 26s)
/// ```
pub(crate) fn merge(last: &Event, heartbeat: &Event, pulsetime: Duration) -> Option<Event> {
    let reach = last.end().saturating_add(pulsetime);
    if last.data != heartbeat.data
        || heartbeat.timestamp < last.timestamp
        || heartbeat.timestamp > reach
    {
        return None;
    }
    let mut merged = last.clone();
    merged.set_end(last.end().max(heartbeat.end()));
    Some(merged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use aw_models::Timestamp;
    use serde_json::json;

    fn event(start_secs: i64, duration_secs: i64, data: serde_json::Value) -> Event {
        let serde_json::Value::Object(data) = data else {
            panic!("data must be an object")
        };
        Event {
            id: Some(1),
            timestamp: Timestamp::from_nanos(start_secs * 1_000_000_000),
            duration: Duration::from_secs(duration_secs),
            data,
        }
    }

    #[test]
    fn heartbeat_merges_within_pulsetime_inclusively() {
        let last = event(10, 10, json!({"a": 1}));
        let merged = merge(
            &last,
            &event(25, 0, json!({"a": 1})),
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!(merged.timestamp, last.timestamp);
        assert_eq!(merged.duration, Duration::from_secs(15));
        assert_eq!(merged.id, Some(1));
        assert!(merge(
            &last,
            &event(26, 0, json!({"a": 1})),
            Duration::from_secs(5)
        )
        .is_none());
    }

    #[test]
    fn heartbeat_merge_rules() {
        let last = event(10, 10, json!({"a": 1, "b": 2}));
        let pulse = Duration::from_secs(5);
        // Key order does not matter; number kind does.
        assert!(merge(&last, &event(12, 0, json!({"b": 2, "a": 1})), pulse).is_some());
        assert!(merge(&last, &event(12, 0, json!({"a": 1.0, "b": 2})), pulse).is_none());
        assert!(merge(&last, &event(12, 0, json!({"a": 2, "b": 2})), pulse).is_none());
        // Older heartbeats never merge.
        assert!(merge(&last, &event(9, 5, json!({"a": 1, "b": 2})), pulse).is_none());
        // Inside L never shortens it.
        let inside = merge(&last, &event(12, 1, json!({"a": 1, "b": 2})), pulse).unwrap();
        assert_eq!(inside.duration, Duration::from_secs(10));
        // A positive duration extends to its own end.
        let longer = merge(&last, &event(18, 10, json!({"a": 1, "b": 2})), pulse).unwrap();
        assert_eq!(longer.duration, Duration::from_secs(18));
        // Pulsetime 0 merges only heartbeats starting at or before L.end.
        assert!(merge(
            &last,
            &event(20, 0, json!({"a": 1, "b": 2})),
            Duration::ZERO
        )
        .is_some());
        let after = Event {
            timestamp: Timestamp::from_nanos(20_000_000_001),
            ..event(0, 0, json!({"a": 1, "b": 2}))
        };
        assert!(merge(&last, &after, Duration::ZERO).is_none());
    }
}
