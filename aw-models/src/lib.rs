//! Wire types of the ActivityWatch API, shared by every other crate.
//!
//! This crate owns the JSON shapes of `../shared/spec/api.md` §2 and §5:
//! [`Event`], [`Bucket`], the export document, the query request, server
//! info. It also owns validation of what a client may send: timestamps and
//! durations are kept as nanosecond integers ([`Timestamp`], [`Duration`]) so
//! every value that passes deserialization fits the store's `i64` columns.
//! It does no I/O and knows nothing of SQL, HTTP or the query language.

mod bucket;
mod data;
mod error;
mod event;
mod export;
mod info;
mod projection;
mod query;
mod shared;
mod time;

pub use bucket::{Bucket, BucketMetadata, CreateBucket};
pub use data::{hash_json, EventData, SharedEntries, StringPool};
pub use error::ModelError;
pub use event::Event;
pub use export::ExportDocument;
pub use info::ServerInfo;
pub use projection::{ProjectedEvents, Projector};
pub use query::{QueryRequest, TimeInterval};
pub use shared::{empty_data, SharedEvent};
pub use time::{Duration, Timestamp};

/// The JSON object type used for event and bucket `data`.
pub type Data = serde_json::Map<String, serde_json::Value>;

/// A settings value: any JSON value (§3.7).
pub type SettingValue = serde_json::Value;
