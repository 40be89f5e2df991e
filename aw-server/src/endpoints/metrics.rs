//! `GET /metrics` (`docs/API.md` §3.14): the server's metrics in the
//! OpenMetrics text format, for Prometheus. What they are is `metrics.rs`'s;
//! who may read them the gate's (a read token, like the API's reads).

use rocket::http::ContentType;
use rocket::{get, State};

use crate::error::ApiError;
use crate::metrics::Scrape;
use crate::ServerState;

/// The content type of OpenMetrics 1.0 text, which Prometheus asks for.
fn openmetrics() -> ContentType {
    ContentType::new("application", "openmetrics-text")
        .with_params([("version", "1.0.0"), ("charset", "utf-8")])
}

/// Every metric, the scrape-time ones read now.
#[get("/metrics")]
pub async fn metrics(
    state: &State<ServerState>,
    served: &crate::Served,
) -> Result<(ContentType, String), ApiError> {
    let scrape = Scrape::gather(state, served).await?;
    let text = state
        .metrics
        .encode(&scrape)
        .map_err(|error| ApiError::Internal(format!("Cannot write the metrics: {error}")))?;
    Ok((openmetrics(), text))
}
