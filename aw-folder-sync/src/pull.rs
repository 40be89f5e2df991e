//! Pull: the other devices' files in the sync folder into buckets of this
//! database named as aw-sync names them (`<bucket>-synced-from-<origin>`).
//!
//! Each file is opened read-only (`files.rs`) and read on the caller's
//! thread; the writer only stores chunks of [`CHUNK`] events
//! (`Replica::apply_pulled`), so heartbeats are served between them. The
//! progress per (file, bucket) is stored with each chunk in this database
//! (under [`PULLED`]): the ids read so far (`high_water`; aw-server-rust
//! and this server both add events with rising ids), the newest events
//! (`tail`, which heartbeats at the origin extend, as aw-sync's own push
//! does), the position in the file's `aw_sync_log` and the file's
//! `epoch`. A file whose epoch changed, or whose ids went back, was
//! rebuilt: it is read from the start again, and events already here are
//! skipped as identical.
//!
//! A file that cannot be read (`open_source`: empty, incomplete, being
//! written, locked, not SQLite, another schema; or failing midway) and
//! what `find_sources` leaves out (conflict copies, a device claimed by
//! two folders) are reported and skipped; the other files are still
//! pulled, and nothing pulled before is removed for it.

use aw_datastore::format::{self, StoredRow};
use aw_datastore::{PreparedEvent, PulledChunk, Replacement, Replica};
use aw_models::{Bucket, PullCounts};
use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

use crate::files::{meta, open_source};
use crate::layout::{find_sources, Source};
use crate::push::RENAMED_META;
use crate::{
    is_own_bucket, FolderSyncError, PullReport, Result, SourceReport, SyncFilter, SyncFolder,
    SyncProgress, ORIGIN_KEY, SYNCED_FROM,
};
use aw_models::Skipped;

/// Events per chunk stored by the writer: a heartbeat queued behind a
/// chunk waits for it (`benches/runs/2026-11-27-sync.md`).
const CHUNK: usize = 500;
/// The replica state key of a pull's progress, then the file and the
/// bucket as a JSON pair (stored as `aw-server.sync-pulled.<pair>`).
const PULLED: &str = "pulled.";

/// The progress of pulling one bucket of one file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Pulled {
    epoch: String,
    high_water: i64,
    /// The file's events starting at its newest start: id, start, end as
    /// pulled.
    tail: Vec<(i64, i64, i64)>,
    /// The last `aw_sync_log` entry applied.
    log: i64,
    /// The bucket here that the file's bucket goes into.
    #[serde(default)]
    target: String,
}

/// Why a file's pull stopped.
enum Failure {
    /// The file: reported, and the next file is pulled.
    Source(FolderSyncError),
    /// This database: the pass stops.
    Local(FolderSyncError),
}

pub(crate) fn pull(
    store: &dyn Replica,
    folder: &SyncFolder,
    filter: &SyncFilter,
    progress: &mut dyn FnMut(&SyncProgress),
) -> Result<PullReport> {
    let (sources, skipped) = find_sources(&folder.folder, &folder.device_id);
    let mut report = PullReport {
        sources: Vec::new(),
        skipped,
    };
    for source in sources {
        let mut done = SourceReport {
            file: source.name.clone(),
            device: source.device.clone(),
            buckets: Vec::new(),
            counts: PullCounts::default(),
        };
        match pull_source(store, &source, filter, &mut done, progress) {
            Ok(()) => report.sources.push(done),
            Err(Failure::Local(error)) => return Err(error),
            Err(Failure::Source(error)) => {
                report.skipped.push(Skipped {
                    name: source.name.clone(),
                    reason: error.to_string(),
                });
                // What was stored before the failure stays, and counts.
                if done.counts != PullCounts::default() {
                    report.sources.push(done);
                }
            }
        }
    }
    Ok(report)
}

