//! The one error type of the HTTP layer and its mapping to status codes.
//!
//! Every error response of the server, whether produced by a handler, by the
//! security gate or by Rocket itself (through the catchers in `lib.rs`), has
//! a JSON body `{"message": ...}`. Handlers return `Result<_, ApiError>` and
//! use `?`; the table in [`ApiError::status`] is the only place that knows
//! which failure becomes which status.

use std::io::Cursor;

use aw_datastore::DatastoreError;
use aw_query::QueryError;
use rocket::http::{ContentType, Status};
use rocket::request::Request;
use rocket::response::{self, Responder, Response};

/// A failed request, as the client will see it.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The request is malformed: bad JSON syntax, a bad query parameter.
    #[error("{0}")]
    BadRequest(String),
    /// The body is well-formed JSON of the wrong shape (missing field, wrong
    /// type, a value out of range).
    #[error("{0}")]
    Unprocessable(String),
    /// The caller's token may not do this (its scope or hosts).
    #[error("{0}")]
    Forbidden(String),
    /// 403: the caller's token may not write this bucket's host, though
    /// it may do the rest (forwarding tells the two apart: the body has
    /// `"refused": "bucket"`).
    #[error("{0}")]
    ForbiddenBucket(String),
    /// The resource does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The request conflicts with the server's state or configuration.
    #[error("{0}")]
    Conflict(String),
    /// The body is larger than the limit of the endpoint.
    #[error("{0}")]
    PayloadTooLarge(String),
    /// 412: the resource changed since the client read it (`If-Match`).
    #[error("{0}")]
    PreconditionFailed(String),
    /// Something broke on our side; the message is logged too.
    #[error("{0}")]
    Internal(String),
    /// 502: another server this one relies on (a hub) failed or refused.
    #[error("{0}")]
    BadGateway(String),
    /// 503: what the request needs cannot be had just now (a person's
    /// file while every open one is busy); the client may retry.
    #[error("{0}")]
    Unavailable(String),
    /// A storage failure or a refusal of the datastore.
    #[error(transparent)]
    Datastore(#[from] DatastoreError),
    /// The query program failed (syntax, types, missing bucket...).
    #[error(transparent)]
    Query(#[from] QueryError),
}

impl ApiError {
    /// The HTTP status of this error.
    pub fn status(&self) -> Status {
        match self {
            ApiError::BadRequest(_) => Status::BadRequest,
            ApiError::Unprocessable(_) => Status::UnprocessableEntity,
            ApiError::Forbidden(_) | ApiError::ForbiddenBucket(_) => Status::Forbidden,
            ApiError::NotFound(_) => Status::NotFound,
            ApiError::Conflict(_) => Status::Conflict,
            ApiError::PayloadTooLarge(_) => Status::PayloadTooLarge,
            ApiError::PreconditionFailed(_) => Status::PreconditionFailed,
            ApiError::Internal(_) => Status::InternalServerError,
            ApiError::BadGateway(_) => Status::BadGateway,
            ApiError::Unavailable(_) => Status::ServiceUnavailable,
            ApiError::Datastore(error) => match error {
                DatastoreError::NoSuchBucket(_) | DatastoreError::NoSuchEvent { .. } => {
                    Status::NotFound
                }
                // Create answers 304 itself; anywhere else a clash is the
                // client's doing.
                DatastoreError::BucketExists(_) => Status::Conflict,
                DatastoreError::InvalidInput(_) => Status::BadRequest,
                // The store is shutting down: the client may retry later.
                DatastoreError::Closed => Status::ServiceUnavailable,
                // The disk is full: nothing was stored; space brings it back.
                error if error.is_disk_full() => Status::InsufficientStorage,
                // Storage and I/O failures, a too-new schema, and any
                // failure kind added later: ours, not the client's.
                _ => Status::InternalServerError,
            },
            // The anchor answers 500 here (`docs/API.md` §12 B-7); a failed query is
            // the client's program, so 400, unless storage failed under it.
            ApiError::Query(error) => match error.kind {
                aw_query::ErrorKind::Source => Status::InternalServerError,
                _ => Status::BadRequest,
            },
        }
    }

    /// Classifies a JSON body error: broken syntax or a truncated body is a
    /// bad request (400), a well-formed body of the wrong shape is 422, as
    /// the anchor answers.
    pub fn from_json(error: &serde_json::Error) -> ApiError {
        use serde_json::error::Category;
        match error.classify() {
            Category::Data => ApiError::Unprocessable(format!("Invalid request body: {error}")),
            Category::Syntax | Category::Eof => {
                ApiError::BadRequest(format!("Malformed JSON: {error}"))
            }
            Category::Io => ApiError::BadRequest(format!("Failed to read request body: {error}")),
        }
    }
}

impl From<aw_transfer::TransferError> for ApiError {
    fn from(error: aw_transfer::TransferError) -> ApiError {
        use aw_transfer::TransferError;
        match error {
            TransferError::Malformed(message) => ApiError::BadRequest(message),
            TransferError::Invalid(message) => ApiError::Unprocessable(message),
            TransferError::Failed(message) => ApiError::Internal(message),
            TransferError::Store(error) => ApiError::Datastore(error),
        }
    }
}

impl From<aw_jobs::sync::SyncError> for ApiError {
    fn from(error: aw_jobs::sync::SyncError) -> ApiError {
        use aw_folder_sync::FolderSyncError;
        use aw_jobs::sync::SyncError;
        match error {
            SyncError::Folder(message) => ApiError::BadRequest(message),
            // An encrypted database pushes only when configured to.
            SyncError::Refused(message) => ApiError::Conflict(message),
            SyncError::Pass(FolderSyncError::Store(error)) => ApiError::Datastore(error),
            // The copy in the folder: as the datastore's own failures.
            SyncError::Pass(FolderSyncError::Refused(reason)) => {
                ApiError::Datastore(DatastoreError::InvalidInput(reason))
            }
            SyncError::Pass(FolderSyncError::File(error)) => {
                ApiError::Datastore(DatastoreError::Storage(error))
            }
            SyncError::Pass(FolderSyncError::Io(error)) => {
                ApiError::Datastore(DatastoreError::Io(error))
            }
            SyncError::Pass(
                FolderSyncError::Hub { message, .. }
                | FolderSyncError::HubRefusedBucket { message },
            ) => ApiError::BadGateway(message),
        }
    }
}

impl<'r> Responder<'r, 'static> for ApiError {
    fn respond_to(self, _request: &'r Request<'_>) -> response::Result<'static> {
        let status = self.status();
        if status.code >= 500 {
            log::error!("{status}: {self}");
        }
        if let ApiError::ForbiddenBucket(message) = &self {
            let body = serde_json::json!({ "message": message, "refused": "bucket" }).to_string();
            return Ok(Response::build()
                .status(status)
                .header(ContentType::JSON)
                .sized_body(body.len(), Cursor::new(body))
                .finalize());
        }
        Ok(json_message(status, &self.to_string()))
    }
}

