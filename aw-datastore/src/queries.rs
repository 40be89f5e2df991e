//! Read operations, run on a reader connection (or on the writer's
//! connection for a read-only store and for the writer's own lookups).
//!
//! Every range read goes through the composite index
//! `(bucketrow, starttime DESC, endtime)` (forced with `INDEXED BY`, so a
//! v6 file's extra index cannot change the plan) and is bounded from below
//! with the bucket's longest duration (see `bounds.rs`). Callers on reader
//! connections run these inside one read transaction, started by the
//! bucket lookup, before the bound is consulted.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use aw_models::{Bucket, BucketMetadata, Data, Event, ProjectedEvents, SettingValue, Timestamp};
use rusqlite::{params, Connection, OptionalExtension};

use crate::bounds::DurationBounds;
use crate::decode::{self, shared_event_from_row, Interner, TextQueue};
use crate::key_value::{self, SETTINGS_PREFIX};
use crate::rows::{event_from_row, parse_created, parse_data, raw_event_from_row, EVENT_COLUMNS};
use crate::stats::{self, SharedStats};
use crate::{DatastoreError, EventQuery, Result};

/// The row id of a bucket, `NoSuchBucket` if absent.
pub(crate) fn bucket_row(conn: &Connection, bucket_id: &str) -> Result<i64> {
    let row = conn
        .prepare_cached("SELECT id FROM buckets WHERE name = ?1")?
        .query_row([bucket_id], |row| row.get(0))
        .optional()?;
    match row {
        Some(row) => Ok(row),
        None => alias_row(conn, bucket_id)?
            .ok_or_else(|| DatastoreError::NoSuchBucket(bucket_id.to_string())),
    }
}

/// The row of the bucket named exactly `bucket_id`.
pub(crate) fn exact_row(conn: &Connection, bucket_id: &str) -> Result<Option<i64>> {
    Ok(conn
        .prepare_cached("SELECT id FROM buckets WHERE name = ?1")?
        .query_row([bucket_id], |row| row.get(0))
        .optional()?)
}

/// The row a bucket id names through an alias: `<stem>_<alias>` names
/// `<stem>_<host>` when that bucket exists.
/// (`hosts.rs` keeps the aliases.)
pub(crate) fn alias_row(conn: &Connection, bucket_id: &str) -> Result<Option<i64>> {
    for (key, host) in key_value::under(conn, key_value::HOST_ALIAS_PREFIX)? {
        let (Some(alias), Some(host)) = (key.strip_prefix(key_value::HOST_ALIAS_PREFIX), host)
        else {
            continue;
        };
        let Some(stem) = bucket_id
            .strip_suffix(alias)
            .and_then(|rest| rest.strip_suffix('_'))
        else {
            continue;
        };
        if let Some(row) = exact_row(conn, &format!("{stem}_{host}"))? {
            return Ok(Some(row));
        }
    }
    Ok(None)
}

/// Every bucket with metadata.
pub(crate) fn buckets(
    conn: &Connection,
    bounds: &DurationBounds,
    stats: &SharedStats,
) -> Result<BTreeMap<String, Bucket>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, name, type, client, hostname, created, data FROM buckets ORDER BY name",
    )?;
    let rows = stmt
        .query_map([], bucket_parts)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut result = BTreeMap::new();
    for (row_id, bucket) in rows {
        let bucket = with_metadata(conn, bounds, stats, row_id, bucket)?;
        result.insert(bucket.id.clone(), bucket);
    }
    Ok(result)
}

/// One bucket with metadata.
pub(crate) fn bucket(
    conn: &Connection,
    bounds: &DurationBounds,
    stats: &SharedStats,
    bucket_id: &str,
) -> Result<Bucket> {
    let select = |name: &str| {
        conn.prepare_cached(
            "SELECT id, name, type, client, hostname, created, data FROM buckets WHERE name = ?1",
        )?
        .query_row([name], bucket_parts)
        .optional()
    };
    let mut found = select(bucket_id)?;
    if found.is_none() {
        if let Some(row) = alias_row(conn, bucket_id)? {
            found = conn
                .prepare_cached(
                    "SELECT id, name, type, client, hostname, created, data FROM buckets WHERE id = ?1",
                )?
                .query_row([row], bucket_parts)
                .optional()?;
        }
    }
    let (row_id, bucket) =
        found.ok_or_else(|| DatastoreError::NoSuchBucket(bucket_id.to_string()))?;
    with_metadata(conn, bounds, stats, row_id, bucket)
}

