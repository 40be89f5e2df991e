//! What the writer shows of itself while it serves, for monitoring: how
//! long its commits take, in atomics the writer adds to and any handle
//! reads ([`Datastore::writer_stats`](crate::Datastore::writer_stats)).
//! Recording a commit is an `Instant` read and two atomic additions: the
//! writer takes no lock and allocates nothing for it, and a reader never
//! makes it wait. How many commands wait for the writer is the length of
//! its channel, which the handle reads itself.
//!
//! What the numbers mean to a monitoring system (names, formats) is the
//! server's business, not this module's.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds (inclusive) of the commit-time histogram's buckets, in
/// microseconds; a last bucket takes longer commits. A commit writes the
/// batch's WAL frames without `fsync` (`worker.rs`), so most take tens of
/// microseconds to a few milliseconds; the upper bounds catch a slow disk.
pub const COMMIT_BOUNDS_MICROS: [u64; 12] = [
    25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 100_000, 1_000_000,
];

/// The commit times, kept by the writer (`CommitTimes::record`).
#[derive(Debug, Default)]
pub(crate) struct CommitTimes {
    /// Commits per bucket of [`COMMIT_BOUNDS_MICROS`] (not cumulative),
    /// the last one for those above every bound.
    buckets: [AtomicU64; COMMIT_BOUNDS_MICROS.len() + 1],
    /// Every commit's time added up, in nanoseconds (585 years fit).
    total_nanos: AtomicU64,
}

impl CommitTimes {
    /// Counts one commit (or failed attempt) that took `took`.
    pub(crate) fn record(&self, took: Duration) {
        let nanos = took.as_nanos();
        let index = COMMIT_BOUNDS_MICROS
            .iter()
            .position(|&bound| nanos <= u128::from(bound) * 1_000)
            .unwrap_or(COMMIT_BOUNDS_MICROS.len());
        // Relaxed: each counter is read on its own, and a reading taken
        // while a commit is counted may see it in its bucket but not yet
        // in the total, which the next reading corrects.
        self.buckets[index].fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(nanos).unwrap_or(u64::MAX);
        self.total_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// A reading of the histogram.
    pub(crate) fn read(&self) -> CommitHistogram {
        CommitHistogram {
            counts: std::array::from_fn(|index| self.buckets[index].load(Ordering::Relaxed)),
            total: Duration::from_nanos(self.total_nanos.load(Ordering::Relaxed)),
        }
    }
}

/// How long the writer's commits took since the datastore was opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitHistogram {
    /// Commits per bucket, not cumulative: `counts[i]` took at most
    /// `COMMIT_BOUNDS_MICROS[i]` microseconds and longer than the bound
    /// before; the last, longer than every bound.
    pub counts: [u64; COMMIT_BOUNDS_MICROS.len() + 1],
    /// Their times added up.
    pub total: Duration,
}

impl CommitHistogram {
    /// Commits attempted, failed ones too: the buckets' sum, never a
    /// counter of its own, so it always agrees with them.
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }
}

/// A reading of the writer ([`Datastore::writer_stats`](crate::Datastore::writer_stats)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriterStats {
    /// Commands waiting in the writer's queue now (heartbeats, jobs, ...);
    /// senders wait when it holds 1024.
    pub queued: usize,
    /// The commits so far.
    pub commits: CommitHistogram,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_falls_into_the_bucket_of_its_time() {
        let times = CommitTimes::default();
        for micros in [10, 25, 26, 900, 2_000_000] {
            times.record(Duration::from_micros(micros));
        }
        let read = times.read();
        assert_eq!(read.count(), 5);
        assert_eq!(read.total, Duration::from_micros(2_000_961));
        let mut expected = [0; COMMIT_BOUNDS_MICROS.len() + 1];
        expected[0] = 2; // 10 and 25: at most 25
        expected[1] = 1; // 26
        expected[5] = 1; // 900: at most 1000
        expected[COMMIT_BOUNDS_MICROS.len()] = 1; // 2 s: above every bound
        assert_eq!(read.counts, expected);
    }
}
