//! `aw-server delete-range` and `aw-server apply-privacy-filters`: the
//! commands that clean stored history, online through the server's API
//! (`DELETE /api/0/buckets/<id>/events`, `POST /api/0/privacy/apply`) or
//! offline on the database file. Offline, the datastore does the work in
//! chunks, as the server does, and a progress bar follows it.

use aw_datastore::RangeDeletion;
use clap::Args;

use super::{close, connect, parse_time, CliError, ConnectionArgs, Target};

/// Flags of `delete-range`.
#[derive(Debug, Clone, Args)]
pub struct DeleteRangeArgs {
    /// A bucket to delete from (repeat for several).
    #[arg(long = "bucket", value_name = "ID", required_unless_present = "all")]
    pub buckets: Vec<String>,
    /// Delete from every bucket.
    #[arg(long, conflicts_with = "buckets")]
    pub all: bool,
    /// Start of the range, included (RFC 3339 or YYYY-MM-DD).
    #[arg(long, value_parser = parse_time)]
    pub start: aw_models::Timestamp,
    /// End of the range, excluded (RFC 3339 or YYYY-MM-DD).
    #[arg(long, value_parser = parse_time)]
    pub end: aw_models::Timestamp,
    /// Only report what would be deleted and trimmed.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

/// Runs `delete-range`.
pub fn delete_range(args: DeleteRangeArgs) -> Result<(), CliError> {
    if args.end < args.start {
        return Err(CliError(format!(
            "--end ({}) is before --start ({})",
            args.end, args.start
        )));
    }
    let target = connect(&args.connection, false)?;
    let result = delete_in(&target, &args);
    let closed = close(target);
    result?;
    closed
}

fn delete_in(target: &Target, args: &DeleteRangeArgs) -> Result<(), CliError> {
    let buckets = if args.all {
        target.backend().buckets()?.into_keys().collect()
    } else {
        args.buckets.clone()
    };
    let mut total = RangeDeletion::default();
    for bucket_id in &buckets {
        let done = target
            .backend()
            .delete_range(bucket_id, args.start, args.end, args.dry_run)?;
        eprintln!(
            "{bucket_id}: {} events {}deleted, {} {}trimmed",
            done.deleted,
            if args.dry_run { "would be " } else { "" },
            done.trimmed,
            if args.dry_run { "would be " } else { "" },
        );
        total.deleted += done.deleted;
        total.trimmed += done.trimmed;
    }
    eprintln!(
        "{} {} to {} in {} bucket{}: {} events {}deleted, {} {}trimmed",
        if args.dry_run { "Dry run," } else { "Deleted" },
        args.start,
        args.end,
        buckets.len(),
        if buckets.len() == 1 { "" } else { "s" },
        total.deleted,
        if args.dry_run { "would be " } else { "" },
        total.trimmed,
        if args.dry_run { "would be " } else { "" },
    );
    Ok(())
}

/// Flags of `apply-privacy-filters`.
#[derive(Debug, Clone, Args)]
pub struct ApplyRulesArgs {
    /// Only report, per bucket, how many events would be dropped and
    /// redacted.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

/// Runs `apply-privacy-filters`.
pub fn apply_rules(args: ApplyRulesArgs) -> Result<(), CliError> {
    let target = connect(&args.connection, false)?;
    let result = apply_in(&target, args.dry_run);
    let closed = close(target);
    result?;
    closed
}

fn apply_in(target: &Target, dry_run: bool) -> Result<(), CliError> {
    let reports = target.backend().apply_privacy(dry_run)?;
    let verb = |word: &str| {
        if dry_run {
            format!("would be {word}")
        } else {
            word.to_string()
        }
    };
    let (mut dropped, mut redacted) = (0, 0);
    for report in &reports {
        eprintln!(
            "{}: {} events examined, {} {}, {} {}",
            report.bucket_id,
            report.outcome.examined,
            report.outcome.dropped,
            verb("dropped"),
            report.outcome.redacted,
            verb("redacted")
        );
        dropped += report.outcome.dropped;
        redacted += report.outcome.redacted;
    }
    eprintln!(
        "{}{} buckets the filters apply to: {dropped} events {}, {redacted} {}",
        if dry_run { "Dry run, " } else { "" },
        reports.len(),
        verb("dropped"),
        verb("redacted")
    );
    Ok(())
}