type BucketParts = (i64, Bucket);

/// A row of `SELECT id, name, type, client, hostname, created, data FROM
/// buckets` as its row id and bucket.
pub(crate) fn bucket_parts(row: &rusqlite::Row<'_>) -> rusqlite::Result<BucketParts> {
    let created: Option<String> = row.get(5)?;
    let data: Option<String> = row.get(6)?;
    let data = data
        .and_then(|text| {
            parse_data(&text)
                .inspect_err(|err| log::warn!("Bucket data is not a JSON object: {err}"))
                .ok()
        })
        .unwrap_or_default();
    Ok((
        row.get(0)?,
        Bucket {
            id: row.get(1)?,
            kind: row.get(2)?,
            client: row.get(3)?,
            hostname: row.get(4)?,
            created: created.as_deref().and_then(parse_created),
            data,
            metadata: BucketMetadata::default(),
            events: None,
            last_updated: None,
        },
    ))
}

/// Fills in the earliest start and the latest end: from the writer's
/// facts when known (`stats.rs`), else from the index.
fn with_metadata(
    conn: &Connection,
    bounds: &DurationBounds,
    stats: &SharedStats,
    row_id: i64,
    mut bucket: Bucket,
) -> Result<Bucket> {
    let (first, last_end) = match stats.get(row_id) {
        Some(known) => (known.first_start, known.last_end),
        None => (
            stats::first_start(conn, row_id)?,
            stats::last_end(conn, bounds, row_id)?,
        ),
    };
    bucket.metadata = BucketMetadata {
        start: first.map(Timestamp::from_nanos),
        end: last_end.map(Timestamp::from_nanos),
    };
    Ok(bucket)
}

/// The scan window `[low, high]` on starttime and the end filter of a query,
/// or `None` when nothing can match.
struct Window {
    start: i64,
    end: i64,
    low: i64,
}

fn window(
    bounds: &DurationBounds,
    row_id: i64,
    start: Option<Timestamp>,
    end: Option<Timestamp>,
) -> Option<Window> {
    let start = start.map_or(i64::MIN, Timestamp::nanos);
    let end = end.map_or(i64::MAX, Timestamp::nanos);
    if start > end {
        return None;
    }
    let low = match (start, bounds.get(row_id)) {
        (i64::MIN, _) | (_, None) => i64::MIN,
        (start, Some(longest)) => start.saturating_sub(longest),
    };
    Some(Window { start, end, low })
}

/// Events per `docs/API.md` §3.3: overlapping `[start, end]` inclusively, clipped,
/// newest first, the newest `limit`.
pub(crate) fn events(
    conn: &Connection,
    bounds: &DurationBounds,
    bucket_id: &str,
    query: EventQuery,
) -> Result<Vec<Event>> {
    let row_id = bucket_row(conn, bucket_id)?;
    range(conn, bounds, row_id, bucket_id, query, 0, event_from_row)
}

/// [`events`] with the data of equal stored texts decoded once and shared;
/// with `keys`, reduced to them, each event with its class (see
/// `Datastore::events_as` in the shape `Projected`). Without `keys`, or for a read expected to
/// give fewer than [`KEPT_READ_ROWS`] rows, the objects are whole and the
/// classes left empty.
pub(crate) fn shared_events(
    conn: &Connection,
    bounds: &DurationBounds,
    stats: &SharedStats,
    bucket_id: &str,
    query: EventQuery,
    keys: Option<&[String]>,
) -> Result<ProjectedEvents> {
    let row_id = bucket_row(conn, bucket_id)?;
    // Sized up front: a vector doubling its way to a year of window
    // events held up to twice their size, and three times while it moved.
    let capacity = expected_rows(stats, row_id, query);
    // A short read gives its objects whole, and no classes: `flood`
    // compares them as objects.
    let keys = keys.filter(|_| capacity >= KEPT_READ_ROWS);
    let read = SharedRead {
        conn,
        bounds,
        row_id,
        bucket_id,
        query,
        capacity,
        keys,
    };
    // A limit counts the events answered, so it needs each row's data
    // decoded before the next row is read.
    if capacity >= PIPELINED_READ_ROWS && query.limit.is_none() && aw_threads::cores() > 1 {
        return read.pipelined();
    }
    read.interned()
}

