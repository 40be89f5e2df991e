//! `aw-server user add|list|remove` (`docs/API.md` §10): the people of a
//! server that hosts several, each with a database file of their own under
//! the data folder (`aw_users`). Works on the folder; a user whose file a
//! server serves cannot be removed.

use std::path::PathBuf;

use aw_users::{UserInfo, Users};
use clap::{Args, Subcommand};

use super::CliError;

/// Flags of `user`.
#[derive(Debug, Clone, Args)]
pub struct UserArgs {
    #[command(subcommand)]
    pub action: UserAction,
    /// Testing mode: the testing data folder.
    #[arg(long, global = true)]
    pub testing: bool,
    /// The data folder whose users/ holds the users (default: the
    /// database file's folder).
    #[arg(long, global = true, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
}

/// What `user` does.
#[derive(Debug, Clone, Subcommand)]
pub enum UserAction {
    /// Add a person: their own database file, and their first admin token
    /// (printed once, on stdout).
    Add {
        /// 1 to 64 of a-z, 0-9, '-' and '_'.
        name: String,
    },
    /// List the people: their file's size, devices, last data, tokens.
    List {
        /// JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Move a person to another node behind the same proxy (docs/API.md
    /// §3.18): frozen here (their requests answer 503 and devices retry),
    /// their file copied there, the proxy's route switched, this copy put
    /// aside. Through the running servers, with the server
    /// administrator's key.
    Move(Box<MoveArgs>),
    /// Remove a person: their folder is moved into users/removed/ (or,
    /// with --delete, deleted).
    Remove {
        name: String,
        /// Delete their data instead of moving it aside.
        #[arg(long)]
        delete: bool,
    },
}

/// Flags of `user move`.
#[derive(Debug, Clone, Args)]
pub struct MoveArgs {
    /// The person.
    pub name: String,
    /// The node they move to (`http://host:port`).
    #[arg(long, value_name = "URL")]
    pub to: String,
    /// The node they are on (default: this machine's server, from the
    /// config file).
    #[arg(long, value_name = "URL")]
    pub from: Option<String>,
    /// The server administrator's key of both nodes (default: the config
    /// file's `[auth] api_key`).
    #[arg(long, env = "AW_SERVER_KEY", hide_env_values = true)]
    pub key: Option<String>,
    /// Config file (this machine's server and key).
    #[arg(short, long)]
    pub config: Option<PathBuf>,
    /// HAProxy's runtime API (`stats socket`): a Unix socket's path or
    /// tcp:HOST:PORT; the running proxy's route is switched through it.
    #[arg(long, value_name = "SOCKET")]
    pub haproxy: Option<String>,
    /// The map of person to node as HAProxy's config names it (default:
    /// --map-file).
    #[arg(long, value_name = "MAP")]
    pub map: Option<String>,
    /// The map file to rewrite, so a reload or restart keeps the route.
    #[arg(long, value_name = "FILE")]
    pub map_file: Option<PathBuf>,
    /// The new node's name in the map (its backend's name in HAProxy's
    /// config).
    #[arg(long, value_name = "NAME")]
    pub to_backend: Option<String>,
    /// The old node's name in the map, put back if the move fails after
    /// the route changed (default: read from --map-file).
    #[arg(long, value_name = "NAME")]
    pub from_backend: Option<String>,
    /// Folder for the copy in transit (default: the system's temporary
    /// folder).
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
}

/// Runs `user`.
pub fn run(args: UserArgs) -> Result<(), CliError> {
    if let UserAction::Move(flags) = &args.action {
        return move_user(flags, args.testing);
    }
    let data_dir = match &args.data_dir {
        Some(dir) => dir.clone(),
        None => crate::dirs::db_path(args.testing)
            .map_err(|error| CliError(error.to_string()))?
            .parent()
            .map(PathBuf::from)
            .unwrap_or_default(),
    };
    let users = Users::open(&data_dir).map_err(failed)?;
    match args.action {
        UserAction::Add { name } => {
            let added = users
                .add(&name, crate::auth::first_admin_token(&name))
                .map_err(failed)?;
            eprintln!(
                "Added {}: {}. Their first admin token, {}-admin, is below; it is shown only \
                 once. With it they (or their devices, with tokens they make) reach only \
                 their own data.",
                added.name,
                added.file.display(),
                added.name
            );
            println!("{}", added.token);
        }
        UserAction::List { json } => {
            let listed = users.list().map_err(failed)?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&listed).unwrap_or_default()
                );
            } else {
                print_table(&listed);
            }
        }
        UserAction::Move(_) => unreachable!("moved above"),
        UserAction::Remove { name, delete } => {
            match users.remove(&name, delete).map_err(failed)? {
                Some(moved) => eprintln!("Removed {name}; their data is in {}", moved.display()),
                None => eprintln!("Removed {name} and deleted their data"),
            }
        }
    }
    Ok(())
}

