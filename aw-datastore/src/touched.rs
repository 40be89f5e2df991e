//! What each committed batch changed, in events' time, for whoever keeps
//! answers computed from the events (a cache of finished periods).
//!
//! The writer's connection has temporary triggers on `events` and
//! `buckets` (in the connection's temp schema, never in the file) that
//! call a function of this module for every row any write changes: so
//! every write path, today's and tomorrow's, is covered without being
//! told. An inserted or deleted event touches its extent; an updated one
//! the extents before and after, or only the stretch its end moved over
//! when nothing else of it changed (a merged heartbeat: reads clip events
//! to their range, so nothing before its old end reads differently). Any
//! change of a bucket's row (created, deleted, renamed) touches all time.
//!
//! The spans are handed to the [`WriteWatcher`] after the batch commits
//! and before any of its writers is answered: a reader that began before
//! the watcher hears of a change may have read either side of it, one
//! that begins after reads it. A batch that fails changed nothing and is
//! forgotten; a job rolled back inside a batch that commits is reported
//! anyway, which only makes a watcher forget more than it had to.

use std::sync::{Arc, Mutex, PoisonError};

use arc_swap::ArcSwapOption;
use rusqlite::functions::FunctionFlags;
use rusqlite::Connection;

/// At most this many spans are kept for one batch: further ones are
/// joined with their nearest neighbour, so a batch touching scattered
/// history reports a few wider spans instead of one per row.
const MAX_SPANS: usize = 16;

/// One commit's changes, in nanoseconds since the epoch: inclusive spans
/// sorted by start and apart from each other, or all time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Touched {
    spans: Vec<(i64, i64)>,
    everything: bool,
}

impl Touched {
    /// The spans of events' time the commit changed (inclusive, sorted,
    /// disjoint). Empty when [`Touched::everything`] says all time.
    pub fn spans(&self) -> &[(i64, i64)] {
        &self.spans
    }

    /// Whether the commit changed a bucket, so any answer may differ.
    pub fn everything(&self) -> bool {
        self.everything
    }

    fn is_empty(&self) -> bool {
        !self.everything && self.spans.is_empty()
    }

    fn add(&mut self, start: i64, end: i64) {
        if self.everything {
            return;
        }
        let (start, end) = (start.min(end), start.max(end));
        // Heartbeats touch the same stretch again and again: the common
        // case extends the last span.
        if let Some(last) = self.spans.last_mut() {
            if start <= last.1.saturating_add(1) && end >= last.0.saturating_sub(1) {
                *last = (last.0.min(start), last.1.max(end));
                return;
            }
        }
        self.spans.push((start, end));
        if self.spans.len() > 2 * MAX_SPANS {
            self.compact();
        }
    }

    /// Sorts, joins what overlaps or touches, then joins the closest
    /// neighbours until at most `MAX_SPANS` are left.
    fn compact(&mut self) {
        self.spans.sort_unstable();
        let mut joined: Vec<(i64, i64)> = Vec::with_capacity(self.spans.len());
        for &(start, end) in &self.spans {
            match joined.last_mut() {
                Some(last) if start <= last.1.saturating_add(1) => last.1 = last.1.max(end),
                _ => joined.push((start, end)),
            }
        }
        while joined.len() > MAX_SPANS {
            let nearest = (1..joined.len())
                .min_by_key(|&i| joined[i].0.saturating_sub(joined[i - 1].1))
                .expect("more than one span");
            let (_, end) = joined.remove(nearest);
            joined[nearest - 1].1 = joined[nearest - 1].1.max(end);
        }
        self.spans = joined;
    }

    fn finish(mut self) -> Touched {
        // One span (a batch of heartbeats) is sorted and apart already.
        if !self.everything && self.spans.len() > 1 {
            self.compact();
        }
        self
    }
}

/// Told of every committed change of events' time (see the module docs).
/// Called on the writer thread, between a commit and its writers'
/// answers: it must be quick and must not wait on the datastore.
pub trait WriteWatcher: Send + Sync {
    /// What one committed batch changed.
    fn committed(&self, touched: &Touched);
}

/// The writer's side: the spans of the open batch and the watcher, shared
/// with the `Datastore` handles that install one.
#[derive(Default)]
pub(crate) struct Touches {
    open: Arc<Mutex<Touched>>,
    /// Set if the insert trigger could not be put back after a bulk
    /// insert: every commit then tells all time.
    lost: std::sync::atomic::AtomicBool,
    watcher: ArcSwapOption<Box<dyn WriteWatcher>>,
}