fn pull_source(
    store: &dyn Replica,
    source: &Source,
    filter: &SyncFilter,
    report: &mut SourceReport,
    progress: &mut dyn FnMut(&SyncProgress),
) -> std::result::Result<(), Failure> {
    let file = |error: FolderSyncError| Failure::Source(error);
    let conn = open_source(&source.path).map_err(file)?;
    let epoch = meta(&conn, "epoch").map_err(file)?.unwrap_or_default();
    let has_log = meta(&conn, "device_id").map_err(file)?.is_some();
    let max_id: i64 = conn
        .query_row("SELECT ifnull(max(id), 0) FROM events", [], |row| {
            row.get(0)
        })
        .map_err(|error| file(error.into()))?;
    let buckets = format::buckets(&conn).map_err(|error| file(error.into()))?;
    let present: Vec<String> = buckets
        .iter()
        .map(|(_, bucket)| bucket.id.clone())
        .collect();
    for (row_id, bucket) in buckets {
        // Copies of copies are left alone: every device pulls from the
        // origin's own file, so nothing comes back to its origin or
        // arrives twice.
        if !is_own_bucket(&bucket.id) {
            continue;
        }
        let target = target_bucket(&bucket);
        if !(filter.takes_bucket(&bucket.id) || filter.takes_bucket(&target.id)) {
            continue;
        }
        store
            .follow_metadata(&target)
            .map_err(|error| Failure::Local(error.into()))?;
        let key = format!(
            "{PULLED}{}",
            serde_json::to_string(&(&source.name, &bucket.id)).unwrap_or_default()
        );
        let stored = read_progress(store, &key).map_err(Failure::Local)?;
        let mut state = stored.clone().unwrap_or_default();
        if state.epoch != epoch || state.high_water > max_id {
            let log = if has_log {
                last_log(&conn).map_err(file)?
            } else {
                0
            };
            state = Pulled {
                epoch: epoch.clone(),
                log,
                ..Pulled::default()
            };
        }
        let file = SourceFile {
            conn: &conn,
            has_log,
        };
        let counts = pull_bucket(
            store, &file, filter, row_id, &bucket, &target, &key, stored, state, progress,
        )?;
        report.counts += counts;
        report.buckets.push(target.id);
    }
    if has_log {
        let counts = pull_deleted_buckets(store, &conn, &source.name, &present, filter)?;
        report.counts += counts;
    }
    Ok(())
}

/// Buckets pulled from this file before that its device has deleted
/// since: their events, logged one by one at the origin, are deleted from
/// the copies here (the copies' buckets stay, as any bucket here stays
/// until deleted here).
fn pull_deleted_buckets(
    store: &dyn Replica,
    conn: &Connection,
    source: &str,
    present: &[String],
    filter: &SyncFilter,
) -> std::result::Result<PullCounts, Failure> {
    let prefix = format!(
        "{PULLED}[{},",
        serde_json::to_string(source).unwrap_or_default()
    );
    let pulled = progress_under(store, &prefix).map_err(Failure::Local)?;
    let mut counts = PullCounts::default();
    for (key, mut state) in pulled {
        let Ok((_, bucket_id)) = serde_json::from_str::<(String, String)>(&key[PULLED.len()..])
        else {
            continue;
        };
        if present.contains(&bucket_id)
            || state.target.is_empty()
            || !(filter.takes_bucket(&bucket_id) || filter.takes_bucket(&state.target))
        {
            continue;
        }
        let replacements = logged(conn, None, &bucket_id, &mut state)
            .map_err(|error| Failure::Source(error.into()))?;
        let target = match store.bucket(&state.target) {
            Ok(Some(target)) => target,
            // Deleted here as well: nothing left to delete.
            Ok(None) => continue,
            Err(error) => return Err(Failure::Local(error.into())),
        };
        if !replacements.is_empty() {
            let value = serde_json::to_string(&state).unwrap_or_default();
            let done = store
                .apply_pulled(PulledChunk {
                    target: target.clone(),
                    replacements,
                    events: Vec::new(),
                    window: None,
                    state: Some((key.clone(), value)),
                })
                .map_err(|error| Failure::Local(error.into()))?;
            counts += done;
        }
        // Renamed at its origin (a host renamed or merged, `aw-hosts`):
        // the new bucket is pulled as a copy of its own, so this one goes
        // once nothing is left in it.
        let renamed = meta(conn, &format!("{RENAMED_META}{bucket_id}")).map_err(Failure::Source)?;
        if renamed.is_some() {
            let left = store
                .count_events(&target.id)
                .map_err(|error| Failure::Local(error.into()))?;
            if left == 0 {
                store
                    .delete_bucket(&target.id)
                    .and_then(|()| store.forget_state(&key))
                    .map_err(|error| Failure::Local(error.into()))?;
                log::info!(
                    "{} was renamed at its origin to {}: its empty copy {} is deleted",
                    bucket_id,
                    renamed.unwrap_or_default(),
                    target.id
                );
            }
        }
    }
    Ok(counts)
}

