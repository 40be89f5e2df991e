//! Folder sync (ours, issue #31): `GET /api/0/sync/status` answers what
//! the `[sync]` schedule and the passes asked for did, and
//! `POST /api/0/sync/run` runs a pass now with the configured folder,
//! which is how the `sync` command works through a running server. The
//! passes are `sync.rs`'s.

use rocket::serde::json::Json;
use rocket::{get, post, State};

use super::background;
use crate::error::ApiError;
use crate::sync::{PassReport, SyncMode, SyncStatus};
use crate::ServerState;

/// The schedule's settings, whether a pass runs, and the last pass's
/// report or failure.
#[get("/api/0/sync/status")]
pub fn status(state: &State<ServerState>) -> Json<SyncStatus> {
    Json(state.sync.status())
}

/// Runs a pass now with the configured folder (`mode` push, pull or
/// both, default both), after any pass already running, and answers its
/// report; 409 when `[sync]` is not configured.
#[post("/api/0/sync/run?<mode>")]
pub async fn run(
    mode: Option<&str>,
    state: &State<ServerState>,
) -> Result<Json<PassReport>, ApiError> {
    let mode = match mode {
        None => SyncMode::Both,
        Some(text) => SyncMode::parse(text).ok_or_else(|| {
            ApiError::BadRequest(format!(
                "Invalid 'mode' parameter '{text}': expected push, pull or both"
            ))
        })?,
    };
    let datastore = state.datastore.clone();
    let sync = std::sync::Arc::clone(&state.sync);
    // Reading and writing the folder's files is long work: a low-priority
    // thread, so heartbeats get the CPU first.
    let report = background(move || Ok(sync.run(&datastore, mode)?)).await?;
    Ok(Json(report))
}
