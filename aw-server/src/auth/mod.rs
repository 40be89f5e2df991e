//! Who a request comes from, and what it may do (`docs/API.md` §9.4).
//!
//! Credentials are the config's `[auth] api_key` (an admin credential, as
//! in aw-server-rust) and the API tokens stored in the database, each
//! with a scope: read, write (to the buckets of its hosts) or admin. Once
//! either exists, every `/api/` request but `GET /api/0/info` needs one,
//! as `Authorization: Bearer <token>` or as the password of HTTP Basic;
//! never in the address. The gate (`security.rs`) asks [`Auth`] for the
//! request's [`Access`] and refuses what [`Access::refusal`] says it may
//! not do; the handlers that list, create or re-host buckets narrow a
//! write token further ([`Access::may_write_host`]).
//!
//! Only the SHA-256 of a token is stored, in the file, so tokens move
//! with it; the table here is a copy, replaced whenever the API changes
//! it, looked up by hash, so checking a token costs a hash and a map
//! lookup. "Last used" is written at most once a minute per token, off
//! the request's path.

pub mod limit;
pub mod rules;

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use aw_datastore::{Datastore, StoredToken};
use aw_models::{AccessInfo, AccessScope, CreatedToken, NewToken, Scope, Timestamp, TokenInfo};
use base64::Engine;
use sha2::{Digest, Sha256};

pub use limit::{FailedAuth, IpRange};
pub use rules::Need;

/// The prefix of every token this server makes (recognisable in a
/// config file or a leak scanner).
pub const TOKEN_PREFIX: &str = "awt_";
/// How often "last used" is written per token.
const LAST_USED_STEP: i64 = 60 * 1_000_000_000;
/// How long a bucket's host is remembered for the write-token check
/// (the handlers that change hosts forget it at once).
const HOST_MEMORY: Duration = Duration::from_secs(60);

/// What a request may do.
#[derive(Debug, Clone)]
pub enum Access {
    /// The server has no credentials: everything, as aw-server-rust.
    Open,
    /// The config's API key: everything.
    Key,
    /// A stored token, within its scope.
    Token(Arc<KnownToken>),
}

impl Access {
    /// Whether this caller may write buckets of `hostname` (creation,
    /// heartbeats, inserts, a new hostname): admin, or a write token
    /// naming it.
    pub fn may_write_host(&self, hostname: &str) -> bool {
        match self {
            Access::Open | Access::Key => true,
            Access::Token(token) => match token.info.scope {
                Scope::Admin => true,
                Scope::Read => false,
                Scope::Write => token.covers.iter().any(|host| host == hostname),
            },
        }
    }

    /// Whether the bucket listing shows a bucket of `hostname`: all but
    /// for a write token, which sees its hosts' buckets only.
    pub fn may_see_host(&self, hostname: &str) -> bool {
        match self {
            Access::Token(token) if token.info.scope == Scope::Write => {
                token.covers.iter().any(|host| host == hostname)
            }
            _ => true,
        }
    }

    /// Why an access does not reach what a request needs; `None` when it does
    /// (for a bucket need, as far as the scope tells: the bucket's host is
    /// checked after).
    pub fn refusal(&self, need: &Need) -> Option<String> {
        let scope = match self {
            Access::Open | Access::Key => return None,
            Access::Token(token) => token.info.scope,
        };
        let allowed = match need {
            Need::Nothing | Need::Identity => true,
            Need::Read | Need::Metrics => scope != Scope::Write,
            Need::BucketList | Need::ReadBucket(_) => true,
            Need::WriteBucket(_) | Need::Forward => scope != Scope::Read,
            Need::Admin | Need::Users => scope == Scope::Admin,
        };
        if allowed {
            return None;
        }
        Some(match (scope, need) {
            (Scope::Read, Need::Forward) => {
                "Forwarding needs a write token for the device's hosts or an admin token; \
                 this token may only read"
                    .to_string()
            }
            (Scope::Read, Need::WriteBucket(_)) => {
                "This needs a write token for the bucket's host or an admin token; \
                 this token may only read"
                    .to_string()
            }
            (Scope::Write, Need::Read) => "This needs a read or admin token; a write token \
                                           reaches only its hosts' buckets"
                .to_string(),
            _ => format!("This needs an admin token; this token's scope is {scope}"),
        })
    }

