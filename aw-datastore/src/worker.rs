//! The writer thread: owns the read-write connection, applies writes in
//! batches, and decides when data is committed and when it is synced.
//!
//! # Durability
//!
//! Writes are applied inside one transaction per batch. A batch ends when
//! the command queue is empty or after [`MAX_BATCH`] commands; it is then
//! committed and only *then* is every writer of the batch answered. The
//! commit runs with `synchronous=NORMAL` in WAL mode: SQLite `write()`s the
//! WAL frames without `fsync`, so an acknowledged write is in the OS page
//! cache and survives the process being killed (SIGKILL, panic, OOM), which
//! is the common failure of a desktop service. Surviving power loss needs
//! the frames on disk: the WAL syncer thread (`wal_sync.rs`) syncs (a passive
//! checkpoint, then an `fsync` of the WAL file) after
//! [`IDLE_SYNC`](crate::wal_sync::IDLE_SYNC) without commits and at the
//! latest [`MAX_UNSYNCED`](crate::wal_sync::MAX_UNSYNCED) after the first
//! unsynced commit even under constant load, while this thread keeps
//! committing; this thread syncs itself on `force_commit`, on `close` and
//! when the last handle is dropped. So at most 15 s of acknowledged writes
//! are exposed to a power cut, while a heartbeat costs a `write()`, never
//! an `fsync`. SQLite's own automatic checkpoints are off (`schema.rs`) so
//! no commit pays for one. (The reference
//! answers before committing and commits every 15 s or 100 events, so a
//! crash loses acknowledged writes; holding replies until the commit is
//! what makes an acknowledgement mean "stored".)
//!
//! A commit that fails (disk full, I/O error) is rolled back and every
//! writer of the batch gets the error; the worker's memory (remembered last
//! heartbeats) is dropped since it may describe rolled-back rows, and the
//! next command starts a fresh batch, so writes work again once the cause
//! is gone. Each command after the first of a batch runs in a savepoint,
//! and the first in the batch's transaction, which its failure rolls back,
//! so a command that fails alone (unknown bucket, bad input) changes
//! nothing and does not fail its batch;
//! if SQLite itself rolled the transaction back on a statement error
//! (`SQLITE_FULL`, `SQLITE_IOERR`), the whole batch is failed the same way.
//!
//! # Reads
//!
//! Databases are read by reader threads on their own read-only
//! connections (see `reader.rs`): WAL lets them read committed data while
//! this thread writes, so a year-long read does not delay heartbeats. A
//! read-only store has no reader threads: this thread serves the reads
//! its callers' pooled connections do not.
//!
//! While the queue is empty the worker also scans, some thousands of index
//! entries at a time, the longest event duration of buckets that existed
//! at open (see `bounds.rs`); until then reads of such a bucket use an
//! unbounded scan. Once a bucket's scan is done it counts the bucket
//! (`stats.rs`). Neither happens after a clean close: `close` stores both
//! and the next open takes them back.
//!
//! # Close
//!
//! `close` (and the drop of the last handle) commits, stores the bucket
//! facts in one last transaction, syncs, and then runs a `TRUNCATE`
//! checkpoint, which empties the WAL: otherwise the next open would read
//! the whole WAL back (SQLite's recovery, long after a large import:
//! `benches/runs/2026-11-21-bucket-facts.md`). Only when that succeeded does it write the
//! file's fingerprint into the lock file, which lets the next open trust
//! the stored facts; it then waits until the file clock has ticked past
//! the file's modification time (a tick of the file clock), so a program writing the
//! file right after cannot leave the fingerprint as it was.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration as StdDuration, Instant};

use aw_models::{Duration, Event};
use crossbeam_channel::TryRecvError;
use rusqlite::{ffi, Connection};

