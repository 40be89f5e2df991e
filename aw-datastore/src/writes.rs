//! Write operations, run by the worker inside the open batch transaction.
//!
//! Each function is one command's effect on the connection and on the
//! writer's memory (last heartbeat events, duration bounds, bucket facts).
//! The worker
//! wraps each call in a savepoint, so a command that fails changes nothing;
//! memory is only *set* after the SQL succeeded, and only *forgotten*
//! before, so it never describes rows that are not there (the bucket facts
//! of a failed command are undone by the worker, see `stats.rs`).
//!
//! Every path that stores an event's data (heartbeats, inserts, a bucket
//! created with events, imports) first applies the privacy rules in force
//! (`privacy.rs`): a dropped event is stored nowhere, a redacted one is
//! stored (and merged, and deduplicated) with its redacted data.

use aw_models::{Bucket, Data, Duration, Event, SettingValue, Timestamp, UpdateBucket};
use rusqlite::{params, Connection, OptionalExtension};

use crate::canonical::is_canonical_data;
use crate::changes::{note_change, note_deleted};
use crate::heartbeat::merge;
use crate::key_value::{self, SETTINGS_PREFIX};
use crate::memory::WriterMemory;
use crate::privacy::{PrivacyRules, Verdict, DEFAULT_PATTERN_SIZE_LIMIT, PRIVACY_FILTERS_KEY};
use crate::queries::{bucket_row, contains_identical, newest_event};
use crate::rows::{created_text, data_text, parse_data};
use crate::stats::BucketStats;
use crate::{DatastoreError, ImportSummary, Result};

/// Creates a bucket and inserts its events (ids ignored unless they are
/// free, as for any insert).
pub(crate) fn create_bucket(
    conn: &Connection,
    memory: &mut WriterMemory<'_>,
    bucket: Bucket,
) -> Result<()> {
    // A watcher still sending as a host's alias finds the host's bucket.
    if crate::queries::alias_row(conn, &bucket.id)?.is_some() {
        return Err(DatastoreError::BucketExists(bucket.id.clone()));
    }
    let row_id = insert_bucket_row(conn, memory, &bucket)?;
    if let Some(events) = bucket.events {
        for mut event in events {
            if memory.privacy.apply_to_event(&bucket.id, &mut event) == Verdict::Dropped {
                continue;
            }
            insert_one(conn, memory, row_id, event, IdRule::ReplaceInBucket)?;
        }
    }
    Ok(())
}

pub(crate) fn insert_bucket_row(
    conn: &Connection,
    memory: &mut WriterMemory<'_>,
    bucket: &Bucket,
) -> Result<i64> {
    if crate::queries::exact_row(conn, &bucket.id)?.is_some() {
        return Err(DatastoreError::BucketExists(bucket.id.clone()));
    }
    let created = bucket.created.unwrap_or_else(Timestamp::now);
    conn.prepare_cached(
        "INSERT INTO buckets (name, type, client, hostname, created, data)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        bucket.id,
        bucket.kind,
        bucket.client,
        bucket.hostname,
        created_text(created),
        data_text(&bucket.data)
    ])?;
    let row_id = conn.last_insert_rowid();
    memory.bounds.reset(row_id);
    memory.stats.created(row_id);
    memory.last_events.forget(row_id);
    Ok(row_id)
}

/// Deletes a bucket and its events.
pub(crate) fn delete_bucket(
    conn: &Connection,
    memory: &mut WriterMemory<'_>,
    bucket_id: &str,
) -> Result<()> {
    // Never through a host alias: a delete names the bucket itself.
    let row_id = crate::queries::exact_row(conn, bucket_id)?
        .ok_or_else(|| DatastoreError::NoSuchBucket(bucket_id.to_string()))?;
    memory.last_events.forget(row_id);
    conn.prepare_cached("DELETE FROM events WHERE bucketrow = ?1")?
        .execute([row_id])?;
    conn.prepare_cached("DELETE FROM buckets WHERE id = ?1")?
        .execute([row_id])?;
    // Row ids are AUTOINCREMENT, never reused once committed, so dropping
    // the bound here cannot confuse a later bucket.
    memory.bounds.forget(row_id);
    memory.stats.forget(row_id);
    Ok(())
}

