//! Snapshots: a consistent copy of the database written while it is
//! served, never a torn one.
//!
//! Copying the file by hand while the server writes can give a file that
//! is neither the old state nor the new (a WAL database is two files that
//! change under the copy). A snapshot is SQLite's online backup of a
//! read-only connection of its own, run in one step: the copy happens
//! inside one read transaction, so it is exactly the committed state when
//! it started, and the writer goes on committing beside it (a backup run
//! in several steps would start again after each of the writer's commits).
//! An encrypted database gives an encrypted copy: the copy's connection is
//! keyed with the same key before a page is written, so the pages are
//! copied as they are.
//!
//! The copy goes to `<name>.partial` beside the target, which is then set
//! to a single file (`journal_mode = DELETE`, no `-wal` beside it),
//! checked (`quick_check`), synced and renamed: a snapshot is either
//! complete under its name or not there. A `.partial` left by a killed
//! run is removed by the next one; an existing target is never replaced.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::backup::{Backup, StepResult};
use rusqlite::Connection;

use crate::{key, Datastore, DatastoreError, Result};

/// What a snapshot wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// How long it took, the check included.
    pub took: Duration,
}

impl Datastore {
    /// Writes a consistent copy of the database to `target`, a file that
    /// must not exist yet, in a folder that does. Every write acknowledged
    /// before the call is in the copy. See the module's text.
    pub fn snapshot(&self, target: &Path) -> Result<Snapshot> {
        let started = Instant::now();
        let partial = partial_path(target)?;
        let source = self.local.open_connection()?;
        copy_in_place(&source, &partial, target, self.local.key(), started)
    }
}

/// Writes a consistent copy of the database file `source` to `target`
/// (a file that must not exist yet, in a folder that does) through a
/// read-only connection of its own, so it may run beside a server that
/// serves the file, in another process: a WAL database lets a reader read
/// beside the writer, and the copy is the state the server had committed
/// when it started (every write it acknowledged before). `key`: the
/// file's, if encrypted. The same guarantees as [`Datastore::snapshot`].
pub fn snapshot_file(
    source: &Path,
    key: Option<&key::DatabaseKey>,
    target: &Path,
) -> Result<Snapshot> {
    let started = Instant::now();
    if !source.is_file() {
        return Err(DatastoreError::InvalidInput(format!(
            "there is no database file {}",
            source.display()
        )));
    }
    let partial = partial_path(target)?;
    let connection = crate::files::open_read_only(source, key, false)?;
    copy_in_place(&connection, &partial, target, key, started)
}

/// Copies `source` to `partial`, checked and synced, then names it
/// `target`.
fn copy_in_place(
    source: &Connection,
    partial: &Path,
    target: &Path,
    key: Option<&key::DatabaseKey>,
    started: Instant,
) -> Result<Snapshot> {
    let result = write_copy(source, partial, key);
    if let Err(error) = result {
        let _ = std::fs::remove_file(partial);
        return Err(unwritable(error, partial));
    }
    put_in_place(partial, target)?;
    sync_folder_of(target);
    let bytes = std::fs::metadata(target)?.len();
    Ok(Snapshot {
        path: target.to_path_buf(),
        bytes,
        took: started.elapsed(),
    })
}

/// A copy that could not be opened or written for want of permission
/// says so, naming the folder; other failures (a full disk) stay as they
/// are.
fn unwritable(error: DatastoreError, partial: &Path) -> DatastoreError {
    use rusqlite::ErrorCode::{CannotOpen, PermissionDenied, ReadOnly};
    let refused = match &error {
        DatastoreError::Storage(storage) => matches!(
            storage.sqlite_error_code(),
            Some(CannotOpen | ReadOnly | PermissionDenied)
        ),
        DatastoreError::Io(io) => io.kind() == std::io::ErrorKind::PermissionDenied,
        _ => false,
    };
    if !refused {
        return error;
    }
    let folder = partial.parent().unwrap_or(Path::new("."));
    DatastoreError::Io(std::io::Error::new(
        std::io::ErrorKind::PermissionDenied,
        format!("cannot write a snapshot in {}: {error}", folder.display()),
    ))
}

/// Gives the checked copy its name without ever replacing a file there:
/// a hard link fails on an existing name where `rename` would overwrite
/// it. On a file system without hard links, a rename after a last look.
fn put_in_place(partial: &Path, target: &Path) -> Result<()> {
    let placed = match std::fs::hard_link(partial, target) {
        Ok(()) => std::fs::remove_file(partial),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Err(error),
        Err(_) if target.symlink_metadata().is_err() => std::fs::rename(partial, target),
        Err(error) => Err(error),
    };
    placed.map_err(|error| {
        let _ = std::fs::remove_file(partial);
        DatastoreError::InvalidInput(format!(
            "cannot put the snapshot at {}: {error}",
            target.display()
        ))
    })
}

/// `<target>.partial`, after checking that the target does not exist and
/// its folder does; a `.partial` left by a killed run is removed.
fn partial_path(target: &Path) -> Result<PathBuf> {
    let refuse = |why: String| Err(DatastoreError::InvalidInput(why));
    let Some(name) = target.file_name() else {
        return refuse(format!("{} names no file", target.display()));
    };
    let folder = match target.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    if !folder.is_dir() {
        return refuse(format!("there is no folder {}", folder.display()));
    }
    if target.symlink_metadata().is_ok() {
        return refuse(format!(
            "{} exists already: a snapshot never replaces a file",
            target.display()
        ));
    }
    let mut partial_name = name.to_os_string();
    partial_name.push(".partial");
    let partial = folder.join(partial_name);
    match std::fs::remove_file(&partial) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
            return refuse(format!("cannot remove {}: {error}", partial.display()));
        }
        _ => {}
    }
    for suffix in ["-journal", "-wal", "-shm"] {
        let mut side = partial.clone().into_os_string();
        side.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(side));
    }
    Ok(partial)
}

/// Copies `source` into a new file at `partial`, in one step, then leaves
/// it a single checked file on the disk.
fn write_copy(source: &Connection, partial: &Path, key: Option<&key::DatabaseKey>) -> Result<()> {
    let mut copy = Connection::open(partial)?;
    key::apply(&copy, key)?;
    {
        let backup = Backup::new(source, &mut copy)?;
        // -1: every page in one step, inside one read transaction.
        match backup.step(-1)? {
            StepResult::Done => {}
            other => {
                return Err(DatastoreError::Storage(rusqlite::Error::SqliteFailure(
                    rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
                    Some(format!("the copy did not finish in one step: {other:?}")),
                )));
            }
        }
    }
    // The source's header says WAL; the snapshot is one file.
    let mode: String = copy.query_row("PRAGMA journal_mode = DELETE", [], |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("delete") {
        return Err(DatastoreError::InvalidInput(format!(
            "the snapshot kept journal mode {mode}"
        )));
    }
    let check: String = copy.query_row("PRAGMA quick_check", [], |row| row.get(0))?;
    if check != "ok" {
        return Err(DatastoreError::InvalidInput(format!(
            "the snapshot failed its check: {check}"
        )));
    }
    copy.close().map_err(|(_, error)| error)?;
    std::fs::File::open(partial)?.sync_all()?;
    Ok(())
}

/// Syncs the folder's entry of `path`, so the name survives a power cut;
/// where the system cannot open a folder, the file's own sync stands.
fn sync_folder_of(path: &Path) {
    if let Some(folder) = path
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty())
    {
        if let Ok(handle) = std::fs::File::open(folder) {
            let _ = handle.sync_all();
        }
    }
}
