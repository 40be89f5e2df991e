//! Storage of buckets, events and settings in one SQLite file.
//!
//! The file has aw-server-rust's schema (`schema.rs`), so either server
//! opens the other's database. One writer thread owns the read-write
//! connection and applies writes in batched transactions, answering each
//! writer only after its batch committed (`worker.rs` explains the
//! durability this gives), a WAL syncer thread gets commits onto the disk
//! beside it (`wal_sync.rs`), and reads run on read-only connections: on the
//! calling thread with one borrowed from a pool (`local.rs`), or on two
//! reader threads when none is free (`reader.rs`). [`Datastore`] is a cheap
//! handle that sends messages over channels (`commands.rs`, `worker.rs`);
//! it holds no lock. Every write but a heartbeat is a job, a function of
//! the connection and the writer's memory (`memory.rs`) that the writer
//! runs inside its open batch: a feature adds a write in its own module
//! (`Datastore::write`). Range reads cost time in proportion to what they return
//! (`bounds.rs`, `queries.rs`); the heartbeat rule is in `heartbeat.rs`.
//! Counting a whole bucket and the bucket metadata cost no SQL: the
//! writer keeps them, and a clean close stores them for the next open
//! (`stats.rs`).
//!
//! The writer applies the privacy rules of the `privacy_filters` setting
//! (`privacy.rs`) in every write path, and runs the long operations on
//! stored history (range deletes, retention, the rules over history) one
//! chunk per transaction (`cleanup.rs`, sent by `maintenance.rs`).
//!
//! A snapshot (`snapshot.rs`) is a consistent copy taken while serving;
//! [`mod@restore`] puts one back in place of a file nobody serves. After
//! anything but a clean close, opening checks the whole file, and a
//! damaged one is refused ([`DatastoreError::Damaged`]) for
//! [`mod@salvage`] to copy what can still be read into a new file.
//!
//! Replication (folder sync, the `aw-folder-sync` crate) uses only the
//! port [`Replica`] (`replica.rs`): events by id and the newest events
//! going out, the change counter the writer keeps (`changes.rs`), pulled
//! chunks coming in as one job each. Other files of aw-server-rust's
//! schema are read and written with [`mod@format`]'s statements.
//!
//! This crate knows nothing of HTTP or the query language; validation of
//! client input belongs to aw-models (checked again here where cheap).

mod bounds;
mod canonical;
mod changes;
mod cleanup;
mod commands;
mod decode;
mod error;
mod files;
pub mod format;
mod heartbeat;
mod hosts;
mod key;
mod key_value;
mod legacy;
mod local;
mod lock;
mod maintenance;
mod memory;
mod pending;
mod privacy;
mod queries;
mod queue;
mod reader;
mod replica;
pub mod restore;
mod route;
mod rows;
pub mod salvage;
mod schema;
mod shape;
mod snapshot;
mod spans;
mod stats;
mod tokens;
mod touched;
mod user_groups;
mod user_index;
mod wal_sync;
mod worker;
mod writer_stats;
mod writes;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use aw_models::{Bucket, Duration, Event, SettingValue, Timestamp, UpdateBucket};
use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender};
use rusqlite::{Connection, OpenFlags};

use crate::bounds::DurationBounds;
use crate::commands::{ReadCommand, Reply};
use crate::local::LocalReads;
use crate::memory::WriterMemory;
use crate::queue::WriterQueue;
use crate::route::OnCaller;
use crate::stats::{SharedStats, StatsWriter};
use crate::touched::Touches;
use crate::wal_sync::WalSyncer;
use crate::worker::{FileParts, Job, Worker, WorkerMessage};
use crate::writer_stats::CommitTimes;

pub use aw_models::{Expired, ImportSummary, RangeDeletion, RulesOutcome, RulesReport};
pub use error::DatastoreError;
pub use hosts::{BucketRename, Coverage, HostChange, MergeCounts, MergeStep};
pub use key::{DatabaseKey, ENCRYPTION_AVAILABLE};
pub use legacy::{
    LegacyBucket, LegacyChunk, LegacyDatabase, LEGACY_FILE_NAME, LEGACY_TESTING_FILE_NAME,
};
pub use pending::Pending;
pub use privacy::{
    PrivacyRules, RuleError, Verdict, DEFAULT_PATTERN_SIZE_LIMIT, PRIVACY_FILTERS_KEY,
};
pub use replica::{PulledChunk, Replacement, Replica};
pub use route::{Answer, Read};
pub use shape::{Json, Projected, Recipe, Shape, Shared, Whole};
pub use snapshot::{snapshot_file, Snapshot};
pub use tokens::StoredToken;
pub use touched::{Touched, WriteWatcher};
pub use user_groups::{Group, GroupMember, Invitation, Joined};
pub use user_index::{IndexedUser, UserIndex};
pub use writer_stats::{CommitHistogram, WriterStats, COMMIT_BOUNDS_MICROS};
pub use writes::PreparedEvent;

