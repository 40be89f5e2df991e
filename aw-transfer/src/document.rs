//! Reading export documents (`docs/API.md` §5) in bounded memory, and the two-pass
//! import shared by `POST /api/0/import` and the `import` command.
//!
//! [`walk`] streams one document through a [`Sink`] with serde: bucket
//! fields are collected (they are small), events are validated by
//! `Event`'s deserializer and handed over one at a time, so a document of
//! any size needs one event in memory. [`import_file`] walks a file twice:
//! pass 1 ([`validate`]) checks everything and keeps the bucket fields,
//! pass 2 stores, creating each bucket and merging its events in chunks.
//! A malformed document therefore stores nothing. Errors are `TransferError`s:
//! JSON errors carry serde's line and column in the message.

use std::fmt;
use std::fs::File;
use std::io::{BufReader, Read, Seek};

use aw_datastore::{Datastore, ImportSummary, PreparedEvent};
use aw_models::{Bucket, BucketMetadata, Data, Event, Timestamp};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::error::TransferError;
use aw_models::check_bucket_id;

/// Events handed to the datastore per call in pass 2.
const CHUNK_SIZE: usize = 5000;

/// Documents up to this size are read into memory for the two passes:
/// parsing from memory is about twice as fast as from a reader.
const IN_MEMORY_BYTES: u64 = 128 * 1024 * 1024;

/// Whether a document of `size` bytes is imported from memory
/// ([`import_bytes`]) rather than streamed from a file.
pub fn fits_in_memory(size: u64) -> bool {
    size <= IN_MEMORY_BYTES
}

/// Imports a document held in memory: in one pass when its events fit
/// in memory (`collect`; the document is freed before they are
/// stored), else validated first and imported in a second pass. A
/// document longer than the events may take is not tried in one pass:
/// its events, as stored, take about as much room as its text.
pub fn import_bytes(
    document: Vec<u8>,
    datastore: &Datastore,
) -> Result<ImportSummary, TransferError> {
    if document.len() <= HELD_EVENT_BYTES {
        if let Some(buckets) = collect(InMemory(&document), HELD_EVENT_BYTES) {
            drop(document);
            return store_oldest_first(buckets, datastore);
        }
    }
    let buckets = validate(InMemory(&document))?;
    import_validated(InMemory(&document), &buckets, datastore, &mut |_| {})
}

/// Validates, then imports, the document in `file`.
pub fn import_file(mut file: File, datastore: &Datastore) -> Result<ImportSummary, TransferError> {
    let size = file.metadata().map_err(internal)?.len();
    if fits_in_memory(size) {
        let mut document = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        file.read_to_end(&mut document).map_err(internal)?;
        return import_bytes(document, datastore);
    }
    let buckets = validate(Streamed(reader(&file)?))?;
    file.rewind().map_err(internal)?;
    import_validated(Streamed(reader(&file)?), &buckets, datastore, &mut |_| {})
}

/// Where a document is read from: [`Streamed`] or [`InMemory`].
pub trait Document {
    /// Streams the document through `sink` (see [`walk`]).
    fn walk(self, sink: &mut dyn Sink) -> Result<(), TransferError>;
}

/// A document read from a reader, in bounded memory.
#[derive(Debug)]
pub struct Streamed<R>(pub R);

/// A document in memory, parsed in place (about twice as fast as
/// through a reader, which copies every string).
#[derive(Debug, Clone, Copy)]
pub struct InMemory<'a>(pub &'a [u8]);

impl<R: Read> Document for Streamed<R> {
    fn walk(self, sink: &mut dyn Sink) -> Result<(), TransferError> {
        walk_json(serde_json::Deserializer::from_reader(self.0), sink)
    }
}

impl Document for InMemory<'_> {
    fn walk(self, sink: &mut dyn Sink) -> Result<(), TransferError> {
        walk_json(serde_json::Deserializer::from_slice(self.0), sink)
    }
}

/// Pass 1: checks a whole document and returns its buckets (without
/// events), in document order.
pub fn validate(document: impl Document) -> Result<Vec<Bucket>, TransferError> {
    let mut tally = Tally::default();
    document.walk(&mut tally)?;
    Ok(tally.buckets)
}

/// Pass 2: stores the document read from `reader`, which [`validate`]
/// accepted with `buckets`. `progress` sees the running total after each
/// chunk stored.
///
/// Each bucket's events are stored oldest first when they fit in 64 MB
/// (`HELD_EVENT_BYTES`, see `Importer`). Parsing and storing overlap:
/// this thread parses while a second one hands what is ready to the
/// datastore, so a document of several buckets stores one while it parses
/// the next, and a bucket too large to hold is stored chunk by chunk while
/// the next chunk is parsed.
pub fn import_validated(
    document: impl Document,
    buckets: &[Bucket],
    datastore: &Datastore,
    progress: &mut (dyn FnMut(&ImportSummary) + Send),
) -> Result<ImportSummary, TransferError> {
    import_validated_holding(document, buckets, datastore, progress, HELD_EVENT_BYTES)
}

