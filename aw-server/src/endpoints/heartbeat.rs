//! `POST /api/0/buckets/<id>/heartbeat?pulsetime=S` (`docs/API.md` §3.4). The merge
//! rules of §4 are the datastore's; this parses the request.

use aw_models::{Duration, Event};
use rocket::data::Data;
use rocket::serde::json::Json;
use rocket::{post, State};

use super::request::{read_json, JSON_LIMIT};
use crate::error::ApiError;
use crate::served::Served;
use crate::ServerState;

/// Merges or inserts the heartbeat; answers the stored event with its id.
#[post("/api/0/buckets/<bucket_id>/heartbeat?<pulsetime>", data = "<body>")]
pub async fn heartbeat(
    bucket_id: &str,
    pulsetime: Option<&str>,
    body: Data<'_>,
    state: &State<ServerState>,
    served: &Served,
) -> Result<Json<Event>, ApiError> {
    let pulsetime = parse_pulsetime(pulsetime)?;
    let mut event: Event = read_json(body, JSON_LIMIT)
        .await
        .map_err(|error| match error {
            ApiError::Unprocessable(message) if message.contains("invalid type: sequence") => {
                ApiError::Unprocessable(format!(
                    "{message}. A heartbeat is one event; a list of events goes to POST \
                     /api/0/buckets/{bucket_id}/events"
                ))
            }
            other => other,
        })?;
    // An id would make the store replace that event; heartbeats never do.
    event.id = None;
    // Awaited rather than run on the blocking pool: heartbeats are the
    // most frequent request, and this saves two thread hand-offs each.
    let stored = served
        .datastore
        .heartbeat_async(bucket_id, event, pulsetime)
        .await?;
    if state.hosting.is_none() {
        // People's bucket ids are theirs: not in the server's counters.
        state.metrics.heartbeat(bucket_id);
    }
    Ok(Json(stored))
}

/// A required, finite, non-negative number of seconds.
fn parse_pulsetime(value: Option<&str>) -> Result<Duration, ApiError> {
    let text = value.ok_or_else(|| {
        ApiError::BadRequest("Missing 'pulsetime' parameter (seconds)".to_string())
    })?;
    let seconds: f64 = text.trim().parse().map_err(|_| {
        ApiError::BadRequest(format!(
            "Invalid 'pulsetime' parameter '{text}': expected a number of seconds"
        ))
    })?;
    Duration::from_secs_f64(seconds)
        .map_err(|error| ApiError::BadRequest(format!("Invalid 'pulsetime' parameter: {error}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pulsetime_must_be_a_sane_number() {
        assert_eq!(
            parse_pulsetime(Some("60")).unwrap(),
            Duration::from_secs(60)
        );
        assert_eq!(
            parse_pulsetime(Some("0.5")).unwrap(),
            Duration::from_millis(500)
        );
        for bad in [
            None,
            Some(""),
            Some("abc"),
            Some("-1"),
            Some("NaN"),
            Some("inf"),
            Some("1e300"),
        ] {
            assert!(parse_pulsetime(bad).is_err(), "{bad:?}");
        }
    }
}