impl std::fmt::Debug for Touches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Touches")
            .field("watched", &self.watcher.load().is_some())
            .finish()
    }
}

impl Touches {
    /// Puts the triggers on the writer's connection.
    pub(crate) fn install(&self, conn: &Connection) -> rusqlite::Result<()> {
        let open = Arc::clone(&self.open);
        conn.create_scalar_function(
            "aw_touched",
            2,
            FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DIRECTONLY,
            move |ctx| {
                let (start, end): (i64, i64) = (ctx.get(0)?, ctx.get(1)?);
                open.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .add(start, end);
                Ok(0i64)
            },
        )?;
        let open = Arc::clone(&self.open);
        conn.create_scalar_function(
            "aw_touched_all",
            0,
            FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DIRECTONLY,
            move |_| {
                let mut touched = open.lock().unwrap_or_else(PoisonError::into_inner);
                touched.everything = true;
                touched.spans.clear();
                Ok(0i64)
            },
        )?;
        conn.execute_batch(INSERT_TRIGGER)?;
        conn.execute_batch(TRIGGERS)
    }

    /// Installs the one watcher, in place of any other.
    pub(crate) fn watch(&self, watcher: Box<dyn WriteWatcher>) {
        self.watcher.store(Some(Arc::new(watcher)));
    }

    /// After a commit: tells the watcher what it changed.
    pub(crate) fn committed(&self) {
        let mut touched =
            std::mem::take(&mut *self.open.lock().unwrap_or_else(PoisonError::into_inner));
        if self.lost.load(std::sync::atomic::Ordering::Relaxed) {
            touched.everything = true;
            touched.spans.clear();
        }
        if touched.is_empty() {
            return;
        }
        if let Some(watcher) = &*self.watcher.load() {
            watcher.committed(&touched.finish());
        }
    }

    /// The insert trigger off for a bulk insert, which tells what it
    /// touches through [`Bulk::touched`]: a trigger program and a function
    /// call per row were a quarter of an import's time.
    pub(crate) fn bulk<'c>(&'c self, conn: &'c Connection) -> rusqlite::Result<Bulk<'c>> {
        // Dropped inside the command's transaction, so a rollback puts it
        // back too; changing the temp schema expires the connection's
        // statements, which are prepared again when next used: once per
        // bulk insert.
        conn.execute_batch("DROP TRIGGER IF EXISTS temp.aw_touched_event_insert")?;
        Ok(Bulk {
            conn,
            touches: self,
            touched: Touched::default(),
        })
    }

    /// After a failed batch: nothing of it is visible, so nothing to tell.
    pub(crate) fn failed(&self) {
        *self.open.lock().unwrap_or_else(PoisonError::into_inner) = Touched::default();
    }
}

/// A bulk insert with the insert trigger off (see [`Touches::bulk`]);
/// it is back when this is dropped, and what it was told of joins the
/// open batch's changes.
pub(crate) struct Bulk<'c> {
    conn: &'c Connection,
    touches: &'c Touches,
    touched: Touched,
}

impl Bulk<'_> {
    /// An event from `start` to `end` (nanoseconds) was inserted.
    pub(crate) fn touched(&mut self, start: i64, end: i64) {
        self.touched.add(start, end);
    }
}

impl Drop for Bulk<'_> {
    fn drop(&mut self) {
        if let Err(error) = self.conn.execute_batch(INSERT_TRIGGER) {
            // Unheard of for a valid connection; without the trigger an
            // insert would not be told, so from now on every commit
            // tells all time.
            log::error!("Could not put the insert trigger back: {error}");
            self.touches
                .lost
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        let touched = std::mem::take(&mut self.touched).finish();
        let mut open = self
            .touches
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if touched.everything {
            open.everything = true;
            open.spans.clear();
        }
        for &(start, end) in touched.spans() {
            open.add(start, end);
        }
    }
}

/// Put back after a bulk insert; if a rollback already did, it is there.
const INSERT_TRIGGER: &str = "
CREATE TEMP TRIGGER IF NOT EXISTS aw_touched_event_insert AFTER INSERT ON main.events
BEGIN SELECT aw_touched(NEW.starttime, NEW.endtime); END;";