/// Result of every datastore call.
pub type Result<T> = std::result::Result<T, DatastoreError>;

/// Which events `Datastore::events` returns (`docs/API.md` §3.3).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EventQuery {
    /// Keep events ending at or after this (inclusive); clip starts to it.
    pub start: Option<Timestamp>,
    /// Keep events starting at or before this (inclusive); clip ends to it.
    pub end: Option<Timestamp>,
    /// Keep only the newest `limit` events.
    pub limit: Option<usize>,
}

/// Cheap, cloneable handle to the storage worker.
///
/// Every write sends a command to the writer and waits for its own reply.
/// Every read method returns a [`Read`], which the caller waits for
/// (`.wait()`) or awaits; where it runs (the calling thread, a reader
/// thread, the writer) is chosen then (`route.rs`). When the worker
/// has stopped (closed, or died) calls return [`DatastoreError::Closed`]
/// instead of hanging. Dropping the last handle commits, syncs and stops
/// the worker.
#[derive(Debug, Clone)]
pub struct Datastore {
    writer: Arc<WriterQueue<WorkerMessage>>,
    /// `None` for a read-only store, whose reads the writer serves.
    readers: Option<Sender<ReadCommand>>,
    /// Connections for reads on the calling thread (`local.rs`).
    local: Arc<LocalReads>,
    closed: Arc<AtomicBool>,
    /// Damage met while serving (`salvage.rs`).
    damage: Arc<salvage::DamageSeen>,
    /// The writer's commit times (`writer_stats.rs`).
    commit_times: Arc<CommitTimes>,
    /// What each commit changed, for a watcher (`touched.rs`).
    touches: Arc<Touches>,
    /// A scratch store's folder (`open_in_memory`); last, so the writer
    /// has its end of the queue before the folder waits for it.
    _scratch: Option<Arc<Scratch>>,
}

/// The private folder of a scratch store's file: when the last handle
/// drops, it waits for the writer to finish with the file, then is
/// removed.
#[derive(Debug)]
struct Scratch {
    folder: tempfile::TempDir,
    /// Disconnected when the writer thread ends.
    exited: Receiver<()>,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = self.exited.recv();
        log::debug!(
            "Removing the scratch store {}",
            self.folder.path().display()
        );
    }
}

/// Most events a read may return to run on an async caller's thread
/// when awaited (the shape [`Json`]): about a millisecond of work.
pub const SMALL_READ: u64 = 2_000;

/// Commands waiting for the writer before senders block (back-pressure).
const WRITE_QUEUE: usize = 1024;
/// Read commands waiting for a reader.
const READ_QUEUE: usize = 256;
/// How often a waiting caller checks whether the worker has stopped.
const CLOSED_POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// A storage error that says the file is damaged becomes
/// [`DatastoreError::Damaged`], naming the file.
fn damaged(error: DatastoreError, path: &Path) -> DatastoreError {
    match error {
        DatastoreError::Storage(storage) if salvage::is_damage(&storage) => {
            DatastoreError::Damaged {
                path: path.to_path_buf(),
                detail: storage.to_string(),
            }
        }
        other => other,
    }
}

impl Datastore {
    /// Opens (creating and migrating as needed) the database file.
    pub fn open(path: impl AsRef<Path>) -> Result<Datastore> {
        Datastore::open_with_key(path, None)
    }

    /// [`Datastore::open`] for a file encrypted with `key` (created
    /// encrypted when new); `None` is a plain file. See `key.rs`: a key
    /// that does not fit, a key for a plain file, no key for an encrypted
    /// one, or a key in a build without the `sqlcipher` feature fail with
    /// [`DatastoreError::Encryption`] and change nothing.
    pub fn open_with_key(path: impl AsRef<Path>, key: Option<&DatabaseKey>) -> Result<Datastore> {
        Datastore::open_file(path.as_ref(), key, None)
    }

