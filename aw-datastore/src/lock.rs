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
//!
//! The file's content is the fingerprint of the database left by the last
//! clean close (see `stats.rs`): its size, modification time and inode,
//! taken after a checkpoint emptied the WAL. Open reads and erases it
//! before SQLite touches the database, so it vouches only for a file that
//! nobody opened for writing since.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::DatastoreError;

/// The held lock; dropping it (closing the file) releases it.
#[derive(Debug)]
pub(crate) struct FileLock {
    file: File,
}

impl FileLock {
    /// Reads the fingerprint left by the last clean close and erases it.
    pub(crate) fn take_fingerprint(&mut self) -> std::io::Result<String> {
        let mut text = String::new();
        self.file.seek(SeekFrom::Start(0))?;
        // A file that is not text is no fingerprint.
        if self.file.read_to_string(&mut text).is_err() {
            text.clear();
        }
        if self.file.metadata()?.len() > 0 {
            self.file.set_len(0)?;
        }
        Ok(text)
    }

    /// Stores a fingerprint for the next open.
    pub(crate) fn put_fingerprint(&mut self, fingerprint: &str) -> std::io::Result<()> {
        self.file.set_len(0)?;
        self.file.seek(SeekFrom::Start(0))?;
        self.file.write_all(fingerprint.as_bytes())?;
        self.file.sync_data()
    }
}

/// Margin past a file's modification time after which any later write is
/// stamped later: file times come from a clock that ticks every few
/// milliseconds (a jiffy), coarser than the one `SystemTime` reads.
const TIMESTAMP_TICK: Duration = Duration::from_millis(20);

/// Waits until any later write to the file at `path` gets a later
/// modification time than it has now, so a write right after a clean close
/// cannot leave the fingerprint intact (at most [`TIMESTAMP_TICK`]).
pub(crate) fn outlast_modification_time(path: &Path) -> std::io::Result<()> {
    let modified = std::fs::metadata(path)?.modified()?;
    let due = modified + TIMESTAMP_TICK;
    if let Ok(left) = due.duration_since(std::time::SystemTime::now()) {
        std::thread::sleep(left.min(TIMESTAMP_TICK));
    }
    Ok(())
}

/// The fingerprint of the database at `path` as it is now, `None` if a
/// WAL with content lies beside it (changes not checkpointed).
pub(crate) fn fingerprint(path: &Path) -> std::io::Result<Option<String>> {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    match std::fs::metadata(PathBuf::from(wal)) {
        Ok(wal) if wal.len() > 0 => return Ok(None),
        Ok(_) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => return Err(err),
    }
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err),
    };
    let modified = metadata
        .modified()?
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&metadata);
    #[cfg(not(unix))]
    let inode = 0;
    Ok(Some(format!(
        "aw-server stats v1 size={} modified={modified} inode={inode}\n",
        metadata.len()
    )))
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
        .read(true)
        .write(true)
        .open(lock_path(path))?;
    let deadline = Instant::now() + HANDOVER;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(FileLock { file }),
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

    #[test]
    fn a_fingerprint_is_read_once_and_follows_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        assert_eq!(fingerprint(&path).unwrap(), None);
        std::fs::write(&path, b"abc").unwrap();
        let print = fingerprint(&path).unwrap().unwrap();
        let mut held = lock(&path).unwrap();
        assert_eq!(held.take_fingerprint().unwrap(), "");
        held.put_fingerprint(&print).unwrap();
        drop(held);
        let mut held = lock(&path).unwrap();
        assert_eq!(held.take_fingerprint().unwrap(), print);
        assert_eq!(held.take_fingerprint().unwrap(), "");
        // A WAL with content, or a longer file, is another fingerprint.
        std::fs::write(dir.path().join("db.sqlite-wal"), b"x").unwrap();
        assert_eq!(fingerprint(&path).unwrap(), None);
        std::fs::write(dir.path().join("db.sqlite-wal"), b"").unwrap();
        assert_eq!(fingerprint(&path).unwrap(), Some(print.clone()));
        std::fs::write(&path, b"abcd").unwrap();
        assert_ne!(fingerprint(&path).unwrap(), Some(print));
    }
}
