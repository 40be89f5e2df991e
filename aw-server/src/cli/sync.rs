//! `aw-server sync`: one pass through the shared folder, online (the
//! running server runs it with its `[sync]` folder, `POST
//! /api/0/sync/run`) or offline on the database file. Offline, the folder
//! is `--sync-dir`, else the config file's `[sync] folder`, else aw-sync's
//! default (`dirs::sync_dir`); online, a `--sync-dir` must be the
//! server's. `--buckets` and `--start-date` mean what they mean to
//! aw-sync (`SyncFilter`). Files of other devices that cannot be read are
//! listed and skipped; the command still succeeds.

use std::path::{Path, PathBuf};

use aw_folder_sync::{SyncFilter, SyncFolder};
use aw_models::Timestamp;
use chrono::{NaiveDate, NaiveTime};
use clap::Args;

use super::progress::{self, Unit};
use super::{close, config_file, connect, connect_with, CliError, ConnectionArgs, Server, Target};
use crate::dirs;
use crate::sync::{run_pass, source_line};
use aw_models::{PassReport, SyncMode};

/// `--mode`: a `SyncMode`, as a flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeFlag {
    /// Only write this device's copy.
    Push,
    /// Only read the other devices' copies.
    Pull,
    /// Pull, then push (as aw-sync does).
    Both,
}

impl From<ModeFlag> for SyncMode {
    fn from(flag: ModeFlag) -> SyncMode {
        match flag {
            ModeFlag::Push => SyncMode::Push,
            ModeFlag::Pull => SyncMode::Pull,
            ModeFlag::Both => SyncMode::Both,
        }
    }
}

/// Flags of `sync`.
#[derive(Debug, Clone, Args)]
pub struct SyncArgs {
    /// Which way: push this device's buckets, pull the others', or both.
    #[arg(long, value_enum, default_value = "both")]
    pub mode: ModeFlag,
    /// Only these buckets, comma-separated: the own buckets pushed, and the
    /// other devices' buckets pulled (by their id on that device, or of
    /// their copy here). Default: all (or the config file's sync buckets).
    #[arg(long, value_name = "ID,...", value_delimiter = ',')]
    pub buckets: Option<Vec<String>>,
    /// Only events from this day on (YYYY-MM-DD, midnight UTC): earlier ones
    /// are not copied either way.
    #[arg(long, value_name = "YYYY-MM-DD")]
    pub start_date: Option<NaiveDate>,
    /// The shared folder (default: the folder of the config file's sync section,
    /// $AW_SYNC_DIR, or ~/ActivityWatchSync).
    #[arg(long = "sync-dir", alias = "folder", value_name = "DIR")]
    pub folder: Option<PathBuf>,
    /// This device's id when working on the database file (default: the
    /// server's persisted id).
    #[arg(long)]
    pub device_id: Option<String>,
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

impl SyncArgs {
    /// `--buckets a,b` as aw-sync reads it: blank parts are dropped, so
    /// an empty value means every bucket.
    fn bucket_ids(&self) -> Option<Vec<String>> {
        self.buckets.as_ref().map(|ids| {
            ids.iter()
                .map(|id| id.trim())
                .filter(|id| !id.is_empty())
                .map(str::to_string)
                .collect()
        })
    }

    /// `--start-date`: midnight UTC of that day, as aw-sync reads it.
    fn start(&self) -> Result<Option<Timestamp>, CliError> {
        self.start_date
            .map(|day| Timestamp::from_datetime(day.and_time(NaiveTime::MIN).and_utc()))
            .transpose()
            .map_err(|error| CliError(format!("--start-date: {error}")))
    }
}

/// Runs `sync`.
pub fn run(args: SyncArgs) -> Result<(), CliError> {
    let start = args.start()?;
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
        Target::Online(server) => online(server, &args, &folder, start),
        Target::Offline { datastore, .. } => {
            let device_id = super::device_id(args.device_id.as_deref())?;
            let folder = SyncFolder {
                folder,
                device_id,
                hostname: crate::dirs::hostname(),
            };
            let filter = SyncFilter {
                buckets: args.bucket_ids().or(configured.buckets.clone()),
                start,
            };
            offline(
                datastore,
                &folder,
                args.mode.into(),
                &filter,
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

fn online(
    server: &Server,
    args: &SyncArgs,
    folder: &Path,
    start: Option<Timestamp>,
) -> Result<PassReport, CliError> {
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
    let report = server.sync(args.mode.into(), args.bucket_ids().as_deref(), start);
    bar.finish_and_clear();
    report
}

fn offline(
    datastore: &aw_datastore::Datastore,
    folder: &SyncFolder,
    mode: SyncMode,
    filter: &SyncFilter,
    allow_plaintext_copy: bool,
) -> Result<PassReport, CliError> {
    let mut bar: Option<(String, indicatif::ProgressBar)> = None;
    let result = run_pass(
        datastore,
        folder,
        mode,
        filter,
        allow_plaintext_copy,
        &mut |step| {
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
        },
    );
    if let Some((_, current)) = bar {
        current.finish_and_clear();
    }
    result.map_err(|error| CliError(format!("sync failed: {error}")))
}

/// The report on stderr: a line per file read, skipped and pushed, then
/// the summary.
fn print(report: &PassReport) {
    if let Some(pull) = &report.pull {
        for source in &pull.sources {
            eprintln!("{}", source_line(source));
        }
        for skipped in &pull.skipped {
            eprintln!("skipped {}: {}", skipped.name, skipped.reason);
        }
    }
    eprintln!("{}", report.summary());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_start_dates_read_as_aw_sync_reads_them() {
        use clap::Parser;

        #[derive(Parser)]
        struct Command {
            #[command(flatten)]
            sync: SyncArgs,
        }
        let parse = |args: &[&str]| {
            Command::try_parse_from(std::iter::once("sync").chain(args.iter().copied()))
                .map(|command| command.sync)
        };
        let args = parse(&["--buckets", " a, b ,,c", "--start-date", "2026-11-01"]).unwrap();
        assert_eq!(args.bucket_ids().unwrap(), ["a", "b", "c"]);
        assert_eq!(
            args.start().unwrap(),
            Some(Timestamp::parse("2026-11-01T00:00:00Z").unwrap())
        );
        assert!(parse(&["--buckets", " "])
            .unwrap()
            .bucket_ids()
            .unwrap()
            .is_empty());
        assert_eq!(parse(&[]).unwrap().bucket_ids(), None);
        for bad in [
            "2026-11-01T10:00:00Z",
            "yesterday",
            "2026-13-01",
            "20-11-2026",
        ] {
            assert!(parse(&["--start-date", bad]).is_err(), "{bad}");
        }
    }
}
