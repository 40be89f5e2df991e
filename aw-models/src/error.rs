//! The validation error of this crate.

/// Why a value sent by a client cannot be represented.
///
/// Deserializers return these through `serde::de::Error::custom`, so the
/// message is what a client sees in a 4xx response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// Not an RFC 3339 timestamp with a UTC offset.
    #[error(
        "invalid timestamp '{0}': expected RFC 3339 with an offset, e.g. 2021-06-01T10:00:00Z"
    )]
    InvalidTimestamp(String),
    /// A well-formed timestamp the store cannot hold (outside 1677-2262).
    #[error("timestamp '{0}' is out of range: only years 1677 to 2262 can be stored")]
    TimestampOutOfRange(String),
    /// Negative, NaN, infinite or too large a duration.
    #[error(
        "invalid duration {0}: must be a finite, non-negative number of seconds below 292 years"
    )]
    InvalidDuration(String),
    /// An event whose end (timestamp + duration) is past what the store can hold.
    #[error("event ends after the last storable instant (year 2262)")]
    EndOutOfRange,
    /// A time period that is not `<start>/<end>`.
    #[error("invalid time period '{0}': expected '<start>/<end>' with RFC 3339 timestamps")]
    InvalidInterval(String),
    /// A bucket id that is empty, too long or holds control characters.
    #[error("Invalid bucket id {0:?}: must be 1 to 1000 bytes without control characters")]
    InvalidBucketId(String),
    /// A token request or name that cannot be used (the message says why).
    #[error("{0}")]
    InvalidToken(String),
}
