//! The long operations on stored history: deleting a time range, expiring
//! old events, applying the privacy rules to stored events, and giving
//! freed space back.
//!
//! Each is a loop on the caller's thread that sends the writer one chunk
//! command at a time (`cleanup.rs`): every chunk is its own transaction,
//! so heartbeats queued meanwhile are served between chunks, a kill
//! leaves each event untouched or fully processed, and the same call made
//! again finishes the work.

use aw_models::{Expired, RangeDeletion, RulesOutcome, RulesReport, Timestamp};
use rusqlite::Connection;

use crate::cleanup::{self, Chunk, RulesMode};
use crate::privacy::{PrivacyRules, PRIVACY_FILTERS_KEY};
use crate::worker::WorkerMessage;
use crate::{Datastore, DatastoreError, Result};

/// Free pages given back to the file system per command.
const RELEASE_PAGES: i64 = 128;

impl Datastore {
    /// What [`Datastore::delete_range`] would do; changes nothing.
    pub fn preview_range_deletion(
        &self,
        bucket_id: &str,
        start: Timestamp,
        end: Timestamp,
    ) -> Result<RangeDeletion> {
        check_range(start, end)?;
        if start == end {
            // An empty range holds no activity; the bucket must exist.
            self.bucket(bucket_id).wait()?;
            return Ok(RangeDeletion::default());
        }
        let (start, end) = (start.nanos(), end.nanos());
        self.read_pooled(|conn, bounds| cleanup::preview_range(conn, bounds, bucket_id, start, end))
    }

    /// Removes all activity of the bucket inside `[start, end)`: events
    /// entirely inside are deleted, events crossing an edge are cut to
    /// their part outside, an event spanning the whole range is split in
    /// two (counted once as trimmed). `progress` hears the running totals
    /// after each chunk.
    pub fn delete_range(
        &self,
        bucket_id: &str,
        start: Timestamp,
        end: Timestamp,
        progress: &mut dyn FnMut(RangeDeletion),
    ) -> Result<RangeDeletion> {
        check_range(start, end)?;
        let mut total = RangeDeletion::default();
        if start == end {
            self.bucket(bucket_id).wait()?;
            return Ok(total);
        }
        loop {
            let (id, start, end) = (bucket_id.to_string(), start.nanos(), end.nanos());
            let chunk: Chunk<RangeDeletion> = self.write(move |conn, memory| {
                cleanup::delete_range_chunk(conn, memory, &id, start, end)
            })?;
            total += chunk.done;
            progress(total);
            if !chunk.more {
                self.release_free_pages()?;
                return Ok(total);
            }
        }
    }

    /// Deletes, from every bucket, the events that ended before `cutoff`
    /// (retention). Returns the buckets that lost events. `progress`
    /// hears the events deleted so far.
    pub fn expire(&self, cutoff: Timestamp, progress: &mut dyn FnMut(u64)) -> Result<Vec<Expired>> {
        let mut report = Vec::new();
        let mut total = 0;
        for bucket_id in self.buckets().wait()?.into_keys() {
            let mut deleted = 0;
            loop {
                let (id, cutoff) = (bucket_id.clone(), cutoff.nanos());
                let chunk = match self
                    .write(move |conn, memory| cleanup::expire_chunk(conn, memory, &id, cutoff))
                {
                    Ok(chunk) => chunk,
                    // Deleted meanwhile: nothing left to expire.
                    Err(DatastoreError::NoSuchBucket(_)) => break,
                    Err(err) => return Err(err),
                };
                deleted += chunk.done;
                total += chunk.done;
                progress(total);
                if !chunk.more {
                    break;
                }
            }
            if deleted > 0 {
                report.push(Expired { bucket_id, deleted });
            }
        }
        if total > 0 {
            self.release_free_pages()?;
        }
        Ok(report)
    }

    /// What [`Datastore::apply_privacy_rules`] would do, per bucket the
    /// rules apply to; changes nothing.
    pub fn preview_privacy_rules(
        &self,
        progress: &mut dyn FnMut(&RulesReport),
    ) -> Result<Vec<RulesReport>> {
        self.rules_over_history(RulesMode::Count, progress)
    }

    /// Applies the privacy rules in force to the stored events: deletes
    /// those a `drop` rule matches and stores the redacted data of those a
    /// `redact` rule changes. Returns the counts per bucket the rules apply
    /// to; `progress` hears each bucket's running counts.
    pub fn apply_privacy_rules(
        &self,
        progress: &mut dyn FnMut(&RulesReport),
    ) -> Result<Vec<RulesReport>> {
        self.rules_over_history(RulesMode::Apply, progress)
    }