/// [`import_validated`], holding at most `limit` bytes of a bucket's
/// events to store them oldest first.
fn import_validated_holding(
    document: impl Document,
    buckets: &[Bucket],
    datastore: &Datastore,
    progress: &mut (dyn FnMut(&ImportSummary) + Send),
    limit: usize,
) -> Result<ImportSummary, TransferError> {
    // One job may wait while one is stored and the next parsed, which
    // bounds memory by three buckets' held events.
    let (jobs, queue) = std::sync::mpsc::sync_channel::<Job>(1);
    std::thread::scope(|scope| {
        let storer = scope.spawn(move || {
            let mut summary = ImportSummary::default();
            // A failure ends the loop and drops `queue`, which stops the
            // parser at its next chunk.
            for job in queue {
                match job {
                    Job::Bucket(bucket) => summary += datastore.import_bucket(bucket)?,
                    Job::Events(bucket_id, events) => {
                        store_events(datastore, &bucket_id, events, &mut summary, progress)?
                    }
                }
            }
            Ok::<_, TransferError>(summary)
        });
        let mut importer = Importer {
            jobs,
            buckets,
            current: None,
            held: HeldEvents::default(),
            limit,
            in_document_order: false,
        };
        let parsed = document.walk(&mut importer);
        drop(importer);
        let stored = storer
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        // A storage failure explains a parser stopped by it, so it wins.
        let summary = stored?;
        parsed.map_err(|error| match error {
            // The document validated a moment ago; a parse error now means
            // the temp file changed under us.
            TransferError::Malformed(message) | TransferError::Invalid(message) => {
                TransferError::Failed(format!(
                    "Import failed on re-reading the document: {message}"
                ))
            }
            other => other,
        })?;
        Ok(summary)
    })
}

/// What pass 2's parser hands to the thread that stores: a bucket, or
/// events of the last bucket, to store in chunks in the order given.
enum Job {
    Bucket(Bucket),
    Events(String, Vec<PreparedEvent>),
}

/// A buffered reader of `file` from its current position.
pub fn reader(file: &File) -> Result<BufReader<File>, TransferError> {
    Ok(BufReader::with_capacity(
        256 * 1024,
        file.try_clone().map_err(internal)?,
    ))
}

/// An I/O failure of an import as an internal error.
pub fn internal(error: std::io::Error) -> TransferError {
    TransferError::Failed(format!("Import failed: {error}"))
}

/// What a pass does with the document as it is read.
pub trait Sink {
    /// Before the fields of the `index`th bucket are read.
    fn bucket_start(&mut self, index: usize) -> Result<(), TransferError>;
    /// One valid event of the `index`th bucket.
    fn event(&mut self, index: usize, event: Event) -> Result<(), TransferError>;
    /// Whether the sink only needs to know that each event is valid: then
    /// events are checked without being built (`EventCheck`) and passed
    /// to [`Sink::checked`] instead of [`Sink::event`].
    fn checks_only(&self) -> bool {
        false
    }
    /// One valid event of the `index`th bucket, for a sink that
    /// [`Sink::checks_only`].
    fn checked(&mut self, _index: usize) -> Result<(), TransferError> {
        Ok(())
    }
    /// Whether the sink stores events as the datastore takes them: then
    /// each is read with its data as the document's text, prepared
    /// (`PreparedEvent::from_document`) and passed to [`Sink::prepared`]
    /// instead of [`Sink::event`]. An event refused that way stops the
    /// walk with an error even if `Event`'s deserializer would take it (an
    /// id of `7.0`, data nested more than 100 levels deep).
    fn prepares(&self) -> bool {
        false
    }
    /// One valid event of the `index`th bucket, for a sink that
    /// [`Sink::prepares`].
    fn prepared(&mut self, _index: usize, _event: PreparedEvent) -> Result<(), TransferError> {
        Ok(())
    }
    /// After the `index`th bucket, with its fields (without events).
    fn bucket_end(&mut self, index: usize, bucket: Bucket) -> Result<(), TransferError>;
}

/// Pass 1: keeps the bucket fields and counts the events, dropping them.
#[derive(Debug, Default)]
pub struct Tally {
    /// The buckets' fields, without events, in document order.
    pub buckets: Vec<Bucket>,
    /// Valid events seen.
    pub events: u64,
}

