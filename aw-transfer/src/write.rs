//! Writing exports: the export document (`docs/API.md` §5), NDJSON and CSV, one
//! bucket and one event at a time, so an export of any size is written in
//! bounded memory.
//!
//! Every writer takes `bucket` before that bucket's events. A bucket may
//! come again later (NDJSON imports converted into a document do that);
//! the document then holds the key twice, which our import reads as two
//! runs of the same bucket.
//!
//! NDJSON is one JSON object per line: a bucket line
//! `{"bucket": {id, type, client, hostname, created, data}}` before the
//! bucket's events, then event lines `{"bucket_id", "id", "timestamp",
//! "duration", "data"}`. CSV has the columns `bucket,id,timestamp,duration`
//! and then one per data key; the keys are only known at the end, so the
//! rows are spooled to a temp file and written out by `finish`.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Seek, Write};

use aw_models::{Bucket, Event};
use serde::Serialize;

/// Output formats of `export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The export document of the web UI and aw-client.
    Json,
    /// One bucket or event per line.
    Ndjson,
    /// A table of events with a column per data key.
    Csv,
}

/// Something an export is written to.
pub trait ExportWriter {
    /// Starts a bucket; its events follow.
    fn bucket(&mut self, bucket: &Bucket) -> io::Result<()>;
    /// One event of the last bucket started.
    fn event(&mut self, event: &Event) -> io::Result<()>;
    /// Completes the output and flushes it.
    fn finish(self: Box<Self>) -> io::Result<()>;
}

/// A writer of `format` over `output`.
pub fn writer<'a>(
    format: Format,
    output: Box<dyn Write + 'a>,
) -> io::Result<Box<dyn ExportWriter + 'a>> {
    Ok(match format {
        Format::Json => Box::new(JsonWriter::new(output)?),
        Format::Ndjson => Box::new(NdjsonWriter {
            output,
            bucket_id: String::new(),
        }),
        Format::Csv => Box::new(CsvWriter::new(output)?),
    })
}

/// `"<id>":{...bucket fields...,"events":[` for a streamed document: the
/// bucket without `events`, its object left open for them.
pub fn bucket_head(bucket: &Bucket) -> Result<String, serde_json::Error> {
    let mut value = serde_json::to_value(bucket)?;
    if let Some(fields) = value.as_object_mut() {
        fields.remove("events");
    }
    let mut fields = serde_json::to_string(&value)?;
    // Reopen the object to append the streamed events.
    fields.pop();
    let separator = if fields.len() > 1 { "," } else { "" };
    Ok(format!(
        "{}:{fields}{separator}\"events\":[",
        serde_json::to_string(&bucket.id)?
    ))
}

/// The export document `{"buckets": {...}}`.
#[derive(Debug)]
pub struct JsonWriter<W: Write> {
    output: W,
    buckets: usize,
    /// Events written in the open bucket; `None` before the first bucket.
    events: Option<usize>,
}

impl<W: Write> JsonWriter<W> {
    /// Starts the document.
    pub fn new(mut output: W) -> io::Result<JsonWriter<W>> {
        output.write_all(b"{\"buckets\":{")?;
        Ok(JsonWriter {
            output,
            buckets: 0,
            events: None,
        })
    }

    /// Ends the document and returns the output, flushed.
    pub fn end(mut self) -> io::Result<W> {
        if self.events.is_some() {
            self.output.write_all(b"]}")?;
        }
        self.output.write_all(b"}}")?;
        self.output.flush()?;
        Ok(self.output)
    }
}

impl<W: Write> ExportWriter for JsonWriter<W> {
    fn bucket(&mut self, bucket: &Bucket) -> io::Result<()> {
        if self.events.is_some() {
            self.output.write_all(b"]}")?;
        }
        if self.buckets > 0 {
            self.output.write_all(b",")?;
        }
        self.output.write_all(bucket_head(bucket)?.as_bytes())?;
        self.buckets += 1;
        self.events = Some(0);
        Ok(())
    }

