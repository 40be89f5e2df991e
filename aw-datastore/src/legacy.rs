//! Reading the Python aw-server's database: aw-core's peewee storage,
//! `peewee-sqlite.v2.db`, with the tables `bucketmodel` (`key`, `id`,
//! `created`, `name`, `type`, `client`, `hostname`, `datastr` in later
//! versions) and `eventmodel` (`id`, `bucket_id` = the bucket's `key`,
//! `timestamp`, `duration` in seconds, `datastr` = the data as JSON text).
//!
//! peewee writes times as Python prints them: `2020-01-02 03:04:05.123456`
//! followed by `+00:00` for aware times (aw-core's), or nothing in old
//! files, which meant UTC. Durations are stored as numbers (or, rarely,
//! decimal text).
//!
//! The file is opened read-only and is never changed. Before anything is
//! read, SQLite's `quick_check` walks the whole file, so a damaged file is
//! refused whole instead of being half read. An event that cannot be read
//! (data that is not a JSON object, a time that is not one) is left out
//! and counted, as the reference leaves out events whose data is not JSON.
//! Storing what is read is the caller's (`Datastore::import_bucket` and
//! `Datastore::import_events`, so the privacy rules apply and a re-run
//! skips what is already there).

use std::path::{Path, PathBuf};

use aw_models::{Bucket, BucketMetadata, Data, Duration, Event, Timestamp};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};

use crate::{DatastoreError, Result};

/// The Python server's database file name in its data folder.
pub const LEGACY_FILE_NAME: &str = "peewee-sqlite.v2.db";

/// Its name in the Python server's testing mode.
pub const LEGACY_TESTING_FILE_NAME: &str = "peewee-sqlite-testing.v2.db";

/// An open legacy database, checked and ready to read.
#[derive(Debug)]
pub struct LegacyDatabase {
    conn: Connection,
    path: PathBuf,
    /// Whether `bucketmodel` has the `datastr` column (added in 2021).
    bucket_data: bool,
}

/// A bucket of a legacy database.
#[derive(Debug, Clone)]
pub struct LegacyBucket {
    /// The bucket as this server stores it (no events).
    pub bucket: Bucket,
    /// How many events it has in the legacy file.
    pub events: u64,
    /// Its key in `bucketmodel`, which events refer to.
    key: i64,
}

/// A chunk of a legacy bucket's events, ready to import.
#[derive(Debug)]
pub struct LegacyChunk {
    /// The events, each valid for storing (`PreparedEvent::new` takes it).
    pub events: Vec<Event>,
    /// Events of this chunk that could not be read and were left out.
    pub unreadable: u64,
}

/// Events per chunk read.
const CHUNK: usize = 5000;

/// Why a legacy file was not read; the message says which file and what.
fn refused(path: &Path, why: impl std::fmt::Display) -> DatastoreError {
    DatastoreError::InvalidInput(format!(
        "{} is not a readable Python aw-server database: {why}",
        path.display()
    ))
}

