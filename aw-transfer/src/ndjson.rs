//! Reading NDJSON exports (the format `write` produces): each line is a
//! bucket line `{"bucket": {...}}` or an event line `{"bucket_id": ...,
//! "timestamp": ..., ...}` of a bucket whose line came earlier.
//!
//! [`to_document`] checks every line and writes the same data as an
//! export document, so importing NDJSON is importing a document (with its
//! two passes, locally or over HTTP). Blank lines are skipped. Errors name
//! the line; the column is serde's for malformed JSON and 1 for a line of
//! the wrong shape.

use std::collections::HashMap;
use std::io::{self, BufRead, Write};

use aw_models::{Bucket, Event};
use serde_json::Value;

use crate::{ExportWriter, JsonWriter};
use aw_models::check_bucket_id;

/// Why an NDJSON file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum NdjsonError {
    /// A line is not what it must be.
    #[error("line {line} column {column}: {message}")]
    Invalid {
        /// 1-based line number.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// Reading or writing failed.
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// What [`to_document`] converted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Converted {
    /// Distinct buckets.
    pub buckets: usize,
    /// Events.
    pub events: u64,
}

/// Checks the NDJSON of `input` line by line and writes it to `output` as
/// an export document. `progress` is called with the bytes read so far.
pub fn to_document(
    input: impl BufRead,
    output: impl Write,
    mut progress: impl FnMut(u64),
) -> Result<Converted, NdjsonError> {
    let mut writer = JsonWriter::new(output)?;
    let mut buckets: HashMap<String, Bucket> = HashMap::new();
    let mut current: Option<String> = None;
    let mut converted = Converted::default();
    let mut read = 0u64;
    for (index, line) in input.lines().enumerate() {
        let line = line?;
        read += line.len() as u64 + 1;
        let number = index + 1;
        let invalid = |column: usize, message: String| NdjsonError::Invalid {
            line: number,
            column,
            message,
        };
        if line.trim().is_empty() {
            continue;
        }
        let mut value: Value = serde_json::from_str(&line)
            .map_err(|error| invalid(error.column().max(1), error.to_string()))?;
        let Some(fields) = value.as_object_mut() else {
            return Err(invalid(1, "expected a JSON object".into()));
        };
        if let Some(bucket) = fields.remove("bucket") {
            let mut bucket: Bucket = serde_json::from_value(bucket)
                .map_err(|error| invalid(1, format!("invalid bucket: {error}")))?;
            check_bucket_id(&bucket.id).map_err(|error| invalid(1, error.to_string()))?;
            bucket.events = None;
            writer.bucket(&bucket)?;
            current = Some(bucket.id.clone());
            if !buckets.contains_key(&bucket.id) {
                converted.buckets += 1;
                buckets.insert(bucket.id.clone(), bucket);
            }
            continue;
        }
        let bucket_id = match fields.remove("bucket_id") {
            Some(Value::String(id)) => id,
            _ => {
                return Err(invalid(
                    1,
                    "expected a bucket line {\"bucket\": ...} or an event line with a string \"bucket_id\"".into(),
                ))
            }
        };
        let event: Event = serde_json::from_value(value)
            .map_err(|error| invalid(1, format!("invalid event: {error}")))?;
        if current.as_deref() != Some(bucket_id.as_str()) {
            let bucket = buckets.get(&bucket_id).ok_or_else(|| {
                invalid(
                    1,
                    format!("event of bucket '{bucket_id}' before that bucket's line"),
                )
            })?;
            writer.bucket(bucket)?;
            current = Some(bucket_id);
        }
        writer.event(&event)?;
        converted.events += 1;
        if converted.events % 1000 == 0 {
            progress(read);
        }
    }
    writer.end()?;
    progress(read);
    Ok(converted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{validate, InMemory};

    const BUCKET: &str = r#"{"bucket": {"id": "b", "type": "t", "client": "c", "hostname": "h"}}"#;
    const EVENT: &str = r#"{"bucket_id": "b", "id": 3, "timestamp": "2021-06-01T10:00:00.000000001Z", "duration": 1.5, "data": {"a": 1}}"#;

    fn convert(text: &str) -> Result<(Converted, String), NdjsonError> {
        let mut output = Vec::new();
        let converted = to_document(text.as_bytes(), &mut output, |_| {})?;
        Ok((converted, String::from_utf8(output).unwrap()))
    }

    #[test]
    fn lines_become_a_valid_document() {
        let other = BUCKET.replace("\"b\"", "\"o\"");
        let text = format!("{BUCKET}\n{EVENT}\n\n{other}\n{EVENT}\n");
        let (converted, document) = convert(&text).unwrap();
        assert_eq!(
            converted,
            Converted {
                buckets: 2,
                events: 2
            }
        );
        let buckets = validate(InMemory(document.as_bytes())).unwrap();
        let ids: Vec<_> = buckets.iter().map(|bucket| bucket.id.as_str()).collect();
        assert_eq!(ids, ["b", "o", "b"], "the second run of b reopens it");
    }

    #[test]
    fn errors_name_the_line() {
        let bad_time = EVENT.replace("2021-06-01", "2021-13-01");
        let cases = [
            (format!("{BUCKET}\n{EVENT}\n{{\"bucket_id\": "), 3),
            (format!("{BUCKET}\n[1]"), 2),
            (format!("{BUCKET}\n{EVENT}\n{bad_time}\n{EVENT}"), 3),
            (EVENT.to_string(), 1),
            (
                r#"{"bucket": {"id": "", "type": "t", "client": "c", "hostname": "h"}}"#.into(),
                1,
            ),
        ];
        for (text, line) in cases {
            match convert(&text) {
                Err(NdjsonError::Invalid { line: got, .. }) => assert_eq!(got, line, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
    }
}