/// Reads of kept keys expected to give fewer rows than this read every
/// key: they are decoded on the reading thread, where reducing each
/// distinct text costs more than a short read's later steps save. Longer
/// reads reduce on their decoding thread, beside the reading one
/// (`benches/runs/2026-11-26-kept-keys.md`).
const KEPT_READ_ROWS: usize = PIPELINED_READ_ROWS;

/// Reads expected to give at least this many rows decode their distinct
/// data texts on a second thread while this one steps through the rows.
/// Decoding a year of browser data was the longest part of the
/// dashboard's reads; a week's reads gained nothing from a lower
/// threshold (`benches/runs/2026-11-25-reads-on-two-threads.md`).
const PIPELINED_READ_ROWS: usize = 20_000;

/// Reads made by [`SharedRead::pipelined`] with its second thread.
#[cfg(test)]
pub(crate) static PIPELINED_READS: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// A [`shared_events`] read of the bucket at `row_id`, into a vector of
/// `capacity`.
struct SharedRead<'a> {
    conn: &'a Connection,
    bounds: &'a DurationBounds,
    row_id: i64,
    bucket_id: &'a str,
    query: EventQuery,
    capacity: usize,
    keys: Option<&'a [String]>,
}

impl SharedRead<'_> {
    /// The rows, each made into a `T` by `decode` (see [`range`]).
    fn rows<T>(
        &self,
        decode: impl FnMut(&rusqlite::Row<'_>, Option<(i64, i64)>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>> {
        range(
            self.conn,
            self.bounds,
            self.row_id,
            self.bucket_id,
            self.query,
            self.capacity,
            decode,
        )
    }

    /// The events, their data decoded on this thread.
    fn interned(&self) -> Result<ProjectedEvents> {
        let mut interner = Interner::for_rows(self.capacity, self.keys);
        let mut read =
            |row: &rusqlite::Row<'_>, clip| shared_event_from_row(row, clip, &mut interner);
        if self.keys.is_none() {
            let events = self.rows(|row, clip| read(row, clip).map(|(event, _)| event))?;
            return Ok(ProjectedEvents {
                events,
                classes: Vec::new(),
            });
        }
        let (events, classes) = self.rows(read)?.into_iter().unzip();
        Ok(ProjectedEvents { events, classes })
    }

    /// The events, their data texts decoded on a thread of their own, in
    /// the same read transaction: the rows and their numbered texts come
    /// from this thread, the decoded objects from the other, and they are
    /// put together at the end. Without a thread, the read is made on
    /// this one.
    fn pipelined(&self) -> Result<ProjectedEvents> {
        let (sender, batches) = crossbeam_channel::unbounded();
        let (capacity, keys) = (self.capacity, self.keys);
        std::thread::scope(|scope| {
            let decoder = std::thread::Builder::new()
                .name("aw-decode".into())
                .spawn_scoped(scope, move || decode::decode_texts(batches, capacity, keys));
            let Ok(decoder) = decoder else {
                return self.interned();
            };
            #[cfg(test)]
            PIPELINED_READS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut queue = TextQueue::new(capacity, sender);
            let numbered =
                self.rows(|row, clip| decode::numbered_event_from_row(row, clip, &mut queue));
            queue.flush();
            // Closing the queue lets the decoder finish, also after a
            // failure.
            drop(queue);
            let decoded = decoder
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            let numbered = numbered?;
            let mut classes = Vec::new();
            if keys.is_some() {
                classes.reserve_exact(numbered.len());
            }
            let wanted = keys.is_some().then_some(&mut classes);
            let events = decode::with_decoded_data(numbered, &decoded, self.bucket_id, wanted);
            Ok(ProjectedEvents { events, classes })
        })
    }
}

