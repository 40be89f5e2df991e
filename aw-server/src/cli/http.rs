//! The commands' side of the HTTP API: finding a running server and
//! streaming exports from and imports to it with a blocking client (ureq),
//! the API key (or `--token`) sent as `Authorization: Bearer` like the web
//! UI does.

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::net::IpAddr;
use std::time::Duration;

use aw_datastore::{ImportSummary, RangeDeletion, RulesOutcome, RulesReport};
use aw_models::{AccessInfo, Bucket, CreatedToken, NewToken, Timestamp, TokenInfo};
use ureq::http::Response;
use ureq::{Agent, Body, SendBody};

use super::error::CliError;
use aw_models::{PassReport, SyncMode, SyncStatus};
use aw_summary::{Params, SearchParams, SearchResult, Summary};

/// How long to wait for a server to accept a connection. A local server
/// accepts at once; a refused connection is answered at once too.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long `/api/0/info` may take before the server counts as hung.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// A server that answered `/api/0/info`.
#[derive(Debug)]
pub struct Server {
    agent: Agent,
    base: String,
    api_key: Option<String>,
}

/// HTTPS to a server.
#[derive(Debug, Clone, Copy)]
pub struct Tls {
    /// The server is this machine's, over loopback: its certificate is not
    /// checked (it names the server's public name, not the loopback
    /// address). Otherwise the public roots check it.
    pub loopback: bool,
}

/// `host:port`, with brackets around IPv6 addresses.
pub fn authority(address: IpAddr, port: u16) -> String {
    match address {
        IpAddr::V4(v4) => format!("{v4}:{port}"),
        IpAddr::V6(v6) => format!("[{v6}]:{port}"),
    }
}

impl Server {
    /// Asks `/api/0/info`: `None` when nothing listens there (connection
    /// refused), an error when something listens but does not answer as a
    /// server should.
    /// `authority` is `host:port`.
    /// With `tls`, over HTTPS.
    pub fn probe(
        authority: &str,
        api_key: Option<String>,
        tls: Option<Tls>,
    ) -> Result<Option<Server>, CliError> {
        let mut config = Agent::config_builder()
            .timeout_connect(Some(CONNECT_TIMEOUT))
            .http_status_as_error(false);
        let scheme = match &tls {
            None => "http",
            Some(tls) => {
                let builder = ureq::tls::TlsConfig::builder().disable_verification(tls.loopback);
                config = config.tls_config(builder.build());
                "https"
            }
        };
        let agent: Agent = config.build().into();
        let server = Server {
            agent,
            base: format!("{scheme}://{authority}"),
            api_key,
        };
        let request = server
            .agent
            .get(format!("{}/api/0/info", server.base))
            .config()
            .timeout_global(Some(PROBE_TIMEOUT))
            .build();
        match request.call() {
            Ok(response) if response.status() == 200 => Ok(Some(server)),
            Ok(response) => Err(server.refusal("/api/0/info", response)),
            Err(ureq::Error::ConnectionFailed) => Ok(None),
            Err(ureq::Error::Io(error)) if error.kind() == io::ErrorKind::ConnectionRefused => {
                Ok(None)
            }
            Err(error) => Err(CliError(format!(
                "the server at {} did not answer: {error}",
                server.base
            ))),
        }
    }

    /// The server's address, for messages.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Every bucket, by id.
    pub fn buckets(&self) -> Result<BTreeMap<String, Bucket>, CliError> {
        let path = "/api/0/buckets/";
        let response = self.get(path)?;
        response
            .into_body()
            .into_with_config()
            .limit(u64::MAX)
            .read_json()
            .map_err(|error| self.failure(path, error))
    }

    /// The number of events of a bucket.
    pub fn count(&self, bucket_id: &str) -> Result<u64, CliError> {
        let path = format!("/api/0/buckets/{}/events/count", encode(bucket_id));
        let text = self
            .get(&path)?
            .into_body()
            .read_to_string()
            .map_err(|error| self.failure(&path, error))?;
        text.trim().parse().map_err(|_| {
            CliError(format!(
                "{}{path} answered {text:?}, not a count",
                self.base
            ))
        })
    }

