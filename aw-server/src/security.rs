//! The security gate (`docs/API.md` §9): Host-header check, CORS, and
//! authentication and scopes (`auth`) of the API and of `/metrics`.
//!
//! One request fairing decides, before routing, whether a request may reach
//! a handler at all. It also canonicalises the path the router will see:
//! segments are percent-decoded, empty segments (doubled or trailing slashes)
//! dropped and the path re-encoded, so `/%61pi//0/buckets/` is routed *and*
//! gated as `/api/0/buckets`. Because the gate and the router look at the
//! same canonical path, encoding tricks cannot reach an API handler without
//! passing the key check. Dot segments (`.`, `..`, also percent-encoded) are
//! refused outright: no client sends them and they only serve traversal.
//!
//! A Rocket fairing cannot answer a request itself, so a refused request is
//! rewritten to `GET` [`REJECTED_PATH`], whose route answers with the stored
//! [`Rejection`]; the original handler never runs and the body is never
//! read. The response fairing adds the CORS headers.
//!
//! What the handlers do with a request that passed is not this module's
//! business; neither is static file resolution (`static_files.rs`).

use std::collections::HashSet;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::Arc;

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use regex::Regex;
use rocket::fairing::{Fairing, Info, Kind};
use rocket::http::uri::Origin;
use rocket::http::{Header, Method, Status};
use rocket::request::{FromRequest, Outcome, Request};
use rocket::response::{self, Responder};
use rocket::{Data, Orbit, Response, Rocket};

use crate::auth::{Access, Auth, Failure, Need};
use crate::config::{ConfigError, ServerConfig};
use crate::error::json_message;
use crate::served::{Hosting, Served, Tenant};
use aw_models::Timestamp;

/// Where refused requests are routed to.
pub const REJECTED_PATH: &str = "/__aw-server/rejected";

/// Seconds a request of a person being moved is told to wait (a move of
/// a year of history takes seconds).
const MOVING_RETRY_AFTER: u64 = 5;
/// Seconds a request that reached the wrong node is told to wait (for
/// the proxy's route to change).
const MISDIRECTED_RETRY_AFTER: u64 = 2;

/// The aw-watcher-web extension of the Chrome web store.
const CHROME_WEB_STORE_EXTENSION: &str = "chrome-extension://nglaklhklhcoonedhgnpgddginnjdadi";

/// Why the gate refused a request; answered by the [`REJECTED_PATH`] route.
#[derive(Debug, Clone)]
pub struct Rejection {
    status: Status,
    message: String,
    /// Seconds for `Retry-After` (429).
    retry_after: Option<u64>,
}

impl Rejection {
    fn new(status: Status, message: impl Into<String>) -> Rejection {
        Rejection {
            status,
            message: message.into(),
            retry_after: None,
        }
    }
}

#[rocket::async_trait]
impl<'r> FromRequest<'r> for &'r Rejection {
    type Error = ();

    async fn from_request(request: &'r Request<'_>) -> Outcome<Self, ()> {
        // Only requests the gate rewrote carry a rejection; anyone asking
        // for the path directly gets a plain 404.
        match request.local_cache(|| None::<Rejection>) {
            Some(rejection) => Outcome::Success(rejection),
            None => Outcome::Forward(Status::NotFound),
        }
    }
}

impl<'r> Responder<'r, 'static> for &'r Rejection {
    fn respond_to(self, _request: &'r Request<'_>) -> response::Result<'static> {
        let mut response = json_message(self.status, &self.message);
        if let Some(seconds) = self.retry_after {
            response.set_raw_header("Retry-After", seconds.to_string());
        }
        Ok(response)
    }
}

/// Answers a request refused by the gate.
#[rocket::get("/__aw-server/rejected")]
pub fn rejected(rejection: &Rejection) -> &Rejection {
    rejection
}

/// The CORS answer to an `OPTIONS` request that passed the gate: 200,
/// empty; the response fairing adds the `Access-Control-*` headers.
#[rocket::options("/<_..>")]
pub fn preflight() -> Status {
    // Rocket answers a success status with no body.
    Status::Ok
}

