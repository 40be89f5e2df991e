//! The settings key/value store (`docs/API.md` §3.7).

use std::collections::BTreeMap;

use aw_datastore::{PrivacyRules, PRIVACY_FILTERS_KEY};
use aw_models::SettingValue;
use rocket::data::Data;
use rocket::http::Status;
use rocket::serde::json::Json;
use rocket::{delete, get, post, State};

use super::request::{blocking, read_json, Empty, JSON_LIMIT};
use crate::error::ApiError;
use crate::ServerState;

/// Keys this long or longer are refused, as the anchor does.
const MAX_KEY_CHARS: usize = 128;

/// Every setting.
#[get("/api/0/settings")]
pub async fn list(
    state: &State<ServerState>,
) -> Result<Json<BTreeMap<String, SettingValue>>, ApiError> {
    Ok(Json(state.datastore.settings().await?))
}

/// One setting; `null` if unset.
#[get("/api/0/settings/<key>")]
pub async fn get(key: &str, state: &State<ServerState>) -> Result<Json<SettingValue>, ApiError> {
    check_key(key)?;
    let value = state.datastore.setting(key).await?;
    Ok(Json(value.unwrap_or(SettingValue::Null)))
}

/// Stores any JSON value (201). Storing `null` deletes the key, which reads
/// back the same. `privacy_filters` must be a valid rule set (400 naming
/// the rule otherwise, and the rules in force stay): unlike the reference,
/// which stores anything and ignores rules it cannot use.
#[post("/api/0/settings/<key>", data = "<body>")]
pub async fn set(key: &str, body: Data<'_>, state: &State<ServerState>) -> Result<Empty, ApiError> {
    check_key(key)?;
    let value: SettingValue = read_json(body, JSON_LIMIT).await?;
    if key == PRIVACY_FILTERS_KEY {
        // The query language's size limit for the patterns too.
        PrivacyRules::compile(&value, aw_query::limits::MAX_REGEX_SIZE)
            .map_err(|error| ApiError::BadRequest(format!("Invalid privacy filters: {error}")))?;
    }
    let datastore = state.datastore.clone();
    let key = key.to_string();
    blocking(move || {
        if value.is_null() {
            Ok(datastore.delete_setting(&key)?)
        } else {
            Ok(datastore.set_setting(&key, value)?)
        }
    })
    .await?;
    Ok(Empty(Status::Created))
}

/// Deletes a setting; unset keys are fine.
#[delete("/api/0/settings/<key>")]
pub async fn delete(key: &str, state: &State<ServerState>) -> Result<Empty, ApiError> {
    check_key(key)?;
    let datastore = state.datastore.clone();
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
