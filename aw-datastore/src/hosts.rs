//! Hosts renamed, merged and aliased: the rows' side of `aw-hosts`.
//!
//! A bucket is renamed in place (its row, events, ids and `created`
//! stay; its id and hostname change), so nothing but the name moves. A
//! merge moves one bucket's events into another, a chunk per job
//! ([`merge_step`]), as new events (fresh ids, so replication sends them
//! as any new event): each event keeps the time the other bucket has no
//! event for ([`Coverage`], the one rule, also behind the dry run's
//! figures), so merged time is the union of the two histories, never
//! doubled, and an event's only copy is never dropped. Where both have
//! an event for the same time, the receiving bucket's is kept.
//!
//! An alias (`aw-server.host-alias.<alias>`, [`HOST_ALIAS_PREFIX`]) makes
//! a bucket id `<stem>_<alias>` that no bucket has name the bucket
//! `<stem>_<host>`: [`alias_row`] is asked only when a lookup by name
//! finds nothing, so a bucket's own name always wins and the hot paths
//! pay nothing.

use std::collections::BTreeMap;

use rusqlite::{params, Connection, OptionalExtension};

use crate::changes::note_change;
use crate::key_value::{
    self, CHANGED_PREFIX, CHANGES_PREFIX, DELETED_PREFIX, HOST_ALIAS_PREFIX, RENAMED_PREFIX,
};
use crate::memory::WriterMemory;
use crate::queries::exact_row;
use crate::{DatastoreError, Result};

/// One bucket given another id and hostname.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketRename {
    /// The bucket's id now.
    pub from: String,
    /// Its id afterwards (may equal `from`: then only the host changes).
    pub to: String,
    /// Its hostname afterwards.
    pub hostname: String,
}

/// The last, atomic step of a rename or a merge: the buckets renamed,
/// those merged away (what is left of their events moved first, then the
/// bucket deleted), the alias set and the journal cleared, all in one
/// transaction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostChange {
    /// Buckets renamed in place.
    pub renames: Vec<BucketRename>,
    /// `(from, into)`: buckets whose remaining events move into another,
    /// then deleted.
    pub merges: Vec<(String, String)>,
    /// `(alias, host)`: set after the change.
    pub alias: Option<(String, String)>,
    /// Replica states (their keys as `Replica` names them) set (`Some`)
    /// or deleted in the same transaction: a copy renamed with its
    /// forwarding state.
    pub states: Vec<(String, Option<String>)>,
    /// Clears the journal (`Datastore::set_hosts_journal`) in the same
    /// transaction.
    pub clear_journal: bool,
}

/// What moving events from one bucket into another did (or, in a
/// preview, would do).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct MergeCounts {
    /// Events moved whole.
    pub moved: u64,
    /// Events moved with part of their time cut (the receiving bucket had
    /// events for it).
    pub cut: u64,
    /// Events dropped: the receiving bucket had events for all of their
    /// time.
    pub dropped: u64,
    /// Nanoseconds of the moved bucket's time the receiving one already
    /// had (left out, never counted twice).
    pub overlap: i64,
}

impl MergeCounts {
    /// Adds another step's counts.
    pub fn add(&mut self, other: MergeCounts) {
        self.moved += other.moved;
        self.cut += other.cut;
        self.dropped += other.dropped;
        self.overlap += other.overlap;
    }
}

/// One step of a merge: its counts, and whether the moved bucket still
/// has events.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MergeStep {
    /// What this step did.
    pub counts: MergeCounts,
    /// Whether events are left to move.
    pub remaining: bool,
}

/// The journal of a rename or merge under way, as `aw-hosts` writes it.
pub(crate) const HOSTS_JOURNAL_KEY: &str = "aw-server.hosts-journal";

/// Time covered by events, as sorted, disjoint half-open spans.
#[derive(Debug, Clone, Default)]
pub struct Coverage {
    spans: Vec<(i64, i64)>,
}