/// What the gate granted a request: set on every request it let through
/// to an `/api/` handler (or `/metrics`).
#[derive(Debug, Clone, Default)]
pub struct Granted(Option<Access>);

#[rocket::async_trait]
impl<'r> FromRequest<'r> for &'r Access {
    type Error = ();

    async fn from_request(request: &'r Request<'_>) -> Outcome<Self, ()> {
        // Never a default: a handler that asks outside the gate's paths
        // gets nothing rather than everything.
        match request.local_cache(Granted::default) {
            Granted(Some(access)) => Outcome::Success(access),
            Granted(None) => Outcome::Error((Status::Forbidden, ())),
        }
    }
}

/// The `Origin` of a request the gate allowed, for the response fairing.
#[derive(Debug, Clone, Default)]
struct AllowedOrigin(Option<String>);

/// Which browser origins may call the server.
#[derive(Debug)]
struct CorsPolicy {
    exact: HashSet<String>,
    regexes: Vec<Regex>,
    testing: bool,
}

/// How far an `Origin` may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Allowed {
    /// Nowhere: 403.
    No,
    /// Everywhere: the server's own pages and the user's `cors` and
    /// `cors_regex` lists.
    Fully,
    /// Only what aw-watcher-web needs ([`extension_may`]): the built-in
    /// rules for browser extensions, which Firefox cannot narrow to one
    /// extension (every installation of every extension has its own id).
    Extension,
}

impl CorsPolicy {
    fn allows(&self, origin: &str, port: u16) -> Allowed {
        // The server's own pages (the web UI), by any loopback name.
        let own = ["127.0.0.1", "localhost", "[::1]"]
            .iter()
            .any(|host| origin == format!("http://{host}:{port}"));
        // The user's lists come before the built-in extension rules: an
        // extension origin listed there is trusted as the user chose.
        if own
            || self.exact.contains(origin)
            || self.regexes.iter().any(|regex| regex.is_match(origin))
        {
            return Allowed::Fully;
        }
        if self.testing
            && (origin == "http://127.0.0.1:27180" || origin == "http://localhost:27180")
        {
            return Allowed::Fully;
        }
        let extension = origin
            .strip_prefix("moz-extension://")
            .is_some_and(|id| !id.is_empty())
            || origin == CHROME_WEB_STORE_EXTENSION
            || (self.testing
                && origin
                    .strip_prefix("chrome-extension://")
                    .is_some_and(|id| !id.is_empty()));
        if extension {
            Allowed::Extension
        } else {
            Allowed::No
        }
    }
}

/// Whether a browser extension allowed by the built-in rules may send
/// `method` to the canonical path `segments`: what aw-watcher-web sends,
/// its server check, its bucket and its heartbeats, nothing that reads
/// history or another watcher's bucket.
fn extension_may(method: Method, segments: &[String]) -> bool {
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    match (method, segments.as_slice()) {
        (Method::Get | Method::Head, ["api", "0", "info"]) => true,
        (Method::Post, ["api", "0", "buckets", bucket])
        | (Method::Post, ["api", "0", "buckets", bucket, "heartbeat"]) => {
            bucket.starts_with("aw-watcher-web-")
        }
        _ => false,
    }
}

/// What the synchronous part of the gate decided: the canonical path
/// segments, and for a path behind the credential check (`guarded`) the
/// access and what it needs.
struct Checked {
    segments: Vec<String>,
    guarded: Option<(Access, Need)>,
    /// The person's file the credential names (users on).
    tenant: Option<Arc<Served>>,
}

