//! Bucket listing, lookup, creation and deletion (`docs/API.md` §3.2).

use std::collections::BTreeMap;

use aw_datastore::DatastoreError;
use aw_models::{Bucket, CreateBucket, UpdateBucket};
use rocket::data::Data;
use rocket::http::Status;
use rocket::serde::json::Json;
use rocket::{delete, get, post, put, State};

use super::request::{blocking, read_json, Empty, JSON_LIMIT};
use crate::auth::Access;
use crate::error::ApiError;
use crate::served::Served;
use crate::ServerState;

/// The host name that watchers send to mean "the server's own".
const LOCAL_HOSTNAME: &str = "!local";

/// Every bucket by id, `events: null`; for a write token, its hosts'
/// buckets only.
#[get("/api/0/buckets")]
pub async fn list(
    access: &Access,
    served: &Served,
) -> Result<Json<BTreeMap<String, Bucket>>, ApiError> {
    let mut buckets = served.datastore.buckets().await?;
    buckets.retain(|_, bucket| access.may_see_host(&bucket.hostname));
    Ok(Json(buckets))
}

/// One bucket, with current metadata.
#[get("/api/0/buckets/<bucket_id>")]
pub async fn get(bucket_id: &str, served: &Served) -> Result<Json<Bucket>, ApiError> {
    Ok(Json(served.datastore.bucket(bucket_id).await?))
}

/// Creates a bucket: 200, or 304 when it exists (left unchanged). The id is
/// the path's; `hostname: "!local"` becomes the server's host name and
/// device id, and a bucket of the server's own host name gets its device
/// id too.
#[post("/api/0/buckets/<bucket_id>", data = "<body>")]
pub async fn create(
    bucket_id: &str,
    body: Data<'_>,
    access: &Access,
    state: &State<ServerState>,
    served: &Served,
) -> Result<Empty, ApiError> {
    aw_models::check_bucket_id(bucket_id)
        .map_err(|error| ApiError::BadRequest(error.to_string()))?;
    let request: CreateBucket = read_json(body, JSON_LIMIT).await?;
    let mut bucket = request.into_bucket(bucket_id.to_string());
    if bucket.hostname == LOCAL_HOSTNAME {
        bucket.hostname = state.info.hostname.clone();
        bucket
            .data
            .insert("device_id".to_string(), state.info.device_id.clone().into());
    } else if bucket.hostname == state.info.hostname {
        // A watcher of this machine: this device made it (§3.15), unless
        // the bucket names its device itself.
        bucket
            .data
            .entry("device_id")
            .or_insert_with(|| state.info.device_id.clone().into());
    }
    if !access.may_write_host(&bucket.hostname) {
        return Err(host_refused(&bucket.hostname));
    }
    let datastore = served.datastore.clone();
    match blocking(move || Ok(datastore.create_bucket(bucket)?)).await {
        Ok(()) => Ok(Empty(Status::Ok)),
        Err(ApiError::Datastore(DatastoreError::BucketExists(_))) => Ok(Empty(Status::NotModified)),
        Err(error) => Err(error),
    }
}

/// Updates a bucket's `type`, `client`, `hostname` or `data` (the Python
/// server's endpoint): the fields given replace the stored ones. Answers
/// the bucket as stored now; 404 for an unknown bucket, 400 for a body
/// that is not such an object (400 also for well-formed JSON of the wrong
/// shape, which other endpoints answer with 422: the Python server's
/// endpoint answers 400 to both).
#[put("/api/0/buckets/<bucket_id>", data = "<body>")]
pub async fn update(
    bucket_id: &str,
    body: Data<'_>,
    access: &Access,
    served: &Served,
) -> Result<Json<Bucket>, ApiError> {
    let body: serde_json::Value = read_json(body, JSON_LIMIT).await?;
    if !body.is_object() {
        // serde would take a list as the struct's fields in order.
        return Err(ApiError::BadRequest(
            "Invalid request body: expected an object".to_string(),
        ));
    }
    let update: UpdateBucket = serde_json::from_value(body)
        .map_err(|error| ApiError::BadRequest(format!("Invalid request body: {error}")))?;
    if let Some(hostname) = &update.hostname {
        if !access.may_write_host(hostname) {
            return Err(host_refused(hostname));
        }
    }
    let datastore = served.datastore.clone();
    let id = bucket_id.to_string();
    let result = blocking(move || Ok(datastore.update_bucket(&id, update)?)).await;
    served.auth.forget_hosts();
    result?;
    Ok(Json(served.datastore.bucket(bucket_id).await?))
}

/// A write token naming a host that is not one of its own.
fn host_refused(hostname: &str) -> ApiError {
    ApiError::Forbidden(format!(
        "This token may not write buckets of host '{hostname}': it is not one of the token's \
         hosts"
    ))
}

/// Deletes a bucket and its events; `?force=1` is accepted and ignored.
#[delete("/api/0/buckets/<bucket_id>")]
pub async fn delete(bucket_id: &str, served: &Served) -> Result<Empty, ApiError> {
    let datastore = served.datastore.clone();
    let bucket_id = bucket_id.to_string();
    let result = blocking(move || Ok(datastore.delete_bucket(&bucket_id)?)).await;
    served.auth.forget_hosts();
    result?;
    Ok(Empty(Status::Ok))
}
