//! The small server database of a server that hosts several people
//! (`aw-users`): who the users are and which user each API token's hash
//! belongs to, so a request finds its user's file without opening every
//! file. Each user's own file keeps its tokens too (`tokens.rs`); this is
//! an index of them, rebuilt from the files when it is missing.
//!
//! A plain SQLite file of its own (not aw-server-rust's schema), one
//! connection behind a lock: it is read once per credential (callers keep
//! what they learned) and written when users or their tokens change.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use aw_models::Timestamp;
use rusqlite::{params, Connection, OptionalExtension};

use crate::Result;

/// A user as the index knows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedUser {
    /// The user's name (also their folder's).
    pub name: String,
    /// When they were added.
    pub created: Timestamp,
}

/// The index file.
#[derive(Debug)]
pub struct UserIndex {
    path: PathBuf,
    conn: Mutex<Connection>,
}

const SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS users (
        name TEXT PRIMARY KEY NOT NULL,
        created INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS token_hashes (
        hash TEXT PRIMARY KEY NOT NULL,
        user TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE
    );
    CREATE INDEX IF NOT EXISTS token_hashes_user ON token_hashes(user);
    CREATE TABLE IF NOT EXISTS groups (
        name TEXT PRIMARY KEY NOT NULL,
        created INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS group_members (
        grp TEXT NOT NULL REFERENCES groups(name) ON DELETE CASCADE,
        user TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
        joined INTEGER NOT NULL,
        share_apps INTEGER NOT NULL,
        PRIMARY KEY (grp, user)
    );
    CREATE TABLE IF NOT EXISTS group_invitations (
        grp TEXT NOT NULL REFERENCES groups(name) ON DELETE CASCADE,
        user TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
        invited_by TEXT NOT NULL,
        at INTEGER NOT NULL,
        PRIMARY KEY (grp, user)
    );
";

/// Removes the groups that have no members, with their invitations
/// (`user_groups.rs`).
pub(crate) fn drop_empty_groups(
    transaction: &rusqlite::Transaction<'_>,
) -> rusqlite::Result<usize> {
    transaction.execute(
        "DELETE FROM groups WHERE name NOT IN (SELECT grp FROM group_members)",
        [],
    )
}

impl UserIndex {
    /// Opens (creating) the index at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<UserIndex> {
        let path = path.as_ref().to_path_buf();
        let conn = Connection::open(&path)?;
        conn.busy_timeout(Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.execute_batch(SCHEMA)?;
        Ok(UserIndex {
            path,
            conn: Mutex::new(conn),
        })
    }

    /// The index's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Every user, by name.
    pub fn users(&self) -> Result<Vec<IndexedUser>> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached("SELECT name, created FROM users ORDER BY name")?;
        let rows = statement.query_map([], |row| {
            Ok(IndexedUser {
                name: row.get(0)?,
                created: Timestamp::from_nanos(row.get(1)?),
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// The user named `name`, if any.
    pub fn user(&self, name: &str) -> Result<Option<IndexedUser>> {
        let conn = self.conn();
        Ok(conn
            .query_row(
                "SELECT name, created FROM users WHERE name = ?1",
                [name],
                |row| {
                    Ok(IndexedUser {
                        name: row.get(0)?,
                        created: Timestamp::from_nanos(row.get(1)?),
                    })
                },
            )
            .optional()?)
    }

    /// Adds a user; false, and nothing written, when the name is taken.
    pub fn add_user(&self, name: &str, created: Timestamp) -> Result<bool> {
        let conn = self.conn();
        let added = conn.execute(
            "INSERT OR IGNORE INTO users (name, created) VALUES (?1, ?2)",
            params![name, created.nanos()],
        )?;
        Ok(added == 1)
    }

    /// Removes a user and their token hashes; false when there is none.
    pub fn remove_user(&self, name: &str) -> Result<bool> {
        let mut conn = self.conn();
        let transaction = conn.transaction()?;
        transaction.execute("DELETE FROM token_hashes WHERE user = ?1", [name])?;
        let removed = transaction.execute("DELETE FROM users WHERE name = ?1", [name])?;
        // Their memberships and invitations go with them (cascade); a
        // group left without members goes too.
        drop_empty_groups(&transaction)?;
        transaction.commit()?;
        Ok(removed == 1)
    }

    /// Replaces the token hashes of `name` by `hashes` (the tokens its
    /// file holds), in one transaction. A hash another user has is
    /// refused (it would name two files) with that user's name.
    pub fn set_token_hashes(
        &self,
        name: &str,
        hashes: &[String],
    ) -> Result<std::result::Result<(), String>> {
        let mut conn = self.conn();
        let transaction = conn.transaction()?;
        for hash in hashes {
            let owner: Option<String> = transaction
                .query_row(
                    "SELECT user FROM token_hashes WHERE hash = ?1 AND user <> ?2",
                    params![hash, name],
                    |row| row.get(0),
                )
                .optional()?;
            if let Some(owner) = owner {
                return Ok(Err(owner));
            }
        }
        transaction.execute("DELETE FROM token_hashes WHERE user = ?1", [name])?;
        for hash in hashes {
            transaction.execute(
                "INSERT INTO token_hashes (hash, user) VALUES (?1, ?2)",
                params![hash, name],
            )?;
        }
        transaction.commit()?;
        Ok(Ok(()))
    }

    /// The user whose file holds the token with this hash, if any.
    pub fn user_of_token(&self, hash: &str) -> Result<Option<String>> {
        let conn = self.conn();
        Ok(conn
            .query_row(
                "SELECT user FROM token_hashes WHERE hash = ?1",
                [hash],
                |row| row.get(0),
            )
            .optional()?)
    }

    /// Every token hash with its user.
    pub fn token_owners(&self) -> Result<Vec<(String, String)>> {
        let conn = self.conn();
        let mut statement = conn.prepare("SELECT hash, user FROM token_hashes")?;
        let rows = statement
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// How many token hashes `name` has in the index.
    pub fn token_count(&self, name: &str) -> Result<usize> {
        let conn = self.conn();
        let count: i64 = conn.query_row(
            "SELECT COUNT(*) FROM token_hashes WHERE user = ?1",
            [name],
            |row| row.get(0),
        )?;
        Ok(usize::try_from(count).unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_and_their_token_hashes_are_kept_apart() {
        let folder = tempfile::tempdir().unwrap();
        let index = UserIndex::open(folder.path().join("index.db")).unwrap();
        let now = Timestamp::from_nanos(1_000);
        assert!(index.add_user("alice", now).unwrap());
        assert!(index.add_user("bob", now).unwrap());
        assert!(!index.add_user("alice", now).unwrap(), "a taken name");
        index
            .set_token_hashes("alice", &["a1".into(), "a2".into()])
            .unwrap()
            .unwrap();
        index
            .set_token_hashes("bob", &["b1".into()])
            .unwrap()
            .unwrap();
        assert_eq!(index.user_of_token("a2").unwrap().as_deref(), Some("alice"));
        assert_eq!(index.user_of_token("b1").unwrap().as_deref(), Some("bob"));
        assert_eq!(index.user_of_token("zz").unwrap(), None);
        let mut owners = index.token_owners().unwrap();
        owners.sort();
        assert_eq!(owners.len(), 3);
        assert_eq!(owners[0], ("a1".to_string(), "alice".to_string()));
        // Another user's hash: refused, nothing changed.
        assert_eq!(
            index.set_token_hashes("bob", &["a1".into()]).unwrap(),
            Err("alice".to_string())
        );
        assert_eq!(index.token_count("bob").unwrap(), 1);
        // Replaced whole.
        index
            .set_token_hashes("alice", &["a3".into()])
            .unwrap()
            .unwrap();
        assert_eq!(index.user_of_token("a1").unwrap(), None);
        assert!(index.remove_user("alice").unwrap());
        assert!(!index.remove_user("alice").unwrap());
        assert_eq!(index.user_of_token("a3").unwrap(), None);
        let names: Vec<String> = index.users().unwrap().into_iter().map(|u| u.name).collect();
        assert_eq!(names, ["bob"]);
        drop(index);
        // Reopened: still there.
        let index = UserIndex::open(folder.path().join("index.db")).unwrap();
        assert_eq!(index.user("bob").unwrap().unwrap().created, now);
    }
}
