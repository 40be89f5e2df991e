//! The commands of the `aw-server` binary: `export`, `import`,
//! `delete-range`, `apply-privacy-filters`, `vacuum`, `sync`, `backup`,
//! `restore`, `check` (which work on the file itself: `restore` and
//! `check --repair` only with no server using it), `token` and `report`.
//!
//! All work either **online**, through the HTTP API of a server that
//! answers on the configured address and port (same config file, flags and
//! API key as the server), or **offline**, on the database file itself:
//! with `--dbpath`, or when no server answers (said on stderr). A database
//! file that a running server holds is never written: `Datastore::open`
//! refuses it (`DatastoreError::InUse`) and the command says to go through
//! the server instead.
//!
//! The formats and streaming passes are `transfer`'s; this module decides
//! where data goes (`connect`), talks HTTP (`http`), shows progress
//! (`progress`) and reports. Errors are [`CliError`] messages: `main`
//! prints them and exits with status 1.

pub mod alerts;
mod backend;
pub mod backup;
pub mod check;
mod error;
pub mod export;
pub mod history;
pub mod hosts;
mod http;
pub mod import;
pub mod mcp;
mod progress;
pub mod report;
pub mod restore;
pub mod sync;
pub mod token;
pub mod user;
pub mod vacuum;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};

use aw_datastore::{DatabaseKey, Datastore, DatastoreError};
use aw_models::Timestamp;
use clap::Args;

use crate::config::{self, FileConfig};
use crate::dirs;

pub use backend::{device_id, served, Backend, Local, SummaryFailure, SyncRequest};
pub use error::CliError;
pub use http::Server;

