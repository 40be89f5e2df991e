//! Cleaning stored history (ours, `docs/API.md` §3.10):
//! `POST /api/0/privacy/apply` applies the privacy rules in force to the
//! events already stored, `POST /api/0/vacuum` gives the space deleted
//! events took back to the file system. The range delete is in `events`.
//! The work is the datastore's, chunk by chunk so heartbeats keep flowing.

use std::collections::BTreeMap;
use std::path::Path;

use aw_datastore::{PrivacyRules, RulesOutcome, RulesReport};
use aw_models::SettingValue;
use rocket::data::Data;
use rocket::post;
use rocket::serde::json::Json;
use serde::Serialize;

use super::background;
use super::request::{blocking, flag_param, read_optional_json};
use crate::error::ApiError;
use crate::served::Served;

/// The answer of `POST /api/0/privacy/apply`.
#[derive(Debug, Serialize)]
pub struct Applied {
    /// Whether this was a dry run (nothing changed).
    pub dry_run: bool,
    /// Events dropped (or that would be), all buckets.
    pub dropped: u64,
    /// Events redacted (or that would be), all buckets.
    pub redacted: u64,
    /// Per bucket the rules apply to: `examined`, `dropped`, `redacted`.
    pub buckets: BTreeMap<String, RulesOutcome>,
}

impl Applied {
    fn new(dry_run: bool, reports: Vec<RulesReport>) -> Applied {
        let mut applied = Applied {
            dry_run,
            dropped: 0,
            redacted: 0,
            buckets: BTreeMap::new(),
        };
        for report in reports {
            applied.dropped += report.outcome.dropped;
            applied.redacted += report.outcome.redacted;
            applied.buckets.insert(report.bucket_id, report.outcome);
        }
        applied
    }
}

/// Applies the rules of the `privacy_filters` setting to stored events
/// (with `dry_run=true`, counts what it would do). A dry run may carry a
/// rule set as its body (the setting's format): then it counts what those
/// rules would do, so rules being edited can be tried before they are
/// saved; they are checked as a save would check them (400 naming the
/// rule).
#[post("/api/0/privacy/apply?<dry_run>", data = "<body>")]
pub async fn apply(
    dry_run: Option<&str>,
    body: Data<'_>,
    served: &Served,
) -> Result<Json<Applied>, ApiError> {
    let dry_run = flag_param("dry_run", dry_run)?;
    let rules = read_rules(body).await?;
    if rules.is_some() && !dry_run {
        return Err(ApiError::BadRequest(
            "Rules in the body are only for a dry run (dry_run=true): save them as the \
             privacy_filters setting to apply them"
                .to_string(),
        ));
    }
    let datastore = served.datastore.clone();
    // The events are read and judged on this thread (`maintenance.rs` in
    // aw-datastore): a low-priority one, so heartbeats get the CPU first.
    let applied = background(move || {
        let reports = match (&rules, dry_run) {
            (Some(rules), _) => datastore.preview_privacy_rules_with(rules, &mut |_| {})?,
            (None, true) => datastore.preview_privacy_rules(&mut |_| {})?,
            (None, false) => datastore.apply_privacy_rules(&mut |_| {})?,
        };
        Ok(Applied::new(dry_run, reports))
    })
    .await?;
    if !dry_run {
        log::info!(
            "Privacy filters applied to history: {} events dropped, {} redacted",
            applied.dropped,
            applied.redacted
        );
    }
    Ok(Json(applied))
}

/// The rule set of a request's body, if it has one (an empty body or
/// `null`: none).
async fn read_rules(body: Data<'_>) -> Result<Option<PrivacyRules>, ApiError> {
    let value: Option<SettingValue> = read_optional_json(body).await?;
    match value {
        None | Some(SettingValue::Null) => Ok(None),
        Some(value) => PrivacyRules::compile(&value, aw_query::limits::MAX_REGEX_SIZE)
            .map(Some)
            .map_err(|error| ApiError::BadRequest(format!("Invalid privacy filters: {error}"))),
    }
}

/// The answer of `POST /api/0/vacuum`: the file's size before and after.
#[derive(Debug, Serialize)]
pub struct Vacuumed {
    /// Bytes of the database file (with its WAL) before.
    pub size_before: u64,
    /// Bytes after.
    pub size_after: u64,
}

/// Rebuilds the database file so the space of deleted events is given
/// back (SQLite's `VACUUM`, which also turns incremental vacuum on for
/// later deletes). Writes wait while it runs; it needs free disk space
/// about the size of the file.
#[post("/api/0/vacuum")]
pub async fn vacuum(served: &Served) -> Result<Json<Vacuumed>, ApiError> {
    let datastore = served.datastore.clone();
    let path = served.db_path.clone();
    let vacuumed = blocking(move || {
        let size_before = database_size(&path);
        datastore.vacuum()?;
        let size_after = database_size(&path);
        log::info!("Vacuumed the database: {size_before} -> {size_after} bytes");
        Ok(Vacuumed {
            size_before,
            size_after,
        })
    })
    .await?;
    Ok(Json(vacuumed))
}

/// Bytes of a database file and its WAL (0 for what is missing).
pub fn database_size(path: &Path) -> u64 {
    let size = |path: &Path| std::fs::metadata(path).map_or(0, |meta| meta.len());
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    size(path) + size(Path::new(&wal))
}
