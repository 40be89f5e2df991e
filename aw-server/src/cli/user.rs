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
    /// Remove a person: their folder is moved into users/removed/ (or,
    /// with --delete, deleted).
    Remove {
        name: String,
        /// Delete their data instead of moving it aside.
        #[arg(long)]
        delete: bool,
    },
}

/// Runs `user`.
pub fn run(args: UserArgs) -> Result<(), CliError> {
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
        UserAction::Remove { name, delete } => {
            match users.remove(&name, delete).map_err(failed)? {
                Some(moved) => eprintln!("Removed {name}; their data is in {}", moved.display()),
                None => eprintln!("Removed {name} and deleted their data"),
            }
        }
    }
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
