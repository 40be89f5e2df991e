//! API tokens (`docs/API.md` §9.4): `GET /api/0/tokens` lists them (never
//! the secret), `POST /api/0/tokens` makes one and answers its secret
//! this once, `DELETE /api/0/tokens/<name>` revokes one; all admin only
//! (the gate). `GET /api/0/access` tells any caller what it may do.

use aw_models::{AccessInfo, AccessScope, CreatedToken, NewToken, Timestamp, TokenInfo};
use rocket::data::Data;
use rocket::http::Status;
use rocket::response::status::Custom;
use rocket::serde::json::Json;
use rocket::{delete, get, post, State};

use super::request::{blocking, read_json, Empty, JSON_LIMIT};
use crate::auth::{Access, AddError};
use crate::error::ApiError;
use crate::served::Served;
use crate::ServerState;

/// What the caller may do: its scope, token name and hosts.
#[get("/api/0/access")]
pub fn access(
    access: &Access,
    state: &State<ServerState>,
    served: Option<&Served>,
) -> Json<AccessInfo> {
    let described = access.describe();
    Json(AccessInfo {
        // The API key of a server that hosts several people: a scope of
        // its own.
        scope: match access {
            Access::Key if state.hosting.is_some() => AccessScope::Server,
            _ => described.scope,
        },
        user: served.and_then(|served| served.user.clone()),
        ..described
    })
}

/// Every token, by name.
#[get("/api/0/tokens")]
pub async fn list(served: &Served) -> Result<Json<Vec<TokenInfo>>, ApiError> {
    let auth = std::sync::Arc::clone(&served.auth);
    Ok(Json(blocking(move || Ok(auth.list()?)).await?))
}

/// Makes a token: 201 with its secret; 409 when the name is taken.
#[post("/api/0/tokens", data = "<body>")]
pub async fn add(
    body: Data<'_>,
    access: &Access,
    state: &State<ServerState>,
    served: &Served,
) -> Result<Custom<Json<CreatedToken>>, ApiError> {
    let request: NewToken = read_json(body, JSON_LIMIT).await?;
    let auth = std::sync::Arc::clone(&served.auth);
    let name = request.name.clone();
    let made = blocking(move || match auth.add(&request, Timestamp::now()) {
        Ok(made) => Ok(made),
        Err(AddError::Invalid(error)) => Err(ApiError::BadRequest(error.to_string())),
        Err(AddError::Store(error)) => Err(ApiError::Datastore(error)),
        Err(error @ AddError::NoAdminYet(_)) => Err(ApiError::Conflict(error.to_string())),
    })
    .await?;
    let Some(made) = made else {
        return Err(ApiError::Conflict(format!(
            "A token named '{name}' exists; revoke it first or choose another name"
        )));
    };
    reindex(state, served).await?;
    log::info!(
        "{} made the {} token '{}'",
        access.who(),
        made.info.scope,
        made.info.name
    );
    Ok(Custom(Status::Created, Json(made)))
}

/// Revokes a token: the next request with it is refused.
#[delete("/api/0/tokens/<name>")]
pub async fn revoke(
    name: &str,
    access: &Access,
    state: &State<ServerState>,
    served: &Served,
) -> Result<Empty, ApiError> {
    let auth = std::sync::Arc::clone(&served.auth);
    let owned = name.to_string();
    if !blocking(move || Ok(auth.revoke(&owned)?)).await? {
        return Err(ApiError::NotFound(format!("No token named '{name}'")));
    }
    reindex(state, served).await?;
    log::info!("{} revoked the token '{name}'", access.who());
    Ok(Empty(Status::Ok))
}

/// On a server that hosts several people, the index of whose each token
/// is learns a person's tokens again after they changed.
async fn reindex(state: &ServerState, served: &Served) -> Result<(), ApiError> {
    let (Some(hosting), Some(user)) = (state.hosting.clone(), served.user.clone()) else {
        return Ok(());
    };
    blocking(move || {
        hosting
            .tokens_changed(&user)
            .map_err(|error| ApiError::Internal(format!("Indexing the tokens: {error}")))
    })
    .await
}
