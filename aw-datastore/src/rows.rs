//! Conversions between SQL rows and model values.
//!
//! Event rows are read as `id, starttime, endtime, data`. Bucket `created`
//! is text in the format rusqlite writes for a chrono `DateTime<Utc>`
//! (`2021-06-01 09:00:00.123456789+00:00`), which is what aw-server-rust
//! stores; reading accepts the other forms that format has had.

use std::collections::HashMap;
use std::sync::Arc;

use aw_models::{Data, Duration, Event, EventData, Projector, SharedEvent, StringPool, Timestamp};
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

/// Decoded data of one read, by stored text: each distinct text is parsed
/// once and its events share the result. The window bucket of a year holds
/// ~17k distinct texts in ~300k rows, so this saves most of the parsing and
/// nearly all of the memory of a long read. In a long read the objects
/// also share their equal string values (`strings`): a year of browser
/// data is ~78k objects but ~4.5k URLs and page titles.
#[derive(Debug, Default)]
pub(crate) struct Interner {
    /// By the text's bytes: a text seen before is not checked for UTF-8
    /// again (3 % of a year's browser read).
    seen: HashMap<Box<[u8]>, (Arc<EventData>, u32), foldhash::fast::RandomState>,
    strings: Option<StringPool>,
    /// For a read of some keys only: each text's object reduced to them,
    /// and its class.
    reducer: Option<Projector>,
}

/// Most distinct texts an [`Interner`] makes room for up front.
const PRESIZED_TEXTS: usize = 1 << 14;

/// Reads expected to be longer than this pool their strings: a short
/// read's strings repeat little (a day's window titles are nearly all
/// distinct), and hashing each of them cost a 1-day query 2.4 % more
/// instructions, while a year's peak memory was 17 MB lower with it.
pub(crate) const POOLED_READ_ROWS: usize = 20_000;

impl Interner {
    /// An interner for a read of about `rows` rows, with room for that
    /// many distinct texts up to a week's worth (growing the map was 1 % of
    /// a 1-day dashboard query).
    pub(crate) fn for_rows(rows: usize, keys: Option<&[String]>) -> Interner {
        Interner {
            seen: HashMap::with_capacity_and_hasher(rows.min(PRESIZED_TEXTS), Default::default()),
            strings: (rows > POOLED_READ_ROWS).then(StringPool::new),
            reducer: keys.map(Projector::new),
        }
    }

    /// The shared data of the stored text `bytes`, checked and parsed (and
    /// reduced) on first sight, with its class (0 when not reduced).
    fn data(&mut self, bytes: &[u8]) -> rusqlite::Result<(Arc<EventData>, u32)> {
        if let Some((data, class)) = self.seen.get(bytes) {
            return Ok((Arc::clone(data), *class));
        }
        let data = decode_text(bytes, &mut self.strings).map_err(data_failure)?;
        let (data, class) = shared(data, &mut self.reducer);
        self.seen.insert(bytes.into(), (Arc::clone(&data), class));
        Ok((data, class))
    }
}

/// A decoded object shared, reduced by `reducer` if there is one, with its
/// class (0 when not reduced).
fn shared(data: EventData, reducer: &mut Option<Projector>) -> (Arc<EventData>, u32) {
    match reducer {
        Some(reducer) => reducer.reduce(data),
        None => (Arc::new(data), 0),
    }
}

/// A stored data text checked for UTF-8 and parsed, its strings from
/// `strings` if given.
fn decode_text(
    bytes: &[u8],
    strings: &mut Option<StringPool>,
) -> Result<EventData, Box<dyn std::error::Error + Send + Sync>> {
    let text = std::str::from_utf8(bytes)?;
    let parsed = match strings {
        Some(strings) => EventData::from_json_pooled(text, strings),
        None => serde_json::from_str::<EventData>(text),
    };
    Ok(parsed?)
}

