//! The replication port: what a replica of this database needs of it,
//! and nothing else. Folder sync (the `aw-folder-sync` crate) drives its
//! passes only through [`Replica`], so forwarding to a hub can be a second
//! transport over the same port.
//!
//! Going out, a replica reads a bucket's events by id after a cursor (new
//! events: ids rise as events are added) and the newest events from a
//! time on (those heartbeats keep extending), and the bucket's change
//! counter, which every other change to its history bumps (`changes.rs`):
//! a counter that moved means "compare the whole bucket". Coming in, it
//! applies a pulled chunk as one writer job ([`PulledChunk`]): events
//! through the import path (so the privacy rules apply and a repeated
//! chunk stores nothing twice), replacements of events that changed at
//! their origin, time deleted here withheld, and the replica's state
//! stored in the same transaction, so a kill loses nothing and repeats
//! nothing. The state is the replica's own text under its own keys
//! (`key_value.rs`, [`REPLICA_PREFIX`](crate::key_value::REPLICA_PREFIX)).

use std::collections::HashMap;

use aw_models::{Bucket, PullCounts, UpdateBucket};
use rusqlite::{Connection, OptionalExtension};

use crate::changes::{self, change_count};
use crate::format::{self, StoredRow};
use crate::hosts::HostChange;
use crate::key_value::{self, REPLICA_PREFIX};
use crate::memory::WriterMemory;
use crate::queries::bucket_row;
use crate::writes::{filter_text, import_events, insert_bucket_row, Filtered, PreparedEvent};
use crate::{Datastore, DatastoreError, Result};

/// What replication needs of a database.
pub trait Replica {
    /// Every bucket, with its metadata ([`Datastore::buckets`]).
    fn buckets(&self) -> Result<Vec<Bucket>>;

    /// One bucket ([`Datastore::bucket`]); `None` when there is none of
    /// that id.
    fn bucket(&self, bucket_id: &str) -> Result<Option<Bucket>>;

    /// How many events the bucket holds ([`Datastore::count_events`] of
    /// all its time).
    fn count_events(&self, bucket_id: &str) -> Result<u64>;

    /// Up to `limit` events of the bucket with ids above `after`, in id
    /// order.
    fn rows_after(&self, bucket_id: &str, after: i64, limit: usize) -> Result<Vec<StoredRow>>;

    /// The bucket's events starting at or after `start` with ids up to
    /// `through`, in id order.
    fn rows_from(&self, bucket_id: &str, start: i64, through: i64) -> Result<Vec<StoredRow>>;

    /// Up to `limit` of the bucket's events starting in `[low, high]`,
    /// in (start, id) order, after the event `after` (start, id).
    fn rows_by_start(
        &self,
        bucket_id: &str,
        low: i64,
        high: i64,
        after: Option<(i64, i64)>,
        limit: usize,
    ) -> Result<Vec<StoredRow>>;

    /// The bucket's change counter: it moves with every change to the
    /// bucket's history other than an added or extended event.
    fn change_count(&self, bucket_id: &str) -> Result<i64>;

    /// Where the bucket's history changed since its counter stood at
    /// `counter`: spans of event starts (both ends included), sorted and
    /// joined; `None` when that is no longer known (compare everything).
    fn changed_since(&self, bucket_id: &str, counter: i64) -> Result<Option<Vec<(i64, i64)>>>;

    /// Deletes a bucket and its events ([`Datastore::delete_bucket`]; a
    /// copy whose origin deleted it); one already gone is no error.
    fn delete_bucket(&self, bucket_id: &str) -> Result<()>;

    /// The bucket's newest start; `None` when it has no events.
    fn newest_start(&self, bucket_id: &str) -> Result<Option<i64>>;

    /// The highest event id of the bucket (0 when it has none).
    fn highest_id(&self, bucket_id: &str) -> Result<i64>;

    /// Removes the replica's state under `key`.
    fn forget_state(&self, key: &str) -> Result<()>;

    /// The replica's state stored under `key`.
    fn state(&self, key: &str) -> Result<Option<String>>;

    /// Every state whose key starts with `prefix`, with its key.
    fn states_under(&self, prefix: &str) -> Result<Vec<(String, String)>>;

    /// Brings an existing copy's type, client, host name and data to
    /// `copy`'s; a copy not made yet is left to [`Replica::apply_pulled`].
    fn follow_metadata(&self, copy: &Bucket) -> Result<()>;

    /// Stores one pulled chunk atomically (see the module's text).
    fn apply_pulled(&self, chunk: PulledChunk) -> Result<PullCounts>;

    /// The bucket a renamed one is now (`hosts.rs` keeps the renames),
    /// through later renames, when it still exists; `None` otherwise.
    fn renamed(&self, bucket_id: &str) -> Result<Option<String>>;

