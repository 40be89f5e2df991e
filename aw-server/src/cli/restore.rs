//! `aw-server restore SNAPSHOT`: puts a snapshot back in place of the
//! database file (`aw_datastore::restore`), which no server may be using.
//! The snapshot is checked first; the current database and its `-wal` are
//! moved aside, never deleted; new event ids go on above every id issued
//! before (read from the current file and from this device's copy in the
//! sync folder, if there is one), and the next sync pass compares every
//! bucket with that copy, so other devices end with the restored history
//! and nothing twice.

use std::path::PathBuf;

use aw_datastore::restore::{self, IssuedMarks};
use aw_datastore::DatastoreError;
use aw_folder_sync::SyncFolder;
use clap::Args;

use super::{config_file, database_key, CliError};
use crate::dirs;

/// Flags of `restore`.
#[derive(Debug, Clone, Args)]
pub struct RestoreArgs {
    /// The snapshot to restore (a file `aw-server backup` wrote; see
    /// `aw-server backup --list`).
    pub snapshot: PathBuf,
    /// The database file to replace (default: the server's).
    #[arg(long)]
    pub dbpath: Option<PathBuf>,
    /// Testing mode: the testing config and database files.
    #[arg(long)]
    pub testing: bool,
    /// Config file (its sync folder is read for the ids issued).
    #[arg(short, long)]
    pub config: Option<PathBuf>,
    /// The sync folder to read this device's copy from (default: the config
    /// file's sync folder, $AW_SYNC_DIR, or ~/ActivityWatchSync).
    #[arg(long = "sync-dir", value_name = "DIR")]
    pub sync_dir: Option<PathBuf>,
    /// This device's id in the sync folder (default: the persisted one).
    #[arg(long)]
    pub device_id: Option<String>,
    /// Password of the encrypted database and snapshot.
    #[arg(long, env = "AW_DB_PASSWORD", hide_env_values = true)]
    pub db_password: Option<String>,
}

/// Runs `restore`.
pub fn run(args: RestoreArgs) -> Result<(), CliError> {
    let key = database_key(args.db_password.as_deref())?;
    let db = match &args.dbpath {
        Some(path) => path.clone(),
        None => dirs::db_path(args.testing).map_err(|error| CliError(error.to_string()))?,
    };
    let (issued, copy) = sync_marks(&args)?;
    let restored =
        restore::restore(&args.snapshot, &db, key.as_ref(), &issued).map_err(|error| {
            CliError(match error {
                DatastoreError::InUse(_) => format!(
                "not restored: a running aw-server uses {}; stop it, then run this command again",
                db.display()
            ),
                error => format!("not restored: {error}"),
            })
        })?;
    // `restore` checked the snapshot before anything moved.
    let facts = &restored.facts;
    eprintln!(
        "Checked the snapshot {}: {} bucket{}, {} event{}{}.",
        args.snapshot.display(),
        facts.buckets,
        if facts.buckets == 1 { "" } else { "s" },
        facts.events,
        if facts.events == 1 { "" } else { "s" },
        facts
            .newest
            .map(|newest| format!(", the newest ending {newest}"))
            .unwrap_or_default()
    );
    match restored.moved_aside.split_first() {
        Some((database, rest)) => eprintln!(
            "Moved the database that was in place aside to {}{}.",
            database.display(),
            if rest.is_empty() {
                String::new()
            } else {
                format!(
                    " (with {})",
                    rest.iter()
                        .map(|path| path.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        ),
        None => eprintln!("There was no database at {}.", db.display()),
    }
    if let Some(why) = &restored.unread_marks {
        eprintln!("Could not read the ids issued by the database moved aside: {why}");
    }
    eprintln!(
        "Restored {} as {}. New events get ids from {}{}.",
        args.snapshot.display(),
        db.display(),
        restored.next_event_id,
        match &copy {
            Some(copy) => format!(
                "; the next sync pass compares every bucket with this device's copy {}",
                copy.display()
            ),
            None => String::new(),
        }
    );
    Ok(())
}

/// The marks this device's copy in the sync folder holds, and the copy,
/// if there is one.
fn sync_marks(args: &RestoreArgs) -> Result<(IssuedMarks, Option<PathBuf>), CliError> {
    let connection = super::ConnectionArgs {
        testing: args.testing,
        host: None,
        port: None,
        config: args.config.clone(),
        dbpath: None,
        db_password: None,
        token: None,
    };
    let file = config_file(&connection)?;
    let folder = match args
        .sync_dir
        .clone()
        .or(file.sync.and_then(|sync| sync.folder.map(PathBuf::from)))
    {
        Some(folder) => folder,
        None => match dirs::sync_dir() {
            Ok(folder) => folder,
            Err(_) => return Ok((IssuedMarks::default(), None)),
        },
    };
    let device_id = super::device_id(args.device_id.as_deref())?;
    let folder = SyncFolder {
        folder,
        device_id,
        hostname: String::new(),
    };
    match aw_folder_sync::issued_marks(&folder) {
        Ok(Some(marks)) => Ok((marks, Some(folder.own_file()))),
        Ok(None) => Ok((IssuedMarks::default(), None)),
        Err(error) => Err(CliError(format!(
            "not restored: cannot read this device's copy {} in the sync folder: {error}",
            folder.own_file().display()
        ))),
    }
}
