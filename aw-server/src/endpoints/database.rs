//! `GET /api/0/database/status` (issue #38): the database file, damage the
//! server met in it while serving, and what a salvage at this start
//! recovered. It names paths: behind the API key like every `/api/` route
//! but `/api/0/info`.

use std::path::PathBuf;

use aw_datastore::salvage::SalvageReport;
use rocket::serde::json::Json;
use rocket::{get, State};
use serde::Serialize;

use crate::ServerState;

/// The answer.
#[derive(Debug, Serialize)]
pub struct DatabaseStatus {
    /// The database file.
    pub path: PathBuf,
    /// No damage met while serving, and none salvaged at this start.
    pub healthy: bool,
    /// Damage met while serving (what SQLite said); writes are refused
    /// from then on, and a restart salvages the file.
    pub damage: Option<String>,
    /// What the salvage at this start recovered, if the file was damaged.
    pub salvage: Option<SalvageReport>,
}

/// The database's status.
#[get("/api/0/database/status")]
pub fn status(state: &State<ServerState>) -> Json<DatabaseStatus> {
    let damage = state.datastore.damage();
    Json(DatabaseStatus {
        path: state.db_path.clone(),
        healthy: damage.is_none() && state.salvage.is_none(),
        damage,
        salvage: state.salvage.clone(),
    })
}
