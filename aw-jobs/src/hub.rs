//! Forwarding this device's own buckets to a hub: the
//! `[hub]` settings, the HTTP transport of the forwarding engine
//! (`aw_folder_sync::forward`, through [`HttpHub`]), the schedule with its
//! backoff, and the status `GET /api/0/sync/status` shows under `hub`.
//!
//! A pass runs every `interval`; a failed one (the hub down, a timeout, a
//! 5xx) is tried again after 5 s, then twice as long each time up to the
//! interval. A hub that refuses the token (401 or 403: revoked, expired,
//! another host's) stops the schedule with that reason in the status;
//! nothing else on this device changes, and a pass asked for
//! (`POST /api/0/sync/run?mode=hub`) tries again.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration as StdDuration, Instant};

use aw_datastore::{Datastore, DatastoreError};
use aw_folder_sync::forward::HubLink;
use aw_folder_sync::{FolderSyncError, SyncFilter};
use aw_models::{Bucket, ForwardChunk, ForwardState, HubPass, HubStatus, Timestamp};
use ureq::Agent;

use aw_threads::{backoff, Next};

use crate::schedule::{self, in_a_while, lock};

/// `[hub]` as resolved (`config.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubSettings {
    /// The hub's base address, `https://hub.example:5600`, no trailing `/`.
    pub url: String,
    /// A write token of the hub for this device's hosts.
    pub token: String,
    /// A PEM file of the certificate (or its authority) a self-signed hub
    /// presents; `None`: the public roots.
    pub ca_file: Option<PathBuf>,
    /// Time between passes.
    pub interval: StdDuration,
    /// The buckets forwarded (`None`: every own bucket).
    pub buckets: Option<Vec<String>>,
}

/// Default seconds between forwarding passes.
pub const DEFAULT_HUB_INTERVAL: u64 = 60;
/// How long one request to the hub may take.
const REQUEST_TIMEOUT: StdDuration = StdDuration::from_secs(60);
/// How long to wait for the hub to accept a connection.
const CONNECT_TIMEOUT: StdDuration = StdDuration::from_secs(10);
/// The first wait after a failed pass; it doubles up to the interval.
const FIRST_RETRY: StdDuration = StdDuration::from_secs(5);

/// The hub over HTTP(S), as this device (its id names it there).
#[derive(Debug)]
pub struct HttpHub {
    agent: Agent,
    base: String,
    token: String,
    device: String,
}

