//! Configuration: the `config.toml` file (`docs/API.md` §10) and the resolved
//! [`ServerConfig`] that `build_rocket` runs with.
//!
//! The file has the keys of aw-server-rust (`address`, `port`, `cors`,
//! `cors_regex`, `custom_static`, `[auth] api_key`) so an existing file keeps
//! working, and optional sections of ours: `[retention] keep_days`,
//! `[sync]` (folder sync), `[hub]`, `[backup]`, parsed into `aw_jobs`' settings.
//! Command-line flags are parsed in `main.rs` and override the file;
//! where the files live is `dirs.rs`'s business.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use aw_alerts::AlertSettings;
use aw_cache::CacheConfig;
use aw_jobs::backup::BackupSettings;
use aw_jobs::hub::{HubSettings, DEFAULT_HUB_INTERVAL};
use aw_jobs::sync::SyncSettings;
use aw_models::{Duration, SyncMode};

/// Why the configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read or created.
    #[error("config file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
    /// The file is not valid TOML of the expected shape.
    #[error("config file {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The TOML error.
        message: String,
    },
    /// A value is unusable (bad address, regex or custom static spec).
    #[error("{0}")]
    Invalid(String),
}

/// `[auth]` of the config file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthConfig {
    /// Bearer key required on `/api/` requests; absent or empty disables it.
    #[serde(default)]
    pub api_key: Option<String>,
    /// Listen beyond loopback with no key or token: only behind a proxy
    /// that authenticates (`docs/API.md` §9.5).
    #[serde(default)]
    pub allow_unauthenticated_remote: bool,
}

/// `[retention]` of the config file: how long events are kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetentionConfig {
    /// Events that ended more than this many days ago are deleted (at
    /// start and once a day); at least 1.
    pub keep_days: u32,
}

/// `[sync]` of the config file: passes through a shared folder on a
/// schedule (`aw_jobs::sync`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyncConfig {
    /// Whether the schedule runs; default false. Passes asked for run
    /// either way.
    #[serde(default)]
    pub enabled: bool,
    /// The folder a folder-sync tool shares; default `$AW_SYNC_DIR`, else
    /// `~/ActivityWatchSync` (aw-sync's).
    #[serde(default)]
    pub folder: Option<String>,
    /// Seconds between passes; default 300 (aw-sync's five minutes).
    /// `interval_seconds`, its first name, still reads.
    #[serde(default, alias = "interval_seconds")]
    pub interval: Option<u64>,
    /// `push`, `pull` or `both` (default), in any letter case.
    #[serde(default)]
    pub mode: Option<SyncMode>,
    /// The buckets passes take (as the `sync` command's `--buckets`);
    /// absent or empty: all.
    #[serde(default)]
    pub buckets: Option<Vec<String>>,
    /// Push even when the database is encrypted: the copy in the folder
    /// is plain SQLite.
    #[serde(default)]
    pub allow_plaintext_copy: bool,
}

/// `[hub]` of the config file: forwarding this device's own buckets to a
/// hub over HTTP(S) (`aw_jobs::hub`). Present: on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HubConfig {
    /// The hub's address, `https://hub.example:5600`.
    pub url: String,
    /// A write token of the hub for this device's hosts.
    pub token: String,
    /// A PEM file of a self-signed hub's certificate.
    #[serde(default)]
    pub ca_file: Option<String>,
    /// Seconds between passes; default 60.
    #[serde(default)]
    pub interval: Option<u64>,
    /// The buckets forwarded; absent or empty: every own bucket.
    #[serde(default)]
    pub buckets: Option<Vec<String>>,
}

/// `[alerts]` of the config file: where the goals of the `aw-notify`
/// setting and the digests are delivered (`aw_alerts`). Without a
/// channel, nothing runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlertsConfig {
    /// An http(s) address that receives a JSON document per message.
    #[serde(default)]
    pub webhook_url: Option<String>,
    /// The key of the webhook body's HMAC-SHA256 signature.
    #[serde(default)]
    pub webhook_secret: Option<String>,
    /// An ntfy topic's address, `https://ntfy.sh/my-topic`.
    #[serde(default)]
    pub ntfy_url: Option<String>,
    /// `smtp://[user[:password]@]host[:port]` (STARTTLS) or `smtps://`.
    #[serde(default)]
    pub smtp_url: Option<String>,
    /// A file holding the SMTP password (instead of the URL's).
    #[serde(default)]
    pub smtp_password_file: Option<String>,
    /// A PEM file of a self-signed SMTP server's certificate.
    #[serde(default)]
    pub smtp_ca_file: Option<String>,
    #[serde(default)]
    pub email_from: Option<String>,
    /// One address or a list.
    #[serde(default)]
    pub email_to: Option<OneOrMore>,
    /// Seconds between checks of the goals; default 60.
    #[serde(default)]
    pub check_interval: Option<u64>,
    /// The IANA zone of "today"; default the server's.
    #[serde(default)]
    pub tz: Option<String>,
    /// Whether messages may name window titles; default false.
    #[serde(default)]
    pub include_titles: bool,
    /// `"daily"` or `"weekly"`: a report by e-mail (and webhook).
    #[serde(default)]
    pub digest: Option<String>,
    /// `"HH:MM"`, local; default `"08:00"`.
    #[serde(default)]
    pub digest_time: Option<String>,
    /// `"own"` or `"all"`: whose time the goals count; default all on a
    /// hub, this machine's elsewhere.
    #[serde(default)]
    pub hosts: Option<String>,
}

/// A string or a list of strings.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum OneOrMore {
    One(String),
    More(Vec<String>),
}

/// Default seconds between sync passes.
pub const DEFAULT_SYNC_INTERVAL: u64 = 300;

