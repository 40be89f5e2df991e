//! `POST /api/0/import` (spec §3.5, §5): an export document as the JSON
//! body or as the multipart file field `buckets.json` (or `buckets`).
//!
//! Imports may be up to 1000 MB, so nothing holds the whole document:
//!
//! 1. the body (or the multipart field) is spooled to an anonymous temp
//!    file, in bounded memory;
//! 2. pass 1 streams through the file with serde, validating every bucket
//!    and event and keeping only the bucket fields (not the events);
//! 3. only when the whole document is valid, pass 2 streams through it
//!    again, creating each bucket (`import_bucket` without events) and
//!    feeding its events to `import_events` in chunks.
//!
//! So a malformed or truncated document is refused with 4xx before
//! anything is stored. Merging and deduplication are the datastore's.

use std::fmt;
use std::fs::File;
use std::io::{BufReader, Read, Seek};

use aw_datastore::{Datastore, ImportSummary};
use aw_models::{Bucket, BucketMetadata, Data, Event, Timestamp};
use rocket::data::{ByteUnit, Data as Body};
use rocket::http::{ContentType, Status};
use rocket::tokio::io::AsyncWriteExt;
use rocket::{post, State};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::{blocking, check_bucket_id, Empty};
use crate::error::ApiError;
use crate::ServerState;

/// Largest import, as the anchor allows.
pub const IMPORT_LIMIT: ByteUnit = ByteUnit::Megabyte(1000);

/// Events handed to the datastore per call in pass 2.
const CHUNK_SIZE: usize = 5000;

/// Imports an export document, merging into existing buckets.
#[post("/api/0/import", data = "<body>")]
pub async fn import(
    content_type: Option<&ContentType>,
    body: Body<'_>,
    state: &State<ServerState>,
) -> Result<Empty, ApiError> {
    let file = spool(content_type, body).await?;
    let datastore = state.datastore.clone();
    let summary = blocking(move || import_file(file, &datastore)).await?;
    log::info!(
        "Import: {} buckets created, {} events stored, {} duplicates skipped",
        summary.buckets_created,
        summary.inserted,
        summary.skipped
    );
    Ok(Empty(Status::Ok))
}

/// Validates, then imports, the document in `file`.
pub fn import_file(mut file: File, datastore: &Datastore) -> Result<ImportSummary, ApiError> {
    let mut validator = Validator::default();
    walk(reader(&file)?, &mut validator)?;
    file.rewind().map_err(internal)?;
    let mut importer = Importer {
        datastore,
        buckets: &validator.buckets,
        current: None,
        chunk: Vec::new(),
        summary: ImportSummary::default(),
    };
    walk(reader(&file)?, &mut importer).map_err(|error| match error {
        // The document validated a moment ago; a parse error now means the
        // temp file changed under us.
        ApiError::BadRequest(message) | ApiError::Unprocessable(message) => ApiError::Internal(
            format!("Import failed on re-reading the document: {message}"),
        ),
        other => other,
    })?;
    Ok(importer.summary)
}

fn reader(file: &File) -> Result<BufReader<File>, ApiError> {
    Ok(BufReader::with_capacity(
        256 * 1024,
        file.try_clone().map_err(internal)?,
    ))
}

fn internal(error: std::io::Error) -> ApiError {
    ApiError::Internal(format!("Import failed: {error}"))
}

/// Writes the document to an anonymous temp file (deleted when closed).
async fn spool(content_type: Option<&ContentType>, body: Body<'_>) -> Result<File, ApiError> {
    let mut file = tempfile::tempfile().map_err(internal)?;
    let mut writer = rocket::tokio::fs::File::from_std(file.try_clone().map_err(internal)?);
    match content_type.filter(|content_type| content_type.is_form_data()) {
        Some(content_type) => {
            let boundary = content_type
                .param("boundary")
                .ok_or_else(|| ApiError::BadRequest("Multipart body without boundary".into()))?;
            let constraints = multer::Constraints::new()
                .size_limit(multer::SizeLimit::new().whole_stream(IMPORT_LIMIT.as_u64()));
            let stream = body.open(IMPORT_LIMIT + ByteUnit::Mebibyte(1));
            let mut multipart =
                multer::Multipart::with_reader_with_constraints(stream, boundary, constraints);
            loop {
                let Some(mut field) = multipart.next_field().await.map_err(multipart_error)? else {
                    return Err(ApiError::BadRequest(
                        "Multipart import without a 'buckets.json' field".into(),
                    ));
                };
                if matches!(field.name(), Some("buckets.json" | "buckets")) {
                    while let Some(chunk) = field.chunk().await.map_err(multipart_error)? {
                        writer.write_all(&chunk).await.map_err(internal)?;
                    }
                    break;
                }
            }
        }
        None => {
            let written = body
                .open(IMPORT_LIMIT)
                .stream_to(&mut writer)
                .await
                .map_err(|error| ApiError::BadRequest(format!("Failed to read body: {error}")))?;
            if !written.complete {
                return Err(too_large());
            }
        }
    }
    writer.flush().await.map_err(internal)?;
    drop(writer);
    file.rewind().map_err(internal)?;
    Ok(file)
}

