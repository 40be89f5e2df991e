//! The body of `POST /api/0/query/` (`docs/API.md` §3.6, §6.1).

use std::fmt;
use std::str::FromStr;

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

use crate::{ModelError, Timestamp};

/// A query period `<start>/<end>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimeInterval {
    /// Inclusive start.
    pub start: Timestamp,
    /// Inclusive end.
    pub end: Timestamp,
}

impl TimeInterval {
    /// The period between two instants.
    pub fn new(start: Timestamp, end: Timestamp) -> TimeInterval {
        TimeInterval { start, end }
    }
}

impl FromStr for TimeInterval {
    type Err = ModelError;

    fn from_str(text: &str) -> Result<TimeInterval, ModelError> {
        let invalid = || ModelError::InvalidInterval(text.to_string());
        let (start, end) = text.split_once('/').ok_or_else(invalid)?;
        let start = Timestamp::parse(start).map_err(|_| invalid())?;
        let end = Timestamp::parse(end).map_err(|_| invalid())?;
        Ok(TimeInterval { start, end })
    }
}

/// Written as `TIMEINTERVAL` is bound: both ends in UTC with `+00:00`.
impl fmt::Display for TimeInterval {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "{}/{}",
            self.start.to_rfc3339_offset(),
            self.end.to_rfc3339_offset()
        )
    }
}

impl Serialize for TimeInterval {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TimeInterval {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(de::Error::custom)
    }
}

/// `{"timeperiods": [...], "query": [lines]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryRequest {
    /// One program run per period.
    pub timeperiods: Vec<TimeInterval>,
    /// Program text, one element per line.
    pub query: Vec<String>,
}

impl QueryRequest {
    /// The program as one text, lines joined with `\n` (`docs/API.md` §6.1).
    pub fn program(&self) -> String {
        self.query.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_parse_and_print_in_utc() {
        let interval: TimeInterval = "2021-06-01T12:00:00+02:00/2021-06-02T00:00:00Z"
            .parse()
            .unwrap();
        assert_eq!(
            interval.to_string(),
            "2021-06-01T10:00:00+00:00/2021-06-02T00:00:00+00:00"
        );
        for bad in [
            "",
            "2021-06-01T10:00:00Z",
            "a/b",
            "2021-06-01T10:00:00Z/",
            "2021-06-01T10:00:00/2021-06-02T00:00:00Z",
        ] {
            assert!(bad.parse::<TimeInterval>().is_err(), "{bad}");
        }
    }

    #[test]
    fn query_request_shape() {
        let request: QueryRequest = serde_json::from_str(
            r#"{"timeperiods": ["2021-06-01T00:00:00Z/2021-06-02T00:00:00Z"], "query": ["a = 1;", "RETURN = a;"]}"#,
        )
        .unwrap();
        assert_eq!(request.program(), "a = 1;\nRETURN = a;");
        assert!(
            serde_json::from_str::<QueryRequest>(r#"{"timeperiods": ["x"], "query": []}"#).is_err()
        );
    }
}
