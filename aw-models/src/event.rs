//! The event: a span of time with a JSON object of data (`docs/API.md` §2.3).

use serde::{Deserialize, Serialize};

use crate::{Data, Duration, ModelError, Timestamp};

/// One event, `[timestamp, timestamp + duration)`.
///
/// Deserialization validates everything the store needs: the timestamp and
/// the end are storable instants and the duration is finite and
/// non-negative; `duration` defaults to 0 and `id` may be absent or `null`.
///
/// ```
/// # use aw_models::Event;
/// let event: Event = serde_json::from_str(
///     r#"{"timestamp": "2021-06-01T10:00:00+02:00", "duration": 1.5, "data": {"app": "vim"}}"#,
/// ).unwrap();
/// assert_eq!(
///     serde_json::to_string(&event).unwrap(),
///     r#"{"id":null,"timestamp":"2021-06-01T08:00:00Z","duration":1.5,"data":{"app":"vim"}}"#,
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    /// Assigned by the store; `None` for events not stored (yet).
    pub id: Option<i64>,
    /// Start of the event.
    pub timestamp: Timestamp,
    /// Length of the event.
    pub duration: Duration,
    /// Free-form JSON object.
    pub data: Data,
}

impl Event {
    /// An event without id.
    pub fn new(timestamp: Timestamp, duration: Duration, data: Data) -> Event {
        Event {
            id: None,
            timestamp,
            duration,
            data,
        }
    }

    /// The end of the event, `timestamp + duration`.
    ///
    /// Validated events always end inside the storable range; events built in
    /// code are clamped to it.
    pub fn end(&self) -> Timestamp {
        self.timestamp.saturating_add(self.duration)
    }

    /// Moves the end, keeping the start.
    pub fn set_end(&mut self, end: Timestamp) {
        self.duration = end.duration_since(self.timestamp);
    }

    /// Checks what deserialization checks, for events built in code.
    pub fn validate(&self) -> Result<(), ModelError> {
        if self.duration.nanos() < 0 {
            return Err(ModelError::InvalidDuration(
                self.duration.as_secs_f64().to_string(),
            ));
        }
        self.timestamp
            .checked_add(self.duration)
            .map(|_| ())
            .ok_or(ModelError::EndOutOfRange)
    }
}

/// What a client may send; turned into an [`Event`] after validation.
#[derive(Deserialize)]
struct EventWire {
    #[serde(default, deserialize_with = "whole_number")]
    id: Option<i64>,
    timestamp: Timestamp,
    #[serde(default)]
    duration: Duration,
    data: Data,
}

/// An id: an integer, also written with a fraction of zero (`7.0`, as
/// JSON Schema counts integers), or null. A visitor, not an untagged enum,
/// which would buffer every id it reads.
fn whole_number<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<i64>, D::Error> {
    use serde::de::{Error, Visitor};

    struct Id;

    impl<'de> Visitor<'de> for Id {
        type Value = Option<i64>;

        fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            formatter.write_str("a whole number or null")
        }

        fn visit_i64<E: Error>(self, id: i64) -> Result<Option<i64>, E> {
            Ok(Some(id))
        }

        fn visit_u64<E: Error>(self, id: u64) -> Result<Option<i64>, E> {
            i64::try_from(id)
                .map(Some)
                .map_err(|_| E::custom(format!("invalid id {id}: too large")))
        }

        fn visit_f64<E: Error>(self, id: f64) -> Result<Option<i64>, E> {
            // Exactly a whole number, and below 2^63 in magnitude.
            if id.fract() == 0.0 && id.abs() < 9.223_372_036_854_775e18 {
                Ok(Some(id as i64))
            } else {
                Err(E::custom(format!(
                    "invalid id {id}: expected a whole number"
                )))
            }
        }

        fn visit_none<E: Error>(self) -> Result<Option<i64>, E> {
            Ok(None)
        }

        fn visit_unit<E: Error>(self) -> Result<Option<i64>, E> {
            Ok(None)
        }

        fn visit_some<D: serde::Deserializer<'de>>(
            self,
            deserializer: D,
        ) -> Result<Option<i64>, D::Error> {
            deserializer.deserialize_any(Id)
        }
    }

    deserializer.deserialize_option(Id)
}