/// Why, on a server that hosts several people, an access does not reach
/// what a request needs: the server administrator's key manages the
/// people and reads nothing of theirs; a person's token reaches their
/// own file only, never the people's management.
fn hosting_refusal(access: &Access, has_file: bool, need: &Need) -> Option<&'static str> {
    match (need, has_file) {
        (Need::Nothing | Need::Identity, _) => None,
        (Need::Users | Need::Metrics, false) if matches!(access, Access::Key) => None,
        (Need::Users, _) => Some(
            "Managing people needs the server administrator's key ([auth] api_key); a \
             person's token reaches their own data only",
        ),
        (_, true) => None,
        (_, false) => Some(
            "The server administrator's key manages people (/api/0/users) and reads nothing \
             of theirs: use the person's own token for their data",
        ),
    }
}

/// The request fairing of this module; see the module docs.
#[derive(Debug)]
pub struct Gate {
    /// Names the `Host` header may give besides the loopback ones
    /// (lowercase): `allowed_hosts` and a specific bound address.
    allowed_hosts: Vec<String>,
    cors: CorsPolicy,
    auth: Arc<Auth>,
    /// The people, when the server hosts several.
    hosting: Option<Arc<Hosting>>,
    /// The port the server listens on, for its own origin; updated at
    /// liftoff because port 0 binds a port chosen by the system.
    port: AtomicU16,
}

impl Gate {
    /// A gate for `config` with the credentials of `auth`; fails on an
    /// invalid `cors_regex`.
    pub fn new(
        config: &ServerConfig,
        auth: Arc<Auth>,
        hosting: Option<Arc<Hosting>>,
    ) -> Result<Gate, ConfigError> {
        let regexes = config
            .cors_regex
            .iter()
            .map(|pattern| {
                // Anchored: an unanchored `example\.com` would also allow
                // `http://example.com.evil.net`.
                Regex::new(&format!("^(?:{pattern})$")).map_err(|error| {
                    ConfigError::Invalid(format!("invalid cors_regex '{pattern}': {error}"))
                })
            })
            .collect::<Result<_, _>>()?;
        let mut allowed_hosts = config.allowed_hosts.clone();
        if !config.address.is_unspecified() && !config.address.is_loopback() {
            allowed_hosts.push(match config.address {
                IpAddr::V4(v4) => v4.to_string(),
                IpAddr::V6(v6) => format!("[{v6}]"),
            });
        }
        Ok(Gate {
            allowed_hosts,
            cors: CorsPolicy {
                exact: config.cors.iter().cloned().collect(),
                regexes,
                testing: config.testing,
            },
            auth,
            hosting,
            port: AtomicU16::new(config.port),
        })
    }

