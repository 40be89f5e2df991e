//! The read commands sent from a `Datastore` handle to the reader
//! threads, and the reply every command carries. (The writer's messages
//! are `worker.rs`'s.)
//!
//! Every command names its fields and carries its own reply sender typed
//! with exactly what it answers, so a reply of the wrong kind cannot be
//! sent and the caller never matches on a shared response enum. A dropped
//! reply sender (worker gone) reads as `Closed` on the caller's side. A
//! reply goes to a thread blocked in a call, or to an async task awaiting
//! a `Pending` (`pending.rs`).

use aw_models::{Bucket, Event, ProjectedEvents, SettingValue, SharedEvent, Timestamp};
use crossbeam_channel::Sender;
use std::collections::BTreeMap;

use crate::pending::SlotReply;
use crate::{EventQuery, Result};

/// Where a command sends its answer.
#[derive(Debug)]
pub(crate) enum Reply<T> {
    /// A thread waiting in `Datastore::wait`.
    Thread(Sender<Result<T>>),
    /// A task awaiting a `Pending`.
    Task(SlotReply<T>),
}

impl<T> Reply<T> {
    /// Sends the answer; a caller that stopped waiting is no concern of
    /// the worker.
    pub(crate) fn send(self, answer: Result<T>) {
        match self {
            Reply::Thread(sender) => {
                let _ = sender.send(answer);
            }
            Reply::Task(slot) => slot.send(answer),
        }
    }
}

/// A question about committed data.
#[derive(Debug)]
pub(crate) enum ReadCommand {
    Buckets {
        reply: Reply<BTreeMap<String, Bucket>>,
    },
    Bucket {
        bucket_id: String,
        reply: Reply<Bucket>,
    },
    Events {
        bucket_id: String,
        query: EventQuery,
        reply: Reply<Vec<Event>>,
    },
    SharedEvents {
        bucket_id: String,
        query: EventQuery,
        reply: Reply<Vec<SharedEvent>>,
    },
    ProjectedEvents {
        bucket_id: String,
        query: EventQuery,
        /// Only these data keys, with each event's class.
        keys: Vec<String>,
        reply: Reply<ProjectedEvents>,
    },
    EventsJson {
        bucket_id: String,
        query: EventQuery,
        reply: Reply<Vec<u8>>,
    },
    EventsPage {
        bucket_id: String,
        after: Option<(Timestamp, i64)>,
        limit: usize,
        reply: Reply<Vec<Event>>,
    },
    Event {
        bucket_id: String,
        event_id: i64,
        reply: Reply<Event>,
    },
    Count {
        bucket_id: String,
        start: Option<Timestamp>,
        end: Option<Timestamp>,
        reply: Reply<u64>,
    },
    Settings {
        reply: Reply<BTreeMap<String, SettingValue>>,
    },
    Setting {
        key: String,
        reply: Reply<Option<SettingValue>>,
    },
}
