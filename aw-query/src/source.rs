//! How the interpreter reaches stored events: the [`EventSource`] trait,
//! its implementation for the datastore, and [`MemorySource`] for tests and
//! benchmarks.
//!
//! Sources hand out [`SharedEvent`]s: the datastore decodes each distinct
//! data text of a read once (`Datastore::events_as` in the shape `Shared`), and the memory
//! source keeps its events shared, so a read copies 40 bytes and a pointer
//! per event rather than a JSON object.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use aw_datastore::{Datastore, DatastoreError, EventQuery};
use aw_models::{Event, EventData, ProjectedEvents, Projector, SharedEvent, TimeInterval};

/// Why an [`EventSource`] call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// The bucket does not exist.
    #[error("there is no bucket '{0}'")]
    NoSuchBucket(String),
    /// Anything else (storage failure, closed store).
    #[error("{0}")]
    Failed(String),
}

/// The bucket `find_bucket(filter[, hostname])` picks from `buckets`
/// (`(id, hostname)` pairs): the one named `filter` exactly, else the
/// first id starting with it, on `hostname` if given.
pub(crate) fn pick_bucket(
    buckets: &[(String, String)],
    filter: &str,
    hostname: Option<&str>,
) -> Option<String> {
    let candidates = buckets
        .iter()
        .filter(|(id, host)| id.starts_with(filter) && hostname.is_none_or(|h| h == host))
        .map(|(id, _)| id);
    if candidates.clone().any(|id| id == filter) {
        return Some(filter.to_string());
    }
    candidates.min().cloned()
}

/// Reads started before the interpreter asks for them
/// (`crate::prefetch`): a call that reads a bucket takes the read from
/// here if there is one for its bucket, period and keys, and reads the
/// source otherwise.
pub(crate) trait ReadsAhead {
    /// The read of every key of `bucket` for `interval`, if one started
    /// (each is handed out once).
    fn take(
        &mut self,
        bucket: &str,
        interval: &TimeInterval,
    ) -> Option<Result<Vec<SharedEvent>, SourceError>>;

    /// The read of `keys` of `bucket` for `interval`, if one started.
    fn take_projected(
        &mut self,
        bucket: &str,
        interval: &TimeInterval,
        keys: &[String],
    ) -> Option<Result<ProjectedEvents, SourceError>>;
}

/// How the interpreter reaches buckets; implemented by
/// `aw_datastore::Datastore` and by in-memory sources in tests.
///
/// Sources are `Sync`: a query runs several periods on threads of its own.
pub trait EventSource: Sync {
    /// Events of `bucket_id` overlapping `interval` (inclusive), clipped to
    /// it, newest first: what `GET .../events?start=&end=` returns.
    fn query_bucket(
        &self,
        bucket_id: &str,
        interval: &TimeInterval,
    ) -> Result<Vec<SharedEvent>, SourceError>;
    /// `(id, hostname)` of every bucket.
    fn buckets(&self) -> Result<Vec<(String, String)>, SourceError>;
    /// Number of events of `bucket_id` overlapping `interval` (inclusive).
    fn count_events(&self, bucket_id: &str, interval: &TimeInterval) -> Result<u64, SourceError>;

    /// [`EventSource::query_bucket`] with each event's data reduced to
    /// `keys` and the class of its whole data beside it (see
    /// [`ProjectedEvents`]), for a program that can only observe those keys.
    /// By default the whole read, reduced afterwards; the datastore
    /// reduces each stored text as it decodes it, and answers a short
    /// read whole, with no classes.
    fn query_bucket_projected(
        &self,
        bucket_id: &str,
        interval: &TimeInterval,
        keys: &[String],
    ) -> Result<ProjectedEvents, SourceError> {
        let mut events = self.query_bucket(bucket_id, interval)?;
        let mut reducer = Projector::new(keys);
        // Each distinct object is reduced once, found by address (the
        // read holds every object, so addresses are unique).
        let mut done: HashMap<usize, (Arc<EventData>, u32)> = HashMap::new();
        let mut classes = Vec::with_capacity(events.len());
        for event in &mut events {
            let (data, class) = done
                .entry(Arc::as_ptr(&event.data) as usize)
                .or_insert_with(|| reducer.reduce(EventData::clone(&event.data)))
                .clone();
            event.data = data;
            classes.push(class);
        }
        Ok(ProjectedEvents { events, classes })
    }
}

