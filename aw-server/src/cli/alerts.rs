//! `aw-server alerts test|digest` (`docs/API.md` §3.16): a test message
//! to every channel of `[alerts]`, or the last day's (`--week`: week's)
//! digest, shown or (`--send`) sent; through the running server (admin)
//! or on the database file with the config file's `[alerts]`.

use aw_alerts::{Alerts, Source};
use clap::{Args, Subcommand};
use serde_json::Value;

use super::{close, config_file, connect, connect_with, CliError, ConnectionArgs, Target};
use crate::config;

/// Flags of `alerts`.
#[derive(Debug, Clone, Args)]
pub struct AlertsArgs {
    #[command(subcommand)]
    pub action: AlertsAction,
}

/// What `alerts` does.
#[derive(Debug, Clone, Subcommand)]
pub enum AlertsAction {
    /// Send a test message to every channel of `[alerts]` and say how each
    /// went (a failed one is tried again later).
    Test {
        #[command(flatten)]
        connection: ConnectionArgs,
    },
    /// Show the digest of yesterday (or of last week); with --send, send
    /// it now by e-mail and webhook.
    Digest {
        /// Send it (else it is only printed).
        #[arg(long)]
        send: bool,
        /// Last week's instead of yesterday's.
        #[arg(long)]
        week: bool,
        #[command(flatten)]
        connection: ConnectionArgs,
    },
}

/// Runs `alerts`.
pub fn run(args: AlertsArgs) -> Result<(), CliError> {
    let (connection, what) = match &args.action {
        AlertsAction::Test { connection } => (connection, None),
        AlertsAction::Digest {
            send,
            week,
            connection,
        } => (connection, Some((*send, *week))),
    };
    let file = config_file(connection)?;
    let settings = file
        .alerts
        .clone()
        .map(config::resolve_alerts)
        .transpose()
        .map_err(|error| CliError(error.to_string()))?;
    let target = match &connection.dbpath {
        Some(_) => connect(connection, false)?,
        None => connect_with(connection, false, file)?,
    };
    let result = match &target {
        Target::Online(server) => match what {
            None => server.alerts_test(),
            Some((send, week)) => server.alerts_digest(week, send),
        },
        Target::Offline(local) => {
            let alerts = Alerts::new(settings);
            let source = Source {
                served: super::backend::served(&local.datastore),
                own_host: crate::dirs::hostname(),
                is_hub: crate::is_hub,
            };
            let failed = |error: aw_alerts::AlertsError| CliError(error.to_string());
            match what {
                None => alerts
                    .test(&source)
                    .map(|outcomes| sent("aw-server: a test message", "", outcomes))
                    .map_err(failed),
                Some((false, week)) => alerts
                    .make_digest(&source, week)
                    .map(|message| sent(&message.title, &message.text, Vec::new()))
                    .map_err(failed),
                Some((true, week)) => alerts
                    .send_digest(&source, week)
                    .map(|(message, outcomes)| sent(&message.title, &message.text, outcomes))
                    .map_err(failed),
            }
        }
    };
    let closed = close(target);
    let answer = result?;
    closed?;
    say(&answer, what.is_some())
}

/// The answer of the endpoints, for the file too.
fn sent(title: &str, text: &str, outcomes: aw_alerts::Outcomes) -> Value {
    serde_json::json!({
        "title": title,
        "text": text,
        "channels": outcomes
            .into_iter()
            .map(|(channel, result)| match result {
                Ok(()) => serde_json::json!({"channel": channel, "delivered": true}),
                Err(error) => serde_json::json!({"channel": channel, "delivered": false, "error": error}),
            })
            .collect::<Vec<_>>(),
    })
}

/// Prints what was sent (a digest's text to stdout) and each channel's
/// outcome (to stderr); fails when a channel did.
fn say(answer: &Value, digest: bool) -> Result<(), CliError> {
    if digest {
        println!("{}\n", answer["title"].as_str().unwrap_or_default());
        println!("{}", answer["text"].as_str().unwrap_or_default());
    }
    let mut failed = Vec::new();
    for channel in answer["channels"].as_array().into_iter().flatten() {
        let name = channel["channel"].as_str().unwrap_or("?");
        if channel["delivered"] == true {
            eprintln!("Sent by {name}");
        } else {
            let error = channel["error"].as_str().unwrap_or("failed");
            eprintln!("Not sent by {name}: {error} (it is tried again later)");
            failed.push(name.to_string());
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(CliError(format!("{} failed", failed.join(" and "))))
    }
}