    /// [`Datastore::open_with_key`]; `folder`, if given, is the private
    /// folder the file is in, removed once the writer has closed it.
    fn open_file(
        path: &Path,
        key: Option<&DatabaseKey>,
        folder: Option<tempfile::TempDir>,
    ) -> Result<Datastore> {
        // Before anything is locked, read or created.
        key::usable(key)?;
        // Before SQLite touches the file, so a served file is not even
        // migrated by a second process; the writer thread holds the lock.
        let mut lock = lock::lock(path)?;
        // Also before SQLite, which may change the file (see `stats.rs`).
        let vouched = lock.take_fingerprint()?;
        let unchanged =
            !vouched.is_empty() && lock::fingerprint(path)?.is_some_and(|now| now == vouched);
        let conn = Connection::open(path)?;
        key::apply(&conn, key)?;
        key::check(&conn, path, key).map_err(|error| damaged(error, path))?;
        // After anything but a clean close of ours (a crash, a power cut,
        // another program), the whole file is checked before it is used.
        if !unchanged {
            salvage::quick_check(&conn).map_err(|error| damaged(error, path))?;
        }
        schema::configure_writer(&conn, true)?;
        schema::migrate(&conn)?;
        let wal_path = conn
            .path()
            .filter(|file| !file.is_empty())
            .map(|file| std::path::PathBuf::from(format!("{file}-wal")));
        let stored = if unchanged {
            stats::load(&conn).unwrap_or_else(|err| {
                log::warn!("Could not read the stored bucket statistics: {err}");
                None
            })
        } else {
            None
        };
        let bounds = Arc::new(DurationBounds::default());
        let shared_stats = Arc::new(SharedStats::default());
        let stats = StatsWriter::new(
            Arc::clone(&shared_stats),
            stored
                .as_ref()
                .map(|stored| stored.stats.clone())
                .unwrap_or_default(),
        );
        let closed = Arc::new(AtomicBool::new(false));
        let damage = Arc::new(salvage::DamageSeen::new(path.to_path_buf()));
        let commit_times = Arc::new(CommitTimes::default());
        let touches = Arc::new(Touches::default());
        let (read_sender, read_receiver) = bounded(READ_QUEUE);
        let (stop_sender, stop_receiver) = bounded::<()>(0);
        // Readers are opened after the migration so they see the final
        // schema, and before the writer starts so a failure is an `Err`.
        let mut readers = Vec::with_capacity(reader::READERS);
        for _ in 0..reader::READERS {
            readers.push(local::open_reader(path, key)?);
        }
        let local = LocalReads::new(
            path.to_path_buf(),
            key.cloned(),
            Arc::clone(&bounds),
            Arc::clone(&shared_stats),
            Arc::clone(&closed),
        );
        let file = FileParts {
            path: path.to_path_buf(),
            lock,
        };
        let durability = match wal_path {
            Some(wal_path) => {
                // The WAL syncer checkpoints on a connection of its own
                // (`wal_sync.rs`).
                let wal_sync_conn = Connection::open_with_flags(
                    path,
                    OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                )?;
                key::apply(&wal_sync_conn, key)?;
                schema::configure_wal_sync(&wal_sync_conn)?;
                Some((wal_path.clone(), WalSyncer::start(wal_sync_conn, wal_path)?))
            }
            None => None,
        };
        let worker = Worker::new(
            conn,
            Arc::clone(&bounds),
            stats,
            stored,
            Some(file),
            durability,
            Arc::clone(&closed),
            Arc::clone(&damage),
            Arc::clone(&commit_times),
            Some(Arc::clone(&touches)),
        )?;
        let (writer, queue) = queue::bounded(WRITE_QUEUE);
        for (index, reader_conn) in readers.into_iter().enumerate() {
            let bounds = Arc::clone(&bounds);
            let stats = Arc::clone(&shared_stats);
            let commands = read_receiver.clone();
            let stop = stop_receiver.clone();
            let closed = Arc::clone(&closed);
            let damage = Arc::clone(&damage);
            spawn(format!("aw-datastore-reader-{index}"), move || {
                reader::run(reader_conn, bounds, stats, commands, stop, closed, damage)
            })?;
        }
        let (exited_sender, exited) = bounded::<()>(0);
        spawn("aw-datastore-writer".to_string(), move || {
            // The writer owns the stop sender (its end stops the readers),
            // in `worker` the lock, and the sender whose end says it is
            // done with the file.
            let _exited = exited_sender;
            let _stop = stop_sender;
            worker.run(queue)
        })?;
        Ok(Datastore {
            writer: Arc::new(writer),
            readers: Some(read_sender),
            local: Arc::new(local),
            closed,
            damage,
            commit_times,
            touches,
            _scratch: folder.map(|folder| Arc::new(Scratch { folder, exited })),
        })
    }

    /// Opens the database file only to read it, beside whatever else uses
    /// it: no lock is taken (a server may be serving the file, or start
    /// meanwhile, unhindered), nothing is migrated, checked or written,
    /// and every write answers an error. For readers outside the server
    /// (`aw-server mcp` when no server runs). A file of an older schema
    /// than this program's is refused: the server migrates it on its next
    /// start.
    pub fn open_read_only(path: impl AsRef<Path>, key: Option<&DatabaseKey>) -> Result<Datastore> {
        let path = path.as_ref();
        key::usable(key)?;
        if !path.exists() {
            return Err(DatastoreError::InvalidInput(format!(
                "no database file at {}",
                path.display()
            )));
        }
        let conn = local::open_reader(path, key)?;
        key::check(&conn, path, key).map_err(|error| damaged(error, path))?;
        let version = schema::version(&conn)?;
        if !(0..=schema::NEWEST_COMPATIBLE_VERSION).contains(&version) {
            return Err(DatastoreError::UnsupportedVersion(version));
        }
        if version < schema::CURRENT_VERSION {
            return Err(DatastoreError::InvalidInput(format!(
                "the database {} has schema version {version}, older than this program's; \
                 start the server once to migrate it",
                path.display()
            )));
        }
        let bounds = Arc::new(DurationBounds::default());
        let shared_stats = Arc::new(SharedStats::default());
        let closed = Arc::new(AtomicBool::new(false));
        let local = LocalReads::new(
            path.to_path_buf(),
            key.cloned(),
            Arc::clone(&bounds),
            Arc::clone(&shared_stats),
            Arc::clone(&closed),
        );
        // The "writer" only scans the buckets' longest events (which bound
        // range reads) and answers reads: without a file to lock, a WAL to
        // sync or facts to store, it writes nothing.
        Datastore::on_one_thread(conn, path, bounds, shared_stats, closed, local)
    }

