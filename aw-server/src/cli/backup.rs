//! `aw-server backup`: a snapshot of the database (`backup.rs`). Through
//! the running server when one holds the file (`POST /api/0/backup`, into
//! its `[backup] dir`), on the file itself otherwise: to `--to FILE`, else
//! into the config file's `[backup] dir`. Either way the snapshot is
//! consistent, checked, and complete under its name or not written.

use std::path::{Path, PathBuf};

use aw_datastore::{Datastore, DatastoreError};
use clap::Args;

use super::progress::{self, Unit};
use super::{close, config_file, connect, connect_with, CliError, ConnectionArgs};
use crate::config;
use aw_jobs::backup::Written;

/// Flags of `backup`.
#[derive(Debug, Clone, Args)]
pub struct BackupArgs {
    /// Write the snapshot to this file, which must not exist, in a folder
    /// that does (read by this command from the database file, also while
    /// a server serves it).
    #[arg(long, value_name = "FILE", conflicts_with = "list")]
    pub to: Option<PathBuf>,
    /// List the snapshots in the backup folder (time, size, file) instead
    /// of writing one.
    #[arg(long)]
    pub list: bool,
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

/// Runs `backup`.
pub fn run(args: BackupArgs) -> Result<(), CliError> {
    let file = config_file(&args.connection)?;
    let settings =
        config::resolve_backup(file.backup.clone()).map_err(|error| CliError(error.to_string()))?;
    if args.list {
        return list(&settings.dir);
    }
    let written = match &args.to {
        Some(to) => to_file(&args.connection, file, to)?,
        None => {
            let target = match &args.connection.dbpath {
                Some(_) => connect(&args.connection, false)?,
                None => connect_with(&args.connection, false, file)?,
            };
            let result = target.backend().snapshot(settings);
            let closed = close(target);
            let written = result?;
            closed?;
            written
        }
    };
    eprintln!(
        "Snapshot written: {} ({:.1} MB) in {:.1} s",
        written.path,
        written.bytes as f64 / 1e6,
        written.seconds
    );
    for removed in &written.removed {
        eprintln!("Rotation removed the older snapshot {removed}");
    }
    Ok(())
}

/// A snapshot to `to`, a file that must not exist: the database file (of
/// `--dbpath`, else the default one) is read by this process, through the
/// datastore when no server holds it, else through a read-only connection
/// of its own beside the server (a WAL file allows it). A server that
/// answers but serves another file than the default is an error: its file
/// is named with `--dbpath`.
fn to_file(
    connection: &ConnectionArgs,
    file: crate::config::FileConfig,
    to: &Path,
) -> Result<Written, CliError> {
    let key = super::database_key(connection.db_password.as_deref())?;
    let (path, named) = match &connection.dbpath {
        Some(path) => (path.clone(), true),
        None => (
            crate::dirs::db_path(connection.testing)
                .map_err(|error| CliError(error.to_string()))?,
            false,
        ),
    };
    if to.symlink_metadata().is_ok() {
        return Err(CliError(format!(
            "{} exists already: a snapshot never replaces a file",
            to.display()
        )));
    }
    let elsewhere = || {
        CliError(format!(
            "a server answers, but it does not serve the default database {}: name the file \
             it serves with --dbpath",
            path.display()
        ))
    };
    if !path.exists() {
        if !named && super::server_answers(connection, file)? {
            return Err(elsewhere());
        }
        return Err(CliError(format!("no database file at {}", path.display())));
    }
    let failed = |error: DatastoreError| CliError(format!("the snapshot failed: {error}"));
    let bar = progress::bar(None, Unit::Bytes, "Writing a snapshot".to_string());
    let snapshot = match Datastore::open_with_key(&path, key.as_ref()) {
        Ok(datastore) => {
            let served_elsewhere = !named && super::server_answers(connection, file)?;
            let snapshot = if served_elsewhere {
                None
            } else {
                Some(datastore.snapshot(to).map_err(failed))
            };
            datastore
                .close()
                .map_err(|error| CliError(format!("closing {} failed: {error}", path.display())))?;
            match snapshot {
                Some(snapshot) => snapshot?,
                None => return Err(elsewhere()),
            }
        }
        // Served: read beside the server.
        Err(DatastoreError::InUse(_)) => {
            aw_datastore::snapshot_file(&path, key.as_ref(), to).map_err(failed)?
        }
        Err(error) => {
            return Err(CliError(format!(
                "cannot open the database {}: {error}",
                path.display()
            )))
        }
    };
    bar.finish_and_clear();
    Ok(Written {
        path: snapshot.path.display().to_string(),
        bytes: snapshot.bytes,
        seconds: snapshot.took.as_secs_f64(),
        removed: Vec::new(),
    })
}

/// Prints the snapshots in `folder`, oldest first, and their total size.
fn list(folder: &std::path::Path) -> Result<(), CliError> {
    let snapshots = aw_jobs::backup::list(folder)
        .map_err(|error| CliError(format!("cannot read {}: {error}", folder.display())))?;
    if snapshots.is_empty() {
        eprintln!("No snapshots in {}", folder.display());
        return Ok(());
    }
    println!("{:<20}  {:>10}  file", "taken (UTC)", "size");
    for snapshot in &snapshots {
        println!(
            "{:<20}  {:>7.1} MB  {}",
            snapshot.time.to_datetime().format("%Y-%m-%d %H:%M:%S"),
            snapshot.bytes as f64 / 1e6,
            snapshot.path.display()
        );
    }
    let total: u64 = snapshots.iter().map(|snapshot| snapshot.bytes).sum();
    eprintln!(
        "{} snapshot{} in {}, {:.1} MB in all",
        snapshots.len(),
        if snapshots.len() == 1 { "" } else { "s" },
        folder.display(),
        total as f64 / 1e6
    );
    Ok(())
}