/// The config file as written by the user; every key is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct FileConfig {
    /// Bind address, default `127.0.0.1`.
    #[serde(default)]
    pub address: Option<String>,
    /// Listen port, default 5600 (5666 in testing mode).
    #[serde(default)]
    pub port: Option<u16>,
    /// Extra allowed CORS origins, matched exactly.
    #[serde(default)]
    pub cors: Vec<String>,
    /// Extra allowed CORS origins, as regexes matching the whole origin.
    #[serde(default)]
    pub cors_regex: Vec<String>,
    /// Extra static directories served at `/pages/<name>/`.
    #[serde(default)]
    pub custom_static: BTreeMap<String, String>,
    /// Authentication.
    #[serde(default)]
    pub auth: AuthConfig,
    /// Retention of old events; absent keeps everything.
    #[serde(default)]
    pub retention: Option<RetentionConfig>,
    /// Folder sync on a schedule; absent: no scheduled passes.
    #[serde(default)]
    pub sync: Option<SyncConfig>,
    /// Forwarding to a hub; absent: none.
    #[serde(default)]
    pub hub: Option<HubConfig>,
    /// Goals and digests delivered; absent: none.
    #[serde(default)]
    pub alerts: Option<AlertsConfig>,
    /// Snapshots of the database (`aw_jobs::backup`).
    #[serde(default)]
    pub backup: BackupConfig,
    /// Answers for finished periods kept in memory (`aw_cache`).
    #[serde(default)]
    pub cache: CacheSection,
    /// Several people, a database file each (`aw_users`); absent: one.
    #[serde(default)]
    pub users: Option<UsersConfig>,
    /// Names the `Host` header may give besides the loopback ones.
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
    /// Proxies (addresses or `address/prefix` ranges) whose
    /// `X-Forwarded-For` names the client.
    #[serde(default)]
    pub trusted_proxies: Vec<String>,
    /// A PEM certificate chain: serve HTTPS (with `tls_key`).
    #[serde(default)]
    pub tls_cert: Option<String>,
    /// The PEM private key of `tls_cert`.
    #[serde(default)]
    pub tls_key: Option<String>,
}

/// The `[cache]` section: every key optional.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheSection {
    /// Whether answers for finished periods are kept (default: yes).
    #[serde(default)]
    pub enabled: Option<bool>,
    /// The most they may take, in MiB (default 64).
    #[serde(default)]
    pub max_mb: Option<u64>,
    /// Seconds after its end from which a period counts as finished
    /// (default 600).
    #[serde(default)]
    pub margin: Option<u64>,
    /// Whether the periods asked for before are computed again after a
    /// start (default: yes).
    #[serde(default)]
    pub prewarm: Option<bool>,
}

/// The `[users]` section: every key optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UsersConfig {
    /// Whether the server hosts several people (default: no).
    #[serde(default)]
    pub enabled: bool,
    /// Whose data an existing database becomes (default `owner`).
    #[serde(default)]
    pub first_user: Option<String>,
    /// The most users' files open at once (default 64).
    #[serde(default)]
    pub max_open: Option<usize>,
    /// Seconds a user's file stays open unused (default 600).
    #[serde(default)]
    pub close_after: Option<u64>,
    /// The other nodes behind the same proxy (`http://host:port`).
    #[serde(default)]
    pub nodes: Option<Vec<String>>,
}

/// The `[backup]` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackupConfig {
    /// Whether snapshots are taken on a schedule (default: no).
    #[serde(default)]
    pub enabled: bool,
    /// The folder snapshots are written into (default: `backups` in the
    /// data folder); the API writes nowhere else.
    #[serde(default)]
    pub dir: Option<String>,
    /// Seconds between scheduled snapshots (default: a day).
    #[serde(default)]
    pub interval: Option<u64>,
    /// Days whose newest snapshot is kept (default 7).
    #[serde(default)]
    pub keep_daily: Option<u32>,
    /// Weeks whose newest snapshot is kept (default 4).
    #[serde(default)]
    pub keep_weekly: Option<u32>,
    /// Snapshots asked for (not scheduled) that are kept (default 10).
    #[serde(default)]
    pub keep_manual: Option<u32>,
}

impl FileConfig {
    /// Parses a config file's text.
    pub fn parse(text: &str, path: &Path) -> Result<FileConfig, ConfigError> {
        toml::from_str(text).map_err(|error| ConfigError::Parse {
            path: path.to_path_buf(),
            message: error.to_string(),
        })
    }

    /// Reads `path`, first writing a file of commented-out defaults there if
    /// it does not exist (as the reference does, so users find the keys).
    pub fn load_or_create(path: &Path, testing: bool) -> Result<FileConfig, ConfigError> {
        let io_error = |source| ConfigError::Io {
            path: path.to_path_buf(),
            source,
        };
        if !path.exists() {
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent).map_err(io_error)?;
            }
            fs::write(path, default_file_text(testing)).map_err(io_error)?;
        }
        let text = fs::read_to_string(path).map_err(io_error)?;
        FileConfig::parse(&text, path)
    }
}