    /// A datastore served by its writer thread alone and `local`
    /// connections: no file lock, no WAL syncer, no stored facts.
    fn on_one_thread(
        conn: Connection,
        path: &Path,
        bounds: Arc<DurationBounds>,
        shared_stats: Arc<SharedStats>,
        closed: Arc<AtomicBool>,
        local: LocalReads,
    ) -> Result<Datastore> {
        let stats = StatsWriter::new(shared_stats, Default::default());
        let damage = Arc::new(salvage::DamageSeen::new(path.to_path_buf()));
        let commit_times = Arc::new(CommitTimes::default());
        let worker = Worker::new(
            conn,
            bounds,
            stats,
            None,
            None,
            None,
            Arc::clone(&closed),
            Arc::clone(&damage),
            Arc::clone(&commit_times),
            None,
        )?;
        let (writer, queue) = queue::bounded(WRITE_QUEUE);
        spawn("aw-datastore-writer".to_string(), move || worker.run(queue))?;
        Ok(Datastore {
            writer: Arc::new(writer),
            readers: None,
            local: Arc::new(local),
            closed,
            damage,
            commit_times,
            touches: Arc::default(),
            _scratch: None,
        })
    }

    /// A fresh database that lives only as long as the handles (tests,
    /// scratch work): a file like any other, in a private temporary
    /// folder that is removed once the writer has closed it, so it is
    /// served exactly as a file is.
    pub fn open_in_memory() -> Result<Datastore> {
        let folder = tempfile::Builder::new()
            .prefix("aw-datastore-")
            .tempdir()
            .map_err(|error| {
                DatastoreError::InvalidInput(format!("no temporary folder: {error}"))
            })?;
        let path = folder.path().join("scratch.db");
        Datastore::open_file(&path, None, Some(folder))
    }

    /// The damage this datastore met in its file while serving, if any
    /// (what SQLite said): from then on reads of the damaged pages and
    /// every write answer [`DatastoreError::Damaged`], and the next open
    /// checks the whole file.
    pub fn damage(&self) -> Option<String> {
        self.damage.seen().map(str::to_string)
    }

    /// Whether the database file is encrypted at rest (opened with a key,
    /// `key.rs`). Folder sync writes a plain SQLite copy of the own
    /// buckets, so a caller refuses to push from an encrypted database
    /// unless told that a plaintext copy is intended.
    pub fn is_encrypted(&self) -> bool {
        self.local.encrypted()
    }

    /// Whether the store still serves: false once closed or its writer
    /// ended. Reads a flag, so a background job may ask it as often as
    /// it likes without waking the writer (unlike [`Datastore::health`]).
    pub fn is_open(&self) -> bool {
        !self.closed.load(Ordering::SeqCst)
    }

    /// The text a cache of answers left for the next start
    /// ([`Datastore::set_cache_hints`]), if any.
    pub fn cache_hints(&self) -> Result<Option<String>> {
        self.read_pooled(|conn, _| Ok(key_value::get(conn, key_value::CACHE_HINTS_KEY)?))
    }

    /// Stores `text` for the next start's cache of answers, in place of
    /// what was there; the datastore does not read it.
    pub fn set_cache_hints(&self, text: String) -> Result<()> {
        self.write(move |conn, _| Ok(key_value::put(conn, key_value::CACHE_HINTS_KEY, &text)?))
    }

    /// The person whose file this is, on a server that hosts several
    /// ([`Datastore::set_owner`]); `None` on a file of one's own.
    pub fn owner(&self) -> Result<Option<String>> {
        self.read_pooled(|conn, _| Ok(key_value::get(conn, key_value::OWNER_KEY)?))
    }

    /// Records whose file this is (a person's name of `aw-users`): the
    /// tokens made in it from now on name them, so a proxy in front of
    /// several servers can tell where a request goes.
    pub fn set_owner(&self, name: &str) -> Result<()> {
        let name = name.to_string();
        self.write(move |conn, _| Ok(key_value::put(conn, key_value::OWNER_KEY, &name)?))
    }

