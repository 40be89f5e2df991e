//! `GET /api/0/database/status`: the database file, damage the
//! server met in it while serving, what a salvage at this start
//! recovered, and the cache of finished periods. It names paths: behind the API key like every `/api/` route
//! but `/api/0/info`.

use std::path::PathBuf;

use aw_cache::PrewarmStatus;
use aw_datastore::salvage::SalvageReport;
use rocket::serde::json::Json;
use rocket::{get, State};
use serde::Serialize;

use super::privacy::database_size;
use super::request::blocking;
use crate::served::Served;
use crate::ServerState;
use aw_jobs::retention::RetentionStatus;

/// The answer.
#[derive(Debug, Serialize)]
pub struct DatabaseStatus {
    /// The database file.
    pub path: PathBuf,
    /// No damage met while serving: the file served is healthy (after a
    /// salvage at this start, the salvaged one is).
    pub healthy: bool,
    /// Damage met while serving (what SQLite said); writes are refused
    /// from then on, and a restart salvages the file.
    pub damage: Option<String>,
    /// What the salvage at this start recovered, if the file was damaged.
    pub salvage: Option<SalvageReport>,
    /// Bytes of the file and its WAL.
    pub size: u64,
    /// Bytes of free pages in the file: about what `POST /api/0/vacuum`
    /// would give back (`None` if they could not be counted).
    pub reclaimable: Option<u64>,
    /// The cache of finished periods (`[cache]`); `None` when it is off.
    pub cache: Option<CacheStatus>,
}

/// The cache's part of the answer.
#[derive(Debug, Serialize)]
pub struct CacheStatus {
    /// Answers kept.
    pub entries: u64,
    /// Bytes they and their keys take.
    pub bytes: u64,
    /// The most they may take (`[cache] max_mb`).
    pub max_bytes: u64,
    /// Finished periods answered from the cache since the start.
    pub hits: u64,
    /// Finished periods it did not have.
    pub misses: u64,
    /// The pre-warm after this start.
    pub prewarm: PrewarmStatus,
}

/// The database's status.
#[get("/api/0/database/status")]
pub async fn status(state: &State<ServerState>, served: &Served) -> Json<DatabaseStatus> {
    let damage = served.datastore.damage();
    let datastore = served.datastore.clone();
    let reclaimable = match blocking(move || Ok(datastore.free_bytes()?)).await {
        Ok(bytes) => Some(bytes),
        Err(error) => {
            log::warn!("Could not count the database's free pages: {error}");
            None
        }
    };
    Json(DatabaseStatus {
        path: served.db_path.clone(),
        healthy: damage.is_none(),
        damage,
        salvage: state.salvage.clone(),
        size: database_size(&served.db_path),
        reclaimable,
        cache: served.cache.as_ref().map(|cache| {
            let stats = cache.stats();
            CacheStatus {
                entries: stats.entries,
                bytes: stats.bytes,
                max_bytes: cache.config().max_bytes as u64,
                hits: stats.hits,
                misses: stats.misses,
                prewarm: state.prewarm.status(),
            }
        }),
    })
}

/// What retention's schedule did and will do (`[retention]`).
#[get("/api/0/retention/status")]
pub fn retention(served: &Served) -> Json<RetentionStatus> {
    Json(served.jobs.retention.status())
}
