//! The query2 language.
//!
//! API STUB: the signatures below are the contract the server codes
//! against; the implementation is being written.

use aw_models::{Event, TimeInterval};

/// How the interpreter reaches stored events; implemented by
/// `aw_datastore::Datastore` and by in-memory sources in tests.
pub trait EventSource {
    /// Events of `bucket_id` overlapping `interval`, clipped, newest first.
    fn query_bucket(&self, bucket_id: &str, interval: &TimeInterval) -> Result<Vec<Event>, String>;
    /// `(id, hostname)` of every bucket.
    fn buckets(&self) -> Result<Vec<(String, String)>, String>;
    /// Number of events of `bucket_id` overlapping `interval`.
    fn count_events(&self, bucket_id: &str, interval: &TimeInterval) -> Result<u64, String>;
}

/// A failed query: what went wrong and where.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct QueryError {
    /// Human-readable description.
    pub message: String,
}

/// Runs `program` once per period; one JSON result per period.
#[allow(unused_variables, clippy::todo)]
pub fn query(
    program: &str,
    timeperiods: &[TimeInterval],
    source: &dyn EventSource,
) -> Result<Vec<serde_json::Value>, QueryError> {
    todo!()
}