use crate::bounds::{self, DurationBounds, Scan};
use crate::commands::{ReadCommand, Reply};
use crate::heartbeat::LastEvents;
use crate::lock::{self, FileLock};
use crate::memory::{RulesInForce, WriterMemory};
use crate::privacy::{PrivacyRules, PRIVACY_FILTERS_KEY};
use crate::queries;
use crate::queue::Queue;
use crate::reader;
use crate::salvage::{self, DamageSeen};
use crate::stats::{self, StatsWriter, Stored};
use crate::touched::Touches;
use crate::wal_sync::{self, WalSyncer};
use crate::writer_stats::CommitTimes;
use crate::writes;
use crate::{DatastoreError, Result};

/// Most commands in one transaction, so replies are not held for long
/// under a flood of writes.
pub(crate) const MAX_BATCH: usize = 500;
/// How long the closing checkpoint waits for a reader to finish.
const CLOSE_CHECKPOINT_WAIT: StdDuration = StdDuration::from_millis(500);

/// Everything the writer thread receives. Writes other than heartbeats
/// are [`Job`]s; the other messages are what the batcher itself acts on.
#[derive(Debug)]
pub(crate) enum WorkerMessage {
    /// A heartbeat: a message of its own, since it is most of the traffic
    /// and needs no allocation beyond its event.
    Heartbeat {
        bucket_id: String,
        heartbeat: Event,
        pulsetime: Duration,
        reply: Reply<Event>,
    },
    /// Any other change, run inside the open batch.
    Job(Job),
    /// Only for read-only stores, which have no reader threads.
    Read(ReadCommand),
    /// Commit and fsync what was acknowledged so far.
    ForceCommit { reply: Reply<()> },
    /// Commit, fsync, stop the readers and the worker.
    Close { reply: Reply<()> },
    /// Commits, then rebuilds the file with `VACUUM` (turning incremental
    /// vacuum on), outside any transaction.
    Vacuum { reply: Reply<()> },
    /// Answers at once; tells `health` the worker is alive.
    Ping { reply: Reply<()> },
    /// Test hook: make the next `count` commits fail as an I/O error would.
    #[cfg(test)]
    FailCommits { count: u32, reply: Reply<()> },
    /// Test hook: the worker panics, as a bug would make it.
    #[cfg(test)]
    Panic,
    /// Test hook: cap the file at `pages` pages (`PRAGMA max_page_count`),
    /// so growing it fails with `SQLITE_FULL` as a full disk would.
    #[cfg(test)]
    LimitPages { pages: i64, reply: Reply<i64> },
    /// Test hook: whether readers know a bucket's facts (`stats.rs`).
    #[cfg(test)]
    StatsKnown {
        bucket_id: String,
        reply: Reply<bool>,
    },
}

/// A write operation for the writer: a function of the connection and
/// the writer's memory (`memory.rs`) with its typed reply, so a feature
/// adds a write as one function in its own module (see
/// `Datastore::write`), not as a message, a match arm and a wrapper here.
///
/// The writer runs it in a savepoint of the open batch, so a job that
/// fails changes nothing (and does not fail its batch), and answers it
/// only after the batch commits: every job has the durability of any
/// write. A job must leave the memory true to the rows (`memory.rs`).
pub(crate) struct Job(Box<dyn FnOnce(&mut Worker) + Send>);

impl Job {
    pub(crate) fn new<T: Send + 'static>(
        work: impl FnOnce(&Connection, &mut WriterMemory<'_>) -> Result<T> + Send + 'static,
        reply: Reply<T>,
    ) -> Job {
        Job(Box::new(move |worker: &mut Worker| {
            let result = worker.in_savepoint(work);
            worker.hold(reply, result);
        }))
    }
}

impl std::fmt::Debug for Job {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Job")
    }
}

/// The file a worker writes and the lock it holds on it.
pub(crate) struct FileParts {
    pub(crate) path: PathBuf,
    pub(crate) lock: FileLock,
}

/// A reply held until its batch commits.
trait Held: Send {
    /// Sends the value, or the commit failure.
    fn deliver(self: Box<Self>, failure: Option<&rusqlite::Error>);
}

struct HeldReply<T> {
    reply: Reply<T>,
    value: T,
}

