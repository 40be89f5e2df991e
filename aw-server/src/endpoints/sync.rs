//! Folder sync (ours): `GET /api/0/sync/status` answers what
//! the `[sync]` schedule and the passes asked for did, and
//! `POST /api/0/sync/run` runs a pass now with the configured folder,
//! which is how the `sync` command works through a running server. The
//! passes are `aw_jobs::sync`'s.

use rocket::serde::json::Json;
use rocket::{get, post};

use aw_folder_sync::SyncFilter;

use super::background;
use super::request::timestamp_param;
use crate::error::ApiError;
use crate::served::Served;
use aw_jobs::sync::SyncError;
use aw_models::{PassReport, SyncMode, SyncStatus};

/// The schedule's settings, whether a pass runs, and the last pass's
/// report or failure.
#[get("/api/0/sync/status")]
pub fn status(served: &Served) -> Json<SyncStatus> {
    Json(SyncStatus {
        hub: served.jobs.hub.status(),
        ..served.jobs.sync.status()
    })
}

/// Runs a pass now with the configured folder (`mode` push, pull or
/// both, default both), after any pass already running, and answers its
/// report; 409 when `[sync]` is not configured. `buckets` (comma-separated
/// ids; default the configured ones) and `start` (a time or date: events
/// ending before it are left out) limit it as the `sync` command's
/// `--buckets` and `--start-date` do.
///
/// `mode=hub` runs a forwarding pass to the `[hub]` instead and answers
/// what it sent (409 without `[hub]`, 502 when the hub failed or refused).
#[post("/api/0/sync/run?<mode>&<buckets>&<start>")]
pub async fn run(
    mode: Option<&str>,
    buckets: Option<&str>,
    start: Option<&str>,
    served: &Served,
) -> Result<Json<serde_json::Value>, ApiError> {
    if mode.is_some_and(|mode| mode.trim().eq_ignore_ascii_case("hub")) {
        let datastore = served.datastore.clone();
        let hub = std::sync::Arc::clone(&served.jobs.hub);
        let pass = background(move || match hub.run(&datastore) {
            Ok(pass) => Ok(pass),
            Err(aw_folder_sync::FolderSyncError::Refused(message)) => {
                Err(ApiError::Conflict(message))
            }
            Err(error) => Err(SyncError::Pass(error).into()),
        })
        .await?;
        return to_json(&pass);
    }
    let mode = match mode {
        None => SyncMode::Both,
        Some(text) => SyncMode::parse(text).ok_or_else(|| {
            ApiError::BadRequest(format!(
                "Invalid 'mode' parameter '{text}': expected push, pull, both or hub"
            ))
        })?,
    };
    // A date alone is midnight UTC, as the command's --start-date.
    let start = start.map(|text| {
        if text.len() == 10 {
            format!("{text}T00:00:00Z")
        } else {
            text.to_string()
        }
    });
    let start = timestamp_param("start", start.as_deref())?;
    let filter = (buckets.is_some() || start.is_some()).then(|| SyncFilter {
        buckets: buckets
            .map(|text| {
                text.split(',')
                    .map(str::trim)
                    .filter(|id| !id.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .or_else(|| {
                served
                    .jobs
                    .sync
                    .settings
                    .as_ref()
                    .and_then(|settings| settings.buckets.clone())
            }),
        start,
    });
    let datastore = served.datastore.clone();
    let sync = std::sync::Arc::clone(&served.jobs.sync);
    // Reading and writing the folder's files is long work: a low-priority
    // thread, so heartbeats get the CPU first.
    let report: PassReport = background(move || Ok(sync.run(&datastore, mode, filter)?)).await?;
    to_json(&report)
}

fn to_json<T: serde::Serialize>(report: &T) -> Result<Json<serde_json::Value>, ApiError> {
    serde_json::to_value(report)
        .map(Json)
        .map_err(|error| ApiError::Internal(format!("Encoding the report: {error}")))
}