    /// The answer of `GET /api/0/access`.
    pub fn describe(&self) -> AccessInfo {
        match self {
            Access::Open => AccessInfo {
                authenticated: false,
                scope: AccessScope::Admin,
                name: None,
                hosts: Vec::new(),
                user: None,
            },
            Access::Key => AccessInfo {
                authenticated: true,
                scope: AccessScope::Admin,
                name: None,
                hosts: Vec::new(),
                user: None,
            },
            Access::Token(token) => AccessInfo {
                authenticated: true,
                scope: token.info.scope.into(),
                name: Some(token.info.name.clone()),
                hosts: token.info.hosts.clone(),
                user: None,
            },
        }
    }

    /// Who, for a log line: never the secret.
    pub fn who(&self) -> String {
        match self {
            Access::Open => "anyone".to_string(),
            Access::Key => "the API key".to_string(),
            Access::Token(token) => format!("token '{}'", token.info.name),
        }
    }
}

/// A stored token as the table holds it.
#[derive(Debug)]
pub struct KnownToken {
    /// Its listing.
    pub info: TokenInfo,
    /// The hosts its buckets may have: its own and their aliases'
    /// (`aw_hosts::covered_hosts`).
    pub covers: Vec<String>,
    /// When a use was last recorded (nanoseconds), to write "last used"
    /// once a minute.
    recorded: AtomicI64,
}

/// Why a request is not authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// No `Authorization` header.
    Missing,
    /// A header that is no Bearer or Basic credential, or several.
    Malformed,
    /// A credential nobody has.
    Unknown,
    /// A token past its expiry.
    Expired,
    /// The credential's person's data could not be opened.
    Unavailable,
    /// The token names a person this server does not hold (another node
    /// behind the same proxy does, or did: a stale route).
    Misdirected,
    /// The credential's person is being moved to another node.
    Moving,
}

impl Failure {
    /// The log's words (never the credential).
    pub fn as_str(self) -> &'static str {
        match self {
            Failure::Missing => "no credential",
            Failure::Malformed => "a malformed Authorization header",
            Failure::Unknown => "an unknown key or token",
            Failure::Expired => "an expired token",
            Failure::Unavailable => "a person's data that could not be opened",
            Failure::Misdirected => "a token of a person this node does not hold",
            Failure::Moving => "a person's data being moved",
        }
    }
}

/// The credentials, the bucket hosts the write-token check remembers and
/// the failure limit; one per server, shared by the gate and the
/// handlers.
#[derive(Debug)]
pub struct Auth {
    /// The file whose tokens these are; `None` for the server
    /// administrator's key alone (a server that hosts several people).
    datastore: Option<Datastore>,
    api_key: Option<String>,
    tokens: RwLock<HashMap<[u8; 32], Arc<KnownToken>>>,
    /// Whether `tokens` has any, read on every request without the lock.
    any_token: AtomicBool,
    /// Held while the table is read from the store and replaced, so two
    /// changes at once cannot leave the older reading in place.
    reloading: Mutex<()>,
    hosts: RwLock<HashMap<String, (String, Instant)>>,
    /// Failures per client address.
    pub failures: FailedAuth,
    /// Proxies whose `X-Forwarded-For` is believed.
    pub trusted_proxies: Vec<IpRange>,
}

impl Auth {
    /// Loads the stored tokens of `datastore`.
    pub fn load(
        datastore: Datastore,
        api_key: Option<String>,
        trusted_proxies: Vec<IpRange>,
    ) -> Result<Auth, aw_datastore::DatastoreError> {
        let auth = Auth {
            datastore: Some(datastore),
            ..Auth::key_only(api_key, trusted_proxies)
        };
        auth.reload()?;
        Ok(auth)
    }