/// Where the data is: the flags shared by `export` and `import`.
#[derive(Debug, Clone, Args)]
pub struct ConnectionArgs {
    /// Testing mode: port 5666, the testing config and database files.
    #[arg(long)]
    pub testing: bool,
    /// Address or host name of the server (default: the config file's, or
    /// 127.0.0.1).
    #[arg(long)]
    pub host: Option<String>,
    /// Port of the server (default: the config file's, 5600, or 5666 with
    /// --testing).
    #[arg(long)]
    pub port: Option<u16>,
    /// Config file (address, port and API key of the server).
    #[arg(short, long)]
    pub config: Option<PathBuf>,
    /// Work on this database file directly, without a server.
    #[arg(long)]
    pub dbpath: Option<PathBuf>,
    /// Password of an encrypted database file (builds with the
    /// `sqlcipher` feature); used when working on the file directly.
    #[arg(long, env = "AW_DB_PASSWORD", hide_env_values = true)]
    pub db_password: Option<String>,
    /// An API token to send to the server instead of the config file's
    /// API key. Prefer the environment variable: a flag is visible to
    /// other users in `ps`.
    #[arg(long, env = "AW_SERVER_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

/// The key that `--db-password` or `AW_DB_PASSWORD` gives, if any; an
/// empty one is refused.
pub fn database_key(password: Option<&str>) -> Result<Option<DatabaseKey>, CliError> {
    password
        .map(DatabaseKey::new)
        .transpose()
        .map_err(|error| CliError(error.to_string()))
}

/// What a command works on.
#[derive(Debug)]
pub enum Target {
    /// A running server.
    Online(Server),
    /// A database file opened by this process.
    Offline(Local),
}

impl Target {
    /// What every command asks its questions of.
    pub fn backend(&self) -> &dyn Backend {
        match self {
            Target::Online(server) => server,
            Target::Offline(local) => local,
        }
    }
}

/// Finds the server, or opens the database file: `--dbpath` is always
/// offline; otherwise `/api/0/info` is asked on the configured address and
/// a refused connection means offline on the default database file, unless
/// `--host` or `--port` named the server: then it is an error.
/// `create` says whether a missing database file may be created (import)
/// or is an error (export).
pub fn connect(args: &ConnectionArgs, create: bool) -> Result<Target, CliError> {
    let key = database_key(args.db_password.as_deref())?;
    if let Some(path) = &args.dbpath {
        return open(path, key.as_ref(), create).map_err(|error| match error {
            OpenError::InUse => CliError(format!(
                "the database {} is served by a running aw-server; run without --dbpath to go \
                 through it, or stop it",
                path.display()
            )),
            OpenError::Other(error) => error,
        });
    }
    let file = config_file(args)?;
    connect_with(args, create, file)
}

/// The config file the flags name (or the mode's default one), or the
/// defaults when there is none.
pub fn config_file(args: &ConnectionArgs) -> Result<FileConfig, CliError> {
    let config_path = match &args.config {
        Some(path) => path.clone(),
        None => dirs::config_path(args.testing).map_err(|error| CliError(error.to_string()))?,
    };
    let file = if config_path.exists() || args.config.is_some() {
        let text = std::fs::read_to_string(&config_path).map_err(|error| {
            CliError(format!(
                "cannot read the config file {}: {error}",
                config_path.display()
            ))
        })?;
        FileConfig::parse(&text, &config_path).map_err(|error| CliError(error.to_string()))?
    } else {
        FileConfig::default()
    };
    Ok(file)
}

/// [`connect`] for a command that only reads and must not hold the file:
/// offline, the file is opened read-only without a lock
/// (`Datastore::open_read_only`), so a server may start beside it.
pub fn connect_read_only(args: &ConnectionArgs) -> Result<Target, CliError> {
    let key = database_key(args.db_password.as_deref())?;
    if let Some(path) = &args.dbpath {
        return open_read_only(path, key.as_ref());
    }
    let file = config_file(args)?;
    connect_to(args, file, &|path, key| {
        open_read_only(path, key).map_err(OpenError::Other)
    })
}

/// [`connect`] with the config file already read.
pub fn connect_with(
    args: &ConnectionArgs,
    create: bool,
    file: FileConfig,
) -> Result<Target, CliError> {
    connect_to(args, file, &|path, key| open(path, key, create))
}

/// How a command opens the file when no server answers.
type Opener<'a> = &'a dyn Fn(&Path, Option<&DatabaseKey>) -> Result<Target, OpenError>;

/// Why the file could not be opened.
enum OpenError {
    /// A server holds it.
    InUse,
    /// Anything else, said.
    Other(CliError),
}

impl From<CliError> for OpenError {
    fn from(error: CliError) -> OpenError {
        OpenError::Other(error)
    }
}

fn connect_to(
    args: &ConnectionArgs,
    file: FileConfig,
    open: Opener<'_>,
) -> Result<Target, CliError> {
    let key = database_key(args.db_password.as_deref())?;
    let (server, authority) = find_server(args, file)?;
    match server {
        Some(server) => Ok(Target::Online(server)),
        None if args.host.is_some() || args.port.is_some() => Err(CliError(format!(
            "no aw-server answers on {authority}; start it, or use --dbpath to work on a database file"
        ))),
        None => {
            let path = dirs::db_path(args.testing).map_err(|error| CliError(error.to_string()))?;
            eprintln!(
                "No server answers on {authority}; working on the database file {}",
                path.display()
            );
            open(&path, key.as_ref()).map_err(|error| match error {
                // A server holds the file but listens elsewhere.
                OpenError::InUse => CliError(format!(
                    "no server answers on {authority}, but one serves the database {}: it \
                     listens on another address or port than the config file's; give its \
                     --port (and --host), or stop it",
                    path.display()
                )),
                OpenError::Other(error) => error,
            })
        }
    }
}

/// Whether a server answers where the flags and the config file say.
pub fn server_answers(args: &ConnectionArgs, file: FileConfig) -> Result<bool, CliError> {
    Ok(find_server(args, file)?.0.is_some())
}

/// The server that answers where the flags and the config file say, if
/// one does, and that address.
fn find_server(
    args: &ConnectionArgs,
    file: FileConfig,
) -> Result<(Option<Server>, String), CliError> {
    let host = args
        .host
        .clone()
        .or(file.address.clone())
        .unwrap_or_else(|| "127.0.0.1".to_string());
    let port = args
        .port
        .or(file.port)
        .unwrap_or(config::default_port(args.testing));
    let authority = match config::parse_address(&host) {
        // A server bound to every interface answers on loopback.
        Ok(address) if address.is_unspecified() => match address {
            IpAddr::V4(_) => http::authority(IpAddr::V4(Ipv4Addr::LOCALHOST), port),
            IpAddr::V6(_) => http::authority(IpAddr::V6(Ipv6Addr::LOCALHOST), port),
        },
        Ok(address) => http::authority(address, port),
        // A host name: another machine's server.
        Err(_) if !host.is_empty() && !host.contains(['/', '@', ' ', ':']) => {
            format!("{host}:{port}")
        }
        Err(error) => return Err(CliError(error.to_string())),
    };
    let credential = args
        .token
        .clone()
        .or(file.auth.api_key)
        .filter(|key| !key.is_empty());
    let (authority, tls) = match &file.tls_cert {
        None => (authority, None),
        Some(_) => https_to(authority, &host),
    };
    let server = Server::probe(&authority, credential, tls)?;
    Ok((server, authority))
}

fn open_read_only(path: &Path, key: Option<&DatabaseKey>) -> Result<Target, CliError> {
    match Datastore::open_read_only(path, key) {
        Ok(datastore) => Ok(Target::Offline(Local {
            datastore,
            path: path.to_path_buf(),
            read_only: true,
        })),
        Err(error) => Err(CliError(format!(
            "cannot read the database {}: {error}",
            path.display()
        ))),
    }
}

/// How to reach a server whose config serves HTTPS: on this machine over
/// loopback without checking its certificate (a Let's Encrypt one names
/// no loopback address; whatever answers there is trusted as much as over
/// plain HTTP), by any other name with the public roots.
fn https_to(authority: String, host: &str) -> (String, Option<http::Tls>) {
    let local = config::parse_address(host)
        .is_ok_and(|address| address.is_loopback() || address.is_unspecified());
    (authority, Some(http::Tls { loopback: local }))
}

fn open(path: &Path, key: Option<&DatabaseKey>, create: bool) -> Result<Target, OpenError> {
    if !create && !path.exists() {
        return Err(CliError(format!("no database file at {}", path.display())).into());
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|error| CliError(format!("cannot create {}: {error}", parent.display())))?;
    }
    match Datastore::open_with_key(path, key) {
        Ok(datastore) => Ok(Target::Offline(Local {
            datastore: resumed(datastore),
            path: path.to_path_buf(),
            read_only: false,
        })),
        Err(DatastoreError::InUse(_)) => Err(OpenError::InUse),
        Err(error) => Err(CliError(format!(
            "cannot open the database {}: {error}",
            path.display()
        ))
        .into()),
    }
}