impl HttpHub {
    /// A client for `settings`; fails on an unreadable `ca_file`.
    pub fn new(settings: &HubSettings, device: &str) -> Result<HttpHub, String> {
        let mut config = Agent::config_builder()
            .timeout_connect(Some(CONNECT_TIMEOUT))
            .timeout_global(Some(REQUEST_TIMEOUT))
            .http_status_as_error(false);
        if let Some(path) = &settings.ca_file {
            let pem = std::fs::read(path)
                .map_err(|error| format!("[hub] ca_file {}: {error}", path.display()))?;
            let certs = ureq::tls::parse_pem(&pem)
                .filter_map(|item| match item {
                    Ok(ureq::tls::PemItem::Certificate(cert)) => Some(Ok(cert)),
                    Ok(_) => None,
                    Err(error) => Some(Err(error)),
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(|error| format!("[hub] ca_file {}: {error}", path.display()))?;
            if certs.is_empty() {
                return Err(format!(
                    "[hub] ca_file {} holds no certificate",
                    path.display()
                ));
            }
            let tls = ureq::tls::TlsConfig::builder()
                .root_certs(ureq::tls::RootCerts::new_with_certs(&certs))
                .build();
            config = config.tls_config(tls);
        }
        Ok(HttpHub {
            agent: config.build().into(),
            base: settings.url.trim_end_matches('/').to_string(),
            token: settings.token.clone(),
            device: device.to_string(),
        })
    }

    fn path(&self, bucket: Option<&str>) -> String {
        let device = encode(&self.device);
        match bucket {
            None => format!("{}/api/0/forward/{device}", self.base),
            Some(bucket) => format!("{}/api/0/forward/{device}/{}", self.base, encode(bucket)),
        }
    }

    /// The answer's body when it is a success; the hub's refusal or the
    /// failure to reach it otherwise.
    fn answer(
        &self,
        result: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> aw_folder_sync::Result<String> {
        let failed =
            |status: Option<u16>, message: String| FolderSyncError::Hub { status, message };
        let response = result.map_err(|error| {
            let text = error.to_string();
            let hint = if text.contains("CaUsedAsEndEntity") {
                " (the hub's certificate is marked as a certificate authority; a self-signed \
                 one must be made with basicConstraints=critical,CA:FALSE, docs/API.md §3.12)"
            } else {
                ""
            };
            failed(
                None,
                format!("the hub at {} did not answer: {text}{hint}", self.base),
            )
        })?;
        let status = response.status().as_u16();
        let body = response
            .into_body()
            .into_with_config()
            .limit(64 << 20)
            .read_to_string()
            .map_err(|error| failed(Some(status), format!("reading the hub's answer: {error}")))?;
        if (200..300).contains(&status) {
            return Ok(body);
        }
        let parsed = serde_json::from_str::<serde_json::Value>(&body).ok();
        let message = parsed
            .as_ref()
            .and_then(|value| value.get("message")?.as_str().map(str::to_string))
            .unwrap_or_else(|| body.chars().take(200).collect());
        // A hub that refuses one bucket, not the token, says so
        // (`refused: "bucket"`); an older hub does not: its 403 stops the
        // schedule as a refused token does.
        let bucket_refused = parsed
            .as_ref()
            .and_then(|value| value.get("refused")?.as_str())
            == Some("bucket");
        if status == 403 && bucket_refused {
            return Err(FolderSyncError::HubRefusedBucket {
                message: format!("the hub at {} refused a bucket: {message}", self.base),
            });
        }
        Err(failed(
            Some(status),
            match status {
                401 | 403 => format!(
                    "the hub at {} refused this device's token (HTTP {status}): {message}",
                    self.base
                ),
                _ => format!("the hub at {} answered HTTP {status}: {message}", self.base),
            },
        ))
    }

    fn parse<T: serde::de::DeserializeOwned>(&self, body: &str) -> aw_folder_sync::Result<T> {
        serde_json::from_str(body).map_err(|error| FolderSyncError::Hub {
            status: None,
            message: format!(
                "the hub at {} answered what is not a forwarding state: {error}",
                self.base
            ),
        })
    }

    fn bearer(&self) -> String {
        format!("Bearer {}", self.token)
    }
}

impl HubLink for HttpHub {
    fn states(&self) -> aw_folder_sync::Result<Vec<ForwardState>> {
        let result = self
            .agent
            .get(self.path(None))
            .header("Authorization", self.bearer())
            .call();
        let body = self.answer(result)?;
        self.parse(&body)
    }

    fn send(&self, chunk: &ForwardChunk) -> aw_folder_sync::Result<ForwardState> {
        let body = serde_json::to_vec(chunk).map_err(|error| FolderSyncError::Hub {
            status: None,
            message: format!("encoding a chunk: {error}"),
        })?;
        let result = self
            .agent
            .post(self.path(None))
            .header("Authorization", self.bearer())
            .header("Content-Type", "application/json")
            .send(&body[..]);
        let body = self.answer(result)?;
        self.parse(&body)
    }

    fn forget(&self, bucket_id: &str) -> aw_folder_sync::Result<()> {
        let result = self
            .agent
            .delete(self.path(Some(bucket_id)))
            .header("Authorization", self.bearer())
            .call();
        self.answer(result).map(|_| ())
    }

    fn rename(&self, from: &str, bucket: &Bucket) -> aw_folder_sync::Result<Option<ForwardState>> {
        let body = serde_json::json!({"from": from, "bucket": bucket}).to_string();
        let result = self
            .agent
            .post(format!("{}/rename", self.path(None)))
            .header("Authorization", self.bearer())
            .header("Content-Type", "application/json")
            .send(body.as_bytes());
        match self.answer(result) {
            Ok(body) => self.parse(&body).map(Some),
            // No copy there, a host taken there, or a hub without
            // renames: the bucket is forgotten there and sent whole.
            Err(FolderSyncError::Hub {
                status: Some(status @ (400 | 403 | 404 | 405 | 409)),
                message,
            }) => {
                log::info!("The hub does not rename {from} in place (HTTP {status}): {message}");
                Ok(None)
            }
            Err(error) => Err(error),
        }
    }
}

fn encode(text: &str) -> String {
    percent_encoding::utf8_percent_encode(text, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// The server's forwarding: settings, identity, status and the lock that
/// keeps passes from overlapping.
#[derive(Debug)]
pub struct HubState {
    /// `[hub]`, if configured.
    pub settings: Option<HubSettings>,
    device_id: String,
    hostname: String,
    status: Mutex<HubStatus>,
    running: Mutex<()>,
}

impl HubState {
    /// The state of a server with these settings, as device `device_id`
    /// of host `hostname` (its buckets without a host are sent as that
    /// host's).
    pub fn new(settings: Option<HubSettings>, device_id: String, hostname: String) -> HubState {
        let status = HubStatus {
            url: settings.as_ref().map(|s| s.url.clone()).unwrap_or_default(),
            interval_seconds: settings.as_ref().map_or(0, |s| s.interval.as_secs()),
            ..HubStatus::default()
        };
        HubState {
            settings,
            device_id,
            hostname,
            status: Mutex::new(status),
            running: Mutex::new(()),
        }
    }

    /// The status; `None` without `[hub]`.
    pub fn status(&self) -> Option<HubStatus> {
        self.settings.as_ref()?;
        Some(lock(&self.status).clone())
    }

    /// Runs a pass now (after any pass already running); records and logs
    /// it. Fails with [`FolderSyncError::Refused`] without `[hub]`.
    pub fn run(&self, datastore: &Datastore) -> Result<HubPass, FolderSyncError> {
        let Some(settings) = &self.settings else {
            return Err(FolderSyncError::Refused(
                "this server has no [hub] section in its config file: add one with the hub's \
                 url and a write token"
                    .to_string(),
            ));
        };
        let _running = lock(&self.running);
        lock(&self.status).running = true;
        let started = Timestamp::now();
        let clock = Instant::now();
        let result = HttpHub::new(settings, &self.device_id)
            .map_err(FolderSyncError::Refused)
            .and_then(|hub| {
                let filter = SyncFilter {
                    buckets: settings.buckets.clone(),
                    start: None,
                };
                aw_folder_sync::forward::forward(
                    datastore,
                    &hub,
                    &filter,
                    &self.hostname,
                    &mut |_| {},
                )
            });
        let mut status = lock(&self.status);
        status.running = false;
        match result {
            Ok(report) => {
                let pass = HubPass {
                    started,
                    finished: Timestamp::now(),
                    duration_ms: clock.elapsed().as_secs_f64() * 1000.0,
                    report,
                };
                if pass.report.chunks > 0 {
                    log::info!(
                        "Forwarded to {}: {} bucket(s), {} new events, {} compared, in {:.0} ms",
                        settings.url,
                        pass.report.buckets,
                        pass.report.sent,
                        pass.report.compared,
                        pass.duration_ms
                    );
                }
                let skipped_before = status
                    .last_pass
                    .as_ref()
                    .map(|last| last.report.skipped.as_slice())
                    .unwrap_or_default();
                if pass.report.skipped != skipped_before {
                    for skipped in &pass.report.skipped {
                        log::warn!(
                            "Not forwarding bucket {}: {}",
                            skipped.bucket,
                            skipped.reason
                        );
                    }
                }
                status.passes += 1;
                status.last_pass = Some(pass.clone());
                status.last_error = None;
                status.last_error_at = None;
                status.stopped = None;
                Ok(pass)
            }
            Err(error) => {
                log::error!("Forwarding to {} failed: {error}", settings.url);
                status.failures += 1;
                status.last_error = Some(error.to_string());
                status.last_error_at = Some(Timestamp::now());
                if refused_token(&error) {
                    let reason = error.to_string();
                    status.stopped = Some(format!(
                        "{}; forwarding stopped: give this device a new write token in \
                         [hub] token and restart it",
                        reason.trim_end_matches('.')
                    ));
                    status.next_pass = None;
                }
                Err(error)
            }
        }
    }
}

/// Whether the hub refused the token itself (not a passing failure).
fn refused_token(error: &FolderSyncError) -> bool {
    matches!(
        error,
        FolderSyncError::Hub {
            status: Some(401 | 403),
            ..
        }
    )
}

/// How often the schedule's wait looks whether the datastore closed.
const CHECK: StdDuration = StdDuration::from_secs(1);

/// Starts the `[hub]` schedule: a pass now, then one per interval (or
/// sooner after a failure, `backoff`), until the datastore closes; a
/// refused token stops the passes until one asked for succeeds.
pub fn start(datastore: &Datastore, state: &Arc<HubState>) {
    let Some(settings) = state.settings.clone() else {
        return;
    };
    let (datastore, state) = (datastore.clone(), Arc::clone(state));
    let mut failures = 0u32;
    schedule::start("aw-server-hub", CHECK, &datastore.clone(), move || {
        let stopped = lock(&state.status).stopped.is_some();
        if !stopped {
            match state.run(&datastore) {
                Ok(_) => failures = 0,
                Err(FolderSyncError::Store(DatastoreError::Closed)) => return Next::Stop,
                Err(_) => failures = failures.saturating_add(1),
            }
        }
        let wait = backoff(failures, FIRST_RETRY, settings.interval);
        let mut status = lock(&state.status);
        if status.stopped.is_none() {
            status.next_pass = Some(in_a_while(wait));
        }
        Next::After(wait)
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_refused_token_stops_the_schedule() {
        let hub = |status| FolderSyncError::Hub {
            status,
            message: String::new(),
        };
        assert!(refused_token(&hub(Some(401))));
        assert!(refused_token(&hub(Some(403))));
        assert!(!refused_token(&hub(Some(503))));
        assert!(!refused_token(&hub(None)));
    }
}