impl Coverage {
    /// Coverage of the spans `[start, end)` given (empty spans cover nothing).
    pub fn of(spans: impl IntoIterator<Item = (i64, i64)>) -> Coverage {
        let mut coverage = Coverage::default();
        let mut all: Vec<(i64, i64)> = spans.into_iter().filter(|(s, e)| e > s).collect();
        all.sort_unstable();
        for (start, end) in all {
            match coverage.spans.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => coverage.spans.push((start, end)),
            }
        }
        coverage
    }

    /// The parts of `[start, end)` no span covers, oldest first, and
    /// covers them from now on. An event without duration at a covered
    /// instant has no part left; elsewhere it is kept whole.
    pub fn take(&mut self, start: i64, end: i64) -> Vec<(i64, i64)> {
        // The first span that ends at or after `start`: it and those
        // after it up to `end` are joined with the new time.
        let first = self.spans.partition_point(|&(_, e)| e < start);
        if end <= start {
            let covered = self
                .spans
                .get(first)
                .is_some_and(|&(s, e)| s <= start && start < e);
            return if covered {
                Vec::new()
            } else {
                vec![(start, end)]
            };
        }
        let mut pieces = Vec::new();
        let mut at = start;
        let mut index = first;
        while let Some(&(s, e)) = self.spans.get(index).filter(|&&(s, _)| s <= end) {
            if s > at {
                pieces.push((at, s));
            }
            at = at.max(e);
            index += 1;
        }
        if at < end {
            pieces.push((at, end));
        }
        // Cover `[start, end)`: spans first..index join it.
        let (joined_start, joined_end) = if index > first {
            (
                self.spans[first].0.min(start),
                self.spans[index - 1].1.max(end),
            )
        } else {
            (start, end)
        };
        self.spans
            .splice(first..index, [(joined_start, joined_end)]);
        pieces
    }
}

/// The bucket `bucket_id` was renamed to, through later renames, if that
/// bucket exists.
pub(crate) fn renamed(conn: &Connection, bucket_id: &str) -> Result<Option<String>> {
    let mut at = bucket_id.to_string();
    // A chain of renames ends; a loop (renamed back and forth) too.
    for _ in 0..64 {
        match key_value::get(conn, &format!("{RENAMED_PREFIX}{at}"))? {
            Some(next) if next != bucket_id => at = next,
            _ => break,
        }
    }
    if at == bucket_id {
        return Ok(None);
    }
    Ok(exact_row(conn, &at)?.map(|_| at))
}

/// Every alias and the host it names.
pub(crate) fn aliases(conn: &Connection) -> Result<BTreeMap<String, String>> {
    Ok(key_value::under(conn, HOST_ALIAS_PREFIX)?
        .into_iter()
        .filter_map(|(key, host)| Some((key.strip_prefix(HOST_ALIAS_PREFIX)?.to_string(), host?)))
        .collect())
}

/// Makes `alias` name `host` (or, with `None`, no longer an alias).
pub(crate) fn set_alias(conn: &Connection, alias: &str, host: Option<&str>) -> Result<()> {
    if alias.is_empty() {
        return Err(DatastoreError::InvalidInput(
            "an alias must not be empty".to_string(),
        ));
    }
    let key = format!("{HOST_ALIAS_PREFIX}{alias}");
    match host {
        Some(host) => {
            // An alias of an alias names the host itself: no chains.
            let host = aliases(conn)?
                .remove(host)
                .unwrap_or_else(|| host.to_string());
            if host == alias {
                return Err(DatastoreError::InvalidInput(format!(
                    "'{alias}' cannot be an alias of itself"
                )));
            }
            let host = host.as_str();
            key_value::put(conn, &key, host)?;
            // An alias of `alias` now names `host` too: no chains.
            for (other, target) in aliases(conn)? {
                if target == alias {
                    key_value::put(conn, &format!("{HOST_ALIAS_PREFIX}{other}"), host)?;
                }
            }
        }
        None => key_value::delete(conn, &key)?,
    }
    Ok(())
}

/// The journal of a host change under way.
pub(crate) fn journal(conn: &Connection) -> Result<Option<String>> {
    Ok(key_value::get(conn, HOSTS_JOURNAL_KEY)?)
}

/// Stores (or clears) the journal.
pub(crate) fn set_journal(conn: &Connection, text: Option<&str>) -> Result<()> {
    match text {
        Some(text) => key_value::put(conn, HOSTS_JOURNAL_KEY, text)?,
        None => key_value::delete(conn, HOSTS_JOURNAL_KEY)?,
    }
    Ok(())
}

fn named_row(conn: &Connection, bucket_id: &str) -> Result<i64> {
    exact_row(conn, bucket_id)?.ok_or_else(|| DatastoreError::NoSuchBucket(bucket_id.to_string()))
}

/// The longest event of a bucket: the bound readers use, else counted.
fn longest(conn: &Connection, memory: &WriterMemory<'_>, row: i64) -> Result<i64> {
    if let Some(longest) = memory.bounds.get(row) {
        return Ok(longest);
    }
    Ok(conn
        .prepare_cached("SELECT max(endtime - starttime) FROM events WHERE bucketrow = ?1")?
        .query_row([row], |r| r.get::<_, Option<i64>>(0))?
        .unwrap_or(0))
}

