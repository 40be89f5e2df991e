//! Wire types of the ActivityWatch API, and the compact event data of the
//! query path.
//!
//! The wire types are the JSON shapes of `docs/API.md` §2 and §5:
//! [`Event`], [`Bucket`], the export document, the query request, server
//! info. This crate also owns validation of what a client may send:
//! timestamps and durations are kept as nanosecond integers
//! ([`Timestamp`], [`Duration`]) so every value that passes
//! deserialization fits the store's `i64` columns.
//!
//! The compact event data ([`EventData`], [`SharedEvent`], and
//! [`Projector`] for reads of only some keys) is not a wire type: it is how
//! the query path holds events in memory. It lives here because
//! `aw-datastore` produces it as it decodes stored rows and `aw-query`
//! consumes it, and this is the one crate both depend on.
//!
//! It does no I/O and knows nothing of SQL, HTTP or the query language.

mod bucket;
mod data;
mod error;
mod event;
mod export;
mod forward;
mod hosts;
mod info;
mod projection;
mod query;
mod reports;
mod shared;
pub mod summary;
mod sync;
mod time;
mod token;

pub use bucket::{
    check_bucket_id, is_hostless, is_own_bucket, Bucket, BucketMetadata, CreateBucket,
    UpdateBucket, ORIGIN_KEY, SYNCED_FROM,
};
pub use data::{hash_json, EventData, SharedEntries, StringPool};
pub use error::ModelError;
pub use event::Event;
pub use export::ExportDocument;
pub use forward::{
    ForwardChunk, ForwardState, ForwardedEvent, ForwardingDevice, StartSpan, TailEvent,
    MAX_FORWARD_EVENTS,
};
pub use hosts::{
    AliasRequest, BucketAction, HostInfo, HostReport, MergeRequest, PlannedBucket, RenameRequest,
};
pub use info::ServerInfo;
pub use projection::{ProjectedEvents, Projector};
pub use query::{QueryRequest, TimeInterval};
pub use reports::{
    Expired, ImportSummary, PullCounts, RangeDeletion, RulesOutcome, RulesReport,
    IMPORT_SUMMARY_HEADER,
};
pub use shared::{empty_data, SharedEvent};
pub use sync::{
    ForwardReport, HubPass, HubStatus, PassReport, PullReport, PushReport, Skipped, SkippedBucket,
    SourceReport, SyncMode, SyncStatus,
};
pub use time::{Duration, Timestamp};
pub use token::{
    check_token_name, parse_expiry, AccessInfo, AccessScope, CreatedToken, NewToken, Scope,
    TokenInfo, MAX_TOKEN_HOSTS, MAX_TOKEN_NAME,
};

/// The JSON object type used for event and bucket `data`.
pub type Data = serde_json::Map<String, serde_json::Value>;

/// A settings value: any JSON value (`docs/API.md` §3.7).
pub type SettingValue = serde_json::Value;