    /// The export document of one bucket, as a stream.
    pub fn export(&self, bucket_id: &str) -> Result<impl Read, CliError> {
        let path = format!("/api/0/buckets/{}/export", encode(bucket_id));
        Ok(self.get(&path)?.into_body().into_reader())
    }

    /// Posts an export document of `length` bytes read from `document` to
    /// `/api/0/import`. The declared length lets the server read a document
    /// of up to 128 MB straight into memory instead of spooling it.
    pub fn import(&self, document: &mut dyn Read, length: u64) -> Result<ImportSummary, CliError> {
        let path = "/api/0/import";
        let response = self
            .authorized(self.agent.post(format!("{}{path}", self.base)))
            .content_type("application/json")
            .header("Content-Length", length.to_string())
            .send(SendBody::from_reader(document))
            .map_err(|error| self.failure(path, error))?;
        if response.status() != 200 {
            return Err(self.refusal(path, response));
        }
        let header = response
            .headers()
            .get(aw_models::IMPORT_SUMMARY_HEADER)
            .and_then(|value| value.to_str().ok());
        Ok(header.map(parse_summary).unwrap_or_default())
    }

    /// `DELETE /api/0/buckets/<id>/events?start&end[&dry_run=true]`.
    pub fn delete_range(
        &self,
        bucket_id: &str,
        start: Timestamp,
        end: Timestamp,
        dry_run: bool,
    ) -> Result<RangeDeletion, CliError> {
        let path = format!(
            "/api/0/buckets/{}/events?start={}&end={}{}",
            encode(bucket_id),
            encode(&start.to_string()),
            encode(&end.to_string()),
            if dry_run { "&dry_run=true" } else { "" }
        );
        let response = self
            .authorized(self.agent.delete(format!("{}{path}", self.base)))
            .call()
            .map_err(|error| self.failure(&path, error))?;
        let answer = self.answer(&path, response)?;
        let count = |name: &str| answer[name].as_u64().unwrap_or(0);
        Ok(RangeDeletion {
            deleted: count("deleted"),
            trimmed: count("trimmed"),
        })
    }

    /// `POST /api/0/privacy/apply[?dry_run=true]`: the reports per bucket.
    pub fn apply_privacy(&self, dry_run: bool) -> Result<Vec<RulesReport>, CliError> {
        let path = format!(
            "/api/0/privacy/apply{}",
            if dry_run { "?dry_run=true" } else { "" }
        );
        let answer = self.post_empty(&path)?;
        let mut reports = Vec::new();
        if let Some(buckets) = answer["buckets"].as_object() {
            for (bucket_id, counts) in buckets {
                let count = |name: &str| counts[name].as_u64().unwrap_or(0);
                reports.push(RulesReport {
                    bucket_id: bucket_id.clone(),
                    outcome: RulesOutcome {
                        examined: count("examined"),
                        dropped: count("dropped"),
                        redacted: count("redacted"),
                    },
                });
            }
        }
        Ok(reports)
    }

    /// `GET /api/0/sync/status`.
    pub fn sync_status(&self) -> Result<SyncStatus, CliError> {
        let path = "/api/0/sync/status";
        self.get(path)?
            .into_body()
            .read_json()
            .map_err(|error| self.failure(path, error))
    }

    /// `POST /api/0/sync/run?mode&buckets&start`: the pass's report.
    pub fn sync(
        &self,
        mode: SyncMode,
        buckets: Option<&[String]>,
        start: Option<Timestamp>,
    ) -> Result<PassReport, CliError> {
        let mut path = format!("/api/0/sync/run?mode={mode}");
        if let Some(buckets) = buckets {
            path.push_str("&buckets=");
            path.push_str(&encode(&buckets.join(",")));
        }
        if let Some(start) = start {
            path.push_str("&start=");
            path.push_str(&encode(&start.to_string()));
        }
        let answer = self.post_empty(&path)?;
        serde_json::from_value(answer).map_err(|error| {
            CliError(format!(
                "{}{path} answered a report this program cannot read: {error}",
                self.base
            ))
        })
    }

