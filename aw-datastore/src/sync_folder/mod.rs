//! Sync through a shared folder, compatible with aw-sync: this device
//! pushes its own buckets into its copy in the folder, and pulls the
//! other devices' copies into buckets of its own. Moving the folder's
//! files between devices is a folder-sync tool's job (Syncthing, any
//! cloud drive); each device writes only its own file, so they never
//! conflict.
//!
//! `layout.rs` finds the files (aw-sync's two layouts), `files.rs` opens
//! them (ours read-write, the others read-only and untouched), `push.rs`
//! and `pull.rs` run the passes on the caller's thread, and `store.rs` is
//! the writer's part: pulled events are stored through the import path,
//! so the privacy rules apply to them, and history changes are counted
//! for the push.
//!
//! Neither pass holds the writer for more than a chunk, and a pass that is
//! killed is finished by the next: each chunk is stored with its progress.
//! This module knows nothing of schedules, configuration or HTTP (the
//! server's `sync.rs` does).

mod files;
mod layout;
mod pull;
mod push;
mod store;

use std::path::PathBuf;

pub use layout::{find_sources, Skipped, Source, SyncFolder, FILE_NAME};
pub use store::PullCounts;
pub(crate) use store::{note_change, note_deleted, pull_chunk, Replacement};

use crate::{Datastore, DatastoreError, Result};

/// What joins a bucket id to the device it was pulled from.
pub const SYNCED_FROM: &str = "-synced-from-";
/// The bucket data key naming the host a bucket comes from.
pub const ORIGIN_KEY: &str = "$aw.sync.origin";

/// Whether a bucket is this device's own (pushed), not a pulled copy.
pub fn is_own_bucket(bucket_id: &str) -> bool {
    !bucket_id.contains(SYNCED_FROM)
}

/// Which buckets and events a pass takes, as aw-sync's `--buckets` and
/// `--start-date` choose them. The default takes everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncFilter {
    /// Bucket ids: the own buckets a push writes, the other devices'
    /// buckets a pull reads (by their id in the device's file, as aw-sync
    /// matches them, or by the id of their copy here). `None`, an empty
    /// list or `*` among them: every bucket.
    pub buckets: Option<Vec<String>>,
    /// Events that end before this are not copied, and a push leaves the
    /// copy's events before it as they are.
    pub start: Option<aw_models::Timestamp>,
}

impl SyncFilter {
    /// Whether a bucket of this id is taken.
    pub fn takes_bucket(&self, bucket_id: &str) -> bool {
        match &self.buckets {
            None => true,
            Some(ids) => ids.is_empty() || ids.iter().any(|id| id == "*" || id == bucket_id),
        }
    }

    /// Whether an event ending at `end` (nanoseconds) is taken.
    pub(crate) fn takes_end(&self, end: i64) -> bool {
        self.start.is_none_or(|start| end >= start.nanos())
    }
}

/// Where a pass is, for a progress bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncProgress {
    /// What it does: `Pushing <bucket>`, `Pulling <bucket>`.
    pub stage: String,
    /// Events done in this stage.
    pub done: u64,
    /// Events the stage has, when known.
    pub total: Option<u64>,
}

/// What a push did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PushReport {
    /// The copy written.
    pub file: PathBuf,
    /// Own buckets pushed.
    pub buckets: u64,
    /// Events added to or changed in the copy.
    pub written: u64,
    /// Events deleted from the copy (and logged for the pullers).
    pub deleted: u64,
}

/// What a pull did, per file read.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PullReport {
    /// The files read.
    pub sources: Vec<SourceReport>,
    /// Files and folders not read, and why: unreadable, incomplete,
    /// locked, conflict copies, devices claimed by more than one folder.
    /// A skipped file is tried again on the next pass.
    pub skipped: Vec<Skipped>,
}

/// What was pulled from one file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SourceReport {
    /// The file, inside the folder.
    pub file: String,
    /// The device whose copy it is.
    pub device: String,
    /// The buckets of this database it went into.
    pub buckets: Vec<String>,
    /// What was stored.
    #[serde(flatten)]
    pub counts: PullCounts,
}

impl Datastore {
    /// Pushes this device's own buckets (not pulled copies) into its copy
    /// in the folder, `<folder>/<device id>/test.db`, writing only what
    /// changed since the last push (see `push.rs`).
    pub fn push_to_folder(
        &self,
        folder: &SyncFolder,
        filter: &SyncFilter,
        progress: &mut dyn FnMut(&SyncProgress),
    ) -> Result<PushReport> {
        let Some(local) = &self.local else {
            return Err(in_memory());
        };
        push::push(self, local, folder, filter, progress)
    }

    /// Pulls every other device's file in the folder into this database
    /// (see `pull.rs`); files that cannot be read are skipped and
    /// reported.
    pub fn pull_from_folder(
        &self,
        folder: &SyncFolder,
        filter: &SyncFilter,
        progress: &mut dyn FnMut(&SyncProgress),
    ) -> Result<PullReport> {
        let Some(local) = &self.local else {
            return Err(in_memory());
        };
        pull::pull(self, local, folder, filter, progress)
    }

    /// Whether the database file is encrypted at rest (opened with a key,
    /// `key.rs`). Sync writes a plain SQLite copy of the own buckets into
    /// the folder, so a caller refuses to push from an encrypted database
    /// unless told that a plaintext copy is intended.
    pub fn is_encrypted(&self) -> bool {
        self.local.as_ref().is_some_and(|local| local.encrypted())
    }
}

fn in_memory() -> DatastoreError {
    DatastoreError::InvalidInput("sync needs a database file, not an in-memory one".to_string())
}