/// What the file's `aw_sync_log` says about `bucket_id` after
/// `state.log`, as replacements of the events pulled before; advances
/// `state.log`. `row_id` is the bucket's row in the file, `None` when the
/// bucket is gone from it.
fn logged(
    conn: &Connection,
    row_id: Option<i64>,
    bucket_id: &str,
    state: &mut Pulled,
) -> rusqlite::Result<Vec<Replacement>> {
    let (oldest, newest): (Option<i64>, Option<i64>) = conn
        .prepare_cached("SELECT min(seq), max(seq) FROM aw_sync_log")?
        .query_row([], |row| Ok((row.get(0)?, row.get(1)?)))?;
    if let Some(oldest) = oldest.filter(|&oldest| oldest > state.log + 1 && state.high_water > 0) {
        log::warn!(
            "Sync: the origin's log no longer has entries {} to {} (pruned before this device \
             read them); what bucket {bucket_id} lost or changed then stays here as pulled",
            state.log + 1,
            oldest - 1
        );
    }
    let entries = conn
        .prepare_cached(
            "SELECT seq, event_id, starttime, endtime, data FROM aw_sync_log
             WHERE bucket = ?1 AND seq > ?2 ORDER BY seq",
        )?
        .query_map(params![bucket_id, state.log], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, i64>(1)?,
                row.get::<_, i64>(2)?,
                row.get::<_, i64>(3)?,
                row.get::<_, String>(4)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    // Every entry of this bucket up to the newest was read (the file does
    // not change while it is open), so the next pass starts after it.
    state.log = state.log.max(newest.unwrap_or(0));
    let mut replacements = Vec::new();
    for (_, event_id, start, end, data) in entries {
        if event_id > state.high_water {
            // Never pulled; what it is now comes with the new events.
            continue;
        }
        let now = match row_id {
            Some(row_id) => format::row_by_id(conn, row_id, event_id)?,
            None => None,
        };
        replacements.push(Replacement {
            start,
            end,
            old_data: Some(data),
            new: now.as_ref().map(prepared),
        });
    }
    Ok(replacements)
}

/// An open file of another device and what is known of it.
struct SourceFile<'c> {
    conn: &'c Connection,
    /// Whether it has our `aw_sync_log` (pushed by this program).
    has_log: bool,
}

