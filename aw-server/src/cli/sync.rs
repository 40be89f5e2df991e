//! `aw-server sync`: one pass through the shared folder, online (the
//! running server runs it with its `[sync]` folder, `POST
//! /api/0/sync/run`) or offline on the database file. Offline, the folder
//! is `--folder`, else the config file's `[sync] folder`, else aw-sync's
//! default (`dirs::sync_dir`); online, a `--folder` must be the server's.
//! Files of other devices that cannot be read are listed and skipped; the
//! command still succeeds.

use std::path::{Path, PathBuf};

use aw_datastore::SyncFolder;
use clap::Args;

use super::progress::{self, Unit};
use super::{close, config_file, connect, connect_with, CliError, ConnectionArgs, Server, Target};
use crate::dirs;
use crate::sync::{run_pass, PassReport, SyncMode};

/// Flags of `sync`.
#[derive(Debug, Clone, Args)]
pub struct SyncArgs {
    /// Which way: push this device's buckets, pull the others', or both.
    #[arg(long, value_enum, default_value = "both")]
    pub mode: SyncMode,
    /// The shared folder (default: the folder of the config file's sync section,
    /// $AW_SYNC_DIR, or ~/ActivityWatchSync).
    #[arg(long)]
    pub folder: Option<PathBuf>,
    /// This device's id when working on the database file (default: the
    /// server's persisted id).
    #[arg(long)]
    pub device_id: Option<String>,
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

/// Runs `sync`.
pub fn run(args: SyncArgs) -> Result<(), CliError> {
    let file = config_file(&args.connection)?;
    let configured = file.sync.clone().unwrap_or_default();
    let folder = match args.folder.clone().or(configured.folder.map(PathBuf::from)) {
        Some(folder) => std::path::absolute(&folder).map_err(|error| {
            CliError(format!(
                "cannot resolve the folder {}: {error}",
                folder.display()
            ))
        })?,
        None => dirs::sync_dir().map_err(|error| CliError(error.to_string()))?,
    };
    let target = match &args.connection.dbpath {
        Some(_) => connect(&args.connection, true)?,
        None => connect_with(&args.connection, true, file)?,
    };
    let result = match &target {
        Target::Online(server) => online(server, &args, &folder),
        Target::Offline { datastore, .. } => {
            let device_id = match &args.device_id {
                Some(id) => id.clone(),
                None => dirs::data_dir()
                    .and_then(|dir| dirs::device_id(&dir))
                    .map_err(|error| CliError(format!("cannot read the device id: {error}")))?,
            };
            let folder = SyncFolder {
                folder,
                device_id,
                hostname: gethostname::gethostname().to_string_lossy().into_owned(),
            };
            offline(
                datastore,
                &folder,
                args.mode,
                configured.allow_plaintext_copy,
            )
        }
    };
    let closed = close(target);
    let report = result?;
    closed?;
    print(&report);
    Ok(())
}

fn online(server: &Server, args: &SyncArgs, folder: &Path) -> Result<PassReport, CliError> {
    let status = server.sync_status()?;
    let Some(configured) = status.folder else {
        return Err(CliError(format!(
            "the server at {} has no [sync] section in its config file: add one with the \
             folder, or stop the server and run this command again to sync the database file",
            server.base()
        )));
    };
    if args.folder.is_some() && configured != folder {
        return Err(CliError(format!(
            "the server at {} syncs with {}, not {}: change its [sync] folder, or stop it and \
             run this command again to sync the database file",
            server.base(),
            configured.display(),
            folder.display()
        )));
    }
    let bar = progress::bar(
        None,
        Unit::Events,
        format!("Syncing with {}", configured.display()),
    );
    let report = server.sync(args.mode);
    bar.finish_and_clear();
    report
}

fn offline(
    datastore: &aw_datastore::Datastore,
    folder: &SyncFolder,
    mode: SyncMode,
    allow_plaintext_copy: bool,
) -> Result<PassReport, CliError> {
    let mut bar: Option<(String, indicatif::ProgressBar)> = None;
    let result = run_pass(datastore, folder, mode, allow_plaintext_copy, &mut |step| {
        if bar.as_ref().is_none_or(|(stage, _)| *stage != step.stage) {
            if let Some((_, old)) = bar.take() {
                old.finish_and_clear();
            }
            bar = Some((
                step.stage.clone(),
                progress::bar(step.total, Unit::Events, step.stage.clone()),
            ));
        }
        if let Some((_, current)) = &bar {
            current.set_position(step.done);
        }
    });
    if let Some((_, current)) = bar {
        current.finish_and_clear();
    }
    result.map_err(|error| CliError(format!("sync failed: {error}")))
}

/// The report on stderr: a line per file read, skipped and pushed.
fn print(report: &PassReport) {
    if let Some(pull) = &report.pull {
        for source in &pull.sources {
            let counts = source.counts;
            eprintln!(
                "{} (device {}): {} new, {} updated, {} deleted, {} already here, {} dropped",
                source.file,
                source.device,
                counts.inserted,
                counts.updated,
                counts.deleted,
                counts.skipped,
                counts.dropped
            );
        }
        for skipped in &pull.skipped {
            eprintln!("skipped {}: {}", skipped.name, skipped.reason);
        }
    }
    eprintln!("{}", report.summary());
}