    /// The text the alerts left for the next start
    /// ([`Datastore::set_alerts_state`]), if any.
    pub fn alerts_state(&self) -> Result<Option<String>> {
        self.read_pooled(|conn, _| Ok(key_value::get(conn, key_value::ALERTS_STATE_KEY)?))
    }

    /// Stores the alerts' `text` in place of what was there; the
    /// datastore does not read it.
    pub fn set_alerts_state(&self, text: String) -> Result<()> {
        self.write(move |conn, _| Ok(key_value::put(conn, key_value::ALERTS_STATE_KEY, &text)?))
    }

    /// Tells `watcher` what every commit from now on changes in events'
    /// time (`touched.rs`), in place of any watcher before. A read-only
    /// store commits nothing and tells nothing.
    pub fn watch_writes(&self, watcher: impl WriteWatcher + 'static) {
        self.touches.watch(Box::new(watcher));
    }

    /// The writer's queue and commit times now, for monitoring: read from
    /// the channel and from atomics the writer adds to, so it waits for
    /// nothing and the writer never waits for it.
    pub fn writer_stats(&self) -> WriterStats {
        WriterStats {
            queued: self.writer.len(),
            commits: self.commit_times.read(),
        }
    }

    /// Ok while the worker runs; `Closed` once it has stopped.
    pub fn health(&self) -> Result<()> {
        self.call(|reply| WorkerMessage::Ping { reply })
    }

