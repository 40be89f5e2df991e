//! Several people on one server, each with a database file of their own
//! in aw-server-rust's format (`users/<name>/sqlite.db` under the data
//! folder), which they can take home and open in any aw-server; and the
//! small index beside them (`users/index.db`, `aw_datastore::UserIndex`)
//! of who the users are and whose each API token is.
//!
//! This first part adds, lists and removes users and makes each one's
//! first admin token in their own file (the `user` command). Serving
//! their files, one per request's credential, is the server's next part
//! (`docs/API.md` §10 says what works today).
//!
//! This crate knows neither HTTP nor the command line; making a token's
//! secret is its caller's (the server's auth), handed in as a function.

mod groups;
pub mod moving;
pub mod pool;

use std::path::{Path, PathBuf};

use aw_datastore::{Datastore, DatastoreError, IndexedUser, UserIndex};
use aw_models::Timestamp;
use serde::Serialize;

/// The folder of the users under the data folder.
pub const USERS_FOLDER: &str = "users";
/// The index's file in it.
pub const INDEX_FILE: &str = "index.db";
/// Each user's database file in their folder.
pub const USER_DB_FILE: &str = "sqlite.db";
/// Where removed users' folders are moved, in the users' folder.
pub const REMOVED_FOLDER: &str = "removed";

/// How a server hosts its users (`[users]` in its config).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Whose data an existing single database becomes.
    pub first_user: String,
    /// The most users' files open at once.
    pub max_open: usize,
    /// How long a user's file stays open unused.
    pub quiet: std::time::Duration,
    /// The other nodes behind the same proxy (`http://host:port`), whose
    /// people the server administrator's People page lists beside this
    /// node's.
    pub nodes: Vec<String>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            first_user: "owner".to_string(),
            max_open: 64,
            quiet: std::time::Duration::from_secs(600),
            nodes: Vec::new(),
        }
    }
}

/// Longest user name, in bytes.
pub const MAX_NAME: usize = 64;

/// Why a user operation failed.
#[derive(Debug, thiserror::Error)]
pub enum UsersError {
    #[error(
        "'{0}' is not a user name: use 1 to 64 of a-z, 0-9, '-' and '_', starting with a letter or digit"
    )]
    InvalidName(String),
    #[error("'{0}' is a name the server keeps for itself")]
    Reserved(String),
    #[error("there is a user '{0}' already")]
    Exists(String),
    #[error("there is no user '{0}'")]
    Unknown(String),
    #[error("the folder {0} exists already (a user's, not in the index?): move it away first")]
    FolderExists(PathBuf),
    #[error(
        "the database of '{0}' is in use by a running server: remove them through it (DELETE \
         /api/0/users/{0} with the server administrator's key) or stop it first"
    )]
    InUse(String),
    #[error("a token of '{user}' is also one of '{other}'")]
    SharedToken { user: String, other: String },
    #[error("there is no group '{0}' of yours, nor an invitation to it")]
    NoGroup(String),
    #[error("there is a group '{0}' already")]
    GroupExists(String),
    #[error("'{user}' is a member of '{group}' already")]
    AlreadyMember { user: String, group: String },
    #[error(
        "'{0}' is not frozen for a move: POST /api/0/users/{0}/freeze first (their file is \
         copied whole only while no request writes to it)"
    )]
    NotFrozen(String),
    #[error("the file received is not a database this server can open: {0}")]
    NotADatabase(String),
    #[error("{0}")]
    Token(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Store(#[from] DatastoreError),
}

/// Checks that `name` is a safe file name on every system: lower-case
/// ASCII letters and digits, `-` and `_`, starting with a letter or digit,
/// at most [`MAX_NAME`] bytes, and none of the names the folder uses.
pub fn check_name(name: &str) -> Result<(), UsersError> {
    let valid = !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        && name.as_bytes()[0].is_ascii_alphanumeric();
    if !valid {
        return Err(UsersError::InvalidName(name.to_string()));
    }
    // Windows' device names, and the folder's own entries.
    const RESERVED: &[&str] = &[
        REMOVED_FOLDER,
        "index",
        "con",
        "prn",
        "aux",
        "nul",
        "com1",
        "com2",
        "com3",
        "com4",
        "lpt1",
        "lpt2",
        "lpt3",
    ];
    if RESERVED.contains(&name) {
        return Err(UsersError::Reserved(name.to_string()));
    }
    Ok(())
}

/// A user as `list` shows them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UserInfo {
    pub name: String,
    pub created: Timestamp,
    /// Their database file.
    pub file: PathBuf,
    /// Its size with its write-ahead log, in bytes.
    pub bytes: u64,
    /// The hosts of their buckets (their devices).
    pub hosts: Vec<String>,
    pub buckets: usize,
    /// When their latest data ends.
    pub last: Option<Timestamp>,
    /// Their tokens (in their file).
    pub tokens: usize,
    /// Their tokens the index knows (equal to `tokens` unless tokens were
    /// changed on the file without `--user`).
    pub indexed_tokens: usize,
}