    /// The config's API key alone, without a file (the server
    /// administrator of a server that hosts several people).
    pub fn key_only(api_key: Option<String>, trusted_proxies: Vec<IpRange>) -> Auth {
        Auth {
            datastore: None,
            api_key: api_key.filter(|key| !key.is_empty()),
            tokens: RwLock::default(),
            any_token: AtomicBool::new(false),
            reloading: Mutex::new(()),
            hosts: RwLock::default(),
            failures: FailedAuth::default(),
            trusted_proxies,
        }
    }

    fn store(&self) -> Result<&Datastore, aw_datastore::DatastoreError> {
        self.datastore.as_ref().ok_or_else(|| {
            aw_datastore::DatastoreError::InvalidInput(
                "the server administrator has no tokens of its own: each person's are theirs"
                    .to_string(),
            )
        })
    }

    /// Whether any credential exists: then every `/api/` request but
    /// `GET /api/0/info` needs one.
    pub fn required(&self) -> bool {
        self.api_key.is_some() || self.any_token.load(Ordering::Acquire)
    }

    /// The access the `Authorization` headers give, at `now`.
    pub fn authenticate<'a>(
        &self,
        mut headers: impl Iterator<Item = &'a str>,
        now: Timestamp,
    ) -> Result<Access, Failure> {
        let secret = secret(&mut headers)?;
        if let Some(key) = &self.api_key {
            if subtle::ConstantTimeEq::ct_eq(secret.as_bytes(), key.as_bytes()).into() {
                return Ok(Access::Key);
            }
        }
        let token = self
            .read_tokens()
            .get(&hash(&secret))
            .cloned()
            .ok_or(Failure::Unknown)?;
        if token.info.expired(now) {
            return Err(Failure::Expired);
        }
        self.note_use(&token, now);
        Ok(Access::Token(token))
    }

    /// Every token, as listed (the stored "last used", to the minute).
    pub fn list(&self) -> Result<Vec<TokenInfo>, aw_datastore::DatastoreError> {
        list_tokens(self.store()?)
    }

    /// Makes a token; `Ok(None)` when the name is taken.
    pub fn add(
        &self,
        request: &NewToken,
        now: Timestamp,
    ) -> Result<Option<CreatedToken>, AddError> {
        let made = make_token(self.store()?, request, self.api_key.is_some(), now)?;
        if made.is_some() {
            self.reload()?;
        }
        Ok(made)
    }

    /// Revokes a token; false when there is none of that name. The next
    /// request with it is refused.
    pub fn revoke(&self, name: &str) -> Result<bool, aw_datastore::DatastoreError> {
        let removed = self.store()?.remove_token(name)?;
        if removed {
            self.reload()?;
        }
        Ok(removed)
    }

    /// The hostname of bucket `id` for the write-token check, `None` when
    /// there is no such bucket (not remembered: it may be created next).
    pub async fn bucket_host(
        &self,
        id: &str,
    ) -> Result<Option<String>, aw_datastore::DatastoreError> {
        if let Some((host, when)) = self.read_hosts().get(id) {
            if when.elapsed() < HOST_MEMORY {
                return Ok(Some(host.clone()));
            }
        }
        let Some(datastore) = &self.datastore else {
            return Ok(None);
        };
        match datastore.bucket(id).await {
            Ok(bucket) => {
                let mut hosts = self.hosts.write().unwrap_or_else(|e| e.into_inner());
                if hosts.len() > 10_000 {
                    hosts.clear();
                }
                hosts.insert(id.to_string(), (bucket.hostname.clone(), Instant::now()));
                Ok(Some(bucket.hostname))
            }
            Err(aw_datastore::DatastoreError::NoSuchBucket(_)) => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// Hosts were renamed, merged or aliased: the tokens' hosts cover the
    /// new aliases, and no bucket's old host is remembered.
    pub fn hosts_changed(&self) -> Result<(), aw_datastore::DatastoreError> {
        self.forget_hosts();
        self.reload()
    }

    /// Forgets every remembered bucket host: a handler deleted or
    /// re-hosted a bucket.
    pub fn forget_hosts(&self) {
        self.hosts
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// The client of a request from `peer` (see [`limit::client_address`]).
    pub fn client(&self, peer: Option<IpAddr>, forwarded_for: &[&str]) -> Option<IpAddr> {
        limit::client_address(peer, forwarded_for, &self.trusted_proxies)
    }

    fn reload(&self) -> Result<(), aw_datastore::DatastoreError> {
        let Some(datastore) = &self.datastore else {
            return Ok(());
        };
        let _one_at_a_time = self.reloading.lock().unwrap_or_else(|e| e.into_inner());
        let now = Timestamp::now().nanos();
        // A token kept across the reload keeps its in-memory mark.
        let marks: HashMap<String, i64> = self
            .read_tokens()
            .values()
            .map(|known| {
                let mark = known.recorded.load(Ordering::Relaxed);
                (known.info.name.clone(), mark)
            })
            .collect();
        let aliases = datastore.host_aliases()?;
        let table = datastore
            .tokens()?
            .into_iter()
            .filter_map(|stored| {
                let digest = from_hex(&stored.hash)?;
                let stored_mark = stored.info.last_used.map_or(i64::MIN, |t| t.nanos());
                let recorded = marks
                    .get(&stored.info.name)
                    .map_or(stored_mark, |&mark| mark.max(stored_mark))
                    .min(now);
                Some((
                    digest,
                    Arc::new(KnownToken {
                        covers: aw_hosts::covered_hosts(&stored.info.hosts, &aliases),
                        info: stored.info,
                        recorded: AtomicI64::new(recorded),
                    }),
                ))
            })
            .collect();
        let mut tokens = self.tokens.write().unwrap_or_else(|e| e.into_inner());
        *tokens = table;
        self.any_token.store(!tokens.is_empty(), Ordering::Release);
        Ok(())
    }

    /// Records a use at most once a [`LAST_USED_STEP`] per token, on the
    /// blocking pool (never on the request's path).
    fn note_use(&self, token: &Arc<KnownToken>, now: Timestamp) {
        let last = token.recorded.load(Ordering::Relaxed);
        if now.nanos().saturating_sub(last) < LAST_USED_STEP {
            return;
        }
        if token
            .recorded
            .compare_exchange(last, now.nanos(), Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return;
        }
        let Some(datastore) = self.datastore.clone() else {
            return;
        };
        let name = token.info.name.clone();
        let write = move || {
            if let Err(error) = datastore.touch_tokens(vec![(name, now)]) {
                log::warn!("Could not record when a token was last used: {error}");
            }
        };
        match rocket::tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(write)),
            Err(_) => write(),
        }
    }

    fn read_tokens(&self) -> std::sync::RwLockReadGuard<'_, HashMap<[u8; 32], Arc<KnownToken>>> {
        self.tokens.read().unwrap_or_else(|e| e.into_inner())
    }

    fn read_hosts(&self) -> std::sync::RwLockReadGuard<'_, HashMap<String, (String, Instant)>> {
        self.hosts.read().unwrap_or_else(|e| e.into_inner())
    }
}

