//! API tokens (`docs/API.md` §9.4): what a token may do, and the shapes of
//! `/api/0/tokens`. The secret itself is never part of these types but
//! [`CreatedToken`], answered once when a token is made.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::{ModelError, Timestamp};

/// The longest token name.
pub const MAX_TOKEN_NAME: usize = 64;
/// The most hosts one write token may name.
pub const MAX_TOKEN_HOSTS: usize = 64;

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Every read, queries and exports: dashboards, scripts, reports.
    Read,
    /// A watcher's writes, to the buckets of the token's hosts only.
    Write,
    /// Everything, tokens included.
    Admin,
}

impl Scope {
    /// The scope's name on the wire and the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
            Scope::Admin => "admin",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Scope {
    type Err = ModelError;

    fn from_str(text: &str) -> Result<Scope, ModelError> {
        match text {
            "read" => Ok(Scope::Read),
            "write" => Ok(Scope::Write),
            "admin" => Ok(Scope::Admin),
            other => Err(ModelError::InvalidToken(format!(
                "unknown scope '{other}': expected read, write or admin"
            ))),
        }
    }
}

/// A stored token as listed: everything but the secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenInfo {
    /// Unique name, chosen by the user (`check_token_name`).
    pub name: String,
    /// What the token may do.
    pub scope: Scope,
    /// For a write token, the bucket hostnames it may write; else empty.
    #[serde(default)]
    pub hosts: Vec<String>,
    /// When it was made.
    pub created: Timestamp,
    /// When it last authenticated a request, to the minute; `None` if never.
    #[serde(default)]
    pub last_used: Option<Timestamp>,
    /// From when it is refused; `None`: never.
    #[serde(default)]
    pub expires: Option<Timestamp>,
}

impl TokenInfo {
    /// Whether the token is past its expiry at `now`.
    pub fn expired(&self, now: Timestamp) -> bool {
        self.expires.is_some_and(|expires| now >= expires)
    }
}

/// The body of `POST /api/0/tokens`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NewToken {
    /// The name (`check_token_name`).
    pub name: String,
    /// The scope.
    pub scope: Scope,
    /// The hosts of a write token; none for the other scopes.
    #[serde(default)]
    pub hosts: Vec<String>,
    /// `YYYY-MM-DD` (midnight UTC that day) or RFC 3339; absent: never.
    #[serde(default)]
    pub expires: Option<String>,
}

impl NewToken {
    /// Checks the request and reads its expiry; `now` is when it is made.
    pub fn validate(&self, now: Timestamp) -> Result<Option<Timestamp>, ModelError> {
        check_token_name(&self.name)?;
        match (self.scope, self.hosts.is_empty()) {
            (Scope::Write, true) => {
                return Err(ModelError::InvalidToken(
                    "a write token needs at least one host: the hostname of the buckets \
                     it may write"
                        .into(),
                ))
            }
            (Scope::Read | Scope::Admin, false) => {
                return Err(ModelError::InvalidToken(format!(
                    "hosts are only for write tokens; a {} token reaches every bucket",
                    self.scope
                )))
            }
            _ => {}
        }
        if self.hosts.len() > MAX_TOKEN_HOSTS {
            return Err(ModelError::InvalidToken(format!(
                "at most {MAX_TOKEN_HOSTS} hosts per token"
            )));
        }
        for host in &self.hosts {
            if host.is_empty() || host.len() > 1000 || host.chars().any(char::is_control) {
                return Err(ModelError::InvalidToken(format!(
                    "invalid host {host:?}: 1 to 1000 bytes without control characters"
                )));
            }
        }
        let Some(text) = self.expires.as_deref() else {
            return Ok(None);
        };
        let expires = parse_expiry(text)?;
        if expires <= now {
            return Err(ModelError::InvalidToken(format!(
                "expiry '{text}' is not in the future"
            )));
        }
        Ok(Some(expires))
    }
}

/// `YYYY-MM-DD` (midnight UTC of that day) or an RFC 3339 timestamp.
pub fn parse_expiry(text: &str) -> Result<Timestamp, ModelError> {
    if let Ok(date) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        let midnight = date.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc();
        return Timestamp::from_datetime(midnight);
    }
    Timestamp::parse(text).map_err(|_| {
        ModelError::InvalidToken(format!(
            "invalid expiry '{text}': expected YYYY-MM-DD or an RFC 3339 timestamp"
        ))
    })
}