    /// Every bucket by id, with `metadata` filled in and `events: None`.
    pub fn buckets(&self) -> Read<'_, BTreeMap<String, Bucket>> {
        Read::new(self, OnCaller::Always, |reply| ReadCommand::Buckets {
            reply,
        })
    }

    /// One bucket, with `metadata`.
    pub fn bucket(&self, bucket_id: &str) -> Read<'_, Bucket> {
        let id = bucket_id.to_string();
        Read::new(self, OnCaller::Always, move |reply| ReadCommand::Bucket {
            bucket_id: id,
            reply,
        })
    }

    /// Creates a bucket (`created` defaults to now); inserts `bucket.events` if any.
    pub fn create_bucket(&self, bucket: Bucket) -> Result<()> {
        self.write(move |conn, memory| writes::create_bucket(conn, memory, bucket))
    }

    /// Replaces the fields `update` gives of a bucket (`type`, `client`,
    /// `hostname`, `data`); [`DatastoreError::NoSuchBucket`] if it is
    /// missing.
    pub fn update_bucket(&self, bucket_id: &str, update: UpdateBucket) -> Result<()> {
        let bucket_id = bucket_id.to_string();
        self.write(move |conn, _| writes::update_bucket(conn, &bucket_id, update))
    }

    /// Deletes a bucket and all its events.
    pub fn delete_bucket(&self, bucket_id: &str) -> Result<()> {
        let bucket_id = bucket_id.to_string();
        self.write(move |conn, memory| writes::delete_bucket(conn, memory, &bucket_id))
    }

    /// Inserts events; an event with an `id` of this bucket replaces it.
    /// Returns the stored events with their ids.
    ///
    /// An `id` that no event has is kept; an `id` of another bucket's event
    /// never touches that event: the event is stored with a fresh id.
    pub fn insert_events(&self, bucket_id: &str, events: Vec<Event>) -> Result<Vec<Event>> {
        let bucket_id = bucket_id.to_string();
        self.write(move |conn, memory| writes::insert_events(conn, memory, &bucket_id, events))
    }

    /// Merges a heartbeat (`docs/API.md` §4); returns the stored event with its id.
    pub fn heartbeat(
        &self,
        bucket_id: &str,
        heartbeat: Event,
        pulsetime: Duration,
    ) -> Result<Event> {
        self.call(|reply| WorkerMessage::Heartbeat {
            bucket_id: bucket_id.to_string(),
            heartbeat,
            pulsetime,
            reply,
        })
    }

    /// [`Datastore::heartbeat`] for async callers: the answer is awaited,
    /// not waited for on a thread, which saves an async server two thread
    /// hand-offs per heartbeat. Sending waits only while the writer's
    /// queue is full (1024 commands, a flood of writes).
    pub fn heartbeat_async(
        &self,
        bucket_id: &str,
        heartbeat: Event,
        pulsetime: Duration,
    ) -> Pending<Event> {
        let (reply, pending) = pending::reply_slot(Arc::clone(&self.closed));
        if self.closed.load(Ordering::SeqCst) {
            return pending;
        }
        // A failed send drops the reply, which answers `Closed`.
        let _ = self.writer.send(WorkerMessage::Heartbeat {
            bucket_id: bucket_id.to_string(),
            heartbeat,
            pulsetime,
            reply: Reply::Task(reply),
        });
        pending
    }

    /// Events newest first, selected and clipped (`docs/API.md`,
    /// "Events"), whole: [`Datastore::events_as`] in the shape [`Whole`].
    pub fn events(&self, bucket_id: &str, query: EventQuery) -> Read<'_, Vec<Event>> {
        self.events_as(bucket_id, query, Whole)
    }

    /// Events newest first, selected and clipped as [`Datastore::events`]
    /// selects them, in `shape`: [`Whole`], [`Shared`] (one decoded object
    /// per distinct data), [`Projected`] (data reduced to the keys a query
    /// observes) or [`Json`] (the API's array, data texts copied in).
    pub fn events_as<S: Shape>(
        &self,
        bucket_id: &str,
        query: EventQuery,
        shape: S,
    ) -> Read<'_, S::Output> {
        let id = bucket_id.to_string();
        let recipe = shape.recipe();
        let on_caller = recipe.on_caller(bucket_id, query);
        Read::new(self, on_caller, move |reply| {
            recipe.command(id, query, reply)
        })
    }

    /// Events of a bucket, unclipped, newest first (starttime, then id,
    /// descending), `limit` at a time: pass the last event of the previous
    /// page as `after`. For exports in bounded memory.
    pub fn events_page(
        &self,
        bucket_id: &str,
        after: Option<&Event>,
        limit: usize,
    ) -> Read<'_, Vec<Event>> {
        let after = match after {
            None => None,
            Some(Event {
                timestamp,
                id: Some(id),
                ..
            }) => Some((*timestamp, *id)),
            Some(_) => {
                return Read::failed(
                    self,
                    DatastoreError::InvalidInput(
                        "events_page: `after` must be a stored event with an id".to_string(),
                    ),
                )
            }
        };
        let id = bucket_id.to_string();
        Read::new(self, OnCaller::Never, move |reply| {
            ReadCommand::EventsPage {
                bucket_id: id,
                after,
                limit,
                reply,
            }
        })
    }

    /// One event of the bucket; `NoSuchEvent` if missing or in another bucket.
    pub fn event(&self, bucket_id: &str, event_id: i64) -> Read<'_, Event> {
        let id = bucket_id.to_string();
        Read::new(self, OnCaller::Always, move |reply| ReadCommand::Event {
            bucket_id: id,
            event_id,
            reply,
        })
    }

    /// Deletes one event; an id not in this bucket changes nothing.
    /// Returns whether an event was deleted.
    pub fn delete_event(&self, bucket_id: &str, event_id: i64) -> Result<bool> {
        let bucket_id = bucket_id.to_string();
        self.write(move |conn, memory| writes::delete_event(conn, memory, &bucket_id, event_id))
    }

    /// Number of events overlapping `[start, end]` (inclusive, as
    /// `events`). Counting walks only the time index, and a whole bucket's
    /// count is known without SQL.
    pub fn count_events(
        &self,
        bucket_id: &str,
        start: Option<Timestamp>,
        end: Option<Timestamp>,
    ) -> Read<'_, u64> {
        let id = bucket_id.to_string();
        Read::new(self, OnCaller::Always, move |reply| ReadCommand::Count {
            bucket_id: id,
            start,
            end,
            reply,
        })
    }

    /// Import merge (`docs/API.md` §5): creates the bucket if missing, then adds each
    /// event unless an identical one (timestamp, duration, data) is stored.
    /// Imported ids are ignored: events get fresh ids.
    pub fn import_bucket(&self, bucket: Bucket) -> Result<ImportSummary> {
        self.write(move |conn, memory| writes::import_bucket(conn, memory, bucket))
    }

    /// The merge step of `import_bucket` for one more chunk of events of an
    /// existing bucket (streaming imports).
    ///
    /// The events are validated and their data serialized here, on the
    /// caller's thread ([`PreparedEvent`]): in a large import the writer is
    /// the bottleneck, and serializing and freeing the data objects was a
    /// sixth of its time. An invalid event fails the call and stores none
    /// of the chunk.
    pub fn import_events(&self, bucket_id: &str, events: Vec<Event>) -> Result<ImportSummary> {
        let events = events
            .iter()
            .map(PreparedEvent::new)
            .collect::<Result<Vec<_>>>()?;
        self.import_prepared(bucket_id, events)
    }

    /// [`Datastore::import_events`] with events prepared beforehand, for
    /// an importer that prepares the next chunk while the writer stores
    /// this one.
    pub fn import_prepared(
        &self,
        bucket_id: &str,
        events: Vec<PreparedEvent>,
    ) -> Result<ImportSummary> {
        let bucket_id = bucket_id.to_string();
        self.write(move |conn, memory| writes::import_events(conn, memory, &bucket_id, events))
    }

    /// Every setting.
    pub fn settings(&self) -> Read<'_, BTreeMap<String, SettingValue>> {
        Read::new(self, OnCaller::Always, |reply| ReadCommand::Settings {
            reply,
        })
    }

    /// One setting, `None` if unset.
    pub fn setting(&self, key: &str) -> Read<'_, Option<SettingValue>> {
        let key = key.to_string();
        Read::new(self, OnCaller::Always, move |reply| ReadCommand::Setting {
            key,
            reply,
        })
    }

    /// Stores a setting, replacing an earlier value.
    pub fn set_setting(&self, key: &str, value: SettingValue) -> Result<()> {
        let key = key.to_string();
        self.write(move |conn, memory| writes::set_setting(conn, memory, &key, &value))
    }

    /// Deletes a setting; deleting an unset key is fine.
    pub fn delete_setting(&self, key: &str) -> Result<()> {
        let key = key.to_string();
        self.write(move |conn, memory| writes::delete_setting(conn, memory, &key))
    }

    /// Every stored API token (`tokens.rs`), hashes included: a read on
    /// this thread (the writer's queue only without a file).
    pub fn tokens(&self) -> Result<Vec<StoredToken>> {
        self.read_pooled(|conn, _| tokens::list(conn))
    }

    /// Stores a new API token; false, and nothing stored, when its name is
    /// taken.
    pub fn add_token(&self, token: StoredToken) -> Result<bool> {
        self.write(move |conn, _| tokens::add(conn, &token))
    }

    /// Removes the API token named `name`; false when there is none.
    pub fn remove_token(&self, name: &str) -> Result<bool> {
        let name = name.to_string();
        self.write(move |conn, _| tokens::remove(conn, &name))
    }

    /// Records when API tokens were last used (names since removed are
    /// skipped).
    pub fn touch_tokens(&self, used: Vec<(String, Timestamp)>) -> Result<()> {
        self.write(move |conn, _| tokens::touch(conn, &used))
    }

    /// Every host alias and the host it names (`hosts.rs`).
    pub fn host_aliases(&self) -> Result<BTreeMap<String, String>> {
        self.read_pooled(|conn, _| hosts::aliases(conn))
    }

    /// Makes `alias` name `host`'s buckets (`<stem>_<alias>` reads and
    /// writes `<stem>_<host>` when no bucket has the alias's name), or
    /// with `None` ends the alias.
    pub fn set_host_alias(&self, alias: &str, host: Option<&str>) -> Result<()> {
        let alias = alias.to_string();
        let host = host.map(str::to_string);
        self.write(move |conn, _| hosts::set_alias(conn, &alias, host.as_deref()))
    }

    /// The journal of a rename or merge of hosts under way, as its caller
    /// stored it.
    pub fn hosts_journal(&self) -> Result<Option<String>> {
        self.read_pooled(|conn, _| hosts::journal(conn))
    }

    /// Stores (`Some`) or clears the journal of a host change.
    pub fn set_hosts_journal(&self, text: Option<String>) -> Result<()> {
        self.write(move |conn, _| hosts::set_journal(conn, text.as_deref()))
    }

    /// Moves up to `limit` of the oldest events of bucket `from` into
    /// `into` in one job, each cut to the time `into` has no event for.
    pub fn merge_events(&self, from: &str, into: &str, limit: usize) -> Result<MergeStep> {
        let (from, into) = (from.to_string(), into.to_string());
        self.write(move |conn, memory| hosts::merge_step(conn, memory, &from, &into, limit))
    }

    /// What merging `from` into `into` would do now; changes nothing.
    pub fn merge_preview(&self, from: &str, into: &str) -> Result<MergeCounts> {
        self.read_pooled(|conn, _| hosts::merge_preview(conn, from, into))
    }

    /// The last step of a rename or merge, in one transaction
    /// ([`HostChange`]); answers what moving the last events did.
    pub fn change_hosts(&self, change: HostChange) -> Result<MergeCounts> {
        self.write(move |conn, memory| hosts::change(conn, memory, &change))
    }

    /// Commits and syncs everything acknowledged so far to disk.
    pub fn force_commit(&self) -> Result<()> {
        self.call(|reply| WorkerMessage::ForceCommit { reply })
    }

    /// Commits, syncs and stops the worker; later calls return `Closed`.
    pub fn close(&self) -> Result<()> {
        let result = self.call(|reply| WorkerMessage::Close { reply });
        self.local.close_idle();
        result
    }

    /// Runs a write job on the writer and waits for its answer, which
    /// comes after its batch committed (`worker.rs`, [`Job`]). Every write
    /// but a heartbeat is one: a feature adds a write operation as a
    /// function of the connection and the writer's memory in its own
    /// module, and calls this.
    pub(crate) fn write<T: Send + 'static>(
        &self,
        job: impl FnOnce(&Connection, &mut WriterMemory<'_>) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.call(|reply| WorkerMessage::Job(Job::new(job, reply)))
    }

    /// Runs `read` on this thread with a pooled read connection (and the
    /// range bounds), waiting for one when all are lent.
    pub(crate) fn read_pooled<T>(
        &self,
        read: impl FnOnce(&Connection, &DurationBounds) -> Result<T>,
    ) -> Result<T> {
        self.local
            .lend_waiting()
            .and_then(|lent| lent.read(|conn, bounds, _| read(conn, bounds)))
            .unwrap_or(Err(DatastoreError::Closed))
    }

    /// Runs a read command on this thread when a pooled connection is free
    /// (`local.rs`), else gives the command back (unlike
    /// [`Datastore::read_pooled`], it never waits). With `only_if_short`
    /// (a bucket and a listing), also gives it back unless the listing is
    /// estimated at no more than [`SMALL_READ`] events (by `limit` or by
    /// the bucket's known density over the range), on the same connection.
    pub(crate) fn try_read_here<T, C>(
        &self,
        command: C,
        only_if_short: Option<(&str, EventQuery)>,
    ) -> std::result::Result<Result<T>, C>
    where
        C: FnOnce(Reply<T>) -> ReadCommand,
    {
        if self.closed.load(Ordering::SeqCst) {
            return Ok(Err(DatastoreError::Closed));
        }
        let Some(lent) = self.local.lend() else {
            return Err(command);
        };
        // The reader threads' dispatch, answering through a channel that
        // holds the reply when `serve` returns.
        let (reply, answer) = bounded(1);
        let mut command = Some(command);
        lent.read(|conn, bounds, stats| {
            if let Some((bucket_id, query)) = only_if_short {
                let short = queries::estimated_rows(conn, stats, bucket_id, query)
                    .ok()
                    .flatten()
                    .is_some_and(|rows| rows <= SMALL_READ);
                if !short {
                    return;
                }
            }
            if let Some(command) = command.take() {
                reader::serve(
                    conn,
                    bounds,
                    stats,
                    &self.damage,
                    command(Reply::Thread(reply)),
                    true,
                );
            }
        });
        match command {
            Some(command) => Err(command),
            None => Ok(answer.try_recv().unwrap_or(Err(DatastoreError::Closed))),
        }
    }

    fn read<T>(&self, command: impl FnOnce(Reply<T>) -> ReadCommand) -> Result<T> {
        let command = match self.try_read_here(command, None) {
            Ok(result) => return result,
            Err(command) => command,
        };
        match &self.readers {
            Some(readers) => {
                if self.closed.load(Ordering::SeqCst) {
                    return Err(DatastoreError::Closed);
                }
                let (reply, answer) = bounded(1);
                readers
                    .send(command(Reply::Thread(reply)))
                    .map_err(|_| DatastoreError::Closed)?;
                self.wait(&answer)
            }
            None => self.call(|reply| WorkerMessage::Read(command(reply))),
        }
    }

    fn call<T>(&self, message: impl FnOnce(Reply<T>) -> WorkerMessage) -> Result<T> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(DatastoreError::Closed);
        }
        let (reply, answer) = bounded(1);
        self.writer
            .send(message(Reply::Thread(reply)))
            .map_err(|_| DatastoreError::Closed)?;
        self.wait(&answer)
    }

    /// Waits for a reply. A dropped reply sender means the worker stopped
    /// before answering; a command that reached the queue just as the
    /// worker stopped may never be dropped, so the closed flag is polled
    /// too, which keeps a caller from waiting forever on a dead worker.
    fn wait<T>(&self, answer: &Receiver<Result<T>>) -> Result<T> {
        loop {
            match answer.recv_timeout(CLOSED_POLL) {
                Ok(result) => return result,
                Err(RecvTimeoutError::Disconnected) => return Err(DatastoreError::Closed),
                Err(RecvTimeoutError::Timeout) => {
                    if self.closed.load(Ordering::SeqCst) {
                        return answer.try_recv().unwrap_or(Err(DatastoreError::Closed));
                    }
                }
            }
        }
    }

    /// Test hook: the next `count` commits fail like an I/O error.
    #[cfg(test)]
    fn fail_commits(&self, count: u32) -> Result<()> {
        self.call(|reply| WorkerMessage::FailCommits { count, reply })
    }

    /// Test hook: whether a bucket's count and edges are known without SQL.
    #[cfg(test)]
    fn stats_known(&self, bucket_id: &str) -> Result<bool> {
        self.call(|reply| WorkerMessage::StatsKnown {
            bucket_id: bucket_id.to_string(),
            reply,
        })
    }

    /// Test hook: caps the file size in pages; returns the cap in force.
    #[cfg(test)]
    fn limit_pages(&self, pages: i64) -> Result<i64> {
        self.call(|reply| WorkerMessage::LimitPages { pages, reply })
    }
}

fn spawn(name: String, body: impl FnOnce() + Send + 'static) -> Result<()> {
    std::thread::Builder::new()
        .name(name)
        .spawn(body)
        .map(|_| ())
        .map_err(DatastoreError::Io)
}

#[cfg(test)]
mod tests;
