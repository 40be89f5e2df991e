//! One process per database file: an exclusive advisory lock on a sidecar
//! `<db>.lock` file, taken by `Datastore::open` and held by the writer
//! thread for the datastore's lifetime.
//!
//! The lock is on a separate file on purpose. SQLite coordinates its own
//! connections with POSIX record locks on the database file, and POSIX
//! drops every such lock of a process when *any* descriptor of that file
//! is closed; locking (or merely opening and closing) the database file
//! here would silently release SQLite's locks. The sidecar file is never
//! touched by SQLite, so `flock`-style locks on it are safe. It is left in
//! place after use: deleting it would race with another process opening it.
//!
//! The lock is advisory: it keeps out every aw-server (server, or the
//! `import`/`export` commands working offline), not other SQLite programs.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::DatastoreError;

/// The held lock; dropping it (closing the file) releases it.
#[derive(Debug)]
pub(crate) struct FileLock {
    _file: File,
}

/// The sidecar lock file of the database at `path`.
pub(crate) fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// How long `lock` waits for a holder to let go. A datastore releases
/// the lock when its writer thread ends, a moment after `close` answers or
/// the last handle is dropped; reopening the file right after that (tests,
/// a restart) must not fail. A process that really serves the file holds
/// it far longer.
const HANDOVER: Duration = Duration::from_secs(2);
const POLL: Duration = Duration::from_millis(10);

/// Takes the exclusive lock of the database at `path`, or fails with
/// `InUse` if another process (or another open datastore of this process)
/// still holds it after [`HANDOVER`].
pub(crate) fn lock(path: &Path) -> Result<FileLock, DatastoreError> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(lock_path(path))?;
    let deadline = Instant::now() + HANDOVER;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(FileLock { _file: file }),
            Err(TryLockError::WouldBlock) if Instant::now() < deadline => std::thread::sleep(POLL),
            Err(TryLockError::WouldBlock) => return Err(DatastoreError::InUse(path.to_path_buf())),
            Err(TryLockError::Error(error)) => return Err(DatastoreError::Io(error)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        let first = lock(&path).unwrap();
        assert!(matches!(lock(&path), Err(DatastoreError::InUse(p)) if p == path));
        drop(first);
        lock(&path).unwrap();
        assert!(dir.path().join("db.sqlite.lock").exists());
    }
}
