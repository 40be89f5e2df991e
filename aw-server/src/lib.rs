//! aw-server: the HTTP server of ActivityWatch data, a drop-in replacement
//! for aw-server-rust (`docs/API.md`).
//!
//! This crate is the only one that knows Rocket, HTTP status codes, the
//! config file and the command line. It owns routing ([`endpoints`]), the
//! security gate (`security`), static files (`static_files`), error
//! responses ([`error`]) and where files live ([`dirs`]), and serves the
//! web UI (`static_files`, `assets`): the built-in dashboard of `ui/` or
//! an aw-webui embedded at build time or given at run time. Storage and
//! heartbeat merging are `aw-datastore`'s, the query language `aw-query`'s,
//! the wire types `aw-models`'.
//!
//! [`build_rocket`] assembles the application; `main.rs` parses the
//! command line, opens the datastore, launches and closes it on shutdown.
//! What `/metrics` counts and reads is [`metrics`]'s.
//!
//! Where aw-server-rust's behaviour leaves a choice, this server
//! (`docs/API.md` §13):
//!
//! - accepts JSON bodies without `Content-Type: application/json`;
//! - answers 400 for malformed JSON and for bad query parameters (`start`,
//!   `end`, `pulsetime`, event ids), 422 for well-formed JSON of the wrong
//!   shape, 413 for bodies over 64 MiB (imports: 1000 MB);
//! - reads `limit` as: absent, empty or `-1` = no limit, a non-negative
//!   integer = that many; any other value (`-2`, `abc`) is 400 rather than
//!   silently "no limit";
//! - refuses bucket ids with control characters or over 1000 bytes (400);
//! - refuses paths with `.`/`..` segments, also percent-encoded (400);
//! - treats `POST /api/0/settings/<key>` with `null` as deleting the key;
//! - validates a whole import before storing any of it, and answers it
//!   with an empty body and an `X-Import-Summary` header (JSON counts);
//! - exempts `/api/0/info/` (with the slash) from the API key too;
//! - refuses a `privacy_filters` setting that is not a valid rule set
//!   (400 naming the rule), where the reference stores any JSON.
//!
//! When the server lifts off, [`build_rocket`] starts the configured
//! background jobs (`aw_jobs`: snapshots, retention, folder sync, the hub).

mod asset_files;
mod assets;
pub mod auth;
pub mod cli;
pub mod config;
pub mod damage;
pub mod dirs;
pub mod endpoints;
pub mod error;
pub mod logging;
pub mod metrics;
mod security;
pub mod served;
mod static_files;
#[cfg(test)] // used by build.rs; here for its tests
mod ui_scripts;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use aw_datastore::salvage::SalvageReport;
use aw_datastore::Datastore;
use aw_models::ServerInfo;
use rocket::catcher::{BoxFuture, Catcher};
use rocket::config::{LogLevel, Shutdown, Sig};
use rocket::data::{Limits, ToByteUnit};
use rocket::fairing::AdHoc;
use rocket::http::Status;
use rocket::request::Request;
use rocket::{Build, Rocket};

pub use assets::AssetSet;
pub use config::{ConfigError, ServerConfig};
pub use served::{Hosting, Served};
pub use static_files::Ui;

/// aw-webui as embedded at build time (`AW_WEBUI_DIR`): the folder it came
/// from and its files; `None` in a build without it.
pub fn embedded_webui() -> Option<(&'static str, Arc<AssetSet>)> {
    assets::embedded_webui().map(|(dir, files)| (dir, files.clone()))
}
pub use error::ApiError;

/// The version string of `/api/0/info`, e.g. `v0.1.0 (rust)`: clients and
/// the web UI show it, and the `(rust)` suffix matches the reference.
pub fn version() -> String {
    format!("v{} (rust)", env!("CARGO_PKG_VERSION"))
}

