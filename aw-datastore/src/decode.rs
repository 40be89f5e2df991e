//! The decoded data of a read: each distinct stored text parsed once and
//! shared by its events ([`Interner`]), and for a long read the texts
//! decoded on a second thread while this one steps through the rows
//! ([`TextQueue`], [`decode_texts`], [`with_decoded_data`]).

use std::collections::HashMap;
use std::sync::Arc;

use aw_models::{Duration, EventData, Projector, SharedEvent, StringPool, Timestamp};

use crate::rows::{data_bytes, data_failure, row_times};

/// Decoded data of one read, by stored text: each distinct text is parsed
/// once and its events share the result. A long read holds far fewer
/// distinct texts than rows, so this saves most of the parsing and nearly
/// all of the memory; in a long read the objects also share their equal
/// string values (`strings`), as browser URLs and page titles repeat
/// (`benches/runs/2026-11-21-query-path-2.md`,
/// `benches/runs/2026-11-23-shared-values.md`).
#[derive(Debug, Default)]
pub(crate) struct Interner {
    /// By the text's bytes: a text seen before is not checked for UTF-8
    /// again.
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
/// distinct), so hashing them costs more than it saves, while a year's
/// peak memory is lower with it (`benches/runs/2026-11-23-shared-values.md`).
pub(crate) const POOLED_READ_ROWS: usize = 20_000;

impl Interner {
    /// An interner for a read of about `rows` rows, with room for that
    /// many distinct texts up to a week's worth, so a short read's map
    /// never grows.
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

/// An event row like `rows::event_from_row`, with data shared through
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::parse_data;

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
}
