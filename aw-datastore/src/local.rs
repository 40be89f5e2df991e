//! Reads on the calling thread, on a connection borrowed from a pool.
//!
//! Handing a read to a reader thread and its answer back costs two thread
//! wake-ups. For a small read that is most of its cost
//! (`benches/runs/2026-11-21-small-requests-and-import.md`). So a caller
//! borrows an idle read-only connection from this pool and reads where it
//! is: threads that wait for their answer anyway (query threads, the
//! blocking pool), and async handlers whose read is known to be small.
//!
//! At most [`MAX_CONNECTIONS`] are open, each opened on first need; when
//! all are lent, a read goes to the reader threads as before. Every read
//! still runs in one read transaction (see `reader.rs`), so a read started
//! after a write's acknowledgement sees it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use crossbeam_channel::{bounded, Receiver, Sender};
use rusqlite::{Connection, OpenFlags};

use crate::bounds::DurationBounds;
use crate::key::{self, DatabaseKey};
use crate::schema;
use crate::stats::SharedStats;
use crate::Result;

/// Most connections the pool opens: the async workers, a few query threads
/// and their read-ahead threads. Each has a 512 KB page cache
/// (`schema::configure_reader`).
pub(crate) const MAX_CONNECTIONS: usize = 8;

/// A read-only connection configured like the reader threads'.
pub(crate) fn open_reader(path: &Path, key: Option<&DatabaseKey>) -> Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    key::apply(&conn, key)?;
    schema::configure_reader(&conn)?;
    Ok(conn)
}

/// The pool, shared by every handle of one datastore.
#[derive(Debug)]
pub(crate) struct LocalReads {
    path: PathBuf,
    key: Option<DatabaseKey>,
    bounds: Arc<DurationBounds>,
    stats: Arc<SharedStats>,
    closed: Arc<AtomicBool>,
    idle: Receiver<Connection>,
    returned: Sender<Connection>,
    /// Connections open, idle or lent.
    open: AtomicUsize,
}

impl LocalReads {
    pub(crate) fn new(
        path: PathBuf,
        key: Option<DatabaseKey>,
        bounds: Arc<DurationBounds>,
        stats: Arc<SharedStats>,
        closed: Arc<AtomicBool>,
    ) -> LocalReads {
        let (returned, idle) = bounded(MAX_CONNECTIONS);
        LocalReads {
            path,
            key,
            bounds,
            stats,
            closed,
            idle,
            returned,
            open: AtomicUsize::new(0),
        }
    }

    /// Whether the connections are opened with a key (`key.rs`).
    pub(crate) fn encrypted(&self) -> bool {
        self.key.is_some()
    }

    /// The key the connections are opened with.
    pub(crate) fn key(&self) -> Option<&DatabaseKey> {
        self.key.as_ref()
    }

    /// A read-only connection of the caller's own, outside the pool, for
    /// a long read that should not hold one of its connections
    /// (`snapshot.rs`).
    pub(crate) fn open_connection(&self) -> Result<Connection> {
        open_reader(&self.path, self.key.as_ref())
    }

    /// An idle connection, or a new one while fewer than
    /// [`MAX_CONNECTIONS`] are open; `None` when every connection is lent
    /// (or a new one could not be opened), and the caller should ask a
    /// reader thread.
    pub(crate) fn lend(&self) -> Option<Lent<'_>> {
        let conn = match self.idle.try_recv() {
            Ok(conn) => conn,
            Err(_) => {
                if self.open.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
                    self.open.fetch_sub(1, Ordering::SeqCst);
                    return None;
                }
                match open_reader(&self.path, self.key.as_ref()) {
                    Ok(conn) => conn,
                    Err(err) => {
                        self.open.fetch_sub(1, Ordering::SeqCst);
                        log::warn!("Could not open a read connection: {err}");
                        return None;
                    }
                }
            }
        };
        Some(Lent {
            pool: self,
            conn: Some(conn),
        })
    }

    /// [`LocalReads::lend`], or else the next connection given back, for
    /// callers that would rather wait than use a reader thread; `None`
    /// once the datastore has closed.
    pub(crate) fn lend_waiting(&self) -> Option<Lent<'_>> {
        loop {
            if self.closed.load(Ordering::SeqCst) {
                return None;
            }
            if let Some(lent) = self.lend() {
                return Some(lent);
            }
            // A connection given back ends the wait at once; the timeout
            // only lets a close be noticed.
            if let Ok(conn) = self
                .idle
                .recv_timeout(std::time::Duration::from_millis(100))
            {
                return Some(Lent {
                    pool: self,
                    conn: Some(conn),
                });
            }
        }
    }

    /// Closes the idle connections; lent ones close when given back.
    pub(crate) fn close_idle(&self) {
        while let Ok(conn) = self.idle.try_recv() {
            drop(conn);
            self.open.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// A borrowed connection; given back on drop, even when a read panics.
pub(crate) struct Lent<'pool> {
    pool: &'pool LocalReads,
    /// Always `Some` until dropped.
    conn: Option<Connection>,
}

impl Lent<'_> {
    /// Runs `read` on the connection, with the datastore's range bounds
    /// and bucket facts.
    pub(crate) fn read<T>(
        &self,
        read: impl FnOnce(&Connection, &DurationBounds, &SharedStats) -> T,
    ) -> Option<T> {
        let conn = self.conn.as_ref()?;
        Some(read(conn, &self.pool.bounds, &self.pool.stats))
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        let pool = self.pool;
        let Some(conn) = self.conn.take() else {
            return;
        };
        // Nothing reads after the datastore closed: the connection closes.
        if pool.closed.load(Ordering::SeqCst) || pool.returned.try_send(conn).is_err() {
            pool.open.fetch_sub(1, Ordering::SeqCst);
        }
    }
}