    /// Decides on a request as far as it can without the store; `Ok`
    /// carries the canonical path segments, and for a guarded path what it
    /// may do and needs.
    fn check(&self, request: &Request<'_>) -> Result<Checked, Rejection> {
        if !host_is_allowed(request, &self.allowed_hosts) {
            let host = request.host().map(ToString::to_string).unwrap_or_default();
            return Err(Rejection::new(
                Status::BadRequest,
                format!(
                    "Host header is invalid: '{host}' is not a name of this server \
                     (add it to allowed_hosts in config.toml)"
                ),
            ));
        }
        let segments = canonical_segments(request)?;
        if is_api(&segments) {
            no_repeated_parameters(request)?;
        }

        let origin = single_header(request, "Origin")?;
        if let Some(origin) = origin {
            let allowed = self.cors.allows(origin, self.port.load(Ordering::Relaxed));
            if allowed == Allowed::No {
                return Err(Rejection::new(
                    Status::Forbidden,
                    format!("Cross-origin request from origin '{origin}' is not allowed"),
                ));
            }
            let wanted = if request.method() == Method::Options {
                let wanted = single_header(request, "Access-Control-Request-Method")?;
                if let Some(method) = wanted {
                    if !["GET", "POST", "DELETE"].contains(&method) {
                        return Err(Rejection::new(
                            Status::Forbidden,
                            format!("Cross-origin method '{method}' is not allowed"),
                        ));
                    }
                }
                // A preflight that names no method says nothing of the
                // request to come: for an extension, no.
                wanted.and_then(|method| method.parse::<Method>().ok())
            } else {
                Some(request.method())
            };
            if allowed == Allowed::Extension
                && !wanted.is_some_and(|method| extension_may(method, &segments))
            {
                return Err(Rejection::new(
                    Status::Forbidden,
                    format!(
                        "Browser extensions may call only what aw-watcher-web needs \
                         (/api/0/info and its own aw-watcher-web-* bucket); to let origin \
                         '{origin}' call this, add it to cors_regex in config.toml"
                    ),
                ));
            }
            request.local_cache(|| AllowedOrigin(Some(origin.to_string())));
        }

        if !guarded(&segments) {
            return Ok(Checked {
                segments,
                guarded: None,
                tenant: None,
            });
        }
        if !self.auth.required() && self.hosting.is_none() {
            // No credential exists: everything is open, nothing to decide.
            return Ok(Checked {
                segments,
                guarded: Some((Access::Open, Need::Nothing)),
                tenant: None,
            });
        }
        let need = Need::of(request.method(), &segments);
        let (access, tenant) = self.authenticate(request, &need)?;
        if let Some(message) = access.refusal(&need) {
            return Err(Rejection::new(Status::Forbidden, message));
        }
        if self.hosting.is_some() {
            if let Some(message) = hosting_refusal(&access, tenant.is_some(), &need) {
                return Err(Rejection::new(Status::Forbidden, message));
            }
        } else if need == Need::Users {
            return Err(Rejection::new(
                Status::NotFound,
                "This server serves one person: it has no users (set [users] enabled = true \
                 in config.toml to host several people)",
            ));
        }
        Ok(Checked {
            segments,
            guarded: Some((access, need)),
            tenant,
        })
    }

    /// The access of a guarded request of a server with credentials:
    /// [`Access::Open`] for what needs none, else the one its
    /// `Authorization` header gives; failures are counted per client and
    /// logged without the credential.
    fn authenticate(
        &self,
        request: &Request<'_>,
        need: &Need,
    ) -> Result<(Access, Option<Arc<Served>>), Rejection> {
        if *need == Need::Nothing {
            return Ok((Access::Open, None));
        }
        let forwarded: Vec<&str> = request.headers().get("X-Forwarded-For").collect();
        let client = self
            .auth
            .client(request.remote().map(|remote| remote.ip()), &forwarded);
        let shown = client.map_or_else(|| "an unknown address".to_string(), |ip| ip.to_string());
        if !self.auth.failures.may_try(client) {
            let mut rejection = Rejection::new(
                Status::TooManyRequests,
                "Too many failed authentications from this address; try again later",
            );
            rejection.retry_after = Some(crate::auth::limit::REFILL.as_secs());
            return Err(rejection);
        }
        let headers = request.headers().get("Authorization");
        let authenticated = match &self.hosting {
            None => self
                .auth
                .authenticate(headers, Timestamp::now())
                .map(|access| (access, None)),
            Some(hosting) => {
                let headers: Vec<&str> = headers.collect();
                hosting.authenticate(&self.auth, &headers, Timestamp::now())
            }
        };
        match authenticated {
            Ok(granted) => Ok(granted),
            Err(Failure::Unavailable) => Err(Rejection::new(
                Status::ServiceUnavailable,
                "This person's data could not be opened just now; try again in a moment",
            )),
            Err(Failure::Moving) => {
                let mut rejection = Rejection::new(
                    Status::ServiceUnavailable,
                    "This person's data is being moved to another node; try again in a moment",
                );
                rejection.retry_after = Some(MOVING_RETRY_AFTER);
                Err(rejection)
            }
            Err(Failure::Misdirected) => {
                log::warn!(
                    "Refused {} {} from {shown}: {}",
                    request.method(),
                    request.uri().path(),
                    Failure::Misdirected.as_str()
                );
                let mut rejection = Rejection::new(
                    Status::MisdirectedRequest,
                    "This server does not hold the person this token names: they were moved \
                     to another node (a proxy's route to them is out of date; retry) or \
                     removed here (ask the server administrator).",
                );
                rejection.retry_after = Some(MISDIRECTED_RETRY_AFTER);
                Err(rejection)
            }
            Err(failure) => {
                let path = request.uri().path();
                let method = request.method();
                if failure == Failure::Missing {
                    // A page opened without its token, say: not an attack.
                    log::debug!("Refused {method} {path} from {shown}: {}", failure.as_str());
                } else {
                    log::warn!("Refused {method} {path} from {shown}: {}", failure.as_str());
                    if self.auth.failures.failed(client) {
                        log::warn!(
                            "Limiting {shown}: too many failed authentications; later ones \
                             are answered 429 and not logged"
                        );
                    }
                }
                Err(Rejection::new(
                    Status::Unauthorized,
                    if self.hosting.is_some() {
                        "Missing or invalid token: this server hosts several people, and each \
                         request needs the token of the person whose data it reads or writes. \
                         Send it as 'Authorization: Bearer <token>' (or as the password of HTTP \
                         Basic)."
                    } else {
                        "Missing or invalid API key or token. Send it as 'Authorization: Bearer \
                         <token>' (or as the password of HTTP Basic)."
                    },
                ))
            }
        }
    }

