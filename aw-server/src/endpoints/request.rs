//! What the endpoints share to read a request and answer it: JSON bodies
//! within a limit, query parameters parsed strictly (a bad value is a 400,
//! never silently ignored), [`Empty`] answers, and [`blocking`], which
//! runs a datastore call off the async executor.

use aw_models::Timestamp;
use rocket::data::{ByteUnit, Data};
use rocket::http::Status;
use rocket::request::Request;
use rocket::response::{self, Responder, Response};
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// Largest JSON body of the ordinary endpoints. Bodies are parsed in memory,
/// so this bounds what one request can make the server allocate; bulk data
/// goes through the streaming import, which has its own limit.
pub const JSON_LIMIT: ByteUnit = ByteUnit::Mebibyte(64);

/// A response with a status and no body (200 on create, 201, 304).
#[derive(Debug, Clone, Copy)]
pub struct Empty(pub Status);

impl<'r> Responder<'r, 'static> for Empty {
    fn respond_to(self, _request: &'r Request<'_>) -> response::Result<'static> {
        // Rocket's own `Status` responder refuses 304; build it directly.
        Ok(Response::build().status(self.0).finalize())
    }
}

/// Reads and parses a JSON body of at most `limit` bytes. The content type
/// is not checked: clients that forget the header still work.
pub async fn read_json<T: DeserializeOwned>(
    data: Data<'_>,
    limit: ByteUnit,
) -> Result<T, ApiError> {
    let body = read_bytes(data, limit).await?;
    serde_json::from_slice(&body).map_err(|error| ApiError::from_json(&error))
}

/// [`read_json`] of at most [`JSON_LIMIT`] bytes for an endpoint whose body
/// is optional: an empty (or all-blank) body is `None`.
pub async fn read_optional_json<T: DeserializeOwned>(
    data: Data<'_>,
) -> Result<Option<T>, ApiError> {
    let body = read_bytes(data, JSON_LIMIT).await?;
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|error| ApiError::from_json(&error))
}

async fn read_bytes(data: Data<'_>, limit: ByteUnit) -> Result<Vec<u8>, ApiError> {
    let body =
        data.open(limit).into_bytes().await.map_err(|error| {
            ApiError::BadRequest(format!("Failed to read request body: {error}"))
        })?;
    if !body.is_complete() {
        return Err(ApiError::PayloadTooLarge(format!(
            "Request body is larger than the limit of {limit}"
        )));
    }
    Ok(body.into_inner())
}

/// Runs blocking work (a datastore call) on Rocket's blocking pool so the
/// async workers keep serving. A panic in `work` becomes a 500.
pub async fn blocking<T, F>(work: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ApiError> + Send + 'static,
{
    match rocket::tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(error) => Err(ApiError::Internal(format!(
            "Internal error while handling the request: {error}"
        ))),
    }
}

/// Parses an optional timestamp query parameter (`start`, `end`); bad
/// values are 400.
pub fn timestamp_param(name: &str, value: Option<&str>) -> Result<Option<Timestamp>, ApiError> {
    let Some(value) = value else {
        return Ok(None);
    };
    match Timestamp::parse(value) {
        Ok(timestamp) => Ok(Some(timestamp)),
        // A client that forgot to encode `+02:00` sends a space after form
        // decoding; the instant is still unambiguous.
        Err(error) => Timestamp::parse(&value.replace(' ', "+"))
            .map(Some)
            .map_err(|_| ApiError::BadRequest(format!("Invalid '{name}' parameter: {error}"))),
    }
}

/// Parses `limit`: absent, empty or `-1` mean no limit (aw-client and
/// aw-webui send `-1`); other negative or non-numeric values are 400 rather
/// than silently ignored.
pub fn limit_param(value: Option<&str>) -> Result<Option<usize>, ApiError> {
    match value.map(str::trim) {
        None | Some("") | Some("-1") => Ok(None),
        Some(text) => text.parse::<usize>().map(Some).map_err(|_| {
            ApiError::BadRequest(format!(
                "Invalid 'limit' parameter '{text}': expected a non-negative integer or -1"
            ))
        }),
    }
}

/// Parses a yes/no query parameter: absent is no; `true`/`1` and
/// `false`/`0` (any case); anything else is 400.
pub fn flag_param(name: &str, value: Option<&str>) -> Result<bool, ApiError> {
    match value
        .map(|text| text.trim().to_ascii_lowercase())
        .as_deref()
    {
        None | Some("false") | Some("0") => Ok(false),
        Some("true") | Some("1") | Some("") => Ok(true),
        Some(other) => Err(ApiError::BadRequest(format!(
            "Invalid '{name}' parameter '{other}': expected true or false"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_parameter_rules() {
        assert_eq!(limit_param(None).unwrap(), None);
        assert_eq!(limit_param(Some("-1")).unwrap(), None);
        assert_eq!(limit_param(Some("")).unwrap(), None);
        assert_eq!(limit_param(Some("0")).unwrap(), Some(0));
        assert_eq!(limit_param(Some("25")).unwrap(), Some(25));
        for bad in ["-2", "abc", "1.5", "99999999999999999999999"] {
            assert!(limit_param(Some(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn timestamp_parameter_tolerates_unencoded_plus() {
        let parsed = timestamp_param("start", Some("2021-06-01T12:00:00 02:00")).unwrap();
        assert_eq!(parsed.unwrap().to_string(), "2021-06-01T10:00:00Z");
        assert!(timestamp_param("start", Some("yesterday")).is_err());
        assert!(timestamp_param("start", Some("2021-06-01T10:00:00")).is_err());
        assert_eq!(timestamp_param("start", None).unwrap(), None);
    }

    #[test]
    fn flags_are_true_false_or_refused() {
        assert!(!flag_param("dry_run", None).unwrap());
        for yes in ["true", "1", "TRUE", ""] {
            assert!(flag_param("dry_run", Some(yes)).unwrap(), "{yes}");
        }
        for no in ["false", "0"] {
            assert!(!flag_param("dry_run", Some(no)).unwrap(), "{no}");
        }
        assert!(flag_param("dry_run", Some("maybe")).is_err());
    }
}
