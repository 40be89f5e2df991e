//! Storage of buckets, events and settings in one SQLite file.
//!
//! API STUB: the signatures below are the contract other crates code
//! against; the implementation is being written.

mod error;

use std::collections::BTreeMap;
use std::path::Path;

use aw_models::{Bucket, Duration, Event, SettingValue, Timestamp};

pub use error::DatastoreError;

/// Result of every datastore call.
pub type Result<T> = std::result::Result<T, DatastoreError>;

/// Which events `Datastore::events` returns (spec §3.3).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EventQuery {
    /// Keep events ending at or after this (inclusive); clip starts to it.
    pub start: Option<Timestamp>,
    /// Keep events starting at or before this (inclusive); clip ends to it.
    pub end: Option<Timestamp>,
    /// Keep only the newest `limit` events.
    pub limit: Option<usize>,
}

/// What an import did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportSummary {
    /// Buckets created.
    pub buckets_created: u64,
    /// Events stored.
    pub inserted: u64,
    /// Events skipped because an identical one was already in the bucket.
    pub skipped: u64,
}

/// Cheap, cloneable handle to the storage worker.
#[derive(Debug, Clone)]
pub struct Datastore {}

#[allow(unused_variables, clippy::todo)]
impl Datastore {
    /// Opens (creating and migrating as needed) the database file.
    pub fn open(path: impl AsRef<Path>) -> Result<Datastore> {
        todo!()
    }
    /// A fresh database that lives only as long as the handles (tests).
    pub fn open_in_memory() -> Result<Datastore> {
        todo!()
    }
    /// Ok while the worker runs; `Closed` once it has stopped.
    pub fn health(&self) -> Result<()> {
        todo!()
    }
    /// Every bucket by id, with `metadata` filled in and `events: None`.
    pub fn buckets(&self) -> Result<BTreeMap<String, Bucket>> {
        todo!()
    }
    /// One bucket, with `metadata`.
    pub fn bucket(&self, bucket_id: &str) -> Result<Bucket> {
        todo!()
    }
    /// Creates a bucket (`created` defaults to now); inserts `bucket.events` if any.
    pub fn create_bucket(&self, bucket: Bucket) -> Result<()> {
        todo!()
    }
    /// Deletes a bucket and all its events.
    pub fn delete_bucket(&self, bucket_id: &str) -> Result<()> {
        todo!()
    }
    /// Inserts events; an event with an `id` of this bucket replaces it.
    /// Returns the stored events with their ids.
    pub fn insert_events(&self, bucket_id: &str, events: Vec<Event>) -> Result<Vec<Event>> {
        todo!()
    }
    /// Merges a heartbeat (spec §4); returns the stored event with its id.
    pub fn heartbeat(
        &self,
        bucket_id: &str,
        heartbeat: Event,
        pulsetime: Duration,
    ) -> Result<Event> {
        todo!()
    }
    /// Events newest first, selected and clipped per spec §3.3.
    pub fn events(&self, bucket_id: &str, query: EventQuery) -> Result<Vec<Event>> {
        todo!()
    }
    /// Events of a bucket, unclipped, newest first (starttime, then id,
    /// descending), `limit` at a time: pass the last event of the previous
    /// page as `after`. For exports in bounded memory.
    pub fn events_page(
        &self,
        bucket_id: &str,
        after: Option<&Event>,
        limit: usize,
    ) -> Result<Vec<Event>> {
        todo!()
    }
    /// One event of the bucket; `NoSuchEvent` if missing or in another bucket.
    pub fn event(&self, bucket_id: &str, event_id: i64) -> Result<Event> {
        todo!()
    }
    /// Deletes one event; an id not in this bucket changes nothing.
    /// Returns whether an event was deleted.
    pub fn delete_event(&self, bucket_id: &str, event_id: i64) -> Result<bool> {
        todo!()
    }
    /// Number of events overlapping `[start, end]` (inclusive, as `events`).
    pub fn count_events(
        &self,
        bucket_id: &str,
        start: Option<Timestamp>,
        end: Option<Timestamp>,
    ) -> Result<u64> {
        todo!()
    }
    /// Import merge (spec §5): creates the bucket if missing, then adds each
    /// event unless an identical one (timestamp, duration, data) is stored.
    /// Imported ids are ignored: events get fresh ids.
    pub fn import_bucket(&self, bucket: Bucket) -> Result<ImportSummary> {
        todo!()
    }
    /// The merge step of `import_bucket` for one more chunk of events of an
    /// existing bucket (streaming imports).
    pub fn import_events(&self, bucket_id: &str, events: Vec<Event>) -> Result<ImportSummary> {
        todo!()
    }
    /// Every setting.
    pub fn settings(&self) -> Result<BTreeMap<String, SettingValue>> {
        todo!()
    }
    /// One setting, `None` if unset.
    pub fn setting(&self, key: &str) -> Result<Option<SettingValue>> {
        todo!()
    }
    /// Stores a setting, replacing an earlier value.
    pub fn set_setting(&self, key: &str, value: SettingValue) -> Result<()> {
        todo!()
    }
    /// Deletes a setting; deleting an unset key is fine.
    pub fn delete_setting(&self, key: &str) -> Result<()> {
        todo!()
    }
    /// Commits and syncs everything acknowledged so far to disk.
    pub fn force_commit(&self) -> Result<()> {
        todo!()
    }
    /// Commits, syncs and stops the worker; later calls return `Closed`.
    pub fn close(&self) -> Result<()> {
        todo!()
    }
}
