//! `aw-server token add|list|revoke`: API tokens with scopes
//! (`docs/API.md` §9.4), through the running server (with the config's
//! API key or an admin `--token`) or on the database file, like `export`.
//! `add` prints the new token once, alone on stdout; nothing else ever
//! shows it.

use aw_models::{NewToken, Scope, Timestamp, TokenInfo};
use clap::{Args, Subcommand};

use super::{close, config_file, connect, connect_with, CliError, ConnectionArgs, Target};

/// Flags of `token`.
#[derive(Debug, Clone, Args)]
pub struct TokenArgs {
    #[command(subcommand)]
    pub action: TokenAction,
}

/// What `token` does.
#[derive(Debug, Clone, Subcommand)]
pub enum TokenAction {
    /// Make a token and print it (only this once).
    Add {
        /// Its name: 1 to 64 of A-Z, a-z, 0-9, '.', '_', '-'.
        name: String,
        /// read (dashboards, scripts), write (a watcher's buckets of
        /// --host), admin (everything).
        #[arg(long, value_parser = parse_scope)]
        scope: Scope,
        /// For a write token: a hostname whose buckets it may write
        /// (repeat for several; aw-watcher-web reports `unknown`).
        #[arg(long = "host", value_name = "HOST")]
        hosts: Vec<String>,
        /// Refused from this date (YYYY-MM-DD, midnight UTC) or time
        /// (RFC 3339) on.
        #[arg(long, value_name = "DATE")]
        expires: Option<String>,
        #[command(flatten)]
        connection: TokenConnection,
    },
    /// List the tokens: name, scope, hosts, created, last used, expiry.
    List {
        #[command(flatten)]
        connection: TokenConnection,
    },
    /// Revoke a token: the next request with it is refused.
    Revoke {
        /// The token's name.
        name: String,
        #[command(flatten)]
        connection: TokenConnection,
    },
}

/// The connection flags of the other commands, but the server's address
/// is `--server` (`--host` names a write token's hosts).
#[derive(Debug, Clone, Args)]
pub struct TokenConnection {
    /// Testing mode: port 5666, the testing config and database files.
    #[arg(long)]
    pub testing: bool,
    /// Address or host name of the server (default: the config file's, or
    /// 127.0.0.1).
    #[arg(long, value_name = "HOST")]
    pub server: Option<String>,
    /// Port of the server.
    #[arg(long)]
    pub port: Option<u16>,
    /// Config file (address, port and API key of the server).
    #[arg(short, long)]
    pub config: Option<std::path::PathBuf>,
    /// Work on this database file directly, without a server.
    #[arg(long)]
    pub dbpath: Option<std::path::PathBuf>,
    /// Password of an encrypted database file.
    #[arg(long, env = "AW_DB_PASSWORD", hide_env_values = true)]
    pub db_password: Option<String>,
    /// An admin token to send instead of the config file's API key.
    #[arg(long, env = "AW_SERVER_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// The tokens of this person of a server that hosts several (`aw-server
    /// user`): works on their database file and keeps the users' index.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["dbpath", "server", "port"])]
    pub user: Option<String>,
    /// With --user: the data folder whose users/ holds them (default: the
    /// database file's folder).
    #[arg(long, value_name = "DIR", requires = "user")]
    pub data_dir: Option<std::path::PathBuf>,
}

impl TokenConnection {
    /// With `--user`: the users of the data folder, and the flags pointed
    /// at that person's file.
    fn for_user(
        mut self,
    ) -> Result<(TokenConnection, Option<(aw_users::Users, String)>), CliError> {
        let Some(name) = self.user.clone() else {
            return Ok((self, None));
        };
        let data_dir = match &self.data_dir {
            Some(dir) => dir.clone(),
            None => crate::dirs::db_path(self.testing)
                .map_err(|error| CliError(error.to_string()))?
                .parent()
                .map(std::path::PathBuf::from)
                .unwrap_or_default(),
        };
        let users =
            aw_users::Users::open(&data_dir).map_err(|error| CliError(error.to_string()))?;
        if users
            .index()
            .user(&name)
            .map_err(|error| CliError(error.to_string()))?
            .is_none()
        {
            return Err(CliError(format!(
                "there is no user '{name}' in {} (aw-server user list)",
                users.root().display()
            )));
        }
        // Their tokens name them (`awt_<name>.…`) even when a version
        // before owners made the file; a server holding it open marks it
        // itself.
        match aw_datastore::Datastore::open(users.file_of(&name)) {
            Ok(datastore) => {
                let claimed = aw_users::Users::claim(&datastore, &name);
                datastore
                    .close()
                    .map_err(|error| CliError(error.to_string()))?;
                claimed.map_err(|error| CliError(error.to_string()))?;
            }
            Err(aw_datastore::DatastoreError::InUse(_)) => {}
            Err(error) => return Err(CliError(error.to_string())),
        }
        self.dbpath = Some(users.file_of(&name));
        Ok((self, Some((users, name))))
    }
}

