//! `GET /api/0/info` (`docs/API.md` §3.1): never needs the API key.

use aw_models::ServerInfo;
use rocket::serde::json::Json;
use rocket::{get, State};
use serde::Serialize;

use crate::ServerState;

/// The reference's fields, plus which web UI `/` serves.
#[derive(Debug, Serialize)]
pub struct Info<'a> {
    #[serde(flatten)]
    info: &'a ServerInfo,
    /// `builtin`, `aw-webui-embedded` or `aw-webui-folder`: an extra
    /// field, which clients of the reference's answer ignore.
    webui: &'static str,
}

/// Host name, version, testing flag and device id.
#[get("/api/0/info")]
pub fn info(state: &State<ServerState>) -> Json<Info<'_>> {
    Json(Info {
        info: &state.info,
        webui: state.ui.kind(),
    })
}