/// Moves up to `limit` of the oldest events of bucket `from` into bucket
/// `into`, each cut to the time `into` has no event for.
pub(crate) fn merge_step(
    conn: &Connection,
    memory: &mut WriterMemory<'_>,
    from: &str,
    into: &str,
    limit: usize,
) -> Result<MergeStep> {
    let from_row = named_row(conn, from)?;
    let into_row = named_row(conn, into)?;
    if from_row == into_row {
        return Err(DatastoreError::InvalidInput(format!(
            "bucket {from} cannot be merged into itself"
        )));
    }
    let chunk: Vec<(i64, i64, i64)> = conn
        .prepare_cached(
            "SELECT id, starttime, endtime FROM events WHERE bucketrow = ?1
             ORDER BY starttime, id LIMIT ?2",
        )?
        .query_map(params![from_row, limit as i64], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let Some(low) = chunk.first().map(|event| event.1) else {
        return Ok(MergeStep::default());
    };
    let high = chunk.iter().map(|event| event.2).max().unwrap_or(low);
    let reach = longest(conn, memory, into_row)?;
    let mut coverage = Coverage::of(
        conn.prepare_cached(
            "SELECT starttime, endtime FROM events WHERE bucketrow = ?1
             AND starttime >= ?2 AND starttime <= ?3 AND endtime > ?4",
        )?
        .query_map(
            params![into_row, low.saturating_sub(reach), high, low],
            |row| Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?)),
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?,
    );
    memory.last_events.forget(from_row);
    memory.last_events.forget(into_row);
    let mut counts = MergeCounts::default();
    let mut starts = (i64::MAX, i64::MIN);
    for (id, start, end) in chunk {
        let pieces = coverage.take(start, end);
        let kept: i64 = pieces.iter().map(|(s, e)| e - s).sum();
        counts.overlap += (end - start) - kept;
        starts = (starts.0.min(start), starts.1.max(start));
        // Every piece is a new event of `into` (a fresh id, above every
        // id replication has seen), then the old one goes: copies
        // elsewhere take the pieces as new events and the deletion as a
        // change of `from`.
        for (s, e) in &pieces {
            conn.prepare_cached(
                "INSERT INTO events (bucketrow, starttime, endtime, data)
                 SELECT ?2, ?3, ?4, data FROM events WHERE id = ?1",
            )?
            .execute(params![id, into_row, s, e])?;
        }
        conn.prepare_cached("DELETE FROM events WHERE id = ?1")?
            .execute([id])?;
        match pieces.as_slice() {
            [] => counts.dropped += 1,
            [(s, e)] if (*s, *e) == (start, end) => counts.moved += 1,
            _ => counts.cut += 1,
        }
        memory
            .stats
            .removed(conn, memory.bounds, from_row, start, end)?;
        for (s, e) in &pieces {
            memory.stats.added(into_row, *s, *e);
            memory.bounds.note(into_row, e - s);
            starts = (starts.0.min(*s), starts.1.max(*s));
        }
    }
    // `from` lost events: replication carries the span (`changes.rs`);
    // `into` only gained new ones.
    note_change(conn, from, Some(starts))?;
    let remaining = conn
        .prepare_cached("SELECT 1 FROM events WHERE bucketrow = ?1 LIMIT 1")?
        .query_row([from_row], |_| Ok(()))
        .optional()?
        .is_some();
    Ok(MergeStep { counts, remaining })
}