    /// `POST /api/0/vacuum`: the file's size before and after.
    pub fn vacuum(&self) -> Result<(u64, u64), CliError> {
        let answer = self.post_empty("/api/0/vacuum")?;
        let size = |name: &str| answer[name].as_u64().unwrap_or(0);
        Ok((size("size_before"), size("size_after")))
    }

    /// `POST /api/0/backup`: the snapshot's path, bytes and seconds.
    pub fn backup(&self) -> Result<aw_jobs::backup::Written, CliError> {
        let answer = self.post_empty("/api/0/backup")?;
        Ok(aw_jobs::backup::Written {
            path: answer["path"].as_str().unwrap_or_default().to_string(),
            bytes: answer["bytes"].as_u64().unwrap_or(0),
            seconds: answer["duration_ms"].as_f64().unwrap_or(0.0) / 1000.0,
            removed: answer["removed"]
                .as_array()
                .map(|removed| {
                    removed
                        .iter()
                        .filter_map(|path| path.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
        })
    }

    /// `GET /api/0/access`: what this command's credential may do.
    pub fn access(&self) -> Result<AccessInfo, CliError> {
        self.get_json("/api/0/access")
    }

    /// `GET /api/0/tokens`.
    pub fn tokens(&self) -> Result<Vec<TokenInfo>, CliError> {
        self.get_json("/api/0/tokens")
    }

    /// `POST /api/0/tokens`: the token made; `None` when the name is taken.
    pub fn add_token(&self, request: &NewToken) -> Result<Option<CreatedToken>, CliError> {
        let path = "/api/0/tokens";
        let response = self
            .authorized(self.agent.post(format!("{}{path}", self.base)))
            .send_json(request)
            .map_err(|error| self.failure(path, error))?;
        match response.status().as_u16() {
            201 => response
                .into_body()
                .read_json()
                .map(Some)
                .map_err(|error| self.failure(path, error)),
            // A taken name, or no admin credential yet: the server says which.
            409 => {
                let message = response
                    .into_body()
                    .read_json::<serde_json::Value>()
                    .ok()
                    .and_then(|body| body["message"].as_str().map(str::to_string))
                    .unwrap_or_default();
                if message.starts_with("A token named") {
                    Ok(None)
                } else {
                    Err(CliError(message))
                }
            }
            _ => Err(self.refusal(path, response)),
        }
    }

    /// `DELETE /api/0/tokens/<name>`: false when there is no such token.
    pub fn revoke_token(&self, name: &str) -> Result<bool, CliError> {
        let path = format!("/api/0/tokens/{}", encode(name));
        let response = self
            .authorized(self.agent.delete(format!("{}{path}", self.base)))
            .call()
            .map_err(|error| self.failure(&path, error))?;
        match response.status().as_u16() {
            200 => Ok(true),
            404 => Ok(false),
            _ => Err(self.refusal(&path, response)),
        }
    }

    /// `GET /api/0/settings/<key>`: `None` when unset.
    pub fn setting(&self, key: &str) -> Result<Option<serde_json::Value>, CliError> {
        let value: serde_json::Value =
            self.get_json(&format!("/api/0/settings/{}", encode(key)))?;
        Ok((!value.is_null()).then_some(value))
    }

    /// `GET /api/0/summary`, no time limit (years take a while).
    pub fn summary(&self, params: &Params) -> Result<Summary, CliError> {
        let limit = params.limit.map(|limit| limit.to_string());
        let pairs = [
            ("start", params.start.as_deref()),
            ("end", params.end.as_deref()),
            ("by", params.by.as_deref()),
            ("host", params.host.as_deref()),
            ("tz", params.tz.as_deref()),
            ("limit", limit.as_deref()),
        ];
        self.get_json(&format!("/api/0/summary?{}", query_string(&pairs)))
    }

    /// `GET /api/0/search`.
    pub fn search(&self, params: &SearchParams) -> Result<SearchResult, CliError> {
        let limit = params.limit.map(|limit| limit.to_string());
        let pairs = [
            ("text", params.text.as_deref()),
            ("start", params.start.as_deref()),
            ("end", params.end.as_deref()),
            ("host", params.host.as_deref()),
            ("tz", params.tz.as_deref()),
            ("limit", limit.as_deref()),
        ];
        self.get_json(&format!("/api/0/search?{}", query_string(&pairs)))
    }

    /// `POST /api/0/query/`: one result per period.
    pub fn query(&self, request: &serde_json::Value) -> Result<serde_json::Value, CliError> {
        let path = "/api/0/query/";
        let response = self
            .authorized(self.agent.post(format!("{}{path}", self.base)))
            .send_json(request)
            .map_err(|error| self.failure(path, error))?;
        self.answer(path, response)
    }

    /// `POST /api/0/alerts/test`: each channel's outcome.
    pub fn alerts_test(&self) -> Result<serde_json::Value, CliError> {
        self.post_empty("/api/0/alerts/test")
    }

    /// `POST /api/0/alerts/digest`: the digest, sent unless `!send`.
    pub fn alerts_digest(&self, week: bool, send: bool) -> Result<serde_json::Value, CliError> {
        self.post_empty(&format!("/api/0/alerts/digest?week={week}&send={send}"))
    }

    /// `GET /api/0/hosts`.
    pub fn hosts(&self) -> Result<Vec<aw_models::HostInfo>, CliError> {
        self.get_json("/api/0/hosts")
    }

    /// `POST /api/0/hosts/<host>/rename` or `/merge`: the report.
    pub fn change_hosts(
        &self,
        change: &aw_hosts::Change,
        dry_run: bool,
    ) -> Result<aw_models::HostReport, CliError> {
        let (path, body) = match change {
            aw_hosts::Change::Rename { from, to } => (
                format!("/api/0/hosts/{}/rename", encode(from)),
                serde_json::json!({"to": to, "dry_run": dry_run}),
            ),
            aw_hosts::Change::Merge { from, into } => (
                format!("/api/0/hosts/{}/merge", encode(from)),
                serde_json::json!({"into": into, "dry_run": dry_run}),
            ),
        };
        let response = self
            .authorized(self.agent.post(format!("{}{path}", self.base)))
            .send_json(&body)
            .map_err(|error| self.failure(&path, error))?;
        let answer = self.answer(&path, response)?;
        serde_json::from_value(answer).map_err(|error| {
            CliError(format!(
                "{}{path} answered a report this program cannot read: {error}",
                self.base
            ))
        })
    }

    /// `PUT /api/0/hosts/<alias>/alias`.
    pub fn set_host_alias(&self, alias: &str, host: &str) -> Result<(), CliError> {
        let path = format!("/api/0/hosts/{}/alias", encode(alias));
        let response = self
            .authorized(self.agent.put(format!("{}{path}", self.base)))
            .send_json(serde_json::json!({"host": host}))
            .map_err(|error| self.failure(&path, error))?;
        self.answer(&path, response).map(|_| ())
    }

    /// `DELETE /api/0/hosts/<alias>/alias`.
    pub fn unset_host_alias(&self, alias: &str) -> Result<(), CliError> {
        let path = format!("/api/0/hosts/{}/alias", encode(alias));
        let response = self
            .authorized(self.agent.delete(format!("{}{path}", self.base)))
            .call()
            .map_err(|error| self.failure(&path, error))?;
        match response.status().as_u16() {
            204 => Ok(()),
            _ => Err(self.refusal(&path, response)),
        }
    }

    fn get_json<T: serde::de::DeserializeOwned>(&self, path: &str) -> Result<T, CliError> {
        self.get(path)?
            .into_body()
            .read_json()
            .map_err(|error| self.failure(path, error))
    }

    /// A POST without a body; the JSON answer. No time limit: these are
    /// long operations.
    fn post_empty(&self, path: &str) -> Result<serde_json::Value, CliError> {
        let response = self
            .authorized(self.agent.post(format!("{}{path}", self.base)))
            .send_empty()
            .map_err(|error| self.failure(path, error))?;
        self.answer(path, response)
    }

    /// A 200 answer's JSON body, or the refusal as an error.
    fn answer(&self, path: &str, response: Response<Body>) -> Result<serde_json::Value, CliError> {
        if response.status() != 200 {
            return Err(self.refusal(path, response));
        }
        response
            .into_body()
            .read_json()
            .map_err(|error| self.failure(path, error))
    }

    fn get(&self, path: &str) -> Result<Response<Body>, CliError> {
        let response = self
            .authorized(self.agent.get(format!("{}{path}", self.base)))
            .call()
            .map_err(|error| self.failure(path, error))?;
        if response.status() != 200 {
            return Err(self.refusal(path, response));
        }
        Ok(response)
    }

    fn authorized<B>(&self, request: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        match &self.api_key {
            Some(key) => request.header("Authorization", format!("Bearer {key}")),
            None => request,
        }
    }

    fn failure(&self, path: &str, error: ureq::Error) -> CliError {
        CliError(format!("request to {}{path} failed: {error}", self.base))
    }

    /// A non-200 answer as an error, with the server's `{"message"}`.
    fn refusal(&self, path: &str, response: Response<Body>) -> CliError {
        let status = response.status();
        let message = response
            .into_body()
            .read_json::<serde_json::Value>()
            .ok()
            .and_then(|body| body["message"].as_str().map(str::to_string))
            .unwrap_or_else(|| status.to_string());
        if status == 401 {
            // The server's text speaks of headers; a command takes flags.
            let sent = if self.api_key.is_some() {
                "refused the key or token this command sent"
            } else {
                "needs a key or token and this command had none"
            };
            return CliError(format!(
                "the server at {} {sent} (401): give a token with --token or the AW_SERVER_TOKEN \
                 environment variable, or put the server's key in [auth] api_key of the config \
                 file",
                self.base
            ));
        }
        CliError(format!("{}{path}: {status}: {message}", self.base))
    }
}

/// The summary header's JSON; missing counts are 0 (an older server sends
/// no header at all).
fn parse_summary(text: &str) -> ImportSummary {
    let value: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
    let count = |name: &str| value[name].as_u64().unwrap_or(0);
    ImportSummary {
        buckets_created: count("buckets_created"),
        inserted: count("inserted"),
        skipped: count("skipped"),
        dropped: count("dropped"),
    }
}

/// `name=value&...` of the pairs with a value, percent-encoded.
fn query_string(pairs: &[(&str, Option<&str>)]) -> String {
    let query: Vec<String> = pairs
        .iter()
        .filter_map(|(name, value)| value.map(|value| format!("{name}={}", encode(value))))
        .collect();
    query.join("&")
}

/// Percent-encodes a path segment: everything but unreserved characters.
fn encode(segment: &str) -> String {
    let mut encoded = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            encoded.push(byte as char);
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_percent_encoded() {
        assert_eq!(encode("aw-watcher_x.1~"), "aw-watcher_x.1~");
        assert_eq!(encode("a b/ü%"), "a%20b%2F%C3%BC%25");
    }

    #[test]
    fn summaries_parse_leniently() {
        let summary = parse_summary(r#"{"buckets_created":1,"inserted":2,"skipped":3}"#);
        assert_eq!(
            (summary.buckets_created, summary.inserted, summary.skipped),
            (1, 2, 3)
        );
        assert_eq!(parse_summary("junk"), ImportSummary::default());
    }
}