/// What the handlers share.
#[derive(Debug)]
pub struct ServerState {
    /// The one file a server of one person serves; `None` on a server
    /// that hosts several, where each request's is its person's
    /// (`hosting`, the `&Served` guard).
    pub own: Option<Arc<Served>>,
    /// The people of a server that hosts several (`[users] enabled`).
    pub hosting: Option<Arc<Hosting>>,
    /// How far the cache's pre-warm after this start got.
    pub prewarm: Arc<aw_cache::Prewarm>,
    /// The answer of `/api/0/info`.
    pub info: ServerInfo,
    /// The web UI served at `/`.
    pub ui: Ui,
    /// `/pages/<name>/` folders.
    pub custom_static: BTreeMap<String, PathBuf>,
    /// The server's credentials: the API key (with users on, the server
    /// administrator's), the failure limit, the trusted proxies; with
    /// users off, also the file's tokens (the same as `own`'s).
    pub auth: Arc<auth::Auth>,
    /// What a salvage at this start recovered (`damage.rs`), if any.
    pub salvage: Option<SalvageReport>,
    /// What `/metrics` counts as it happens (`metrics.rs`).
    pub metrics: Arc<metrics::Metrics>,
    /// Goals and digests (`[alerts]`): settings and status.
    pub alerts: Arc<aw_alerts::Alerts>,
}

impl ServerState {
    /// What the alerts read: `served`'s store and cache, this server's
    /// host.
    pub fn alerts_source(&self, served: &Served) -> aw_alerts::Source {
        aw_alerts::Source {
            served: aw_summary::Served {
                datastore: served.datastore.clone(),
                own_host: self.info.hostname.clone(),
                cache: served.cache.clone(),
            },
            own_host: self.info.hostname.clone(),
            is_hub,
        }
    }
}

/// Whether devices forward to this server.
pub fn is_hub(datastore: &Datastore) -> bool {
    aw_folder_sync::forward::devices(datastore).is_ok_and(|devices| !devices.is_empty())
}

/// Finishes a merge of hosts a crash or a kill interrupted, before any
/// request sees half of it (`aw_hosts::resume`).
pub fn finish_host_change(datastore: &aw_datastore::Datastore) {
    match aw_hosts::resume(datastore) {
        Ok(Some(report)) => log::warn!(
            "Finished the {} of host '{}' into '{}' that a stop interrupted ({:.1} s)",
            report.operation,
            report.from,
            report.to,
            report.seconds
        ),
        Ok(None) => {}
        Err(error) => log::error!(
            "The change of hosts that a stop interrupted could not be finished: {error}; \
             it is tried again at the next start"
        ),
    }
}