    /// What applying `rules` (not those in force: rules being edited)
    /// would do, per bucket they apply to; changes nothing.
    pub fn preview_privacy_rules_with(
        &self,
        rules: &PrivacyRules,
        progress: &mut dyn FnMut(&RulesReport),
    ) -> Result<Vec<RulesReport>> {
        self.rules_over_events(rules, RulesMode::Count, progress)
    }

    fn rules_over_history(
        &self,
        mode: RulesMode,
        progress: &mut dyn FnMut(&RulesReport),
    ) -> Result<Vec<RulesReport>> {
        // The rules in force, as the writer compiled them from the same
        // setting (`worker.rs`): the stored rules that can be used.
        let rules = match self.setting(PRIVACY_FILTERS_KEY).wait()? {
            None => PrivacyRules::default(),
            Some(value) => PrivacyRules::compile_stored(&value).0,
        };
        self.rules_over_events(&rules, mode, progress)
    }

    fn rules_over_events(
        &self,
        rules: &PrivacyRules,
        mode: RulesMode,
        progress: &mut dyn FnMut(&RulesReport),
    ) -> Result<Vec<RulesReport>> {
        let mut reports = Vec::new();
        for bucket_id in self.buckets().wait()?.into_keys() {
            if !rules.applies_to(&bucket_id) {
                continue;
            }
            let mut report = RulesReport {
                bucket_id,
                outcome: RulesOutcome::default(),
            };
            let mut after = i64::MIN;
            loop {
                // The events are read and judged on this thread, so the
                // writer, which heartbeats wait for, only stores changes.
                let read =
                    self.read_pooled(|conn, _| cleanup::rows_after(conn, &report.bucket_id, after));
                let rows = match read {
                    Ok(rows) => rows,
                    Err(DatastoreError::NoSuchBucket(_)) => break,
                    Err(err) => return Err(err),
                };
                let (judged, changes) = cleanup::judge(rules, &report.bucket_id, &rows);
                let done = if mode == RulesMode::Apply && !changes.is_empty() {
                    let id = report.bucket_id.clone();
                    let mut stored = self.write(move |conn, memory| {
                        cleanup::store_changes(conn, memory, &id, &changes)
                    })?;
                    stored.examined = judged.examined;
                    stored
                } else {
                    judged
                };
                report.outcome += done;
                progress(&report);
                after = rows.last().map_or(after, |row| row.id);
                if rows.len() < cleanup::CHUNK {
                    break;
                }
            }
            reports.push(report);
        }
        if mode == RulesMode::Apply {
            self.release_free_pages()?;
        }
        Ok(reports)
    }

    /// Gives the file's free pages back to the file system, a few
    /// thousand at a time, in a database with incremental vacuum on (new
    /// databases, and any after [`Datastore::vacuum`]); elsewhere it does
    /// nothing. Returns the free pages left.
    pub fn release_free_pages(&self) -> Result<i64> {
        let mut left = i64::MAX;
        loop {
            let now = self.write(|conn, _| cleanup::release_pages(conn, RELEASE_PAGES))?;
            // No progress: incremental vacuum is off in this file.
            if now == 0 || now >= left {
                return Ok(now);
            }
            left = now;
        }
    }

    /// Bytes of the file's free pages: about what [`Datastore::vacuum`]
    /// would give back (pages of deleted events that incremental vacuum
    /// has not released yet).
    pub fn free_bytes(&self) -> Result<u64> {
        let count = |conn: &Connection| -> Result<u64> {
            let pages: i64 = conn.query_row("PRAGMA freelist_count", [], |row| row.get(0))?;
            let size: i64 = conn.query_row("PRAGMA page_size", [], |row| row.get(0))?;
            Ok(u64::try_from(pages.saturating_mul(size)).unwrap_or(0))
        };
        self.read_pooled(move |conn, _| count(conn))
    }

    /// Rebuilds the database file (SQLite's `VACUUM`), which gives every
    /// free page back and turns incremental vacuum on for later deletes.
    /// It writes a whole copy of the database first, so it needs free
    /// space about the size of the file, and writes wait while it runs.
    pub fn vacuum(&self) -> Result<()> {
        self.call(|reply| WorkerMessage::Vacuum { reply })
    }
}

fn check_range(start: Timestamp, end: Timestamp) -> Result<()> {
    if start > end {
        return Err(DatastoreError::InvalidInput(format!(
            "the range must end after it starts (start {start}, end {end})"
        )));
    }
    Ok(())
}