    /// The rest of the write-token check: a bucket it names must be one
    /// of its hosts' (or not exist yet; creating one checks the body's
    /// host).
    async fn check_bucket(
        &self,
        access: &Access,
        need: &Need,
        tenant: Option<&Served>,
    ) -> Result<(), Rejection> {
        let (Need::ReadBucket(id) | Need::WriteBucket(id)) = need else {
            return Ok(());
        };
        let Access::Token(token) = access else {
            return Ok(());
        };
        if token.info.scope != aw_models::Scope::Write {
            return Ok(());
        }
        let auth = tenant.map_or(&self.auth, |served| &served.auth);
        match auth.bucket_host(id).await {
            Ok(Some(host)) if !access.may_write_host(&host) => Err(Rejection::new(
                Status::Forbidden,
                format!(
                    "This write token may not use bucket '{id}': its host '{host}' is not one \
                     of the token's"
                ),
            )),
            Ok(_) => Ok(()),
            Err(error) => {
                log::error!("Could not read bucket '{id}' to check a token: {error}");
                Err(Rejection::new(
                    Status::ServiceUnavailable,
                    "Could not check the bucket's host; try again",
                ))
            }
        }
    }
}

#[rocket::async_trait]
impl Fairing for Gate {
    fn info(&self) -> Info {
        Info {
            name: "security gate (host, CORS, API key)",
            kind: Kind::Request | Kind::Response | Kind::Liftoff,
        }
    }

    async fn on_liftoff(&self, rocket: &Rocket<Orbit>) {
        self.port.store(rocket.config().port, Ordering::Relaxed);
    }

    async fn on_request(&self, request: &mut Request<'_>, _data: &mut Data<'_>) {
        let decided = match self.check(request) {
            Ok(Checked {
                segments,
                guarded: Some((access, need)),
                tenant,
            }) => match self.check_bucket(&access, &need, tenant.as_deref()).await {
                Ok(()) => {
                    request.local_cache(|| Granted(Some(access)));
                    request.local_cache(|| Tenant(tenant));
                    Ok(segments)
                }
                Err(rejection) => Err(rejection),
            },
            Ok(Checked {
                segments,
                guarded: None,
                ..
            }) => Ok(segments),
            Err(rejection) => Err(rejection),
        };
        let canonical = match decided {
            Ok(segments) => {
                // Web pages keep a trailing slash (relative links resolve
                // against it); API paths and `/metrics` never need one.
                let trailing_slash = request.uri().path().ends_with('/')
                    && !segments.is_empty()
                    && !guarded(&segments);
                canonical_uri(
                    &segments,
                    trailing_slash,
                    request.uri().query().map(|q| q.as_str()),
                )
            }
            Err(rejection) => {
                request.local_cache(|| Some(rejection));
                None
            }
        };
        match canonical {
            Some(uri) => request.set_uri(uri),
            None => {
                // A no-op when the gate already stored its reason; otherwise
                // the canonical path did not parse (it always should) and
                // the request is refused rather than routed unchecked.
                request.local_cache(|| {
                    Some(Rejection::new(Status::BadRequest, "Invalid request path"))
                });
                request.set_method(Method::Get);
                request.set_uri(
                    Origin::parse(REJECTED_PATH).expect("REJECTED_PATH is a valid origin URI"),
                );
            }
        }
    }

