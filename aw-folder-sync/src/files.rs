//! Opening the sync folder's files: this device's copy read-write, the
//! other devices' read-only and untouched.
//!
//! Both have aw-server-rust's schema (`aw_datastore::format`), so aw-sync reads the
//! copy we push and we read the ones it pushes. The copy we push adds
//! three tables that aw-server-rust ignores: `aw_sync_meta` (whose copy it
//! is, and its `epoch`, new whenever the copy is rebuilt), `aw_sync_pushed`
//! (per bucket, how far the incremental push got) and `aw_sync_log` (what
//! was deleted or changed after it was pushed, for the pullers).
//!
//! The copy uses a rollback journal, not WAL: a folder-sync tool copies
//! the one file, and a commit leaves it whole with no `-wal` beside it.
//! Another device's file is opened `immutable`: SQLite then takes no lock
//! and creates no `-wal`, `-shm` or `-journal` beside it, so the folder
//! only ever changes under the device that owns the file.

use std::path::Path;

use rusqlite::{Connection, OpenFlags, OptionalExtension};

use aw_datastore::format::{self, NEWEST_COMPATIBLE_VERSION};
use aw_datastore::DatastoreError;

use crate::{FolderSyncError, Result};

/// A folder file the schema functions failed on: the file's problem, not
/// this database's.
fn unusable(error: DatastoreError) -> FolderSyncError {
    match error {
        DatastoreError::Storage(error) => FolderSyncError::File(error),
        DatastoreError::InvalidInput(reason) => FolderSyncError::Refused(reason),
        other => FolderSyncError::Refused(other.to_string()),
    }
}