/// Replaces the fields of a bucket that `update` gives (`docs/API.md`
/// §3.2). The bucket's id, row and events stay as they are.
pub(crate) fn update_bucket(
    conn: &Connection,
    bucket_id: &str,
    update: UpdateBucket,
) -> Result<()> {
    // Never through a host alias, as a delete.
    let row_id = crate::queries::exact_row(conn, bucket_id)?
        .ok_or_else(|| DatastoreError::NoSuchBucket(bucket_id.to_string()))?;
    let data = update.data.as_ref().map(data_text);
    conn.prepare_cached(
        "UPDATE buckets SET type = coalesce(?2, type), client = coalesce(?3, client),
         hostname = coalesce(?4, hostname), data = coalesce(?5, data) WHERE id = ?1",
    )?
    .execute(params![
        row_id,
        update.kind,
        update.client,
        update.hostname,
        data
    ])?;
    Ok(())
}

/// How an insert treats an event's `id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IdRule {
    /// Replace the event with that id if it is in this bucket; keep the id
    /// if no event has it; otherwise insert with a fresh id (B-5).
    ReplaceInBucket,
    /// Ignore it: imported ids come from another database (`docs/API.md` §5).
    Fresh,
}

/// The largest id an insert may give a new event (2^53 - 1, the largest
/// integer JavaScript clients read exactly). SQLite hands out the next
/// fresh id above the largest stored one, and after 2^63 - 1 it has none
/// left: one event stored with that id made every later insert of the
/// database fail.
pub(crate) const MAX_CHOSEN_ID: i64 = (1 << 53) - 1;

/// Inserts events; returns those stored, with their ids (events the
/// privacy rules drop are left out, as the reference leaves them out).
pub(crate) fn insert_events(
    conn: &Connection,
    memory: &mut WriterMemory<'_>,
    bucket_id: &str,
    events: Vec<Event>,
) -> Result<Vec<Event>> {
    let row_id = bucket_row(conn, bucket_id)?;
    // Spec §4: an insert makes the next heartbeat compare with the newest
    // stored event.
    memory.last_events.forget(row_id);
    // An event with an id may replace a stored one: the sync push must
    // then compare the whole bucket (`aw-folder-sync`'s `push.rs`).
    let mut starts: Option<(i64, i64)> = None;
    for event in events.iter().filter(|event| event.id.is_some()) {
        let old: Option<i64> = conn
            .prepare_cached("SELECT starttime FROM events WHERE id = ?1 AND bucketrow = ?2")?
            .query_row(params![event.id, row_id], |row| row.get(0))
            .optional()?;
        for start in old.into_iter().chain([event.timestamp.nanos()]) {
            starts = Some(starts.map_or((start, start), |(low, high)| {
                (low.min(start), high.max(start))
            }));
        }
    }
    if starts.is_some() {
        note_change(conn, bucket_id, starts)?;
    }
    let mut stored = Vec::with_capacity(events.len());
    for mut event in events {
        if memory.privacy.apply_to_event(bucket_id, &mut event) == Verdict::Dropped {
            continue;
        }
        stored.push(insert_one(
            conn,
            memory,
            row_id,
            event,
            IdRule::ReplaceInBucket,
        )?);
    }
    Ok(stored)
}

fn validate(event: &Event) -> Result<()> {
    event
        .validate()
        .map_err(|err| DatastoreError::InvalidInput(err.to_string()))
}

fn insert_one(
    conn: &Connection,
    memory: &mut WriterMemory<'_>,
    row_id: i64,
    mut event: Event,
    rule: IdRule,
) -> Result<Event> {
    validate(&event)?;
    let start = event.timestamp.nanos();
    let end = event.end().nanos();
    let data = data_text(&event.data);
    let wanted = match rule {
        IdRule::Fresh => None,
        IdRule::ReplaceInBucket => event.id,
    };
    let owner = match wanted {
        None => None,
        Some(id) => conn
            .prepare_cached("SELECT bucketrow, starttime, endtime FROM events WHERE id = ?1")?
            .query_row([id], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, i64>(1)?,
                    row.get::<_, i64>(2)?,
                ))
            })
            .optional()?,
    };
    match (wanted, owner) {
        (Some(id), Some((owner, old_start, old_end))) if owner == row_id => {
            conn.prepare_cached(
                "UPDATE events SET starttime = ?1, endtime = ?2, data = ?3 WHERE id = ?4",
            )?
            .execute(params![start, end, data, id])?;
            memory
                .stats
                .removed(conn, memory.bounds, row_id, old_start, old_end)?;
            stored(memory, row_id, start, end);
        }
        (Some(id), None) if !(1..=MAX_CHOSEN_ID).contains(&id) => {
            return Err(DatastoreError::InvalidInput(format!(
                "event id {id} is out of range: a new event's id must be from 1 to {MAX_CHOSEN_ID}"
            )));
        }
        (Some(id), None) => {
            conn.prepare_cached(
                "INSERT INTO events (id, bucketrow, starttime, endtime, data)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![id, row_id, start, end, data])?;
            stored(memory, row_id, start, end);
        }
        _ => event.id = Some(insert_fresh(conn, memory, row_id, start, end, &data)?),
    }
    Ok(event)
}

