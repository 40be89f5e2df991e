//! Forwarding to a hub (`docs/API.md` §11): what a device sends of its
//! own buckets (`ForwardChunk`) and what the hub keeps of each
//! (`ForwardState`), the cursor a device resumes from.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::{Bucket, Timestamp};

/// Most events one chunk may carry (the hub refuses more).
pub const MAX_FORWARD_EVENTS: usize = 5_000;

/// One event as forwarded: its id on the device, exact times and the data
/// object as the device stores it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ForwardedEvent {
    /// The event's id on the device (not on the hub).
    pub id: i64,
    /// Start.
    pub start: Timestamp,
    /// End (not before `start`).
    pub end: Timestamp,
    /// The data object, as stored JSON text.
    pub data: Box<RawValue>,
}

/// A span of event start times, both ends included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartSpan {
    /// First start of the span.
    pub first: Timestamp,
    /// Last start of the span.
    pub last: Timestamp,
}

/// One chunk of a device's bucket, applied by the hub in one transaction.
///
/// Either it adds (`events` with ids above `after`, and the newest events
/// as they are now, `tail`), or it replaces a span of history
/// (`window`: the hub's copy's events starting in it become `events`).
/// The last chunk of a comparison carries the device's change counter
/// (`changes`), and after a whole-bucket comparison the new cursor
/// (`high_water`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ForwardChunk {
    /// The bucket as the device has it (its events are ignored).
    pub bucket: Bucket,
    /// The cursor the device saw in the hub's state: the events are those
    /// with ids above it.
    #[serde(default)]
    pub after: i64,
    /// New events in id order, or a window's events.
    #[serde(default)]
    pub events: Vec<ForwardedEvent>,
    /// The current version of events of the state's `tail`.
    #[serde(default)]
    pub tail: Vec<ForwardedEvent>,
    /// The span of starts `events` replace.
    #[serde(default)]
    pub window: Option<StartSpan>,
    /// The device's change counter, once the changes up to it were sent.
    #[serde(default)]
    pub changes: Option<i64>,
    /// After a whole-bucket comparison: the cursor from now on.
    #[serde(default)]
    pub high_water: Option<i64>,
    /// With the last chunk of new events: the bucket's event count on the
    /// device when they were read, kept with the cursor.
    #[serde(default)]
    pub count: Option<u64>,
}

/// An event of the hub's tail: the newest forwarded, which heartbeats on
/// the device may still extend, with its times as the hub has them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TailEvent {
    /// The id on the device.
    pub id: i64,
    /// Start as forwarded.
    pub start: Timestamp,
    /// End as forwarded.
    pub end: Timestamp,
}

/// What the hub keeps of one device's bucket: where forwarding resumes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForwardState {
    /// The device's bucket id.
    pub bucket: String,
    /// The bucket on the hub that holds it (the same id unless another
    /// device's bucket had it).
    pub target: String,
    /// The bucket's creation time on the device: another bucket of the same
    /// id (deleted and made again) is compared whole.
    #[serde(default)]
    pub created: Option<Timestamp>,
    /// The highest device id forwarded.
    pub high_water: i64,
    /// The newest events forwarded.
    #[serde(default)]
    pub tail: Vec<TailEvent>,
    /// The device's change counter whose changes the hub has.
    pub changes: i64,
    /// The device's event count when the cursor was read to its end: a
    /// device whose count and counter are still these added nothing.
    #[serde(default)]
    pub count: Option<u64>,
    /// The host name of the hub's bucket, in the hub's listing of states
    /// (never stored): a device that now sends another host for it sends
    /// a chunk, so the hub follows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// When the hub last applied a chunk of it.
    #[serde(default)]
    pub received: Option<Timestamp>,
}

/// A device that forwards to this hub, as the hub's status lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForwardingDevice {
    /// The device's id (the sending server's).
    pub device: String,
    /// The hosts of its buckets here.
    pub hosts: Vec<String>,
    /// When the hub last applied a chunk of any of them.
    pub received: Option<Timestamp>,
    /// The state of each of its buckets.
    pub buckets: Vec<ForwardState>,
}

impl ForwardState {
    /// The state of a bucket the hub has nothing of yet.
    pub fn new(bucket: &str, target: &str) -> ForwardState {
        ForwardState {
            bucket: bucket.to_string(),
            target: target.to_string(),
            created: None,
            high_water: 0,
            tail: Vec::new(),
            changes: 0,
            count: None,
            host: None,
            received: None,
        }
    }
}
