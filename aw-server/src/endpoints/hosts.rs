//! Hosts (`docs/API.md` §3.15): `GET /api/0/hosts` lists them;
//! `POST /api/0/hosts/<host>/rename` and `/merge` (admin) change them,
//! after a snapshot, or with `"dry_run": true` show the plan only;
//! `PUT` and `DELETE /api/0/hosts/<alias>/alias` manage aliases by hand.
//! The plans and steps are `aw-hosts`'s.

use aw_hosts::Change;
use aw_models::{AliasRequest, HostInfo, HostReport, MergeRequest, RenameRequest};
use rocket::data::Data;
use rocket::serde::json::Json;
use rocket::{delete, get, post, put};

use super::request::{blocking, read_json, Empty, JSON_LIMIT};
use crate::error::ApiError;
use crate::served::Served;

/// Every host of this server's buckets, with aliases.
#[get("/api/0/hosts")]
pub async fn list(served: &Served) -> Result<Json<Vec<HostInfo>>, ApiError> {
    let datastore = served.datastore.clone();
    Ok(Json(
        blocking(move || Ok(aw_hosts::hosts(&datastore)?)).await?,
    ))
}

async fn run(served: &Served, change: Change, dry_run: bool) -> Result<Json<HostReport>, ApiError> {
    let datastore = served.datastore.clone();
    let backups = std::sync::Arc::clone(&served.jobs.backups);
    let auth = std::sync::Arc::clone(&served.auth);
    let report = blocking(move || {
        let mut snapshot = || {
            backups
                .take(&datastore, false)
                .map(|taken| taken.snapshot.path.display().to_string())
                .map_err(|error| format!("no snapshot was written: {error}"))
        };
        let report = aw_hosts::change(&datastore, &change, dry_run, &mut snapshot, &mut |_, _| {});
        if !dry_run {
            // Whatever got done, tokens now cover the new aliases.
            auth.hosts_changed()?;
        }
        Ok(report?)
    })
    .await?;
    Ok(Json(report))
}

/// Renames host `host`: its buckets take the new host (and the watchers'
/// ids its name); the old name stays an alias.
#[post("/api/0/hosts/<host>/rename", data = "<body>")]
pub async fn rename(
    host: &str,
    body: Data<'_>,
    served: &Served,
) -> Result<Json<HostReport>, ApiError> {
    let request: RenameRequest = read_json(body, JSON_LIMIT).await?;
    let change = Change::Rename {
        from: host.to_string(),
        to: request.to,
    };
    run(served, change, request.dry_run).await
}

/// Merges host `host` into another: each bucket into that host's of the
/// same type and client, or renamed when it has none.
#[post("/api/0/hosts/<host>/merge", data = "<body>")]
pub async fn merge(
    host: &str,
    body: Data<'_>,
    served: &Served,
) -> Result<Json<HostReport>, ApiError> {
    let request: MergeRequest = read_json(body, JSON_LIMIT).await?;
    let change = Change::Merge {
        from: host.to_string(),
        into: request.into,
    };
    run(served, change, request.dry_run).await
}

/// Makes `alias` a name of host `host` (which must have buckets).
#[put("/api/0/hosts/<alias>/alias", data = "<body>")]
pub async fn alias(
    alias: &str,
    body: Data<'_>,
    served: &Served,
) -> Result<Json<Vec<HostInfo>>, ApiError> {
    let request: AliasRequest = read_json(body, JSON_LIMIT).await?;
    let datastore = served.datastore.clone();
    let auth = std::sync::Arc::clone(&served.auth);
    let alias = alias.to_string();
    let hosts = blocking(move || {
        aw_hosts::set_alias(&datastore, &alias, &request.host)?;
        auth.hosts_changed()?;
        Ok(aw_hosts::hosts(&datastore)?)
    })
    .await?;
    Ok(Json(hosts))
}

/// Ends an alias: 204, or 404 when `alias` is none.
#[delete("/api/0/hosts/<alias>/alias")]
pub async fn unalias(alias: &str, served: &Served) -> Result<Empty, ApiError> {
    let datastore = served.datastore.clone();
    let auth = std::sync::Arc::clone(&served.auth);
    let alias = alias.to_string();
    blocking(move || {
        aw_hosts::unset_alias(&datastore, &alias)?;
        auth.hosts_changed()?;
        Ok(())
    })
    .await?;
    Ok(Empty(rocket::http::Status::NoContent))
}