    async fn on_response<'r>(&self, request: &'r Request<'_>, response: &mut Response<'r>) {
        let AllowedOrigin(Some(origin)) = request.local_cache(AllowedOrigin::default) else {
            return;
        };
        response.set_header(Header::new("Access-Control-Allow-Origin", origin.clone()));
        response.adjoin_header(Header::new("Vary", "Origin"));
        if request.method() == Method::Options {
            response.set_header(Header::new(
                "Access-Control-Allow-Methods",
                "GET, DELETE, POST",
            ));
            if let Some(headers) = request.headers().get_one("Access-Control-Request-Headers") {
                response.set_header(Header::new(
                    "Access-Control-Allow-Headers",
                    headers.to_string(),
                ));
            }
            response.set_header(Header::new("Access-Control-Max-Age", "3600"));
        }
    }
}

/// Exactly one `Host` header naming this machine by a loopback name or
/// one of `allowed` (the DNS-rebinding check, on every bind).
/// HTTP/2 (HTTPS) sends the name as `:authority` instead of `Host`;
/// Rocket's `host()` gives either.
fn host_is_allowed(request: &Request<'_>, allowed: &[String]) -> bool {
    if request.headers().get("Host").nth(1).is_some() {
        return false;
    }
    let Some(host) = request.host().map(ToString::to_string) else {
        return false;
    };
    let Some(name) = strip_port(&host) else {
        return false;
    };
    name.eq_ignore_ascii_case("localhost")
        || name == "127.0.0.1"
        || name == "[::1]"
        || allowed.iter().any(|known| name.eq_ignore_ascii_case(known))
}

/// `name` of `name[:port]`, `None` if the port is not a number.
fn strip_port(host: &str) -> Option<&str> {
    let (name, port) = if host.starts_with('[') {
        let end = host.find(']')? + 1;
        (&host[..end], host[end..].strip_prefix(':'))
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        }
    };
    match port {
        Some(port) if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) => None,
        _ => Some(name),
    }
}

/// The value of a header that must not be repeated; `Err` if it is.
fn single_header<'r>(request: &'r Request<'_>, name: &str) -> Result<Option<&'r str>, Rejection> {
    let mut values = request.headers().get(name);
    let first = values.next();
    if values.next().is_some() {
        return Err(Rejection::new(
            Status::BadRequest,
            format!("Repeated '{name}' header"),
        ));
    }
    Ok(first)
}

/// The decoded, non-empty path segments; dot segments are refused.
fn canonical_segments(request: &Request<'_>) -> Result<Vec<String>, Rejection> {
    let mut segments = Vec::new();
    for raw in request.uri().path().raw_segments() {
        if raw.is_empty() {
            continue;
        }
        let decoded = raw
            .percent_decode()
            .map_err(|_| Rejection::new(Status::BadRequest, "Invalid path: not UTF-8"))?;
        if decoded == "." || decoded == ".." {
            return Err(Rejection::new(
                Status::BadRequest,
                "Invalid path: '.' and '..' segments are not allowed",
            ));
        }
        segments.push(decoded.into_owned());
    }
    Ok(segments)
}