#[allow(
    clippy::too_many_arguments,
    reason = "one bucket's pull, told everything once"
)]
fn pull_bucket(
    store: &dyn Replica,
    source: &SourceFile<'_>,
    filter: &SyncFilter,
    row_id: i64,
    bucket: &Bucket,
    target: &Bucket,
    key: &str,
    stored: Option<Pulled>,
    mut state: Pulled,
    progress: &mut dyn FnMut(&SyncProgress),
) -> std::result::Result<PullCounts, Failure> {
    let file = |error: rusqlite::Error| Failure::Source(error.into());
    let conn = source.conn;
    let mut replacements = Vec::new();
    // The newest events as pulled, now grown or changed.
    for &(id, start, end) in &state.tail {
        if let Some(row) = format::row_by_id(conn, row_id, id).map_err(file)? {
            if (row.start, row.end) != (start, end) {
                replacements.push(Replacement {
                    start,
                    end,
                    old_data: None,
                    new: Some(prepared(&row)),
                });
            }
        }
    }
    // What the origin deleted or changed after pushing it.
    if source.has_log {
        replacements.extend(logged(conn, Some(row_id), &bucket.id, &mut state).map_err(file)?);
    }
    state.target.clone_from(&target.id);
    let newest: Option<i64> = conn
        .query_row(
            "SELECT max(starttime) FROM events WHERE bucketrow = ?1",
            [row_id],
            |row| row.get(0),
        )
        .map_err(file)?;
    let tail = match newest {
        None => Vec::new(),
        Some(newest) => conn
            .prepare_cached(
                "SELECT id, starttime, endtime FROM events
                 WHERE bucketrow = ?1 AND starttime >= ?2 ORDER BY id",
            )
            .and_then(|mut stmt| {
                stmt.query_map(params![row_id, newest], |row| {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(file)?,
    };
    let mut stage = SyncProgress {
        stage: format!("Pulling {}", target.id),
        done: 0,
        total: None,
    };
    // Our files say how far each bucket's ids go: with nothing above what
    // was read, the walk by id (over the other buckets' later events) is
    // skipped.
    let pushed_to: Option<i64> = if source.has_log {
        conn.query_row(
            "SELECT high_water FROM aw_sync_pushed WHERE bucket = ?1",
            [&bucket.id],
            |row| row.get(0),
        )
        .optional()
        .map_err(file)?
    } else {
        None
    };
    let mut counts = PullCounts::default();
    let mut written = stored;
    loop {
        let rows = if pushed_to.is_some_and(|to| to <= state.high_water) {
            Vec::new()
        } else {
            format::rows_by_id(conn, row_id, state.high_water, i64::MAX, CHUNK).map_err(file)?
        };
        let last = rows.len() < CHUNK;
        if stage.total.is_none() && !last {
            // Counted only when there is more than a chunk: the count walks
            // the bucket's index, a few milliseconds per month of history.
            let more: u64 = conn
                .query_row(
                    "SELECT count(*) FROM events WHERE bucketrow = ?1 AND id > ?2",
                    params![row_id, state.high_water],
                    |row| row.get(0),
                )
                .map_err(file)?;
            stage.total = Some(more);
        }
        state.high_water = rows.last().map_or(state.high_water, |row| row.id);
        if last {
            // Only what was read in full is recorded as read.
            state.tail = tail
                .iter()
                .copied()
                .filter(|&(id, _, _)| id <= state.high_water)
                .collect();
        }
        let nothing_new = rows.is_empty() && replacements.is_empty();
        if !(nothing_new && written.as_ref() == Some(&state)) {
            let events: Vec<PreparedEvent> = rows
                .iter()
                .filter(|row| row.end >= row.start && filter.takes_end(row.end))
                .map(prepared)
                .collect();
            let value = serde_json::to_string(&state).unwrap_or_default();
            let done = store
                .apply_pulled(PulledChunk {
                    target: target.clone(),
                    replacements: std::mem::take(&mut replacements),
                    events,
                    window: None,
                    state: Some((key.to_string(), value)),
                })
                .map_err(|error| Failure::Local(error.into()))?;
            counts += done;
            written = Some(state.clone());
        }
        stage.done += rows.len() as u64;
        progress(&stage);
        if last {
            return Ok(counts);
        }
    }
}

/// The bucket this device keeps another device's bucket in, as aw-sync
/// names it: `<id without any -synced-from- part>-synced-from-<origin>`,
/// the origin being the bucket's `$aw.sync.origin` or its host name.
pub(crate) fn target_bucket(remote: &Bucket) -> Bucket {
    let original = remote.id.split(SYNCED_FROM).next().unwrap_or(&remote.id);
    let origin = remote
        .data
        .get(ORIGIN_KEY)
        .and_then(|value| value.as_str())
        .unwrap_or(&remote.hostname)
        .to_string();
    let mut target = remote.clone();
    target.id = format!("{original}{SYNCED_FROM}{origin}");
    target
        .data
        .insert(ORIGIN_KEY.to_string(), serde_json::Value::String(origin));
    target.events = None;
    target.metadata = Default::default();
    target
}

fn prepared(row: &StoredRow) -> PreparedEvent {
    PreparedEvent::stored(row.start, row.end, row.data.clone())
}

fn last_log(conn: &Connection) -> Result<i64> {
    Ok(
        conn.query_row("SELECT ifnull(max(seq), 0) FROM aw_sync_log", [], |row| {
            row.get(0)
        })?,
    )
}

/// Every stored progress whose key starts with `prefix`.
fn progress_under(store: &dyn Replica, prefix: &str) -> Result<Vec<(String, Pulled)>> {
    Ok(store
        .states_under(prefix)?
        .into_iter()
        .filter_map(|(key, text)| Some((key, serde_json::from_str(&text).ok()?)))
        .collect())
}

fn read_progress(store: &dyn Replica, key: &str) -> Result<Option<Pulled>> {
    // Unreadable progress is no progress: the file is read again, and
    // what is here already is skipped.
    Ok(store
        .state(key)?
        .and_then(|text| serde_json::from_str(&text).ok()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_named_as_aw_sync_names_them() {
        let mut remote = Bucket {
            id: "aw-watcher-window_laptop".to_string(),
            kind: "currentwindow".to_string(),
            client: "aw-watcher-window".to_string(),
            hostname: "laptop".to_string(),
            created: None,
            data: Default::default(),
            metadata: Default::default(),
            events: None,
            last_updated: None,
        };
        assert_eq!(
            target_bucket(&remote).id,
            "aw-watcher-window_laptop-synced-from-laptop"
        );
        remote.data.insert(ORIGIN_KEY.to_string(), "desk".into());
        remote.id = "x-synced-from-desk".to_string();
        let target = target_bucket(&remote);
        assert_eq!(target.id, "x-synced-from-desk");
        assert_eq!(target.data[ORIGIN_KEY], "desk");
    }
}
