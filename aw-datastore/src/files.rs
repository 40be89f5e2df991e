//! Database files other than the one being served: the names beside a
//! database (`<db>-wal`, `<db>.restoring`...) and read-only, keyed
//! connections to snapshots and damaged files (`restore.rs`,
//! `salvage.rs`).

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use crate::{key, DatabaseKey, Result};

/// `path` with `suffix` added to its name: `db` and `-wal` give `db-wal`,
/// so a pair moved together keeps SQLite's names.
pub(crate) fn side_path(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// A read-only connection to a database file, keyed and checked. With
/// `short_ok`, a file shorter than its header says is read as it is
/// (`writable_schema`: SQLite refuses such a file otherwise; nothing is
/// written through a read-only connection).
pub(crate) fn open_read_only(
    path: &Path,
    key: Option<&DatabaseKey>,
    short_ok: bool,
) -> Result<Connection> {
    key::usable(key)?;
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    key::apply(&conn, key)?;
    if short_ok {
        conn.pragma_update(None, "writable_schema", "ON")?;
    }
    key::check(&conn, path, key)?;
    Ok(conn)
}
