//! A person moving to another server (a node behind the same proxy):
//! their file frozen here while a copy is made, and the copy received
//! there. The steps in between (the copy's transfer, the proxy's route)
//! are the caller's; this module keeps the files right.
//!
//! Frozen is a marker file in the person's folder (`moving`), so a node
//! restarted in the middle of a move stays frozen until the move is
//! finished (the person removed here) or given up (`thaw`): it never
//! serves a file whose copy another node may be serving already.

use std::path::{Path, PathBuf};

use aw_datastore::{Datastore, DatastoreError};

use crate::{check_name, not_held, Users, UsersError};

/// The marker of a frozen person, in their folder.
pub const MOVING_MARKER: &str = "moving";
/// The prefix of a copy being received, in the users' folder (no
/// person's name starts with a dot).
const INCOMING_PREFIX: &str = ".incoming-";

impl Users {
    /// Freezes person `name` for a move: marked, so a server serves
    /// them no more until `thaw`. Their file must be closed by its
    /// server before the copy is read ([`Users::frozen_file`]).
    pub fn freeze(&self, name: &str) -> Result<(), UsersError> {
        self.known(name)?;
        std::fs::write(self.marker(name), b"moving to another node\n")?;
        Ok(())
    }

    /// Ends a freeze (a move given up); nothing when not frozen.
    pub fn thaw(&self, name: &str) -> Result<(), UsersError> {
        self.known(name)?;
        match std::fs::remove_file(self.marker(name)) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error.into()),
            _ => Ok(()),
        }
    }

    /// Whether `name` is frozen (a marker in their folder).
    pub fn is_frozen(&self, name: &str) -> bool {
        self.marker(name).exists()
    }

    /// The frozen people (read at a start).
    pub fn frozen(&self) -> Result<Vec<String>, UsersError> {
        Ok(self
            .index()
            .users()?
            .into_iter()
            .map(|user| user.name)
            .filter(|name| self.is_frozen(name))
            .collect())
    }

    /// The file of frozen person `name`, whole: refused unless frozen and
    /// closed by every server (its log is then checkpointed into it).
    pub fn frozen_file(&self, name: &str) -> Result<PathBuf, UsersError> {
        self.known(name)?;
        if !self.is_frozen(name) {
            return Err(UsersError::NotFrozen(name.to_string()));
        }
        let file = self.file_of(name);
        not_held(&file, name)?;
        Ok(file)
    }

    /// A place in the users' folder (the same file system as their
    /// folders) to write an incoming copy of `name`'s file into.
    pub fn incoming_path(&self, name: &str) -> Result<PathBuf, UsersError> {
        check_name(name)?;
        let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.f");
        Ok(self
            .root()
            .join(format!("{INCOMING_PREFIX}{name}-{stamp}.db")))
    }

    /// Makes the copy `incoming` (written at [`Users::incoming_path`]) the
    /// file of a new person `name` here, tokens and all, after checking
    /// it opens as a database of this format. On any refusal the copy is
    /// deleted and nothing else changed.
    pub fn receive(&self, name: &str, incoming: &Path) -> Result<PathBuf, UsersError> {
        let received = (|| {
            check_name(name)?;
            if self.index().user(name)?.is_some() {
                return Err(UsersError::Exists(name.to_string()));
            }
            match Datastore::open_read_only(incoming, None) {
                Ok(datastore) => datastore.close()?,
                Err(error @ (DatastoreError::InUse(_) | DatastoreError::Io(_))) => {
                    return Err(error.into())
                }
                Err(error) => return Err(UsersError::NotADatabase(error.to_string())),
            }
            self.adopt(name, incoming)
        })();
        if received.is_err() {
            remove_quietly(incoming);
        }
        received
    }

    fn known(&self, name: &str) -> Result<(), UsersError> {
        match self.index().user(name)? {
            Some(_) => Ok(()),
            None => Err(UsersError::Unknown(name.to_string())),
        }
    }

    fn marker(&self, name: &str) -> PathBuf {
        self.root().join(name).join(MOVING_MARKER)
    }
}

/// Removes `file` and its log files, if there; a failure is logged.
fn remove_quietly(file: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut name = file.as_os_str().to_owned();
        name.push(suffix);
        let path = PathBuf::from(name);
        if let Err(error) = std::fs::remove_file(&path) {
            if error.kind() != std::io::ErrorKind::NotFound {
                log::warn!("Could not remove {}: {error}", path.display());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(datastore: &Datastore) -> Result<String, String> {
        let _ = datastore;
        Ok("secret".to_string())
    }

    #[test]
    fn a_frozen_file_moves_whole_to_another_folder_and_is_refused_twice() {
        let (here, there) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (from, to) = (
            Users::open(here.path()).unwrap(),
            Users::open(there.path()).unwrap(),
        );
        from.add("alice", token).unwrap();
        assert!(matches!(
            from.frozen_file("alice"),
            Err(UsersError::NotFrozen(_))
        ));
        from.freeze("alice").unwrap();
        assert_eq!(from.frozen().unwrap(), ["alice"]);
        let file = from.frozen_file("alice").unwrap();
        let incoming = to.incoming_path("alice").unwrap();
        std::fs::copy(&file, &incoming).unwrap();
        let received = to.receive("alice", &incoming).unwrap();
        assert_eq!(received, to.file_of("alice"));
        assert!(!to.is_frozen("alice"), "the marker is the old node's");
        let datastore = Datastore::open_read_only(&received, None).unwrap();
        assert_eq!(datastore.owner().unwrap().as_deref(), Some("alice"));
        datastore.close().unwrap();

        // Received twice: refused, and the second copy gone.
        let again = to.incoming_path("alice").unwrap();
        std::fs::copy(&file, &again).unwrap();
        assert!(matches!(
            to.receive("alice", &again),
            Err(UsersError::Exists(_))
        ));
        assert!(!again.exists());
        // Not a database: refused, nothing kept.
        let junk = to.incoming_path("bob").unwrap();
        std::fs::write(&junk, b"not a database at all").unwrap();
        assert!(matches!(
            to.receive("bob", &junk),
            Err(UsersError::NotADatabase(_))
        ));
        assert!(!junk.exists());
        assert!(to.index().user("bob").unwrap().is_none());

        from.thaw("alice").unwrap();
        assert!(from.frozen().unwrap().is_empty());
        assert!(matches!(from.freeze("carol"), Err(UsersError::Unknown(_))));
    }
}