/// Rows a JSON listing writes before it sizes its text for the rest.
const SIZING_ROWS: usize = 64;

/// Rows a read of the bucket at `row_id` is expected to give, by the
/// bucket's known density, with an eighth to spare but never past its
/// count; 0 while the bucket's facts are unknown.
fn expected_rows(stats: &SharedStats, row_id: i64, query: EventQuery) -> usize {
    let rows = match (stats.get(row_id), estimate(stats, row_id, query)) {
        (Some(known), Some(estimate)) => estimate.saturating_add(estimate / 8).min(known.count),
        _ => 0,
    };
    usize::try_from(rows).unwrap_or(0)
}

/// [`events`] as a JSON array, the data text of each row validated and
/// copied, not decoded (the shape `Json` of `Datastore::events_as`).
pub(crate) fn events_json(
    conn: &Connection,
    bounds: &DurationBounds,
    stats: &SharedStats,
    bucket_id: &str,
    query: EventQuery,
) -> Result<Vec<u8>> {
    let row_id = bucket_row(conn, bucket_id)?;
    let expected = expected_rows(stats, row_id, query);
    let mut out = Vec::with_capacity(4096);
    out.push(b'[');
    let mut written = 0;
    // Each row is written after the one before (a row whose data is
    // unusable fails before anything of it is written, and is skipped);
    // its place in `out` is kept.
    let write_row = |row: &rusqlite::Row<'_>, clip| {
        let event = raw_event_from_row(row, clip)?;
        if out.len() > 1 {
            out.push(b',');
        }
        let start = out.len();
        serde_json::to_writer(&mut out, &event)
            .map_err(|err| rusqlite::Error::ToSqlConversionFailure(Box::new(err)))?;
        written += 1;
        if written == SIZING_ROWS && expected > SIZING_ROWS {
            // The text is sized for the rest once its first rows tell
            // their length, instead of doubling its way up.
            let per_row = out.len().div_ceil(SIZING_ROWS);
            out.reserve_exact((expected - SIZING_ROWS).saturating_mul(per_row));
        }
        Ok(start..out.len())
    };
    let spans = range(conn, bounds, row_id, bucket_id, query, expected, write_row)?;
    // `spans` is newest first. If the rows were read oldest first (see
    // `range`), the text is turned around in place: reversing all of it
    // puts the rows newest first, each spelled backwards, and reversing
    // each row's bytes again mends them.
    if let [newest, next, ..] = spans.as_slice() {
        if newest.start > next.start {
            let text = out.get_mut(1..).unwrap_or_default();
            text.reverse();
            let length = text.len();
            for span in &spans {
                // A row at [start, end) of `out` was at [start - 1, end - 1)
                // of the text, and is now at the mirror of that.
                let mirrored = length + 1 - span.end..length + 1 - span.start;
                if let Some(row) = text.get_mut(mirrored) {
                    row.reverse();
                }
            }
        }
    }
    out.push(b']');
    Ok(out)
}

/// The statement of a range read: newest first as the API orders events
/// (starttime, then endtime ascending, then id), or exactly the opposite.
/// Either way SQLite walks the composite index without sorting. The texts
/// are made once: every read looks its statement up by text.
fn range_sql(oldest_first: bool) -> &'static str {
    static SQL: LazyLock<[String; 2]> = LazyLock::new(|| {
        [false, true].map(|oldest_first| range_select(EVENT_COLUMNS, oldest_first))
    });
    &SQL[usize::from(oldest_first)]
}

/// `columns` of a range read's rows (parameters: bucket row, lowest
/// start, end, start) in the order of [`range_sql`].
fn range_select(columns: &str, oldest_first: bool) -> String {
    let order = match oldest_first {
        false => "starttime DESC, endtime ASC, id ASC",
        true => "starttime ASC, endtime DESC, id DESC",
    };
    format!(
        "SELECT {columns} FROM events INDEXED BY events_bucketrow_starttime_endtime_index
         WHERE bucketrow = ?1 AND starttime >= ?2 AND starttime <= ?3 AND endtime >= ?4
         ORDER BY {order}"
    )
}