/// Tells the writer's memory that an event from `start` to `end` is now
/// stored in the bucket: its range bound and facts.
fn stored(memory: &mut WriterMemory<'_>, row_id: i64, start: i64, end: i64) {
    memory.bounds.note(row_id, end - start);
    memory.stats.added(row_id, start, end);
}

/// Inserts an event with a fresh id (parameters: bucket row, start, end,
/// data text).
const INSERT_EVENT: &str =
    "INSERT INTO events (bucketrow, starttime, endtime, data) VALUES (?1, ?2, ?3, ?4)";

/// Inserts an event with a fresh id; returns the id.
fn insert_fresh(
    conn: &Connection,
    memory: &mut WriterMemory<'_>,
    row_id: i64,
    start: i64,
    end: i64,
    data: &str,
) -> Result<i64> {
    conn.prepare_cached(INSERT_EVENT)?
        .execute(params![row_id, start, end, data])?;
    stored(memory, row_id, start, end);
    Ok(conn.last_insert_rowid())
}

/// Applies a heartbeat (`docs/API.md` §4); returns the stored event.
pub(crate) fn heartbeat(
    conn: &Connection,
    memory: &mut WriterMemory<'_>,
    bucket_id: &str,
    mut heartbeat: Event,
    pulsetime: Duration,
) -> Result<Event> {
    validate(&heartbeat)?;
    if pulsetime.nanos() < 0 {
        return Err(DatastoreError::InvalidInput(
            "pulsetime must not be negative".to_string(),
        ));
    }
    // Spec §3.4: a heartbeat's id is ignored.
    heartbeat.id = None;
    let row_id = bucket_row(conn, bucket_id)?;
    if memory.privacy.apply_to_event(bucket_id, &mut heartbeat) == Verdict::Dropped {
        return dropped_heartbeat(conn, memory, row_id, &heartbeat);
    }
    // After a dropped heartbeat the chain starts again (`heartbeat.rs`).
    let last = if memory.last_events.take_broken(row_id) {
        None
    } else {
        match memory.last_events.get(row_id) {
            Some(last) => Some(last.clone()),
            None => newest_event(conn, row_id)?,
        }
    };
    let merged = last
        .as_ref()
        .and_then(|last| merge(last, &heartbeat, pulsetime));
    let stored = match (merged, last) {
        (Some(merged), Some(last)) => {
            let id = last.id.unwrap_or_default();
            let end = merged.end().nanos();
            memory.bounds.note(row_id, merged.duration.nanos());
            let changed = conn
                .prepare_cached("UPDATE events SET endtime = ?1 WHERE id = ?2 AND bucketrow = ?3")?
                .execute(params![end, id, row_id])?;
            if changed == 1 {
                memory.stats.extended(row_id, end);
                merged
            } else {
                // The remembered event is gone (cannot happen while every
                // delete forgets it, but a stale memory must not fail a
                // heartbeat, B-3): start over from the stored events.
                log::warn!("Remembered last event {id} of bucket {bucket_id} is gone");
                memory.last_events.forget(row_id);
                return self::heartbeat(conn, memory, bucket_id, heartbeat, pulsetime);
            }
        }
        _ => insert_one(conn, memory, row_id, heartbeat, IdRule::Fresh)?,
    };
    memory.last_events.remember(row_id, stored.clone());
    Ok(stored)
}