/// Refuses a query string that names a parameter twice: Rocket would read
/// such a parameter as absent, so `?start=x&start=y` would silently mean
/// no `start` at all.
fn no_repeated_parameters(request: &Request<'_>) -> Result<(), Rejection> {
    let Some(query) = request.uri().query() else {
        return Ok(());
    };
    // Queries have a few parameters: comparing each with those before it
    // costs no allocation on the heartbeat's path.
    for (index, (name, _)) in query.segments().enumerate() {
        if query
            .segments()
            .take(index)
            .any(|(earlier, _)| earlier == name)
        {
            return Err(Rejection::new(
                Status::BadRequest,
                format!("Query parameter '{name}' is given more than once"),
            ));
        }
    }
    Ok(())
}

/// `/seg/seg?query` with every segment percent-encoded.
fn canonical_uri(
    segments: &[String],
    trailing_slash: bool,
    query: Option<&str>,
) -> Option<Origin<'static>> {
    let mut text = String::new();
    for segment in segments {
        text.push('/');
        text.push_str(&encode_segment(segment));
    }
    if text.is_empty() || trailing_slash {
        text.push('/');
    }
    if let Some(query) = query {
        for pair in query
            .split('&')
            .filter(|pair| !is_credential_parameter(pair))
        {
            text.push(if text.contains('?') { '&' } else { '?' });
            text.push_str(pair);
        }
    }
    Origin::parse_owned(text).ok()
}

/// `token=…` or `api_key=…`: never read by a handler (credentials go in
/// a header), and dropped from the address so no log line shows them;
/// the dashboard's script reads `?token=` from the browser's address.
fn is_credential_parameter(pair: &str) -> bool {
    let name = pair.split_once('=').map_or(pair, |(name, _)| name);
    let name = percent_encoding::percent_decode_str(name).decode_utf8_lossy();
    name.eq_ignore_ascii_case("token") || name.eq_ignore_ascii_case("api_key")
}

/// Bytes a path segment keeps encoded: all but RFC 3986 unreserved
/// characters and the sub-delimiters that are plain data in a segment.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=')
    .remove(b':')
    .remove(b'@');

/// `segment` percent-encoded as one path segment.
fn encode_segment(segment: &str) -> String {
    utf8_percent_encode(segment, SEGMENT).to_string()
}

/// Paths under `/api/`, in any letter case (the router would not match
/// `/API/`, but the gate does not rely on that).
fn is_api(segments: &[String]) -> bool {
    segments
        .first()
        .is_some_and(|first| first.eq_ignore_ascii_case("api"))
}

/// Paths that need a credential when the server has one: the API's and
/// `/metrics` (what it says of the buckets and the server is a read), in
/// any letter case, also with more segments.
fn guarded(segments: &[String]) -> bool {
    is_api(segments)
        || segments
            .first()
            .is_some_and(|first| first.eq_ignore_ascii_case("metrics"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocket::http::RawStr;

    fn decode(raw: &str) -> String {
        RawStr::new(raw).percent_decode_lossy().into_owned()
    }

    #[test]
    fn ports_are_stripped_from_hosts() {
        assert_eq!(strip_port("localhost:5600"), Some("localhost"));
        assert_eq!(strip_port("127.0.0.1"), Some("127.0.0.1"));
        assert_eq!(strip_port("[::1]:5600"), Some("[::1]"));
        assert_eq!(strip_port("localhost:"), None);
        assert_eq!(strip_port("localhost:x"), None);
        assert_eq!(strip_port("[::1"), None);
    }

    #[test]
    fn segments_round_trip_through_encoding() {
        for segment in [
            "a b",
            "x/y",
            "ü☃",
            "%",
            "a?b#c",
            "semi;colon",
            "back\\slash",
        ] {
            assert_eq!(decode(&encode_segment(segment)), segment);
            assert!(!encode_segment(segment).contains('/'));
        }
        // Unreserved characters and sub-delimiters stay as they are.
        let plain = "aZ09-._~!$&'()*+,;=:@";
        assert_eq!(encode_segment(plain), plain);
        assert_eq!(encode_segment("a b/ü"), "a%20b%2F%C3%BC");
    }
}
