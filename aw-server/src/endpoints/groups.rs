//! Sharing between people of a server that hosts several (`docs/API.md`
//! §3.17): groups made, invited to, joined and left with each person's
//! own token (`aw_users` keeps the rules), and the members' shared totals
//! side by side, read from each member's own file when asked for.
//! Nobody's apps are shown unless they chose to share them; titles and
//! URLs never are. A server of one person answers 404.

use aw_datastore::{Group, Invitation};
use aw_summary::{summarize, Params};
use rocket::data::Data;
use rocket::http::Status;
use rocket::response::status::Custom;
use rocket::serde::json::Json;
use rocket::{get, post, State};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

use super::background;
use super::request::{blocking, read_json, read_optional_json, JSON_LIMIT};
use super::users::refused;
use crate::error::ApiError;
use crate::served::{Hosting, Served};
use crate::ServerState;

/// A group as its members see it.
#[derive(Debug, Serialize)]
pub struct GroupView {
    pub name: String,
    pub created: aw_models::Timestamp,
    pub members: Vec<MemberView>,
}

/// A member and what they share.
#[derive(Debug, Serialize)]
pub struct MemberView {
    pub name: String,
    pub joined: aw_models::Timestamp,
    /// `["categories"]`, or `["categories", "apps"]`.
    pub shares: Vec<&'static str>,
}

/// An invitation to the caller.
#[derive(Debug, Serialize)]
pub struct InvitationView {
    pub group: String,
    pub invited_by: String,
    pub at: aw_models::Timestamp,
}

/// The caller's groups and invitations.
#[derive(Debug, Serialize)]
pub struct Groups {
    pub groups: Vec<GroupView>,
    pub invitations: Vec<InvitationView>,
}

fn view(group: Group) -> GroupView {
    GroupView {
        name: group.name,
        created: group.created,
        members: group
            .members
            .into_iter()
            .map(|member| MemberView {
                shares: shares(member.share_apps),
                name: member.user,
                joined: member.joined,
            })
            .collect(),
    }
}

fn shares(apps: bool) -> Vec<&'static str> {
    if apps {
        vec!["categories", "apps"]
    } else {
        vec!["categories"]
    }
}

fn invitation(invitation: Invitation) -> InvitationView {
    InvitationView {
        group: invitation.group,
        invited_by: invitation.invited_by,
        at: invitation.at,
    }
}

/// The hosting and the caller's name: a person of a server that hosts
/// several, or 404.
fn person(state: &ServerState, served: &Served) -> Result<(Arc<Hosting>, String), ApiError> {
    match (&state.hosting, &served.user) {
        (Some(hosting), Some(user)) => Ok((Arc::clone(hosting), user.clone())),
        _ => Err(ApiError::NotFound(
            "This server serves one person: it has no groups".to_string(),
        )),
    }
}

/// The body of `POST /api/0/groups`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewGroup {
    pub name: String,
    #[serde(default)]
    pub share_apps: bool,
}

/// The body of `POST /api/0/groups/<group>/invitations`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewInvitation {
    pub user: String,
}

/// The body of `POST /api/0/groups/<group>/join` (may be empty).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Join {
    #[serde(default)]
    pub share_apps: bool,
}

/// The caller's groups and the invitations to them.
#[get("/api/0/groups")]
pub async fn list(state: &State<ServerState>, served: &Served) -> Result<Json<Groups>, ApiError> {
    let (hosting, user) = person(state, served)?;
    let (groups, invitations) =
        blocking(move || hosting.users.groups_of(&user).map_err(refused)).await?;
    Ok(Json(Groups {
        groups: groups.into_iter().map(view).collect(),
        invitations: invitations.into_iter().map(invitation).collect(),
    }))
}

/// Makes a group with the caller as its first member: 201.
#[post("/api/0/groups", data = "<body>")]
pub async fn create(
    body: Data<'_>,
    state: &State<ServerState>,
    served: &Served,
) -> Result<Custom<Json<GroupView>>, ApiError> {
    let (hosting, user) = person(state, served)?;
    let request: NewGroup = read_json(body, JSON_LIMIT).await?;
    let group = blocking(move || {
        hosting
            .users
            .create_group(&user, &request.name, request.share_apps)
            .map_err(refused)
    })
    .await?;
    Ok(Custom(Status::Created, Json(view(group))))
}

/// A member invites another person: 201. Joining is theirs to do.
#[post("/api/0/groups/<group>/invitations", data = "<body>")]
pub async fn invite(
    group: &str,
    body: Data<'_>,
    state: &State<ServerState>,
    served: &Served,
) -> Result<Custom<Json<InvitationView>>, ApiError> {
    let (hosting, by) = person(state, served)?;
    let request: NewInvitation = read_json(body, JSON_LIMIT).await?;
    let (group, invited) = (group.to_string(), request.user);
    let answer = InvitationView {
        group: group.clone(),
        invited_by: by.clone(),
        at: aw_models::Timestamp::now(),
    };
    blocking(move || hosting.users.invite(&by, &group, &invited).map_err(refused)).await?;
    Ok(Custom(Status::Created, Json(answer)))
}

