//! The settings key/value store (`docs/API.md` §3.7).
//!
//! Each setting's answer carries an `ETag` (a digest of the stored value),
//! and a write or delete with `If-Match` happens only if the value is still
//! the one the client read: two dashboard tabs editing the categories
//! would otherwise drop the earlier save without a word. The comparison and
//! the write are one step: conditional writes take the `WRITES` lock in turn.

use std::collections::BTreeMap;

use aw_datastore::{PrivacyRules, PRIVACY_FILTERS_KEY};
use aw_models::SettingValue;
use rocket::data::Data;
use rocket::http::{Header, Status};
use rocket::request::{FromRequest, Outcome, Request};
use rocket::serde::json::Json;
use rocket::tokio::sync::Mutex;
use rocket::{delete, get, post, Responder};
use sha2::{Digest, Sha256};

use super::request::{blocking, read_json, Empty, JSON_LIMIT};
use crate::error::ApiError;
use crate::served::Served;

/// Keys this long or longer are refused, as the anchor does.
const MAX_KEY_CHARS: usize = 128;

/// Every setting.
#[get("/api/0/settings")]
pub async fn list(served: &Served) -> Result<Json<BTreeMap<String, SettingValue>>, ApiError> {
    Ok(Json(served.datastore.settings().await?))
}

/// Conditional writes, one at a time, so that no other write comes
/// between a value's check and its replacement. Every write of a setting
/// goes through this module while the server runs (it holds the file).
static WRITES: Mutex<()> = Mutex::const_new(());

/// A setting's answer: the value and its tag.
#[derive(Debug, Responder)]
pub struct Tagged<T> {
    inner: T,
    etag: Header<'static>,
}

/// The entity tag of a stored value (`null` when unset): the first 16 hex
/// digits of the SHA-256 of its JSON text, quoted.
pub fn etag(value: &SettingValue) -> String {
    let text = serde_json::to_string(value).unwrap_or_default();
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest[..8]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("\"{hex}\"")
}

/// The `If-Match` header: the tags the client accepts (`*`: any stored
/// value), or `None` when absent (unconditional, as aw-webui writes).
#[derive(Debug)]
pub struct IfMatch(Option<Vec<String>>);

#[rocket::async_trait]
impl<'r> FromRequest<'r> for IfMatch {
    type Error = std::convert::Infallible;

    async fn from_request(request: &'r Request<'_>) -> Outcome<Self, Self::Error> {
        let tags: Vec<String> = request
            .headers()
            .get("If-Match")
            .flat_map(|line| line.split(','))
            .map(|tag| tag.trim().trim_start_matches("W/").to_string())
            .filter(|tag| !tag.is_empty())
            .collect();
        Outcome::Success(IfMatch((!tags.is_empty()).then_some(tags)))
    }
}

impl IfMatch {
    /// Refuses with 412 when the stored value of `key` (`Null` when unset)
    /// is not one the client accepts; without `If-Match`, reads nothing.
    async fn check(&self, key: &str, served: &Served) -> Result<(), ApiError> {
        let Some(tags) = &self.0 else {
            return Ok(());
        };
        let current = served.datastore.setting(key).await?;
        let current = current.unwrap_or(SettingValue::Null);
        let tag = etag(&current);
        if tags
            .iter()
            .any(|wanted| *wanted == tag || (wanted == "*" && !current.is_null()))
        {
            return Ok(());
        }
        Err(ApiError::PreconditionFailed(format!(
            "The setting '{key}' changed since it was read (it is now {tag}, not {}): read it again and redo the change",
            tags.join(", ")
        )))
    }
}

/// One setting; `null` if unset. The `ETag` header is the value's tag.
#[get("/api/0/settings/<key>")]
pub async fn get(key: &str, served: &Served) -> Result<Tagged<Json<SettingValue>>, ApiError> {
    check_key(key)?;
    let value = served.datastore.setting(key).await?;
    let value = value.unwrap_or(SettingValue::Null);
    let etag = Header::new("ETag", etag(&value));
    Ok(Tagged {
        inner: Json(value),
        etag,
    })
}

/// Stores any JSON value (201, with the new `ETag`), if `If-Match` allows.
/// Storing `null` deletes the key, which reads back the same.
/// `privacy_filters` must be a valid rule set (400 naming the rule
/// otherwise, and the rules in force stay): unlike the reference, which
/// stores anything and ignores rules it cannot use. `aw-notify` must be
/// what aw-webui's loader takes (`aw_alerts::goals`).
#[post("/api/0/settings/<key>", data = "<body>")]
pub async fn set(
    key: &str,
    body: Data<'_>,
    if_match: IfMatch,
    served: &Served,
) -> Result<Tagged<Empty>, ApiError> {
    check_key(key)?;
    let value: SettingValue = read_json(body, JSON_LIMIT).await?;
    if key == PRIVACY_FILTERS_KEY {
        // The query language's size limit for the patterns too.
        PrivacyRules::compile(&value, aw_query::limits::MAX_REGEX_SIZE)
            .map_err(|error| ApiError::BadRequest(format!("Invalid privacy filters: {error}")))?;
    }
    if key == aw_alerts::SETTING_KEY {
        aw_alerts::parse_goals(&value)
            .map_err(|error| ApiError::BadRequest(format!("Invalid {key} setting: {error}")))?;
    }
    let etag = Header::new("ETag", etag(&value));
    let _turn = WRITES.lock().await;
    if_match.check(key, served).await?;
    let datastore = served.datastore.clone();
    let key = key.to_string();
    blocking(move || {
        if value.is_null() {
            Ok(datastore.delete_setting(&key)?)
        } else {
            Ok(datastore.set_setting(&key, value)?)
        }
    })
    .await?;
    Ok(Tagged {
        inner: Empty(Status::Created),
        etag,
    })
}

/// Deletes a setting, if `If-Match` allows; unset keys are fine.
#[delete("/api/0/settings/<key>")]
pub async fn delete(key: &str, if_match: IfMatch, served: &Served) -> Result<Empty, ApiError> {
    check_key(key)?;
    let _turn = WRITES.lock().await;
    if_match.check(key, served).await?;
    let datastore = served.datastore.clone();
    let key = key.to_string();
    blocking(move || Ok(datastore.delete_setting(&key)?)).await?;
    Ok(Empty(Status::Ok))
}

fn check_key(key: &str) -> Result<(), ApiError> {
    if key.chars().count() >= MAX_KEY_CHARS {
        return Err(ApiError::BadRequest("Too long key".to_string()));
    }
    Ok(())
}
