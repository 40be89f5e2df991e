//! `POST /api/0/query/` (`docs/API.md` §3.6): runs a query2 program once per period
//! through the `aw-query` crate; its errors are the client's (400).

use aw_models::QueryRequest;
use rocket::data::Data;
use rocket::response::content::RawJson;
use rocket::{post, State};

use super::background;
use super::request::{read_json, JSON_LIMIT};
use crate::error::ApiError;
use crate::ServerState;

/// One result per period, in order. `?name=` and `?cache=` are ignored.
#[post("/api/0/query", data = "<body>")]
pub async fn query(
    body: Data<'_>,
    state: &State<ServerState>,
) -> Result<RawJson<String>, ApiError> {
    let request: QueryRequest = read_json(body, JSON_LIMIT).await?;
    let source = state.datastore.clone();
    // A long query must not take the CPU from heartbeats; nor must
    // writing (and freeing) a year's result, so that happens there too.
    let body = background(move || {
        aw_query::query_json(&request.program(), &request.timeperiods, &source)
            .map_err(ApiError::from)
    })
    .await?;
    Ok(RawJson(body))
}
