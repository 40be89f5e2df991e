//! The error type of the datastore.

/// What can go wrong in the datastore, in variants a caller can act on.
#[derive(Debug, thiserror::Error)]
pub enum DatastoreError {
    /// The bucket does not exist.
    #[error("The requested bucket '{0}' does not exist")]
    NoSuchBucket(String),
    /// Creating a bucket whose id is taken.
    #[error("Bucket '{0}' already exists")]
    BucketExists(String),
    /// The event does not exist in that bucket.
    #[error("No event with id {event_id} in bucket '{bucket_id}'")]
    NoSuchEvent {
        /// Bucket asked for.
        bucket_id: String,
        /// Event asked for.
        event_id: i64,
    },
    /// The request itself is wrong (e.g. a value out of range).
    #[error("Invalid input: {0}")]
    InvalidInput(String),
    /// SQLite failed (disk full, I/O error, corrupt file...). Writes in the
    /// failed batch were not stored.
    #[error("Storage failure: {0}")]
    Storage(#[from] rusqlite::Error),
    /// The database file has a schema version newer than this program knows.
    #[error("Database schema version {0} is newer than this program supports")]
    UnsupportedVersion(i64),
    /// The operating system refused something the datastore needs outside
    /// SQLite: starting its threads, or syncing the WAL file to disk.
    #[error("System call failed: {0}")]
    Io(#[from] std::io::Error),
    /// Another process (or another open datastore) is using the database
    /// file; nothing was opened. See `lock.rs`.
    #[error("The database {} is in use by another process", .0.display())]
    InUse(std::path::PathBuf),
    /// The database cannot be opened with the password given (or
    /// without one), or a password was given to a build that cannot
    /// encrypt (`key.rs`); the message says which it may be.
    #[error("Encryption: {0}")]
    Encryption(String),
    /// The worker thread has stopped (closed, or died); nothing was done.
    #[error("The datastore is closed")]
    Closed,
    /// The database file is damaged: SQLite found a page that is not what
    /// it should be (`salvage.rs` tells what can be saved).
    #[error(
        "The database {} is damaged ({detail}); restart the server to salvage what can still be \
         read (or `aw-server check --repair` with it stopped), or restore a snapshot",
        path.display()
    )]
    Damaged {
        /// The file.
        path: std::path::PathBuf,
        /// What SQLite said.
        detail: String,
    },
}

impl DatastoreError {
    /// Whether the failure is a full disk (SQLite's `SQLITE_FULL`, or the
    /// system's "no space left"): nothing was stored, and writing works
    /// again once space is freed.
    pub fn is_disk_full(&self) -> bool {
        match self {
            DatastoreError::Storage(error) => {
                error.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull)
            }
            DatastoreError::Io(error) => error.kind() == std::io::ErrorKind::StorageFull,
            _ => false,
        }
    }
}