    /// Renames a copy in place with its replica states in one
    /// transaction: the states of `change` are set or deleted with it.
    fn rename_copy(&self, change: HostChange) -> Result<()>;
}

/// One chunk of events pulled into a copy, applied as one transaction.
#[derive(Debug, Clone)]
pub struct PulledChunk {
    /// The copy, created with this bucket's fields if missing.
    pub target: Bucket,
    /// Events that changed or were deleted at their origin after they
    /// were pulled; applied first.
    pub replacements: Vec<Replacement>,
    /// New events.
    pub events: Vec<PreparedEvent>,
    /// When given, the copy's events starting in this span (both ends
    /// included) become exactly `events` as the rules make them: those
    /// stored there and not among them are deleted, the missing added.
    pub window: Option<(i64, i64)>,
    /// The replica's state after this chunk: key and text, stored with it.
    pub state: Option<(String, String)>,
}

/// A pulled event that changed or was deleted at its origin: its times
/// (and data, when known) as it was pulled, and what it is now.
#[derive(Debug, Clone)]
pub struct Replacement {
    /// Start as pulled.
    pub start: i64,
    /// End as pulled.
    pub end: i64,
    /// Data text as pulled, when known (it tells apart events of equal
    /// times).
    pub old_data: Option<String>,
    /// What it is now; `None`: deleted at the origin.
    pub new: Option<PreparedEvent>,
}

impl Replica for Datastore {
    fn buckets(&self) -> Result<Vec<Bucket>> {
        Ok(Datastore::buckets(self).wait()?.into_values().collect())
    }

    fn bucket(&self, bucket_id: &str) -> Result<Option<Bucket>> {
        match Datastore::bucket(self, bucket_id).wait() {
            // Replication names buckets exactly, never through a host
            // alias (`hosts.rs`).
            Ok(bucket) if bucket.id == bucket_id => Ok(Some(bucket)),
            Ok(_) => Ok(None),
            Err(DatastoreError::NoSuchBucket(_)) => Ok(None),
            Err(error) => Err(error),
        }
    }

    fn count_events(&self, bucket_id: &str) -> Result<u64> {
        Datastore::count_events(self, bucket_id, None, None).wait()
    }

    fn rows_after(&self, bucket_id: &str, after: i64, limit: usize) -> Result<Vec<StoredRow>> {
        self.read_pooled(|conn, _| {
            let row_id = bucket_row(conn, bucket_id)?;
            Ok(format::rows_by_id(conn, row_id, after, i64::MAX, limit)?)
        })
    }

    fn rows_from(&self, bucket_id: &str, start: i64, through: i64) -> Result<Vec<StoredRow>> {
        self.read_pooled(|conn, _| {
            let row_id = bucket_row(conn, bucket_id)?;
            Ok(format::rows_from(conn, row_id, start, through)?)
        })
    }

    fn rows_by_start(
        &self,
        bucket_id: &str,
        low: i64,
        high: i64,
        after: Option<(i64, i64)>,
        limit: usize,
    ) -> Result<Vec<StoredRow>> {
        self.read_pooled(|conn, _| {
            let row_id = bucket_row(conn, bucket_id)?;
            Ok(format::rows_by_start(
                conn, row_id, low, high, after, limit,
            )?)
        })
    }

    fn change_count(&self, bucket_id: &str) -> Result<i64> {
        self.read_pooled(|conn, _| change_count(conn, bucket_id))
    }

    fn changed_since(&self, bucket_id: &str, counter: i64) -> Result<Option<Vec<(i64, i64)>>> {
        self.read_pooled(|conn, _| changes::changed_since(conn, bucket_id, counter))
    }

    fn newest_start(&self, bucket_id: &str) -> Result<Option<i64>> {
        self.read_pooled(|conn, _| {
            let row_id = bucket_row(conn, bucket_id)?;
            Ok(conn
                .prepare_cached(
                    "SELECT max(starttime) FROM events
                         INDEXED BY events_bucketrow_starttime_endtime_index
                     WHERE bucketrow = ?1",
                )?
                .query_row([row_id], |row| row.get(0))?)
        })
    }

    fn highest_id(&self, bucket_id: &str) -> Result<i64> {
        self.read_pooled(|conn, _| {
            let row_id = bucket_row(conn, bucket_id)?;
            // Newest ids first along the rowid: the bucket's newest event
            // is found without reading its whole history.
            Ok(conn
                .prepare_cached(
                    "SELECT id FROM events NOT INDEXED WHERE bucketrow = ?1
                     ORDER BY id DESC LIMIT 1",
                )?
                .query_row([row_id], |row| row.get(0))
                .optional()?
                .unwrap_or(0))
        })
    }

