//! The WAL syncer thread: gets committed writes onto the disk beside the
//! writer, so no write waits for an `fsync`.
//!
//! A sync is a passive checkpoint (SQLite copies what it can of the WAL
//! into the main file, syncing the WAL before and the file after) and an
//! `fsync` of the WAL file, which covers the frames the checkpoint could not
//! copy because a reader still uses them. On a disk shared with other
//! writers either `fsync` can take hundreds of milliseconds; run by the
//! writer thread it held up every heartbeat behind it
//! (`benches/runs/2026-11-21-heartbeat-latency.md`). This thread runs it on its own read-write
//! connection instead: a passive checkpoint takes no lock the writer needs,
//! so the writer keeps committing (each commit a `write()`, see
//! `worker.rs`) while the disk catches up.
//!
//! The schedule is the durability policy of `worker.rs`: a sync
//! [`IDLE_SYNC`] after the last commit, and at the latest [`MAX_UNSYNCED`]
//! after the first commit not yet synced. The writer reports each commit
//! with [`WalSyncer::committed`]; explicit syncs (`force_commit`, `close`)
//! stay on the writer, which needs them done before it answers.
//!
//! Under constant writes a sync is only the `fsync` of the WAL, which is
//! all durability needs; the checkpoint waits for the writer to be idle,
//! or [`CHECKPOINT_INTERVAL`] at the latest, to keep the WAL short. The
//! reason is the commit after a complete checkpoint: SQLite restarts the
//! WAL there and syncs its new header inside that commit (a header that
//! reached the disk late could revive old frames after a power cut), so
//! every checkpoint costs one heartbeat an `fsync` (long on a busy disk:
//! the same run file). Checkpointing when idle puts that `fsync` on the first
//! write after a pause, and under load it happens once a minute instead
//! of every 15 s.
//!
//! The WAL is bounded all the same. A checkpoint copies the WAL into the
//! main file, which needs free space about the size of what it copies, so a
//! WAL that takes most of what is left of the disk could never be folded in
//! again. At a commit at least [`SIZE_CHECK`] after the last look, the
//! writer looks at the WAL's size and the disk's free space (two small
//! system calls, on the thread that is awake anyway: a timer of the WAL
//! syncer's own woke it four times a second under the lightest load), and
//! the WAL syncer checkpoints early when the WAL is over [`WAL_LIMIT`] or
//! over a quarter of the free space ([`wal_too_large`]), and in the second
//! case ([`space_is_low`]) also truncates it, so its space goes back; a
//! checkpoint that a reader kept from finishing is tried again every
//! [`CHECKPOINT_RETRY`] while the WAL is that large, so a long read delays
//! the WAL's reset by about that much after it ends.
//!
//! When a commit fails because the disk is full, the writer calls
//! [`WalSyncer::disk_full`]: until the WAL has been emptied, the WAL syncer tries
//! every [`RECOVERY_RETRY`] to fold it into the main file and truncate it
//! (`wal_checkpoint(TRUNCATE)`), so once space is freed the WAL gives its
//! space back before new writes take it, and writes work again without a
//! restart.

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
/// How often, at most, the WAL's size is looked at while commits come:
/// two small system calls, often enough that a WAL growing by megabytes a
/// second does not outrun a nearly full disk between two looks.
pub(crate) const SIZE_CHECK: StdDuration = StdDuration::from_millis(250);
/// A WAL larger than this is checkpointed without waiting for the
/// interval.
pub(crate) const WAL_LIMIT: u64 = 64 << 20;
/// A WAL over [`WAL_LIMIT`] or too large for the free space that a
/// checkpoint could not finish is tried again after this long.
pub(crate) const CHECKPOINT_RETRY: StdDuration = StdDuration::from_secs(1);
/// While the disk is full: how often emptying the WAL is tried.
pub(crate) const RECOVERY_RETRY: StdDuration = StdDuration::from_millis(250);

/// How much of the WAL a sync folds into the main file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Checkpoint {
    /// None: only the `fsync` of the WAL.
    Skip,
    /// What no reader still needs, without waiting for anyone.
    Passive,
    /// What it can, then everything and the WAL truncated to nothing,
    /// which waits briefly for readers and the writer and gives the WAL's
    /// space back (a full or nearly full disk).
    Truncate,
}

