//! Several machines for a hub (`docs/API.md` §3.18): each person is one
//! database file served by one node, and a proxy (HAProxy) in front of
//! the nodes routes each request by the person its token names
//! (`awt_<person>.…`) through a map file of person to node. A node
//! answers 421 to a person it does not hold, so a stale route never
//! writes to the wrong file.
//!
//! This crate moves a person between nodes ([`move_person`]): frozen on
//! the old node (their requests answer 503 with `Retry-After`, devices
//! retry), their whole file copied to the new one and received there,
//! the proxy's route switched through its runtime API and its map file
//! ([`haproxy`]), and the old node's copy put aside. Any step that fails
//! undoes the ones before: the person is served where they were.
//!
//! The nodes are reached over their HTTP API with the server
//! administrator's key ([`HttpNode`]); a [`Node`] is what a move needs of
//! one, so the steps are tested without a network.

pub mod haproxy;
mod http;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use http::HttpNode;

/// Why a move (or a step of it) failed.
#[derive(Debug, thiserror::Error)]
pub enum NodesError {
    /// A node refused a step (its status and message).
    #[error("{node} answered {status}: {message}")]
    Refused {
        node: String,
        status: u16,
        message: String,
    },
    /// A node did not answer.
    #[error("{node} did not answer: {message}")]
    Unreachable { node: String, message: String },
    /// The move cannot start: nothing was changed.
    #[error("{0}")]
    Refusal(String),
    /// The proxy's runtime API or map file.
    #[error("{0}")]
    Proxy(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// What a move needs of a node.
pub trait Node {
    /// How the node is named in messages (its URL).
    fn name(&self) -> String;
    /// Whether it answers at all.
    fn is_up(&self) -> Result<(), NodesError>;
    /// Whether it holds person `person`.
    fn holds(&self, person: &str) -> Result<bool, NodesError>;
    /// Freezes `person`: answers their file's size.
    fn freeze(&self, person: &str) -> Result<u64, NodesError>;
    /// Ends the freeze of `person`.
    fn thaw(&self, person: &str) -> Result<(), NodesError>;
    /// Writes frozen `person`'s file into `to`, telling `progress` the
    /// bytes so far.
    fn download(
        &self,
        person: &str,
        to: &Path,
        progress: &mut dyn FnMut(u64),
    ) -> Result<u64, NodesError>;
    /// Sends `from` as the file of a new person `person`.
    fn upload(
        &self,
        person: &str,
        from: &Path,
        progress: &mut dyn FnMut(u64),
    ) -> Result<(), NodesError>;
    /// Puts `person`'s file aside and forgets them: answers where it went.
    fn release(&self, person: &str) -> Result<Option<String>, NodesError>;
}

/// The proxy's route of a person: the running proxy's map (through its
/// runtime API) and the map file it loads at a start, either or both.
#[derive(Debug, Clone, Default)]
pub struct Route {
    /// HAProxy's runtime API, and the map as its config names it (the
    /// map file's path there).
    pub runtime: Option<(haproxy::RuntimeApi, String)>,
    /// The map file to rewrite.
    pub map_file: Option<PathBuf>,
    /// The new node's name in the map (its backend's name).
    pub to_backend: String,
    /// The old node's, to put back when a later step fails.
    pub from_backend: Option<String>,
}

impl Route {
    fn switch(&self, person: &str, backend: &str) -> Result<(), NodesError> {
        if let Some((api, map)) = &self.runtime {
            api.set_route(map, person, backend)?;
        }
        if let Some(file) = &self.map_file {
            haproxy::write_route(file, person, backend)?;
        }
        Ok(())
    }
}

/// What a move did, and how long.
#[derive(Debug, Clone, PartialEq)]
pub struct Moved {
    pub person: String,
    pub bytes: u64,
    /// From the freeze until the route pointed at the new node: how long
    /// the person's requests were answered 503.
    pub frozen: Duration,
    /// The whole move.
    pub total: Duration,
    /// Where the old node put their file.
    pub set_aside: Option<String>,
}

/// A step of a move, for a terminal's progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Checking,
    Freezing,
    Copying { done: u64, of: u64 },
    Sending { done: u64, of: u64 },
    Routing,
    Releasing,
}

/// Moves `person` from node `from` to node `to` (see the crate's
/// documentation), keeping the copy in `scratch` (a folder) while it
/// travels. Refused, changing nothing, when `to` is down or holds the
/// person, or `from` does not hold them.
pub fn move_person(
    from: &dyn Node,
    to: &dyn Node,
    route: &Route,
    person: &str,
    scratch: &Path,
    progress: &mut dyn FnMut(Step),
) -> Result<Moved, NodesError> {
    let started = Instant::now();
    progress(Step::Checking);
    let unchanged = |error: NodesError| match error {
        NodesError::Refusal(_) => error,
        other => NodesError::Refusal(format!("{other}: nothing was changed")),
    };
    to.is_up().map_err(unchanged)?;
    if !from.holds(person).map_err(unchanged)? {
        return Err(NodesError::Refusal(format!(
            "{} does not hold '{person}': nothing was changed",
            from.name()
        )));
    }
    if to.holds(person).map_err(unchanged)? {
        return Err(NodesError::Refusal(format!(
            "{} holds '{person}' already: nothing was changed (remove the copy there first, \
             or move them elsewhere)",
            to.name()
        )));
    }
    progress(Step::Freezing);
    let bytes = from.freeze(person)?;
    let frozen_at = Instant::now();
    let copy = scratch.join(format!("{person}.moving.db"));
    let undo = |error: NodesError, sent: bool| -> NodesError {
        log::warn!("The move of '{person}' failed ({error}); undoing it");
        if sent {
            if let Err(undo) = to.release(person) {
                log::error!("Could not take '{person}' off {} again: {undo}", to.name());
            }
        }
        if let Err(undo) = from.thaw(person) {
            log::error!("Could not thaw '{person}' on {}: {undo}", from.name());
        }
        let _ = std::fs::remove_file(&copy);
        error
    };
    let copied = from.download(person, &copy, &mut |done| {
        progress(Step::Copying { done, of: bytes })
    });
    if let Err(error) = copied {
        return Err(undo(error, false));
    }
    if let Err(error) = to.upload(person, &copy, &mut |done| {
        progress(Step::Sending { done, of: bytes })
    }) {
        // An answer lost on the way back: the new node may hold the copy
        // (it held nothing of theirs before), which must not stay there.
        let received =
            matches!(error, NodesError::Unreachable { .. }) && to.holds(person).unwrap_or(false);
        return Err(undo(error, received));
    }
    progress(Step::Routing);
    if let Err(error) = route.switch(person, &route.to_backend) {
        if let Some(back) = &route.from_backend {
            if let Err(again) = route.switch(person, back) {
                log::error!("Could not route '{person}' back to {back}: {again}");
            }
        }
        return Err(undo(error, true));
    }
    let frozen = frozen_at.elapsed();
    progress(Step::Releasing);
    // The new node serves them now: a failure here leaves the old copy
    // frozen (never served), which is said, not undone.
    let set_aside = from.release(person).map_err(|error| {
        NodesError::Refusal(format!(
            "'{person}' is served by {} now, but {} could not put its copy aside ({error}): it \
             stays frozen there; remove it with DELETE /api/0/users/{person}",
            to.name(),
            from.name()
        ))
    })?;
    let _ = std::fs::remove_file(&copy);
    Ok(Moved {
        person: person.to_string(),
        bytes,
        frozen,
        total: started.elapsed(),
        set_aside,
    })
}

#[cfg(test)]
mod tests;