/// A long read's distinct data texts, handed to a second thread that
/// decodes them while this one steps through the rows
/// (`queries::shared_events`). Each row gets the number of its text, in
/// order of first sight; the decoder answers in that order.
pub(crate) struct TextQueue {
    /// The number of each text seen, by its bytes.
    seen: HashMap<Box<[u8]>, u32, foldhash::fast::RandomState>,
    /// Texts not handed over yet.
    batch: TextBatch,
    decoder: crossbeam_channel::Sender<TextBatch>,
}

/// Texts handed to the decoder at a time: few enough that it starts soon,
/// enough that it rarely waits for the channel.
const BATCH_TEXTS: usize = 128;

/// Data texts back to back, with where each ends.
#[derive(Debug, Default)]
pub(crate) struct TextBatch {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl TextBatch {
    fn push(&mut self, text: &[u8]) {
        self.bytes.extend_from_slice(text);
        self.ends.push(self.bytes.len());
    }

    fn texts(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .filter_map(|(start, &end)| self.bytes.get(start..end))
    }
}

impl TextQueue {
    /// A queue for a read of about `rows` rows, feeding `decoder`.
    pub(crate) fn new(rows: usize, decoder: crossbeam_channel::Sender<TextBatch>) -> TextQueue {
        TextQueue {
            seen: HashMap::with_capacity_and_hasher(rows.min(PRESIZED_TEXTS), Default::default()),
            batch: TextBatch::default(),
            decoder,
        }
    }

    /// The number of the stored text `bytes`, handed to the decoder on
    /// first sight.
    fn number(&mut self, bytes: &[u8]) -> rusqlite::Result<u32> {
        if let Some(&number) = self.seen.get(bytes) {
            return Ok(number);
        }
        let number = u32::try_from(self.seen.len())
            .map_err(|_| data_failure("more distinct data texts than a read can number".into()))?;
        self.seen.insert(bytes.into(), number);
        self.batch.push(bytes);
        if self.batch.ends.len() >= BATCH_TEXTS {
            self.flush();
        }
        Ok(number)
    }