impl LegacyDatabase {
    /// Opens `path` read-only and checks it: an SQLite file that SQLite
    /// finds undamaged, with the peewee storage's two tables. A file
    /// another program locks gets [`DatastoreError::Storage`] with
    /// SQLite's "database is locked", after waiting a few seconds.
    pub fn open(path: &Path) -> Result<LegacyDatabase> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        let columns = |table: &str| -> Result<Vec<String>> {
            let mut statement = conn
                .prepare(&format!("PRAGMA table_info({table})"))
                .map_err(|error| not_sqlite(path, error))?;
            let names = statement
                .query_map([], |row| row.get::<_, String>(1))
                .and_then(Iterator::collect)
                .map_err(|error| not_sqlite(path, error))?;
            Ok(names)
        };
        let buckets = columns("bucketmodel")?;
        let events = columns("eventmodel")?;
        for (table, have, need) in [
            (
                "bucketmodel",
                &buckets,
                &["key", "id", "created", "type", "client", "hostname"][..],
            ),
            (
                "eventmodel",
                &events,
                &["bucket_id", "timestamp", "duration", "datastr"][..],
            ),
        ] {
            if let Some(missing) = need.iter().find(|name| !have.iter().any(|h| h == *name)) {
                return Err(refused(
                    path,
                    format!("table {table} has no column {missing}"),
                ));
            }
        }
        let check: String = conn
            .query_row("PRAGMA quick_check(1)", [], |row| row.get(0))
            .map_err(|error| not_sqlite(path, error))?;
        if check != "ok" {
            return Err(refused(path, format!("the file is damaged ({check})")));
        }
        Ok(LegacyDatabase {
            bucket_data: buckets.iter().any(|name| name == "datastr"),
            conn,
            path: path.to_path_buf(),
        })
    }

    /// The file read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every bucket, in the order they were created, with its event count.
    pub fn buckets(&self) -> Result<Vec<LegacyBucket>> {
        let data = if self.bucket_data { "datastr" } else { "NULL" };
        let mut statement = self.conn.prepare(&format!(
            "SELECT key, id, type, client, hostname, created, {data},
                    (SELECT count(*) FROM eventmodel WHERE bucket_id = bucketmodel.key)
             FROM bucketmodel ORDER BY key"
        ))?;
        let rows = statement.query_map([], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                text(row.get_ref(1)?),
                text(row.get_ref(2)?),
                text(row.get_ref(3)?),
                text(row.get_ref(4)?),
                text(row.get_ref(5)?),
                row.get::<_, Option<String>>(6).unwrap_or(None),
                row.get::<_, i64>(7)?,
            ))
        })?;
        let mut buckets = Vec::new();
        for row in rows {
            let (key, id, kind, client, hostname, created, data, events) = row?;
            if id.is_empty() {
                return Err(refused(&self.path, format!("bucket {key} has no id")));
            }
            let created = parse_time(&created).ok_or_else(|| {
                refused(
                    &self.path,
                    format!("bucket {id} has an unreadable creation time {created:?}"),
                )
            })?;
            // The Python server wrote `{}` or nothing; anything else that is
            // not an object is dropped rather than failing the bucket.
            let data = data
                .and_then(|text| serde_json::from_str::<Data>(&text).ok())
                .unwrap_or_default();
            buckets.push(LegacyBucket {
                key,
                events: u64::try_from(events).unwrap_or(0),
                bucket: Bucket {
                    id,
                    kind,
                    client,
                    hostname,
                    created: Some(created),
                    data,
                    metadata: BucketMetadata::default(),
                    events: None,
                    last_updated: None,
                },
            });
        }
        Ok(buckets)
    }

    /// Reads the events of `bucket` oldest first and hands them to `each`
    /// in chunks; `each`'s error stops the reading and is returned.
    pub fn read_events(
        &self,
        bucket: &LegacyBucket,
        mut each: impl FnMut(LegacyChunk) -> Result<()>,
    ) -> Result<()> {
        let mut statement = self.conn.prepare(
            "SELECT timestamp, duration, datastr FROM eventmodel
             WHERE bucket_id = ?1 ORDER BY timestamp, id",
        )?;
        let mut rows = statement.query([bucket.key])?;
        let mut chunk = LegacyChunk {
            events: Vec::with_capacity(CHUNK),
            unreadable: 0,
        };
        while let Some(row) = rows.next()? {
            match read_event(row.get_ref(0)?, row.get_ref(1)?, row.get_ref(2)?) {
                Some(event) => chunk.events.push(event),
                None => chunk.unreadable += 1,
            }
            if chunk.events.len() + chunk.unreadable as usize >= CHUNK {
                let full = std::mem::replace(
                    &mut chunk,
                    LegacyChunk {
                        events: Vec::with_capacity(CHUNK),
                        unreadable: 0,
                    },
                );
                each(full)?;
            }
        }
        if !chunk.events.is_empty() || chunk.unreadable > 0 {
            each(chunk)?;
        }
        Ok(())
    }
}

