//! Reader threads: each owns a read-only connection and serves read
//! commands from a shared queue: reads that found no free connection for
//! the caller's own thread (`local.rs`), and long event listings awaited
//! by async callers.
//!
//! WAL gives each read transaction a snapshot of the last commit without
//! blocking the writer, so a long read (a year of events) runs beside
//! heartbeats instead of ahead of them. Since the writer answers only after
//! committing, a read sent after an acknowledgement sees that write. Each
//! command runs in one read transaction, opened before the duration bound
//! is looked up (see `bounds.rs`).
//!
//! Readers run at a lower scheduling priority than the writer (nice
//! `aw_threads::BACKGROUND_NICENESS` more, on Linux): a year-long read is CPU-bound for about a
//! second, and on a machine with two cores the writer, and so every
//! heartbeat's acknowledgement, otherwise waited behind it and the query
//! that follows it for a scheduler time slice or more.
//!
//! Readers stop when the writer stops (its end disconnects `stop`), so a
//! closed or dead datastore answers every call with `Closed`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crossbeam_channel::{select, Receiver};
use rusqlite::Connection;

use crate::bounds::DurationBounds;
use crate::commands::{ReadCommand, Reply};
use crate::queries;
use crate::salvage::DamageSeen;
use crate::stats::SharedStats;
use crate::{DatastoreError, Result};

/// Number of reader threads of a file database. Two let one long read and
/// one short read (a bucket list, a single event) run at the same time
/// without adding much to a small machine's load.
pub(crate) const READERS: usize = 2;

/// Serves read commands until the queue or `stop` disconnects.
pub(crate) fn run(
    conn: Connection,
    bounds: Arc<DurationBounds>,
    stats: Arc<SharedStats>,
    commands: Receiver<ReadCommand>,
    stop: Receiver<()>,
    closed: Arc<AtomicBool>,
    damage: Arc<DamageSeen>,
) {
    aw_threads::lower_priority(aw_threads::BACKGROUND_NICENESS);
    loop {
        select! {
            recv(commands) -> command => match command {
                Ok(command) if closed.load(Ordering::SeqCst) => refuse(command),
                Ok(command) => serve(&conn, &bounds, &stats, &damage, command, true),
                Err(_) => return,
            },
            // Only ever disconnects: the writer has stopped.
            recv(stop) -> _ => break,
        }
    }
    // Answer what is queued rather than leave callers waiting on it.
    while let Ok(command) = commands.try_recv() {
        refuse(command);
    }
}

/// Answers a command on `conn`, inside a read transaction if `snapshot`;
/// damage met is recorded in `damage` and answered as such.
pub(crate) fn serve(
    conn: &Connection,
    bounds: &DurationBounds,
    stats: &SharedStats,
    damage: &DamageSeen,
    command: ReadCommand,
    snapshot: bool,
) {
    let answering = Answering {
        conn,
        snapshot,
        damage,
    };
    match command {
        ReadCommand::Buckets { reply } => {
            answering.answer(reply, || queries::buckets(conn, bounds, stats))
        }
        ReadCommand::Bucket { bucket_id, reply } => {
            answering.answer(reply, || queries::bucket(conn, bounds, stats, &bucket_id))
        }
        ReadCommand::Events {
            bucket_id,
            query,
            reply,
        } => answering.answer(reply, || queries::events(conn, bounds, &bucket_id, query)),
        ReadCommand::SharedEvents {
            bucket_id,
            query,
            reply,
        } => answering.answer(reply, || {
            queries::shared_events(conn, bounds, stats, &bucket_id, query, None)
                .map(|read| read.events)
        }),
        ReadCommand::ProjectedEvents {
            bucket_id,
            query,
            keys,
            reply,
        } => answering.answer(reply, || {
            queries::shared_events(conn, bounds, stats, &bucket_id, query, Some(&keys))
        }),
        ReadCommand::EventsJson {
            bucket_id,
            query,
            reply,
        } => answering.answer(reply, || {
            queries::events_json(conn, bounds, stats, &bucket_id, query)
        }),
        ReadCommand::EventsPage {
            bucket_id,
            after,
            limit,
            reply,
        } => answering.answer(reply, || {
            queries::events_page(conn, &bucket_id, after, limit)
        }),
        ReadCommand::Event {
            bucket_id,
            event_id,
            reply,
        } => answering.answer(reply, || queries::event(conn, &bucket_id, event_id)),
        ReadCommand::Count {
            bucket_id,
            start,
            end,
            reply,
        } => answering.answer(reply, || {
            queries::count(conn, bounds, stats, &bucket_id, start, end)
        }),
        ReadCommand::Settings { reply } => answering.answer(reply, || queries::settings(conn)),
        ReadCommand::Setting { key, reply } => {
            answering.answer(reply, || queries::setting(conn, &key))
        }
    }
}

/// Where a command is answered.
struct Answering<'a> {
    conn: &'a Connection,
    snapshot: bool,
    damage: &'a DamageSeen,
}

impl Answering<'_> {
    fn answer<T>(&self, reply: Reply<T>, read: impl FnOnce() -> Result<T>) {
        let result = if self.snapshot {
            in_read_transaction(self.conn, read)
        } else {
            read()
        };
        // A caller that stopped waiting is no concern of the reader.
        reply.send(result.map_err(|error| self.damage.check(error)));
    }
}

pub(crate) fn in_read_transaction<T>(
    conn: &Connection,
    read: impl FnOnce() -> Result<T>,
) -> Result<T> {
    conn.prepare_cached("BEGIN DEFERRED")?.execute([])?;
    let result = read();
    // Ending a read transaction cannot lose data; an error here only means
    // there was nothing to end.
    let _ = conn
        .prepare_cached("COMMIT")
        .and_then(|mut stmt| stmt.execute([]));
    result
}

fn refuse(command: ReadCommand) {
    fn closed<T>(reply: Reply<T>) {
        reply.send(Err(DatastoreError::Closed));
    }
    match command {
        ReadCommand::Buckets { reply } => closed(reply),
        ReadCommand::Bucket { reply, .. } => closed(reply),
        ReadCommand::Events { reply, .. } | ReadCommand::EventsPage { reply, .. } => closed(reply),
        ReadCommand::SharedEvents { reply, .. } => closed(reply),
        ReadCommand::ProjectedEvents { reply, .. } => closed(reply),
        ReadCommand::EventsJson { reply, .. } => closed(reply),
        ReadCommand::Event { reply, .. } => closed(reply),
        ReadCommand::Count { reply, .. } => closed(reply),
        ReadCommand::Settings { reply } => closed(reply),
        ReadCommand::Setting { reply, .. } => closed(reply),
    }
}
