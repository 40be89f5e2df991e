//! Conversions between SQL rows and model values.
//!
//! Event rows are read as `id, starttime, endtime, data`. Bucket `created`
//! is text in the format rusqlite writes for a chrono `DateTime<Utc>`
//! (`2021-06-01 09:00:00.123456789+00:00`), which is what aw-server-rust
//! stores; reading accepts the other forms that format has had. Decoding
//! the data of long reads is `decode.rs`'s, the check that a sent text is
//! stored as it is `canonical.rs`'s.

use aw_models::{Data, Duration, Event, Timestamp};
use chrono::{NaiveDateTime, SecondsFormat};

/// Columns an event query must select, in this order.
pub(crate) const EVENT_COLUMNS: &str = "id, starttime, endtime, data";

/// An event row, optionally clipped to `[start, end]`.
pub(crate) fn event_from_row(
    row: &rusqlite::Row<'_>,
    clip: Option<(i64, i64)>,
) -> rusqlite::Result<Event> {
    let (id, timestamp, duration) = row_times(row, clip)?;
    let text = data_text_of(row)?;
    let data = parse_data(text).map_err(|err| data_failure(err.into()))?;
    Ok(Event {
        id: Some(id),
        timestamp,
        duration,
        data,
    })
}

/// The parts of an event row before its data, clipped: id, start, duration.
pub(crate) fn row_times(
    row: &rusqlite::Row<'_>,
    clip: Option<(i64, i64)>,
) -> rusqlite::Result<(i64, Timestamp, Duration)> {
    let id: i64 = row.get(0)?;
    let mut start: i64 = row.get(1)?;
    let mut end: i64 = row.get(2)?;
    if let Some((low, high)) = clip {
        start = start.max(low);
        end = end.min(high);
    }
    Ok((
        id,
        Timestamp::from_nanos(start),
        Duration::from_nanos(end.saturating_sub(start)),
    ))
}

/// The data column's text as SQLite holds it, not yet checked for UTF-8;
/// any other type (a blob, a number) is not usable.
pub(crate) fn data_bytes<'a>(row: &'a rusqlite::Row<'_>) -> rusqlite::Result<&'a [u8]> {
    match row.get_ref(3)? {
        rusqlite::types::ValueRef::Text(bytes) => Ok(bytes),
        _ => Err(data_failure(
            rusqlite::types::FromSqlError::InvalidType.into(),
        )),
    }
}

/// The data column's text, checked for UTF-8.
fn data_text_of<'a>(row: &'a rusqlite::Row<'_>) -> rusqlite::Result<&'a str> {
    std::str::from_utf8(data_bytes(row)?).map_err(|err| data_failure(err.into()))
}

/// A row whose data column is not usable; listings skip such rows.
pub(crate) fn data_failure(err: Box<dyn std::error::Error + Send + Sync>) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(3, rusqlite::types::Type::Text, err)
}

/// An event whose data is the stored JSON text, for answering with it as it
/// is; serializes like [`Event`].
#[derive(Debug, serde::Serialize)]
pub(crate) struct RawEvent<'a> {
    id: i64,
    timestamp: Timestamp,
    duration: Duration,
    data: &'a serde_json::value::RawValue,
}

/// An event row like [`event_from_row`], with the data text borrowed from
/// SQLite after checking that it is a JSON object.
pub(crate) fn raw_event_from_row<'a>(
    row: &'a rusqlite::Row<'_>,
    clip: Option<(i64, i64)>,
) -> rusqlite::Result<RawEvent<'a>> {
    let (id, timestamp, duration) = row_times(row, clip)?;
    let text = data_text_of(row)?;
    let data: &serde_json::value::RawValue =
        serde_json::from_str(text).map_err(|err| data_failure(err.into()))?;
    if !data.get().starts_with('{') {
        return Err(data_failure("event data is not a JSON object".into()));
    }
    Ok(RawEvent {
        id,
        timestamp,
        duration,
        data,
    })
}

/// Parses a stored JSON object.
pub(crate) fn parse_data(text: &str) -> Result<Data, serde_json::Error> {
    serde_json::from_str(text)
}

/// Serializes `data` for storage.
pub(crate) fn data_text(data: &Data) -> String {
    // A map of JSON values always serializes; the fallback is unreachable
    // but keeps a library free of panics.
    serde_json::to_string(data).unwrap_or_else(|_| "{}".to_string())
}

/// `created` as aw-server-rust stores it.
pub(crate) fn created_text(created: Timestamp) -> String {
    // "%F %T%.f%:z" is rusqlite's ToSql for DateTime<Utc>.
    created
        .to_datetime()
        .to_rfc3339_opts(SecondsFormat::AutoSi, false)
        .replacen('T', " ", 1)
}

/// Parses `created`; `None` (and a warning) for text no version wrote.
pub(crate) fn parse_created(text: &str) -> Option<Timestamp> {
    if let Ok(parsed) = Timestamp::parse(text) {
        return Some(parsed);
    }
    // Old rusqlite versions wrote a naive UTC time.
    for format in ["%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M:%S%.f"] {
        if let Ok(naive) = NaiveDateTime::parse_from_str(text.trim(), format) {
            return Timestamp::from_datetime(naive.and_utc()).ok();
        }
    }
    log::warn!("Bucket creation time '{text}' is not a timestamp; reported as null");
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_round_trips_in_the_reference_format() {
        let created = Timestamp::parse("2021-06-01T09:00:00.123456789Z").unwrap();
        assert_eq!(created_text(created), "2021-06-01 09:00:00.123456789+00:00");
        assert_eq!(parse_created(&created_text(created)), Some(created));
        let whole = Timestamp::parse("2021-06-01T09:00:00Z").unwrap();
        assert_eq!(created_text(whole), "2021-06-01 09:00:00+00:00");
        for text in [
            "2021-06-01T09:00:00+00:00",
            "2021-06-01 09:00:00",
            "2021-06-01T09:00:00.000",
        ] {
            assert_eq!(parse_created(text), Some(whole), "{text}");
        }
        assert_eq!(parse_created("yesterday"), None);
    }
}
