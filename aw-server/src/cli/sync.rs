//! `aw-server sync`: one pass through the shared folder, online (the
//! running server runs it with its `[sync]` folder, `POST
//! /api/0/sync/run`) or offline on the database file. Offline, the folder
//! is `--sync-dir`, else the config file's `[sync] folder`, else aw-sync's
//! default (`dirs::sync_dir`); online, a `--sync-dir` must be the
//! server's. `--buckets` and `--start-date` mean what they mean to
//! aw-sync (`SyncFilter`). Files of other devices that cannot be read are
//! listed and skipped; the command still succeeds.

use std::path::PathBuf;

use aw_models::Timestamp;
use chrono::{NaiveDate, NaiveTime};
use clap::Args;

use super::{close, config_file, connect, connect_with, CliError, ConnectionArgs, SyncRequest};
use crate::dirs;
use aw_jobs::sync::source_line;
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
    let request = SyncRequest {
        folder,
        folder_given: args.folder.is_some(),
        mode: args.mode.into(),
        buckets: args.bucket_ids(),
        start,
        configured_buckets: configured.buckets.clone(),
        device_id: args.device_id.clone(),
        allow_plaintext_copy: configured.allow_plaintext_copy,
    };
    let result = target.backend().sync(&request);
    let closed = close(target);
    let report = result?;
    closed?;
    print(&report);
    Ok(())
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