fn too_large() -> ApiError {
    ApiError::PayloadTooLarge(format!("Import is larger than the limit of {IMPORT_LIMIT}"))
}

fn multipart_error(error: multer::Error) -> ApiError {
    match error {
        multer::Error::StreamSizeExceeded { .. } | multer::Error::FieldSizeExceeded { .. } => {
            too_large()
        }
        other => ApiError::BadRequest(format!("Malformed multipart body: {other}")),
    }
}

/// What a pass does with the document as it is read.
trait Sink {
    /// Before the fields of the `index`th bucket are read.
    fn bucket_start(&mut self, index: usize) -> Result<(), ApiError>;
    /// One valid event of the `index`th bucket.
    fn event(&mut self, index: usize, event: Event) -> Result<(), ApiError>;
    /// After the `index`th bucket, with its fields (without events).
    fn bucket_end(&mut self, index: usize, bucket: Bucket) -> Result<(), ApiError>;
}

/// Pass 1: keeps the bucket fields, drops the events.
#[derive(Default)]
struct Validator {
    buckets: Vec<Bucket>,
}

impl Sink for Validator {
    fn bucket_start(&mut self, _index: usize) -> Result<(), ApiError> {
        Ok(())
    }
    fn event(&mut self, _index: usize, _event: Event) -> Result<(), ApiError> {
        Ok(())
    }
    fn bucket_end(&mut self, _index: usize, bucket: Bucket) -> Result<(), ApiError> {
        self.buckets.push(bucket);
        Ok(())
    }
}

/// Pass 2: stores what pass 1 validated.
struct Importer<'a> {
    datastore: &'a Datastore,
    buckets: &'a [Bucket],
    current: Option<String>,
    chunk: Vec<Event>,
    summary: ImportSummary,
}

impl Importer<'_> {
    fn flush(&mut self) -> Result<(), ApiError> {
        if let Some(bucket_id) = &self.current {
            if !self.chunk.is_empty() {
                let events = std::mem::take(&mut self.chunk);
                add(
                    &mut self.summary,
                    self.datastore.import_events(bucket_id, events)?,
                );
            }
        }
        Ok(())
    }
}

impl Sink for Importer<'_> {
    fn bucket_start(&mut self, index: usize) -> Result<(), ApiError> {
        let bucket = self.buckets.get(index).cloned().ok_or_else(|| {
            ApiError::Internal("Import failed: the document changed between passes".into())
        })?;
        self.current = Some(bucket.id.clone());
        add(&mut self.summary, self.datastore.import_bucket(bucket)?);
        Ok(())
    }
    fn event(&mut self, _index: usize, event: Event) -> Result<(), ApiError> {
        self.chunk.push(event);
        if self.chunk.len() >= CHUNK_SIZE {
            self.flush()?;
        }
        Ok(())
    }
    fn bucket_end(&mut self, _index: usize, _bucket: Bucket) -> Result<(), ApiError> {
        self.flush()?;
        self.current = None;
        Ok(())
    }
}

fn add(total: &mut ImportSummary, part: ImportSummary) {
    total.buckets_created += part.buckets_created;
    total.inserted += part.inserted;
    total.skipped += part.skipped;
}