    fn event(&mut self, event: &Event) -> io::Result<()> {
        let count = self.events.as_mut().ok_or_else(no_bucket)?;
        if *count > 0 {
            self.output.write_all(b",")?;
        }
        *count += 1;
        serde_json::to_writer(&mut self.output, event)?;
        Ok(())
    }

    fn finish(self: Box<Self>) -> io::Result<()> {
        self.end().map(drop)
    }
}

fn no_bucket() -> io::Error {
    io::Error::other("an event was written before its bucket")
}

/// The bucket line of NDJSON: the bucket's own fields, not what the store
/// computes (`metadata`, `last_updated`).
#[derive(Serialize)]
struct BucketLine<'a> {
    bucket: BucketFields<'a>,
}

#[derive(Serialize)]
struct BucketFields<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'a str,
    client: &'a str,
    hostname: &'a str,
    created: &'a Option<aw_models::Timestamp>,
    data: &'a aw_models::Data,
}

/// An event line of NDJSON.
#[derive(Serialize)]
struct EventLine<'a> {
    bucket_id: &'a str,
    #[serde(flatten)]
    event: &'a Event,
}

struct NdjsonWriter<'a> {
    output: Box<dyn Write + 'a>,
    bucket_id: String,
}

impl ExportWriter for NdjsonWriter<'_> {
    fn bucket(&mut self, bucket: &Bucket) -> io::Result<()> {
        let line = BucketLine {
            bucket: BucketFields {
                id: &bucket.id,
                kind: &bucket.kind,
                client: &bucket.client,
                hostname: &bucket.hostname,
                created: &bucket.created,
                data: &bucket.data,
            },
        };
        serde_json::to_writer(&mut self.output, &line)?;
        self.output.write_all(b"\n")?;
        self.bucket_id.clone_from(&bucket.id);
        Ok(())
    }

    fn event(&mut self, event: &Event) -> io::Result<()> {
        let line = EventLine {
            bucket_id: &self.bucket_id,
            event,
        };
        serde_json::to_writer(&mut self.output, &line)?;
        self.output.write_all(b"\n")
    }

    fn finish(mut self: Box<Self>) -> io::Result<()> {
        self.output.flush()
    }
}

struct CsvWriter<'a> {
    output: Box<dyn Write + 'a>,
    /// Rows as NDJSON event lines, until the keys are known.
    spool: BufWriter<File>,
    keys: BTreeSet<String>,
    bucket_id: String,
}

impl<'a> CsvWriter<'a> {
    fn new(output: Box<dyn Write + 'a>) -> io::Result<CsvWriter<'a>> {
        Ok(CsvWriter {
            output,
            spool: BufWriter::new(tempfile::tempfile()?),
            keys: BTreeSet::new(),
            bucket_id: String::new(),
        })
    }
}

impl ExportWriter for CsvWriter<'_> {
    fn bucket(&mut self, bucket: &Bucket) -> io::Result<()> {
        self.bucket_id.clone_from(&bucket.id);
        Ok(())
    }

    fn event(&mut self, event: &Event) -> io::Result<()> {
        for key in event.data.keys() {
            if !self.keys.contains(key) {
                self.keys.insert(key.clone());
            }
        }
        let line = EventLine {
            bucket_id: &self.bucket_id,
            event,
        };
        serde_json::to_writer(&mut self.spool, &line)?;
        self.spool.write_all(b"\n")
    }

    fn finish(self: Box<Self>) -> io::Result<()> {
        let CsvWriter {
            mut output,
            spool,
            keys,
            ..
        } = *self;
        let mut header = vec!["bucket", "id", "timestamp", "duration"];
        header.extend(keys.iter().map(String::as_str));
        write_row(&mut output, header.iter().map(|field| field.to_string()))?;
        let mut file = spool.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.rewind()?;
        for line in BufReader::new(file).lines() {
            let row: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&line?)?;
            let data = row.get("data").and_then(|data| data.as_object());
            let fixed = ["bucket_id", "id", "timestamp", "duration"]
                .into_iter()
                .map(|name| row.get(name));
            let values = keys.iter().map(|key| data.and_then(|data| data.get(key)));
            write_row(&mut output, fixed.chain(values).map(cell))?;
        }
        output.flush()
    }
}

