//! `POST /api/0/backup`: a snapshot of the database, written into the
//! configured `[backup] dir` (`backup.rs`); the request names no path.
//! `GET /api/0/backup/status`: the schedule, the last snapshot's outcome
//! and the snapshots in the folder (paths: behind the API key like every
//! `/api/` route when one is set).

use rocket::serde::json::Json;
use rocket::{get, post};
use serde::Serialize;

use super::request::blocking;
use crate::error::ApiError;
use crate::served::Served;
use aw_jobs::backup::BackupStatus;

/// The answer: the snapshot written.
#[derive(Debug, Serialize)]
pub struct BackupWritten {
    /// The snapshot's file.
    pub path: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// How long it took, the check included, in milliseconds.
    pub duration_ms: f64,
    /// The older snapshots asked for that rotation removed after it.
    pub removed: Vec<String>,
}

/// Writes a snapshot: every write acknowledged before the request is in
/// it, and heartbeats go on meanwhile.
#[post("/api/0/backup")]
pub async fn backup(served: &Served) -> Result<Json<BackupWritten>, ApiError> {
    let datastore = served.datastore.clone();
    let backups = std::sync::Arc::clone(&served.jobs.backups);
    let taken = blocking(move || Ok(backups.take(&datastore, false)?)).await?;
    Ok(Json(BackupWritten {
        path: taken.snapshot.path.display().to_string(),
        bytes: taken.snapshot.bytes,
        duration_ms: taken.snapshot.took.as_secs_f64() * 1000.0,
        removed: taken
            .removed
            .iter()
            .map(|path| path.display().to_string())
            .collect(),
    }))
}

/// The schedule's settings, whether a snapshot is being written, the last
/// one's outcome (since the server started), when the next is due, and
/// the snapshots in the folder.
#[get("/api/0/backup/status")]
pub async fn status(served: &Served) -> Result<Json<BackupStatus>, ApiError> {
    let backups = std::sync::Arc::clone(&served.jobs.backups);
    Ok(Json(blocking(move || Ok(backups.status())).await?))
}
