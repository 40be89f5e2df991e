//! The hub's side of forwarding (`docs/API.md` §3.12): a device's server
//! sends its own buckets here in chunks. `GET /api/0/forward` lists the
//! devices that do, `GET /api/0/forward/<device>`
//! answers where each of the device's buckets stands,
//! `POST /api/0/forward/<device>` applies one chunk atomically and
//! idempotently, `DELETE /api/0/forward/<device>/<bucket>` drops the copy
//! of a bucket the device deleted. An admin credential, or a write token
//! whose hosts include the bucket's (the gate lets write tokens in; the
//! host is checked here). The work is `aw_folder_sync::forward`'s.

use aw_folder_sync::forward;
use aw_folder_sync::FolderSyncError;
use aw_models::{ForwardChunk, ForwardState, ForwardingDevice};
use rocket::data::Data;
use rocket::http::Status;
use rocket::serde::json::Json;
use rocket::{delete, get, post};

use super::request::{blocking, read_json, Empty};
use crate::auth::Access;
use crate::error::ApiError;
use crate::served::Served;

/// Largest chunk body: 5,000 events of large data.
const CHUNK_LIMIT: rocket::data::ByteUnit = rocket::data::ByteUnit::Mebibyte(64);

fn check_device(device: &str) -> Result<(), ApiError> {
    let fine = !device.is_empty()
        && device.len() <= 128
        && device
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if fine {
        Ok(())
    } else {
        Err(ApiError::BadRequest(format!(
            "Invalid device id '{device}': 1 to 128 letters, digits, '-', '_' or '.'"
        )))
    }
}

fn refused(error: FolderSyncError) -> ApiError {
    match error {
        FolderSyncError::Store(error) => ApiError::Datastore(error),
        FolderSyncError::Refused(message) => ApiError::BadRequest(message),
        other => ApiError::Internal(other.to_string()),
    }
}

/// The refusal of a bucket of `host`: the token may forward others.
fn host_refused(host: &str) -> ApiError {
    ApiError::ForbiddenBucket(format!("This token may not write buckets of host '{host}'"))
}

/// Refuses a caller that may not write the hub's bucket `target` (one
/// that is gone is nobody's).
async fn may_write(access: &Access, served: &Served, target: &str) -> Result<(), ApiError> {
    match served.datastore.bucket(target).await {
        Ok(bucket) if !access.may_write_host(&bucket.hostname) => {
            Err(host_refused(&bucket.hostname))
        }
        _ => Ok(()),
    }
}

/// Every device that forwards to this hub: its hosts, when a chunk of it
/// last came, its buckets' states (a read: the hub's Status page).
#[get("/api/0/forward")]
pub async fn devices(served: &Served) -> Result<Json<Vec<ForwardingDevice>>, ApiError> {
    let datastore = served.datastore.clone();
    let devices = blocking(move || forward::devices(&datastore).map_err(refused)).await?;
    Ok(Json(devices))
}

/// The states of the device's buckets that the caller may write.
#[get("/api/0/forward/<device>")]
pub async fn states(
    device: &str,
    access: &Access,
    served: &Served,
) -> Result<Json<Vec<ForwardState>>, ApiError> {
    check_device(device)?;
    let datastore = served.datastore.clone();
    let owned = device.to_string();
    let states = blocking(move || forward::states(&datastore, &owned).map_err(refused)).await?;
    let buckets = served.datastore.buckets().await?;
    Ok(Json(
        states
            .into_iter()
            .filter(|forwarded| {
                buckets
                    .get(&forwarded.target)
                    .is_none_or(|bucket| access.may_write_host(&bucket.hostname))
            })
            .collect(),
    ))
}

