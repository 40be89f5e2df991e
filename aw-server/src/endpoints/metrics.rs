//! `GET /metrics` (`docs/API.md` §3.14): the server's metrics in the
//! OpenMetrics text format, for Prometheus. What they are is `metrics.rs`'s;
//! who may read them the gate's (a read token, like the API's reads).

use rocket::http::ContentType;
use rocket::{get, State};

use crate::error::ApiError;
use crate::metrics::{People, Scrape};
use crate::ServerState;

/// The content type of OpenMetrics 1.0 text, which Prometheus asks for.
fn openmetrics() -> ContentType {
    ContentType::new("application", "openmetrics-text")
        .with_params([("version", "1.0.0"), ("charset", "utf-8")])
}

/// Every metric, the scrape-time ones read now. On a server that hosts
/// several people a person reads their own file's and the server
/// administrator the server's counters and its people's numbers; on a
/// server of one person, all of them.
#[get("/metrics")]
pub async fn metrics(
    state: &State<ServerState>,
    served: Option<&crate::Served>,
) -> Result<(ContentType, String), ApiError> {
    let scrape = match served {
        Some(served) => Some(Scrape::gather(state, served).await?),
        None => None,
    };
    let counters = state.hosting.is_none() || served.is_none();
    let people = match (&state.hosting, served) {
        (Some(hosting), None) => Some(People::of(hosting)?),
        _ => None,
    };
    let text = state
        .metrics
        .encode(counters, scrape.as_ref(), people.as_ref())
        .map_err(|error| ApiError::Internal(format!("Cannot write the metrics: {error}")))?;
    Ok((openmetrics(), text))
}