/// What this start found that no config says: the aw-webui embedded in
/// the build, and what a salvage of a damaged database file recovered.
#[derive(Debug, Default)]
pub struct Found {
    /// aw-webui as embedded at build time ([`embedded_webui`]), served at
    /// `/` unless the config's `webpath` is set.
    pub embedded_webui: Option<(&'static str, Arc<AssetSet>)>,
    /// The salvage's report (`damage.rs`), when the file was damaged.
    pub salvage: Option<SalvageReport>,
}

/// The Rocket application for `config` over `datastore`, ready to launch.
/// Fails on an invalid `cors_regex`, unreadable tokens, and a bind beyond
/// loopback while nothing would authenticate requests (§9.5).
pub fn build_rocket(
    datastore: Datastore,
    config: ServerConfig,
    found: Found,
) -> Result<Rocket<Build>, ConfigError> {
    let auth = auth::Auth::load(
        datastore.clone(),
        config.api_key.clone(),
        config.trusted_proxies.clone(),
    )
    .map_err(|error| ConfigError::Invalid(format!("cannot read the API tokens: {error}")))?;
    refuse_open_remote(&config, &auth)?;
    let auth = Arc::new(auth);
    let own = Arc::new(Served::own(datastore, Arc::clone(&auth), &config));
    assemble(Some(own), None, auth, config, found)
}

/// The Rocket application of a server that hosts several people
/// (`[users] enabled`, [`Hosting::open`]): each request is served its
/// person's file, and the config's API key is the server
/// administrator's. The caller closes the open files after the launch
/// ([`Hosting::close_all`]).
pub fn build_hosting(
    hosting: Arc<Hosting>,
    config: ServerConfig,
    found: Found,
) -> Result<Rocket<Build>, ConfigError> {
    // People's tokens authenticate their requests: nothing is open.
    let auth = Arc::new(auth::Auth::key_only(
        config.api_key.clone(),
        config.trusted_proxies.clone(),
    ));
    assemble(None, Some(hosting), auth, config, found)
}

fn assemble(
    own: Option<Arc<Served>>,
    hosting: Option<Arc<Hosting>>,
    auth: Arc<auth::Auth>,
    config: ServerConfig,
    found: Found,
) -> Result<Rocket<Build>, ConfigError> {
    let gate = security::Gate::new(&config, Arc::clone(&auth), hosting.clone())?;
    let rocket_config = rocket::Config {
        address: config.address,
        port: config.port,
        // The client is the connection's peer (or who a trusted proxy
        // names, `auth::limit`), never what a header claims.
        ip_header: None,
        tls: config
            .tls
            .as_ref()
            .map(|(cert, key)| rocket::config::TlsConfig::from_paths(cert, key)),
        // Request logging only when asked for (`--verbose`).
        log_level: if config.verbose {
            LogLevel::Normal
        } else {
            LogLevel::Critical
        },
        cli_colors: false,
        ident: rocket::config::Ident::try_new("aw-server").unwrap_or_default(),
        // Handlers read their bodies with their own limits; these only
        // bound Rocket's built-in guards, which we do not use for bodies.
        limits: Limits::default().limit("json", 64.mebibytes()),
        shutdown: Shutdown {
            // SIGINT and SIGTERM stop accepting connections; requests in
            // flight get `grace` seconds to finish (then `mercy` more for
            // their I/O) before `launch` returns and `main` closes the
            // datastore. Rocket waits out the whole grace period whenever a
            // connection task ends a moment after hyper, so this is also
            // the usual exit delay under load: short, as watchers' requests
            // take milliseconds.
            ctrlc: true,
            #[cfg(unix)]
            signals: [Sig::Term, Sig::Int].into_iter().collect(),
            grace: 5,
            mercy: 3,
            ..Shutdown::default()
        },
        ..rocket::Config::default()
    };
    let metrics = Arc::new(metrics::Metrics::default());
    let prewarm = Arc::new(aw_cache::Prewarm::new(
        own.is_some() && config.cache.is_some_and(|config| config.prewarm),
    ));
    // Alerts read one file: a server of one person's (per person: later).
    let alerts = config.alerts.clone().filter(|_| own.is_some());
    let state = ServerState {
        own,
        hosting,
        prewarm,
        info: ServerInfo {
            hostname: config.hostname.clone(),
            version: version(),
            testing: config.testing,
            device_id: config.device_id.clone(),
        },
        ui: Ui::choose(config.webpath.as_deref(), found.embedded_webui),
        custom_static: config.custom_static.clone(),
        auth,
        salvage: found.salvage,
        metrics: Arc::clone(&metrics),
        alerts: Arc::new(aw_alerts::Alerts::new(alerts)),
    };
    let rocket = rocket::custom(rocket_config);
    Ok(rocket
        .manage(state)
        // Before the gate, so a request's time includes its checks.
        .attach(metrics::Recorder(metrics))
        .attach(gate)
        .attach(AdHoc::on_response("whole chunks", |_, response| {
            Box::pin(async move { set_chunk_size(response) })
        }))
        .attach(AdHoc::on_shutdown("store the cache's hints", |rocket| {
            Box::pin(async move {
                if let Some(state) = rocket.state::<ServerState>() {
                    if let Some(own) = &state.own {
                        if let Some(cache) = own
                            .cache
                            .as_ref()
                            .filter(|_| state.prewarm.status().enabled)
                        {
                            aw_cache::prewarm::save_hints(cache, &own.datastore);
                        }
                    }
                }
            })
        }))
        .attach(AdHoc::on_liftoff("announce and start the jobs", |rocket| {
            Box::pin(async move {
                let config = rocket.config();
                if let Some(state) = rocket.state::<ServerState>() {
                    log::info!("Serving {} at /", state.ui.describe());
                    if let Some(own) = &state.own {
                        own.jobs.start(&own.datastore);
                        aw_alerts::start(&state.alerts, state.alerts_source(own));
                        if let Some(cache) = &own.cache {
                            aw_cache::prewarm::start(cache, &own.datastore, &state.prewarm);
                        }
                    }
                    if let Some(hosting) = &state.hosting {
                        log::info!(
                            "Hosting several people: {} users, at most {} open at once",
                            hosting.users.index().users().map_or(0, |users| users.len()),
                            hosting.settings().max_open
                        );
                        Hosting::start_closing(hosting);
                    }
                }
                log::info!(
                    "aw-server listening on {}://{}:{}",
                    if config.tls_enabled() {
                        "https"
                    } else {
                        "http"
                    },
                    config.address,
                    config.port
                );
            })
        }))
        .mount("/", endpoints::routes())
        .mount(
            "/",
            rocket::routes![
                security::rejected,
                security::preflight,
                static_files::index,
                static_files::file
            ],
        )
        .register("/", vec![Catcher::new(None, json_catcher)]))
}

/// Refuses to listen beyond loopback while no API key or token exists,
/// unless told the server sits behind a proxy that authenticates.
fn refuse_open_remote(config: &ServerConfig, auth: &auth::Auth) -> Result<(), ConfigError> {
    if config.address.is_loopback() || auth.required() || config.allow_unauthenticated_remote {
        return Ok(());
    }
    Err(ConfigError::Invalid(format!(
        "Refusing to listen on {address}: nothing would authenticate requests from other \
         machines. Add a credential first: `aw-server{testing} token add NAME --scope admin` \
         (and tokens for each device's watchers), or set [auth] api_key in config.toml. Behind \
         a proxy that authenticates, start with --allow-unauthenticated-remote ([auth] \
         allow_unauthenticated_remote = true).",
        address = config.address,
        testing = if config.testing { " --testing" } else { "" },
    )))
}

/// Every error Rocket produces itself (no route, a panicking handler, an
/// unparsable request) answers `{"message": ...}` like our own errors.
fn json_catcher<'r>(status: Status, request: &'r Request<'_>) -> BoxFuture<'r> {
    if status == Status::NotFound {
        let allowed = allowed_methods(request);
        if !allowed.is_empty() {
            let allow = allowed.join(", ");
            let message = format!(
                "Method {} is not allowed on {}; allowed: {allow}",
                request.method(),
                request.uri().path()
            );
            return Box::pin(async move {
                let mut response = error::json_message(Status::MethodNotAllowed, &message);
                response.set_raw_header("Allow", allow);
                Ok(response)
            });
        }
    }
    let message = match status.code {
        404 => format!("Not found: {} {}", request.method(), request.uri().path()),
        500 => "Internal server error".to_string(),
        _ => status.reason_lossy().to_string(),
    };
    Box::pin(async move { Ok(error::json_message(status, &message)) })
}

/// The methods of the `/api/` routes whose path matches the request's,
/// when none of them takes its method: the request gets 405 instead of
/// 404 (Rocket itself only knows "no route").
fn allowed_methods(request: &Request<'_>) -> Vec<&'static str> {
    let path: Vec<&str> = request
        .uri()
        .path()
        .segments()
        .filter(|segment| !segment.is_empty())
        .collect();
    if path.first() != Some(&"api") {
        return Vec::new();
    }
    let mut allowed: Vec<&'static str> = request
        .rocket()
        .routes()
        .filter(|route| {
            let pattern: Vec<&str> = route
                .uri
                .path()
                .split('/')
                .filter(|segment| !segment.is_empty())
                .collect();
            pattern.len() == path.len()
                && pattern
                    .iter()
                    .zip(&path)
                    .all(|(want, got)| want.starts_with('<') || want == got)
        })
        .map(|route| route.method.as_str())
        .collect();
    allowed.sort_unstable();
    allowed.dedup();
    if allowed.contains(&request.method().as_str()) {
        return Vec::new();
    }
    allowed
}

/// Largest piece of a response body Rocket hands to hyper at a time.
const MAX_CHUNK: usize = 1 << 20;
/// The piece size of a streamed body of unknown size (exports).
const STREAM_CHUNK: usize = 64 << 10;

/// Rocket copies every body into pieces of 4 KiB by default and passes each
/// through a channel to hyper, which writes it: a large event listing
/// spent much of its time on that
/// (`benches/runs/2026-11-21-small-requests-and-import.md`). A body of known size goes
/// out in one piece of its size (at most [`MAX_CHUNK`]), a streamed one in
/// pieces of [`STREAM_CHUNK`].
fn set_chunk_size(response: &mut rocket::Response<'_>) {
    let size = match response.body().preset_size() {
        Some(size) => size.clamp(rocket::response::Body::DEFAULT_MAX_CHUNK, MAX_CHUNK),
        None => STREAM_CHUNK,
    };
    response.set_max_chunk_size(size);
}
