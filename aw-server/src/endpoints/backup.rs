//! `POST /api/0/backup`: a snapshot of the database, written into the
//! configured `[backup] dir` (`backup.rs`); the request names no path.

use rocket::serde::json::Json;
use rocket::{post, State};
use serde::Serialize;

use super::request::blocking;
use crate::error::ApiError;
use crate::ServerState;

/// The answer: the snapshot written.
#[derive(Debug, Serialize)]
pub struct BackupWritten {
    /// The snapshot's file.
    pub path: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// How long it took, the check included, in milliseconds.
    pub duration_ms: f64,
}

/// Writes a snapshot: every write acknowledged before the request is in
/// it, and heartbeats go on meanwhile.
#[post("/api/0/backup")]
pub async fn backup(state: &State<ServerState>) -> Result<Json<BackupWritten>, ApiError> {
    let datastore = state.datastore.clone();
    let folder = state.backup_dir.clone();
    let snapshot = blocking(move || Ok(crate::backup::take(&datastore, &folder)?)).await?;
    Ok(Json(BackupWritten {
        path: snapshot.path.display().to_string(),
        bytes: snapshot.bytes,
        duration_ms: snapshot.took.as_secs_f64() * 1000.0,
    }))
}