/// The tables of ours in the pushed copy.
const OWN_TABLES: &str = "
    CREATE TABLE IF NOT EXISTS aw_sync_meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS aw_sync_pushed (
        bucket TEXT PRIMARY KEY,
        high_water INTEGER NOT NULL,
        tail_start INTEGER NOT NULL,
        changes INTEGER NOT NULL,
        count INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS aw_sync_log (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        bucket TEXT NOT NULL,
        event_id INTEGER NOT NULL,
        starttime INTEGER NOT NULL,
        endtime INTEGER NOT NULL,
        data TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS aw_sync_log_bucket_seq ON aw_sync_log(bucket, seq);";

/// Opens (creating) this device's copy and checks that it is this
/// device's: a copy with another device id in it is refused; a file
/// without our tables (aw-sync's copy of the same device, or a new file)
/// is emptied and given a new epoch, so pullers read it again from the
/// start.
pub(crate) fn open_own(path: &Path, device_id: &str, hostname: &str) -> Result<Connection> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let conn = Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    let mode: String = conn.query_row("PRAGMA journal_mode = DELETE", [], |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("delete") {
        return Err(FolderSyncError::Refused(format!(
            "{} cannot use a rollback journal (got '{mode}')",
            path.display()
        )));
    }
    // Safe beside another pass of this device creating the file at the
    // same moment: each step reads the version again under the lock.
    format::create_schema(&conn).map_err(unusable)?;
    // One transaction, so that two passes starting at once agree on whose
    // the copy is and empty a new one only once.
    conn.execute_batch("BEGIN IMMEDIATE")?;
    match claim_own(&conn, path, device_id, hostname) {
        Ok(()) => conn.execute_batch("COMMIT")?,
        Err(error) => {
            let _ = conn.execute_batch("ROLLBACK");
            return Err(error);
        }
    }
    Ok(conn)
}

fn claim_own(conn: &Connection, path: &Path, device_id: &str, hostname: &str) -> Result<()> {
    let ours: bool = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE name = 'aw_sync_meta'",
        [],
        |row| row.get::<_, i64>(0).map(|count| count > 0),
    )?;
    conn.execute_batch(OWN_TABLES)?;
    let owner = meta(conn, "device_id")?;
    match owner {
        Some(owner) if owner != device_id => {
            return Err(FolderSyncError::Refused(format!(
                "{} is the copy of device '{owner}', not of this device ('{device_id}')",
                path.display()
            )))
        }
        Some(_) if ours => {}
        _ => {
            log::info!("Starting the sync copy {}", path.display());
            conn.execute_batch(
                "DELETE FROM events; DELETE FROM buckets;
                 DELETE FROM aw_sync_pushed; DELETE FROM aw_sync_log;",
            )?;
            set_meta(conn, "device_id", device_id)?;
            set_meta(conn, "epoch", &new_epoch())?;
        }
    }
    if meta(conn, "hostname")?.as_deref() != Some(hostname) {
        set_meta(conn, "hostname", hostname)?;
    }
    Ok(())
}

/// Opens another device's file read-only, writing nothing beside it, and
/// checks that it is whole, free and in a schema this program reads.
/// What is refused is reported by the pull and tried again next pass:
///
/// - an empty file, or one shorter than its header says (a folder-sync
///   tool still copying it in place, or a truncated copy), or not SQLite;
/// - a file with a rollback journal or a non-empty WAL beside it: being
///   written, or left half-written by a crash of its device;
/// - a file another process holds locked (a writer on this machine);
/// - a file without the tables and columns a pull reads, or of a newer
///   schema.
///
/// A file in rollback-journal mode (ours) is read in one read
/// transaction of a plain read-only connection: its shared lock keeps a
/// writer on this machine out until the pull is done, and a writer
/// already in makes it fail at once, as locked. A file in WAL mode
/// (aw-sync's) is opened `immutable`, since a read-only connection would
/// need a `-shm` beside it; its writers leave a `-wal` that the check
/// above sees.
pub(crate) fn open_source(path: &Path) -> Result<Connection> {
    let refused = |reason: String| Err(FolderSyncError::Refused(reason));
    let wal = match read_header(path)? {
        Header::Empty => {
            return refused(
                "an empty file (its device has not written it yet, or the folder-sync tool is \
                 still copying it); read on a later pass"
                    .to_string(),
            )
        }
        Header::NotSqlite => return refused("not an SQLite database".to_string()),
        Header::Incomplete { size, expected } => {
            return refused(format!(
                "incomplete: {size} of {expected} bytes (being copied by the folder-sync tool, \
                 or truncated); read on a later pass"
            ))
        }
        Header::Whole { wal } => wal,
    };
    for suffix in ["-journal", "-wal"] {
        let mut beside = path.as_os_str().to_owned();
        beside.push(suffix);
        if std::fs::metadata(&beside).is_ok_and(|meta| meta.len() > 0) {
            return refused(format!(
                "its device is writing it (a {suffix} file is beside it); read on a later pass"
            ));
        }
    }
    let conn = if wal {
        let uri = format!("file:{}?mode=ro&immutable=1", uri_path(path));
        Connection::open_with_flags(
            uri,
            OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_URI
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?
    } else {
        let uri = format!("file:{}?mode=ro", uri_path(path));
        let conn = Connection::open_with_flags(
            uri,
            OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_URI
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(std::time::Duration::ZERO)?;
        conn.execute_batch("BEGIN")?;
        // The first read takes the shared lock, held until the connection
        // is dropped.
        let taken = conn.query_row("SELECT count(*) FROM sqlite_master", [], |row| {
            row.get::<_, i64>(0)
        });
        match taken {
            Ok(_) => {}
            Err(rusqlite::Error::SqliteFailure(error, _))
                if error.code == rusqlite::ErrorCode::DatabaseBusy
                    || error.code == rusqlite::ErrorCode::DatabaseLocked =>
            {
                return refused(
                    "locked by another process that is writing it; read on a later pass"
                        .to_string(),
                )
            }
            Err(error) => return Err(error.into()),
        }
        conn
    };
    let version = format::schema_version(&conn).map_err(unusable)?;
    if version > NEWEST_COMPATIBLE_VERSION {
        return Err(unusable(DatastoreError::UnsupportedVersion(version)));
    }
    if version < 2 {
        return refused("not an ActivityWatch database (no schema version)".to_string());
    }
    for (table, columns) in [
        (
            "buckets",
            &[
                "id", "name", "type", "client", "hostname", "created", "data",
            ][..],
        ),
        (
            "events",
            &["id", "bucketrow", "starttime", "endtime", "data"][..],
        ),
    ] {
        let present: Vec<String> = conn
            .prepare(&format!("PRAGMA table_info({table})"))?
            .query_map([], |row| row.get(1))?
            .collect::<rusqlite::Result<_>>()?;
        if let Some(missing) = columns
            .iter()
            .find(|column| !present.iter().any(|name| name == *column))
        {
            return refused(if present.is_empty() {
                format!("a schema this program does not read: no table {table}")
            } else {
                format!(
                    "a schema this program does not read: table {table} has no column {missing}"
                )
            });
        }
    }
    Ok(conn)
}

/// What the first 100 bytes of a file say about it.
enum Header {
    Empty,
    NotSqlite,
    /// Shorter than the page count of its header says.
    Incomplete {
        size: u64,
        expected: u64,
    },
    /// Whole as far as its header tells; `wal`: in WAL mode.
    Whole {
        wal: bool,
    },
}

fn read_header(path: &Path) -> Result<Header> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let size = file.metadata()?.len();
    if size == 0 {
        return Ok(Header::Empty);
    }
    let mut header = [0u8; 100];
    if size < 100 || file.read_exact(&mut header).is_err() {
        return Ok(Header::NotSqlite);
    }
    if &header[..16] != b"SQLite format 3\0" {
        return Ok(Header::NotSqlite);
    }
    let word = |at: usize| {
        u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536,
        size => u64::from(size),
    };
    // The page count is valid when written by the version that made the
    // last change (SQLite 3.7.0 and later always are).
    let pages = u64::from(word(28));
    let expected = if word(92) == word(24) && pages > 0 {
        pages * page_size
    } else {
        size.next_multiple_of(page_size.max(1))
    };
    if size < expected {
        return Ok(Header::Incomplete { size, expected });
    }
    Ok(Header::Whole {
        wal: header[18] == 2,
    })
}

/// A value of `aw_sync_meta`, if the table and the key exist.
pub(crate) fn meta(conn: &Connection, key: &str) -> Result<Option<String>> {
    let table: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE name = 'aw_sync_meta'",
        [],
        |row| row.get(0),
    )?;
    if table == 0 {
        return Ok(None);
    }
    Ok(conn
        .query_row(
            "SELECT value FROM aw_sync_meta WHERE key = ?1",
            [key],
            |row| row.get(0),
        )
        .optional()?)
}

pub(crate) fn set_meta(conn: &Connection, key: &str, value: &str) -> Result<()> {
    conn.execute(
        "INSERT OR REPLACE INTO aw_sync_meta (key, value) VALUES (?1, ?2)",
        [key, value],
    )?;
    Ok(())
}

/// A value that differs from every earlier epoch of the copy: the time in
/// nanoseconds.
fn new_epoch() -> String {
    aw_models::Timestamp::now().nanos().to_string()
}

/// `path` for a `file:` URI: the characters a URI gives meaning to are
/// percent-encoded.
fn uri_path(path: &Path) -> String {
    let text = path.to_string_lossy();
    let mut encoded = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '%' => encoded.push_str("%25"),
            '?' => encoded.push_str("%3F"),
            '#' => encoded.push_str("%23"),
            _ => encoded.push(character),
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_paths_escape_query_and_fragment() {
        assert_eq!(uri_path(Path::new("/a b/c?d#e%f")), "/a b/c%3Fd%23e%25f");
    }

    #[test]
    fn the_copy_refuses_another_device_and_sources_stay_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dev").join("test.db");
        let conn = open_own(&path, "dev", "host").unwrap();
        assert_eq!(meta(&conn, "device_id").unwrap().as_deref(), Some("dev"));
        drop(conn);
        assert!(open_own(&path, "other", "host").is_err());
        let source = open_source(&path).unwrap();
        let buckets: i64 = source
            .query_row("SELECT count(*) FROM buckets", [], |row| row.get(0))
            .unwrap();
        assert_eq!(buckets, 0);
        drop(source);
        let mut names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["test.db"]);
    }
}
