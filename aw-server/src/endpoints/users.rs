//! The people of a server that hosts several (`docs/API.md` §3.17):
//! `GET /api/0/users` lists them, `POST /api/0/users` adds one and
//! answers their first admin token this once, `DELETE
//! /api/0/users/<name>` removes one (their folder moved aside, or with
//! `?delete=true` deleted). A move to another node (§3.18): `POST
//! …/<name>/freeze` and `…/thaw`, `GET …/<name>/file` (the frozen file,
//! whole), `PUT …/<name>/file` (a copy received as a new person here).
//! The server administrator's key only (the gate); a server of one
//! person answers 404.

use aw_users::{UserInfo, UsersError};
use rocket::data::ByteUnit;
use rocket::data::Data;
use rocket::http::ContentType;
use rocket::http::Status;
use rocket::response::status::Custom;
use rocket::serde::json::Json;
use rocket::{delete, get, post, put, State};
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

/// A person as listed, with whether their file is open now and whether
/// they are frozen for a move.
#[derive(Debug, Serialize)]
pub struct ListedUser {
    #[serde(flatten)]
    pub info: UserInfo,
    pub open: bool,
    pub moving: bool,
}

/// One node's people on the People page (`GET /api/0/nodes`).
#[derive(Debug, Serialize)]
pub struct NodePeople {
    /// The node's address as `[users] nodes` gives it; `null`: this node.
    pub url: Option<String>,
    /// Whether it answered.
    pub up: bool,
    /// Why not.
    pub error: Option<String>,
    /// Its people as `GET /api/0/users` lists them there.
    pub people: Vec<serde_json::Value>,
    /// Their files' bytes, in all.
    pub bytes: u64,
}

impl NodePeople {
    /// A node at `url` (`None`: this one) by its answer: its people, or
    /// why it gave none.
    fn of(url: Option<String>, answer: Result<Vec<serde_json::Value>, String>) -> NodePeople {
        match answer {
            Ok(people) => NodePeople {
                url,
                up: true,
                error: None,
                bytes: people
                    .iter()
                    .filter_map(|user| user["bytes"].as_u64())
                    .sum(),
                people,
            },
            Err(error) => NodePeople {
                url,
                up: false,
                error: Some(error),
                people: Vec::new(),
                bytes: 0,
            },
        }
    }
}

/// How long the page waits for another node.
const NODE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

fn hosting(state: &ServerState) -> Result<std::sync::Arc<Hosting>, ApiError> {
    state.hosting.clone().ok_or_else(|| {
        ApiError::NotFound("This server serves one person: it has no users".to_string())
    })
}

/// The status of a refusal of the people's or groups' rules.
pub(crate) fn refused(error: UsersError) -> ApiError {
    match error {
        UsersError::InvalidName(_) | UsersError::Reserved(_) | UsersError::NotADatabase(_) => {
            ApiError::BadRequest(error.to_string())
        }
        UsersError::Unknown(_) | UsersError::NoGroup(_) => ApiError::NotFound(error.to_string()),
        UsersError::GroupExists(_) | UsersError::AlreadyMember { .. } => {
            ApiError::Conflict(error.to_string())
        }
        UsersError::Exists(_)
        | UsersError::FolderExists(_)
        | UsersError::InUse(_)
        | UsersError::NotFrozen(_)
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
                moving: hosting.is_moving(&info.name),
                info,
            })
            .collect::<Vec<_>>())
    })
    .await?;
    Ok(Json(listed))
}

