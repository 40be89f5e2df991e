//! The `key_value` table: aw-server-rust's settings and this server's own
//! records, each under its namespace, read and written here only.
//!
//! The namespaces, every key this server writes:
//!
//! | key | what | owner |
//! | --- | --- | --- |
//! | `settings.<key>` | the API's settings, as aw-server-rust stores them ([`SETTINGS_PREFIX`]) | `writes.rs`, `queries.rs` |
//! | `aw-server.bucket-stats` | the bucket facts of the last clean close ([`STATS_KEY`]) | `stats.rs` |
//! | `aw-server.history-changes.<bucket>` | the bucket's change counter ([`CHANGES_PREFIX`]) | `changes.rs` |
//! | `aw-server.history-changed.<bucket>` | where the counted changes were ([`CHANGED_PREFIX`]) | `changes.rs` |
//! | `aw-server.sync-deleted.<bucket>` | time deleted here from a pulled copy ([`DELETED_PREFIX`]) | `changes.rs` |
//! | `aw-server.sync-<key>` | the state of replication passes ([`REPLICA_PREFIX`]) | `replica.rs`, for its callers |
//! | `aw-server.token.<name>` | an API token, its secret hashed ([`TOKEN_PREFIX`]) | `tokens.rs` |
//! | `aw-server.host-alias.<alias>` | the host an alias names ([`HOST_ALIAS_PREFIX`]) | `hosts.rs` |
//! | `aw-server.renamed.<bucket>` | the id a bucket was renamed to ([`RENAMED_PREFIX`]) | `hosts.rs`, for replication |
//! | `aw-server.hosts-journal` | a rename or merge of hosts under way | `hosts.rs`, for its caller |
//! | `aw-server.cache-hints` | what the cache of answers computes again after a start ([`CACHE_HINTS_KEY`]) | `lib.rs`, for its caller |
//! | `aw-server.owner` | the person whose file this is on a server that hosts several ([`OWNER_KEY`]) | `lib.rs`, for its caller |
//! | `aw-server.alerts-state` | the thresholds fired today, the digests sent and the messages still to deliver ([`ALERTS_STATE_KEY`]) | `lib.rs`, for its caller |
//!
//! aw-server-rust reads only `settings.`, so the others travel with the
//! file and are ignored there. `last_modified` is seconds, as there.

use aw_models::Timestamp;
use rusqlite::{params, Connection, OptionalExtension};

/// Settings, as aw-server-rust stores them.
pub(crate) const SETTINGS_PREFIX: &str = "settings.";
/// The stored bucket facts (`stats.rs`).
pub(crate) const STATS_KEY: &str = "aw-server.bucket-stats";
/// A bucket's change counter, then the bucket id (`changes.rs`).
pub(crate) const CHANGES_PREFIX: &str = "aw-server.history-changes.";
/// Where a bucket's counted changes were, then the bucket id (`changes.rs`).
pub(crate) const CHANGED_PREFIX: &str = "aw-server.history-changed.";
/// What was deleted here from a pulled copy, then its id (`changes.rs`).
pub(crate) const DELETED_PREFIX: &str = "aw-server.sync-deleted.";
/// The state replication keeps, then the replica's own key
/// (`replica.rs`); a key under `deleted.` would be [`DELETED_PREFIX`]'s.
pub(crate) const REPLICA_PREFIX: &str = "aw-server.sync-";
/// An API token, then its name (`tokens.rs`).
pub(crate) const TOKEN_PREFIX: &str = "aw-server.token.";
/// A host alias, then the alias (`hosts.rs`).
pub(crate) const HOST_ALIAS_PREFIX: &str = "aw-server.host-alias.";
/// A renamed bucket's old id, then the new one's (`hosts.rs`).
pub(crate) const RENAMED_PREFIX: &str = "aw-server.renamed.";
/// A cache's hints for the next start, as its owner writes them.
pub(crate) const CACHE_HINTS_KEY: &str = "aw-server.cache-hints";
/// Whose file this is, on a server that hosts several people (aw-users).
pub(crate) const OWNER_KEY: &str = "aw-server.owner";
/// What alerts fired today and still have to deliver (aw-alerts).
pub(crate) const ALERTS_STATE_KEY: &str = "aw-server.alerts-state";

/// The value under `key`; `None` when absent or NULL.
pub(crate) fn get(conn: &Connection, key: &str) -> rusqlite::Result<Option<String>> {
    Ok(entry(conn, key)?.flatten())
}

/// Whether `key` is there (`Some`), and its value, which may be NULL.
pub(crate) fn entry(conn: &Connection, key: &str) -> rusqlite::Result<Option<Option<String>>> {
    conn.prepare_cached("SELECT value FROM key_value WHERE key = ?1")?
        .query_row([key], |row| row.get(0))
        .optional()
}

/// Stores `value` under `key`, replacing what was there.
pub(crate) fn put(conn: &Connection, key: &str, value: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO key_value (key, value, last_modified) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![key, value, now()])?;
    Ok(())
}

/// Removes `key`; an absent key is fine.
pub(crate) fn delete(conn: &Connection, key: &str) -> rusqlite::Result<()> {
    conn.prepare_cached("DELETE FROM key_value WHERE key = ?1")?
        .execute([key])?;
    Ok(())
}

/// Adds one to the counter under `key` (absent counts as 0).
pub(crate) fn bump(conn: &Connection, key: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO key_value (key, value, last_modified) VALUES (?1, '1', ?2)
         ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1,
             last_modified = ?2",
    )?
    .execute(params![key, now()])?;
    Ok(())
}

/// Every key starting with `prefix` (a non-empty ASCII text), with its
/// value. A range on the primary key selects the prefix exactly (`LIKE`
/// would ignore case and read `_` as a wildcard).
pub(crate) fn under(
    conn: &Connection,
    prefix: &str,
) -> rusqlite::Result<Vec<(String, Option<String>)>> {
    let mut upper = prefix.to_string();
    let after = upper
        .pop()
        .and_then(|last| char::from_u32(last as u32 + 1))
        .unwrap_or(char::MAX);
    upper.push(after);
    conn.prepare_cached("SELECT key, value FROM key_value WHERE key >= ?1 AND key < ?2")?
        .query_map([prefix, upper.as_str()], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })?
        .collect()
}

/// The stored key of a replica's state `key` (`replica.rs`, and the
/// renamed copies of `hosts.rs`); the writer's own records under the same
/// prefix ([`DELETED_PREFIX`]) are not a replica's to read or write.
pub(crate) fn replica_key(key: &str) -> crate::Result<String> {
    let stored = format!("{REPLICA_PREFIX}{key}");
    if stored.starts_with(DELETED_PREFIX) {
        return Err(crate::DatastoreError::InvalidInput(format!(
            "a replica's state cannot be kept under {key:?}"
        )));
    }
    Ok(stored)
}

fn now() -> i64 {
    Timestamp::now().nanos() / 1_000_000_000
}
