//! Where the server keeps its files: the same places as aw-server-rust, so
//! an existing installation's config, database and device id are picked up
//! unchanged.
//!
//! - config: `$XDG_CONFIG_HOME/activitywatch/aw-server-rust/config.toml`
//!   (`config-testing.toml` in testing mode);
//! - data: `$XDG_DATA_HOME/activitywatch/aw-server-rust/sqlite.db`
//!   (`sqlite-testing.db`) and the `device_id` file;
//! - logs: `$XDG_CACHE_HOME/activitywatch/log/aw-server-rust/`;
//! - the sync folder: `$AW_SYNC_DIR`, else `~/ActivityWatchSync`, as
//!   aw-sync's.
//!
//! Directories are created on first use. Reading the files is left to
//! `config.rs`, `logging.rs` and `main.rs`.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The name shared with the reference server's directories.
const APP: &str = "aw-server-rust";

fn ensure(dir: Option<PathBuf>, what: &str) -> io::Result<PathBuf> {
    let dir = dir.ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("cannot determine the {what} directory (is $HOME set?)"),
        )
    })?;
    fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// The Python aw-server's database, which the first start imports
/// (`transfer::legacy`): `$XDG_DATA_HOME/activitywatch/aw-server/`
/// `peewee-sqlite.v2.db` (`peewee-sqlite-testing.v2.db` in testing mode).
/// Nothing is created.
pub fn legacy_db_path(testing: bool) -> io::Result<PathBuf> {
    let name = if testing {
        aw_datastore::LEGACY_TESTING_FILE_NAME
    } else {
        aw_datastore::LEGACY_FILE_NAME
    };
    dirs::data_dir()
        .map(|dir| dir.join("activitywatch").join("aw-server").join(name))
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "cannot determine the data directory (is $HOME set?)",
            )
        })
}

/// The config directory, created if missing.
pub fn config_dir() -> io::Result<PathBuf> {
    ensure(
        dirs::config_dir().map(|dir| dir.join("activitywatch").join(APP)),
        "config",
    )
}

/// The data directory (database, device id), created if missing.
pub fn data_dir() -> io::Result<PathBuf> {
    ensure(
        dirs::data_dir().map(|dir| dir.join("activitywatch").join(APP)),
        "data",
    )
}

/// The log directory, created if missing.
pub fn log_dir() -> io::Result<PathBuf> {
    ensure(
        dirs::cache_dir().map(|dir| dir.join("activitywatch").join("log").join(APP)),
        "log",
    )
}

/// The default config file of the mode.
pub fn config_path(testing: bool) -> io::Result<PathBuf> {
    let name = if testing {
        "config-testing.toml"
    } else {
        "config.toml"
    };
    Ok(config_dir()?.join(name))
}

/// The default database file of the mode.
pub fn db_path(testing: bool) -> io::Result<PathBuf> {
    let name = if testing {
        "sqlite-testing.db"
    } else {
        "sqlite.db"
    };
    Ok(data_dir()?.join(name))
}

/// The default sync folder, as aw-sync's: `$AW_SYNC_DIR`, else
/// `~/ActivityWatchSync`. Not created: a folder-sync tool shares it.
pub fn sync_dir() -> io::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("AW_SYNC_DIR").filter(|dir| !dir.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    dirs::home_dir()
        .map(|home| home.join("ActivityWatchSync"))
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "cannot determine the home directory for the sync folder (is $HOME set?)",
            )
        })
}

/// This machine's host name, as `/api/0/info` reports it and `!local`
/// resolves to.
pub fn hostname() -> String {
    gethostname::gethostname().to_string_lossy().into_owned()
}

/// The persisted device id in `data_dir`: read if present, otherwise a new
/// UUID v4 is written (atomically, so a crash never leaves a torn id).
pub fn device_id(data_dir: &Path) -> io::Result<String> {
    let path = data_dir.join("device_id");
    match fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => return Ok(text.trim().to_string()),
        Ok(_) => {}
        Err(error) if error.kind() == io::ErrorKind::NotFound => {}
        Err(error) => return Err(error),
    }
    let id = uuid::Uuid::new_v4().hyphenated().to_string();
    let temporary = data_dir.join("device_id.tmp");
    fs::write(&temporary, &id)?;
    fs::rename(&temporary, &path)?;
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_id_is_created_once_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let first = device_id(dir.path()).unwrap();
        assert_eq!(first.len(), 36);
        assert_eq!(device_id(dir.path()).unwrap(), first);
        fs::write(dir.path().join("device_id"), "my-id\n").unwrap();
        assert_eq!(device_id(dir.path()).unwrap(), "my-id");
    }
}
