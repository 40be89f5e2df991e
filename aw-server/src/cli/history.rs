//! `aw-server delete-range` and `aw-server apply-privacy-filters`: the
//! commands that clean stored history, online through the server's API
//! (`DELETE /api/0/buckets/<id>/events`, `POST /api/0/privacy/apply`) or
//! offline on the database file. Offline, the datastore does the work in
//! chunks, as the server does, and a progress bar follows it.

use aw_datastore::{Datastore, PrivacyRules, RangeDeletion, RulesReport, PRIVACY_FILTERS_KEY};
use clap::Args;

use super::progress::{self, Unit};
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
        match target {
            Target::Online(server) => server.buckets()?.into_keys().collect(),
            Target::Offline { datastore, .. } => datastore
                .buckets()
                .wait()
                .map_err(|error| CliError(format!("cannot list the buckets: {error}")))?
                .into_keys()
                .collect(),
        }
    } else {
        args.buckets.clone()
    };
    let mut total = RangeDeletion::default();
    for bucket_id in &buckets {
        let done = match target {
            Target::Online(server) => {
                let bar = progress::bar(None, Unit::Events, format!("Deleting from {bucket_id}"));
                let done = server.delete_range(bucket_id, args.start, args.end, args.dry_run)?;
                bar.finish_and_clear();
                done
            }
            Target::Offline { datastore, .. } => offline_delete(datastore, bucket_id, args)?,
        };
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

fn offline_delete(
    datastore: &Datastore,
    bucket_id: &str,
    args: &DeleteRangeArgs,
) -> Result<RangeDeletion, CliError> {
    let failed = |error| CliError(format!("{bucket_id}: {error}"));
    let preview = datastore
        .preview_range_deletion(bucket_id, args.start, args.end)
        .map_err(failed)?;
    if args.dry_run {
        return Ok(preview);
    }
    let bar = progress::bar(
        Some(preview.deleted + preview.trimmed),
        Unit::Events,
        format!("Deleting from {bucket_id}"),
    );
    let done = datastore
        .delete_range(bucket_id, args.start, args.end, &mut |done| {
            bar.set_position(done.deleted + done.trimmed)
        })
        .map_err(failed)?;
    bar.finish_and_clear();
    Ok(done)
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
    let reports = match target {
        Target::Online(server) => {
            let bar = progress::bar(
                None,
                Unit::Events,
                "Applying the privacy filters".to_string(),
            );
            let reports = server.apply_privacy(dry_run)?;
            bar.finish_and_clear();
            reports
        }
        Target::Offline { datastore, .. } => {
            let failed = |error| CliError(format!("applying the privacy filters failed: {error}"));
            // The bar counts the events of the buckets the rules apply to:
            // the stored rules that can be used, as the datastore applies
            // them (it logs those it leaves out when it opens).
            let rules = datastore
                .setting(PRIVACY_FILTERS_KEY)
                .wait()
                .map_err(failed)?
                .map(|value| PrivacyRules::compile_stored(&value).0)
                .unwrap_or_default();
            let mut total = 0;
            for bucket_id in datastore.buckets().wait().map_err(failed)?.into_keys() {
                if rules.applies_to(&bucket_id) {
                    total += datastore
                        .count_events(&bucket_id, None, None)
                        .wait()
                        .map_err(failed)?;
                }
            }
            let bar = progress::bar(
                Some(total),
                Unit::Events,
                "Applying the privacy filters".to_string(),
            );
            let mut before = 0;
            let mut current = (String::new(), 0);
            let mut follow = |report: &RulesReport| {
                if report.bucket_id != current.0 {
                    before += current.1;
                    current.0.clone_from(&report.bucket_id);
                }
                current.1 = report.outcome.examined;
                bar.set_position(before + current.1);
            };
            let reports = if dry_run {
                datastore.preview_privacy_rules(&mut follow)
            } else {
                datastore.apply_privacy_rules(&mut follow)
            }
            .map_err(failed)?;
            bar.finish_and_clear();
            reports
        }
    };
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