/// The caller joins a group that invited them (or changes what they
/// share).
#[post("/api/0/groups/<group>/join", data = "<body>")]
pub async fn join(
    group: &str,
    body: Data<'_>,
    state: &State<ServerState>,
    served: &Served,
) -> Result<Json<GroupView>, ApiError> {
    let (hosting, user) = person(state, served)?;
    let request: Join = read_optional_json(body).await?.unwrap_or_default();
    let group = group.to_string();
    let joined = blocking(move || {
        hosting
            .users
            .join(&user, &group, request.share_apps)
            .map_err(refused)
    })
    .await?;
    Ok(Json(view(joined)))
}

/// The caller leaves a group (or declines its invitation); what they
/// shared is no longer shown from this request on.
#[post("/api/0/groups/<group>/leave")]
pub async fn leave(
    group: &str,
    state: &State<ServerState>,
    served: &Served,
) -> Result<super::request::Empty, ApiError> {
    let (hosting, user) = person(state, served)?;
    let group = group.to_string();
    blocking(move || hosting.users.leave(&user, &group).map_err(refused)).await?;
    Ok(super::request::Empty(Status::Ok))
}

/// A member's shared totals.
#[derive(Debug, Serialize)]
pub struct MemberTotals {
    pub name: String,
    pub shares: Vec<&'static str>,
    /// Active seconds over the period.
    pub duration: f64,
    /// Each day's active seconds and seconds per category.
    pub days: Vec<DayTotals>,
    /// Seconds per app, when the member shares them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub apps: Option<BTreeMap<String, f64>>,
}

/// One day of a member's.
#[derive(Debug, Serialize)]
pub struct DayTotals {
    pub date: String,
    pub duration: f64,
    pub categories: BTreeMap<String, f64>,
}

/// The group's shared totals.
#[derive(Debug, Serialize)]
pub struct GroupTotals {
    pub group: String,
    pub start: aw_models::Timestamp,
    pub end: aw_models::Timestamp,
    pub members: Vec<MemberTotals>,
}

/// Most apps a member's totals list.
const APPS_SHOWN: usize = 20;

/// The members' shared totals of a period, side by side, each from their
/// own file with their own categories and day start (`start`, `end` and
/// `tz` as `/api/0/summary` reads them).
#[get("/api/0/groups/<group>/totals?<start>&<end>&<tz>")]
pub async fn totals(
    group: &str,
    start: Option<String>,
    end: Option<String>,
    tz: Option<String>,
    state: &State<ServerState>,
    served: &Served,
) -> Result<Json<GroupTotals>, ApiError> {
    let (hosting, user) = person(state, served)?;
    let own_host = state.info.hostname.clone();
    let name = group.to_string();
    let totals = background(move || {
        let group = hosting.users.member_group(&user, &name).map_err(refused)?;
        let (mut first, mut last) = (None, None);
        let mut members = Vec::new();
        for member in group.members {
            let file = hosting.served(&member.user).map_err(|error| {
                ApiError::Unavailable(format!("Cannot read a member's data: {error}"))
            })?;
            let source = aw_summary::Served {
                datastore: file.datastore.clone(),
                own_host: own_host.clone(),
                cache: file.cache.clone(),
            };
            let by = if member.share_apps { "day,app" } else { "day" };
            let params = Params {
                start: start.clone(),
                end: end.clone(),
                by: Some(by.to_string()),
                host: None,
                tz: tz.clone(),
                limit: Some(APPS_SHOWN),
                categories: None,
            };
            let summary = summarize(&source, &params).map_err(ApiError::from)?;
            first = first.or(Some(summary.start));
            last = last.or(Some(summary.end));
            members.push(MemberTotals {
                name: member.user,
                shares: shares(member.share_apps),
                duration: summary.duration,
                days: summary
                    .day
                    .unwrap_or_default()
                    .into_iter()
                    .map(|day| DayTotals {
                        date: day.date,
                        duration: day.duration,
                        categories: day.categories,
                    })
                    .collect(),
                apps: member.share_apps.then(|| {
                    summary
                        .app
                        .unwrap_or_default()
                        .into_iter()
                        .map(|row| (row.key, row.duration))
                        .collect()
                }),
            });
        }
        Ok(GroupTotals {
            group: group.name,
            start: first.unwrap_or_else(aw_models::Timestamp::now),
            end: last.unwrap_or_else(aw_models::Timestamp::now),
            members,
        })
    })
    .await?;
    Ok(Json(totals))
}
