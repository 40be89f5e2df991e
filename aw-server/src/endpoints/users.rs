//! The people of a server that hosts several (`docs/API.md` §3.17):
//! `GET /api/0/users` lists them, `POST /api/0/users` adds one and
//! answers their first admin token this once, `DELETE
//! /api/0/users/<name>` removes one (their folder moved aside, or with
//! `?delete=true` deleted). The server administrator's key only (the
//! gate); a server of one person answers 404.

use aw_users::{UserInfo, UsersError};
use rocket::data::Data;
use rocket::http::Status;
use rocket::response::status::Custom;
use rocket::serde::json::Json;
use rocket::{delete, get, post, State};
use serde::{Deserialize, Serialize};

use super::request::{blocking, flag_param, read_json, JSON_LIMIT};
use crate::error::ApiError;
use crate::served::Hosting;
use crate::ServerState;

/// The body of `POST /api/0/users`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewUser {
    /// 1 to 64 of a-z, 0-9, `-` and `_`.
    pub name: String,
}

/// A person added: their first admin token's secret, shown once.
#[derive(Debug, Serialize)]
pub struct AddedUser {
    pub name: String,
    pub token: String,
    pub token_name: String,
}

/// A person removed: where their folder went (`null`: deleted).
#[derive(Debug, Serialize)]
pub struct RemovedUser {
    pub name: String,
    pub moved_to: Option<String>,
}

/// A person as listed, with whether their file is open now.
#[derive(Debug, Serialize)]
pub struct ListedUser {
    #[serde(flatten)]
    pub info: UserInfo,
    pub open: bool,
}

fn hosting(state: &ServerState) -> Result<std::sync::Arc<Hosting>, ApiError> {
    state.hosting.clone().ok_or_else(|| {
        ApiError::NotFound("This server serves one person: it has no users".to_string())
    })
}

/// The status of a refusal of the people's or groups' rules.
pub(crate) fn refused(error: UsersError) -> ApiError {
    match error {
        UsersError::InvalidName(_) | UsersError::Reserved(_) => {
            ApiError::BadRequest(error.to_string())
        }
        UsersError::Unknown(_) | UsersError::NoGroup(_) => ApiError::NotFound(error.to_string()),
        UsersError::GroupExists(_) | UsersError::AlreadyMember { .. } => {
            ApiError::Conflict(error.to_string())
        }
        UsersError::Exists(_)
        | UsersError::FolderExists(_)
        | UsersError::InUse(_)
        | UsersError::SharedToken { .. } => ApiError::Conflict(error.to_string()),
        UsersError::Store(error) => ApiError::Datastore(error),
        UsersError::Token(_) | UsersError::Io(_) => ApiError::Internal(error.to_string()),
    }
}

/// Every person: their file's size, devices, last data, tokens.
#[get("/api/0/users")]
pub async fn list(state: &State<ServerState>) -> Result<Json<Vec<ListedUser>>, ApiError> {
    let hosting = hosting(state)?;
    let listed = blocking(move || {
        let open = hosting.open_users();
        let users = hosting.users.list().map_err(refused)?;
        Ok(users
            .into_iter()
            .map(|info| ListedUser {
                open: open.contains(&info.name),
                info,
            })
            .collect::<Vec<_>>())
    })
    .await?;
    Ok(Json(listed))
}

/// Adds a person: 201 with their first admin token; 409 when the name
/// is taken, 400 when it is no safe file name.
#[post("/api/0/users", data = "<body>")]
pub async fn add(
    body: Data<'_>,
    state: &State<ServerState>,
) -> Result<Custom<Json<AddedUser>>, ApiError> {
    let hosting = hosting(state)?;
    let request: NewUser = read_json(body, JSON_LIMIT).await?;
    let added = blocking(move || {
        let name = request.name;
        hosting
            .users
            .add(&name, crate::auth::first_admin_token(&name))
            .map_err(refused)
    })
    .await?;
    log::info!("The server administrator added user '{}'", added.name);
    Ok(Custom(
        Status::Created,
        Json(AddedUser {
            token_name: format!("{}-admin", added.name),
            name: added.name,
            token: added.token,
        }),
    ))
}

/// Removes a person: their file is closed, their folder moved into
/// `users/removed/` (or deleted with `?delete=true`).
#[delete("/api/0/users/<name>?<delete>")]
pub async fn remove(
    name: &str,
    delete: Option<&str>,
    state: &State<ServerState>,
) -> Result<Json<RemovedUser>, ApiError> {
    let hosting = hosting(state)?;
    let delete = flag_param("delete", delete)?;
    let owned = name.to_string();
    let moved = blocking(move || hosting.remove(&owned, delete).map_err(refused)).await?;
    log::info!("The server administrator removed user '{name}'");
    Ok(Json(RemovedUser {
        name: name.to_string(),
        moved_to: moved.map(|path| path.display().to_string()),
    }))
}