/// The answer to a heartbeat a privacy rule dropped, as the reference
/// answers it: the bucket's last stored event, or, in an empty bucket, an
/// event at the heartbeat's time with no data (never the private data).
/// Nothing is stored, and the bucket's merge chain ends here.
fn dropped_heartbeat(
    conn: &Connection,
    memory: &mut WriterMemory<'_>,
    row_id: i64,
    heartbeat: &Event,
) -> Result<Event> {
    memory.last_events.break_chain(row_id);
    let last = match memory.last_events.get(row_id) {
        Some(last) => Some(last.clone()),
        None => newest_event(conn, row_id)?,
    };
    Ok(last.unwrap_or_else(|| Event {
        id: None,
        timestamp: heartbeat.timestamp,
        duration: Duration::ZERO,
        data: Data::new(),
    }))
}

/// Deletes one event of the bucket; whether one was deleted.
pub(crate) fn delete_event(
    conn: &Connection,
    memory: &mut WriterMemory<'_>,
    bucket_id: &str,
    event_id: i64,
) -> Result<bool> {
    let row_id = bucket_row(conn, bucket_id)?;
    let deleted: Option<(i64, i64)> = conn
        .prepare_cached(
            "DELETE FROM events WHERE id = ?1 AND bucketrow = ?2 RETURNING starttime, endtime",
        )?
        .query_row(params![event_id, row_id], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .optional()?;
    let Some((start, end)) = deleted else {
        return Ok(false);
    };
    note_change(conn, bucket_id, Some((start, start)))?;
    note_deleted(conn, bucket_id, Some(start), end)?;
    memory.last_events.forget(row_id);
    memory
        .stats
        .removed(conn, memory.bounds, row_id, start, end)?;
    Ok(true)
}

/// Import of one bucket (`docs/API.md` §5): create and insert all, or merge.
pub(crate) fn import_bucket(
    conn: &Connection,
    memory: &mut WriterMemory<'_>,
    mut bucket: Bucket,
) -> Result<ImportSummary> {
    let events = bucket.events.take().unwrap_or_default();
    let exists = conn
        .prepare_cached("SELECT id FROM buckets WHERE name = ?1")?
        .query_row([&bucket.id], |row| row.get::<_, i64>(0))
        .optional()?;
    match exists {
        Some(_) => {
            let events = events
                .iter()
                .map(PreparedEvent::new)
                .collect::<Result<Vec<_>>>()?;
            import_events(conn, memory, &bucket.id, events)
        }
        None => {
            // The new bucket's row touched all time (`touched.rs`): its
            // events need not tell more.
            let row_id = insert_bucket_row(conn, memory, &bucket)?;
            let _bulk = memory.touches.map(|t| t.bulk(conn)).transpose()?;
            let mut summary = ImportSummary {
                buckets_created: 1,
                ..ImportSummary::default()
            };
            for mut event in events {
                if memory.privacy.apply_to_event(&bucket.id, &mut event) == Verdict::Dropped {
                    summary.dropped += 1;
                    continue;
                }
                insert_one(conn, memory, row_id, event, IdRule::Fresh)?;
                summary.inserted += 1;
            }
            Ok(summary)
        }
    }
}

/// An event validated and with its data serialized as stored, ready to be
/// imported without the writer touching its data object (see
/// `Datastore::import_prepared`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedEvent {
    pub(crate) start: i64,
    pub(crate) end: i64,
    pub(crate) data: String,
}

impl PreparedEvent {
    /// Validates `event` and serializes its data; its id is not kept.
    pub fn new(event: &Event) -> Result<PreparedEvent> {
        validate(event)?;
        Ok(PreparedEvent {
            start: event.timestamp.nanos(),
            end: event.end().nanos(),
            data: data_text(&event.data),
        })
    }

    /// An event of an import document whose data is the document's JSON
    /// text for it: validated as [`PreparedEvent::new`] validates an
    /// event, the text kept as it is when it is already what would be
    /// stored (an export's always is), else parsed and written out.
    ///
    /// Refused, as well as data that is not a JSON object: data nested
    /// more than 100 levels deep that is not kept as it is. A
    /// document's own parser stops there; the caller reads such a
    /// document the way that refuses it with its own message.
    pub fn from_document(
        timestamp: Timestamp,
        duration: Duration,
        data: String,
    ) -> Result<PreparedEvent> {
        let event = Event::new(timestamp, duration, Data::new());
        validate(&event)?;
        let data = if is_canonical_data(&data) {
            data
        } else if nesting(&data) > DOCUMENT_DATA_DEPTH {
            return Err(DatastoreError::InvalidInput(
                "event data nested too deeply".into(),
            ));
        } else {
            let parsed = parse_data(&data)
                .map_err(|error| DatastoreError::InvalidInput(format!("event data: {error}")))?;
            data_text(&parsed)
        };
        Ok(PreparedEvent {
            start: timestamp.nanos(),
            end: event.end().nanos(),
            data,
        })
    }