/// Closes an offline datastore so everything stored is on disk.
fn close(target: Target) -> Result<(), CliError> {
    if let Target::Offline(Local {
        datastore, path, ..
    }) = target
    {
        datastore.close().map_err(|error| {
            CliError(format!(
                "closing the database {} failed: {error}",
                path.display()
            ))
        })?;
    }
    Ok(())
}

/// Parses `--start`/`--end`: RFC 3339, or a date `YYYY-MM-DD` (midnight UTC).
/// `today`, `yesterday` and `tomorrow` are dates too: this machine's
/// local date, shifted (then midnight UTC, as any date).
pub fn parse_time(text: &str) -> Result<Timestamp, String> {
    let text = text.trim();
    let shift = aw_summary::calendar::RELATIVE_DATES
        .iter()
        .find(|(word, _)| word.eq_ignore_ascii_case(text))
        .map(|(_, shift)| *shift);
    let full = match shift {
        Some(shift) => {
            let date = chrono::Local::now().date_naive() + chrono::Duration::days(shift);
            format!("{}T00:00:00Z", date.format("%Y-%m-%d"))
        }
        None if text.len() == 10 => format!("{text}T00:00:00Z"),
        None => text.to_string(),
    };
    Timestamp::parse(&full).map_err(|_| {
        format!(
            "'{text}' is not a time: use RFC 3339 (YYYY-MM-DDTHH:MM:SSZ) or a date (YYYY-MM-DD, \
             today, yesterday or tomorrow)"
        )
    })
}

/// A file opened for writing with any change of hosts a stop interrupted
/// finished first (`aw_hosts::resume`), as the server does at its start.
fn resumed(datastore: Datastore) -> Datastore {
    match aw_hosts::resume(&datastore) {
        Ok(Some(report)) => eprintln!(
            "Finished the {} of host '{}' into '{}' that a stop interrupted",
            report.operation, report.from, report.to
        ),
        Ok(None) => {}
        Err(error) => eprintln!("The interrupted change of hosts could not be finished: {error}"),
    }
    datastore
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339_or_dates() {
        assert_eq!(
            parse_time("2026-11-21").unwrap(),
            Timestamp::parse("2026-11-21T00:00:00Z").unwrap()
        );
        assert_eq!(
            parse_time("2026-11-21T10:00:00.5+01:00").unwrap(),
            Timestamp::parse("2026-11-21T09:00:00.5Z").unwrap()
        );
        let today = chrono::Local::now().date_naive();
        let midnight = |date: chrono::NaiveDate| {
            Timestamp::parse(&format!("{}T00:00:00Z", date.format("%Y-%m-%d"))).unwrap()
        };
        assert_eq!(
            parse_time("Yesterday").unwrap(),
            midnight(today - chrono::Days::new(1))
        );
        assert_eq!(parse_time("today").unwrap(), midnight(today));
        assert!(parse_time("someday").is_err());
    }
}