/// What `add` made.
#[derive(Debug, Clone)]
pub struct Added {
    pub name: String,
    pub file: PathBuf,
    /// The first admin token's secret, shown once.
    pub token: String,
}

/// The users of a data folder.
#[derive(Debug)]
pub struct Users {
    root: PathBuf,
    index: UserIndex,
}

impl Users {
    /// The users under `data_dir` (creating the folder and its index).
    pub fn open(data_dir: &Path) -> Result<Users, UsersError> {
        let root = data_dir.join(USERS_FOLDER);
        std::fs::create_dir_all(&root)?;
        let index = UserIndex::open(root.join(INDEX_FILE))?;
        Ok(Users { root, index })
    }

    /// The users' folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The index.
    pub fn index(&self) -> &UserIndex {
        &self.index
    }

    /// The database file of user `name`.
    pub fn file_of(&self, name: &str) -> PathBuf {
        self.root.join(name).join(USER_DB_FILE)
    }

    /// Adds user `name`: their folder, their database (aw-server-rust's
    /// schema), their first admin token made by `make_token` in it, and
    /// the index's entries. Nothing is left behind when a step fails.
    pub fn add(
        &self,
        name: &str,
        make_token: impl FnOnce(&Datastore) -> Result<String, String>,
    ) -> Result<Added, UsersError> {
        let folder = self.free_folder(name)?;
        std::fs::create_dir(&folder)?;
        let made = (|| {
            let file = self.file_of(name);
            let datastore = Datastore::open(&file)?;
            let made = datastore
                .set_owner(name)
                .map_err(UsersError::from)
                .and_then(|()| make_token(&datastore).map_err(UsersError::Token))
                .and_then(|token| {
                    let hashes: Vec<String> = datastore
                        .tokens()?
                        .into_iter()
                        .map(|stored| stored.hash)
                        .collect();
                    Ok((token, hashes))
                });
            datastore.close()?;
            let (token, hashes) = made?;
            if !self.index.add_user(name, Timestamp::now())? {
                return Err(UsersError::Exists(name.to_string()));
            }
            if let Err(other) = self.index.set_token_hashes(name, &hashes)? {
                self.index.remove_user(name)?;
                return Err(UsersError::SharedToken {
                    user: name.to_string(),
                    other,
                });
            }
            Ok(Added {
                name: name.to_string(),
                file,
                token,
            })
        })();
        if made.is_err() {
            if let Err(error) = std::fs::remove_dir_all(&folder) {
                log::warn!(
                    "Could not remove {} after a failed add: {error}",
                    folder.display()
                );
            }
        }
        made
    }

    /// The folder of a new user `name`: a valid name nobody has, and no
    /// such folder yet.
    fn free_folder(&self, name: &str) -> Result<PathBuf, UsersError> {
        check_name(name)?;
        if self.index.user(name)?.is_some() {
            return Err(UsersError::Exists(name.to_string()));
        }
        let folder = self.root.join(name);
        if folder.symlink_metadata().is_ok() {
            return Err(UsersError::FolderExists(folder));
        }
        Ok(folder)
    }

    /// Makes the existing database `file` (with its write-ahead log) the
    /// data of a new user `name`, tokens and all: moved into their
    /// folder, not copied. Refused while a server or command holds it.
    pub fn adopt(&self, name: &str, file: &Path) -> Result<PathBuf, UsersError> {
        let folder = self.free_folder(name)?;
        // Closing checkpoints it, so what moves is whole.
        not_held(file, name)?;
        std::fs::create_dir(&folder)?;
        let target = self.file_of(name);
        let with_suffix = |path: &Path, suffix: &str| {
            let mut name = path.as_os_str().to_owned();
            name.push(suffix);
            PathBuf::from(name)
        };
        for suffix in ["-wal", "-shm"] {
            let side = with_suffix(file, suffix);
            if side.exists() {
                std::fs::rename(&side, with_suffix(&target, suffix))?;
            }
        }
        std::fs::rename(file, &target)?;
        // Their tokens made from now on name them.
        let datastore = Datastore::open(&target)?;
        let owned = datastore.set_owner(name);
        datastore.close()?;
        owned?;
        self.index.add_user(name, Timestamp::now())?;
        self.reindex(name)?;
        Ok(target)
    }

    /// Marks `datastore`, the file of person `name`, as theirs if a
    /// version before owners did not (their tokens made from now on name
    /// them, for a proxy in front of several servers).
    pub fn claim(datastore: &Datastore, name: &str) -> Result<(), UsersError> {
        if datastore.owner()?.is_none() {
            datastore.set_owner(name)?;
        }
        Ok(())
    }