    /// An event as another database stored it (a pulled event): its
    /// times and data text are taken as they are.
    pub fn stored(start: i64, end: i64, data: String) -> PreparedEvent {
        PreparedEvent { start, end, data }
    }

    /// Bytes this event takes in memory, for a caller that bounds how many
    /// it keeps.
    pub fn size(&self) -> usize {
        std::mem::size_of::<PreparedEvent>() + self.data.capacity()
    }

    /// Puts `events` in the order heartbeats store a bucket's history:
    /// oldest first, the exact reverse of a listing (start, then the
    /// longer first); events equal in both keep their order, so their ids
    /// rise in document order and a listing shows them as the document
    /// did.
    ///
    /// Storing imports this way gives imported history the layout of
    /// recorded history, ids rising with time. Export documents list
    /// events newest first; stored in that order, a year's dashboard query
    /// took ~1.25 times as long (its reads decode each distinct text in
    /// the order they walk, and the transforms then visit the objects
    /// against the order they were made in), a month's ~1.1 times.
    pub fn sort_oldest_first(events: &mut [PreparedEvent]) {
        events.sort_by_key(|event| (event.start, std::cmp::Reverse(event.end)));
    }
}

/// Deepest data [`PreparedEvent::from_document`] parses: below what
/// serde_json's parser allows data inside a document (128 levels, less the
/// document's own).
const DOCUMENT_DATA_DEPTH: usize = 100;

/// How deeply arrays and objects nest in a JSON text (outside strings).
fn nesting(text: &str) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0, false, false);
    for byte in text.bytes() {
        match (in_string, byte) {
            (true, _) if escaped => escaped = false,
            (true, b'\\') => escaped = true,
            (true, b'"') | (false, b'"') => in_string = !in_string,
            (false, b'{' | b'[') => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            (false, b'}' | b']') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Merges events into an existing bucket, skipping identical ones.
pub(crate) fn import_events(
    conn: &Connection,
    memory: &mut WriterMemory<'_>,
    bucket_id: &str,
    events: Vec<PreparedEvent>,
) -> Result<ImportSummary> {
    let row_id = bucket_row(conn, bucket_id)?;
    memory.last_events.forget(row_id);
    let mut summary = ImportSummary::default();
    let mut bulk = memory.touches.map(|t| t.bulk(conn)).transpose()?;
    let mut rows = InsertRows::new(conn, row_id)?;
    let filtered = memory.privacy.applies_to(bucket_id);
    for event in events {
        let PreparedEvent {
            start,
            end,
            mut data,
        } = event;
        if filtered {
            match filter_text(memory.privacy, bucket_id, &data) {
                Filtered::Kept => {}
                Filtered::Dropped => {
                    summary.dropped += 1;
                    continue;
                }
                Filtered::Redacted(redacted) => data = redacted,
            }
        }
        if may_hold(memory.stats.get(row_id), start, end) {
            // The lookup must see the events before it.
            rows.write()?;
            if contains_identical(conn, row_id, start, end, &data)? {
                summary.skipped += 1;
                continue;
            }
        }
        stored(memory, row_id, start, end);
        if let Some(bulk) = &mut bulk {
            bulk.touched(start, end);
        }
        rows.push(start, end, data)?;
        summary.inserted += 1;
    }
    rows.write()?;
    Ok(summary)
}

/// What the privacy rules make of a stored data text.
#[derive(Debug)]
pub(crate) enum Filtered {
    Kept,
    Dropped,
    Redacted(String),
}

/// Applies the privacy rules to a data text (as prepared for an import,
/// or as stored). Text that is not a JSON object is kept as it is: no
/// rule can match inside it.
pub(crate) fn filter_text(rules: &PrivacyRules, bucket_id: &str, text: &str) -> Filtered {
    let Ok(mut data) = parse_data(text) else {
        return Filtered::Kept;
    };
    match rules.apply(bucket_id, &mut data) {
        Verdict::Kept => Filtered::Kept,
        Verdict::Dropped => Filtered::Dropped,
        Verdict::Redacted => Filtered::Redacted(data_text(&data)),
    }
}

/// Events of an import waiting to be written by one INSERT of
/// [`INSERT_ROWS`] rows. Each INSERT statement also updates the table's
/// `AUTOINCREMENT` counter in `sqlite_sequence`, and is stepped and
/// reset on its own: importing a year of window events took 0.71 s with
/// a statement per row, 0.53 s so. The rows keep their order, so ids rise
/// as the events come.
struct InsertRows<'c> {
    conn: &'c Connection,
    row_id: i64,
    full: rusqlite::CachedStatement<'c>,
    rows: Vec<(i64, i64, String)>,
}

/// Rows of one import INSERT statement.
const INSERT_ROWS: usize = 64;

impl<'c> InsertRows<'c> {
    fn new(conn: &'c Connection, row_id: i64) -> Result<InsertRows<'c>> {
        static FULL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
            let values = vec!["(?, ?, ?, ?)"; INSERT_ROWS].join(", ");
            format!("INSERT INTO events (bucketrow, starttime, endtime, data) VALUES {values}")
        });
        Ok(InsertRows {
            conn,
            row_id,
            full: conn.prepare_cached(&FULL)?,
            rows: Vec::with_capacity(INSERT_ROWS),
        })
    }

    fn push(&mut self, start: i64, end: i64, data: String) -> Result<()> {
        self.rows.push((start, end, data));
        if self.rows.len() == INSERT_ROWS {
            self.write()?;
        }
        Ok(())
    }

    /// Writes the waiting rows: a full set with one statement, fewer one
    /// by one.
    fn write(&mut self) -> Result<()> {
        if self.rows.len() == INSERT_ROWS {
            for (index, (start, end, data)) in self.rows.iter().enumerate() {
                let first = index * 4 + 1;
                self.full.raw_bind_parameter(first, self.row_id)?;
                self.full.raw_bind_parameter(first + 1, start)?;
                self.full.raw_bind_parameter(first + 2, end)?;
                self.full.raw_bind_parameter(first + 3, data.as_str())?;
            }
            self.full.raw_execute()?;
        } else if !self.rows.is_empty() {
            let mut one = self.conn.prepare_cached(INSERT_EVENT)?;
            for (start, end, data) in &self.rows {
                one.execute(params![self.row_id, start, end, data])?;
            }
        }
        self.rows.clear();
        Ok(())
    }
}