/// Gets every write committed on `conn`'s database onto the disk; `wal` is
/// the database's WAL file. First copies what `checkpoint` says of the WAL
/// into the main file; answers whether that emptied it (every frame
/// copied, so the next write starts the WAL again). A checkpoint that
/// fails (no room to grow the main file) is logged and left for later:
/// the `fsync` still makes the commits durable.
pub(crate) fn sync(conn: &Connection, wal: &Path, checkpoint: Checkpoint) -> Result<bool> {
    let mut emptied = false;
    let steps: &[&str] = match checkpoint {
        Checkpoint::Skip => &[],
        Checkpoint::Passive => &["PRAGMA wal_checkpoint(PASSIVE)"],
        // The passive step copies the frames even when the truncating one
        // cannot get past the writer in time: the WAL is then reused
        // from its start, and only its space is not given back yet.
        Checkpoint::Truncate => &[
            "PRAGMA wal_checkpoint(PASSIVE)",
            "PRAGMA wal_checkpoint(TRUNCATE)",
        ],
    };
    for sql in steps {
        // Busy (a reader or another checkpoint in the way) is an answer
        // row, not an error: (busy, frames in the WAL, frames copied).
        let answer = conn.prepare_cached(sql).and_then(|mut statement| {
            statement.query_row([], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, i64>(1)?,
                    row.get::<_, i64>(2)?,
                ))
            })
        });
        match answer {
            Ok((busy, frames, copied)) => emptied |= busy == 0 && frames == copied,
            Err(err) => log::warn!("Could not fold the WAL into the database yet: {err}"),
        }
    }
    match std::fs::File::open(wal).and_then(|file| file.sync_data()) {
        Ok(()) => Ok(emptied),
        // No WAL: the last connection of another handle checkpointed it
        // into the file and removed it.
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(true),
        Err(err) => Err(DatastoreError::Io(err)),
    }
}

/// Whether a WAL of `wal` bytes should be checkpointed now, with `free`
/// bytes left on its disk (`None`: unknown): over [`WAL_LIMIT`], or over
/// a quarter of the free space (a checkpoint needs about the WAL's size
/// free), ignoring WALs under a megabyte.
pub(crate) fn wal_too_large(wal: u64, free: Option<u64>) -> bool {
    wal > WAL_LIMIT || space_is_low(wal, free)
}

/// Whether a WAL of `wal` bytes takes over a quarter of the `free` bytes
/// left (ignoring WALs under a megabyte): its checkpoints then also
/// truncate it, to give its space back.
pub(crate) fn space_is_low(wal: u64, free: Option<u64>) -> bool {
    wal > 1 << 20 && free.is_some_and(|free| wal > free / 4)
}

/// The WAL's size and the free space of its disk.
fn measure(wal: &Path) -> (u64, Option<u64>) {
    let size = std::fs::metadata(wal).map_or(0, |meta| meta.len());
    (size, free_space(wal))
}

/// Bytes an unprivileged writer may still use on the disk holding `path`.
#[cfg(unix)]
fn free_space(path: &Path) -> Option<u64> {
    let folder = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())?;
    let stats = rustix::fs::statvfs(folder).ok()?;
    Some(stats.f_bavail.saturating_mul(stats.f_frsize))
}

#[cfg(not(unix))]
fn free_space(_path: &Path) -> Option<u64> {
    None
}

/// What the writer tells the WAL syncer.
#[derive(Debug, Default)]
struct Schedule {
    /// The first commit since the last sync began.
    first_unsynced: Option<Instant>,
    last_commit: Option<Instant>,
    /// After a failed sync, the next try waits until then.
    retry_at: Option<Instant>,
    /// When the last checkpoint was made (or the WAL syncer started).
    last_checkpoint: Option<Instant>,
    /// When the WAL's size was last looked at.
    last_size_check: Option<Instant>,
    /// A checkpoint wanted then, commits or not: the WAL is too large, or
    /// the disk is full.
    checkpoint_at: Option<Instant>,
    /// A commit failed for lack of space and the WAL has not been emptied
    /// since.
    disk_full: bool,
    /// At the last look, the WAL took much of the free space left.
    space_low: bool,
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

    /// When the WAL syncer must wake next: a sync or a wanted checkpoint.
    fn wake_at(&self) -> Option<Instant> {
        [self.due(), self.checkpoint_at].into_iter().flatten().min()
    }

    /// Whether a commit at `now` should look at the WAL's size.
    fn size_due(&self, now: Instant) -> bool {
        self.last_size_check
            .is_none_or(|last| now >= last + SIZE_CHECK)
    }

    /// Takes in a WAL of `size` bytes with `free` bytes left, looked at
    /// `now`; whether that wants a checkpoint not wanted before.
    fn measured(&mut self, now: Instant, size: u64, free: Option<u64>) -> bool {
        self.space_low = space_is_low(size, free);
        let wanted = wal_too_large(size, free) && self.checkpoint_at.is_none();
        if wanted {
            self.checkpoint_at = Some(now);
        }
        wanted
    }