/// Why a token cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum AddError {
    /// The request is invalid.
    #[error("{0}")]
    Invalid(#[from] aw_models::ModelError),
    /// Storing failed.
    #[error("{0}")]
    Store(#[from] aw_datastore::DatastoreError),
    /// No admin credential exists and the token asked for is not one:
    /// made first, it would lock the owner out.
    #[error(
        "the first credential must be an admin token: with only a {0} token nothing could \
         make or revoke tokens (and every client without a credential would be refused). Make \
         an admin token first: aw-server token add NAME --scope admin"
    )]
    NoAdminYet(Scope),
}

/// Every token of `datastore` (a served one through [`Auth`], or a file
/// no server holds), by name.
pub fn list_tokens(datastore: &Datastore) -> Result<Vec<TokenInfo>, aw_datastore::DatastoreError> {
    let mut tokens: Vec<TokenInfo> = datastore
        .tokens()?
        .into_iter()
        .map(|stored| stored.info)
        .collect();
    tokens.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(tokens)
}

/// Makes and stores a token in `datastore` (a served one through [`Auth`],
/// or a file no server holds); `Ok(None)` when the name is taken. While
/// no admin credential exists (`api_key`: whether one is configured; no
/// admin token that has not expired), only an admin token is made.
pub fn make_token(
    datastore: &Datastore,
    request: &NewToken,
    api_key: bool,
    now: Timestamp,
) -> Result<Option<CreatedToken>, AddError> {
    let expires = request.validate(now)?;
    if request.scope != Scope::Admin && !api_key {
        let admin = datastore.tokens()?.iter().any(|stored| {
            stored.info.scope == Scope::Admin
                && stored.info.expires.is_none_or(|expires| expires > now)
        });
        if !admin {
            return Err(AddError::NoAdminYet(request.scope));
        }
    }
    // Whole seconds: the listing shows what was stored.
    let created = Timestamp::from_nanos(now.nanos() - now.nanos().rem_euclid(1_000_000_000));
    let secret =
        new_secret(datastore.owner()?.as_deref()).map_err(aw_datastore::DatastoreError::Io)?;
    let info = TokenInfo {
        name: request.name.clone(),
        scope: request.scope,
        hosts: request.hosts.clone(),
        created,
        last_used: None,
        expires,
    };
    let stored = StoredToken {
        info: info.clone(),
        hash: to_hex(&hash(&secret)),
    };
    if !datastore.add_token(stored)? {
        return Ok(None);
    }
    Ok(Some(CreatedToken {
        token: secret,
        info,
    }))
}