    /// Hands the texts not handed over yet to the decoder.
    pub(crate) fn flush(&mut self) {
        if !self.batch.ends.is_empty() {
            // A decoder that is gone (it panicked) is found when it is
            // joined.
            let _ = self.decoder.send(std::mem::take(&mut self.batch));
        }
    }
}

/// What the decoder made of each text, by number: the shared data and its
/// class, or why the text is not usable (its rows are skipped).
pub(crate) type Decoded = Vec<Result<(Arc<EventData>, u32), String>>;

/// The decoder's work: checks and parses (and reduces to `keys`) every
/// text of `batches`, in order, until the queue is dropped; for a read of
/// about `rows` rows, pooling strings as an [`Interner`] for it would.
pub(crate) fn decode_texts(
    batches: crossbeam_channel::Receiver<TextBatch>,
    rows: usize,
    keys: Option<&[String]>,
) -> Decoded {
    let mut strings = (rows > POOLED_READ_ROWS).then(StringPool::new);
    let mut reducer = keys.map(Projector::new);
    let mut decoded = Decoded::new();
    for batch in batches {
        for bytes in batch.texts() {
            let data = decode_text(bytes, &mut strings).map_err(|err| err.to_string());
            decoded.push(data.map(|data| shared(data, &mut reducer)));
        }
    }
    decoded
}

/// An event row whose data is known by its text's number in a
/// [`TextQueue`]; as large as a [`SharedEvent`], so a vector of them
/// becomes one in place.
#[derive(Debug)]
pub(crate) struct NumberedEvent {
    id: Option<i64>,
    timestamp: Timestamp,
    duration: Duration,
    text: u64,
}

const _: () = assert!(
    std::mem::size_of::<NumberedEvent>() == std::mem::size_of::<SharedEvent>()
        && std::mem::align_of::<NumberedEvent>() == std::mem::align_of::<SharedEvent>(),
    "a NumberedEvent must become a SharedEvent in place"
);

/// An event row with its data text numbered by `queue`.
pub(crate) fn numbered_event_from_row(
    row: &rusqlite::Row<'_>,
    clip: Option<(i64, i64)>,
    queue: &mut TextQueue,
) -> rusqlite::Result<NumberedEvent> {
    let (id, timestamp, duration) = row_times(row, clip)?;
    let text = queue.number(data_bytes(row)?)?;
    Ok(NumberedEvent {
        id: Some(id),
        timestamp,
        duration,
        text: u64::from(text),
    })
}

/// The events of `numbered` with their decoded data, and their classes
/// when `classes` is given; rows whose text is not usable are skipped with
/// a warning, as in other reads.
pub(crate) fn with_decoded_data(
    numbered: Vec<NumberedEvent>,
    decoded: &Decoded,
    bucket_id: &str,
    mut classes: Option<&mut Vec<u32>>,
) -> Vec<SharedEvent> {
    numbered
        .into_iter()
        .filter_map(|event| {
            let data = usize::try_from(event.text)
                .ok()
                .and_then(|number| decoded.get(number));
            match data {
                Some(Ok((data, class))) => {
                    if let Some(classes) = classes.as_deref_mut() {
                        classes.push(*class);
                    }
                    Some(SharedEvent {
                        id: event.id,
                        timestamp: event.timestamp,
                        duration: event.duration,
                        data: Arc::clone(data),
                    })
                }
                Some(Err(err)) => {
                    log::warn!("Skipping corrupt event in bucket {bucket_id}: {err}");
                    None
                }
                None => {
                    log::warn!(
                        "Skipping an event of bucket {bucket_id} whose data was not decoded"
                    );
                    None
                }
            }
        })
        .collect()
}

/// The parts of an event row before its data, clipped: id, start, duration.
fn row_times(
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
fn data_bytes<'a>(row: &'a rusqlite::Row<'_>) -> rusqlite::Result<&'a [u8]> {
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
fn data_failure(err: Box<dyn std::error::Error + Send + Sync>) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(3, rusqlite::types::Type::Text, err)
}

/// An event row like [`event_from_row`], with data shared through
/// `interner`, and the class of its data.
pub(crate) fn shared_event_from_row(
    row: &rusqlite::Row<'_>,
    clip: Option<(i64, i64)>,
    interner: &mut Interner,
) -> rusqlite::Result<(SharedEvent, u32)> {
    let (id, timestamp, duration) = row_times(row, clip)?;
    let (data, class) = interner.data(data_bytes(row)?)?;
    let event = SharedEvent {
        id: Some(id),
        timestamp,
        duration,
        data,
    };
    Ok((event, class))
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

/// Whether `text`, a JSON object as a document sent it, is exactly what
/// [`data_text`] stores for it, so that an import may store it as it is
/// instead of building its map and writing it out again (half of the
/// parsing side of a year's import). `false` means "not known to be":
/// whitespace, keys out of order, repeated or escaped, escapes other than
/// the short ones serde_json writes, numbers other than plain integers
/// (floats are written back in their shortest form), and nesting deeper
/// than [`CANONICAL_DEPTH`] all answer `false`. Export documents, written
/// by [`data_text`]'s serializer, are canonical.
pub(crate) fn is_canonical_data(text: &str) -> bool {
    let mut scan = CanonicalScan {
        bytes: text.as_bytes(),
        at: 0,
    };
    text.starts_with('{') && scan.value(0) && scan.at == text.len()
}

/// Deepest nesting [`is_canonical_data`] follows.
pub(crate) const CANONICAL_DEPTH: usize = 32;

/// A cursor over a JSON text checked by [`is_canonical_data`].
struct CanonicalScan<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> CanonicalScan<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        self.at += usize::from(found);
        found
    }

    fn value(&mut self, depth: usize) -> bool {
        match self.peek() {
            Some(b'{') => depth < CANONICAL_DEPTH && self.object(depth + 1),
            Some(b'[') => depth < CANONICAL_DEPTH && self.array(depth + 1),
            Some(b'"') => self.string().is_some(),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => self.integer(),
            _ => false,
        }
    }

    /// `{...}` with its keys in strictly rising order, as a map writes them.
    fn object(&mut self, depth: usize) -> bool {
        self.at += 1;
        if self.eat(b'}') {
            return true;
        }
        let mut previous: Option<&[u8]> = None;
        loop {
            let Some(key) = self.string() else {
                return false;
            };
            // Escaped keys order as strings, not as the text shows them.
            if key.contains(&b'\\') || previous.is_some_and(|previous| previous >= key) {
                return false;
            }
            previous = Some(key);
            if !self.eat(b':') || !self.value(depth) {
                return false;
            }
            if self.eat(b'}') {
                return true;
            }
            if !self.eat(b',') {
                return false;
            }
        }
    }

    fn array(&mut self, depth: usize) -> bool {
        self.at += 1;
        if self.eat(b']') {
            return true;
        }
        loop {
            if !self.value(depth) {
                return false;
            }
            if self.eat(b']') {
                return true;
            }
            if !self.eat(b',') {
                return false;
            }
        }
    }

    /// A string whose escapes are the ones serde_json writes for the
    /// characters they stand for; returns its text between the quotes.
    fn string(&mut self) -> Option<&'a [u8]> {
        let bytes = self.bytes;
        if !self.eat(b'"') {
            return None;
        }
        let start = self.at;
        loop {
            match *bytes.get(self.at)? {
                b'"' => {
                    self.at += 1;
                    return Some(&bytes[start..self.at - 1]);
                }
                b'\\' => match bytes.get(self.at + 1)? {
                    b'"' | b'\\' | b'n' | b't' | b'r' | b'b' | b'f' => self.at += 2,
                    _ => return None,
                },
                0..=0x1f => return None,
                _ => self.at += 1,
            }
        }
    }

