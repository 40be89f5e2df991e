//! Alerts (`docs/API.md` §3.16): `GET /api/0/alerts/status` (a read: the
//! goals as last counted, what was sent, what waits, what failed, the next
//! digest), `POST /api/0/alerts/test` (admin: a test message to every
//! channel, each channel's outcome) and `POST /api/0/alerts/digest`
//! (admin: the last day's, or with `week=true` the last week's, digest
//! sent now, or with `send=false` only shown). The work is `aw_alerts`'.

use rocket::serde::json::Json;
use rocket::{get, post, State};
use serde::Serialize;

use super::request::{blocking, flag_param};
use crate::error::ApiError;
use crate::served::Served;
use crate::ServerState;
use aw_alerts::{AlertStatus, Channel};

/// One channel's outcome.
#[derive(Debug, Serialize)]
pub struct Outcome {
    pub channel: Channel,
    /// Whether it was delivered (else it is retried; `error` says why).
    pub delivered: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What a test or a digest sent.
#[derive(Debug, Serialize)]
pub struct Sent {
    pub title: String,
    pub text: String,
    pub channels: Vec<Outcome>,
}

fn outcomes(list: aw_alerts::Outcomes) -> Vec<Outcome> {
    list.into_iter()
        .map(|(channel, result)| Outcome {
            channel,
            delivered: result.is_ok(),
            error: result.err(),
        })
        .collect()
}

/// The alerts' status.
#[get("/api/0/alerts/status")]
pub async fn status(state: &State<ServerState>) -> Json<AlertStatus> {
    Json(state.alerts.status())
}

/// A test message to every channel, delivered now.
#[post("/api/0/alerts/test")]
pub async fn test(state: &State<ServerState>, served: &Served) -> Result<Json<Sent>, ApiError> {
    let alerts = std::sync::Arc::clone(&state.alerts);
    let source = state.alerts_source(served);
    let own_host = source.own_host.clone();
    let channels = blocking(move || Ok(alerts.test(&source)?)).await?;
    Ok(Json(Sent {
        title: "aw-server: a test message".to_string(),
        text: format!("A test message from {own_host}"),
        channels: outcomes(channels),
    }))
}

/// The digest of yesterday (or, with `week=true`, of the last week),
/// sent now; with `send=false` only made and answered.
#[post("/api/0/alerts/digest?<week>&<send>")]
pub async fn digest(
    week: Option<&str>,
    send: Option<&str>,
    state: &State<ServerState>,
    served: &Served,
) -> Result<Json<Sent>, ApiError> {
    let week = flag_param("week", week)?;
    let send = match send {
        None => true,
        given => flag_param("send", given)?,
    };
    let alerts = std::sync::Arc::clone(&state.alerts);
    let source = state.alerts_source(served);
    let (message, channels) = if send {
        blocking(move || Ok(alerts.send_digest(&source, week)?)).await?
    } else {
        let message = blocking(move || Ok(alerts.make_digest(&source, week)?)).await?;
        (message, Vec::new())
    };
    Ok(Json(Sent {
        title: message.title,
        text: message.text,
        channels: outcomes(channels),
    }))
}