impl<T: Send> Held for HeldReply<T> {
    fn deliver(self: Box<Self>, failure: Option<&rusqlite::Error>) {
        let answer = match failure {
            None => Ok(self.value),
            Some(err) => Err(DatastoreError::Storage(duplicate(err))),
        };
        // A caller that stopped waiting is no concern of the worker.
        self.reply.send(answer);
    }
}

/// One copy of a commit failure for each writer of the batch
/// (`rusqlite::Error` is not `Clone`).
fn duplicate(err: &rusqlite::Error) -> rusqlite::Error {
    match err {
        rusqlite::Error::SqliteFailure(code, message) => {
            rusqlite::Error::SqliteFailure(*code, message.clone())
        }
        other => rusqlite::Error::SqliteFailure(
            ffi::Error::new(ffi::SQLITE_ERROR),
            Some(other.to_string()),
        ),
    }
}

/// The error that failed a batch, as a SQLite error for every writer.
fn as_storage(err: &DatastoreError) -> rusqlite::Error {
    match err {
        DatastoreError::Storage(err) => duplicate(err),
        other => rusqlite::Error::SqliteFailure(
            ffi::Error::new(ffi::SQLITE_ABORT),
            Some(format!("batch rolled back: {other}")),
        ),
    }
}

/// Runs when the worker stops, even by panic: marks the datastore closed,
/// then drops every queued command so its caller sees `Closed` at once.
/// (A crossbeam channel keeps queued messages, and so their reply senders,
/// alive while any sender exists, even after the receiver is gone; callers
/// also poll the closed flag for a message queued after this drain.)
struct ExitGuard {
    closed: Arc<AtomicBool>,
    queue: Queue<WorkerMessage>,
}

impl Drop for ExitGuard {
    fn drop(&mut self) {
        self.closed.store(true, Ordering::SeqCst);
        while self.queue.receiver().try_recv().is_ok() {}
    }
}

/// What the loop does after a message.
#[derive(Debug, PartialEq, Eq)]
enum Flow {
    Continue,
    Stop,
}

/// The writer thread's state.
pub(crate) struct Worker {
    /// Declared before `conn`, so it stops first even when the worker dies.
    wal_syncer: Option<WalSyncer>,
    conn: Connection,
    bounds: Arc<DurationBounds>,
    stats: StatsWriter,
    file: Option<FileParts>,
    last_events: LastEvents,
    held: Vec<Box<dyn Held>>,
    in_batch: bool,
    batch_len: usize,
    wal_path: Option<PathBuf>,
    unscanned: Vec<i64>,
    scanning: Option<Scan>,
    closed: Arc<AtomicBool>,
    /// The privacy rules in force (`privacy.rs`), replaced whole by the
    /// job that writes the `privacy_filters` setting.
    privacy: RulesInForce,
    /// Damage met in the file (`salvage.rs`): then nothing more is written.
    damage: Arc<DamageSeen>,
    /// How long commits take, for monitoring (`writer_stats.rs`).
    commit_times: Arc<CommitTimes>,
    /// What each batch changed, for the watcher (`touched.rs`); `None`
    /// on a read-only store.
    touches: Option<Arc<Touches>>,
    #[cfg(test)]
    failing_commits: u32,
}

