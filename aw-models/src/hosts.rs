//! Hosts as the API shows them, and the requests and reports of
//! renaming, merging and aliasing them (`docs/API.md` §3.15).

use serde::{Deserialize, Serialize};

use crate::Timestamp;

/// A host: the buckets that name it, their data's time and the devices
/// that made them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostInfo {
    /// The host name, as buckets give it.
    pub host: String,
    /// Its buckets' ids, sorted.
    pub buckets: Vec<String>,
    /// Events in them.
    pub events: u64,
    /// The earliest event's start.
    pub first: Option<Timestamp>,
    /// The latest event's end.
    pub last: Option<Timestamp>,
    /// The devices whose server made its buckets (`data.device_id`),
    /// where known.
    pub device_ids: Vec<String>,
    /// Other names that reach its buckets.
    pub aliases: Vec<String>,
}

/// `POST /api/0/hosts/{host}/rename`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RenameRequest {
    /// The new name.
    pub to: String,
    /// Show the plan and change nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// `POST /api/0/hosts/{host}/merge`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MergeRequest {
    /// The host that receives the buckets.
    pub into: String,
    /// Show the plan and change nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// `PUT /api/0/hosts/{alias}/alias`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AliasRequest {
    /// The host the alias names.
    pub host: String,
}

/// What a rename or merge does to one bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BucketAction {
    /// Given the new id and host; its events as they are.
    Rename,
    /// Its events moved into `to`, then deleted.
    Merge,
}

/// One bucket of a plan, with what it holds and what moving it does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedBucket {
    /// The bucket's id now.
    pub from: String,
    /// The bucket it becomes (`rename`) or goes into (`merge`).
    pub to: String,
    /// Which.
    pub action: BucketAction,
    /// Its events.
    pub events: u64,
    /// Events moved whole.
    pub moved: u64,
    /// Events moved with part of their time cut (`to` has events then).
    pub cut: u64,
    /// Events left out: `to` has events for all of their time.
    pub dropped: u64,
    /// Seconds of its time `to` already has, kept once.
    pub overlap_seconds: f64,
}

/// The answer of a rename or merge: the plan, and whether it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostReport {
    /// `rename` or `merge`.
    pub operation: String,
    /// The host renamed or merged away.
    pub from: String,
    /// The new name, or the host merged into.
    pub to: String,
    /// Every bucket of `from`.
    pub buckets: Vec<PlannedBucket>,
    /// True when nothing was changed.
    pub dry_run: bool,
    /// `from` is an alias of `to` afterwards.
    pub alias: String,
    /// The snapshot written before the change, if a backup folder was
    /// writable.
    pub snapshot: Option<String>,
    /// Why no snapshot was written (no backup folder, or not writable):
    /// the change went on without one.
    pub snapshot_skipped: Option<String>,
    /// Seconds the change took.
    pub seconds: f64,
}
