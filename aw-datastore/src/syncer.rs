//! The syncer thread: gets committed writes onto the disk beside the
//! writer, so no write waits for an `fsync`.
//!
//! A sync is a passive checkpoint (SQLite copies what it can of the WAL
//! into the main file, syncing the WAL before and the file after) and an
//! `fsync` of the WAL file, which covers the frames the checkpoint could not
//! copy because a reader still uses them. On a disk shared with other
//! writers either `fsync` can take hundreds of milliseconds; run by the
//! writer thread it held up every heartbeat behind it (a heartbeat took
//! 216 ms while a checkpoint ran in `benches`' "heartbeat every 20 ms while
//! 1-year queries loop"). This thread runs it on its own read-write
//! connection instead: a passive checkpoint takes no lock the writer needs,
//! so the writer keeps committing (each commit a `write()`, see
//! `worker.rs`) while the disk catches up.
//!
//! The schedule is the durability policy of `worker.rs`: a sync
//! [`IDLE_SYNC`] after the last commit, and at the latest [`MAX_UNSYNCED`]
//! after the first commit not yet synced. The writer reports each commit
//! with [`Syncer::committed`]; explicit syncs (`force_commit`, `close`)
//! stay on the writer, which needs them done before it answers.
//!
//! Under constant writes a sync is only the `fsync` of the WAL, which is
//! all durability needs; the checkpoint waits for the writer to be idle,
//! or [`CHECKPOINT_INTERVAL`] at the latest, to keep the WAL short. The
//! reason is the commit after a complete checkpoint: SQLite restarts the
//! WAL there and syncs its new header inside that commit (a header that
//! reached the disk late could revive old frames after a power cut), so
//! every checkpoint costs one heartbeat an `fsync` (74 ms in one trace on
//! a busy disk). Checkpointing when idle puts that `fsync` on the first
//! write after a pause, and under load it happens once a minute instead
//! of every 15 s.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration as StdDuration, Instant};

use rusqlite::Connection;

use crate::{DatastoreError, Result};

/// Sync after this long without a commit.
pub(crate) const IDLE_SYNC: StdDuration = StdDuration::from_secs(1);
/// Longest time an acknowledged write may stay unsynced.
pub(crate) const MAX_UNSYNCED: StdDuration = StdDuration::from_secs(15);
/// Longest time between checkpoints under constant writes.
pub(crate) const CHECKPOINT_INTERVAL: StdDuration = StdDuration::from_secs(60);

/// Gets every write committed on `conn`'s database onto the disk; `wal` is
/// the database's WAL file. With `checkpoint`, first copies what it can of
/// the WAL into the main file.
pub(crate) fn sync(conn: &Connection, wal: &Path, checkpoint: bool) -> Result<()> {
    if checkpoint {
        // Busy (another connection is checkpointing) is an answer row,
        // not an error; the fsync below makes the commits durable either
        // way.
        conn.prepare_cached("PRAGMA wal_checkpoint(PASSIVE)")?
            .query_row([], |_| Ok(()))?;
    }
    match std::fs::File::open(wal).and_then(|file| file.sync_data()) {
        Ok(()) => Ok(()),
        // No WAL: the last connection of another handle checkpointed it
        // into the file and removed it.
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(DatastoreError::Io(err)),
    }
}

/// What the writer tells the syncer.
#[derive(Debug, Default)]
struct Schedule {
    /// The first commit since the last sync began.
    first_unsynced: Option<Instant>,
    last_commit: Option<Instant>,
    /// After a failed sync, the next try waits until then.
    retry_at: Option<Instant>,
    /// When the last checkpoint was made (or the syncer started).
    last_checkpoint: Option<Instant>,
    stop: bool,
}

impl Schedule {
    /// When the next sync is due, if a commit is unsynced.
    fn due(&self) -> Option<Instant> {
        let first = self.first_unsynced?;
        let idle = self.last_commit.unwrap_or(first) + IDLE_SYNC;
        let due = idle.min(first + MAX_UNSYNCED);
        Some(self.retry_at.map_or(due, |retry| due.max(retry)))
    }

    /// Whether a sync at `now` should checkpoint: the writer is idle, or
    /// the last checkpoint is long ago.
    fn checkpoint_at(&self, now: Instant) -> bool {
        let idle = self.last_commit.is_none_or(|last| now >= last + IDLE_SYNC);
        let overdue = self
            .last_checkpoint
            .is_none_or(|last| now >= last + CHECKPOINT_INTERVAL);
        idle || overdue
    }
}