impl Sink for Tally {
    fn bucket_start(&mut self, _index: usize) -> Result<(), TransferError> {
        Ok(())
    }
    fn event(&mut self, _index: usize, _event: Event) -> Result<(), TransferError> {
        self.events += 1;
        Ok(())
    }
    fn checks_only(&self) -> bool {
        true
    }
    fn checked(&mut self, _index: usize) -> Result<(), TransferError> {
        self.events += 1;
        Ok(())
    }
    fn bucket_end(&mut self, _index: usize, bucket: Bucket) -> Result<(), TransferError> {
        self.buckets.push(bucket);
        Ok(())
    }
}

/// Pass 2's parsing side: chunks what pass 1 validated for the storer.
///
/// A bucket's events are held until the bucket ends and stored oldest
/// first, as heartbeats store them (see [`store_oldest_first`]). A bucket
/// whose events outgrow its limit ([`HELD_EVENT_BYTES`]) is stored in
/// document order instead, chunk by chunk as it is read, so memory stays
/// bounded.
struct Importer<'a> {
    jobs: std::sync::mpsc::SyncSender<Job>,
    buckets: &'a [Bucket],
    current: Option<String>,
    /// Validated with their data serialized here, on the parsing thread,
    /// not handed to the storer yet.
    held: HeldEvents,
    /// Most bytes of a bucket's events held back.
    limit: usize,
    /// The current bucket outgrew the limit: its events go out as read.
    in_document_order: bool,
}

impl Importer<'_> {
    fn send(&self, job: Job) -> Result<(), TransferError> {
        self.jobs.send(job).map_err(|_| {
            // The storer failed; its error is the one reported.
            TransferError::Failed("Import failed: storing stopped".into())
        })
    }

    /// Hands the held events to the storer, which stores them in chunks
    /// of [`CHUNK_SIZE`] while this thread reads on (a whole bucket's
    /// sorted events while it reads the next bucket).
    fn flush(&mut self) -> Result<(), TransferError> {
        match &self.current {
            Some(bucket_id) if !self.held.events.is_empty() => {
                let job = Job::Events(bucket_id.clone(), self.held.take());
                self.send(job)
            }
            _ => Ok(()),
        }
    }
}

impl Sink for Importer<'_> {
    fn bucket_start(&mut self, index: usize) -> Result<(), TransferError> {
        let bucket = self.buckets.get(index).cloned().ok_or_else(|| {
            TransferError::Failed("Import failed: the document changed between passes".into())
        })?;
        self.current = Some(bucket.id.clone());
        self.in_document_order = false;
        self.send(Job::Bucket(bucket))
    }
    fn event(&mut self, _index: usize, event: Event) -> Result<(), TransferError> {
        // Imported ids come from another database (`docs/API.md` §5): a prepared
        // event has none.
        self.held.push(PreparedEvent::new(&event)?);
        if self.in_document_order {
            if self.held.events.len() >= CHUNK_SIZE {
                self.flush()?;
            }
        } else if self.held.bytes > self.limit {
            self.in_document_order = true;
            self.flush()?;
        }
        Ok(())
    }
    fn bucket_end(&mut self, _index: usize, _bucket: Bucket) -> Result<(), TransferError> {
        if !self.in_document_order {
            PreparedEvent::sort_oldest_first(&mut self.held.events);
        }
        self.flush()?;
        self.current = None;
        Ok(())
    }
}

/// Most memory the prepared events an import holds may take: one
/// bucket's in pass 2, a whole document's in [`collect`]: more than a
/// year of window events (`benches/runs/2026-11-25-import-order.md`).
const HELD_EVENT_BYTES: usize = 64 * 1024 * 1024;

/// Prepared events held back, and what they take in memory.
#[derive(Debug, Default)]
struct HeldEvents {
    events: Vec<PreparedEvent>,
    bytes: usize,
}

impl HeldEvents {
    fn push(&mut self, event: PreparedEvent) {
        self.bytes += event.size();
        self.events.push(event);
    }

    fn take(&mut self) -> Vec<PreparedEvent> {
        self.bytes = 0;
        std::mem::take(&mut self.events)
    }
}

/// `events` in chunks of [`CHUNK_SIZE`], in order.
fn chunks(events: Vec<PreparedEvent>) -> impl Iterator<Item = Vec<PreparedEvent>> {
    let mut events = events.into_iter();
    std::iter::from_fn(move || {
        let chunk: Vec<PreparedEvent> = events.by_ref().take(CHUNK_SIZE).collect();
        (!chunk.is_empty()).then_some(chunk)
    })
}

