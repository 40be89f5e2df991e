//! `GET /api/0/info` (`docs/API.md` §3.1): never needs the API key.

use aw_models::ServerInfo;
use rocket::serde::json::Json;
use rocket::{get, State};

use crate::ServerState;

/// Host name, version, testing flag and device id.
#[get("/api/0/info")]
pub fn info(state: &State<ServerState>) -> Json<ServerInfo> {
    Json(state.info.clone())
}
