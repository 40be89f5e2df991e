//! Per-bucket longest event duration, shared by the writer and the readers.
//!
//! A range read wants events with `endtime >= start`, but the index is
//! ordered by starttime, so without more knowledge it must scan every older
//! event of the bucket to check their ends. Knowing the bucket's longest
//! duration `D`, every event ending at or after `start` starts at or after
//! `start - D`, which bounds the scan from below: its cost follows the
//! events returned, not the bucket's history.
//!
//! Only the writer changes the map: it records every new or extended
//! duration *before* committing, and readers open their snapshot *before*
//! looking the bound up, so a bound read is never smaller than what the
//! snapshot holds. Deletes and rolled-back batches never lower a bound; a
//! bound that is too large only costs scan time. A bucket missing from the
//! map (an old file not scanned yet) is read with an unbounded scan.
//!
//! The map sits behind an `RwLock` held only for one lookup or update,
//! never across SQL.

use std::collections::HashMap;
use std::sync::{PoisonError, RwLock};

/// Longest known event duration (nanoseconds) by bucket row id.
#[derive(Debug, Default)]
pub(crate) struct DurationBounds {
    longest: RwLock<HashMap<i64, i64>>,
}

impl DurationBounds {
    /// The bound of a bucket, `None` while unknown.
    pub(crate) fn get(&self, bucket_row: i64) -> Option<i64> {
        let map = self.longest.read().unwrap_or_else(PoisonError::into_inner);
        map.get(&bucket_row).copied()
    }

    /// Records an event of `duration` written to a bucket whose bound is
    /// known (unknown buckets are scanned later and see it then).
    pub(crate) fn note(&self, bucket_row: i64, duration: i64) {
        let mut map = self.longest.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(longest) = map.get_mut(&bucket_row) {
            *longest = (*longest).max(duration);
        }
    }

    /// Sets the bound of a bucket after scanning it (or creating it).
    pub(crate) fn set(&self, bucket_row: i64, duration: i64) {
        let mut map = self.longest.write().unwrap_or_else(PoisonError::into_inner);
        let longest = map.entry(bucket_row).or_insert(duration);
        *longest = (*longest).max(duration);
    }

    /// Forgets a deleted bucket.
    pub(crate) fn forget(&self, bucket_row: i64) {
        let mut map = self.longest.write().unwrap_or_else(PoisonError::into_inner);
        map.remove(&bucket_row);
    }

    /// Replaces the bound of a bucket created anew (its row id may have
    /// been used by a bucket of a rolled-back batch).
    pub(crate) fn reset(&self, bucket_row: i64) {
        let mut map = self.longest.write().unwrap_or_else(PoisonError::into_inner);
        map.insert(bucket_row, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_only_grow_for_known_buckets() {
        let bounds = DurationBounds::default();
        bounds.note(1, 10);
        assert_eq!(bounds.get(1), None);
        bounds.set(1, 5);
        bounds.note(1, 3);
        assert_eq!(bounds.get(1), Some(5));
        bounds.note(1, 30);
        assert_eq!(bounds.get(1), Some(30));
        bounds.reset(1);
        assert_eq!(bounds.get(1), Some(0));
        bounds.forget(1);
        assert_eq!(bounds.get(1), None);
    }
}
