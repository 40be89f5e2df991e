//! [`SharedEvent`]: an event whose data object is shared, for reading and
//! transforming many events at once.
//!
//! A year of window events holds ~300k events but only ~17k distinct data
//! objects, and even a compact decoded object ([`EventData`]) costs a few
//! hundred bytes. The datastore decodes each distinct stored text
//! once per read and hands out the same `Arc<EventData>` for every event that
//! carries it (see the shape `aw_datastore::Shared`), and the query language
//! works on these events, so an event is 40 bytes plus a shared pointer,
//! cloning one never copies its data, and a transform that derives new
//! data (`categorize`'s `$category`) can do it once per distinct object.
//! [`Event`] stays the wire type.

use std::sync::{Arc, OnceLock};

use crate::{Duration, Event, EventData, Timestamp};

/// An [`Event`] with its data behind an `Arc`; equal to another when the
/// fields are (data compared by value, by pointer first).
#[derive(Debug, Clone)]
pub struct SharedEvent {
    /// Assigned by the store; `None` for events not stored (yet).
    pub id: Option<i64>,
    /// Start of the event.
    pub timestamp: Timestamp,
    /// Length of the event.
    pub duration: Duration,
    /// Free-form JSON object, possibly shared with other events.
    pub data: Arc<EventData>,
}

impl SharedEvent {
    /// An event without id.
    pub fn new(
        timestamp: Timestamp,
        duration: Duration,
        data: impl Into<EventData>,
    ) -> SharedEvent {
        SharedEvent {
            id: None,
            timestamp,
            duration,
            data: Arc::new(data.into()),
        }
    }

    /// An event without id and with empty data; every such event shares
    /// one empty object.
    pub fn empty(timestamp: Timestamp, duration: Duration) -> SharedEvent {
        SharedEvent {
            id: None,
            timestamp,
            duration,
            data: empty_data(),
        }
    }

    /// The end of the event, `timestamp + duration` (see [`Event::end`]).
    pub fn end(&self) -> Timestamp {
        self.timestamp.saturating_add(self.duration)
    }

    /// Moves the end, keeping the start.
    pub fn set_end(&mut self, end: Timestamp) {
        self.duration = end.duration_since(self.timestamp);
    }

    /// Whether the data of the two events is equal, by pointer first.
    pub fn same_data(&self, other: &SharedEvent) -> bool {
        Arc::ptr_eq(&self.data, &other.data) || self.data == other.data
    }

    /// The plain event; the data is copied only if still shared.
    pub fn into_event(self) -> Event {
        Event {
            id: self.id,
            timestamp: self.timestamp,
            duration: self.duration,
            data: Arc::unwrap_or_clone(self.data).into_map(),
        }
    }
}

impl PartialEq for SharedEvent {
    fn eq(&self, other: &SharedEvent) -> bool {
        self.id == other.id
            && self.timestamp == other.timestamp
            && self.duration == other.duration
            && self.same_data(other)
    }
}

impl From<Event> for SharedEvent {
    fn from(event: Event) -> SharedEvent {
        SharedEvent {
            id: event.id,
            timestamp: event.timestamp,
            duration: event.duration,
            data: Arc::new(EventData::from(event.data)),
        }
    }
}

impl From<SharedEvent> for Event {
    fn from(event: SharedEvent) -> Event {
        event.into_event()
    }
}

/// The one shared empty data object.
pub fn empty_data() -> Arc<EventData> {
    static EMPTY: OnceLock<Arc<EventData>> = OnceLock::new();
    Arc::clone(EMPTY.get_or_init(|| Arc::new(EventData::new())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn data(value: serde_json::Value) -> EventData {
        EventData::from(value.as_object().cloned().unwrap_or_default())
    }

    #[test]
    fn shared_event_round_trips_and_compares_data_by_value() {
        let event = Event {
            id: Some(7),
            timestamp: Timestamp::from_nanos(5),
            duration: Duration::from_nanos(3),
            data: data(json!({"app": "vim"})).into_map(),
        };
        let shared = SharedEvent::from(event.clone());
        assert_eq!(shared.end(), event.end());
        let copy = SharedEvent {
            data: Arc::new(data(json!({"app": "vim"}))),
            ..shared.clone()
        };
        assert_eq!(shared, copy);
        assert_ne!(
            shared,
            SharedEvent {
                data: Arc::new(data(json!({"app": "emacs"}))),
                ..shared.clone()
            }
        );
        assert_eq!(Event::from(copy), event);
        let empty = SharedEvent::empty(Timestamp::from_nanos(0), Duration::ZERO);
        assert!(Arc::ptr_eq(&empty.data, &empty_data()));
    }
}
