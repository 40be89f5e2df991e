//! The server's background jobs: snapshots ([`backup`]), deleting old
//! events ([`retention`]), sync through a shared folder ([`sync`]) and
//! forwarding to a hub ([`hub`]). Each is a job on `aw_threads::Schedule`
//! (its thread, lowered priority, wait and stop when the datastore
//! closes) and keeps its settings, the lock that keeps its runs from
//! overlapping and the status its endpoint answers. The commands run the
//! same passes on the file (`backup`, `sync`).
//!
//! The work itself is other crates': the snapshot and the expiry are
//! `aw-datastore`'s, sync and forwarding `aw-folder-sync`'s. This crate
//! must not know HTTP serving or the config file: the server parses its
//! config into these settings and answers the statuses.

pub mod backup;
pub mod hub;
pub mod retention;
mod schedule;
pub mod sync;

use std::sync::Arc;

use aw_datastore::Datastore;

/// Every job of one server, by the state each keeps; [`Jobs::start`]
/// starts those configured.
#[derive(Debug)]
pub struct Jobs {
    /// Snapshots: `[backup]`, the status, one at a time.
    pub backups: Arc<backup::Backups>,
    /// What retention's last run did.
    pub retention: Arc<retention::Retention>,
    /// Folder sync: settings, status, and the lock passes take.
    pub sync: Arc<sync::SyncState>,
    /// Forwarding to a hub: settings, status, and the lock passes take.
    pub hub: Arc<hub::HubState>,
}

impl Jobs {
    /// Starts the schedule of each configured job, until `datastore`
    /// closes.
    pub fn start(&self, datastore: &Datastore) {
        retention::start(datastore, &self.retention);
        backup::start(datastore, &self.backups);
        sync::start(datastore, &self.sync);
        hub::start(datastore, &self.hub);
    }
}
