//! `aw-server vacuum`: gives the space of deleted events back to the file
//! system by rebuilding the database file (SQLite's `VACUUM`), which also
//! turns incremental vacuum on so later deletes give space back by
//! themselves. Through the running server when one holds the file
//! (`POST /api/0/vacuum`), on the file itself otherwise. The rebuild
//! writes a copy of the database, so the command first says how much free
//! space it needs and refuses to start without it.

use std::path::Path;
use std::time::Instant;

use clap::Args;

use super::progress::{self, Unit};
use super::{close, connect, CliError, ConnectionArgs, Target};
use crate::endpoints::privacy::database_size;

/// Flags of `vacuum`.
#[derive(Debug, Clone, Args)]
pub struct VacuumArgs {
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

/// Runs `vacuum`.
pub fn run(args: VacuumArgs) -> Result<(), CliError> {
    let started = Instant::now();
    let target = connect(&args.connection, false)?;
    let result = vacuum(&target);
    let closed = close(target);
    let (before, after) = result?;
    closed?;
    eprintln!(
        "Vacuumed: {} -> {} ({} freed) in {:.1} s",
        megabytes(before),
        megabytes(after),
        megabytes(before.saturating_sub(after)),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn vacuum(target: &Target) -> Result<(u64, u64), CliError> {
    match target {
        Target::Online(server) => {
            eprintln!(
                "Vacuuming through the server at {}: it needs free disk space about the size of the database file, and writes wait until it is done",
                server.base()
            );
            let bar = progress::bar(None, Unit::Bytes, "Vacuuming".to_string());
            let sizes = server.vacuum()?;
            bar.finish_and_clear();
            Ok(sizes)
        }
        Target::Offline { datastore, path } => {
            let before = database_size(path);
            let free = free_space(path);
            eprintln!(
                "Vacuuming {}: it needs about {} of free disk space ({} free)",
                path.display(),
                megabytes(before),
                free.map_or_else(|| "unknown".to_string(), megabytes)
            );
            if free.is_some_and(|free| free < before) {
                return Err(CliError(format!(
                    "not enough free disk space next to {} to vacuum it",
                    path.display()
                )));
            }
            let bar = progress::bar(None, Unit::Bytes, "Vacuuming".to_string());
            datastore
                .vacuum()
                .map_err(|error| CliError(format!("vacuum failed: {error}")))?;
            bar.finish_and_clear();
            Ok((before, database_size(path)))
        }
    }
}

/// Bytes free on the file system of `path`, when the system says.
fn free_space(path: &Path) -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let folder = path
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())?;
        let stats = rustix::fs::statvfs(folder).ok()?;
        Some(stats.f_bavail.saturating_mul(stats.f_frsize))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        None
    }
}

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}