/// Temporary, so they live in this connection's temp schema and never in
/// the file (which stays aw-server-rust's). An update that keeps the
/// bucket, start and data touches only what its end moved over.
const TRIGGERS: &str = "
CREATE TEMP TRIGGER aw_touched_event_delete AFTER DELETE ON main.events
BEGIN SELECT aw_touched(OLD.starttime, OLD.endtime); END;
CREATE TEMP TRIGGER aw_touched_event_update AFTER UPDATE ON main.events
BEGIN SELECT CASE
    WHEN OLD.bucketrow = NEW.bucketrow AND OLD.starttime = NEW.starttime
        AND OLD.data IS NEW.data
    THEN aw_touched(OLD.endtime, NEW.endtime)
    ELSE aw_touched(min(OLD.starttime, NEW.starttime), max(OLD.endtime, NEW.endtime))
END; END;
CREATE TEMP TRIGGER aw_touched_bucket_insert AFTER INSERT ON main.buckets
BEGIN SELECT aw_touched_all(); END;
CREATE TEMP TRIGGER aw_touched_bucket_delete AFTER DELETE ON main.buckets
BEGIN SELECT aw_touched_all(); END;
CREATE TEMP TRIGGER aw_touched_bucket_update AFTER UPDATE ON main.buckets
BEGIN SELECT aw_touched_all(); END;
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_joined_sorted_and_bounded() {
        let mut touched = Touched::default();
        touched.add(10, 20);
        touched.add(21, 30);
        touched.add(5, 8);
        assert_eq!(touched.clone().finish().spans(), &[(5, 8), (10, 30)]);
        for i in 0..100 {
            touched.add(1000 * i, 1000 * i + 1);
        }
        let finished = touched.finish();
        assert!(finished.spans().len() <= MAX_SPANS);
        assert_eq!(finished.spans().first().unwrap().0, 0);
        assert_eq!(finished.spans().last().unwrap().1, 99_001);
        assert!(finished.spans().windows(2).all(|w| w[0].1 < w[1].0));
    }

    fn events_table() -> (Connection, Touches) {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE buckets (id INTEGER PRIMARY KEY, name TEXT);
             CREATE TABLE events (id INTEGER PRIMARY KEY, bucketrow INTEGER,
                 starttime INTEGER, endtime INTEGER, data TEXT);",
        )
        .unwrap();
        let touches = Touches::default();
        touches.install(&conn).unwrap();
        (conn, touches)
    }

    fn open_spans(touches: &Touches) -> Vec<(i64, i64)> {
        touches
            .open
            .lock()
            .unwrap()
            .clone()
            .finish()
            .spans()
            .to_vec()
    }

    #[test]
    fn a_bulk_insert_tells_only_what_it_is_told_and_the_triggers_come_back() {
        let (conn, touches) = events_table();
        let insert =
            "INSERT INTO events (bucketrow, starttime, endtime, data) VALUES (1, ?1, ?2, '{}')";
        {
            let mut bulk = touches.bulk(&conn).unwrap();
            conn.execute(insert, [10, 20]).unwrap();
            assert!(open_spans(&touches).is_empty(), "no trigger ran");
            bulk.touched(10, 20);
        }
        assert_eq!(open_spans(&touches), [(10, 20)]);
        conn.execute(insert, [100, 200]).unwrap();
        assert_eq!(open_spans(&touches), [(10, 20), (100, 200)]);
    }

    #[test]
    fn a_rolled_back_bulk_insert_leaves_the_trigger_in_place() {
        let (conn, touches) = events_table();
        let insert =
            "INSERT INTO events (bucketrow, starttime, endtime, data) VALUES (1, ?1, ?2, '{}')";
        conn.execute_batch("BEGIN IMMEDIATE; SAVEPOINT command;")
            .unwrap();
        {
            let _bulk = touches.bulk(&conn).unwrap();
            conn.execute(insert, [10, 20]).unwrap();
        }
        conn.execute_batch("ROLLBACK TO command; RELEASE command; COMMIT;")
            .unwrap();
        conn.execute(insert, [100, 200]).unwrap();
        assert_eq!(open_spans(&touches), [(100, 200)]);
    }

    #[test]
    fn a_reversed_span_is_put_right() {
        let mut touched = Touched::default();
        touched.add(30, 20);
        assert_eq!(touched.finish().spans(), &[(20, 30)]);
    }

    #[test]
    fn all_time_swallows_spans() {
        let mut touched = Touched::default();
        touched.add(1, 2);
        touched.everything = true;
        touched.spans.clear();
        touched.add(3, 4);
        let finished = touched.finish();
        assert!(finished.everything());
        assert!(finished.spans().is_empty());
    }
}
