//! aw-server-rust's file format for files other than this database: the
//! copies folder sync reads and writes (the `aw-folder-sync` crate) have
//! the same schema, so they are created, checked and read with the same
//! statements and text forms as this database, kept here in one place.
//!
//! Every function takes a connection its caller opened; none opens a file
//! or knows where it is.

use aw_models::{Bucket, Data, Timestamp};
use rusqlite::{params, Connection, OptionalExtension};

pub use crate::schema::NEWEST_COMPATIBLE_VERSION;
use crate::Result;

/// One stored event as replication sees it: the row as it is, its data
/// text not decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRow {
    /// The event's id in its file.
    pub id: i64,
    /// Start, nanoseconds since the epoch.
    pub start: i64,
    /// End, nanoseconds since the epoch.
    pub end: i64,
    /// The data object as stored JSON text.
    pub data: String,
}

impl StoredRow {
    fn read(row: &rusqlite::Row<'_>) -> rusqlite::Result<StoredRow> {
        Ok(StoredRow {
            id: row.get(0)?,
            start: row.get(1)?,
            end: row.get(2)?,
            data: row.get(3)?,
        })
    }
}

/// Brings a file to the schema this server writes (creating it in an
/// empty file); refuses one newer than it can read.
pub fn create_schema(conn: &Connection) -> Result<()> {
    crate::schema::migrate(conn)
}

/// The file's schema version (`user_version`).
pub fn schema_version(conn: &Connection) -> Result<i64> {
    crate::schema::version(conn)
}

/// Every bucket of the file with its row id, by name.
pub fn buckets(conn: &Connection) -> rusqlite::Result<Vec<(i64, Bucket)>> {
    conn.prepare_cached(
        "SELECT id, name, type, client, hostname, created, data FROM buckets ORDER BY name",
    )?
    .query_map([], crate::queries::bucket_parts)?
    .collect()
}

/// Up to `limit` events of the bucket (its row `bucket_row`) with ids in
/// `(after, through]`, in id order.
///
/// A walk of the table in id order from `after`, which is the order
/// events were added in. Through the bucket's time index each call would
/// sort all of the bucket's later events by id (a year took minutes), and
/// a pass with nothing new would scan the whole bucket.
pub fn rows_by_id(
    conn: &Connection,
    bucket_row: i64,
    after: i64,
    through: i64,
    limit: usize,
) -> rusqlite::Result<Vec<StoredRow>> {
    conn.prepare_cached(
        "SELECT id, starttime, endtime, data FROM events NOT INDEXED
         WHERE bucketrow = ?1 AND id > ?2 AND id <= ?3 ORDER BY id LIMIT ?4",
    )?
    .query_map(
        params![
            bucket_row,
            after,
            through,
            i64::try_from(limit).unwrap_or(i64::MAX)
        ],
        StoredRow::read,
    )?
    .collect()
}

/// The bucket's events starting at or after `start` with ids up to
/// `through`, in id order: the newest events, which heartbeats extend.
pub fn rows_from(
    conn: &Connection,
    bucket_row: i64,
    start: i64,
    through: i64,
) -> rusqlite::Result<Vec<StoredRow>> {
    conn.prepare_cached(
        "SELECT id, starttime, endtime, data FROM events
             INDEXED BY events_bucketrow_starttime_endtime_index
         WHERE bucketrow = ?1 AND starttime >= ?2 AND id <= ?3 ORDER BY id",
    )?
    .query_map(params![bucket_row, start, through], StoredRow::read)?
    .collect()
}

/// Up to `limit` events of the bucket starting in `[low, high]` (both
/// included), in (start, id) order, after the event `after` (its start
/// and id) when given: a time range of the bucket read in pages.
pub fn rows_by_start(
    conn: &Connection,
    bucket_row: i64,
    low: i64,
    high: i64,
    after: Option<(i64, i64)>,
    limit: usize,
) -> rusqlite::Result<Vec<StoredRow>> {
    let (after_start, after_id) = after.unwrap_or((i64::MIN, i64::MIN));
    conn.prepare_cached(
        "SELECT id, starttime, endtime, data FROM events
             INDEXED BY events_bucketrow_starttime_endtime_index
         WHERE bucketrow = ?1 AND starttime >= max(?2, ?4) AND starttime <= ?3
             AND (starttime > ?4 OR id > ?5)
         ORDER BY starttime, id LIMIT ?6",
    )?
    .query_map(
        params![
            bucket_row,
            low,
            high,
            after_start,
            after_id,
            i64::try_from(limit).unwrap_or(i64::MAX)
        ],
        StoredRow::read,
    )?
    .collect()
}

/// One event of the bucket by id.
pub fn row_by_id(
    conn: &Connection,
    bucket_row: i64,
    id: i64,
) -> rusqlite::Result<Option<StoredRow>> {
    conn.prepare_cached(
        "SELECT id, starttime, endtime, data FROM events WHERE id = ?1 AND bucketrow = ?2",
    )?
    .query_row(params![id, bucket_row], StoredRow::read)
    .optional()
}

/// The event of this id, in whatever bucket: for a file that keeps each
/// event under its id in another database (a sync copy).
pub fn row_with_id(conn: &Connection, id: i64) -> rusqlite::Result<Option<StoredRow>> {
    conn.prepare_cached("SELECT id, starttime, endtime, data FROM events WHERE id = ?1")?
        .query_row([id], StoredRow::read)
        .optional()
}

/// A data object as the file stores it.
pub fn data_text(data: &Data) -> String {
    crate::rows::data_text(data)
}

/// A bucket's creation time as the file stores it.
pub fn created_text(created: Timestamp) -> String {
    crate::rows::created_text(created)
}