/// Why [`collect`] gave up: the document's events take more than its
/// limit. Never reported: the import goes the two-pass way.
const TOO_LARGE: &str = "the document's events do not fit in memory";

/// The one-pass import's sink: every bucket with its prepared events.
struct Collector {
    buckets: Vec<(Bucket, Vec<PreparedEvent>)>,
    /// The current bucket's events.
    current: Vec<PreparedEvent>,
    /// What every event so far takes, and how much it may.
    bytes: usize,
    limit: usize,
}

impl Sink for Collector {
    fn bucket_start(&mut self, _index: usize) -> Result<(), TransferError> {
        Ok(())
    }
    fn event(&mut self, index: usize, event: Event) -> Result<(), TransferError> {
        self.prepared(index, PreparedEvent::new(&event)?)
    }
    fn prepares(&self) -> bool {
        true
    }
    fn prepared(&mut self, _index: usize, event: PreparedEvent) -> Result<(), TransferError> {
        self.bytes += event.size();
        if self.bytes > self.limit {
            return Err(TransferError::Failed(TOO_LARGE.into()));
        }
        self.current.push(event);
        Ok(())
    }
    fn bucket_end(&mut self, _index: usize, bucket: Bucket) -> Result<(), TransferError> {
        self.buckets
            .push((bucket, std::mem::take(&mut self.current)));
        Ok(())
    }
}

/// Pass 1 and 2 in one for a document whose events take at most `limit`
/// bytes in memory: every bucket and its events, prepared, or `None` when
/// the document is invalid or too large, which the two passes then handle
/// (and report) as always. Nothing is stored before the whole document is
/// read, as with the two passes; reading it once instead of twice pays
/// for storing each bucket only after all of it is read, which sorting it
/// needs anyway.
fn collect(document: InMemory<'_>, limit: usize) -> Option<Vec<(Bucket, Vec<PreparedEvent>)>> {
    let mut collector = Collector {
        buckets: Vec::new(),
        current: Vec::new(),
        bytes: 0,
        limit,
    };
    document.walk(&mut collector).ok()?;
    Some(collector.buckets)
}

/// Stores what [`collect`] read: each bucket created or merged into, its
/// events oldest first (`PreparedEvent::sort_oldest_first`), as heartbeats
/// store them, whatever order the document lists them in (exports list
/// them newest first).
fn store_oldest_first(
    buckets: Vec<(Bucket, Vec<PreparedEvent>)>,
    datastore: &Datastore,
) -> Result<ImportSummary, TransferError> {
    let mut summary = ImportSummary::default();
    for (bucket, mut events) in buckets {
        let bucket_id = bucket.id.clone();
        summary += datastore.import_bucket(bucket)?;
        PreparedEvent::sort_oldest_first(&mut events);
        store_events(datastore, &bucket_id, events, &mut summary, &mut |_| {})?;
    }
    Ok(summary)
}

/// Stores `events` into `bucket_id` in chunks of [`CHUNK_SIZE`], in
/// order, adding each chunk's outcome to `summary` and showing it to
/// `progress`.
fn store_events(
    datastore: &Datastore,
    bucket_id: &str,
    events: Vec<PreparedEvent>,
    summary: &mut ImportSummary,
    progress: &mut (dyn FnMut(&ImportSummary) + Send),
) -> Result<(), TransferError> {
    for chunk in chunks(events) {
        *summary += datastore.import_prepared(bucket_id, chunk)?;
        progress(summary);
    }
    Ok(())
}

/// Streams one export document through `sink`. The first error wins: a
/// sink's own error is returned as is, a JSON error as 400/422.
pub fn walk(reader: impl Read, sink: &mut dyn Sink) -> Result<(), TransferError> {
    Streamed(reader).walk(sink)
}

fn walk_json<'de, R: serde_json::de::Read<'de>>(
    mut deserializer: serde_json::Deserializer<R>,
    sink: &mut dyn Sink,
) -> Result<(), TransferError> {
    let mut walker = Walker {
        sink,
        failure: None,
    };
    let result = DocumentSeed(&mut walker)
        .deserialize(&mut deserializer)
        .and_then(|()| deserializer.end());
    if let Some(failure) = walker.failure.take() {
        return Err(failure);
    }
    result.map_err(|error| TransferError::from_json(&error))
}

struct Walker<'s> {
    sink: &'s mut dyn Sink,
    failure: Option<TransferError>,
}

