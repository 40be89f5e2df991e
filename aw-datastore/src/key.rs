//! Encryption at rest: the database file encrypted with SQLCipher, keyed
//! by a password, as aw-server-rust's opt-in build does. Only a build with
//! the `sqlcipher` feature can encrypt; without it, a key is refused
//! instead of writing plaintext the user thinks is encrypted.
//!
//! SQLCipher wants the key before any other statement, so every connection
//! of a datastore (writer, WAL syncer, readers) gets it right after it opens
//! ([`apply`]), and the first read after that tells whether the key fits
//! ([`check`]). A file SQLite cannot read with the key given (or without
//! one) is never replaced: the open fails with
//! [`DatastoreError::Encryption`] saying what it may be.

use std::fmt;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use rusqlite::Connection;

use crate::{DatastoreError, Result};

/// Whether this build can encrypt (the `sqlcipher` feature).
pub const ENCRYPTION_AVAILABLE: bool = cfg!(feature = "sqlcipher");

/// The password of an encrypted database. Never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct DatabaseKey(Arc<str>);

impl DatabaseKey {
    /// A key from a password; an empty password is refused (SQLCipher
    /// would take it to mean no encryption at all).
    pub fn new(password: &str) -> Result<DatabaseKey> {
        if password.is_empty() {
            return Err(DatastoreError::Encryption(
                "an empty database password is refused".to_string(),
            ));
        }
        Ok(DatabaseKey(password.into()))
    }
}

impl fmt::Debug for DatabaseKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DatabaseKey(hidden)")
    }
}

/// Refuses a key in a build that cannot encrypt.
pub(crate) fn usable(key: Option<&DatabaseKey>) -> Result<()> {
    if key.is_some() && !ENCRYPTION_AVAILABLE {
        return Err(DatastoreError::Encryption(
            "a database password was given, but this aw-server was built without encryption \
             (the `sqlcipher` feature); refusing to store the data unencrypted"
                .to_string(),
        ));
    }
    Ok(())
}

/// Gives a new connection its key, if any.
pub(crate) fn apply(conn: &Connection, key: Option<&DatabaseKey>) -> Result<()> {
    usable(key)?;
    if let Some(key) = key {
        // SQLCipher would also print its own errors (a failed HMAC check
        // for a wrong key) to stderr; `check` explains them instead.
        conn.pragma_update(None, "cipher_log_level", "NONE")?;
        conn.pragma_update(None, "key", &*key.0)?;
    }
    Ok(())
}

/// Reads the schema once: an error that says the file cannot be read
/// becomes an explanation of which way the key does not fit.
pub(crate) fn check(conn: &Connection, path: &Path, key: Option<&DatabaseKey>) -> Result<()> {
    let read = conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()));
    match read {
        Ok(()) => Ok(()),
        Err(error) if error.sqlite_error_code() == Some(rusqlite::ErrorCode::NotADatabase) => {
            let header = header_of(path);
            let plaintext = header
                .as_ref()
                .is_some_and(|header| header == b"SQLite format 3\0");
            let zeroed = header.is_some_and(|header| header.iter().all(|byte| *byte == 0));
            let why = match (key.is_some(), plaintext) {
                // An encrypted file starts with its random salt, never zeros.
                _ if zeroed => {
                    "its header (the first bytes, which make it a database) is zeroed: it is \
                     no longer a database file"
                }
                (true, true) => {
                    "a password was given but the file is not encrypted (a plain \
                                 SQLite database); start without the password, or export and \
                                 import its data into an encrypted one"
                }
                (true, false) => "the password is wrong, or the file is not a database",
                (false, _) if ENCRYPTION_AVAILABLE => {
                    "the file is encrypted (give its password with --db-password or \
                     AW_DB_PASSWORD) or is not a database"
                }
                (false, _) => {
                    "the file is encrypted (only a build with the `sqlcipher` feature can \
                     open it) or is not a database"
                }
            };
            Err(DatastoreError::Encryption(format!(
                "cannot read {}: {why}",
                path.display()
            )))
        }
        Err(error) => Err(error.into()),
    }
}

/// The file's first 16 bytes, where every unencrypted SQLite database
/// says `SQLite format 3`.
fn header_of(path: &Path) -> Option<[u8; 16]> {
    let mut header = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut file| file.read_exact(&mut header))
        .ok()
        .map(|()| header)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_password_is_refused_and_keys_are_never_printed() {
        assert!(matches!(
            DatabaseKey::new(""),
            Err(DatastoreError::Encryption(_))
        ));
        let key = DatabaseKey::new("hunter2").unwrap();
        assert!(!format!("{key:?}").contains("hunter2"));
    }
}
