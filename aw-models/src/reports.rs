//! What the operations on stored history and replication report: the
//! bodies the API answers them with, and what the commands print.

use std::ops::AddAssign;

use serde::{Deserialize, Serialize};

/// The response header in which `POST /api/0/import` says what it did,
/// as the JSON of an [`ImportSummary`] (`docs/API.md` D-19).
pub const IMPORT_SUMMARY_HEADER: &str = "X-Import-Summary";

/// What an import did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportSummary {
    /// Buckets created.
    pub buckets_created: u64,
    /// Events stored.
    pub inserted: u64,
    /// Events skipped because an identical one was already in the bucket.
    pub skipped: u64,
    /// Events the privacy rules dropped.
    pub dropped: u64,
}

impl AddAssign for ImportSummary {
    fn add_assign(&mut self, other: ImportSummary) {
        self.buckets_created += other.buckets_created;
        self.inserted += other.inserted;
        self.skipped += other.skipped;
        self.dropped += other.dropped;
    }
}

/// What a range deletion did, or would do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RangeDeletion {
    /// Events entirely inside the range, deleted.
    pub deleted: u64,
    /// Events crossing an edge of the range, cut to their part outside it
    /// (an event spanning the whole range is split in two and counts once).
    pub trimmed: u64,
}

impl AddAssign for RangeDeletion {
    fn add_assign(&mut self, other: RangeDeletion) {
        self.deleted += other.deleted;
        self.trimmed += other.trimmed;
    }
}

/// What applying the privacy rules to a bucket's history did, or would do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RulesOutcome {
    /// Events looked at.
    pub examined: u64,
    /// Events a `drop` rule matched: deleted.
    pub dropped: u64,
    /// Events whose data a `redact` rule changed.
    pub redacted: u64,
}

impl AddAssign for RulesOutcome {
    fn add_assign(&mut self, other: RulesOutcome) {
        self.examined += other.examined;
        self.dropped += other.dropped;
        self.redacted += other.redacted;
    }
}

/// What the privacy rules did, or would do, to one bucket's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RulesReport {
    /// The bucket.
    pub bucket_id: String,
    /// Its counts.
    #[serde(flatten)]
    pub outcome: RulesOutcome,
}

/// Events a retention run deleted from one bucket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expired {
    /// The bucket.
    pub bucket_id: String,
    /// Events deleted.
    pub deleted: u64,
}

/// What a pull stored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
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

impl AddAssign for PullCounts {
    fn add_assign(&mut self, other: PullCounts) {
        self.inserted += other.inserted;
        self.skipped += other.skipped;
        self.dropped += other.dropped;
        self.updated += other.updated;
        self.deleted += other.deleted;
    }
}
