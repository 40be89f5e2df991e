//! Per-bucket longest event duration, shared by the writer and the readers.
//!
//! A range read wants events with `endtime >= start`, but the index is
//! ordered by starttime, so without more knowledge it must scan every older
//! event of the bucket to check their ends. Knowing the bucket's longest
//! duration `D`, every event ending at or after `start` starts at or after
//! `start - D`, which bounds the scan from below: its cost follows the
//! events returned, not the bucket's history.
//!
//! Only the writer changes the map: it records every new or extended
//! duration *before* committing, and readers open their snapshot *before*
//! looking the bound up, so a bound read is never smaller than what the
//! snapshot holds. Deletes and rolled-back batches never lower a bound; a
//! bound that is too large only costs scan time. A bucket missing from the
//! map (an old file not scanned yet) is read with an unbounded scan.
//!
//! The bounds of a file closed cleanly are stored with the bucket facts
//! (`stats.rs`) and need no scan. Buckets of other files are scanned by
//! the writer while it is
//! idle, [`SCAN_CHUNK`] index entries per step so a long history never
//! stalls a heartbeat for long; writes during a scan are folded into it,
//! since the scan may already have passed the events they touch.
//!
//! Readers take no lock: the map is an immutable `HashMap` behind an
//! [`ArcSwap`], which a read loads atomically. Only the writer thread
//! replaces it, and only when a bound grows, a bucket appears or one goes
//! away; an event no longer than its bucket's bound changes nothing.

use std::collections::HashMap;
use std::sync::Arc;

use arc_swap::ArcSwap;
use rusqlite::{params, Connection, OptionalExtension};

/// Index entries read per scan step: a few milliseconds of writer time.
pub(crate) const SCAN_CHUNK: i64 = 20_000;

/// Longest known event duration (nanoseconds) by bucket row id.
#[derive(Debug, Default)]
pub(crate) struct DurationBounds {
    /// Bounds readers may use.
    known: ArcSwap<HashMap<i64, i64>>,
    /// Longest duration written to buckets being scanned, not yet usable
    /// (the writer's alone; shared here so `note` can fold writes into it).
    scanning: ArcSwap<HashMap<i64, i64>>,
}

/// Progress of the scan of one bucket, newest events first.
#[derive(Debug)]
pub(crate) struct Scan {
    row_id: i64,
    /// The next step reads events starting before this.
    below: i64,
    longest: i64,
    started: bool,
}

impl Scan {
    /// The bucket scanned.
    pub(crate) fn row_id(&self) -> i64 {
        self.row_id
    }
}

/// Applies `change` to a copy of `map` and publishes it. Only the writer
/// thread calls this, so there is no competing update to lose.
fn update(map: &ArcSwap<HashMap<i64, i64>>, change: impl FnOnce(&mut HashMap<i64, i64>)) {
    let mut copy = HashMap::clone(&map.load());
    change(&mut copy);
    map.store(Arc::new(copy));
}

impl DurationBounds {
    /// The bound of a bucket, `None` while unknown.
    pub(crate) fn get(&self, bucket_row: i64) -> Option<i64> {
        self.known.load().get(&bucket_row).copied()
    }

    /// Records an event of `duration` written to a bucket. Buckets neither
    /// known nor being scanned are scanned later and see it then.
    pub(crate) fn note(&self, bucket_row: i64, duration: i64) {
        for map in [&self.known, &self.scanning] {
            let longest = map.load().get(&bucket_row).copied();
            if let Some(longest) = longest {
                if duration > longest {
                    update(map, |bounds| {
                        bounds.insert(bucket_row, duration);
                    });
                }
                return;
            }
        }
    }

    /// Forgets a deleted bucket (and abandons its scan).
    pub(crate) fn forget(&self, bucket_row: i64) {
        for map in [&self.known, &self.scanning] {
            if map.load().contains_key(&bucket_row) {
                update(map, |bounds| {
                    bounds.remove(&bucket_row);
                });
            }
        }
    }

    /// Replaces the bound of a bucket created anew (its row id may have
    /// been used by a bucket of a rolled-back batch).
    pub(crate) fn reset(&self, bucket_row: i64) {
        if self.scanning.load().contains_key(&bucket_row) {
            update(&self.scanning, |bounds| {
                bounds.remove(&bucket_row);
            });
        }
        update(&self.known, |bounds| {
            bounds.insert(bucket_row, 0);
        });
    }

    /// Takes the bounds stored by the last clean close (`stats.rs`).
    pub(crate) fn load(&self, stored: &HashMap<i64, i64>) {
        update(&self.known, |bounds| bounds.extend(stored));
    }

    /// Starts scanning a bucket that existed at open.
    pub(crate) fn begin_scan(&self, bucket_row: i64) -> Scan {
        update(&self.scanning, |bounds| {
            bounds.insert(bucket_row, 0);
        });
        Scan {
            row_id: bucket_row,
            below: i64::MAX,
            longest: 0,
            started: false,
        }
    }