/// The answer to `POST /api/0/tokens`: the listing's fields and, this once,
/// the token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreatedToken {
    /// The secret; only its hash is stored.
    pub token: String,
    /// What is stored.
    #[serde(flatten)]
    pub info: TokenInfo,
}

/// What `GET /api/0/access` says a caller may do: a token's scope, or
/// `server`, the server administrator of a server that hosts several
/// people (the config's API key there), which manages people and reads
/// none of their data. Never a token's scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AccessScope {
    /// As [`Scope::Read`].
    Read,
    /// As [`Scope::Write`].
    Write,
    /// As [`Scope::Admin`].
    Admin,
    /// The server administrator of a server that hosts several people.
    Server,
}

impl From<Scope> for AccessScope {
    fn from(scope: Scope) -> AccessScope {
        match scope {
            Scope::Read => AccessScope::Read,
            Scope::Write => AccessScope::Write,
            Scope::Admin => AccessScope::Admin,
        }
    }
}

/// The answer to `GET /api/0/access`: who the caller is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessInfo {
    /// False when the server has no credentials at all (everything open).
    pub authenticated: bool,
    /// What the caller may do.
    pub scope: AccessScope,
    /// The token's name; `None` for the API key or an open server.
    pub name: Option<String>,
    /// A write token's hosts.
    pub hosts: Vec<String>,
    /// The person whose data the caller reaches, on a server that hosts
    /// several people; absent elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
}

/// A name is 1 to [`MAX_TOKEN_NAME`] of `A-Z a-z 0-9 . _ -`: it appears in
/// paths, logs and the command line as it is.
pub fn check_token_name(name: &str) -> Result<(), ModelError> {
    let fine = !name.is_empty()
        && name.len() <= MAX_TOKEN_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if fine {
        Ok(())
    } else {
        Err(ModelError::InvalidToken(format!(
            "invalid token name {name:?}: 1 to {MAX_TOKEN_NAME} of A-Z, a-z, 0-9, '.', '_', '-'"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new(scope: Scope, hosts: &[&str], expires: Option<&str>) -> NewToken {
        NewToken {
            name: "laptop".into(),
            scope,
            hosts: hosts.iter().map(|h| h.to_string()).collect(),
            expires: expires.map(str::to_string),
        }
    }

    #[test]
    fn names_are_plain() {
        assert!(check_token_name("laptop-watchers_2.0").is_ok());
        for bad in ["", "a b", "a/b", "ü", &"x".repeat(65)] {
            assert!(check_token_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn hosts_belong_to_write_tokens() {
        let now = Timestamp::parse("2026-01-01T00:00:00Z").unwrap();
        assert!(new(Scope::Write, &["a"], None).validate(now).is_ok());
        assert!(new(Scope::Write, &[], None).validate(now).is_err());
        assert!(new(Scope::Read, &["a"], None).validate(now).is_err());
        assert!(new(Scope::Admin, &[], None).validate(now).is_ok());
        assert!(new(Scope::Write, &[""], None).validate(now).is_err());
    }

    #[test]
    fn expiry_is_a_future_date_or_time() {
        let now = Timestamp::parse("2026-01-01T00:00:00Z").unwrap();
        let date = new(Scope::Read, &[], Some("2026-03-01")).validate(now);
        assert_eq!(
            date.unwrap(),
            Some(Timestamp::parse("2026-03-01T00:00:00Z").unwrap())
        );
        assert!(new(Scope::Read, &[], Some("2026-03-01T12:00:00+02:00"))
            .validate(now)
            .is_ok());
        assert!(new(Scope::Read, &[], Some("2025-12-31"))
            .validate(now)
            .is_err());
        assert!(new(Scope::Read, &[], Some("soon")).validate(now).is_err());
    }

    #[test]
    fn scopes_read_and_write_their_names() {
        for scope in [Scope::Read, Scope::Write, Scope::Admin] {
            assert_eq!(scope.as_str().parse::<Scope>().unwrap(), scope);
        }
        assert!("root".parse::<Scope>().is_err());
    }
}