/// Streams one export document through `sink`. The first error wins: a
/// sink's own error is returned as is, a JSON error as 400/422.
fn walk(reader: impl Read, sink: &mut dyn Sink) -> Result<(), ApiError> {
    let mut walker = Walker {
        sink,
        failure: None,
    };
    let mut deserializer = serde_json::Deserializer::from_reader(reader);
    let result = DocumentSeed(&mut walker)
        .deserialize(&mut deserializer)
        .and_then(|()| deserializer.end());
    if let Some(failure) = walker.failure.take() {
        return Err(failure);
    }
    result.map_err(|error| match ApiError::from_json(&error) {
        ApiError::BadRequest(_) => {
            ApiError::BadRequest(format!("Malformed import document: {error}"))
        }
        _ => ApiError::Unprocessable(format!("Invalid import document: {error}")),
    })
}

struct Walker<'s> {
    sink: &'s mut dyn Sink,
    failure: Option<ApiError>,
}

impl Walker<'_> {
    /// Runs a sink step, turning its error into a serde error that stops
    /// the parse (the real error is kept for `walk`).
    fn call<E: de::Error>(
        &mut self,
        step: impl FnOnce(&mut dyn Sink) -> Result<(), ApiError>,
    ) -> Result<(), E> {
        step(&mut *self.sink).map_err(|error| {
            let message = error.to_string();
            self.failure = Some(error);
            E::custom(message)
        })
    }
}

/// `{"buckets": {...}, ...}`; other top-level keys are ignored.
struct DocumentSeed<'w, 's>(&'w mut Walker<'s>);

impl<'de> DeserializeSeed<'de> for DocumentSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for DocumentSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("an export document {\"buckets\": {...}}")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = false;
        while let Some(key) = map.next_key::<String>()? {
            if key == "buckets" {
                if seen {
                    return Err(de::Error::duplicate_field("buckets"));
                }
                seen = true;
                map.next_value_seed(BucketsSeed(&mut *self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        if !seen {
            return Err(de::Error::missing_field("buckets"));
        }
        Ok(())
    }
}

/// `{<key>: <bucket>, ...}`.
struct BucketsSeed<'w, 's>(&'w mut Walker<'s>);

impl<'de> DeserializeSeed<'de> for BucketsSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for BucketsSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("an object of buckets by id")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut index = 0;
        while let Some(key) = map.next_key::<String>()? {
            map.next_value_seed(BucketSeed {
                walker: &mut *self.0,
                key,
                index,
            })?;
            index += 1;
        }
        Ok(())
    }
}

/// One bucket: its fields, with `events` streamed to the sink.
struct BucketSeed<'w, 's> {
    walker: &'w mut Walker<'s>,
    key: String,
    index: usize,
}

impl<'de> DeserializeSeed<'de> for BucketSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for BucketSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a bucket object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let index = self.index;
        self.walker.call(|sink| sink.bucket_start(index))?;
        let mut seen: Vec<&'static str> = Vec::new();
        let mut id: Option<String> = None;
        let mut kind: Option<String> = None;
        let mut client: Option<String> = None;
        let mut hostname: Option<String> = None;
        let mut created: Option<Timestamp> = None;
        let mut data: Option<Data> = None;
        while let Some(field) = map.next_key::<String>()? {
            let name: &'static str = match field.as_str() {
                "id" => "id",
                "type" => "type",
                "client" => "client",
                "hostname" => "hostname",
                "created" => "created",
                "data" => "data",
                "events" => "events",
                _ => {
                    // metadata, last_updated and unknown fields.
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            if seen.contains(&name) {
                return Err(de::Error::duplicate_field(name));
            }
            seen.push(name);
            match name {
                "id" => id = map.next_value()?,
                "type" => kind = Some(map.next_value()?),
                "client" => client = Some(map.next_value()?),
                "hostname" => hostname = Some(map.next_value()?),
                "created" => created = map.next_value()?,
                "data" => data = map.next_value()?,
                _ => map.next_value_seed(EventsSeed {
                    walker: &mut *self.walker,
                    index,
                })?,
            }
        }
        let id = id.filter(|id| !id.is_empty()).unwrap_or(self.key);
        check_bucket_id(&id).map_err(|error| de::Error::custom(error.to_string()))?;
        let bucket = Bucket {
            kind: kind.ok_or_else(|| de::Error::missing_field("type"))?,
            client: client.ok_or_else(|| de::Error::missing_field("client"))?,
            hostname: hostname.ok_or_else(|| de::Error::missing_field("hostname"))?,
            id,
            created,
            data: data.unwrap_or_default(),
            metadata: BucketMetadata::default(),
            events: None,
            last_updated: None,
        };
        self.walker.call(|sink| sink.bucket_end(index, bucket))
    }
}