/// The commented defaults written to a new config file.
pub fn default_file_text(testing: bool) -> String {
    let port = default_port(testing);
    format!(
        "### DEFAULT SETTINGS ###\n\
         # Remove the leading '#' of a line to change a value.\n\
         #address = \"127.0.0.1\"\n\
         #port = {port}\n\
         # Extra origins allowed to call the API from a browser, matched exactly.\n\
         #cors = []\n\
         # Extra allowed origins as regexes; each must match the whole origin.\n\
         #cors_regex = []\n\
         \n\
         # Extra static folders, served at /pages/<name>/.\n\
         #[custom_static]\n\
         #my-page = \"/path/to/folder\"\n\
         \n\
         # Names the Host header may give besides localhost, 127.0.0.1, [::1]\n\
         # (the names other devices reach this server by).\n\
         #allowed_hosts = []\n\
         # Proxies whose X-Forwarded-For header names the client (addresses\n\
         # or ranges like \"10.0.0.0/8\").\n\
         #trusted_proxies = []\n\
         # Serve HTTPS with this PEM certificate chain and key.\n\
         #tls_cert = \"/etc/aw-server/cert.pem\"\n\
         #tls_key = \"/etc/aw-server/key.pem\"\n\
         \n\
         # Require 'Authorization: Bearer <api_key>' on /api/ requests. Tokens\n\
         # with scopes: aw-server token add --help.\n\
         #[auth]\n\
         #api_key = \"\"\n\
         # Listen beyond loopback without any key or token (only behind a\n\
         # proxy that authenticates).\n\
         #allow_unauthenticated_remote = false\n\
         \n\
         # Delete events that ended more than keep_days days ago (at start\n\
         # and once a day). Off unless set.\n\
         #[retention]\n\
         #keep_days = 365\n\
         \n\
         # Sync with other devices through a folder that Syncthing or any\n\
         # folder-sync tool shares (aw-sync's layout). Off unless enabled.\n\
         #[sync]\n\
         #enabled = false\n\
         #folder = \"/home/me/ActivityWatchSync\"\n\
         # Seconds between passes (the first runs at start).\n\
         #interval = 300\n\
         #mode = \"both\"\n\
         # Only these buckets (ids); empty: all.\n\
         #buckets = []\n\
         # Push even if the database is encrypted (the copy is plain SQLite).\n\
         #allow_plaintext_copy = false\n\
         \n\
         # Forward this device's own buckets to a hub (another aw-server\n\
         # that all devices reach), with a write token made there for this\n\
         # device's host. Off unless the section is here.\n\
         #[hub]\n\
         #url = \"https://hub.example:5600\"\n\
         #token = \"awt_...\"\n\
         # The hub's certificate, if it is self-signed (PEM).\n\
         #ca_file = \"/home/me/hub.pem\"\n\
         #interval = 60\n\
         #buckets = []\n\
         \n\
         # Goals and limits of the aw-notify setting (the dashboard's Alerts\n\
         # page), checked every check_interval seconds over this machine's\n\
         # time (a hub: all of its devices'), each threshold told once a day;\n\
         # a daily or weekly digest. Off unless a channel is set.\n\
         #[alerts]\n\
         #webhook_url = \"https://example.invalid/hook\"\n\
         #webhook_secret = \"a shared secret\"\n\
         #ntfy_url = \"https://ntfy.sh/my-topic\"\n\
         #smtp_url = \"smtp://me@mail.example:587\"\n\
         #smtp_password_file = \"/home/me/.smtp-password\"\n\
         #email_from = \"aw-server <me@mail.example>\"\n\
         #email_to = \"me@mail.example\"\n\
         #check_interval = 60\n\
         #digest = \"daily\"\n\
         #digest_time = \"08:00\"\n\
         #include_titles = false\n\
         \n\
         # Snapshots of the database (aw-server backup, POST /api/0/backup)\n\
         # are written into this folder (default: backups in the data folder).\n\
         # With enabled = true, one is taken every interval seconds, and old\n\
         # ones are removed after a new one is good: the newest of each of the\n\
         # last keep_daily days and keep_weekly weeks stay. Snapshots asked for\n\
         # are named aw-server-manual-...; the newest keep_manual of them stay.\n\
         #[backup]\n\
         #enabled = false\n\
         #dir = \"/home/me/activitywatch-backups\"\n\
         #interval = 86400\n\
         #keep_daily = 7\n\
         #keep_weekly = 4\n\
         #keep_manual = 10\n\
         \n\
         # Answers for periods that ended more than margin seconds ago are\n\
         # kept in memory (at most max_mb MiB), so dashboards asking for the\n\
         # same finished days again get them at once; a write into a kept\n\
         # period drops it. With prewarm, the periods asked for before are\n\
         # computed again at low priority after a start.\n\
         #[cache]\n\
         #enabled = true\n\
         #max_mb = 64\n\
         #margin = 600\n\
         #prewarm = true\n\
         \n\
         # Several people on this server, each with a database file of their\n\
         # own under users/ in the data folder (aw-server user add NAME). The\n\
         # api_key above is then the server administrator's. An existing\n\
         # database becomes first_user's data. A person's file closes after\n\
         # close_after seconds unused; at most max_open are open at once.\n\
         #[users]\n\
         #enabled = false\n\
         #first_user = \"owner\"\n\
         #max_open = 64\n\
         #close_after = 600\n\
         # Behind a proxy with other nodes: their addresses, for the People page.\n\
         #nodes = []\n"
    )
}

/// 5600, or 5666 in testing mode.
pub fn default_port(testing: bool) -> u16 {
    if testing {
        5666
    } else {
        5600
    }
}

/// Parses `--custom-static name=path,name2=path2`.
pub fn parse_custom_static(spec: &str) -> Result<BTreeMap<String, PathBuf>, ConfigError> {
    let mut map = BTreeMap::new();
    for entry in spec.split(',').filter(|entry| !entry.trim().is_empty()) {
        let (name, path) = entry.split_once('=').ok_or_else(|| {
            ConfigError::Invalid(format!(
                "custom static '{entry}': expected name=path (comma-separated)"
            ))
        })?;
        map.insert(name.trim().to_string(), PathBuf::from(path.trim()));
    }
    Ok(map)
}

/// Resolves a bind address; `localhost` means 127.0.0.1.
pub fn parse_address(text: &str) -> Result<IpAddr, ConfigError> {
    if text.eq_ignore_ascii_case("localhost") {
        return Ok(IpAddr::V4(Ipv4Addr::LOCALHOST));
    }
    text.parse()
        .map_err(|_| ConfigError::Invalid(format!("invalid bind address '{text}'")))
}

/// Everything the server needs to run, resolved from defaults, the config
/// file and the command line.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Address to bind.
    pub address: IpAddr,
    /// Port to bind; 0 picks a free one (tests).
    pub port: u16,
    /// Testing mode (`info.testing`, extra CORS origins).
    pub testing: bool,
    /// Extra exact CORS origins.
    pub cors: Vec<String>,
    /// Extra CORS origin regexes (compiled anchored by the security gate).
    pub cors_regex: Vec<String>,
    /// `/pages/<name>/` directories.
    pub custom_static: BTreeMap<String, PathBuf>,
    /// The API key, an admin credential; `None`: none.
    pub api_key: Option<String>,
    /// Start on a non-loopback address without any credential.
    pub allow_unauthenticated_remote: bool,
    /// Names the `Host` header may give besides the loopback ones
    /// (lowercase, without port).
    pub allowed_hosts: Vec<String>,
    /// Proxies whose `X-Forwarded-For` is believed.
    pub trusted_proxies: Vec<crate::auth::IpRange>,
    /// The certificate chain and key files of HTTPS.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// A built aw-webui folder to serve at `/` (`--webpath`).
    pub webpath: Option<PathBuf>,
    /// The database file.
    pub db_path: PathBuf,
    /// Host name reported by `/api/0/info` and used for `!local`.
    pub hostname: String,
    /// Device id reported by `/api/0/info` and used for `!local`.
    pub device_id: String,
    /// Rocket's own (per-request) logging.
    pub verbose: bool,
    /// Days of events to keep (`[retention] keep_days`); `None` keeps all.
    pub keep_days: Option<u32>,
    /// Scheduled folder sync (`[sync]`); `None`: none.
    pub sync: Option<SyncSettings>,
    /// Forwarding to a hub (`[hub]`); `None`: none.
    pub hub: Option<HubSettings>,
    /// Snapshots (`[backup]`); the folder is empty until resolved, when
    /// the API refuses to write one.
    pub backup: BackupSettings,
    /// The cache of finished periods (`[cache]`); `None`: off.
    pub cache: Option<CacheConfig>,
    /// Alerts and digests (`[alerts]`); `None`: none.
    pub alerts: Option<AlertSettings>,
    /// Several people (`[users] enabled`); `None`: one database file.
    pub users: Option<aw_users::Settings>,
}

