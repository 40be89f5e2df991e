//! `POST /api/0/query/` (spec §3.6): runs a query2 program once per period
//! through the `aw-query` crate; its errors are the client's (400).

use aw_datastore::{Datastore, EventQuery};
use aw_models::{Event, QueryRequest, TimeInterval};
use aw_query::EventSource;
use rocket::data::Data;
use rocket::serde::json::Json;
use rocket::{post, State};

use super::{blocking, read_json, JSON_LIMIT};
use crate::error::ApiError;
use crate::ServerState;

/// One result per period, in order. `?name=` and `?cache=` are ignored.
#[post("/api/0/query", data = "<body>")]
pub async fn query(
    body: Data<'_>,
    state: &State<ServerState>,
) -> Result<Json<Vec<serde_json::Value>>, ApiError> {
    let request: QueryRequest = read_json(body, JSON_LIMIT).await?;
    let source = StoreSource(state.datastore.clone());
    let results = blocking(move || {
        Ok(aw_query::query(
            &request.program(),
            &request.timeperiods,
            &source,
        )?)
    })
    .await?;
    Ok(Json(results))
}

/// The datastore as the interpreter's event source: a thin adapter until
/// `aw-query` provides the implementation for `Datastore` itself.
struct StoreSource(Datastore);

impl EventSource for StoreSource {
    fn query_bucket(&self, bucket_id: &str, interval: &TimeInterval) -> Result<Vec<Event>, String> {
        let query = EventQuery {
            start: Some(interval.start),
            end: Some(interval.end),
            limit: None,
        };
        self.0
            .events(bucket_id, query)
            .map_err(|error| error.to_string())
    }

    fn buckets(&self) -> Result<Vec<(String, String)>, String> {
        let buckets = self.0.buckets().map_err(|error| error.to_string())?;
        Ok(buckets
            .into_values()
            .map(|bucket| (bucket.id, bucket.hostname))
            .collect())
    }

    fn count_events(&self, bucket_id: &str, interval: &TimeInterval) -> Result<u64, String> {
        self.0
            .count_events(bucket_id, Some(interval.start), Some(interval.end))
            .map_err(|error| error.to_string())
    }
}