/// `user move`: the steps of `aw_nodes::move_person` between the two
/// nodes' APIs, with a progress bar at a terminal.
fn move_user(flags: &MoveArgs, testing: bool) -> Result<(), CliError> {
    let connection = super::ConnectionArgs {
        testing,
        host: None,
        port: None,
        config: flags.config.clone(),
        dbpath: None,
        db_password: None,
        token: None,
    };
    let file = super::config_file(&connection)?;
    let key = flags
        .key
        .clone()
        .or(file.auth.api_key.clone())
        .filter(|key| !key.is_empty())
        .ok_or_else(|| {
            CliError(
                "a move needs the server administrator's key of both nodes: --key, AW_SERVER_KEY or [auth] api_key in the config file"
                    .to_string(),
            )
        })?;
    let from = match &flags.from {
        Some(url) => url.clone(),
        None => {
            let address = file
                .address
                .clone()
                .unwrap_or_else(|| "127.0.0.1".to_string());
            let port = file.port.unwrap_or(if testing { 5666 } else { 5600 });
            format!("http://{address}:{port}")
        }
    };
    let map_name = flags.map.clone().or_else(|| {
        flags
            .map_file
            .as_ref()
            .map(|file| file.display().to_string())
    });
    let routed = flags.haproxy.is_some() || flags.map_file.is_some();
    let to_backend = match (&flags.to_backend, routed) {
        (Some(name), _) => name.clone(),
        (None, false) => String::new(),
        (None, true) => {
            return Err(CliError(
                "--to-backend names the new node in the proxy's map".to_string(),
            ))
        }
    };
    let runtime = match (&flags.haproxy, map_name) {
        (Some(socket), Some(map)) => Some((aw_nodes::haproxy::RuntimeApi::parse(socket), map)),
        (Some(_), None) => {
            return Err(CliError(
                "--haproxy needs --map (or --map-file): the map the proxy routes people by"
                    .to_string(),
            ))
        }
        (None, _) => None,
    };
    let from_backend = match (&flags.from_backend, &flags.map_file) {
        (Some(name), _) => Some(name.clone()),
        (None, Some(file)) => aw_nodes::haproxy::read_route(file, &flags.name)
            .map_err(|error| CliError(error.to_string()))?,
        (None, None) => None,
    };
    if !routed {
        eprintln!(
            "No --haproxy or --map-file: the proxy's route to {} is not changed; their requests are answered 421 by {from} until it is.",
            flags.name
        );
    }
    let route = aw_nodes::Route {
        runtime,
        map_file: flags.map_file.clone(),
        to_backend,
        from_backend,
    };
    let scratch = match &flags.scratch {
        Some(dir) => dir.clone(),
        None => std::env::temp_dir(),
    };
    let (old, new) = (
        aw_nodes::HttpNode::new(&from, &key),
        aw_nodes::HttpNode::new(&flags.to, &key),
    );
    let mut bar: Option<indicatif::ProgressBar> = None;
    let moved = aw_nodes::move_person(&old, &new, &route, &flags.name, &scratch, &mut |step| {
        use aw_nodes::Step;
        match step {
            Step::Copying { done, of } | Step::Sending { done, of } => {
                let sending = matches!(step, Step::Sending { .. });
                let shown = bar.get_or_insert_with(|| {
                    super::progress::bar(
                        Some(of),
                        super::progress::Unit::Bytes,
                        "Copying".to_string(),
                    )
                });
                shown.set_message(if sending { "Sending" } else { "Copying" });
                shown.set_position(done);
            }
            other => {
                if let Some(shown) = bar.take() {
                    shown.finish_and_clear();
                }
                log::debug!("Move of {}: {other:?}", flags.name);
            }
        }
    })
    .map_err(|error| CliError(error.to_string()))?;
    eprintln!(
        "Moved {} ({}) from {from} to {} in {:.2} s; their requests were answered 503 for {:.2} s.{}",
        moved.person,
        super::progress::megabytes(moved.bytes),
        flags.to,
        moved.total.as_secs_f64(),
        moved.frozen.as_secs_f64(),
        moved
            .set_aside
            .map(|path| format!(" The old copy is in {path} there."))
            .unwrap_or_default()
    );
    Ok(())
}

fn failed(error: aw_users::UsersError) -> CliError {
    CliError(error.to_string())
}

fn print_table(users: &[UserInfo]) {
    if users.is_empty() {
        println!("No users yet: aw-server user add NAME");
        return;
    }
    println!(
        "{:<20} {:>10} {:>7} {:>7}  {:<25} devices",
        "name", "size", "buckets", "tokens", "last data"
    );
    for user in users {
        let last = user
            .last
            .map(|last| last.to_rfc3339_offset())
            .unwrap_or_else(|| "-".to_string());
        println!(
            "{:<20} {:>7.1} MB {:>7} {:>7}  {:<25} {}",
            user.name,
            user.bytes as f64 / 1e6,
            user.buckets,
            user.tokens,
            last,
            if user.hosts.is_empty() {
                "-".to_string()
            } else {
                user.hosts.join(", ")
            }
        );
    }
}