    /// How much a sync at `now` should checkpoint: everything while the
    /// disk is full; what it can when a checkpoint is wanted, the writer
    /// is idle, or the last checkpoint is long ago; else nothing.
    fn checkpoint(&self, now: Instant) -> Checkpoint {
        if self.disk_full {
            return Checkpoint::Truncate;
        }
        let wanted = self.checkpoint_at.is_some_and(|at| now >= at);
        if wanted && self.space_low {
            return Checkpoint::Truncate;
        }
        let idle = self.last_commit.is_none_or(|last| now >= last + IDLE_SYNC);
        let overdue = self
            .last_checkpoint
            .is_none_or(|last| now >= last + CHECKPOINT_INTERVAL);
        if wanted || idle || overdue {
            Checkpoint::Passive
        } else {
            Checkpoint::Skip
        }
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

/// The writer's handle to the WAL syncer thread; dropping it stops the thread
/// (without a last sync: the writer makes its own on close).
#[derive(Debug)]
pub(crate) struct WalSyncer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    wal: PathBuf,
}

impl WalSyncer {
    /// Starts the WAL syncer on a read-write connection to the database whose
    /// WAL file is `wal`.
    pub(crate) fn start(conn: Connection, wal: PathBuf) -> Result<WalSyncer> {
        let shared = Arc::new(Shared::default());
        shared.schedule().last_checkpoint = Some(Instant::now());
        let thread = std::thread::Builder::new()
            .name("aw-datastore-wal-sync".to_string())
            .spawn({
                let shared = Arc::clone(&shared);
                let wal = wal.clone();
                move || run(&conn, &wal, &shared)
            })
            .map_err(DatastoreError::Io)?;
        Ok(WalSyncer {
            shared,
            thread: Some(thread),
            wal,
        })
    }

    /// A commit happened; it will be synced on schedule. Called by the
    /// writer, which looks at the WAL's size here at most every
    /// [`SIZE_CHECK`].
    pub(crate) fn committed(&self) {
        let now = Instant::now();
        let mut schedule = self.shared.schedule();
        schedule.last_commit = Some(now);
        // Only an idle WAL syncer needs waking: one already waiting for a
        // due time finds the later `last_commit` when it wakes.
        let mut wake = schedule.first_unsynced.is_none();
        schedule.first_unsynced.get_or_insert(now);
        if schedule.size_due(now) {
            schedule.last_size_check = Some(now);
            drop(schedule);
            let (size, free) = measure(&self.wal);
            schedule = self.shared.schedule();
            wake |= schedule.measured(now, size, free);
        }
        if wake {
            self.shared.wake.notify_one();
        }
    }

    /// A commit failed because the disk is full: empty the WAL as soon as
    /// space allows (see the module doc).
    pub(crate) fn disk_full(&self) {
        let mut schedule = self.shared.schedule();
        if !schedule.disk_full {
            log::warn!("The disk is full: writes fail until space is freed");
            schedule.disk_full = true;
        }
        schedule.checkpoint_at.get_or_insert_with(Instant::now);
        self.shared.wake.notify_one();
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
            // A panic of the WAL syncer has been reported by the panic hook.
            let _ = thread.join();
        }
    }
}

