//! Sync through a shared folder, compatible with aw-sync: this device
//! pushes its own buckets into its copy in the folder, and pulls the
//! other devices' copies into buckets of its own. Moving the folder's
//! files between devices is a folder-sync tool's job (Syncthing, any
//! cloud drive); each device writes only its own file, so they never
//! conflict.
//!
//! `layout.rs` finds the files (aw-sync's two layouts), `files.rs` opens
//! them (ours read-write, the others read-only and untouched), and
//! `push.rs` and `pull.rs` run the passes on the caller's thread.
//!
//! This crate reads and writes this device's database only through the
//! datastore's replication port ([`Replica`]): events by id after a
//! cursor and the newest events going out, the change counter that says
//! "compare the whole bucket", and pulled chunks coming in, each stored
//! by the writer with the pass's progress in one transaction (through the
//! import path, so the privacy rules apply). It opens no connection to
//! that database; the connections it opens are to the folder's files,
//! which have aw-server-rust's schema (`aw_datastore::format`).
//!
//! `forward.rs` is the second transport of the same port: this device's
//! own buckets forwarded to a hub, through a [`forward::HubLink`] the
//! caller provides (the server's speaks HTTP), and the hub's side of it.
//!
//! Neither pass holds the writer for more than a chunk, and a pass that is
//! killed is finished by the next. This crate knows nothing of schedules,
//! configuration or HTTP (the server's `sync.rs` does).

mod files;
pub mod forward;
mod layout;
mod pull;
mod push;

use aw_datastore::{DatastoreError, Replica};

pub use aw_models::{is_own_bucket, PullCounts, ORIGIN_KEY, SYNCED_FROM};
pub use aw_models::{PullReport, PushReport, Skipped, SourceReport};
pub use layout::{find_sources, Source, SyncFolder, FILE_NAME};

/// Why a pass stopped, or a file of the folder was not read.
#[derive(Debug, thiserror::Error)]
pub enum FolderSyncError {
    /// This device's database failed: the pass stops.
    #[error(transparent)]
    Store(#[from] DatastoreError),
    /// A file of the folder cannot be used, and why (empty, incomplete,
    /// being written, locked, another device's, another schema).
    #[error("{0}")]
    Refused(String),
    /// SQLite failed on a file of the folder.
    #[error("Storage failure: {0}")]
    File(#[from] rusqlite::Error),
    /// The hub refused or failed a request (`status`: its HTTP status,
    /// `None` when it was not reached).
    #[error("{message}")]
    Hub {
        /// The HTTP status, if the hub answered.
        status: Option<u16>,
        /// What went wrong, for the status and the log.
        message: String,
    },
    /// The hub refused one bucket, not the token: its host is not one of
    /// the token's. The pass skips it and goes on.
    #[error("{message}")]
    HubRefusedBucket {
        /// The hub's message.
        message: String,
    },
    /// The folder could not be read or written.
    #[error("System call failed: {0}")]
    Io(#[from] std::io::Error),
}

/// Result of this crate's calls.
pub type Result<T> = std::result::Result<T, FolderSyncError>;

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
    pub fn takes_end(&self, end: i64) -> bool {
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

/// Pushes this device's own buckets (not pulled copies) into its copy
/// in the folder, `<folder>/<device id>/test.db`, writing only what
/// changed since the last push (see `push.rs`).
pub fn push(
    store: &dyn Replica,
    folder: &SyncFolder,
    filter: &SyncFilter,
    progress: &mut dyn FnMut(&SyncProgress),
) -> Result<PushReport> {
    push::push(store, folder, filter, progress)
}

/// What this device's copy in the folder says was already issued here
/// (its highest event id, the change counters it recorded), so a restored
/// older database goes on above them; `None` when there is no copy yet.
pub fn issued_marks(folder: &SyncFolder) -> Result<Option<aw_datastore::restore::IssuedMarks>> {
    push::issued_marks(folder)
}

/// Pulls every other device's file in the folder into this database (see
/// `pull.rs`); files that cannot be read are skipped and reported.
pub fn pull(
    store: &dyn Replica,
    folder: &SyncFolder,
    filter: &SyncFilter,
    progress: &mut dyn FnMut(&SyncProgress),
) -> Result<PullReport> {
    pull::pull(store, folder, filter, progress)
}