/// An error of the first reads: a file that is not SQLite at all (or is
/// encrypted) says so; a lock stays a storage error, which may pass.
fn not_sqlite(path: &Path, error: rusqlite::Error) -> DatastoreError {
    match error.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) => refused(path, "it is not an SQLite database"),
        Some(rusqlite::ErrorCode::DatabaseCorrupt) => refused(path, "the file is damaged"),
        _ => DatastoreError::Storage(error),
    }
}

/// A column as text; numbers as SQLite prints them, `NULL` as empty.
fn text(value: ValueRef<'_>) -> String {
    match value {
        ValueRef::Text(bytes) | ValueRef::Blob(bytes) => {
            String::from_utf8_lossy(bytes).into_owned()
        }
        ValueRef::Integer(number) => number.to_string(),
        ValueRef::Real(number) => number.to_string(),
        ValueRef::Null => String::new(),
    }
}

/// One event row, or `None` when a part of it cannot be read.
fn read_event(
    timestamp: ValueRef<'_>,
    duration: ValueRef<'_>,
    data: ValueRef<'_>,
) -> Option<Event> {
    let timestamp = match timestamp {
        ValueRef::Text(bytes) => parse_time(std::str::from_utf8(bytes).ok()?)?,
        _ => return None,
    };
    let seconds = match duration {
        ValueRef::Integer(number) => number as f64,
        ValueRef::Real(number) => number,
        ValueRef::Text(bytes) => std::str::from_utf8(bytes).ok()?.trim().parse().ok()?,
        _ => return None,
    };
    let duration = Duration::from_secs_f64(seconds).ok()?;
    let data: Data = match data {
        ValueRef::Text(bytes) | ValueRef::Blob(bytes) => serde_json::from_slice(bytes).ok()?,
        _ => return None,
    };
    let event = Event {
        id: None,
        timestamp,
        duration,
        data,
    };
    // What the store would refuse (an end past 2262) is unreadable too.
    event.validate().ok()?;
    Some(event)
}

/// A time as peewee stores it: `YYYY-MM-DD HH:MM:SS[.ffffff]` with an
/// offset (`+00:00`), or without one for UTC; a `T` is accepted too.
fn parse_time(text: &str) -> Option<Timestamp> {
    let text = text.trim();
    if let Ok(time) = Timestamp::parse(text) {
        return Some(time);
    }
    // No offset: peewee's naive times, which aw-core wrote in UTC.
    let has_offset = text
        .get(19..)
        .is_some_and(|rest| rest.contains(['+', '-', 'Z', 'z']));
    if has_offset {
        return None;
    }
    Timestamp::parse(&format!("{text}+00:00")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peewee_times_parse_with_and_without_offsets() {
        let micro = Timestamp::parse("2020-01-02T03:04:05.123456Z").unwrap();
        for text in [
            "2020-01-02 03:04:05.123456+00:00",
            "2020-01-02 03:04:05.123456",
            "2020-01-02T03:04:05.123456Z",
            "2020-01-02 05:04:05.123456+02:00",
        ] {
            assert_eq!(parse_time(text), Some(micro), "{text}");
        }
        assert_eq!(
            parse_time("2020-01-02 03:04:05"),
            Timestamp::parse("2020-01-02T03:04:05Z").ok()
        );
        for bad in ["", "yesterday", "2020-01-02", "2020-13-02 03:04:05"] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn unreadable_parts_leave_the_event_out() {
        let time = ValueRef::Text(b"2020-01-02 03:04:05+00:00");
        let data = ValueRef::Text(br#"{"app": "x"}"#);
        assert!(read_event(time, ValueRef::Real(1.5), data).is_some());
        assert!(read_event(time, ValueRef::Text(b"1.5"), data).is_some());
        assert!(read_event(time, ValueRef::Real(-1.0), data).is_none());
        assert!(read_event(time, ValueRef::Null, data).is_none());
        assert!(read_event(ValueRef::Integer(5), ValueRef::Real(1.0), data).is_none());
        for bad in [&b"[1]"[..], b"{", b"null"] {
            assert!(
                read_event(time, ValueRef::Real(1.0), ValueRef::Text(bad)).is_none(),
                "{bad:?}"
            );
        }
    }
}
