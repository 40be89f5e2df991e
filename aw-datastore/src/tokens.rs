//! API tokens as stored: one key_value entry per token under
//! [`TOKEN_PREFIX`], its listing's fields and the hash of the secret, so
//! tokens move with the file (backups, restore) and aw-server-rust, which
//! reads only `settings.`, ignores them. The secret never reaches this
//! crate; hashing and checking it are the server's.

use aw_models::{Timestamp, TokenInfo};
use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use crate::key_value::{self, TOKEN_PREFIX};
use crate::{DatastoreError, Result};

/// A token as the file keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredToken {
    /// Everything a listing shows.
    #[serde(flatten)]
    pub info: TokenInfo,
    /// The hash of the secret, as the server computes it (hex).
    pub hash: String,
}

/// Every stored token, by name; an entry that does not parse is skipped
/// with a warning (it authenticates nobody).
pub(crate) fn list(conn: &Connection) -> Result<Vec<StoredToken>> {
    let mut tokens = Vec::new();
    for (key, value) in key_value::under(conn, TOKEN_PREFIX)? {
        match value.as_deref().map(serde_json::from_str::<StoredToken>) {
            Some(Ok(token)) => tokens.push(token),
            _ => log::warn!("Ignoring the unreadable token record {key:?}"),
        }
    }
    Ok(tokens)
}

/// Stores a new token; false, and nothing written, when its name is taken.
pub(crate) fn add(conn: &Connection, token: &StoredToken) -> Result<bool> {
    let key = format!("{TOKEN_PREFIX}{}", token.info.name);
    if key_value::entry(conn, &key)?.is_some() {
        return Ok(false);
    }
    key_value::put(conn, &key, &encode(token)?)?;
    Ok(true)
}

/// Removes the token named `name`; false when there is none.
pub(crate) fn remove(conn: &Connection, name: &str) -> Result<bool> {
    let key = format!("{TOKEN_PREFIX}{name}");
    if key_value::entry(conn, &key)?.is_none() {
        return Ok(false);
    }
    key_value::delete(conn, &key)?;
    Ok(true)
}

/// Records when tokens were last used; names no longer stored are skipped
/// (revoked meanwhile), and so is a time older than the stored one.
pub(crate) fn touch(conn: &Connection, used: &[(String, Timestamp)]) -> Result<()> {
    for (name, when) in used {
        let key = format!("{TOKEN_PREFIX}{name}");
        let Some(text) = key_value::get(conn, &key)? else {
            continue;
        };
        let Ok(mut token) = serde_json::from_str::<StoredToken>(&text) else {
            continue;
        };
        if token.info.last_used.is_some_and(|last| last >= *when) {
            continue;
        }
        token.info.last_used = Some(*when);
        key_value::put(conn, &key, &encode(&token)?)?;
    }
    Ok(())
}

fn encode(token: &StoredToken) -> Result<String> {
    serde_json::to_string(token).map_err(|error| DatastoreError::InvalidInput(error.to_string()))
}