    fn forget_state(&self, key: &str) -> Result<()> {
        let key = key_value::replica_key(key)?;
        self.write(move |conn, _| Ok(key_value::delete(conn, &key)?))
    }

    fn delete_bucket(&self, bucket_id: &str) -> Result<()> {
        match Datastore::delete_bucket(self, bucket_id) {
            Ok(()) | Err(DatastoreError::NoSuchBucket(_)) => Ok(()),
            Err(error) => Err(error),
        }
    }

    fn renamed(&self, bucket_id: &str) -> Result<Option<String>> {
        self.read_pooled(|conn, _| crate::hosts::renamed(conn, bucket_id))
    }

    fn rename_copy(&self, change: HostChange) -> Result<()> {
        self.change_hosts(change).map(|_| ())
    }

    fn state(&self, key: &str) -> Result<Option<String>> {
        let key = key_value::replica_key(key)?;
        self.read_pooled(|conn, _| Ok(key_value::get(conn, &key)?))
    }

    fn states_under(&self, prefix: &str) -> Result<Vec<(String, String)>> {
        let prefix = key_value::replica_key(prefix)?;
        let found = self.read_pooled(|conn, _| Ok(key_value::under(conn, &prefix)?))?;
        Ok(found
            .into_iter()
            .filter_map(|(key, value)| {
                Some((key.strip_prefix(REPLICA_PREFIX)?.to_string(), value?))
            })
            .collect())
    }

    fn follow_metadata(&self, copy: &Bucket) -> Result<()> {
        let Some(here) = Replica::bucket(self, &copy.id)? else {
            return Ok(());
        };
        if (&here.kind, &here.client, &here.hostname, &here.data)
            == (&copy.kind, &copy.client, &copy.hostname, &copy.data)
        {
            return Ok(());
        }
        let update = UpdateBucket {
            kind: Some(copy.kind.clone()),
            client: Some(copy.client.clone()),
            hostname: Some(copy.hostname.clone()),
            data: Some(copy.data.clone()),
        };
        match self.update_bucket(&copy.id, update) {
            // Deleted here meanwhile: the next chunk makes it again.
            Ok(()) | Err(DatastoreError::NoSuchBucket(_)) => Ok(()),
            Err(error) => Err(error),
        }
    }

    fn apply_pulled(&self, chunk: PulledChunk) -> Result<PullCounts> {
        let state = match chunk.state {
            Some((key, value)) => Some((key_value::replica_key(&key)?, value)),
            None => None,
        };
        self.write(move |conn, memory| {
            apply_pulled(
                conn,
                memory,
                &chunk.target,
                &chunk.replacements,
                chunk.events,
                chunk.window,
                state,
            )
        })
    }
}

/// The writer's job for one pulled chunk: replacements first, then new
/// events outside the time deleted here, then the state.
fn apply_pulled(
    conn: &Connection,
    memory: &mut WriterMemory<'_>,
    target: &Bucket,
    replacements: &[Replacement],
    events: Vec<PreparedEvent>,
    window: Option<(i64, i64)>,
    state: Option<(String, String)>,
) -> Result<PullCounts> {
    // The copy itself, never a bucket a host alias names.
    let row_id = match crate::queries::exact_row(conn, &target.id)? {
        Some(row_id) => row_id,
        None => insert_bucket_row(conn, memory, target)?,
    };
    let mut counts = PullCounts::default();
    for replacement in replacements {
        replace(conn, memory, &target.id, row_id, replacement, &mut counts)?;
    }
    let events = match window {
        Some((low, high)) => {
            let (kept, removed) =
                replace_window(conn, memory, &target.id, row_id, low, high, events)?;
            counts.deleted += removed;
            kept
        }
        None => events,
    };
    let deleted = changes::deleted(conn, &target.id)?;
    let before = events.len();
    let events: Vec<PreparedEvent> = events
        .into_iter()
        .filter(|event| !deleted.covers(event.start, event.end))
        .collect();
    counts.skipped += (before - events.len()) as u64;
    if !events.is_empty() {
        let summary = import_events(conn, memory, &target.id, events)?;
        counts.inserted += summary.inserted;
        counts.skipped += summary.skipped;
        counts.dropped += summary.dropped;
    }
    if let Some((key, value)) = state {
        key_value::put(conn, &key, &value)?;
    }
    Ok(counts)
}