/// Makes the first admin token of a new person `user`, `<user>-admin`,
/// in their file (`aw_users::Users::add`); answers its secret.
pub fn first_admin_token(user: &str) -> impl FnOnce(&Datastore) -> Result<String, String> + '_ {
    move |datastore| {
        let request = NewToken {
            name: format!("{user}-admin"),
            scope: Scope::Admin,
            hosts: Vec::new(),
            expires: None,
        };
        match make_token(datastore, &request, false, Timestamp::now()) {
            Ok(Some(created)) => Ok(created.token),
            Ok(None) => Err("the first token's name was taken".to_string()),
            Err(error) => Err(error.to_string()),
        }
    }
}

/// The secret of the one `Authorization` header of a request.
pub fn secret<'a>(mut headers: impl Iterator<Item = &'a str>) -> Result<String, Failure> {
    let (header, None) = (headers.next(), headers.next()) else {
        return Err(Failure::Malformed);
    };
    credential(header.ok_or(Failure::Missing)?).ok_or(Failure::Malformed)
}

/// How a token's secret is stored and indexed: its SHA-256, in hex.
pub fn token_hash(secret: &str) -> String {
    to_hex(&hash(secret))
}

/// A new secret: [`TOKEN_PREFIX`], the person whose file it is in and a
/// dot when it has one (`awt_alice.…`: what a proxy in front of several
/// servers routes by, [`person_of`]), and 256 random bits from the
/// system, in hex.
fn new_secret(owner: Option<&str>) -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(std::io::Error::other)?;
    let person = owner.map(|name| format!("{name}.")).unwrap_or_default();
    Ok(format!("{TOKEN_PREFIX}{person}{}", to_hex(&bytes)))
}