    fn literal(&mut self, word: &[u8]) -> bool {
        let found = self.bytes[self.at..].starts_with(word);
        self.at += if found { word.len() } else { 0 };
        found
    }

    /// An integer as serde_json writes one it read: no `-0`, no leading
    /// zero, no fraction or exponent, and short enough to fit 64 bits.
    fn integer(&mut self) -> bool {
        let negative = self.eat(b'-');
        let start = self.at;
        while self.peek().is_some_and(|byte| byte.is_ascii_digit()) {
            self.at += 1;
        }
        let digits = &self.bytes[start..self.at];
        let plain = match digits {
            [] => false,
            [b'0'] => !negative,
            [b'0', ..] => false,
            _ => digits.len() <= 18,
        };
        plain && !matches!(self.peek(), Some(b'.' | b'e' | b'E'))
    }
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
    fn interning_shares_equal_texts_and_parses_distinct_ones() {
        for rows in [0, POOLED_READ_ROWS + 1] {
            let mut interner = Interner::for_rows(rows, None);
            assert_eq!(interner.strings.is_some(), rows > POOLED_READ_ROWS);
            let first = interner.data(br#"{"app":"vim"}"#).unwrap().0;
            let again = interner.data(br#"{"app":"vim"}"#).unwrap().0;
            let other = interner
                .data(br#"{"app":"emacs","title":"vim"}"#)
                .unwrap()
                .0;
            assert!(Arc::ptr_eq(&first, &again));
            assert_eq!(*first, parse_data(r#"{"app":"vim"}"#).unwrap());
            assert_eq!(
                *other,
                parse_data(r#"{"app":"emacs","title":"vim"}"#).unwrap()
            );
            assert!(interner.data(b"not json").is_err());
            assert!(interner.data(b"{\"app\":\"\xff\"}").is_err());
        }
    }

    /// What serde_json stores for `text`, if it is a JSON object.
    fn stored_form(text: &str) -> Option<String> {
        parse_data(text).ok().map(|data| data_text(&data))
    }

    #[test]
    fn canonical_data_is_exactly_what_would_be_stored() {
        let canonical = [
            r#"{}"#,
            r#"{"app":"vim","title":"a \"quoted\" \\ path\n\t\r\b\f"}"#,
            r#"{"a":[],"b":{},"c":[1,-2,0,true,false,null,"x",{"d":[[]]}]}"#,
            r#"{"audible":false,"tabCount":6,"url":"https://x.org/a?b=1"}"#,
            r#"{"A":1,"B":2,"a":3,"é":"ünï","😀":"~"}"#,
            "{\"del\":\"\x7f\"}",
            r#"{"m":-123456789012345678,"n":123456789012345678}"#,
        ];
        for text in canonical {
            assert!(is_canonical_data(text), "{text}");
            assert_eq!(stored_form(text).as_deref(), Some(text), "{text}");
        }
        // 32 levels: 16 objects, each holding an array.
        let deep = format!("{}1{}", r#"{"a":["#.repeat(16), "]}".repeat(16));
        assert!(is_canonical_data(&deep));
        assert_eq!(stored_form(&deep).as_deref(), Some(deep.as_str()));
    }

    #[test]
    fn data_stored_differently_is_never_called_canonical() {
        let other = [
            r#"{"b":1,"a":2}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a":{"y":1,"x":2}}"#,
            r#"{ "a":1}"#,
            r#"{"a": 1}"#,
            r#"{"a":1 }"#,
            "{\"a\":1}\n",
            r#"{"a":1.0}"#,
            r#"{"a":1.5}"#,
            r#"{"a":1e3}"#,
            r#"{"a":-0}"#,
            r#"{"a":007}"#,
            r#"{"a":1234567890123456789}"#,
            r#"{"a":"\/"}"#,
            r#"{"a":"\u0041"}"#,
            r#"{"a":"\u001f"}"#,
            r#"{"\u0061":1}"#,
            r#"{"a\"":1,"a":2}"#,
            r#"[1]"#,
            r#""text""#,
            r#"{"a":tru}"#,
            r#"{"a":1"#,
            r#"{"a":1}}"#,
            r#"{"a":[1,]}"#,
            r#"{"a":,}"#,
            r#"{,}"#,
        ];
        for text in other {
            assert!(!is_canonical_data(text), "{text}");
        }
        let too_deep = format!("{}1{}", r#"{"a":["#.repeat(17), "]}".repeat(17));
        assert!(!is_canonical_data(&too_deep));
    }

    #[test]
    fn canonical_agrees_with_a_round_trip_on_every_variation() {
        // Every text made of these pieces that the check accepts is what
        // storing it gives; the pieces cover each rule's edges.
        let values = [
            "1",
            "-1",
            "0",
            "-0",
            "01",
            "1.0",
            "2e1",
            "\"s\"",
            "\"\\u00e9\"",
            "\"\\/\"",
            "\"\\n\"",
            "true",
            "null",
            "[]",
            "[1,2]",
            "{}",
            "{\"k\":1}",
            "{\"k\":1,\"j\":2}",
            " 1",
        ];
        let keys = ["\"a\"", "\"b\"", "\"B\"", "\"\\u0062\"", "\"é\""];
        let mut checked = 0;
        for first_key in keys {
            for second_key in keys {
                for first in values {
                    for second in values {
                        let text = format!("{{{first_key}:{first},{second_key}:{second}}}");
                        if is_canonical_data(&text) {
                            checked += 1;
                            assert_eq!(stored_form(&text).as_deref(), Some(text.as_str()));
                        }
                    }
                }
            }
        }
        assert!(checked > 100, "{checked}");
    }

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