/// Makes the copy's events starting in `[low, high]` those of `events`
/// (as the rules make them): deletes the stored ones that are not among
/// them, and returns those not stored yet, for the import, with the count
/// deleted.
fn replace_window(
    conn: &Connection,
    memory: &mut WriterMemory<'_>,
    bucket_id: &str,
    row_id: i64,
    low: i64,
    high: i64,
    events: Vec<PreparedEvent>,
) -> Result<(Vec<PreparedEvent>, u64)> {
    let stored: Vec<StoredRow> = conn
        .prepare_cached(
            "SELECT id, starttime, endtime, data FROM events
                 INDEXED BY events_bucketrow_starttime_endtime_index
             WHERE bucketrow = ?1 AND starttime >= ?2 AND starttime <= ?3",
        )?
        .query_map(rusqlite::params![row_id, low, high], |row| {
            Ok(StoredRow {
                id: row.get(0)?,
                start: row.get(1)?,
                end: row.get(2)?,
                data: row.get(3)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    // What each wanted event becomes here; the dropped are not wanted.
    let mut wanted: HashMap<(i64, i64, String), usize> = HashMap::new();
    let mut incoming = Vec::with_capacity(events.len());
    for event in events {
        let data = match filter_text(&*memory.privacy, bucket_id, &event.data) {
            Filtered::Kept => event.data.clone(),
            Filtered::Redacted(redacted) => redacted,
            Filtered::Dropped => continue,
        };
        let key = (event.start, event.end, data);
        *wanted.entry(key.clone()).or_default() += 1;
        incoming.push((key, event));
    }
    let mut removed = 0;
    let mut kept: HashMap<(i64, i64, String), usize> = HashMap::new();
    for row in stored {
        let key = (row.start, row.end, row.data);
        match wanted.get_mut(&key) {
            Some(left) if *left > 0 => {
                *left -= 1;
                *kept.entry(key).or_default() += 1;
            }
            _ => {
                conn.prepare_cached("DELETE FROM events WHERE id = ?1")?
                    .execute([row.id])?;
                memory
                    .stats
                    .removed(conn, memory.bounds, row_id, key.0, key.1)?;
                removed += 1;
            }
        }
    }
    if removed > 0 {
        memory.last_events.forget(row_id);
    }
    // Those already stored are not imported again.
    let missing = incoming
        .into_iter()
        .filter_map(|(key, event)| match kept.get_mut(&key) {
            Some(left) if *left > 0 => {
                *left -= 1;
                None
            }
            _ => Some(event),
        })
        .collect();
    Ok((missing, removed))
}

/// Finds the stored copy of a pulled event by its old times (and data,
/// where several share the times) and changes or deletes it; one that is
/// not found was deleted here, and stays deleted.
fn replace(
    conn: &Connection,
    memory: &mut WriterMemory<'_>,
    bucket_id: &str,
    row_id: i64,
    replacement: &Replacement,
    counts: &mut PullCounts,
) -> Result<()> {
    let candidates: Vec<(i64, String)> = conn
        .prepare_cached(
            "SELECT id, data FROM events INDEXED BY events_bucketrow_starttime_endtime_index
             WHERE bucketrow = ?1 AND starttime = ?2 AND endtime = ?3",
        )?
        .query_map(
            rusqlite::params![row_id, replacement.start, replacement.end],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    // The stored copy has the data the rules made of the origin's.
    let rules = &*memory.privacy;
    let filtered = |text: &str| match filter_text(rules, bucket_id, text) {
        Filtered::Kept => Some(text.to_string()),
        Filtered::Redacted(redacted) => Some(redacted),
        Filtered::Dropped => None,
    };
    let old_data = replacement
        .old_data
        .as_deref()
        .or(replacement.new.as_ref().map(|new| new.data.as_str()))
        .and_then(filtered);
    let found = candidates
        .iter()
        .find(|(_, data)| Some(data) == old_data.as_ref())
        .or(if candidates.len() == 1 {
            candidates.first()
        } else {
            None
        });
    let Some((id, _)) = found else {
        // Deleted here (or never stored): a local deletion stands.
        return Ok(());
    };
    let new = replacement
        .new
        .as_ref()
        .and_then(|new| filtered(&new.data).map(|data| (new.start, new.end, data)));
    memory.last_events.forget(row_id);
    match new {
        Some((start, end, data)) => {
            conn.prepare_cached(
                "UPDATE events SET starttime = ?2, endtime = ?3, data = ?4 WHERE id = ?1",
            )?
            .execute(rusqlite::params![id, start, end, data])?;
            memory.bounds.note(row_id, end - start);
            memory.stats.added(row_id, start, end);
            counts.updated += 1;
        }
        None => {
            conn.prepare_cached("DELETE FROM events WHERE id = ?1")?
                .execute([id])?;
            counts.deleted += 1;
        }
    }
    memory.stats.removed(
        conn,
        memory.bounds,
        row_id,
        replacement.start,
        replacement.end,
    )?;
    Ok(())
}
