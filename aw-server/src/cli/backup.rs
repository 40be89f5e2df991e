//! `aw-server backup`: a snapshot of the database (`backup.rs`). Through
//! the running server when one holds the file (`POST /api/0/backup`, into
//! its `[backup] dir`), on the file itself otherwise: to `--to FILE`, else
//! into the config file's `[backup] dir`. Either way the snapshot is
//! consistent, checked, and complete under its name or not written.

use std::path::PathBuf;

use clap::Args;

use super::progress::{self, Unit};
use super::{close, config_file, connect, connect_with, CliError, ConnectionArgs, Target};
use crate::config;

/// Flags of `backup`.
#[derive(Debug, Clone, Args)]
pub struct BackupArgs {
    /// Write the snapshot to this file, which must not exist, in a folder
    /// that does (only without a running server: a server writes into its
    /// backup folder).
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
    let folder = config::backup_dir(&file.backup).map_err(|error| CliError(error.to_string()))?;
    if args.list {
        return list(&folder);
    }
    let target = match &args.connection.dbpath {
        Some(_) => connect(&args.connection, false)?,
        None => connect_with(&args.connection, false, file)?,
    };
    let result = backup(&target, &args, &folder);
    let closed = close(target);
    let (path, bytes, seconds) = result?;
    closed?;
    eprintln!(
        "Snapshot written: {path} ({:.1} MB) in {seconds:.1} s",
        bytes as f64 / 1e6
    );
    Ok(())
}

fn backup(
    target: &Target,
    args: &BackupArgs,
    folder: &std::path::Path,
) -> Result<(String, u64, f64), CliError> {
    let bar = progress::bar(None, Unit::Bytes, "Writing a snapshot".to_string());
    let written = match target {
        Target::Online(server) => {
            if let Some(to) = &args.to {
                return Err(CliError(format!(
                    "the server at {} writes its snapshots into its [backup] dir, not {}: \
                     leave out --to, or stop the server and run this command again",
                    server.base(),
                    to.display()
                )));
            }
            server.backup()?
        }
        Target::Offline { datastore, .. } => {
            let snapshot = match &args.to {
                Some(to) => datastore.snapshot(to),
                None => crate::backup::take(datastore, folder),
            }
            .map_err(|error| CliError(format!("the snapshot failed: {error}")))?;
            (
                snapshot.path.display().to_string(),
                snapshot.bytes,
                snapshot.took.as_secs_f64(),
            )
        }
    };
    bar.finish_and_clear();
    Ok(written)
}

/// Prints the snapshots in `folder`, oldest first, and their total size.
fn list(folder: &std::path::Path) -> Result<(), CliError> {
    let snapshots = crate::backup::list(folder)
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
