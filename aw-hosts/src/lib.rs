//! Hosts that make sense: a device's buckets renamed to another host
//! name, two hosts' buckets merged into one, and the old names kept as
//! aliases, so a watcher still sending as the old host writes into the
//! new one's buckets (`docs/API.md` §3.15).
//!
//! A change is planned first ([`plan_rename`], [`plan_merge`]: which
//! bucket becomes or goes into which, refused before anything is written
//! when an id would collide), shown ([`preview`], the dry run) or run
//! ([`apply`]). A rename is one transaction. A merge moves events in
//! chunks, one writer job each, under a journal stored in the file, so
//! heartbeats beside it stay fast and a crash is rolled forward at the
//! next start ([`resume`]); its last step (what is left moved, the old
//! buckets deleted, the alias set, the journal cleared) is one
//! transaction. Copies elsewhere (a folder's, a hub's) follow through
//! replication: a renamed bucket is a new bucket there and the old one
//! a deleted one; merged time is carried as changed history.

mod list;
mod plan;
mod run;

use aw_datastore::DatastoreError;

pub use list::{covered_hosts, hosts, set_alias, unset_alias};
pub use plan::{check_host_name, plan_merge, plan_rename, renamed_id, Operation, Plan, Step};
pub use run::{apply, change, preview, resume, Change, CHUNK};

/// Why a change of hosts was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum HostsError {
    /// No bucket names this host.
    #[error("no bucket has the host '{0}'")]
    UnknownHost(String),
    /// A rename's new name is a host already: that is a merge.
    #[error("'{0}' is already a host: merge into it instead (aw-server hosts merge FROM {0})")]
    HostExists(String),
    /// A host renamed or merged into itself.
    #[error("'{0}' would be renamed or merged into itself")]
    SameHost(String),
    /// A bucket would take the id of another.
    #[error("bucket {bucket} would become {taken}, which is another bucket (of type {kind}); delete or rename it first")]
    Collision {
        /// The bucket that would move.
        bucket: String,
        /// The id it would take.
        taken: String,
        /// The other bucket's type.
        kind: String,
    },
    /// Not a usable host name.
    #[error(
        "'{0}' is not a usable host name: 1 to 255 characters, no '/' and no control characters"
    )]
    InvalidName(String),
    /// An alias would hide a host's own buckets.
    #[error("'{0}' has buckets of its own: merge it instead (aw-server hosts merge {0} HOST), which makes it an alias")]
    HasBuckets(String),
    /// No such alias.
    #[error("'{0}' is no alias")]
    UnknownAlias(String),
    /// Another change is under way (or was interrupted and is resumed at
    /// the next start).
    #[error("a change of hosts is under way: {0}")]
    Busy(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] DatastoreError),
}

/// The crate's result.
pub type Result<T> = std::result::Result<T, HostsError>;