impl Drop for WalSyncer {
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
        let Some(wake) = schedule.wake_at() else {
            schedule = shared
                .wake
                .wait(schedule)
                .unwrap_or_else(PoisonError::into_inner);
            continue;
        };
        let now = Instant::now();
        if now < wake {
            schedule = shared
                .wake
                .wait_timeout(schedule, wake - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            continue;
        }
        // Commits from here on may miss this sync: they start a new round.
        let first = schedule.first_unsynced.take();
        schedule.retry_at = None;
        let checkpoint = schedule.checkpoint(now);
        drop(schedule);
        let truncating = checkpoint == Checkpoint::Truncate;
        if truncating {
            // Waiting for readers holds the writer back: briefly only.
            let _ = conn.busy_timeout(RECOVERY_RETRY / 2);
        }
        let result = sync(conn, wal, checkpoint);
        if truncating {
            let _ = conn.busy_timeout(crate::schema::SYNCER_BUSY_TIMEOUT);
        }
        let (size, free) = measure(wal);
        schedule = shared.schedule();
        schedule.last_size_check = Some(now);
        schedule.space_low = space_is_low(size, free);
        match result {
            Ok(emptied) => {
                if checkpoint != Checkpoint::Skip {
                    schedule.last_checkpoint = Some(now);
                }
                if emptied && checkpoint != Checkpoint::Skip {
                    schedule.checkpoint_at = None;
                    if schedule.disk_full && checkpoint == Checkpoint::Truncate {
                        schedule.disk_full = false;
                        log::info!("The WAL is folded into the database: writes can resume");
                    }
                } else if schedule.disk_full {
                    schedule.checkpoint_at = Some(Instant::now() + RECOVERY_RETRY);
                } else if wal_too_large(size, free) {
                    schedule.checkpoint_at = Some(Instant::now() + CHECKPOINT_RETRY);
                } else {
                    schedule.checkpoint_at = None;
                }
            }
            Err(err) => {
                log::error!("Syncing the database failed, retrying: {err}");
                // `first` is older than any commit made during the sync.
                schedule.first_unsynced = first;
                schedule.retry_at = Some(Instant::now() + IDLE_SYNC);
                if schedule.disk_full {
                    schedule.checkpoint_at = Some(Instant::now() + RECOVERY_RETRY);
                }
            }
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
        assert_eq!(schedule.checkpoint(start + IDLE_SYNC / 2), Checkpoint::Skip);
        assert_eq!(schedule.checkpoint(start + IDLE_SYNC), Checkpoint::Passive);
        let busy = Schedule {
            last_commit: Some(start + CHECKPOINT_INTERVAL),
            ..schedule
        };
        assert_eq!(
            busy.checkpoint(start + CHECKPOINT_INTERVAL / 2),
            Checkpoint::Skip
        );
        assert_eq!(
            busy.checkpoint(start + CHECKPOINT_INTERVAL),
            Checkpoint::Passive
        );
        // A wanted checkpoint does not wait for either.
        let wanted = Schedule {
            checkpoint_at: Some(start + IDLE_SYNC / 4),
            ..busy
        };
        assert_eq!(
            wanted.checkpoint(start + IDLE_SYNC / 2),
            Checkpoint::Passive
        );
        // With the disk nearly full, a wanted checkpoint also truncates.
        let low = Schedule {
            space_low: true,
            ..wanted
        };
        assert_eq!(low.checkpoint(start + IDLE_SYNC / 2), Checkpoint::Truncate);
        assert_eq!(low.checkpoint(start + IDLE_SYNC / 8), Checkpoint::Skip);
        // A full disk empties the WAL whatever else holds.
        let full = Schedule {
            disk_full: true,
            ..busy
        };
        assert_eq!(full.checkpoint(start), Checkpoint::Truncate);
    }

    #[test]
    fn the_wal_syncer_wakes_only_for_a_sync_or_a_wanted_checkpoint() {
        let start = Instant::now();
        let mut schedule = Schedule {
            first_unsynced: Some(start),
            last_commit: Some(start + MAX_UNSYNCED),
            last_size_check: Some(start),
            ..Schedule::default()
        };
        assert_eq!(schedule.wake_at(), Some(start + MAX_UNSYNCED));
        schedule.checkpoint_at = Some(start + SIZE_CHECK / 2);
        assert_eq!(schedule.wake_at(), Some(start + SIZE_CHECK / 2));
        // Nothing unsynced and nothing wanted: sleep until a commit.
        let idle = Schedule::default();
        assert_eq!(idle.wake_at(), None);
    }

    #[test]
    fn commits_look_at_the_size_at_most_every_size_check() {
        let start = Instant::now();
        let mut schedule = Schedule::default();
        assert!(schedule.size_due(start), "the first commit looks");
        schedule.last_size_check = Some(start);
        assert!(!schedule.size_due(start + SIZE_CHECK / 2));
        assert!(schedule.size_due(start + SIZE_CHECK));
        // A small WAL on a roomy disk wants nothing.
        assert!(!schedule.measured(start, 4 << 20, Some(1 << 40)));
        assert!(!schedule.space_low);
        assert_eq!(schedule.checkpoint_at, None);
        // One taking much of what is left wants a truncating checkpoint,
        // once: a later look while it is wanted wakes nobody again.
        assert!(schedule.measured(start, 4 << 20, Some(8 << 20)));
        assert!(schedule.space_low);
        assert_eq!(schedule.checkpoint_at, Some(start));
        assert_eq!(schedule.checkpoint(start), Checkpoint::Truncate);
        assert!(!schedule.measured(start + SIZE_CHECK, 4 << 20, Some(8 << 20)));
    }

    #[test]
    fn a_wal_is_too_large_over_the_limit_or_a_quarter_of_the_free_space() {
        assert!(
            !wal_too_large(1 << 20, Some(1 << 20)),
            "small WALs are left alone"
        );
        assert!(wal_too_large(WAL_LIMIT + 1, None));
        assert!(wal_too_large(WAL_LIMIT + 1, Some(u64::MAX)));
        assert!(!wal_too_large(8 << 20, Some(1 << 30)));
        assert!(wal_too_large(8 << 20, Some(30 << 20)));
        assert!(!wal_too_large(8 << 20, None));
    }
}
