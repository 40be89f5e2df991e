//! `POST /api/0/query/` (`docs/API.md` §3.6): runs a query2 program once per period
//! through the `aw-query` crate; its errors are the client's (400).

use aw_models::{QueryRequest, Timestamp};
use rocket::data::Data;
use rocket::post;
use rocket::response::content::RawJson;

use super::background;
use super::request::{flag_param, read_json, JSON_LIMIT};
use crate::error::ApiError;
use crate::served::Served;

/// One result per period, in order. The answers of finished periods come
/// from the cache when it has them (`aw_cache`), unless `?cache=false`
/// (or `0`) asks for them to be computed; `?name=` is ignored.
#[post("/api/0/query?<cache>", data = "<body>")]
pub async fn query(
    body: Data<'_>,
    cache: Option<&str>,
    served: &Served,
) -> Result<RawJson<String>, ApiError> {
    // Absent, the cache is used.
    let bypass = cache.is_some() && !flag_param("cache", cache)?;
    let request: QueryRequest = read_json(body, JSON_LIMIT).await?;
    let source = served.datastore.clone();
    let cache = served.cache.clone().filter(|_| !bypass);
    // A long query must not take the CPU from heartbeats; nor must
    // writing (and freeing) a year's result, so that happens there too.
    let body = background(move || {
        let program = request.program();
        match &cache {
            Some(cache) => aw_cache::query_json(
                cache,
                &program,
                &request.timeperiods,
                &source,
                Timestamp::now(),
            ),
            None => aw_query::query_json(&program, &request.timeperiods, &source),
        }
        .map_err(ApiError::from)
    })
    .await?;
    Ok(RawJson(body))
}