/// The rows of a range read of the bucket at `row_id` (`bucket_id` names
/// it in warnings), each made into a `T` by `decode`, newest first, in a
/// vector of `capacity`.
///
/// Without a limit the rows may be read in either order, the vector
/// reversed if need be. SQLite finds each row through the index and then
/// looks it up in the table by its id; walking the index in the order the
/// rows were written keeps the table cursor on the page it is on, or moves
/// it to the next, instead of descending the table's tree again. So a read
/// walks oldest first when the range's newest row was written after its
/// oldest (heartbeats, and imports, which store each bucket's events
/// oldest first when they fit in memory), newest first otherwise (history
/// imported newest first, as exports list it, by this server before it
/// sorted imports or by another): SQLite walks rows fastest in the order
/// they were written (`benches/runs/2026-11-24-walk-order.md`).
///
/// A limit needs the newest rows first.
fn range<T>(
    conn: &Connection,
    bounds: &DurationBounds,
    row_id: i64,
    bucket_id: &str,
    query: EventQuery,
    capacity: usize,
    mut decode: impl FnMut(&rusqlite::Row<'_>, Option<(i64, i64)>) -> rusqlite::Result<T>,
) -> Result<Vec<T>> {
    let Some(window) = window(bounds, row_id, query.start, query.end) else {
        return Ok(Vec::new());
    };
    if query.limit == Some(0) {
        return Ok(Vec::new());
    }
    let clip = (query.start.is_some() || query.end.is_some()).then_some((window.start, window.end));
    let params = params![row_id, window.low, window.end, window.start];
    let oldest_first = query.limit.is_none() && written_oldest_first(conn, params)?;
    let mut stmt = conn.prepare_cached(range_sql(oldest_first))?;
    // The limit is applied here, not as a bound `LIMIT ?`: SQLite plans
    // with the value of a bound LIMIT, so every read with a new one
    // prepared the statement again
    // (`benches/runs/2026-11-21-small-requests-and-import.md`). The index gives the
    // order, so rows past the limit are never read.
    let rows = stmt.query_map(params, |row| decode(row, clip))?;
    let mut events = collect_events(rows, bucket_id, query.limit, capacity)?;
    if oldest_first {
        events.reverse();
    }
    Ok(events)
}

/// Whether the rows of a range read (its parameters) were written oldest
/// first: its newest row has a larger id than its oldest. Two seeks in
/// the index, which holds the ids.
fn written_oldest_first(conn: &Connection, params: &[&dyn rusqlite::ToSql]) -> Result<bool> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT ({} LIMIT 1), ({} LIMIT 1)",
            range_select("id", false),
            range_select("id", true)
        )
    });
    let mut stmt = conn.prepare_cached(&SQL)?;
    let (newest, oldest) = stmt.query_row(params, |row| {
        Ok((row.get::<_, Option<i64>>(0)?, row.get::<_, Option<i64>>(1)?))
    })?;
    Ok(matches!((newest, oldest), (Some(newest), Some(oldest)) if newest > oldest))
}

/// Keyset pagination, newest first by (starttime, id).
pub(crate) fn events_page(
    conn: &Connection,
    bucket_id: &str,
    after: Option<(Timestamp, i64)>,
    limit: usize,
) -> Result<Vec<Event>> {
    let row_id = bucket_row(conn, bucket_id)?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let (after_start, after_id) = after.map_or((i64::MAX, i64::MAX), |(ts, id)| (ts.nanos(), id));
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {EVENT_COLUMNS} FROM events INDEXED BY events_bucketrow_starttime_endtime_index
         WHERE bucketrow = ?1 AND starttime <= ?2 AND (starttime < ?2 OR id < ?3)
         ORDER BY starttime DESC, id DESC LIMIT ?4"
    ))?;
    let rows = stmt.query_map(params![row_id, after_start, after_id, limit], |row| {
        event_from_row(row, None)
    })?;
    // The LIMIT stays in SQL here: it lets SQLite sort only a page's worth
    // of rows by id among equal start times.
    collect_events(rows, bucket_id, None, 0)
}

