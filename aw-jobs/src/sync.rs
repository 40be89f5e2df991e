//! Sync through a shared folder: one pass, shared by the
//! `sync` command, `POST /api/0/sync/run` and the `[sync]` schedule; the
//! schedule itself; and the status `GET /api/0/sync/status` answers.
//!
//! The work is the `aw-folder-sync` crate's (`aw_folder_sync::pull`,
//! `aw_folder_sync::push`): this module decides when a pass runs,
//! refuses a plaintext copy of an encrypted database unless configured,
//! keeps passes from overlapping, and logs and records what each did.

use std::path::{Path, PathBuf};

use std::sync::{Arc, Mutex};
use std::time::{Duration as StdDuration, Instant};

use aw_datastore::{Datastore, DatastoreError};
use aw_folder_sync::{FolderSyncError, SourceReport, SyncFilter, SyncFolder, SyncProgress};
use aw_models::{PassReport, SyncMode, SyncStatus, Timestamp};

use aw_threads::Next;

use crate::schedule::{self, in_a_while, lock};

/// The `[sync]` section as resolved (`config.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncSettings {
    /// Whether the schedule runs (`enabled = true`); passes asked for
    /// (`POST /api/0/sync/run`, the `sync` command) run either way.
    pub enabled: bool,
    /// The shared folder.
    pub folder: PathBuf,
    /// Time between the schedule's passes.
    pub interval: StdDuration,
    /// Which way the schedule's passes go.
    pub mode: SyncMode,
    /// The buckets passes take unless a pass names its own (`None`: all).
    pub buckets: Option<Vec<String>>,
    /// Whether a plaintext copy of an encrypted database is intended.
    pub allow_plaintext_copy: bool,
}

/// Why a pass did not run or stopped.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The folder is unusable (missing, relative, not a folder).
    #[error("{0}")]
    Folder(String),
    /// Refused by the configuration: no `[sync]` section (a pass through
    /// the API), or a plaintext copy of an encrypted database.
    #[error("{0}")]
    Refused(String),
    /// The pass failed: this database, or writing the copy.
    #[error(transparent)]
    Pass(#[from] FolderSyncError),
}

/// Checks that `folder` is an absolute path of an existing folder.
pub fn check_folder(folder: &Path) -> Result<(), SyncError> {
    if !folder.is_absolute() {
        return Err(SyncError::Folder(format!(
            "the sync folder must be an absolute path, not '{}'",
            folder.display()
        )));
    }
    if !folder.is_dir() {
        return Err(SyncError::Folder(format!(
            "the sync folder {} does not exist: create it and share it with your folder-sync tool",
            folder.display()
        )));
    }
    Ok(())
}

/// Refuses a push (a plain SQLite copy in the folder) of an encrypted
/// database unless the configuration allows it.
fn check_plaintext(pushes: bool, encrypted: bool, allowed: bool) -> Result<(), SyncError> {
    if pushes && encrypted && !allowed {
        return Err(SyncError::Refused(
            "the database is encrypted and a push writes a plaintext copy of it into the sync \
             folder; set allow_plaintext_copy = true in [sync] if that is intended"
                .to_string(),
        ));
    }
    Ok(())
}

/// Runs one pass: pull, then push, of the buckets and events `filter`
/// takes. `progress` hears each stage.
pub fn run_pass(
    datastore: &Datastore,
    folder: &SyncFolder,
    mode: SyncMode,
    filter: &SyncFilter,
    allow_plaintext_copy: bool,
    progress: &mut dyn FnMut(&SyncProgress),
) -> Result<PassReport, SyncError> {
    check_folder(&folder.folder)?;
    let pushes = mode != SyncMode::Pull;
    check_plaintext(pushes, datastore.is_encrypted(), allow_plaintext_copy)?;
    let started = Timestamp::now();
    let clock = Instant::now();
    let pull = match mode {
        SyncMode::Push => None,
        _ => Some(aw_folder_sync::pull(datastore, folder, filter, progress)?),
    };
    let push = if pushes {
        Some(aw_folder_sync::push(datastore, folder, filter, progress)?)
    } else {
        None
    };
    Ok(PassReport {
        mode,
        folder: folder.folder.clone(),
        started,
        finished: Timestamp::now(),
        duration_ms: clock.elapsed().as_secs_f64() * 1000.0,
        buckets: filter.buckets.clone(),
        start: filter.start,
        pull,
        push,
    })
}

/// The server's sync: its settings, its identity in the folder, the
/// status, and a lock that keeps passes from overlapping.
#[derive(Debug)]
pub struct SyncState {
    /// `[sync]`, if configured.
    pub settings: Option<SyncSettings>,
    /// This device's id: its file in the folder is under it.
    pub device_id: String,
    /// This device's host name.
    pub hostname: String,
    status: Mutex<SyncStatus>,
    running: Mutex<()>,
}

