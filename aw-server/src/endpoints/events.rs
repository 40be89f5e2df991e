//! Events of a bucket: listing, insertion, count, one event (`docs/API.md` §3.3),
//! and deleting a time range (ours, `docs/API.md` §3.10).

use aw_datastore::{EventQuery, RangeDeletion};
use aw_models::Event;
use rocket::data::Data;
use rocket::http::{ContentType, Status};
use rocket::serde::json::Json;
use rocket::{delete, get, post};

use super::request::{blocking, limit_param, read_json, timestamp_param, Empty, JSON_LIMIT};
use crate::error::ApiError;
use crate::served::Served;

/// Events newest first, selected and clipped by `start`/`end`, at most
/// `limit` (see `limit_param` for the accepted values). The datastore
/// writes the JSON itself, passing each event's stored data through.
#[get("/api/0/buckets/<bucket_id>/events?<start>&<end>&<limit>")]
pub async fn list(
    bucket_id: &str,
    start: Option<&str>,
    end: Option<&str>,
    limit: Option<&str>,
    served: &Served,
) -> Result<(ContentType, Vec<u8>), ApiError> {
    let query = EventQuery {
        start: timestamp_param("start", start)?,
        end: timestamp_param("end", end)?,
        limit: limit_param(limit)?,
    };
    let body = served
        .datastore
        .events_as(bucket_id, query, aw_datastore::Json)
        .await?;
    Ok((ContentType::JSON, body))
}

/// Inserts an array of events (an event with an id of this bucket replaces
/// it); answers the stored events with their ids.
#[post("/api/0/buckets/<bucket_id>/events", data = "<body>")]
pub async fn insert(
    bucket_id: &str,
    body: Data<'_>,
    served: &Served,
) -> Result<Json<Vec<Event>>, ApiError> {
    let events: Vec<Event> = read_json(body, JSON_LIMIT).await?;
    let datastore = served.datastore.clone();
    let bucket_id = bucket_id.to_string();
    Ok(Json(
        blocking(move || Ok(datastore.insert_events(&bucket_id, events)?)).await?,
    ))
}

/// The number of events overlapping `start`/`end`, as a bare integer.
#[get("/api/0/buckets/<bucket_id>/events/count?<start>&<end>")]
pub async fn count(
    bucket_id: &str,
    start: Option<&str>,
    end: Option<&str>,
    served: &Served,
) -> Result<Json<u64>, ApiError> {
    let start = timestamp_param("start", start)?;
    let end = timestamp_param("end", end)?;
    Ok(Json(
        served.datastore.count_events(bucket_id, start, end).await?,
    ))
}

/// One event of the bucket; 404 if missing or in another bucket.
#[get("/api/0/buckets/<bucket_id>/events/<event_id>")]
pub async fn get(
    bucket_id: &str,
    event_id: &str,
    served: &Served,
) -> Result<Json<Event>, ApiError> {
    let event_id = parse_event_id(event_id)?;
    Ok(Json(served.datastore.event(bucket_id, event_id).await?))
}

/// Deletes one event; an id not in this bucket changes nothing (200 all
/// the same). A body (aw-client sends `{}`) is ignored.
#[delete("/api/0/buckets/<bucket_id>/events/<event_id>")]
pub async fn delete(bucket_id: &str, event_id: &str, served: &Served) -> Result<Empty, ApiError> {
    let event_id = parse_event_id(event_id)?;
    let datastore = served.datastore.clone();
    let bucket_id = bucket_id.to_string();
    blocking(move || Ok(datastore.delete_event(&bucket_id, event_id)?)).await?;
    Ok(Empty(Status::Ok))
}

/// Removes all activity inside `[start, end)` (both required): events
/// inside are deleted, events crossing an edge are trimmed to their part
/// outside, an event spanning the range is split in two. Answers
/// `{"deleted": n, "trimmed": m}`; with `dry_run=true`, what it would do.
#[delete("/api/0/buckets/<bucket_id>/events?<start>&<end>&<dry_run>")]
pub async fn delete_range(
    bucket_id: &str,
    start: Option<&str>,
    end: Option<&str>,
    dry_run: Option<&str>,
    served: &Served,
) -> Result<Json<RangeDeletion>, ApiError> {
    let missing = |name: &str| {
        ApiError::BadRequest(format!(
            "Missing '{name}' parameter: a range delete needs both 'start' and 'end' (ISO 8601)"
        ))
    };
    let start = timestamp_param("start", start)?.ok_or_else(|| missing("start"))?;
    let end = timestamp_param("end", end)?.ok_or_else(|| missing("end"))?;
    if end < start {
        return Err(ApiError::BadRequest(format!(
            "'end' ({end}) is before 'start' ({start})"
        )));
    }
    let dry_run = super::request::flag_param("dry_run", dry_run)?;
    let datastore = served.datastore.clone();
    let bucket_id = bucket_id.to_string();
    let done = blocking(move || {
        if dry_run {
            Ok(datastore.preview_range_deletion(&bucket_id, start, end)?)
        } else {
            let done = datastore.delete_range(&bucket_id, start, end, &mut |_| {})?;
            log::info!(
                "Deleted {start} to {end} of bucket {bucket_id}: {} events deleted, {} trimmed",
                done.deleted,
                done.trimmed
            );
            Ok(done)
        }
    })
    .await?;
    Ok(Json(done))
}

fn parse_event_id(text: &str) -> Result<i64, ApiError> {
    text.parse().map_err(|_| {
        ApiError::BadRequest(format!("Invalid event id '{text}': expected an integer"))
    })
}