impl<'de> Deserialize<'de> for Event {
    /// Only a JSON object: an array (which serde would read field by
    /// field) or any other value is refused as not an event, by name.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Event, D::Error> {
        struct Object;
        impl<'de> serde::de::Visitor<'de> for Object {
            type Value = EventWire;
            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("an event: a JSON object with timestamp, duration and data")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<EventWire, A::Error> {
                EventWire::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        let wire = deserializer.deserialize_map(Object)?;
        Event::try_from(wire).map_err(serde::de::Error::custom)
    }
}

impl TryFrom<EventWire> for Event {
    type Error = ModelError;

    fn try_from(wire: EventWire) -> Result<Event, ModelError> {
        let event = Event {
            id: wire.id,
            timestamp: wire.timestamp,
            duration: wire.duration,
            data: wire.data,
        };
        event.validate()?;
        Ok(event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(value: serde_json::Value) -> Result<Event, String> {
        serde_json::from_value(value).map_err(|e| e.to_string())
    }

    #[test]
    fn minimal_event_defaults_duration_and_id() {
        let event = parse(json!({"timestamp": "2021-06-01T10:00:00Z", "data": {}})).unwrap();
        assert_eq!(event.id, None);
        assert_eq!(event.duration, Duration::ZERO);
        let event =
            parse(json!({"id": null, "timestamp": "2021-06-01T10:00:00Z", "data": {}})).unwrap();
        assert_eq!(event.id, None);
        let event =
            parse(json!({"id": 7, "timestamp": "2021-06-01T10:00:00Z", "data": {}})).unwrap();
        assert_eq!(event.id, Some(7));
        let event =
            parse(json!({"id": 7.0, "timestamp": "2021-06-01T10:00:00Z", "data": {}})).unwrap();
        assert_eq!(event.id, Some(7));
    }

    #[test]
    fn data_is_kept_exactly() {
        let data = json!({"": 1, "a.b": [1, 1.0, {"$x": null}], "ünï": "☃", "n": 1.5e300});
        let event = parse(json!({"timestamp": "2021-06-01T10:00:00Z", "data": data})).unwrap();
        assert_eq!(serde_json::Value::Object(event.data.clone()), data);
        let back: Event = serde_json::from_str(&serde_json::to_string(&event).unwrap()).unwrap();
        assert_eq!(back, event);
    }

    #[test]
    fn invalid_events_are_errors() {
        let cases = [
            json!({"data": {}}),
            json!({"timestamp": "2021-06-01T10:00:00Z"}),
            json!({"timestamp": "2021-06-01T10:00:00Z", "data": []}),
            json!({"timestamp": "2021-06-01T10:00:00Z", "data": "x"}),
            json!({"timestamp": "2021-06-01T10:00:00", "data": {}}),
            json!({"timestamp": "2021-06-01T10:00:00Z", "duration": -1, "data": {}}),
            json!({"timestamp": "2021-06-01T10:00:00Z", "duration": "1", "data": {}}),
            json!({"timestamp": "2021-06-01T10:00:00Z", "duration": 1e300, "data": {}}),
            json!({"timestamp": "2262-04-11T00:00:00Z", "duration": 86400, "data": {}}),
            json!({"timestamp": "3000-01-01T00:00:00Z", "data": {}}),
            json!({"id": "x", "timestamp": "2021-06-01T10:00:00Z", "data": {}}),
            json!({"id": 1.5, "timestamp": "2021-06-01T10:00:00Z", "data": {}}),
            json!([]),
        ];
        for case in cases {
            assert!(parse(case.clone()).is_err(), "{case}");
        }
    }

    #[test]
    fn end_is_timestamp_plus_duration() {
        let mut event =
            parse(json!({"timestamp": "2021-06-01T10:00:00Z", "duration": 2.5, "data": {}}))
                .unwrap();
        assert_eq!(event.end().to_string(), "2021-06-01T10:00:02.500Z");
        event.set_end(Timestamp::parse("2021-06-01T10:00:10Z").unwrap());
        assert_eq!(event.duration, Duration::from_secs(10));
    }
}