/// Keeps readable rows; a row whose data is not JSON is skipped with a
/// warning rather than failing the whole listing (the reference does so).
fn collect_events<T>(
    mut rows: impl Iterator<Item = rusqlite::Result<T>>,
    bucket_id: &str,
    limit: Option<usize>,
    capacity: usize,
) -> Result<Vec<T>> {
    let mut events = Vec::with_capacity(limit.map_or(capacity, |limit| limit.min(capacity)));
    while limit.is_none_or(|limit| events.len() < limit) {
        let Some(row) = rows.next() else {
            break;
        };
        match row {
            Ok(event) => events.push(event),
            Err(err @ rusqlite::Error::FromSqlConversionFailure(..)) => {
                log::warn!("Skipping corrupt event in bucket {bucket_id}: {err}");
            }
            Err(err) => return Err(err.into()),
        }
    }
    Ok(events)
}

/// One event of the bucket.
pub(crate) fn event(conn: &Connection, bucket_id: &str, event_id: i64) -> Result<Event> {
    let row_id = bucket_row(conn, bucket_id)?;
    conn.prepare_cached(&format!(
        "SELECT {EVENT_COLUMNS} FROM events WHERE id = ?1 AND bucketrow = ?2"
    ))?
    .query_row(params![event_id, row_id], |row| event_from_row(row, None))
    .optional()?
    .ok_or_else(|| DatastoreError::NoSuchEvent {
        bucket_id: bucket_id.to_string(),
        event_id,
    })
}

/// The newest event as the listing orders it (heartbeat's fallback `L`).
pub(crate) fn newest_event(conn: &Connection, row_id: i64) -> Result<Option<Event>> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {EVENT_COLUMNS} FROM events INDEXED BY events_bucketrow_starttime_endtime_index
             WHERE bucketrow = ?1 ORDER BY starttime DESC, endtime ASC, id ASC LIMIT 1"
        ))?
        .query_row([row_id], |row| event_from_row(row, None))
        .optional()?)
}

/// An upper estimate of how many events `events` returns for `query`:
/// its `limit`, or the bucket's count spread evenly over its known time
/// span, times the part of it the range covers. `None` when neither is
/// known (no limit, and the writer has not counted the bucket yet).
pub(crate) fn estimated_rows(
    conn: &Connection,
    stats: &SharedStats,
    bucket_id: &str,
    query: EventQuery,
) -> Result<Option<u64>> {
    Ok(estimate(stats, bucket_row(conn, bucket_id)?, query))
}

/// [`estimated_rows`] for the bucket at `row_id`.
fn estimate(stats: &SharedStats, row_id: i64, query: EventQuery) -> Option<u64> {
    let limit = query.limit.map(|limit| limit as u64);
    let Some(known) = stats.get(row_id) else {
        return limit;
    };
    let by_density = match (known.first_start, known.last_end) {
        (Some(first), Some(last)) if last > first => {
            let start = query.start.map_or(first, |start| start.nanos().max(first));
            let end = query.end.map_or(last, |end| end.nanos().min(last));
            let covered = end.saturating_sub(start).max(0) as u128;
            // Rounded up, and at least one event: an empty share of a
            // non-empty bucket can still hold events that reach into it.
            let share = (known.count as u128 * covered).div_ceil(u128::from(last.abs_diff(first)));
            u64::try_from(share).unwrap_or(u64::MAX).max(1)
        }
        _ => known.count,
    };
    Some(limit.map_or(by_density, |limit| limit.min(by_density)))
}