#[derive(Debug, Default)]
struct Shared {
    schedule: Mutex<Schedule>,
    wake: Condvar,
}

impl Shared {
    fn schedule(&self) -> MutexGuard<'_, Schedule> {
        // Nothing panics while holding the lock; a poisoned one is intact.
        self.schedule.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The writer's handle to the syncer thread; dropping it stops the thread
/// (without a last sync: the writer makes its own on close).
#[derive(Debug)]
pub(crate) struct Syncer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Syncer {
    /// Starts the syncer on a read-write connection to the database whose
    /// WAL file is `wal`.
    pub(crate) fn start(conn: Connection, wal: PathBuf) -> Result<Syncer> {
        let shared = Arc::new(Shared::default());
        shared.schedule().last_checkpoint = Some(Instant::now());
        let thread = std::thread::Builder::new()
            .name("aw-datastore-syncer".to_string())
            .spawn({
                let shared = Arc::clone(&shared);
                move || run(&conn, &wal, &shared)
            })
            .map_err(DatastoreError::Io)?;
        Ok(Syncer {
            shared,
            thread: Some(thread),
        })
    }

    /// A commit happened; it will be synced on schedule.
    pub(crate) fn committed(&self) {
        let now = Instant::now();
        let mut schedule = self.shared.schedule();
        schedule.last_commit = Some(now);
        if schedule.first_unsynced.is_none() {
            schedule.first_unsynced = Some(now);
            // Only an idle syncer needs waking: one already waiting for a
            // due time finds the later `last_commit` when it wakes.
            self.shared.wake.notify_one();
        }
    }

    /// The writer synced every commit itself (`force_commit`).
    pub(crate) fn synced(&self) {
        let mut schedule = self.shared.schedule();
        schedule.first_unsynced = None;
        schedule.retry_at = None;
    }

    /// Stops the thread and waits for a sync it is running to end.
    pub(crate) fn stop(&mut self) {
        self.shared.schedule().stop = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            // A panic of the syncer has been reported by the panic hook.
            let _ = thread.join();
        }
    }
}

impl Drop for Syncer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn run(conn: &Connection, wal: &Path, shared: &Shared) {
    let mut schedule = shared.schedule();
    loop {
        if schedule.stop {
            return;
        }
        let Some(due) = schedule.due() else {
            schedule = shared
                .wake
                .wait(schedule)
                .unwrap_or_else(PoisonError::into_inner);
            continue;
        };
        let now = Instant::now();
        if now < due {
            schedule = shared
                .wake
                .wait_timeout(schedule, due - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            continue;
        }
        // Commits from here on may miss this sync: they start a new round.
        let first = schedule.first_unsynced.take();
        schedule.retry_at = None;
        let checkpoint = schedule.checkpoint_at(now);
        drop(schedule);
        let result = sync(conn, wal, checkpoint);
        schedule = shared.schedule();
        if checkpoint && result.is_ok() {
            schedule.last_checkpoint = Some(now);
        }
        if let Err(err) = result {
            log::error!("Syncing the database failed, retrying: {err}");
            // `first` is older than any commit made during the sync.
            schedule.first_unsynced = first;
            schedule.retry_at = Some(Instant::now() + IDLE_SYNC);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sync_is_due_after_idle_time_or_at_the_latest_after_max_unsynced() {
        let start = Instant::now();
        let mut schedule = Schedule::default();
        assert_eq!(schedule.due(), None);
        schedule.first_unsynced = Some(start);
        schedule.last_commit = Some(start);
        assert_eq!(schedule.due(), Some(start + IDLE_SYNC));
        schedule.last_commit = Some(start + StdDuration::from_secs(20));
        assert_eq!(schedule.due(), Some(start + MAX_UNSYNCED));
        schedule.retry_at = Some(start + StdDuration::from_secs(30));
        assert_eq!(schedule.due(), Some(start + StdDuration::from_secs(30)));
    }

    #[test]
    fn checkpoints_wait_for_an_idle_writer_or_the_interval() {
        let start = Instant::now();
        let schedule = Schedule {
            last_commit: Some(start),
            last_checkpoint: Some(start),
            ..Schedule::default()
        };
        assert!(!schedule.checkpoint_at(start + IDLE_SYNC / 2));
        assert!(schedule.checkpoint_at(start + IDLE_SYNC));
        let busy = Schedule {
            last_commit: Some(start + CHECKPOINT_INTERVAL),
            ..schedule
        };
        assert!(!busy.checkpoint_at(start + CHECKPOINT_INTERVAL / 2));
        assert!(busy.checkpoint_at(start + CHECKPOINT_INTERVAL));
    }
}