/// Whether a bucket with these facts may hold an event from `start` to
/// `end`: not when it is empty, or the event starts before its earliest
/// event or ends after its latest. An import into a new bucket, or of
/// newer events, then costs no lookup per event (a fifth of the writer's
/// time); `None` (facts not known yet) may hold anything.
fn may_hold(stats: Option<BucketStats>, start: i64, end: i64) -> bool {
    let Some(known) = stats else {
        return true;
    };
    if known.count == 0 {
        return false;
    }
    match (known.first_start, known.last_end) {
        (Some(first), Some(last)) => start >= first && end <= last,
        _ => true,
    }
}

/// Stores a setting as JSON text under `settings.<key>`. The privacy
/// rules are compiled before anything is stored, so rules that cannot
/// apply are refused, never half applied; stored, they are in force for
/// the next write.
pub(crate) fn set_setting(
    conn: &Connection,
    memory: &mut WriterMemory<'_>,
    key: &str,
    value: &SettingValue,
) -> Result<()> {
    let rules = if key == PRIVACY_FILTERS_KEY {
        Some(
            PrivacyRules::compile(value, DEFAULT_PATTERN_SIZE_LIMIT)
                .map_err(|err| DatastoreError::InvalidInput(err.to_string()))?,
        )
    } else {
        None
    };
    let text = serde_json::to_string(value)
        .map_err(|err| DatastoreError::InvalidInput(err.to_string()))?;
    key_value::put(conn, &format!("{SETTINGS_PREFIX}{key}"), &text)?;
    if let Some(rules) = rules {
        memory.privacy.replace(rules);
    }
    Ok(())
}

/// Deletes a setting; deleting the privacy rules puts none in force.
pub(crate) fn delete_setting(
    conn: &Connection,
    memory: &mut WriterMemory<'_>,
    key: &str,
) -> Result<()> {
    key_value::delete(conn, &format!("{SETTINGS_PREFIX}{key}"))?;
    if key == PRIVACY_FILTERS_KEY {
        memory.privacy.replace(PrivacyRules::default());
    }
    Ok(())
}