/// What merging `from` into `into` would do now, changing nothing: the
/// same rule as [`merge_step`] over both buckets' times, read whole.
pub(crate) fn merge_preview(conn: &Connection, from: &str, into: &str) -> Result<MergeCounts> {
    let spans = |row: i64| -> Result<Vec<(i64, i64)>> {
        Ok(conn
            .prepare_cached(
                "SELECT starttime, endtime FROM events WHERE bucketrow = ?1
                 ORDER BY starttime, id",
            )?
            .query_map([row], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?)
    };
    let mut coverage = Coverage::of(spans(named_row(conn, into)?)?);
    let mut counts = MergeCounts::default();
    for (start, end) in spans(named_row(conn, from)?)? {
        let pieces = coverage.take(start, end);
        let kept: i64 = pieces.iter().map(|(s, e)| e - s).sum();
        counts.overlap += (end - start) - kept;
        match pieces.as_slice() {
            [] => counts.dropped += 1,
            [(s, e)] if (*s, *e) == (start, end) => counts.moved += 1,
            _ => counts.cut += 1,
        }
    }
    Ok(counts)
}

/// The last step of a rename or merge, in one transaction (see
/// [`HostChange`]).
pub(crate) fn change(
    conn: &Connection,
    memory: &mut WriterMemory<'_>,
    change: &HostChange,
) -> Result<MergeCounts> {
    let mut counts = MergeCounts::default();
    for (from, into) in &change.merges {
        loop {
            let step = merge_step(conn, memory, from, into, 10_000)?;
            counts.add(step.counts);
            if !step.remaining {
                break;
            }
        }
        crate::writes::delete_bucket(conn, memory, from)?;
    }
    for rename in &change.renames {
        let row = named_row(conn, &rename.from)?;
        if rename.to != rename.from && exact_row(conn, &rename.to)?.is_some() {
            return Err(DatastoreError::BucketExists(rename.to.clone()));
        }
        conn.prepare_cached("UPDATE buckets SET name = ?2, hostname = ?3 WHERE id = ?1")?
            .execute(params![row, rename.to, rename.hostname])?;
        memory.last_events.forget(row);
        if rename.to != rename.from {
            // Replication tells copies elsewhere it is a rename.
            key_value::put(
                conn,
                &format!("{RENAMED_PREFIX}{}", rename.from),
                &rename.to,
            )?;
            key_value::delete(conn, &format!("{RENAMED_PREFIX}{}", rename.to))?;
            // The records kept by bucket id follow it.
            for prefix in [CHANGES_PREFIX, CHANGED_PREFIX, DELETED_PREFIX] {
                let old = format!("{prefix}{}", rename.from);
                if let Some(value) = key_value::get(conn, &old)? {
                    key_value::put(conn, &format!("{prefix}{}", rename.to), &value)?;
                    key_value::delete(conn, &old)?;
                }
            }
        }
    }
    if let Some((alias, host)) = &change.alias {
        set_alias(conn, alias, Some(host))?;
        // A host is never its own alias, nor an alias of another.
        set_alias(conn, host, None)?;
    }
    for (key, value) in &change.states {
        let key = key_value::replica_key(key)?;
        match value {
            Some(value) => key_value::put(conn, &key, value)?,
            None => key_value::delete(conn, &key)?,
        }
    }
    if change.clear_journal {
        set_journal(conn, None)?;
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_keeps_only_uncovered_time_and_then_covers_it() {
        let mut coverage = Coverage::of([(10, 20), (30, 40), (15, 25)]);
        assert_eq!(coverage.spans, vec![(10, 25), (30, 40)]);
        assert_eq!(coverage.take(0, 50), vec![(0, 10), (25, 30), (40, 50)]);
        assert_eq!(coverage.spans, vec![(0, 50)]);
        assert_eq!(coverage.take(5, 45), Vec::<(i64, i64)>::new());
        assert_eq!(coverage.take(50, 60), vec![(50, 60)]);
        assert_eq!(coverage.spans, vec![(0, 60)]);
        assert_eq!(coverage.take(70, 70), vec![(70, 70)]);
        assert_eq!(coverage.take(59, 59), Vec::<(i64, i64)>::new());
        assert_eq!(coverage.take(60, 60), vec![(60, 60)]);
    }

    #[test]
    fn coverage_matches_a_brute_force_union() {
        // Small pseudo-random cases against a per-nanosecond count.
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) % n) as i64
        };
        for _ in 0..500 {
            let into: Vec<(i64, i64)> = (0..next(5))
                .map(|_| {
                    let s = next(60);
                    (s, s + next(15))
                })
                .collect();
            let mut from: Vec<(i64, i64)> = (0..next(6))
                .map(|_| {
                    let s = next(60);
                    (s, s + next(15))
                })
                .collect();
            from.sort_unstable();
            let mut coverage = Coverage::of(into.clone());
            let mut kept = Vec::new();
            for (s, e) in &from {
                kept.extend(coverage.take(*s, *e));
            }
            for t in 0..80 {
                let inside =
                    |spans: &[(i64, i64)]| spans.iter().filter(|(s, e)| *s <= t && t < *e).count();
                let union = inside(&into) > 0 || inside(&from) > 0;
                let merged = inside(&into) + inside(&kept);
                assert_eq!(merged > 0, union, "t={t} into={into:?} from={from:?}");
                assert!(inside(&kept) <= 1 && (inside(&kept) == 0 || inside(&into) == 0));
            }
        }
    }
}