impl Default for ServerConfig {
    /// The configuration of a plain start: 127.0.0.1:5600, no extras.
    fn default() -> ServerConfig {
        ServerConfig {
            address: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: default_port(false),
            testing: false,
            cors: Vec::new(),
            cors_regex: Vec::new(),
            custom_static: BTreeMap::new(),
            api_key: None,
            allow_unauthenticated_remote: false,
            allowed_hosts: Vec::new(),
            trusted_proxies: Vec::new(),
            tls: None,
            webpath: None,
            db_path: PathBuf::new(),
            hostname: "localhost".to_string(),
            device_id: "00000000-0000-0000-0000-000000000000".to_string(),
            verbose: false,
            keep_days: None,
            sync: None,
            hub: None,
            backup: BackupSettings::default(),
            cache: Some(CacheConfig::default()),
            alerts: None,
            users: None,
        }
    }
}

impl ServerConfig {
    /// Applies the config file over the defaults of the mode.
    pub fn apply_file(&mut self, file: FileConfig) -> Result<(), ConfigError> {
        if let Some(address) = &file.address {
            self.address = parse_address(address)?;
        }
        self.port = file.port.unwrap_or(default_port(self.testing));
        self.cors = file.cors;
        self.cors_regex = file.cors_regex;
        self.custom_static = file
            .custom_static
            .into_iter()
            .map(|(name, path)| (name, PathBuf::from(path)))
            .collect();
        self.api_key = file.auth.api_key.filter(|key| !key.is_empty());
        self.allow_unauthenticated_remote = file.auth.allow_unauthenticated_remote;
        self.allowed_hosts = file
            .allowed_hosts
            .iter()
            .map(|host| host.trim().to_ascii_lowercase())
            .filter(|host| !host.is_empty())
            .collect();
        self.trusted_proxies = file
            .trusted_proxies
            .iter()
            .map(|text| {
                text.parse().map_err(|_| {
                    ConfigError::Invalid(format!(
                        "invalid trusted_proxies entry '{text}': expected an address or \
                         address/prefix"
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
        self.tls = match (file.tls_cert, file.tls_key) {
            (None, None) => None,
            (Some(cert), Some(key)) => Some((PathBuf::from(cert), PathBuf::from(key))),
            _ => {
                return Err(ConfigError::Invalid(
                    "tls_cert and tls_key go together: set both to serve HTTPS".to_string(),
                ))
            }
        };
        self.keep_days = match file.retention {
            None => None,
            Some(RetentionConfig { keep_days: 0 }) => return Err(ConfigError::Invalid(
                "[retention] keep_days must be at least 1 (remove the section to keep everything)"
                    .to_string(),
            )),
            Some(RetentionConfig { keep_days }) => Some(keep_days),
        };
        self.sync = file.sync.map(resolve_sync).transpose()?;
        self.hub = file.hub.map(resolve_hub).transpose()?;
        self.alerts = file.alerts.map(resolve_alerts).transpose()?;
        self.backup = resolve_backup(file.backup)?;
        self.cache = resolve_cache(file.cache)?;
        self.users = file.users.map(resolve_users).transpose()?.flatten();
        Ok(())
    }
}

/// `[users]` resolved: `None` unless `enabled = true`.
fn resolve_users(file: UsersConfig) -> Result<Option<aw_users::Settings>, ConfigError> {
    let defaults = aw_users::Settings::default();
    let first_user = file.first_user.unwrap_or(defaults.first_user);
    aw_users::check_name(&first_user)
        .map_err(|error| ConfigError::Invalid(format!("[users] first_user: {error}")))?;
    let max_open = file.max_open.unwrap_or(defaults.max_open);
    if max_open == 0 {
        return Err(ConfigError::Invalid(
            "[users] max_open must be at least 1".to_string(),
        ));
    }
    let quiet = file
        .close_after
        .map_or(defaults.quiet, std::time::Duration::from_secs);
    let mut nodes = Vec::new();
    for node in file.nodes.unwrap_or_default() {
        let url = node.trim_end_matches('/');
        let host = url
            .strip_prefix("http://")
            .or_else(|| url.strip_prefix("https://"))
            .unwrap_or_default();
        if host.is_empty() || host.contains('/') {
            return Err(ConfigError::Invalid(format!(
                "[users] nodes: '{node}' is no node's address: give http://host:port"
            )));
        }
        nodes.push(url.to_string());
    }
    Ok(file.enabled.then_some(aw_users::Settings {
        first_user,
        max_open,
        quiet,
        nodes,
    }))
}

/// `[cache]` resolved: on unless `enabled = false`, at least 1 MiB.
fn resolve_cache(section: CacheSection) -> Result<Option<CacheConfig>, ConfigError> {
    if section.enabled == Some(false) {
        return Ok(None);
    }
    let defaults = CacheConfig::default();
    let max_bytes = match section.max_mb {
        None => defaults.max_bytes,
        Some(0) => {
            return Err(ConfigError::Invalid(
                "[cache] max_mb must be at least 1 (or set enabled = false)".to_string(),
            ))
        }
        Some(mb) => usize::try_from(mb)
            .ok()
            .and_then(|mb| mb.checked_mul(1 << 20))
            .ok_or_else(|| ConfigError::Invalid(format!("[cache] max_mb {mb} is too large")))?,
    };
    let margin = match section.margin {
        None => defaults.margin,
        Some(secs) => i64::try_from(secs)
            .ok()
            .filter(|&secs| secs <= MAX_CACHE_MARGIN)
            .map(Duration::from_secs)
            .ok_or_else(|| {
                ConfigError::Invalid(format!(
                    "[cache] margin must be at most {MAX_CACHE_MARGIN} seconds, not {secs}"
                ))
            })?,
    };
    Ok(Some(CacheConfig {
        max_bytes,
        margin,
        prewarm: section.prewarm.unwrap_or(defaults.prewarm),
    }))
}

/// A year: a longer margin is a mistake, not a policy.
const MAX_CACHE_MARGIN: i64 = 366 * 24 * 3600;

/// `[backup]` resolved: the folder (see [`backup_dir`]), an interval of
/// at least a second.
pub fn resolve_backup(file: BackupConfig) -> Result<BackupSettings, ConfigError> {
    let defaults = BackupSettings::default();
    let interval = match file.interval {
        Some(0) => {
            return Err(ConfigError::Invalid(
                "[backup] interval must be at least 1 (seconds)".to_string(),
            ))
        }
        Some(seconds) => std::time::Duration::from_secs(seconds),
        None => defaults.interval,
    };
    Ok(BackupSettings {
        enabled: file.enabled,
        interval,
        keep_daily: file.keep_daily.unwrap_or(defaults.keep_daily),
        keep_weekly: file.keep_weekly.unwrap_or(defaults.keep_weekly),
        keep_manual: file.keep_manual.unwrap_or(defaults.keep_manual),
        dir: backup_dir(&file)?,
    })
}

/// `[backup] dir`, else `backups` in the data folder; absolute.
pub fn backup_dir(file: &BackupConfig) -> Result<PathBuf, ConfigError> {
    let dir = match file.dir.clone() {
        Some(dir) => PathBuf::from(dir),
        None => crate::dirs::data_dir()
            .map(|dir| dir.join("backups"))
            .map_err(|error| ConfigError::Invalid(error.to_string()))?,
    };
    if !dir.is_absolute() {
        return Err(ConfigError::Invalid(format!(
            "[backup] dir must be an absolute path, not '{}'",
            dir.display()
        )));
    }
    Ok(dir)
}

/// `[hub]` resolved: an http(s) address, a token, an interval of at least
/// a second.
fn resolve_hub(file: HubConfig) -> Result<HubSettings, ConfigError> {
    let url = file.url.trim().trim_end_matches('/').to_string();
    let scheme_ok = ["http://", "https://"]
        .iter()
        .any(|scheme| url.len() > scheme.len() && url.to_ascii_lowercase().starts_with(scheme));
    if !scheme_ok {
        return Err(ConfigError::Invalid(format!(
            "[hub] url must be an http:// or https:// address, not '{}'",
            file.url
        )));
    }
    let token = file.token.trim().to_string();
    if token.is_empty() {
        return Err(ConfigError::Invalid(
            "[hub] token is empty: make a write token on the hub (aw-server token add NAME \
             --scope write --host THIS-HOST) and put it here"
                .to_string(),
        ));
    }
    let seconds = file.interval.unwrap_or(DEFAULT_HUB_INTERVAL);
    if seconds == 0 {
        return Err(ConfigError::Invalid(
            "[hub] interval must be at least 1 (seconds)".to_string(),
        ));
    }
    Ok(HubSettings {
        url,
        token,
        ca_file: file.ca_file.map(PathBuf::from),
        interval: std::time::Duration::from_secs(seconds),
        buckets: file.buckets.filter(|buckets| !buckets.is_empty()),
    })
}

/// `[alerts]` resolved: every address a URL of its kind, the e-mail
/// settings complete, the times and zone valid.
pub fn resolve_alerts(file: AlertsConfig) -> Result<AlertSettings, ConfigError> {
    let invalid = |message: String| ConfigError::Invalid(format!("[alerts] {message}"));
    let web_url = |key: &str, value: &str| -> Result<String, ConfigError> {
        let parsed = url::Url::parse(value.trim()).map_err(|error| {
            invalid(format!(
                "{key} must be an http:// or https:// address, not '{value}' ({error})"
            ))
        })?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(invalid(format!(
                "{key} must be an http:// or https:// address, not '{value}'"
            )));
        }
        Ok(value.trim().to_string())
    };
    let webhook = match file
        .webhook_url
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
    {
        Some(url) => Some(aw_alerts::Webhook {
            url: web_url("webhook_url", url)?,
            secret: file
                .webhook_secret
                .clone()
                .filter(|secret| !secret.is_empty()),
        }),
        None if file.webhook_secret.is_some() => {
            return Err(invalid(
                "webhook_secret is set without webhook_url".to_string(),
            ))
        }
        None => None,
    };
    let ntfy = file
        .ntfy_url
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(|url| web_url("ntfy_url", url))
        .transpose()?;
    let email = match file
        .smtp_url
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
    {
        None => {
            if file.email_to.is_some() || file.email_from.is_some() {
                return Err(invalid(
                    "email_from and email_to need smtp_url (smtp://host:587 or smtps://host:465)"
                        .to_string(),
                ));
            }
            None
        }
        Some(text) => {
            let parsed = url::Url::parse(text).map_err(|error| {
                invalid(format!("smtp_url must be smtp://host[:port] or smtps://host[:port], not '{text}' ({error})"))
            })?;
            let implicit_tls = match parsed.scheme() {
                "smtp" => false,
                "smtps" => true,
                _ => {
                    return Err(invalid(format!(
                        "smtp_url must be smtp://host[:port] (STARTTLS) or smtps://host[:port] (TLS), not '{text}'"
                    )))
                }
            };
            let host = parsed
                .host_str()
                .filter(|host| !host.is_empty())
                .ok_or_else(|| invalid(format!("smtp_url '{text}' names no host")))?
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string();
            let decode = |part: &str| {
                percent_encoding::percent_decode_str(part)
                    .decode_utf8_lossy()
                    .into_owned()
            };
            let user = Some(decode(parsed.username())).filter(|user| !user.is_empty());
            let mut password = parsed.password().map(decode);
            if let Some(path) = &file.smtp_password_file {
                let text = std::fs::read_to_string(path)
                    .map_err(|error| invalid(format!("smtp_password_file {path}: {error}")))?;
                password = Some(text.trim_end_matches(['\r', '\n']).to_string());
            }
            if password.is_some() && user.is_none() {
                return Err(invalid(
                    "a password needs a user: smtp://user@host with smtp_password_file".to_string(),
                ));
            }
            let from = file
                .email_from
                .clone()
                .filter(|from| !from.trim().is_empty())
                .ok_or_else(|| {
                    invalid("smtp_url needs email_from (the sender's address)".to_string())
                })?;
            let to = match &file.email_to {
                Some(OneOrMore::One(one)) => vec![one.clone()],
                Some(OneOrMore::More(more)) => more.clone(),
                None => Vec::new(),
            };
            let to: Vec<String> = to.into_iter().filter(|to| !to.trim().is_empty()).collect();
            if to.is_empty() {
                return Err(invalid(
                    "smtp_url needs email_to (one address or a list)".to_string(),
                ));
            }
            for address in std::iter::once(&from).chain(&to) {
                aw_alerts::channels::check_address(address).map_err(|error| {
                    invalid(format!("'{address}' is not an e-mail address ({error})"))
                })?;
            }
            Some(aw_alerts::Email {
                host,
                port: parsed
                    .port()
                    .unwrap_or(if implicit_tls { 465 } else { 587 }),
                implicit_tls,
                user,
                password,
                from,
                to,
                ca_file: file.smtp_ca_file.clone().map(PathBuf::from),
            })
        }
    };
    if file.smtp_ca_file.is_some() && email.is_none() {
        return Err(invalid("smtp_ca_file is set without smtp_url".to_string()));
    }
    let seconds = file
        .check_interval
        .unwrap_or(aw_alerts::DEFAULT_CHECK_INTERVAL);
    if seconds == 0 {
        return Err(invalid(
            "check_interval must be at least 1 (seconds)".to_string(),
        ));
    }
    let tz = file
        .tz
        .map(|tz| tz.trim().to_string())
        .filter(|tz| !tz.is_empty());
    if let Some(tz) = &tz {
        aw_summary::Calendar::new(Some(tz), None, None).map_err(|_| {
            invalid(format!(
                "tz '{tz}' is not an IANA time zone name (e.g. Europe/Berlin)"
            ))
        })?;
    }
    let digest = match file.digest.as_deref().map(str::trim) {
        None | Some("") | Some("off") => None,
        Some("daily") => Some(aw_alerts::DigestPeriod::Daily),
        Some("weekly") => Some(aw_alerts::DigestPeriod::Weekly),
        Some(other) => {
            return Err(invalid(format!(
                "digest must be \"daily\" or \"weekly\", not '{other}'"
            )))
        }
    };
    let digest_time = match file.digest_time.as_deref().map(str::trim) {
        None => (8, 0),
        Some(text) => parse_clock(text).ok_or_else(|| {
            invalid(format!(
                "digest_time must be a time such as \"08:00\", not '{text}'"
            ))
        })?,
    };
    let hosts = match file.hosts.as_deref().map(str::trim) {
        None | Some("") => None,
        Some("own") => Some(aw_alerts::HostScope::Own),
        Some("all") => Some(aw_alerts::HostScope::All),
        Some(other) => {
            return Err(invalid(format!(
                "hosts must be \"own\" or \"all\", not '{other}'"
            )))
        }
    };
    let channels = aw_alerts::Channels {
        webhook,
        ntfy,
        email,
    };
    if channels.is_empty() {
        return Err(invalid(
            "has no channel: set webhook_url, ntfy_url or smtp_url (or remove the section)"
                .to_string(),
        ));
    }
    if digest.is_some() && channels.email.is_none() && channels.webhook.is_none() {
        return Err(invalid(
            "digest goes by e-mail and webhook: set smtp_url or webhook_url".to_string(),
        ));
    }
    Ok(AlertSettings {
        channels,
        check_interval: std::time::Duration::from_secs(seconds),
        tz,
        include_titles: file.include_titles,
        digest,
        digest_time,
        hosts,
        // A failed delivery is tried again after a check interval (at
        // most 30 s), then twice as long each time.
        first_retry: std::time::Duration::from_secs(seconds).min(aw_alerts::FIRST_RETRY),
    })
}

/// `HH:MM` (24 hours) as hours and minutes.
fn parse_clock(text: &str) -> Option<(u8, u8)> {
    let (hours, minutes) = text.split_once(':')?;
    if hours.is_empty() || hours.len() > 2 || minutes.len() != 2 {
        return None;
    }
    let hours: u8 = hours.parse().ok()?;
    let minutes: u8 = minutes.parse().ok()?;
    (hours < 24 && minutes < 60).then_some((hours, minutes))
}

/// `[sync]` resolved: the folder absolute, the interval at least a
/// second, the mode known.
fn resolve_sync(file: SyncConfig) -> Result<SyncSettings, ConfigError> {
    let folder = match file.folder {
        Some(folder) => PathBuf::from(folder),
        None => crate::dirs::sync_dir().map_err(|error| ConfigError::Invalid(error.to_string()))?,
    };
    if !folder.is_absolute() {
        return Err(ConfigError::Invalid(format!(
            "[sync] folder must be an absolute path, not '{}'",
            folder.display()
        )));
    }
    let seconds = file.interval.unwrap_or(DEFAULT_SYNC_INTERVAL);
    if seconds == 0 {
        return Err(ConfigError::Invalid(
            "[sync] interval must be at least 1 (seconds)".to_string(),
        ));
    }
    let mode = file.mode.unwrap_or(SyncMode::Both);
    Ok(SyncSettings {
        enabled: file.enabled,
        folder,
        interval: std::time::Duration::from_secs(seconds),
        mode,
        buckets: file.buckets.filter(|buckets| !buckets.is_empty()),
        allow_plaintext_copy: file.allow_plaintext_copy,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_config_file_parses() {
        let text = r#"
address = "0.0.0.0"
port = 5601
cors = ["http://example.com"]
cors_regex = ["chrome-extension://.*"]
[custom_static]
aw-watcher-x = "/opt/x"
[auth]
api_key = "secret"
"#;
        let file = FileConfig::parse(text, Path::new("c.toml")).unwrap();
        let mut config = ServerConfig::default();
        config.apply_file(file).unwrap();
        assert_eq!(config.address.to_string(), "0.0.0.0");
        assert_eq!(config.port, 5601);
        assert_eq!(config.cors, ["http://example.com"]);
        assert_eq!(
            config.custom_static["aw-watcher-x"],
            PathBuf::from("/opt/x")
        );
        assert_eq!(config.api_key.as_deref(), Some("secret"));
    }

    #[test]
    fn retention_is_off_unless_configured() {
        let mut config = ServerConfig::default();
        config
            .apply_file(FileConfig::parse("", Path::new("c.toml")).unwrap())
            .unwrap();
        assert_eq!(config.keep_days, None);
        let file = FileConfig::parse("[retention]\nkeep_days = 30\n", Path::new("c.toml")).unwrap();
        config.apply_file(file).unwrap();
        assert_eq!(config.keep_days, Some(30));
        let zero = FileConfig::parse("[retention]\nkeep_days = 0\n", Path::new("c.toml")).unwrap();
        assert!(config.apply_file(zero).is_err());
        assert!(FileConfig::parse("[retention]\nkeep = 3\n", Path::new("c.toml")).is_err());
        assert!(FileConfig::parse("[retention]\nkeep_days = -3\n", Path::new("c.toml")).is_err());
    }

    #[test]
    fn sync_is_off_unless_configured_and_checked_when_it_is() {
        let parse = |text: &str| FileConfig::parse(text, Path::new("c.toml")).unwrap();
        let mut config = ServerConfig::default();
        config.apply_file(parse("")).unwrap();
        assert_eq!(config.sync, None);
        config
            .apply_file(parse(
                "[sync]\nenabled = true\nfolder = \"/srv/aw\"\ninterval = 60\nmode = \"push\"\n\
                 buckets = [\"aw-watcher-window_laptop\"]\n",
            ))
            .unwrap();
        let sync = config.sync.clone().unwrap();
        assert!(sync.enabled);
        assert_eq!(sync.folder, PathBuf::from("/srv/aw"));
        assert_eq!(sync.interval.as_secs(), 60);
        assert_eq!(sync.mode, SyncMode::Push);
        assert_eq!(
            sync.buckets.as_deref(),
            Some(&["aw-watcher-window_laptop".to_string()][..])
        );
        assert!(!sync.allow_plaintext_copy);
        // Present but not enabled: no schedule, five minutes, every bucket.
        config
            .apply_file(parse("[sync]\nfolder = \"/srv/aw\"\nbuckets = []\n"))
            .unwrap();
        let sync = config.sync.clone().unwrap();
        assert!(!sync.enabled);
        assert_eq!(sync.interval.as_secs(), 300);
        assert_eq!(sync.buckets, None);
        // The interval's first name still reads.
        config
            .apply_file(parse(
                "[sync]\nfolder = \"/srv/aw\"\ninterval_seconds = 7\n",
            ))
            .unwrap();
        assert_eq!(config.sync.clone().unwrap().interval.as_secs(), 7);
        for bad in [
            "[sync]\nfolder = \"relative\"\n",
            "[sync]\nfolder = \"/x\"\ninterval = 0\n",
        ] {
            assert!(config.apply_file(parse(bad)).is_err(), "{bad}");
        }
        assert!(FileConfig::parse("[sync]\nfolders = 1\n", Path::new("c")).is_err());
        let sideways = FileConfig::parse("[sync]\nmode = \"sideways\"\n", Path::new("c"));
        let message = sideways.unwrap_err().to_string();
        assert!(
            message.contains("mode must be \"push\", \"pull\" or \"both\", not 'sideways'"),
            "{message}"
        );
        let file = FileConfig::parse("[sync]\nmode = \" PULL \"\n", Path::new("c")).unwrap();
        assert_eq!(file.sync.unwrap().mode, Some(SyncMode::Pull));
        assert!(FileConfig::parse("[sync]\nenabled = \"yes\"\n", Path::new("c")).is_err());
    }

    #[test]
    fn alerts_are_off_unless_a_channel_is_set_and_every_value_is_checked() {
        let parse = |text: &str| FileConfig::parse(text, Path::new("c.toml")).unwrap();
        let mut config = ServerConfig::default();
        config.apply_file(parse("")).unwrap();
        assert_eq!(config.alerts, None);
        let dir = tempfile::tempdir().unwrap();
        let password = dir.path().join("password");
        std::fs::write(&password, "s3cret\n").unwrap();
        config
            .apply_file(parse(&format!(
                "[alerts]\nwebhook_url = \"https://hooks.example/x\"\nwebhook_secret = \"k\"\n\
                 ntfy_url = \"https://ntfy.sh/topic\"\nsmtp_url = \"smtp://me%40example.org@mail.example\"\n\
                 smtp_password_file = {:?}\nemail_from = \"aw <me@example.org>\"\n\
                 email_to = [\"a@example.org\", \"b@example.org\"]\ncheck_interval = 30\n\
                 tz = \"Europe/Berlin\"\ndigest = \"weekly\"\ndigest_time = \"7:30\"\nhosts = \"all\"\n",
                password.to_str().unwrap()
            )))
            .unwrap();
        let alerts = config.alerts.clone().unwrap();
        let email = alerts.channels.email.clone().unwrap();
        assert_eq!(
            (email.host.as_str(), email.port, email.implicit_tls),
            ("mail.example", 587, false)
        );
        assert_eq!(email.user.as_deref(), Some("me@example.org"));
        assert_eq!(email.password.as_deref(), Some("s3cret"));
        assert_eq!(email.to.len(), 2);
        assert_eq!(
            alerts.channels.webhook.unwrap().secret.as_deref(),
            Some("k")
        );
        assert_eq!(alerts.check_interval.as_secs(), 30);
        assert_eq!(alerts.digest, Some(aw_alerts::DigestPeriod::Weekly));
        assert_eq!(alerts.digest_time, (7, 30));
        assert_eq!(alerts.hosts, Some(aw_alerts::HostScope::All));
        let smtps = |url: &str| {
            let mut config = ServerConfig::default();
            config
                .apply_file(parse(&format!(
                    "[alerts]\nsmtp_url = \"{url}\"\nemail_from = \"a@b.example\"\nemail_to = \"c@d.example\"\n"
                )))
                .map(|()| config.alerts.unwrap().channels.email.unwrap())
        };
        let tls = smtps("smtps://mail.example").unwrap();
        assert_eq!((tls.port, tls.implicit_tls), (465, true));
        assert_eq!(smtps("smtp://mail.example:2525").unwrap().port, 2525);
        for (text, says) in [
            ("[alerts]\n", "has no channel"),
            ("[alerts]\nwebhook_url = \"hooks.example/x\"\n", "webhook_url must be an http:// or https:// address"),
            ("[alerts]\nwebhook_url = \"ftp://hooks.example/x\"\n", "webhook_url must be an http"),
            ("[alerts]\nntfy_url = \"not a url\"\n", "ntfy_url must be an http"),
            ("[alerts]\nwebhook_secret = \"k\"\n", "without webhook_url"),
            ("[alerts]\nsmtp_url = \"http://mail.example\"\nemail_from = \"a@b.example\"\nemail_to = \"c@d.example\"\n", "smtp_url must be smtp://"),
            ("[alerts]\nsmtp_url = \"smtp://mail.example\"\nemail_to = \"c@d.example\"\n", "needs email_from"),
            ("[alerts]\nsmtp_url = \"smtp://mail.example\"\nemail_from = \"a@b.example\"\n", "needs email_to"),
            ("[alerts]\nsmtp_url = \"smtp://mail.example\"\nemail_from = \"a@b.example\"\nemail_to = \"nobody\"\n", "'nobody' is not an e-mail address"),
            ("[alerts]\nemail_to = \"c@d.example\"\nntfy_url = \"https://ntfy.sh/t\"\n", "need smtp_url"),
            ("[alerts]\nntfy_url = \"https://ntfy.sh/t\"\ncheck_interval = 0\n", "check_interval must be at least 1"),
            ("[alerts]\nntfy_url = \"https://ntfy.sh/t\"\ntz = \"Mars/Olympus\"\n", "not an IANA time zone"),
            ("[alerts]\nwebhook_url = \"https://h.example\"\ndigest = \"hourly\"\n", "digest must be"),
            ("[alerts]\nwebhook_url = \"https://h.example\"\ndigest_time = \"25:00\"\n", "digest_time must be"),
            ("[alerts]\nntfy_url = \"https://ntfy.sh/t\"\ndigest = \"daily\"\n", "digest goes by e-mail and webhook"),
            ("[alerts]\nntfy_url = \"https://ntfy.sh/t\"\nhosts = \"some\"\n", "hosts must be"),
        ] {
            let mut config = ServerConfig::default();
            let error = config.apply_file(parse(text)).unwrap_err().to_string();
            assert!(error.contains("[alerts]") && error.contains(says), "{text}: {error}");
        }
        assert!(FileConfig::parse("[alerts]\nwebhook = \"x\"\n", Path::new("c.toml")).is_err());
    }

    #[test]
    fn default_file_is_all_comments_and_parses_to_defaults() {
        for testing in [false, true] {
            let text = default_file_text(testing);
            let file = FileConfig::parse(&text, Path::new("c.toml")).unwrap();
            assert_eq!(file, FileConfig::default());
            let mut config = ServerConfig {
                testing,
                ..ServerConfig::default()
            };
            config.apply_file(file).unwrap();
            assert_eq!(config.port, default_port(testing));
            assert_eq!(config.api_key, None);
        }
    }

    #[test]
    fn remote_access_keys_are_read_and_checked() {
        let parse = |text: &str| FileConfig::parse(text, Path::new("c.toml")).unwrap();
        let mut config = ServerConfig::default();
        config
            .apply_file(parse(
                "allowed_hosts = [\"Activity.Example.com\", \" \"]\n\
                 trusted_proxies = [\"127.0.0.1\", \"10.0.0.0/8\"]\n\
                 tls_cert = \"/c.pem\"\ntls_key = \"/k.pem\"\n\
                 [auth]\nallow_unauthenticated_remote = true\n",
            ))
            .unwrap();
        assert_eq!(config.allowed_hosts, ["activity.example.com"]);
        assert_eq!(config.trusted_proxies.len(), 2);
        assert!(config.trusted_proxies[1].contains("10.9.8.7".parse().unwrap()));
        assert_eq!(
            config.tls,
            Some((PathBuf::from("/c.pem"), PathBuf::from("/k.pem")))
        );
        assert!(config.allow_unauthenticated_remote);
        for bad in [
            "trusted_proxies = [\"10.0.0.0/40\"]\n",
            "trusted_proxies = [\"proxy.lan\"]\n",
            "tls_cert = \"/c.pem\"\n",
            "tls_key = \"/k.pem\"\n",
        ] {
            assert!(config.apply_file(parse(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn empty_api_key_disables_auth() {
        let file = FileConfig::parse("[auth]\napi_key = \"\"\n", Path::new("c")).unwrap();
        let mut config = ServerConfig::default();
        config.apply_file(file).unwrap();
        assert_eq!(config.api_key, None);
    }

    #[test]
    fn load_or_create_writes_commented_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("config-testing.toml");
        let file = FileConfig::load_or_create(&path, true).unwrap();
        assert_eq!(file, FileConfig::default());
        assert!(fs::read_to_string(&path).unwrap().contains("#port = 5666"));
    }

    #[test]
    fn custom_static_and_address_parsing() {
        let map = parse_custom_static("a=/x, b = /y ,").unwrap();
        assert_eq!(map["a"], PathBuf::from("/x"));
        assert_eq!(map["b"], PathBuf::from("/y"));
        assert!(parse_custom_static("nopath").is_err());
        assert_eq!(parse_address("localhost").unwrap().to_string(), "127.0.0.1");
        assert!(parse_address("not an address").is_err());
        assert!(FileConfig::parse("port = \"x\"", Path::new("c")).is_err());
    }
}