fn source_error(error: DatastoreError) -> SourceError {
    match error {
        DatastoreError::NoSuchBucket(bucket) => SourceError::NoSuchBucket(bucket),
        other => SourceError::Failed(other.to_string()),
    }
}

impl EventSource for Datastore {
    fn query_bucket(
        &self,
        bucket_id: &str,
        interval: &TimeInterval,
    ) -> Result<Vec<SharedEvent>, SourceError> {
        let query = EventQuery {
            start: Some(interval.start),
            end: Some(interval.end),
            limit: None,
        };
        self.events_as(bucket_id, query, aw_datastore::Shared)
            .wait()
            .map_err(source_error)
    }

    fn query_bucket_projected(
        &self,
        bucket_id: &str,
        interval: &TimeInterval,
        keys: &[String],
    ) -> Result<ProjectedEvents, SourceError> {
        let query = EventQuery {
            start: Some(interval.start),
            end: Some(interval.end),
            limit: None,
        };
        self.events_as(bucket_id, query, aw_datastore::Projected(keys.to_vec()))
            .wait()
            .map_err(source_error)
    }

    fn buckets(&self) -> Result<Vec<(String, String)>, SourceError> {
        Ok(Datastore::buckets(self)
            .wait()
            .map_err(source_error)?
            .into_iter()
            .map(|(id, bucket)| (id, bucket.hostname))
            .collect())
    }

    fn count_events(&self, bucket_id: &str, interval: &TimeInterval) -> Result<u64, SourceError> {
        Datastore::count_events(self, bucket_id, Some(interval.start), Some(interval.end))
            .wait()
            .map_err(source_error)
    }
}

/// Buckets held in memory with the datastore's selection rules: events
/// overlapping the interval inclusively, clipped to it, newest first.
#[derive(Debug, Clone, Default)]
pub struct MemorySource {
    buckets: BTreeMap<String, (String, Vec<SharedEvent>)>,
}

impl MemorySource {
    /// No buckets.
    pub fn new() -> MemorySource {
        MemorySource::default()
    }

    /// Adds (or replaces) a bucket. Events with equal data share it, as
    /// they do when read from the datastore.
    pub fn insert(&mut self, bucket_id: &str, hostname: &str, events: Vec<Event>) {
        let mut seen: HashMap<String, Arc<EventData>> = HashMap::new();
        let events = events
            .into_iter()
            .map(|event| {
                // Keyed by the JSON text, as the datastore interns by the
                // stored text.
                let text = serde_json::to_string(&event.data).unwrap_or_default();
                let data = seen
                    .entry(text)
                    .or_insert_with(|| Arc::new(event.data.into()))
                    .clone();
                SharedEvent {
                    id: event.id,
                    timestamp: event.timestamp,
                    duration: event.duration,
                    data,
                }
            })
            .collect();
        self.buckets
            .insert(bucket_id.to_string(), (hostname.to_string(), events));
    }

    fn overlapping<'a>(
        &'a self,
        bucket_id: &str,
        interval: &'a TimeInterval,
    ) -> Result<impl Iterator<Item = &'a SharedEvent> + 'a, SourceError> {
        let (_, events) = self
            .buckets
            .get(bucket_id)
            .ok_or_else(|| SourceError::NoSuchBucket(bucket_id.to_string()))?;
        Ok(events
            .iter()
            .filter(|e| e.end() >= interval.start && e.timestamp <= interval.end))
    }
}

impl EventSource for MemorySource {
    fn query_bucket(
        &self,
        bucket_id: &str,
        interval: &TimeInterval,
    ) -> Result<Vec<SharedEvent>, SourceError> {
        let mut events: Vec<SharedEvent> = self
            .overlapping(bucket_id, interval)?
            .map(|event| {
                let mut event = event.clone();
                let end = event.end().min(interval.end);
                event.timestamp = event.timestamp.max(interval.start);
                event.set_end(end.max(event.timestamp));
                event
            })
            .collect();
        events.sort_by(|a, b| b.timestamp.cmp(&a.timestamp).then(b.id.cmp(&a.id)));
        Ok(events)
    }

    fn buckets(&self) -> Result<Vec<(String, String)>, SourceError> {
        Ok(self
            .buckets
            .iter()
            .map(|(id, (hostname, _))| (id.clone(), hostname.clone()))
            .collect())
    }

    fn count_events(&self, bucket_id: &str, interval: &TimeInterval) -> Result<u64, SourceError> {
        Ok(self.overlapping(bucket_id, interval)?.count() as u64)
    }
}
