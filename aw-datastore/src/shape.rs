//! The shapes an event read answers in ([`Datastore::events_as`]): the
//! same selection and clipping (`docs/API.md` §3.3), four ways to carry
//! the result. Each shape names its output type and the read command
//! that produces it; the choice is made by type, so a caller cannot ask
//! for one shape and be handed another.
//!
//! [`Datastore::events_as`]: crate::Datastore::events_as

use aw_models::{Event, ProjectedEvents, SharedEvent};

use crate::commands::{ReadCommand, Reply};
use crate::route::OnCaller;
use crate::EventQuery;

/// A shape of an event read; implemented by [`Whole`], [`Shared`],
/// [`Projected`] and [`Json`] only.
/// What each answers is its `Output`.
pub trait Shape: sealed::Sealed {}

/// Every event whole, as the API's model ([`Event`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Whole;

/// Events whose stored data text is the same share one decoded object
/// ([`SharedEvent`]), so a long read costs one parse and one allocation
/// per distinct data, not per event: for the query language, which reads
/// whole years at a time.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shared;

/// [`Shared`] with each event's data reduced to these keys, equal reduced
/// objects shared, and the class of each event's whole data beside it
/// ([`ProjectedEvents`]): the read of a query that can only observe those
/// keys. Each distinct stored text is reduced as it is decoded. A read
/// expected to be short (its rows not decoded on a second thread) gives
/// its objects whole and no classes, which costs less than reducing them.
#[derive(Debug, Clone, Default)]
pub struct Projected(pub Vec<String>);

/// The JSON array the API answers with, each event's stored data text
/// copied in after validation, not decoded and encoded again: for
/// listings of thousands of events that is most of their cost. Rows whose
/// data is not a JSON object are left out, as the other shapes leave them
/// out. Awaited, a listing estimated at under [`crate::SMALL_READ`]
/// events runs on the awaiting thread.
#[derive(Debug, Clone, Copy, Default)]
pub struct Json;

impl Shape for Whole {}

impl Shape for Shared {}

impl Shape for Projected {}

impl Shape for Json {}

/// How a shape is read: the command that answers it and where it may
/// run. Opaque: only this crate's shapes make one.
pub struct Recipe<T> {
    keys: Vec<String>,
    short_on_caller: bool,
    make: fn(String, EventQuery, Vec<String>, Reply<T>) -> ReadCommand,
}

impl<T> std::fmt::Debug for Recipe<T> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Recipe")
            .field("keys", &self.keys)
            .field("short_on_caller", &self.short_on_caller)
            .finish()
    }
}

impl<T> Recipe<T> {
    /// Where a read of `query` in `bucket_id` may run.
    pub(crate) fn on_caller(&self, bucket_id: &str, query: EventQuery) -> OnCaller {
        if self.short_on_caller {
            OnCaller::IfShort(bucket_id.to_string(), query)
        } else {
            OnCaller::Never
        }
    }

    /// The command that reads `bucket_id` by `query` and answers `reply`.
    pub(crate) fn command(
        self,
        bucket_id: String,
        query: EventQuery,
        reply: Reply<T>,
    ) -> ReadCommand {
        (self.make)(bucket_id, query, self.keys, reply)
    }
}

pub(crate) mod sealed {
    use super::Recipe;

    /// What the datastore needs of a shape; outside this crate it cannot
    /// be named, so no other shape exists.
    pub trait Sealed: Sized {
        /// What the read answers.
        type Output: Send + 'static;

        /// How it is read.
        fn recipe(self) -> Recipe<Self::Output>;
    }
}

impl sealed::Sealed for Whole {
    type Output = Vec<Event>;
    fn recipe(self) -> Recipe<Vec<Event>> {
        Recipe {
            keys: Vec::new(),
            short_on_caller: false,
            make: |bucket_id, query, _, reply| ReadCommand::Events {
                bucket_id,
                query,
                reply,
            },
        }
    }
}

impl sealed::Sealed for Shared {
    type Output = Vec<SharedEvent>;
    fn recipe(self) -> Recipe<Vec<SharedEvent>> {
        Recipe {
            keys: Vec::new(),
            short_on_caller: false,
            make: |bucket_id, query, _, reply| ReadCommand::SharedEvents {
                bucket_id,
                query,
                reply,
            },
        }
    }
}

impl sealed::Sealed for Projected {
    type Output = ProjectedEvents;
    fn recipe(self) -> Recipe<ProjectedEvents> {
        Recipe {
            keys: self.0,
            short_on_caller: false,
            make: |bucket_id, query, keys, reply| ReadCommand::ProjectedEvents {
                bucket_id,
                query,
                keys,
                reply,
            },
        }
    }
}

impl sealed::Sealed for Json {
    type Output = Vec<u8>;
    fn recipe(self) -> Recipe<Vec<u8>> {
        Recipe {
            keys: Vec::new(),
            short_on_caller: true,
            make: |bucket_id, query, _, reply| ReadCommand::EventsJson {
                bucket_id,
                query,
                reply,
            },
        }
    }
}