    /// Indexes again the tokens user `name`'s file holds (after tokens
    /// were made or revoked on it).
    pub fn reindex(&self, name: &str) -> Result<(), UsersError> {
        if self.index.user(name)?.is_none() {
            return Err(UsersError::Unknown(name.to_string()));
        }
        let datastore = Datastore::open_read_only(self.file_of(name), None)?;
        let hashes: Result<Vec<String>, DatastoreError> = datastore
            .tokens()
            .map(|tokens| tokens.into_iter().map(|stored| stored.hash).collect());
        datastore.close()?;
        match self.index.set_token_hashes(name, &hashes?)? {
            Ok(()) => Ok(()),
            Err(other) => Err(UsersError::SharedToken {
                user: name.to_string(),
                other,
            }),
        }
    }

    /// Every user with their file's size, hosts, last data and tokens
    /// (read from their files, without locking them).
    pub fn list(&self) -> Result<Vec<UserInfo>, UsersError> {
        self.index
            .users()?
            .into_iter()
            .map(|user| self.info(user))
            .collect()
    }

    fn info(&self, user: IndexedUser) -> Result<UserInfo, UsersError> {
        let file = self.file_of(&user.name);
        let size = |path: &Path| std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let mut wal = file.as_os_str().to_owned();
        wal.push("-wal");
        let bytes = size(&file) + size(Path::new(&wal));
        let (mut hosts, mut buckets, mut last, mut tokens) = (Vec::new(), 0, None, 0);
        if file.exists() {
            let datastore = Datastore::open_read_only(&file, None)?;
            let listed = datastore.buckets().wait()?;
            buckets = listed.len();
            for bucket in listed.values() {
                if !bucket.hostname.is_empty() && !hosts.contains(&bucket.hostname) {
                    hosts.push(bucket.hostname.clone());
                }
                last = last.max(bucket.metadata.end);
            }
            hosts.sort();
            tokens = datastore.tokens()?.len();
            datastore.close()?;
        }
        let indexed_tokens = self.index.token_count(&user.name)?;
        Ok(UserInfo {
            indexed_tokens,
            name: user.name,
            created: user.created,
            file,
            bytes,
            hosts,
            buckets,
            last,
            tokens,
        })
    }

    /// Removes user `name`: out of the index, and their folder moved into
    /// `removed/<name>-<time>` (answered), or deleted with `delete`. A file
    /// a server serves is refused.
    pub fn remove(&self, name: &str, delete: bool) -> Result<Option<PathBuf>, UsersError> {
        if self.index.user(name)?.is_none() {
            return Err(UsersError::Unknown(name.to_string()));
        }
        let folder = self.root.join(name);
        let file = self.file_of(name);
        if file.exists() {
            not_held(&file, name)?;
        }
        let moved = if !folder.exists() {
            None
        } else if delete {
            std::fs::remove_dir_all(&folder)?;
            None
        } else {
            let removed = self.root.join(REMOVED_FOLDER);
            std::fs::create_dir_all(&removed)?;
            let stamp = chrono::Utc::now().format("%Y-%m-%dT%H-%M-%SZ");
            let mut target = removed.join(format!("{name}-{stamp}"));
            let mut n = 2;
            while target.exists() {
                target = removed.join(format!("{name}-{stamp}-{n}"));
                n += 1;
            }
            std::fs::rename(&folder, &target)?;
            Some(target)
        };
        self.index.remove_user(name)?;
        Ok(moved)
    }
}

/// Refuses `file` (user `name`'s) while a server or command holds it:
/// opening takes its lock (and finishes what a crash left in its log),
/// closing gives it back.
fn not_held(file: &Path, name: &str) -> Result<(), UsersError> {
    match Datastore::open(file) {
        Ok(datastore) => Ok(datastore.close()?),
        Err(DatastoreError::InUse(_)) => Err(UsersError::InUse(name.to_string())),
        Err(error) => Err(error.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_made_before_owners_is_claimed_once_and_an_owned_one_never_changes_hands() {
        let folder = tempfile::tempdir().unwrap();
        let datastore = Datastore::open(folder.path().join("old.db")).unwrap();
        assert_eq!(datastore.owner().unwrap(), None);
        Users::claim(&datastore, "alice").unwrap();
        assert_eq!(datastore.owner().unwrap().as_deref(), Some("alice"));
        Users::claim(&datastore, "bob").unwrap();
        assert_eq!(datastore.owner().unwrap().as_deref(), Some("alice"));
        datastore.close().unwrap();
    }

    #[test]
    fn names_are_safe_file_names_everywhere() {
        for good in ["alice", "bob-2", "a", "x_y", "0day", &"a".repeat(MAX_NAME)] {
            check_name(good).unwrap_or_else(|error| panic!("{good}: {error}"));
        }
        for bad in [
            "",
            "Alice",
            "../x",
            "a/b",
            "a\\b",
            ".hidden",
            "-x",
            "_x",
            "a b",
            "ä",
            "a.b",
            &"a".repeat(MAX_NAME + 1),
        ] {
            assert!(
                matches!(check_name(bad), Err(UsersError::InvalidName(_))),
                "{bad:?}"
            );
        }
        for reserved in ["removed", "index", "con", "nul"] {
            assert!(
                matches!(check_name(reserved), Err(UsersError::Reserved(_))),
                "{reserved}"
            );
        }
    }
}