/// The person a token's secret names (`awt_<name>.<hex>`), if it names
/// one: only a valid person's name counts.
pub fn person_of(secret: &str) -> Option<&str> {
    let (name, _) = secret.strip_prefix(TOKEN_PREFIX)?.split_once('.')?;
    aw_users::check_name(name).is_ok().then_some(name)
}

/// The secret of an `Authorization` header: Bearer's, or Basic's password
/// (its user name when the password is empty).
fn credential(header: &str) -> Option<String> {
    // RFC 7235: the scheme is read in any letter case, then one or more
    // spaces.
    let (scheme, rest) = header.split_once(' ')?;
    let rest = rest.trim_start_matches(' ');
    if scheme.eq_ignore_ascii_case("Bearer") {
        return (!rest.is_empty()).then(|| rest.to_string());
    }
    if !scheme.eq_ignore_ascii_case("Basic") {
        return None;
    }
    let encoded = rest;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, password) = text.split_once(':')?;
    let secret = if password.is_empty() { user } else { password };
    (!secret.is_empty()).then(|| secret.to_string())
}

fn hash(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn from_hex(text: &str) -> Option<[u8; 32]> {
    if text.len() != 64 {
        return None;
    }
    let mut bytes = [0u8; 32];
    for (index, byte) in bytes.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(index * 2..index * 2 + 2)?, 16).ok()?;
    }
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_names_its_person_only_in_the_prefix_and_only_by_a_valid_name() {
        let hex = "ab".repeat(32);
        assert_eq!(person_of(&format!("awt_alice.{hex}")), Some("alice"));
        assert_eq!(person_of(&format!("awt_bob-2_x.{hex}")), Some("bob-2_x"));
        for none in [
            format!("awt_{hex}"),
            format!("awt_Alice.{hex}"),
            format!("awt_../x.{hex}"),
            format!("awt_.{hex}"),
            format!("xyz_alice.{hex}"),
            "the-hub-key".to_string(),
        ] {
            assert_eq!(person_of(&none), None, "{none}");
        }
        let secret = new_secret(Some("alice")).unwrap();
        assert_eq!(person_of(&secret), Some("alice"));
        assert_eq!(secret.len(), "awt_alice.".len() + 64);
        assert_eq!(person_of(&new_secret(None).unwrap()), None);
    }

    #[test]
    fn credentials_come_from_bearer_or_basic() {
        assert_eq!(credential("Bearer abc").as_deref(), Some("abc"));
        assert_eq!(credential("Bearer "), None);
        // The scheme in any case, then one or more spaces (RFC 7235).
        assert_eq!(credential("bearer abc").as_deref(), Some("abc"));
        assert_eq!(credential("BEARER  abc").as_deref(), Some("abc"));
        assert_eq!(credential("basic OmF3dF94").as_deref(), Some("awt_x"));
        assert_eq!(credential("Bearerabc"), None);
        assert_eq!(credential("Token abc"), None);
        // "watcher:awt_x" and ":awt_x" and "awt_x:".
        assert_eq!(
            credential("Basic d2F0Y2hlcjphd3RfeA==").as_deref(),
            Some("awt_x")
        );
        assert_eq!(credential("Basic OmF3dF94").as_deref(), Some("awt_x"));
        assert_eq!(credential("Basic YXd0X3g6").as_deref(), Some("awt_x"));
        assert_eq!(credential("Basic !!!"), None);
        assert_eq!(credential("Basic Og=="), None);
        assert_eq!(credential("abc"), None);
    }

    #[test]
    fn secrets_are_long_random_and_hashed_in_hex() {
        let one = new_secret(None).unwrap();
        let two = new_secret(None).unwrap();
        assert_ne!(one, two);
        assert!(one.starts_with(TOKEN_PREFIX));
        assert_eq!(one.len(), TOKEN_PREFIX.len() + 64);
        let digest = hash(&one);
        assert_eq!(from_hex(&to_hex(&digest)), Some(digest));
        assert_eq!(from_hex("zz"), None);
    }
}
