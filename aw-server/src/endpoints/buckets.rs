//! Bucket listing, lookup, creation and deletion (`docs/API.md` §3.2).

use std::collections::BTreeMap;

use aw_datastore::DatastoreError;
use aw_models::{Bucket, CreateBucket};
use rocket::data::Data;
use rocket::http::Status;
use rocket::serde::json::Json;
use rocket::{delete, get, post, State};

use super::{blocking, check_bucket_id, read_json, Empty, JSON_LIMIT};
use crate::error::ApiError;
use crate::ServerState;

/// The host name that watchers send to mean "the server's own".
const LOCAL_HOSTNAME: &str = "!local";

/// Every bucket by id, `events: null`.
#[get("/api/0/buckets")]
pub async fn list(state: &State<ServerState>) -> Result<Json<BTreeMap<String, Bucket>>, ApiError> {
    Ok(Json(state.datastore.buckets().await?))
}

/// One bucket, with current metadata.
#[get("/api/0/buckets/<bucket_id>")]
pub async fn get(bucket_id: &str, state: &State<ServerState>) -> Result<Json<Bucket>, ApiError> {
    Ok(Json(state.datastore.bucket(bucket_id).await?))
}

/// Creates a bucket: 200, or 304 when it exists (left unchanged). The id is
/// the path's; `hostname: "!local"` becomes the server's host name and
/// device id.
#[post("/api/0/buckets/<bucket_id>", data = "<body>")]
pub async fn create(
    bucket_id: &str,
    body: Data<'_>,
    state: &State<ServerState>,
) -> Result<Empty, ApiError> {
    check_bucket_id(bucket_id)?;
    let request: CreateBucket = read_json(body, JSON_LIMIT).await?;
    let mut bucket = request.into_bucket(bucket_id.to_string());
    if bucket.hostname == LOCAL_HOSTNAME {
        bucket.hostname = state.info.hostname.clone();
        bucket
            .data
            .insert("device_id".to_string(), state.info.device_id.clone().into());
    }
    let datastore = state.datastore.clone();
    match blocking(move || Ok(datastore.create_bucket(bucket)?)).await {
        Ok(()) => Ok(Empty(Status::Ok)),
        Err(ApiError::Datastore(DatastoreError::BucketExists(_))) => Ok(Empty(Status::NotModified)),
        Err(error) => Err(error),
    }
}

/// Deletes a bucket and its events; `?force=1` is accepted and ignored.
#[delete("/api/0/buckets/<bucket_id>")]
pub async fn delete(bucket_id: &str, state: &State<ServerState>) -> Result<Empty, ApiError> {
    let datastore = state.datastore.clone();
    let bucket_id = bucket_id.to_string();
    blocking(move || Ok(datastore.delete_bucket(&bucket_id)?)).await?;
    Ok(Empty(Status::Ok))
}