/// Applies one chunk of one of the device's buckets; answers the bucket's
/// state after it.
#[post("/api/0/forward/<device>", data = "<body>")]
pub async fn receive(
    device: &str,
    body: Data<'_>,
    access: &Access,
    served: &Served,
) -> Result<Json<ForwardState>, ApiError> {
    check_device(device)?;
    let chunk: ForwardChunk = read_json(body, CHUNK_LIMIT).await?;
    if !access.may_write_host(&chunk.bucket.hostname) {
        return Err(host_refused(&chunk.bucket.hostname));
    }
    // The copy it goes into, if there is one, must be the caller's too: a
    // device id names no one, the token does.
    let datastore = served.datastore.clone();
    let (owned, bucket) = (device.to_string(), chunk.bucket.clone());
    let (into, _) =
        blocking(move || forward::state_for(&datastore, &owned, &bucket).map_err(refused)).await?;
    may_write(access, served, &into.target).await?;
    let datastore = served.datastore.clone();
    let owned = device.to_string();
    let answer =
        blocking(move || forward::receive(&datastore, &owned, chunk).map_err(refused)).await?;
    served.auth.forget_hosts();
    Ok(Json(answer))
}

/// What a device sends when it renamed a bucket it forwards.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Renamed {
    /// The bucket's id before.
    pub from: String,
    /// The bucket now (its id, host and fields; no events).
    pub bucket: aw_models::Bucket,
}

/// Renames the hub's copy of a bucket the device renamed, in place, and
/// makes its old host an alias of the new (`docs/API.md` §3.15); answers
/// its state. 404 when the hub has no copy of it, 409 when the new host
/// names another device's buckets here: the device then sends it whole.
#[post("/api/0/forward/<device>/rename", data = "<body>")]
pub async fn rename(
    device: &str,
    body: Data<'_>,
    access: &Access,
    served: &Served,
) -> Result<Json<ForwardState>, ApiError> {
    check_device(device)?;
    let renamed: Renamed = read_json(body, super::JSON_LIMIT).await?;
    let datastore = served.datastore.clone();
    let (owned, from) = (device.to_string(), renamed.from.clone());
    let found =
        blocking(move || forward::state(&datastore, &owned, &from).map_err(refused)).await?;
    let Some(found) = found else {
        return Err(ApiError::NotFound(format!(
            "Device '{device}' has forwarded no bucket '{}'",
            renamed.from
        )));
    };
    // The caller must hold the copy's host; the new one is free (checked
    // in `forward::rename`), so its token may take it.
    may_write(access, served, &found.target).await?;
    let datastore = served.datastore.clone();
    let owned = device.to_string();
    let answer = blocking(move || {
        forward::rename(&datastore, &owned, &renamed.from, &renamed.bucket).map_err(|error| {
            match error {
                FolderSyncError::Refused(message) => ApiError::Conflict(message),
                other => refused(other),
            }
        })
    })
    .await?;
    served.auth.hosts_changed()?;
    match answer {
        Some(answer) => Ok(Json(answer)),
        None => Err(ApiError::NotFound(format!(
            "Device '{device}' has no copy of bucket '{}' here",
            found.bucket
        ))),
    }
}

/// Drops the hub's copy of a bucket the device deleted; 404 when the hub
/// has none.
#[delete("/api/0/forward/<device>/<bucket_id>")]
pub async fn forget(
    device: &str,
    bucket_id: &str,
    access: &Access,
    served: &Served,
) -> Result<Empty, ApiError> {
    check_device(device)?;
    let datastore = served.datastore.clone();
    let (owned, bucket) = (device.to_string(), bucket_id.to_string());
    let found =
        blocking(move || forward::state(&datastore, &owned, &bucket).map_err(refused)).await?;
    let Some(found) = found else {
        return Err(ApiError::NotFound(format!(
            "Device '{device}' has forwarded no bucket '{bucket_id}'"
        )));
    };
    may_write(access, served, &found.target).await?;
    let datastore = served.datastore.clone();
    let (owned, bucket) = (device.to_string(), bucket_id.to_string());
    blocking(move || forward::forget(&datastore, &owned, &bucket).map_err(refused)).await?;
    served.auth.forget_hosts();
    Ok(Empty(Status::Ok))
}
