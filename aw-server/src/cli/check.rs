//! `aw-server check [--repair]`: whether the database file is healthy,
//! damaged, or no database at all (`aw_datastore::salvage::check`, on a
//! read-only connection, so it also runs beside a server). With
//! `--repair`, and no server using the file, a damaged database is
//! salvaged as a start would (`damage.rs`): every row still readable into
//! a new file, the damaged one moved aside whole.

use std::path::PathBuf;
use std::time::Instant;

use aw_datastore::salvage::{self, Health};
use aw_datastore::DatastoreError;
use clap::Args;

use super::progress::{self, Unit};
use super::{database_key, CliError};
use crate::{damage, dirs};

/// Flags of `check`.
#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// Salvage a damaged database (stop the server first): every row that
    /// can still be read goes into a new file, the damaged one is moved
    /// aside.
    #[arg(long)]
    pub repair: bool,
    /// The database file (default: the server's).
    #[arg(long)]
    pub dbpath: Option<PathBuf>,
    /// Testing mode: the testing database file.
    #[arg(long)]
    pub testing: bool,
    /// Password of an encrypted database.
    #[arg(long, env = "AW_DB_PASSWORD", hide_env_values = true)]
    pub db_password: Option<String>,
}

/// What to do instead, said after every finding but "healthy".
const SNAPSHOTS: &str = "a snapshot may hold more: `aw-server backup --list`, then stop the \
                         server and `aw-server restore FILE`";

/// Runs `check`.
pub fn run(args: CheckArgs) -> Result<(), CliError> {
    let key = database_key(args.db_password.as_deref())?;
    let db = match &args.dbpath {
        Some(path) => path.clone(),
        None => dirs::db_path(args.testing).map_err(|error| CliError(error.to_string()))?,
    };
    if !db.is_file() {
        return Err(CliError(format!("no database file at {}", db.display())));
    }
    let bar = progress::bar(None, Unit::Bytes, format!("Checking {}", db.display()));
    let started = Instant::now();
    let health = salvage::check(&db, key.as_ref())
        .map_err(|error| CliError(format!("cannot check {}: {error}", db.display())));
    bar.finish_and_clear();
    match health? {
        Health::Healthy => {
            let bytes = std::fs::metadata(&db).map_or(0, |metadata| metadata.len());
            eprintln!(
                "The database {} is healthy ({:.1} MB, checked in {:.1} s).",
                db.display(),
                bytes as f64 / 1e6,
                started.elapsed().as_secs_f64()
            );
            if let Some(damaged) = damaged_beside(&db) {
                eprintln!(
                    "It was salvaged from a damaged file, kept at {}: {SNAPSHOTS}.",
                    damaged.display()
                );
            }
            Ok(())
        }
        Health::Unreadable(why) => Err(CliError(format!(
            "{why}. Nothing can be salvaged from a file that is not a database; {SNAPSHOTS}"
        ))),
        Health::Damaged(detail) if !args.repair => Err(CliError(format!(
            "the database {} is damaged ({detail}). Stop the server and run `aw-server check \
             --repair` to salvage every row that can still be read, or restore a snapshot: \
             {SNAPSHOTS}",
            db.display()
        ))),
        Health::Damaged(detail) => {
            eprintln!("The database {} is damaged: {detail}", db.display());
            let bar = progress::bar(None, Unit::Bytes, "Salvaging".to_string());
            let report = salvage::salvage(&db, key.as_ref());
            bar.finish_and_clear();
            let report = report.map_err(|error| {
                CliError(match error {
                    DatastoreError::InUse(_) => format!(
                        "not repaired: a running aw-server uses {}; stop it, then run this \
                         command again (a start salvages it too)",
                        db.display()
                    ),
                    error => format!("not repaired: {error}"),
                })
            })?;
            for line in damage::describe(&report) {
                eprintln!("{line}");
            }
            Ok(())
        }
    }
}

/// The newest damaged file a salvage moved aside beside `db`
/// (`<db>.damaged-<time>`), if any.
fn damaged_beside(db: &std::path::Path) -> Option<PathBuf> {
    let folder = db
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty())?;
    let prefix = format!("{}.damaged-", db.file_name()?.to_str()?);
    let mut found: Vec<PathBuf> = std::fs::read_dir(folder)
        .ok()?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| {
                    name.starts_with(&prefix)
                        && !["-wal", "-shm", "-journal"]
                            .iter()
                            .any(|side| name.ends_with(side))
                })
        })
        .collect();
    found.sort();
    found.pop()
}