/// Number of events `events` would return without a limit; the writer's
/// count when the whole bucket is asked for and known (`stats.rs`).
pub(crate) fn count(
    conn: &Connection,
    bounds: &DurationBounds,
    stats: &SharedStats,
    bucket_id: &str,
    start: Option<Timestamp>,
    end: Option<Timestamp>,
) -> Result<u64> {
    let row_id = bucket_row(conn, bucket_id)?;
    if start.is_none() && end.is_none() {
        if let Some(known) = stats.get(row_id) {
            return Ok(known.count);
        }
    }
    let Some(window) = window(bounds, row_id, start, end) else {
        return Ok(0);
    };
    let count: i64 = conn
        .prepare_cached(
            "SELECT count(*) FROM events INDEXED BY events_bucketrow_starttime_endtime_index
             WHERE bucketrow = ?1 AND starttime >= ?2 AND starttime <= ?3 AND endtime >= ?4",
        )?
        .query_row(
            params![row_id, window.low, window.end, window.start],
            |row| row.get(0),
        )?;
    Ok(u64::try_from(count).unwrap_or(0))
}

/// Every setting, keys without the prefix.
pub(crate) fn settings(conn: &Connection) -> Result<BTreeMap<String, SettingValue>> {
    let mut result = BTreeMap::new();
    for (key, value) in key_value::under(conn, SETTINGS_PREFIX)? {
        if let Some(key) = key.strip_prefix(SETTINGS_PREFIX) {
            result.insert(key.to_string(), setting_value(value));
        }
    }
    Ok(result)
}

/// One setting.
pub(crate) fn setting(conn: &Connection, key: &str) -> Result<Option<SettingValue>> {
    let value = key_value::entry(conn, &format!("{SETTINGS_PREFIX}{key}"))?;
    Ok(value.map(setting_value))
}

/// Stored text as JSON; text that is not JSON (written by hand or another
/// tool) comes back as a JSON string instead of failing.
fn setting_value(text: Option<String>) -> SettingValue {
    match text {
        None => SettingValue::Null,
        Some(text) => serde_json::from_str(&text).unwrap_or(SettingValue::String(text)),
    }
}

/// Whether an event equal to `(start, end, data)` is stored in the bucket
/// (import identity, `docs/API.md` §5); `data` is the text as this crate stores it.
pub(crate) fn contains_identical(
    conn: &Connection,
    row_id: i64,
    start: i64,
    end: i64,
    data: &str,
) -> Result<bool> {
    let mut stmt = conn.prepare_cached(
        "SELECT data FROM events INDEXED BY events_bucketrow_starttime_endtime_index
         WHERE bucketrow = ?1 AND starttime = ?2 AND endtime = ?3",
    )?;
    let mut rows = stmt.query(params![row_id, start, end])?;
    // Parsed only if a stored text differs from it.
    let mut incoming: Option<Option<Data>> = None;
    while let Some(row) = rows.next()? {
        let text = row.get_ref(0)?.as_str().unwrap_or_default();
        if text == data {
            return Ok(true);
        }
        // serde_json maps compare as maps: key order does not matter.
        let incoming = incoming.get_or_insert_with(|| parse_data(data).ok());
        if incoming
            .as_ref()
            .is_some_and(|incoming| parse_data(text).is_ok_and(|stored| &stored == incoming))
        {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(conn: &Connection, sql: &str) -> String {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let values = [0i64; 5];
        let count = stmt.parameter_count();
        let rows = stmt
            .query_map(rusqlite::params_from_iter(&values[..count]), |row| {
                row.get::<_, String>(3)
            })
            .unwrap();
        rows.map(|row| row.unwrap()).collect::<Vec<_>>().join("; ")
    }

    #[test]
    fn range_reads_seek_both_ends_of_the_index_without_sorting() {
        let conn = Connection::open_in_memory().unwrap();
        crate::schema::migrate(&conn).unwrap();
        for oldest_first in [false, true] {
            let events = plan(&conn, range_sql(oldest_first));
            assert!(
                events.contains(&format!(
                    "SEARCH events USING INDEX {} (bucketrow=? AND starttime>? AND starttime<?)",
                    crate::schema::EVENTS_INDEX
                )),
                "{events}"
            );
            assert!(!events.contains("TEMP B-TREE"), "{events}");
        }
        let count = plan(
            &conn,
            "SELECT count(*) FROM events INDEXED BY events_bucketrow_starttime_endtime_index
             WHERE bucketrow = ?1 AND starttime >= ?2 AND starttime <= ?3 AND endtime >= ?4",
        );
        assert!(count.contains("COVERING INDEX"), "{count}");
    }
}