impl From<TokenConnection> for ConnectionArgs {
    fn from(flags: TokenConnection) -> ConnectionArgs {
        ConnectionArgs {
            testing: flags.testing,
            host: flags.server,
            port: flags.port,
            config: flags.config,
            dbpath: flags.dbpath,
            db_password: flags.db_password,
            token: flags.token,
        }
    }
}

/// `--scope` as clap reads it (`Scope`'s own parser).
fn parse_scope(text: &str) -> Result<Scope, String> {
    text.parse()
        .map_err(|error: aw_models::ModelError| error.to_string())
}

/// Runs `token`; with `--user`, on that person's file, and their tokens'
/// hashes indexed again afterwards.
pub fn run(args: TokenArgs) -> Result<(), CliError> {
    let connection = match &args.action {
        TokenAction::Add { connection, .. }
        | TokenAction::List { connection }
        | TokenAction::Revoke { connection, .. } => connection.clone(),
    };
    let (connection, user) = connection.for_user()?;
    let done = run_on(args.action, connection);
    if let Some((users, name)) = user {
        users
            .reindex(&name)
            .map_err(|error| CliError(format!("the users' index: {error}")))?;
    }
    done
}

fn run_on(action: TokenAction, connection: TokenConnection) -> Result<(), CliError> {
    match action {
        TokenAction::Add {
            name,
            scope,
            hosts,
            expires,
            ..
        } => {
            let request = NewToken {
                name,
                scope,
                hosts,
                expires,
            };
            with_target(&connection.clone().into(), |target, has_key| {
                add(target, &request, has_key)
            })
        }
        TokenAction::List { .. } => {
            with_target(&connection.clone().into(), |target, _| list(target))
        }
        TokenAction::Revoke { name, .. } => with_target(&connection.clone().into(), |target, _| {
            revoke(target, &name)
        }),
    }
}

/// Runs `work` on the server or the file the flags lead to; `has_key`:
/// the config file sets an API key.
fn with_target(
    connection: &ConnectionArgs,
    work: impl FnOnce(&Target, bool) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let file = config_file(connection)?;
    let has_key = file
        .auth
        .api_key
        .as_deref()
        .is_some_and(|key| !key.is_empty());
    let target = match &connection.dbpath {
        Some(_) => connect(connection, true)?,
        None => connect_with(connection, true, file)?,
    };
    let result = work(&target, has_key);
    let closed = close(target);
    result?;
    closed
}

fn add(target: &Target, request: &NewToken, has_key: bool) -> Result<(), CliError> {
    let (made, first) = target.backend().add_token(request, has_key)?;
    let Some(made) = made else {
        return Err(CliError(format!(
            "a token named '{}' exists; revoke it first or choose another name",
            request.name
        )));
    };
    println!("{}", made.token);
    eprintln!(
        "Made the {} token '{}'{}{}. It is shown only now: the server keeps its hash.",
        made.info.scope,
        made.info.name,
        hosts_text(&made.info),
        expiry_text(&made.info),
    );
    if first {
        eprintln!(
            "This is the server's first credential: from now on every /api/ request but \
             /api/0/info needs a key or token (Authorization: Bearer <token>). Watchers that \
             send none (those on the PyPI aw-client 0.5.15) are refused from now on: the \
             README's \"Which clients send a key\" says what to do."
        );
    }
    Ok(())
}

fn list(target: &Target) -> Result<(), CliError> {
    let tokens = target.backend().tokens()?;
    if tokens.is_empty() {
        eprintln!("No tokens. Make one with: aw-server token add NAME --scope read|write|admin");
        return Ok(());
    }
    let time = |t: Option<Timestamp>| {
        t.map_or_else(
            || "-".to_string(),
            |t| t.to_datetime().format("%Y-%m-%d %H:%M").to_string(),
        )
    };
    println!(
        "{:<20}  {:<5}  {:<16}  {:<16}  {:<16}  hosts",
        "name", "scope", "created (UTC)", "last used", "expires"
    );
    let now = Timestamp::now();
    for token in &tokens {
        println!(
            "{:<20}  {:<5}  {:<16}  {:<16}  {:<16}  {}{}",
            token.name,
            token.scope.as_str(),
            time(Some(token.created)),
            time(token.last_used),
            time(token.expires),
            token.hosts.join(","),
            if token.expired(now) {
                "  (expired)"
            } else {
                ""
            }
        );
    }
    Ok(())
}

fn revoke(target: &Target, name: &str) -> Result<(), CliError> {
    let removed = target.backend().revoke_token(name)?;
    if !removed {
        return Err(CliError(format!("no token named '{name}'")));
    }
    eprintln!("Revoked the token '{name}'.");
    Ok(())
}

fn hosts_text(info: &TokenInfo) -> String {
    if info.hosts.is_empty() {
        String::new()
    } else {
        format!(" for the buckets of {}", info.hosts.join(", "))
    }
}

fn expiry_text(info: &TokenInfo) -> String {
    info.expires.map_or_else(String::new, |expires| {
        format!(", refused from {expires} on")
    })
}
