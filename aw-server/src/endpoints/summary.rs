//! `GET /api/0/summary` and `GET /api/0/search` (`docs/API.md` §3.13):
//! the `aw-summary` crate's answers over HTTP, computed on a query thread.

use rocket::data::Data;
use rocket::serde::json::Json;
use rocket::{get, post, State};
use serde::Deserialize;

use super::background;
use super::request::read_json;
use crate::error::ApiError;
use crate::ServerState;
use aw_summary::{
    search as find, summarize, Params, SearchParams, SearchResult, Served, Summary, SummaryError,
};

/// Active time of a period, grouped `by` one or more keys.
#[get("/api/0/summary?<start>&<end>&<by>&<host>&<tz>&<limit>")]
#[allow(
    clippy::too_many_arguments,
    reason = "one argument per query parameter"
)]
pub async fn summary(
    start: Option<String>,
    end: Option<String>,
    by: Option<String>,
    host: Option<String>,
    tz: Option<String>,
    limit: Option<&str>,
    state: &State<ServerState>,
    file: &crate::Served,
) -> Result<Json<Summary>, ApiError> {
    let params = Params {
        start,
        end,
        by,
        host,
        tz,
        limit: positive_limit(limit)?,
        categories: None,
    };
    answer(params, state, file).await
}

/// The body of `POST /api/0/summary`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Preview {
    /// Categories in aw-webui's format, used instead of the settings'.
    categories: serde_json::Value,
}

/// The summary `GET` answers, with the categories of the body instead of
/// those in force: the dashboard's preview of categories being edited
/// (each rule checked by the server's own regex dialect; 400 naming the
/// category whose rule does not compile).
#[post(
    "/api/0/summary?<start>&<end>&<by>&<host>&<tz>&<limit>",
    data = "<body>"
)]
#[allow(
    clippy::too_many_arguments,
    reason = "one argument per query parameter, and the body"
)]
pub async fn preview(
    start: Option<String>,
    end: Option<String>,
    by: Option<String>,
    host: Option<String>,
    tz: Option<String>,
    limit: Option<&str>,
    body: Data<'_>,
    state: &State<ServerState>,
    file: &crate::Served,
) -> Result<Json<Summary>, ApiError> {
    let preview: Preview = read_json(body, PREVIEW_LIMIT).await?;
    let params = Params {
        start,
        end,
        by,
        host,
        tz,
        limit: positive_limit(limit)?,
        categories: Some(preview.categories),
    };
    answer(params, state, file).await
}

/// Largest body of a preview: category lists are small, but a user's
/// may hold hundreds of long rules.
const PREVIEW_LIMIT: rocket::data::ByteUnit = rocket::data::ByteUnit::Mebibyte(4);

/// The store, as this server's summaries read it.
fn served(state: &ServerState, file: &crate::Served) -> Served {
    Served {
        datastore: file.datastore.clone(),
        own_host: state.info.hostname.clone(),
        cache: file.cache.clone(),
    }
}

async fn answer(
    params: Params,
    state: &State<ServerState>,
    file: &crate::Served,
) -> Result<Json<Summary>, ApiError> {
    let source = served(state, file);
    let summary = background(move || summarize(&source, &params).map_err(ApiError::from)).await?;
    Ok(Json(summary))
}

/// Window titles and browser URLs and titles containing `text`.
#[get("/api/0/search?<text>&<start>&<end>&<host>&<tz>&<limit>")]
#[allow(
    clippy::too_many_arguments,
    reason = "one argument per query parameter"
)]
pub async fn search(
    text: Option<String>,
    start: Option<String>,
    end: Option<String>,
    host: Option<String>,
    tz: Option<String>,
    limit: Option<&str>,
    state: &State<ServerState>,
    file: &crate::Served,
) -> Result<Json<SearchResult>, ApiError> {
    let params = SearchParams {
        text,
        start,
        end,
        host,
        tz,
        limit: positive_limit(limit)?,
    };
    let source = served(state, file);
    let result = background(move || find(&source, &params).map_err(ApiError::from)).await?;
    Ok(Json(result))
}

/// `limit`: a positive integer; its range is the summary's to check.
fn positive_limit(value: Option<&str>) -> Result<Option<usize>, ApiError> {
    value
        .map(|text| {
            text.trim().parse::<usize>().map_err(|_| {
                ApiError::BadRequest(format!("limit: '{text}' is not a positive integer"))
            })
        })
        .transpose()
}

impl From<SummaryError> for ApiError {
    fn from(error: SummaryError) -> ApiError {
        match error {
            SummaryError::Argument(error) => ApiError::BadRequest(error.to_string()),
            SummaryError::Datastore(error) => ApiError::Datastore(error),
            SummaryError::Query(error) => ApiError::Query(error),
        }
    }
}
