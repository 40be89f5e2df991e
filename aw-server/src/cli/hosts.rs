//! `aw-server hosts list|rename|merge|alias|unalias` (`docs/API.md`
//! §3.15): through the running server (admin) or on the database file,
//! like `export`. A rename or merge writes a snapshot first, and with
//! `--dry-run` shows its plan and changes nothing.

use aw_hosts::Change;
use aw_models::{BucketAction, HostInfo, HostReport};
use clap::{Args, Subcommand};

use super::{close, config_file, connect, connect_with, CliError, ConnectionArgs};
use crate::config;

/// Flags of `hosts`.
#[derive(Debug, Clone, Args)]
pub struct HostsArgs {
    #[command(subcommand)]
    pub action: HostsAction,
}

/// What `hosts` does.
#[derive(Debug, Clone, Subcommand)]
pub enum HostsAction {
    /// List the hosts: buckets, events, first and last data, devices,
    /// aliases.
    List {
        /// JSON instead of a table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        connection: ConnectionArgs,
    },
    /// Give every bucket of host OLD the host NEW (and the watchers'
    /// `<watcher>_OLD` ids `<watcher>_NEW`); OLD stays an alias.
    Rename {
        /// The host now.
        old: String,
        /// Its new name (no host yet: else merge).
        new: String,
        /// Show the plan; change nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        connection: ConnectionArgs,
    },
    /// Move every bucket of host FROM into host INTO's bucket of the same
    /// type and client (renamed when INTO has none); FROM stays an alias.
    Merge {
        /// The host merged away.
        from: String,
        /// The host that receives its buckets.
        into: String,
        /// Show the plan; change nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        connection: ConnectionArgs,
    },
    /// Make ALIAS a name of HOST: a watcher sending as ALIAS writes into
    /// HOST's buckets.
    Alias {
        /// The other name (no buckets of its own).
        alias: String,
        /// The host it names.
        #[arg(value_name = "HOST")]
        named: String,
        #[command(flatten)]
        connection: ConnectionArgs,
    },
    /// End an alias.
    Unalias {
        /// The alias.
        alias: String,
        #[command(flatten)]
        connection: ConnectionArgs,
    },
}

/// Runs `hosts`.
pub fn run(args: HostsArgs) -> Result<(), CliError> {
    match args.action {
        HostsAction::List { json, connection } => {
            let target = connect(&connection, false)?;
            let result = target.backend().hosts();
            close(target)?;
            print_hosts(&result?, json);
            Ok(())
        }
        HostsAction::Rename {
            old,
            new,
            dry_run,
            connection,
        } => change(&connection, Change::Rename { from: old, to: new }, dry_run),
        HostsAction::Merge {
            from,
            into,
            dry_run,
            connection,
        } => change(&connection, Change::Merge { from, into }, dry_run),
        HostsAction::Alias {
            alias,
            named,
            connection,
        } => {
            let target = connect(&connection, false)?;
            let result = target.backend().set_host_alias(&alias, &named);
            close(target)?;
            result?;
            println!("'{alias}' now names host '{named}'");
            Ok(())
        }
        HostsAction::Unalias { alias, connection } => {
            let target = connect(&connection, false)?;
            let result = target.backend().unset_host_alias(&alias);
            close(target)?;
            result?;
            println!("'{alias}' is no longer an alias");
            Ok(())
        }
    }
}

fn change(connection: &ConnectionArgs, change: Change, dry_run: bool) -> Result<(), CliError> {
    let file = config_file(connection)?;
    let settings =
        config::resolve_backup(file.backup.clone()).map_err(|error| CliError(error.to_string()))?;
    let target = match &connection.dbpath {
        Some(_) => connect(connection, false)?,
        None => connect_with(connection, false, file)?,
    };
    let result = target.backend().change_hosts(&change, dry_run, settings);
    let closed = close(target);
    let report = result?;
    closed?;
    print_report(&report);
    Ok(())
}

fn time(stamp: Option<aw_models::Timestamp>) -> String {
    stamp.map_or_else(
        || "-".to_string(),
        |t| t.to_string()[..19].replace('T', " "),
    )
}

fn print_hosts(hosts: &[HostInfo], json: bool) {
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(hosts).unwrap_or_default()
        );
        return;
    }
    for host in hosts {
        println!(
            "{}  {} buckets, {} events, {} .. {}{}{}",
            host.host,
            host.buckets.len(),
            host.events,
            time(host.first),
            time(host.last),
            if host.device_ids.is_empty() {
                String::new()
            } else {
                format!(", device {}", host.device_ids.join(", "))
            },
            if host.aliases.is_empty() {
                String::new()
            } else {
                format!(", aliases {}", host.aliases.join(", "))
            },
        );
        for bucket in &host.buckets {
            println!("    {bucket}");
        }
    }
}

fn print_report(report: &HostReport) {
    let verb = if report.dry_run { "would" } else { "did" };
    println!(
        "{} of host '{}' {} '{}' ({}):",
        if report.operation == "merge" {
            "Merge"
        } else {
            "Rename"
        },
        report.from,
        if report.operation == "merge" {
            "into"
        } else {
            "to"
        },
        report.to,
        if report.dry_run {
            "dry run, nothing changed"
        } else {
            "done"
        }
    );
    for bucket in &report.buckets {
        match bucket.action {
            BucketAction::Rename => println!(
                "  {} -> {}: renamed, {} events kept",
                bucket.from, bucket.to, bucket.events
            ),
            BucketAction::Merge => println!(
                "  {} -> {}: merged, {} events: {} moved whole, {} cut, {} dropped \
                 ({:.0} s of time {} already had, kept once)",
                bucket.from,
                bucket.to,
                bucket.events,
                bucket.moved,
                bucket.cut,
                bucket.dropped,
                bucket.overlap_seconds,
                bucket.to
            ),
        }
    }
    if let Some(snapshot) = &report.snapshot {
        println!("Snapshot before the change: {snapshot}");
    }
    if let Some(why) = &report.snapshot_skipped {
        println!("No snapshot: {why}");
    }
    println!(
        "'{}' {verb} become an alias of '{}' ({:.1} s)",
        report.alias, report.to, report.seconds
    );
}