impl Worker {
    /// A worker over a migrated, configured connection; `stored` are the
    /// facts of the last clean close, if the file is provably unchanged. A
    /// served file has its WAL file and a WAL syncer, a read-only store
    /// neither.
    #[allow(
        clippy::too_many_arguments,
        reason = "the writer's parts, each shared with a different side of the datastore"
    )]
    pub(crate) fn new(
        conn: Connection,
        bounds: Arc<DurationBounds>,
        stats: StatsWriter,
        stored: Option<Stored>,
        file: Option<FileParts>,
        durability: Option<(PathBuf, WalSyncer)>,
        closed: Arc<AtomicBool>,
        damage: Arc<DamageSeen>,
        commit_times: Arc<CommitTimes>,
        touches: Option<Arc<Touches>>,
    ) -> Result<Worker> {
        if let Some(touches) = &touches {
            touches.install(&conn)?;
        }
        let unscanned = match stored {
            Some(stored) => {
                bounds.load(&stored.longest);
                Vec::new()
            }
            None => conn
                .prepare_cached("SELECT id FROM buckets ORDER BY id DESC")?
                .query_map([], |row| row.get(0))?
                .collect::<rusqlite::Result<Vec<i64>>>()?,
        };
        let (wal_path, wal_syncer) = durability.unzip();
        let privacy = RulesInForce::new(load_privacy_rules(&conn));
        Ok(Worker {
            wal_syncer,
            conn,
            bounds,
            stats,
            file,
            last_events: LastEvents::default(),
            held: Vec::new(),
            in_batch: false,
            batch_len: 0,
            wal_path,
            unscanned,
            scanning: None,
            closed,
            privacy,
            damage,
            commit_times,
            touches,
            #[cfg(test)]
            failing_commits: 0,
        })
    }

    /// Serves until closed or until every handle is dropped.
    pub(crate) fn run(mut self, queue: Queue<WorkerMessage>) {
        let guard = ExitGuard {
            closed: Arc::clone(&self.closed),
            queue,
        };
        self.serve(&guard.queue);
    }

    fn serve(&mut self, queue: &Queue<WorkerMessage>) {
        loop {
            let message = if self.scanning.is_some() || !self.unscanned.is_empty() {
                match queue.receiver().try_recv() {
                    Ok(message) => message,
                    Err(TryRecvError::Empty) => {
                        self.scan_step();
                        continue;
                    }
                    Err(TryRecvError::Disconnected) => break,
                }
            } else {
                // Sleeps until a sender wakes it (`queue.rs`).
                match queue.recv() {
                    Ok(message) => message,
                    Err(_) => break,
                }
            };
            if self.handle(message) == Flow::Stop {
                return;
            }
            while self.in_batch && self.batch_len < MAX_BATCH {
                match queue.receiver().try_recv() {
                    Ok(message) => {
                        if self.handle(message) == Flow::Stop {
                            return;
                        }
                    }
                    Err(_) => break,
                }
            }
            let _ = self.commit();
        }
        // Every handle is gone: keep what was acknowledged.
        if let Err(err) = self.finish() {
            log::error!("Closing the database failed: {err}");
        }
    }

    /// The end of a clean run: commits and syncs, then leaves the file
    /// ready for a fast next open (see Close above).
    ///
    /// A last batch that cannot be committed (a full disk) fails its
    /// writers, who were never acknowledged; what was acknowledged is in
    /// the WAL, and the sync below is what keeps it. So only a failed
    /// sync fails the close.
    fn finish(&mut self) -> Result<()> {
        let committed = self.commit();
        if let Err(err) = &committed {
            log::warn!("The last writes could not be stored, their writers were told: {err}");
        }
        let stored = committed.is_ok() && self.store_stats();
        if let Some(wal_syncer) = &mut self.wal_syncer {
            wal_syncer.stop();
        }
        self.sync_now()?;
        if committed.is_err() {
            return Ok(());
        }
        if self.file.is_none() {
            return Ok(());
        }
        let _ = self.conn.busy_timeout(CLOSE_CHECKPOINT_WAIT);
        let busy: i64 = match self
            .conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| row.get(0))
        {
            Ok(busy) => busy,
            Err(err) => {
                log::warn!("Could not empty the WAL at close: {err}");
                1
            }
        };
        if busy != 0 {
            log::info!("A reader kept the WAL from being emptied at close");
            return Ok(());
        }
        if !stored {
            return Ok(());
        }
        if self.damage.seen().is_some() {
            log::warn!(
                "The database is damaged: it is not vouched for, so the next start checks it"
            );
            return Ok(());
        }
        if let Some(file) = &mut self.file {
            let result = lock::fingerprint(&file.path).and_then(|print| match print {
                Some(print) => {
                    file.lock.put_fingerprint(&print)?;
                    lock::outlast_modification_time(&file.path)
                }
                None => Ok(()),
            });
            if let Err(err) = result {
                log::warn!("Could not record the database fingerprint: {err}");
            }
        }
        Ok(())
    }

    /// Stores the bucket facts in a transaction of their own; whether they
    /// were stored (all known, and committed).
    fn store_stats(&mut self) -> bool {
        if self.file.is_none() || !self.conn.is_autocommit() {
            return false;
        }
        let result = execute(&self.conn, "BEGIN IMMEDIATE")
            .and_then(|()| Ok(stats::store(&self.conn, self.stats.all(), &self.bounds)?))
            .and_then(|stored| execute(&self.conn, "COMMIT").map(|()| stored));
        match result {
            Ok(stored) => stored,
            Err(err) => {
                log::warn!("Could not store the bucket statistics: {err}");
                if !self.conn.is_autocommit() {
                    let _ = execute(&self.conn, "ROLLBACK");
                }
                false
            }
        }
    }

    fn handle(&mut self, message: WorkerMessage) -> Flow {
        match message {
            WorkerMessage::Heartbeat {
                bucket_id,
                heartbeat,
                pulsetime,
                reply,
            } => {
                let result = self.in_savepoint(|conn, memory| {
                    writes::heartbeat(conn, memory, &bucket_id, heartbeat, pulsetime)
                });
                self.hold(reply, result);
            }
            WorkerMessage::Job(job) => (job.0)(self),
            WorkerMessage::Read(command) => {
                let _ = self.commit();
                reader::serve(
                    &self.conn,
                    &self.bounds,
                    self.stats.shared(),
                    &self.damage,
                    command,
                    false,
                );
            }
            WorkerMessage::ForceCommit { reply } => {
                let result = self.commit().and_then(|()| self.sync_now());
                reply.send(result);
            }
            WorkerMessage::Close { reply } => {
                let result = self.finish();
                self.closed.store(true, Ordering::SeqCst);
                reply.send(result);
                return Flow::Stop;
            }
            WorkerMessage::Ping { reply } => {
                reply.send(Ok(()));
            }
            WorkerMessage::Vacuum { reply } => {
                let result = self.commit().and_then(|()| self.vacuum());
                reply.send(result);
            }
            #[cfg(test)]
            WorkerMessage::FailCommits { count, reply } => {
                self.failing_commits = count;
                reply.send(Ok(()));
            }
            #[cfg(test)]
            WorkerMessage::Panic => panic!("worker panic requested by a test"),
            #[cfg(test)]
            WorkerMessage::StatsKnown { bucket_id, reply } => {
                let result = crate::queries::bucket_row(&self.conn, &bucket_id)
                    .map(|row_id| self.stats.shared().get(row_id).is_some());
                reply.send(result);
            }
            #[cfg(test)]
            WorkerMessage::LimitPages { pages, reply } => {
                let result = self
                    .conn
                    .query_row(&format!("PRAGMA max_page_count = {pages}"), [], |row| {
                        row.get(0)
                    })
                    .map_err(DatastoreError::from);
                reply.send(result);
            }
        }
        Flow::Continue
    }

    /// Runs one command in a savepoint of the batch transaction.
    fn in_savepoint<T>(
        &mut self,
        command: impl FnOnce(&Connection, &mut WriterMemory<'_>) -> Result<T>,
    ) -> Result<T> {
        // The command that opens a batch needs no savepoint: the whole
        // transaction is its own, and its failure rolls that back. (A
        // back-to-back heartbeat is usually alone in its batch.)
        // Nothing more is written to a file found damaged.
        if let Some(refusal) = self.damage.refusal() {
            return Err(refusal);
        }
        let opens_batch = !self.in_batch;
        if opens_batch {
            execute(&self.conn, "BEGIN IMMEDIATE")?;
            self.in_batch = true;
        } else {
            execute(&self.conn, "SAVEPOINT command")?;
        }
        self.batch_len += 1;
        self.stats.begin_command();
        let mut memory = WriterMemory {
            last_events: &mut self.last_events,
            bounds: &self.bounds,
            stats: &mut self.stats,
            privacy: &mut self.privacy,
            touches: self.touches.as_deref(),
        };
        let result = command(&self.conn, &mut memory).map_err(|error| self.damage.check(error));
        if self.conn.is_autocommit() {
            // SQLite rolled the whole transaction back (SQLITE_FULL,
            // SQLITE_IOERR...): earlier commands of the batch are gone too.
            let failure = match &result {
                Ok(_) => rusqlite::Error::SqliteFailure(
                    ffi::Error::new(ffi::SQLITE_ABORT),
                    Some("transaction rolled back".to_string()),
                ),
                Err(err) => as_storage(err),
            };
            self.fail_batch(&failure);
            return result.and(Err(DatastoreError::Storage(failure)));
        }
        match &result {
            Ok(_) => self.privacy.job_done(),
            Err(_) => self.privacy.job_failed(),
        }
        match (&result, opens_batch) {
            (Ok(_), true) => {}
            (Ok(_), false) => execute(&self.conn, "RELEASE command")?,
            (Err(_), true) => {
                self.stats.undo_command();
                self.in_batch = false;
                self.batch_len = 0;
                execute(&self.conn, "ROLLBACK")?;
            }
            (Err(_), false) => {
                self.stats.undo_command();
                execute(&self.conn, "ROLLBACK TO command")?;
                execute(&self.conn, "RELEASE command")?;
            }
        }
        result
    }

    /// Holds a success until the commit; sends a failure at once (nothing
    /// of it was stored).
    fn hold<T: Send + 'static>(&mut self, reply: Reply<T>, result: Result<T>) {
        match result {
            Ok(value) => self.held.push(Box::new(HeldReply { reply, value })),
            Err(err) => {
                reply.send(Err(err));
            }
        }
    }

    /// Commits the open batch and answers its writers.
    fn commit(&mut self) -> Result<()> {
        if !self.in_batch {
            return Ok(());
        }
        self.in_batch = false;
        self.batch_len = 0;
        let started = Instant::now();
        let committed = self.try_commit();
        self.commit_times.record(started.elapsed());
        match committed {
            Ok(()) => {
                self.privacy.batch_committed();
                // Readers see the batch's facts, and a watcher hears what
                // it changed, before its writers hear back.
                self.stats.publish();
                if let Some(touches) = &self.touches {
                    touches.committed();
                }
                if let Some(wal_syncer) = &self.wal_syncer {
                    wal_syncer.committed();
                }
                for held in self.held.drain(..) {
                    held.deliver(None);
                }
                Ok(())
            }
            Err(err) => {
                log::error!("Commit failed, batch rolled back: {err}");
                if salvage::is_damage(&err) {
                    self.damage
                        .check(DatastoreError::Storage(rusqlite::Error::SqliteFailure(
                            ffi::Error::new(ffi::SQLITE_CORRUPT),
                            Some(err.to_string()),
                        )));
                }
                if err.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull) {
                    if let Some(wal_syncer) = &self.wal_syncer {
                        wal_syncer.disk_full();
                    }
                }
                if !self.conn.is_autocommit() {
                    if let Err(rollback) = execute(&self.conn, "ROLLBACK") {
                        log::error!("Rollback after failed commit failed: {rollback}");
                    }
                }
                self.fail_batch(&err);
                Err(DatastoreError::Storage(err))
            }
        }
    }

    fn try_commit(&mut self) -> rusqlite::Result<()> {
        #[cfg(test)]
        if self.failing_commits > 0 {
            self.failing_commits -= 1;
            return Err(rusqlite::Error::SqliteFailure(
                ffi::Error::new(ffi::SQLITE_IOERR),
                Some("injected commit failure".to_string()),
            ));
        }
        self.conn.prepare_cached("COMMIT")?.execute([])?;
        Ok(())
    }

    /// Answers every held writer with `failure` and forgets what the
    /// batch may have taught the memory.
    fn fail_batch(&mut self, failure: &rusqlite::Error) {
        self.in_batch = false;
        self.batch_len = 0;
        self.last_events.clear();
        self.stats.discard();
        self.privacy.batch_failed();
        if let Some(touches) = &self.touches {
            touches.failed();
        }
        for held in self.held.drain(..) {
            held.deliver(Some(failure));
        }
    }

    /// Rebuilds the file, with incremental vacuum on from then on. Runs
    /// between batches: `VACUUM` cannot run inside a transaction. It
    /// writes a copy of the database (a temporary file, then the WAL), so
    /// it needs free space about the size of the file.
    fn vacuum(&mut self) -> Result<()> {
        self.conn
            .execute_batch("PRAGMA auto_vacuum = INCREMENTAL; VACUUM;")?;
        // Forget what the remembered events may say about rows' pages;
        // ids and contents are unchanged, so nothing else is stale.
        self.last_events.clear();
        self.sync_now()?;
        // In WAL mode the rebuilt pages are in the WAL, as large as the
        // file was: copy them into the file and empty the WAL, so the
        // space is back now, not at the next quiet checkpoint. A reader
        // in the way only delays that.
        if self.file.is_some() {
            let busy: i64 = self
                .conn
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| row.get(0))?;
            if busy != 0 {
                log::info!("A reader kept the WAL from being emptied after VACUUM");
            }
        }
        Ok(())
    }

    /// Gets every committed write onto the disk now.
    fn sync_now(&mut self) -> Result<()> {
        let Some(wal_path) = &self.wal_path else {
            return Ok(());
        };
        wal_sync::sync(&self.conn, wal_path, wal_sync::Checkpoint::Passive)?;
        if let Some(wal_syncer) = &self.wal_syncer {
            wal_syncer.synced();
        }
        Ok(())
    }

    /// One step of learning the longest durations of buckets that existed
    /// at open (see `bounds.rs`).
    fn scan_step(&mut self) {
        let mut scan = match self.scanning.take() {
            Some(scan) => scan,
            None => match self.unscanned.pop() {
                Some(row_id) => self.bounds.begin_scan(row_id),
                None => return,
            },
        };
        match bounds::scan_step(&self.conn, &mut scan) {
            Ok(true) => {
                let row_id = scan.row_id();
                self.bounds.finish_scan(scan);
                self.learn_stats(row_id);
            }
            Ok(false) => self.scanning = Some(scan),
            // Reads of this bucket stay unbounded, which is only slower.
            Err(err) => {
                log::warn!("Could not scan event durations: {err}");
                self.bounds.abandon_scan(scan);
            }
        }
    }

    /// Counts a bucket whose scan just finished. Scans run between batches,
    /// so the committed rows are all there is; a bucket deleted meanwhile
    /// has no bound and stays unknown.
    fn learn_stats(&mut self, row_id: i64) {
        if self.bounds.get(row_id).is_none() || !self.conn.is_autocommit() {
            return;
        }
        match stats::count_bucket(&self.conn, &self.bounds, row_id) {
            Ok(counted) => self.stats.learned(row_id, counted),
            // Counts of this bucket stay SQL counts, which is only slower.
            Err(err) => log::warn!("Could not count bucket events: {err}"),
        }
    }
}

/// The privacy rules stored in the file. A rule that cannot be used (a
/// file written by a server that stores any JSON) is reported and left
/// out; the others apply (`PrivacyRules::compile_stored`).
fn load_privacy_rules(conn: &Connection) -> PrivacyRules {
    let value = match queries::setting(conn, PRIVACY_FILTERS_KEY) {
        Ok(value) => value.unwrap_or_default(),
        Err(err) => {
            log::error!("Could not read the privacy filters: {err}");
            return PrivacyRules::default();
        }
    };
    let (rules, errors) = PrivacyRules::compile_stored(&value);
    for error in errors {
        log::error!(
            "A stored privacy filter is not applied, the others are: {error} \
             (save the rules again to correct it)"
        );
    }
    rules
}

/// Runs a statement without parameters through the statement cache.
fn execute(conn: &Connection, sql: &str) -> Result<()> {
    conn.prepare_cached(sql)?.execute([])?;
    Ok(())
}