    /// Publishes a finished scan, with what was written meanwhile; a
    /// bucket deleted during the scan stays unknown.
    pub(crate) fn finish_scan(&self, scan: Scan) {
        let Some(written) = self.scanning.load().get(&scan.row_id).copied() else {
            return;
        };
        update(&self.scanning, |bounds| {
            bounds.remove(&scan.row_id);
        });
        update(&self.known, |bounds| {
            bounds.insert(scan.row_id, scan.longest.max(written));
        });
    }

    /// Drops a scan that failed; the bucket stays unknown.
    pub(crate) fn abandon_scan(&self, scan: Scan) {
        update(&self.scanning, |bounds| {
            bounds.remove(&scan.row_id);
        });
    }
}

/// Reads the next [`SCAN_CHUNK`] index entries of a scan; whether the
/// bucket is done.
pub(crate) fn scan_step(conn: &Connection, scan: &mut Scan) -> rusqlite::Result<bool> {
    if !scan.started {
        // Events starting at the very last instant sit above every chunk.
        scan.started = true;
        scan.longest = scan.longest.max(longest_at(conn, scan.row_id, i64::MAX)?);
    }
    let (longest, lowest): (Option<i64>, Option<i64>) = conn
        .prepare_cached(
            "SELECT max(endtime - starttime), min(starttime) FROM (
                 SELECT starttime, endtime FROM events
                 INDEXED BY events_bucketrow_starttime_endtime_index
                 WHERE bucketrow = ?1 AND starttime < ?2
                 ORDER BY starttime DESC LIMIT ?3)",
        )?
        .query_row(params![scan.row_id, scan.below, SCAN_CHUNK], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })?;
    let Some(lowest) = lowest else {
        return Ok(true);
    };
    scan.longest = scan.longest.max(longest.unwrap_or(0));
    // Events sharing the chunk's lowest start may lie past the chunk's end;
    // the next step starts below that start, so read them all now.
    scan.longest = scan.longest.max(longest_at(conn, scan.row_id, lowest)?);
    scan.below = lowest;
    Ok(false)
}

/// Longest duration among events of a bucket starting exactly at `start`.
fn longest_at(conn: &Connection, row_id: i64, start: i64) -> rusqlite::Result<i64> {
    let end: Option<i64> = conn
        .prepare_cached(
            "SELECT max(endtime) FROM events INDEXED BY events_bucketrow_starttime_endtime_index
             WHERE bucketrow = ?1 AND starttime = ?2",
        )?
        .query_row(params![row_id, start], |row| row.get(0))
        .optional()?
        .flatten();
    Ok(end.map_or(0, |end| end.saturating_sub(start)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_only_grow_for_known_buckets() {
        let bounds = DurationBounds::default();
        bounds.note(1, 10);
        assert_eq!(bounds.get(1), None);
        bounds.reset(1);
        bounds.note(1, 3);
        assert_eq!(bounds.get(1), Some(3));
        bounds.note(1, 30);
        bounds.note(1, 5);
        assert_eq!(bounds.get(1), Some(30));
        bounds.reset(1);
        assert_eq!(bounds.get(1), Some(0));
        bounds.forget(1);
        assert_eq!(bounds.get(1), None);
    }

    #[test]
    fn chunked_scan_finds_the_longest_event_and_writes_made_meanwhile() {
        let conn = Connection::open_in_memory().unwrap();
        crate::schema::migrate(&conn).unwrap();
        conn.execute(
            "INSERT INTO buckets (id, name, type, client, hostname, created) VALUES (1, 'b', 't', 'c', 'h', '')",
            [],
        )
        .unwrap();
        let insert = |start: i64, end: i64| {
            conn.execute(
                "INSERT INTO events (bucketrow, starttime, endtime, data) VALUES (1, ?1, ?2, '{}')",
                params![start, end],
            )
            .unwrap();
        };
        // More rows than a chunk, many sharing one start at a chunk edge,
        // the longest one in the middle of those and one at the last instant.
        for i in 0..(SCAN_CHUNK + 500) {
            insert(1_000_000 + i, 1_000_000 + i + 7);
        }
        for i in 0..(SCAN_CHUNK + 10) {
            insert(500, 500 + if i == SCAN_CHUNK / 2 { 999 } else { 1 });
        }
        insert(i64::MAX, i64::MAX);
        let bounds = DurationBounds::default();
        let mut scan = bounds.begin_scan(1);
        let mut steps = 0;
        while !scan_step(&conn, &mut scan).unwrap() {
            steps += 1;
            bounds.note(1, 5);
            assert_eq!(bounds.get(1), None);
        }
        assert_eq!(steps, 2);
        bounds.finish_scan(scan);
        assert_eq!(bounds.get(1), Some(999));
        // A write made during a scan counts even where the scan has passed.
        let mut scan = bounds.begin_scan(3);
        bounds.note(3, 5000);
        while !scan_step(&conn, &mut scan).unwrap() {}
        bounds.finish_scan(scan);
        assert_eq!(bounds.get(3), Some(5000));
        // A bucket deleted during its scan stays unknown.
        let scan = bounds.begin_scan(2);
        bounds.forget(2);
        bounds.finish_scan(scan);
        assert_eq!(bounds.get(2), None);
    }
}
