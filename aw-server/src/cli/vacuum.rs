//! `aw-server vacuum`: gives the space of deleted events back to the file
//! system by rebuilding the database file (SQLite's `VACUUM`), which also
//! turns incremental vacuum on so later deletes give space back by
//! themselves. Through the running server when one holds the file
//! (`POST /api/0/vacuum`), on the file itself otherwise. The rebuild
//! writes a copy of the database, so the command first says how much free
//! space it needs and refuses to start without it.

use std::time::Instant;

use clap::Args;

use super::progress::megabytes;
use super::{close, connect, CliError, ConnectionArgs};

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
    let result = target.backend().vacuum();
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