impl SyncState {
    /// The state of a server with these settings and identity.
    pub fn new(settings: Option<SyncSettings>, device_id: String, hostname: String) -> SyncState {
        let status = SyncStatus {
            enabled: settings.as_ref().is_some_and(|s| s.enabled),
            configured: settings.is_some(),
            folder: settings.as_ref().map(|s| s.folder.clone()),
            mode: settings.as_ref().map(|s| s.mode),
            buckets: settings.as_ref().and_then(|s| s.buckets.clone()),
            interval_seconds: settings.as_ref().map(|s| s.interval.as_secs()),
            ..SyncStatus::default()
        };
        SyncState {
            settings,
            device_id,
            hostname,
            status: Mutex::new(status),
            running: Mutex::new(()),
        }
    }

    /// A copy of the status (its `hub` is the hub's to fill in).
    pub fn status(&self) -> SyncStatus {
        lock(&self.status).clone()
    }

    /// Runs a pass with the configured folder, after any pass already
    /// running; records and logs it. Only the configured folder: a
    /// request cannot make the server write anywhere else. `filter`
    /// `None` takes the configured buckets.
    pub fn run(
        &self,
        datastore: &Datastore,
        mode: SyncMode,
        filter: Option<SyncFilter>,
    ) -> Result<PassReport, SyncError> {
        let Some(settings) = &self.settings else {
            return Err(SyncError::Refused(
                "this server has no [sync] section in its config file: add one with the folder \
                 to sync with, or stop the server and run `aw-server sync` on the database file"
                    .to_string(),
            ));
        };
        let folder = settings.folder.clone();
        let allow = settings.allow_plaintext_copy;
        let filter = filter.unwrap_or_else(|| SyncFilter {
            buckets: settings.buckets.clone(),
            start: None,
        });
        let _running = lock(&self.running);
        lock(&self.status).running = true;
        let folder = SyncFolder {
            folder,
            device_id: self.device_id.clone(),
            hostname: self.hostname.clone(),
        };
        let result = run_pass(datastore, &folder, mode, &filter, allow, &mut |_| {});
        let mut status = lock(&self.status);
        status.running = false;
        match &result {
            Ok(report) => {
                log::info!("{}", report.summary());
                for source in report.pull.iter().flat_map(|pull| &pull.sources) {
                    log::info!("Sync pulled {}", source_line(source));
                }
                for skipped in report.pull.iter().flat_map(|pull| &pull.skipped) {
                    log::warn!("Sync skipped {}: {}", skipped.name, skipped.reason);
                }
                status.passes += 1;
                status.last_pass = Some(report.clone());
                status.last_error = None;
                status.last_error_at = None;
            }
            Err(error) => {
                log::error!("Sync pass failed: {error}");
                status.failures += 1;
                status.last_error = Some(error.to_string());
                status.last_error_at = Some(Timestamp::now());
            }
        }
        result
    }
}

/// One file's pull in a line: `dev/test.db (device dev): 3 new, ...`.
pub fn source_line(source: &SourceReport) -> String {
    let counts = source.counts;
    format!(
        "{} (device {}): {} new, {} updated, {} deleted, {} already here, {} dropped",
        source.file,
        source.device,
        counts.inserted,
        counts.updated,
        counts.deleted,
        counts.skipped,
        counts.dropped
    )
}

/// How often the schedule's wait looks whether the datastore closed.
const CHECK: StdDuration = StdDuration::from_secs(1);

/// Starts the `[sync]` schedule when it is enabled: a pass now, then one
/// per interval, until the datastore closes.
pub fn start(datastore: &Datastore, state: &Arc<SyncState>) {
    let Some(settings) = state.settings.clone().filter(|settings| settings.enabled) else {
        return;
    };
    let (datastore, state) = (datastore.clone(), Arc::clone(state));
    schedule::start("aw-server-sync", CHECK, &datastore.clone(), move || {
        if let Err(SyncError::Pass(FolderSyncError::Store(DatastoreError::Closed))) =
            state.run(&datastore, settings.mode, None)
        {
            return Next::Stop;
        }
        lock(&state.status).next_pass = Some(in_a_while(settings.interval));
        Next::After(settings.interval)
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_encrypted_database_pushes_only_when_a_plaintext_copy_is_allowed() {
        assert!(matches!(
            check_plaintext(true, true, false),
            Err(SyncError::Refused(_))
        ));
        assert!(check_plaintext(true, true, true).is_ok());
        assert!(
            check_plaintext(false, true, false).is_ok(),
            "a pull writes no copy"
        );
        assert!(check_plaintext(true, false, false).is_ok());
    }

    #[test]
    fn folders_must_be_absolute_and_exist() {
        assert!(matches!(
            check_folder(Path::new("relative/dir")),
            Err(SyncError::Folder(_))
        ));
        let dir = tempfile::tempdir().unwrap();
        assert!(check_folder(dir.path()).is_ok());
        assert!(check_folder(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn modes_parse_from_their_words() {
        for mode in [SyncMode::Push, SyncMode::Pull, SyncMode::Both] {
            assert_eq!(SyncMode::parse(&mode.to_string()), Some(mode));
        }
        assert_eq!(SyncMode::parse(" PULL "), Some(SyncMode::Pull));
        assert_eq!(SyncMode::parse("sideways"), None);
    }
}