/// `events`: `null` or an array of events, each validated by `Event`'s
/// deserializer and handed to the sink without its id (imported ids come
/// from another database).
struct EventsSeed<'w, 's> {
    walker: &'w mut Walker<'s>,
    index: usize,
}

impl<'de> DeserializeSeed<'de> for EventsSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for EventsSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("an array of events or null")
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_some<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let index = self.index;
        while let Some(mut event) = seq.next_element::<Event>()? {
            event.id = None;
            self.walker.call(|sink| sink.event(index, event))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts what pass 1 sees.
    #[derive(Default)]
    struct Count {
        buckets: Vec<Bucket>,
        events: usize,
    }

    impl Sink for Count {
        fn bucket_start(&mut self, _index: usize) -> Result<(), ApiError> {
            Ok(())
        }
        fn event(&mut self, _index: usize, event: Event) -> Result<(), ApiError> {
            assert_eq!(event.id, None);
            self.events += 1;
            Ok(())
        }
        fn bucket_end(&mut self, _index: usize, bucket: Bucket) -> Result<(), ApiError> {
            self.buckets.push(bucket);
            Ok(())
        }
    }

    fn run(text: &str) -> Result<Count, ApiError> {
        let mut count = Count::default();
        walk(text.as_bytes(), &mut count)?;
        Ok(count)
    }

    const EVENT: &str =
        r#"{"id": 5, "timestamp": "2021-06-01T10:00:00Z", "duration": 1, "data": {"a": 1}}"#;

    #[test]
    fn valid_documents_stream_every_event() {
        let text = format!(
            r#"{{"buckets": {{"k1": {{"events": [{EVENT}, {EVENT}], "id": "b1", "type": "t", "client": "c", "hostname": "h", "metadata": {{"start": null}}, "last_updated": null}},
                            "k2": {{"type": "t", "client": "c", "hostname": "h", "events": null, "data": {{"x": 1}}, "created": "2021-01-01T00:00:00Z"}}}}, "other": [1]}}"#
        );
        let count = run(&text).unwrap();
        assert_eq!(count.events, 2);
        assert_eq!(count.buckets.len(), 2);
        assert_eq!(count.buckets[0].id, "b1", "the id inside wins");
        assert_eq!(count.buckets[1].id, "k2", "the key is the fallback");
        assert_eq!(count.buckets[1].data["x"], 1);
        assert!(run(r#"{"buckets": {}}"#).unwrap().buckets.is_empty());
    }

    #[test]
    fn invalid_documents_are_client_errors() {
        let truncated = format!(
            r#"{{"buckets": {{"b": {{"type": "t", "client": "c", "hostname": "h", "events": [{EVENT}, {EVENT}"#
        );
        let cases = [
            ("", 400),
            ("[]", 422),
            ("{}", 422),
            (r#"{"buckets": []}"#, 422),
            (
                r#"{"buckets": {"b": {"client": "c", "hostname": "h"}}}"#,
                422,
            ),
            (
                r#"{"buckets": {"b": {"type": 1, "client": "c", "hostname": "h"}}}"#,
                422,
            ),
            (
                r#"{"buckets": {"b": {"type": "t", "type": "t", "client": "c", "hostname": "h"}}}"#,
                422,
            ),
            (
                r#"{"buckets": {"b": {"type": "t", "client": "c", "hostname": "h", "events": [{"data": {}}]}}}"#,
                422,
            ),
            (
                r#"{"buckets": {"b": {"type": "t", "client": "c", "hostname": "h", "events": {}}}}"#,
                422,
            ),
            (
                r#"{"buckets": {"": {"type": "t", "client": "c", "hostname": "h"}}}"#,
                422,
            ),
            (r#"{"buckets": {}} trailing"#, 400),
            (&truncated, 400),
        ];
        for (text, status) in cases {
            let error = run(text).err().unwrap_or_else(|| panic!("accepted {text}"));
            assert_eq!(error.status().code, status, "{text}: {error}");
        }
    }
}