impl Walker<'_> {
    /// Runs a sink step, turning its error into a serde error that stops
    /// the parse (the real error is kept for `walk`).
    fn call<E: de::Error>(
        &mut self,
        step: impl FnOnce(&mut dyn Sink) -> Result<(), TransferError>,
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
/// deserializer and handed to the sink with its id (the importer drops it;
/// an export keeps it).
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
        if self.walker.sink.checks_only() {
            while let Some(check) = seq.next_element::<EventCheck>()? {
                check.validate::<A::Error>()?;
                self.walker.call(|sink| sink.checked(index))?;
            }
            return Ok(());
        }
        if self.walker.sink.prepares() {
            while let Some(event) = seq.next_element::<RawEvent>()? {
                let event = PreparedEvent::from_document(
                    event.timestamp,
                    event.duration,
                    String::from(Box::<str>::from(event.data)),
                )
                .map_err(de::Error::custom)?;
                self.walker.call(|sink| sink.prepared(index, event))?;
            }
            return Ok(());
        }
        while let Some(event) = seq.next_element::<Event>()? {
            self.walker.call(|sink| sink.event(index, event))?;
        }
        Ok(())
    }
}

/// An event as a document holds it, read without building an `Event`:
/// the fields `Event`'s deserializer reads, with the data as `D`.
#[derive(serde::Deserialize)]
struct DocumentEvent<D> {
    #[serde(default)]
    #[allow(dead_code)]
    id: Option<i64>,
    timestamp: Timestamp,
    #[serde(default)]
    duration: aw_models::Duration,
    #[allow(dead_code)]
    data: D,
}

/// An event read for a sink that [`Sink::prepares`]: its data is kept as
/// the document's text, so an export's data goes to the datastore without
/// being built into maps and written back (half of the parsing time of a
/// year's import).
type RawEvent = DocumentEvent<Box<serde_json::value::RawValue>>;

/// An event checked as `Event`'s deserializer checks it, without building
/// its data: pass 1 of a year's import spent most of its time making maps
/// and strings only to drop them.
type EventCheck = DocumentEvent<ObjectCheck>;

impl EventCheck {
    fn validate<E: de::Error>(&self) -> Result<(), E> {
        Event::new(self.timestamp, self.duration, Data::new())
            .validate()
            .map_err(E::custom)
    }
}

/// A JSON object, checked like `Data`'s deserializer checks one.
struct ObjectCheck;

impl<'de> de::Deserialize<'de> for ObjectCheck {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ObjectVisitor)
    }
}

struct ObjectVisitor;

impl<'de> Visitor<'de> for ObjectVisitor {
    type Value = ObjectCheck;
    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a map")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ObjectCheck, A::Error> {
        while map.next_entry::<AnyCheck, AnyCheck>()?.is_some() {}
        Ok(ObjectCheck)
    }
}

/// Any JSON value, read the way `serde_json::Value` reads it (so numbers
/// out of range and bad strings fail alike; `IgnoredAny` would skip them
/// unchecked) but not kept.
struct AnyCheck;

impl<'de> de::Deserialize<'de> for AnyCheck {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(AnyVisitor)
    }
}

struct AnyVisitor;