/// A response with `status` and the body `{"message": message}`.
pub fn json_message(status: Status, message: &str) -> Response<'static> {
    let body = serde_json::json!({ "message": message }).to_string();
    Response::build()
        .status(status)
        .header(ContentType::JSON)
        .sized_body(body.len(), Cursor::new(body))
        .finalize()
}

impl From<aw_alerts::AlertsError> for ApiError {
    fn from(error: aw_alerts::AlertsError) -> ApiError {
        use aw_alerts::AlertsError;
        match error {
            AlertsError::Off => ApiError::Conflict(error.to_string()),
            AlertsError::Datastore(error) => ApiError::Datastore(error),
            AlertsError::Summary(aw_summary::SummaryError::Datastore(error)) => {
                ApiError::Datastore(error)
            }
            other => ApiError::Internal(other.to_string()),
        }
    }
}

impl From<aw_hosts::HostsError> for ApiError {
    fn from(error: aw_hosts::HostsError) -> ApiError {
        use aw_hosts::HostsError;
        let message = error.to_string();
        match error {
            HostsError::UnknownHost(_) | HostsError::UnknownAlias(_) => ApiError::NotFound(message),
            HostsError::HostExists(_)
            | HostsError::Collision { .. }
            | HostsError::HasBuckets(_)
            | HostsError::Busy(_) => ApiError::Conflict(message),
            HostsError::SameHost(_) | HostsError::InvalidName(_) => ApiError::BadRequest(message),
            HostsError::Store(error) => ApiError::Datastore(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_syntax_errors_are_400_and_shape_errors_422() {
        let syntax = serde_json::from_str::<serde_json::Value>("{").unwrap_err();
        assert_eq!(ApiError::from_json(&syntax).status(), Status::BadRequest);
        let shape = serde_json::from_str::<Vec<i64>>("{}").unwrap_err();
        assert_eq!(
            ApiError::from_json(&shape).status(),
            Status::UnprocessableEntity
        );
    }

    #[test]
    fn datastore_errors_map_to_statuses() {
        let cases = [
            (DatastoreError::NoSuchBucket("b".into()), 404),
            (
                DatastoreError::NoSuchEvent {
                    bucket_id: "b".into(),
                    event_id: 1,
                },
                404,
            ),
            (DatastoreError::InvalidInput("x".into()), 400),
            (DatastoreError::Closed, 503),
            (DatastoreError::UnsupportedVersion(9), 500),
        ];
        for (error, code) in cases {
            assert_eq!(ApiError::from(error).status().code, code);
        }
    }

    #[test]
    fn query_errors_are_the_clients_unless_storage_failed() {
        use aw_query::ErrorKind;
        for (kind, code) in [
            (ErrorKind::Syntax, 400),
            (ErrorKind::NoSuchBucket, 400),
            (ErrorKind::ReturnedFunction, 400),
            (ErrorKind::TooLarge, 400),
            (ErrorKind::Source, 500),
        ] {
            let error = QueryError::whole(kind, "x");
            assert_eq!(ApiError::from(error).status().code, code, "{kind:?}");
        }
    }
}