/// Every node's people: this node's, then those of each of `[users]
/// nodes`, asked with the server administrator's key (the same on every
/// node); a node that does not answer within a few seconds is listed as
/// down, with why.
#[get("/api/0/nodes")]
pub async fn nodes(state: &State<ServerState>) -> Result<Json<Vec<NodePeople>>, ApiError> {
    let hosting = hosting(state)?;
    let here = list(state).await?.0;
    let here = here
        .iter()
        .filter_map(|user| serde_json::to_value(user).ok())
        .collect();
    let mut listed = vec![NodePeople::of(None, Ok(here))];
    let key = hosting.server_key().unwrap_or_default().to_string();
    let others = hosting.settings().nodes.clone();
    let asked = blocking(move || {
        let threads: Vec<_> = others
            .into_iter()
            .map(|url| {
                let node = aw_nodes::HttpNode::new(&url, &key);
                let asking = std::thread::spawn(move || match node.people(NODE_TIMEOUT) {
                    Ok(serde_json::Value::Array(people)) => Ok(people),
                    Ok(other) => Err(format!("not a list of people: {other}")),
                    Err(error) => Err(error.to_string()),
                });
                (url, asking)
            })
            .collect();
        Ok(threads
            .into_iter()
            .map(|(url, asking)| {
                let answer = asking
                    .join()
                    .unwrap_or_else(|_| Err("asking it failed".to_string()));
                (url, answer)
            })
            .collect::<Vec<_>>())
    })
    .await?;
    listed.extend(
        asked
            .into_iter()
            .map(|(url, answer)| NodePeople::of(Some(url), answer)),
    );
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

/// The largest person's file a node receives.
const FILE_LIMIT: ByteUnit = ByteUnit::Gibibyte(256);

/// A person frozen for a move: their file's size.
#[derive(Debug, Serialize)]
pub struct FrozenUser {
    pub name: String,
    pub bytes: u64,
}

/// Freezes a person for a move: their requests answer 503 with
/// `Retry-After` from now on, and their file is closed, whole.
#[post("/api/0/users/<name>/freeze")]
pub async fn freeze(name: &str, state: &State<ServerState>) -> Result<Json<FrozenUser>, ApiError> {
    let hosting = hosting(state)?;
    let owned = name.to_string();
    let (_, bytes) = blocking(move || hosting.freeze(&owned).map_err(refused)).await?;
    Ok(Json(FrozenUser {
        name: name.to_string(),
        bytes,
    }))
}

/// Serves a frozen person here again (a move given up).
#[post("/api/0/users/<name>/thaw")]
pub async fn thaw(name: &str, state: &State<ServerState>) -> Result<Json<FrozenUser>, ApiError> {
    let hosting = hosting(state)?;
    let owned = name.to_string();
    blocking(move || hosting.thaw(&owned).map_err(refused)).await?;
    Ok(Json(FrozenUser {
        name: name.to_string(),
        bytes: 0,
    }))
}

/// The whole file of a frozen person (409 unless frozen), as SQLite
/// wrote it: aw-server-rust's format.
#[get("/api/0/users/<name>/file")]
pub async fn file(
    name: &str,
    state: &State<ServerState>,
) -> Result<(ContentType, rocket::tokio::fs::File), ApiError> {
    let hosting = hosting(state)?;
    let owned = name.to_string();
    let path = blocking(move || hosting.frozen_file(&owned).map_err(refused)).await?;
    let file = rocket::tokio::fs::File::open(&path)
        .await
        .map_err(|error| ApiError::Internal(format!("{}: {error}", path.display())))?;
    Ok((ContentType::new("application", "vnd.sqlite3"), file))
}

/// Receives a person's file (the body, as `GET …/file` gave it) as a
/// new person here, tokens and all: 201; 409 when the name is taken
/// here, 400 when the body is no database. Nothing is kept on refusal.
#[put("/api/0/users/<name>/file", data = "<body>")]
pub async fn receive(
    name: &str,
    body: Data<'_>,
    state: &State<ServerState>,
) -> Result<Custom<Json<FrozenUser>>, ApiError> {
    let hosting = hosting(state)?;
    let incoming = hosting.users.incoming_path(name).map_err(refused)?;
    if hosting
        .users
        .index()
        .user(name)
        .map_err(ApiError::Datastore)?
        .is_some()
    {
        return Err(refused(UsersError::Exists(name.to_string())));
    }
    let written = body.open(FILE_LIMIT).into_file(&incoming).await;
    let bytes = match written {
        Ok(file) if file.is_complete() => file.n.written,
        Ok(_) => {
            let _ = std::fs::remove_file(&incoming);
            return Err(ApiError::PayloadTooLarge(format!(
                "a person's file may be at most {FILE_LIMIT}"
            )));
        }
        Err(error) => {
            let _ = std::fs::remove_file(&incoming);
            return Err(ApiError::BadRequest(format!(
                "the body could not be read: {error}"
            )));
        }
    };
    let owned = name.to_string();
    blocking(move || hosting.users.receive(&owned, &incoming).map_err(refused)).await?;
    log::info!("Received the data of user '{name}' ({bytes} bytes) from another node");
    Ok(Custom(
        Status::Created,
        Json(FrozenUser {
            name: name.to_string(),
            bytes,
        }),
    ))
}