impl<'de> Visitor<'de> for AnyVisitor {
    type Value = AnyCheck;
    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any valid JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<AnyCheck, E> {
        Ok(AnyCheck)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<AnyCheck, E> {
        Ok(AnyCheck)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<AnyCheck, E> {
        Ok(AnyCheck)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<AnyCheck, E> {
        Ok(AnyCheck)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<AnyCheck, E> {
        Ok(AnyCheck)
    }
    fn visit_unit<E: de::Error>(self) -> Result<AnyCheck, E> {
        Ok(AnyCheck)
    }
    fn visit_none<E: de::Error>(self) -> Result<AnyCheck, E> {
        Ok(AnyCheck)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<AnyCheck, A::Error> {
        while seq.next_element::<AnyCheck>()?.is_some() {}
        Ok(AnyCheck)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AnyCheck, A::Error> {
        while map.next_entry::<AnyCheck, AnyCheck>()?.is_some() {}
        Ok(AnyCheck)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The HTTP status an error gets (`error.rs`): malformed 400, invalid
    /// 422, anything else 500.
    pub(super) fn status(error: &TransferError) -> u16 {
        match error {
            TransferError::Malformed(_) => 400,
            TransferError::Invalid(_) => 422,
            TransferError::Failed(_) | TransferError::Store(_) => 500,
        }
    }

    /// Walks `text` streamed and in memory; both must agree.
    fn run(text: &str) -> Result<Tally, TransferError> {
        let mut count = Tally::default();
        let streamed = walk(text.as_bytes(), &mut count);
        let mut again = Tally::default();
        let in_memory = InMemory(text.as_bytes()).walk(&mut again);
        // serde_json's readers may place a type error one column apart;
        // the outcome and the kind of error must be the same.
        assert_eq!(
            streamed.as_ref().map_err(std::mem::discriminant).err(),
            in_memory.as_ref().map_err(std::mem::discriminant).err(),
            "streamed and in-memory walks of {text}: {streamed:?} / {in_memory:?}"
        );
        assert_eq!(count.events, again.events);
        streamed?;
        Ok(count)
    }

    /// A document of one bucket holding `event` alone.
    fn in_a_document(event: &[u8]) -> Vec<u8> {
        let mut text =
            br#"{"buckets": {"b": {"type": "t", "client": "c", "hostname": "h", "events": ["#
                .to_vec();
        text.extend_from_slice(event);
        text.extend_from_slice(b"]}}}");
        text
    }

    /// A sink that keeps every event prepared: built as pass 2 builds
    /// them (`Event`, then `PreparedEvent::new`), or, when it `prepares`,
    /// read the one-pass import's way.
    #[derive(Default)]
    struct Build {
        prepares: bool,
        events: Vec<PreparedEvent>,
    }

    impl Sink for Build {
        fn bucket_start(&mut self, _index: usize) -> Result<(), TransferError> {
            Ok(())
        }
        fn event(&mut self, _index: usize, event: Event) -> Result<(), TransferError> {
            self.events.push(PreparedEvent::new(&event)?);
            Ok(())
        }
        fn prepares(&self) -> bool {
            self.prepares
        }
        fn prepared(&mut self, _index: usize, event: PreparedEvent) -> Result<(), TransferError> {
            self.events.push(event);
            Ok(())
        }
        fn bucket_end(&mut self, _index: usize, _bucket: Bucket) -> Result<(), TransferError> {
            Ok(())
        }
    }

    #[test]
    fn checking_events_accepts_exactly_what_building_them_accepts() {
        let events: &[&[u8]] = &[
            br#"{"timestamp": "2021-06-01T10:00:00Z", "data": {}}"#,
            br#"{"timestamp": "2021-06-01T10:00:00Z", "duration": 1.5, "data": {"a": [1, {"b": null}], "c": "\u00e9\n"}, "x": 1}"#,
            br#"{"id": null, "timestamp": "2021-06-01T10:00:00+02:00", "data": {"a": 1, "a": 2}}"#,
            br#"{"timestamp": "2021-06-01T10:00:00Z", "data": {"n": 1e400}}"#,
            br#"{"timestamp": "2021-06-01T10:00:00Z", "data": {"n": -1e-400}}"#,
            br#"{"timestamp": "2021-06-01T10:00:00Z", "data": {"n": 18446744073709551616}}"#,
            br#"{"timestamp": "2021-06-01T10:00:00Z", "data": {"s": "\ud800"}}"#,
            br#"{"timestamp": "2021-06-01T10:00:00Z", "data": {"s": "\x"}}"#,
            b"{\"timestamp\": \"2021-06-01T10:00:00Z\", \"data\": {\"s\": \"\xff\"}}",
            b"{\"timestamp\": \"2021-06-01T10:00:00Z\", \"data\": {\"\xc3\": 1}}",
            br#"{"timestamp": "2021-06-01T10:00:00Z", "data": []}"#,
            br#"{"timestamp": "2021-06-01T10:00:00Z", "data": null}"#,
            br#"{"timestamp": "2021-06-01T10:00:00Z"}"#,
            br#"{"timestamp": "yesterday", "data": {}}"#,
            br#"{"timestamp": "2021-06-01T10:00:00Z", "duration": -1, "data": {}}"#,
            br#"{"timestamp": "9999-12-31T23:59:59Z", "duration": 1e12, "data": {}}"#,
            br#"{"id": "7", "timestamp": "2021-06-01T10:00:00Z", "data": {}}"#,
            br#"{"timestamp": "2021-06-01T10:00:00Z", "data": {"a": [[[[[[[[[[1]]]]]]]]]]}}"#,
        ];
        let mut accepted = Vec::new();
        for event in events {
            let text = in_a_document(event);
            let mut checked = Tally::default();
            let checking = InMemory(&text).walk(&mut checked);
            let mut built = Build::default();
            let building = InMemory(&text).walk(&mut built);
            let shown = String::from_utf8_lossy(event);
            assert_eq!(
                checking.as_ref().map_err(status).err(),
                building.as_ref().map_err(status).err(),
                "{shown}: {checking:?} / {building:?}"
            );
            assert_eq!(checked.events, built.events.len() as u64, "{shown}");
            accepted.push(building.is_ok());
        }
        // Valid: the first three, tiny and huge numbers (read as floats)
        // and deep nesting; the rest are not.
        let valid: Vec<usize> = (0..accepted.len()).filter(|&i| accepted[i]).collect();
        assert_eq!(valid, [0, 1, 2, 4, 5, 17]);
    }

    #[test]
    fn preparing_stores_what_building_stores_and_refuses_nothing_it_takes_silently() {
        let events: &[&[u8]] = &[
            br#"{"timestamp": "2021-06-01T10:00:00Z", "data": {}}"#,
            br#"{"id": null, "timestamp": "2021-06-01T10:00:00.123Z", "duration": 1.627, "data": {"app":"Spotify","title":"user@3: ~/src/meeting/1"}}"#,
            br#"{"id": 7, "timestamp": "2021-06-01T10:00:00Z", "duration": 0.95, "data": {"audible":false,"incognito":false,"tabCount":6,"title":"metrics","url":"https://figma.com/m?id=19"}}"#,
            br#"{"timestamp": "2021-06-01T10:00:00Z", "duration": 1.5, "data": {"a": [1, {"b": null}], "c": "\u00e9\n"}, "x": 1}"#,
            br#"{"timestamp": "2021-06-01T10:00:00+02:00", "data": {"b": 1, "a": 2, "a": 3}}"#,
            br#"{"timestamp": "2021-06-01T10:00:00Z", "data": {"n": 1e400, "m": 1.50, "o": -0}}"#,
            br#"{"timestamp": "2021-06-01T10:00:00Z", "data": {"n": 18446744073709551616}}"#,
            br#"{"timestamp": "2021-06-01T10:00:00Z", "data": {"s": "\ud800"}}"#,
            br#"{"timestamp": "2021-06-01T10:00:00Z", "data": []}"#,
            br#"{"timestamp": "2021-06-01T10:00:00Z", "data": null}"#,
            br#"{"timestamp": "2021-06-01T10:00:00Z", "duration": -1, "data": {}}"#,
            br#"{"timestamp": "9999-12-31T23:59:59Z", "duration": 1e12, "data": {}}"#,
            br#"{"id": 7.0, "timestamp": "2021-06-01T10:00:00Z", "data": {}}"#,
            br#"{"timestamp": "2021-06-01T10:00:00Z", "data": {"a": [[[[[[[[[[1]]]]]]]]]]}}"#,
        ];
        let deep = format!(
            r#"{{"timestamp": "2021-06-01T10:00:00Z", "data": {{"a": {}1{}}}}}"#,
            "[".repeat(105),
            "]".repeat(105)
        );
        let events = events.iter().copied().chain([deep.as_bytes()]);
        let mut prepared_count = 0;
        for event in events {
            let text = in_a_document(event);
            let shown = String::from_utf8_lossy(event);
            let mut prepared = Build {
                prepares: true,
                ..Build::default()
            };
            let preparing = InMemory(&text).walk(&mut prepared);
            let mut built = Build::default();
            let building = InMemory(&text).walk(&mut built);
            match preparing {
                Ok(()) => {
                    prepared_count += 1;
                    assert!(building.is_ok(), "{shown}: {building:?}");
                    assert_eq!(prepared.events, built.events, "{shown}");
                }
                // Refused here, the import reads the document the other way.
                Err(_) => assert!(
                    building.is_err() || shown.contains("7.0") || shown.contains("[[[[[[[[[[[["),
                    "{shown} is refused only where building refuses it"
                ),
            }
        }
        assert_eq!(prepared_count, 7);
    }

    #[test]
    fn a_storage_failure_ends_the_import_with_its_error() {
        let text = format!(
            r#"{{"buckets": {{"b": {{"type": "t", "client": "c", "hostname": "h", "events": [{EVENT}, {EVENT}]}}}}}}"#
        );
        let buckets = validate(InMemory(text.as_bytes())).unwrap();
        let datastore = Datastore::open_in_memory().unwrap();
        datastore.close().unwrap();
        let error = import_validated(InMemory(text.as_bytes()), &buckets, &datastore, &mut |_| {})
            .unwrap_err();
        assert!(
            !error.to_string().contains("storing stopped"),
            "the storage error is reported: {error}"
        );
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
            assert_eq!(self::status(&error), status, "{text}: {error}");
        }
    }

    /// A document listing one bucket's events newest first, as exports
    /// do, with two events equal in start and end.
    const NEWEST_FIRST: &str = r#"{"buckets": {"b": {"type": "t", "client": "c", "hostname": "h", "events": [
        {"timestamp": "2021-06-01T10:00:03Z", "duration": 1, "data": {"n": 3}},
        {"timestamp": "2021-06-01T10:00:02Z", "duration": 1, "data": {"tie": "first"}},
        {"timestamp": "2021-06-01T10:00:02Z", "duration": 1, "data": {"tie": "second"}},
        {"timestamp": "2021-06-01T10:00:01Z", "duration": 9, "data": {"n": 1}},
        {"timestamp": "2021-06-01T10:00:01Z", "duration": 1, "data": {"n": 0}}
    ]}}}"#;

    /// Bucket `b` of `datastore` as listed (newest first): each event's
    /// data and id.
    fn listed(datastore: &Datastore) -> Vec<(String, i64)> {
        let query = aw_datastore::EventQuery {
            start: None,
            end: None,
            limit: None,
        };
        datastore
            .events("b", query)
            .wait()
            .unwrap()
            .into_iter()
            .map(|event| {
                let data = serde_json::to_string(&event.data).unwrap();
                (data, event.id.unwrap())
            })
            .collect()
    }

    /// The listing the document gives, with ids rising from the oldest
    /// event (stored first) to the newest.
    fn stored_oldest_first() -> Vec<String> {
        [
            r#"{"n":3}"#,
            r#"{"tie":"first"}"#,
            r#"{"tie":"second"}"#,
            r#"{"n":0}"#,
            r#"{"n":1}"#,
        ]
        .map(String::from)
        .to_vec()
    }

    fn ids_rise_oldest_first(listing: &[(String, i64)]) {
        let ids: Vec<i64> = listing.iter().map(|(_, id)| *id).collect();
        // Newest first: the ties keep the document's order, so the first
        // of them has the smaller id, as a listing orders ties.
        assert_eq!(ids[1] + 1, ids[2], "{listing:?}");
        for (newer, older) in [(0, 1), (2, 3), (3, 4)] {
            assert!(ids[newer] > ids[older], "{listing:?}");
        }
    }

    #[test]
    fn one_pass_imports_store_events_oldest_first() {
        let datastore = Datastore::open_in_memory().unwrap();
        let summary = import_bytes(NEWEST_FIRST.as_bytes().to_vec(), &datastore).unwrap();
        assert_eq!((summary.buckets_created, summary.inserted), (1, 5));
        let listing = listed(&datastore);
        let data: Vec<String> = listing.iter().map(|(data, _)| data.clone()).collect();
        assert_eq!(data, stored_oldest_first());
        ids_rise_oldest_first(&listing);
    }

    #[test]
    fn two_pass_imports_store_events_oldest_first_while_they_fit() {
        let document = InMemory(NEWEST_FIRST.as_bytes());
        let buckets = validate(document).unwrap();
        let datastore = Datastore::open_in_memory().unwrap();
        import_validated(document, &buckets, &datastore, &mut |_| {}).unwrap();
        let listing = listed(&datastore);
        let data: Vec<String> = listing.iter().map(|(data, _)| data.clone()).collect();
        assert_eq!(data, stored_oldest_first());
        ids_rise_oldest_first(&listing);
        // A bucket that outgrows the limit is stored as the document lists
        // it: the same events, ids rising from the first listed.
        let datastore = Datastore::open_in_memory().unwrap();
        let mut seen = Vec::new();
        import_validated_holding(
            document,
            &buckets,
            &datastore,
            &mut |summary| seen.push(summary.inserted),
            1,
        )
        .unwrap();
        let listing = listed(&datastore);
        let data: Vec<String> = listing.iter().map(|(data, _)| data.clone()).collect();
        assert_eq!(data, stored_oldest_first());
        let ids: Vec<i64> = listing.iter().map(|(_, id)| *id).collect();
        assert!(
            ids.windows(2).take(3).all(|pair| pair[0] < pair[1]),
            "{ids:?}"
        );
        assert_eq!(seen.last(), Some(&5));
    }

    #[test]
    fn a_document_too_large_for_one_pass_takes_two() {
        let document = InMemory(NEWEST_FIRST.as_bytes());
        assert!(collect(document, 1).is_none());
        let whole = collect(document, HELD_EVENT_BYTES).unwrap();
        assert_eq!(whole.len(), 1);
        assert_eq!(whole[0].1.len(), 5);
        // An invalid document is left to the two passes, which report it.
        let invalid = NEWEST_FIRST.replace("2021-06-01T10:00:01Z", "yesterday");
        assert!(collect(InMemory(invalid.as_bytes()), HELD_EVENT_BYTES).is_none());
        let datastore = Datastore::open_in_memory().unwrap();
        let error = import_bytes(invalid.into_bytes(), &datastore).unwrap_err();
        assert_eq!(status(&error), 422, "{error}");
        assert!(datastore.buckets().wait().unwrap().is_empty());
    }
}
