//! The messages sent from a `Datastore` handle to the worker threads.
//!
//! Every command names its fields and carries its own reply sender typed
//! with exactly what it answers, so a reply of the wrong kind cannot be
//! sent and the caller never matches on a shared response enum. A dropped
//! reply sender (worker gone) reads as `Closed` on the caller's side. A
//! reply goes to a thread blocked in a call, or to an async task awaiting
//! a `Pending` (`pending.rs`).

use aw_models::{
    Bucket, Duration, Event, ProjectedEvents, SettingValue, SharedEvent, Timestamp, UpdateBucket,
};
use crossbeam_channel::Sender;
use std::collections::BTreeMap;

use crate::cleanup::{Change, Chunk, RangeDeletion, RulesMode, RulesOutcome};
use crate::pending::SlotReply;
use crate::sync_folder::{PullCounts, Replacement};
use crate::writes::PreparedEvent;
use crate::{EventQuery, ImportSummary, Result};

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

/// A change to the database; answered only after its batch commits.
#[derive(Debug)]
pub(crate) enum WriteCommand {
    CreateBucket {
        bucket: Bucket,
        reply: Reply<()>,
    },
    DeleteBucket {
        bucket_id: String,
        reply: Reply<()>,
    },
    UpdateBucket {
        bucket_id: String,
        update: UpdateBucket,
        reply: Reply<()>,
    },
    InsertEvents {
        bucket_id: String,
        events: Vec<Event>,
        reply: Reply<Vec<Event>>,
    },
    Heartbeat {
        bucket_id: String,
        heartbeat: Event,
        pulsetime: Duration,
        reply: Reply<Event>,
    },
    DeleteEvent {
        bucket_id: String,
        event_id: i64,
        reply: Reply<bool>,
    },
    ImportBucket {
        bucket: Bucket,
        reply: Reply<ImportSummary>,
    },
    ImportEvents {
        bucket_id: String,
        events: Vec<PreparedEvent>,
        reply: Reply<ImportSummary>,
    },
    SetSetting {
        key: String,
        value: SettingValue,
        reply: Reply<()>,
    },
    DeleteSetting {
        key: String,
        reply: Reply<()>,
    },
    /// Counts what `DeleteRangeChunk`s would do; changes nothing.
    PreviewRange {
        bucket_id: String,
        start: i64,
        end: i64,
        reply: Reply<RangeDeletion>,
    },
    /// One chunk of a range deletion (`cleanup.rs`).
    DeleteRangeChunk {
        bucket_id: String,
        start: i64,
        end: i64,
        reply: Reply<Chunk<RangeDeletion>>,
    },
    /// One chunk of deleting events that ended before `cutoff`.
    ExpireChunk {
        bucket_id: String,
        cutoff: i64,
        reply: Reply<Chunk<u64>>,
    },
    /// One chunk of applying the privacy rules to stored events.
    RulesChunk {
        bucket_id: String,
        after: i64,
        mode: RulesMode,
        reply: Reply<Chunk<RulesOutcome>>,
    },
    /// Stores what the rules decided for some events (judged on a
    /// reader's connection by the caller).
    StoreChanges {
        bucket_id: String,
        changes: Vec<Change>,
        reply: Reply<RulesOutcome>,
    },
    /// One chunk of a pull from a sync folder (`sync_folder/store.rs`).
    PullChunk {
        /// Boxed: a bucket would make every message as large as it.
        target: Box<Bucket>,
        replacements: Vec<Replacement>,
        events: Vec<PreparedEvent>,
        /// The pull's progress, stored with the chunk: key and JSON text.
        progress: Option<(String, String)>,
        reply: Reply<PullCounts>,
    },
    /// Gives up to `pages` free pages back to the file system.
    ReleasePages {
        pages: i64,
        reply: Reply<i64>,
    },
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

/// Everything the writer thread receives.
#[derive(Debug)]
pub(crate) enum WorkerMessage {
    Write(WriteCommand),
    /// Only for in-memory databases, which have no reader threads.
    Read(ReadCommand),
    /// Commit and fsync what was acknowledged so far.
    ForceCommit {
        reply: Reply<()>,
    },
    /// Commit, fsync, stop the readers and the worker.
    Close {
        reply: Reply<()>,
    },
    /// Commits, then rebuilds the file with `VACUUM` (turning incremental
    /// vacuum on), outside any transaction.
    Vacuum {
        reply: Reply<()>,
    },
    /// Answers at once; tells `health` the worker is alive.
    Ping {
        reply: Reply<()>,
    },
    /// Test hook: make the next `count` commits fail as an I/O error would.
    #[cfg(test)]
    FailCommits {
        count: u32,
        reply: Reply<()>,
    },
    /// Test hook: the worker panics, as a bug would make it.
    #[cfg(test)]
    Panic,
    /// Test hook: cap the file at `pages` pages (`PRAGMA max_page_count`),
    /// so growing it fails with `SQLITE_FULL` as a full disk would.
    #[cfg(test)]
    LimitPages {
        pages: i64,
        reply: Reply<i64>,
    },
    /// Test hook: whether readers know a bucket's facts (`stats.rs`).
    #[cfg(test)]
    StatsKnown {
        bucket_id: String,
        reply: Reply<bool>,
    },
}