/// A CSV cell: strings as they are, other values as JSON text, missing
/// values (and `null`) empty.
fn cell(value: Option<&serde_json::Value>) -> String {
    match value {
        None | Some(serde_json::Value::Null) => String::new(),
        Some(serde_json::Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

/// One CSV record (RFC 4180): fields with a comma, quote or line break are
/// quoted, with quotes doubled.
fn write_row(output: &mut dyn Write, fields: impl Iterator<Item = String>) -> io::Result<()> {
    for (index, field) in fields.enumerate() {
        if index > 0 {
            output.write_all(b",")?;
        }
        if field.contains([',', '"', '\n', '\r']) {
            write!(output, "\"{}\"", field.replace('"', "\"\""))?;
        } else {
            output.write_all(field.as_bytes())?;
        }
    }
    output.write_all(b"\r\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use aw_models::{BucketMetadata, Data, Duration, Timestamp};
    use serde_json::json;

    fn bucket(id: &str) -> Bucket {
        Bucket {
            id: id.into(),
            kind: "t".into(),
            client: "c".into(),
            hostname: "h".into(),
            created: Some(Timestamp::from_nanos(0)),
            data: Data::new(),
            metadata: BucketMetadata::default(),
            events: None,
            last_updated: None,
        }
    }

    fn event(nanos: i64, data: serde_json::Value) -> Event {
        let serde_json::Value::Object(data) = data else {
            panic!("not an object")
        };
        let mut event = Event::new(Timestamp::from_nanos(nanos), Duration::from_secs(1), data);
        event.id = Some(7);
        event
    }

    fn render(format: Format) -> String {
        let mut output = Vec::new();
        let mut writer = writer(format, Box::new(&mut output)).unwrap();
        writer.bucket(&bucket("a\"1")).unwrap();
        writer.event(&event(1, json!({"app": "x, \"y\""}))).unwrap();
        writer.event(&event(2, json!({"n": 1}))).unwrap();
        writer.bucket(&bucket("b")).unwrap();
        writer.finish().unwrap();
        String::from_utf8(output).unwrap()
    }

    #[test]
    fn bucket_head_reopens_the_bucket_object() {
        let text = format!("{{{}]}}}}", bucket_head(&bucket("b\"1")).unwrap());
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["b\"1"]["events"], json!([]));
        assert_eq!(value["b\"1"]["type"], "t");
    }

    #[test]
    fn json_is_the_export_document() {
        let value: serde_json::Value = serde_json::from_str(&render(Format::Json)).unwrap();
        let events = &value["buckets"]["a\"1"]["events"];
        assert_eq!(events.as_array().unwrap().len(), 2);
        assert_eq!(events[0]["timestamp"], "1970-01-01T00:00:00.000000001Z");
        assert_eq!(value["buckets"]["b"]["events"], json!([]));
    }

    #[test]
    fn ndjson_has_a_bucket_line_before_its_events() {
        let text = render(Format::Ndjson);
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0]["bucket"]["id"], "a\"1");
        assert!(lines[0]["bucket"].get("metadata").is_none());
        assert_eq!(lines[1]["bucket_id"], "a\"1");
        assert_eq!(lines[1]["id"], 7);
        assert_eq!(lines[2]["data"], json!({"n": 1}));
        assert_eq!(lines[3]["bucket"]["id"], "b");
    }

    #[test]
    fn csv_has_a_column_per_data_key_and_quotes() {
        assert_eq!(
            render(Format::Csv),
            "bucket,id,timestamp,duration,app,n\r\n\
             \"a\"\"1\",7,1970-01-01T00:00:00.000000001Z,1.0,\"x, \"\"y\"\"\",\r\n\
             \"a\"\"1\",7,1970-01-01T00:00:00.000000002Z,1.0,,1\r\n"
        );
    }
}
