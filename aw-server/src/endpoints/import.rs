//! `POST /api/0/import` (`docs/API.md` §3.5, §5): an export document as the JSON
//! body or as the multipart file field `buckets.json` (or `buckets`).
//!
//! Imports may be up to 1000 MB, so nothing holds a large document:
//!
//! 1. a plain JSON body that declares a length of at most 128 MB is read
//!    into memory (writing it to a file and reading it back was a fifth of
//!    such an import); any other body (or the multipart field) is spooled
//!    to an anonymous temp file, in bounded memory;
//! 2. pass 1 streams through the file with serde, validating every bucket
//!    and event and keeping only the bucket fields (not the events);
//! 3. only when the whole document is valid, pass 2 streams through it
//!    again, creating each bucket (`import_bucket` without events) and
//!    feeding its events to `import_events` in chunks.
//!
//! So a malformed or truncated document is refused with 4xx before
//! anything is stored. Merging and deduplication are the datastore's; the
//! two passes live in `transfer::document`, shared with the `import`
//! command.

use std::fs::File;
use std::io::Seek;

use aw_datastore::ImportSummary;
use aw_models::IMPORT_SUMMARY_HEADER;
use rocket::data::{ByteUnit, Data as Body};
use rocket::http::{ContentType, Header, Status};
use rocket::post;
use rocket::request::{self, FromRequest, Request};
use rocket::response::{self, Responder, Response};
use rocket::tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::request::blocking;
use crate::error::ApiError;
use crate::served::Served;
use aw_transfer::{fits_in_memory, import_bytes, import_file, internal};

/// Largest import, as the anchor allows.
pub const IMPORT_LIMIT: ByteUnit = ByteUnit::Megabyte(1000);

/// 200 with an empty body and the [`IMPORT_SUMMARY_HEADER`] saying what
/// the import did (`dropped`: by the privacy filters; the `import` command
/// reports it). The body stays empty, as `docs/API.md` §3.5 says and
/// clients expect.
#[derive(Debug)]
pub struct Imported(pub ImportSummary);

impl<'r> Responder<'r, 'static> for Imported {
    fn respond_to(self, _request: &'r Request<'_>) -> response::Result<'static> {
        let summary = format!(
            "{{\"buckets_created\":{},\"inserted\":{},\"skipped\":{},\"dropped\":{}}}",
            self.0.buckets_created, self.0.inserted, self.0.skipped, self.0.dropped
        );
        Ok(Response::build()
            .status(Status::Ok)
            .header(Header::new(IMPORT_SUMMARY_HEADER, summary))
            .finalize())
    }
}

/// Imports an export document, merging into existing buckets.
#[post("/api/0/import", data = "<body>")]
pub async fn import(
    content_type: Option<&ContentType>,
    length: DeclaredLength,
    body: Body<'_>,
    served: &Served,
) -> Result<Imported, ApiError> {
    let datastore = served.datastore.clone();
    let multipart = content_type.is_some_and(|content_type| content_type.is_form_data());
    let summary = match length
        .0
        .filter(|&length| !multipart && fits_in_memory(length))
    {
        Some(length) => {
            let document = read_whole(body, length).await?;
            blocking(move || Ok(import_bytes(document, &datastore)?)).await?
        }
        None => {
            let file = spool(content_type, body).await?;
            blocking(move || Ok(import_file(file, &datastore)?)).await?
        }
    };
    log::info!(
        "Import: {} buckets created, {} events stored, {} duplicates skipped, {} dropped by privacy filters",
        summary.buckets_created,
        summary.inserted,
        summary.skipped,
        summary.dropped
    );
    Ok(Imported(summary))
}

/// The `Content-Length` a request declares, if any.
#[derive(Debug, Clone, Copy)]
pub struct DeclaredLength(Option<u64>);

#[rocket::async_trait]
impl<'r> FromRequest<'r> for DeclaredLength {
    type Error = std::convert::Infallible;

    async fn from_request(request: &'r Request<'_>) -> request::Outcome<Self, Self::Error> {
        let length = request
            .headers()
            .get_one("Content-Length")
            .and_then(|value| value.trim().parse().ok());
        request::Outcome::Success(DeclaredLength(length))
    }
}

/// Reads a body of the declared `length` into memory, refusing one that
/// turns out longer or shorter.
async fn read_whole(body: Body<'_>, length: u64) -> Result<Vec<u8>, ApiError> {
    let mut document = Vec::with_capacity(usize::try_from(length).unwrap_or(0));
    let mut stream = body.open(ByteUnit::Byte(length) + ByteUnit::Byte(1));
    stream
        .read_to_end(&mut document)
        .await
        .map_err(|error| ApiError::BadRequest(format!("Failed to read body: {error}")))?;
    if document.len() as u64 != length {
        return Err(ApiError::BadRequest(format!(
            "Body of {} bytes, but Content-Length said {length}",
            document.len()
        )));
    }
    Ok(document)
}

/// Writes the document to an anonymous temp file (deleted when closed).
async fn spool(content_type: Option<&ContentType>, body: Body<'_>) -> Result<File, ApiError> {
    let mut file = tempfile::tempfile().map_err(internal)?;
    let mut writer = rocket::tokio::fs::File::from_std(file.try_clone().map_err(internal)?);
    match content_type.filter(|content_type| content_type.is_form_data()) {
        Some(content_type) => {
            let boundary = content_type
                .param("boundary")
                .ok_or_else(|| ApiError::BadRequest("Multipart body without boundary".into()))?;
            let constraints = multer::Constraints::new()
                .size_limit(multer::SizeLimit::new().whole_stream(IMPORT_LIMIT.as_u64()));
            let stream = body.open(IMPORT_LIMIT + ByteUnit::Mebibyte(1));
            let mut multipart =
                multer::Multipart::with_reader_with_constraints(stream, boundary, constraints);
            loop {
                let Some(mut field) = multipart.next_field().await.map_err(multipart_error)? else {
                    return Err(ApiError::BadRequest(
                        "Multipart import without a 'buckets.json' field".into(),
                    ));
                };
                if matches!(field.name(), Some("buckets.json" | "buckets")) {
                    while let Some(chunk) = field.chunk().await.map_err(multipart_error)? {
                        writer.write_all(&chunk).await.map_err(internal)?;
                    }
                    break;
                }
            }
        }
        None => {
            let written = body
                .open(IMPORT_LIMIT)
                .stream_to(&mut writer)
                .await
                .map_err(|error| ApiError::BadRequest(format!("Failed to read body: {error}")))?;
            if !written.complete {
                return Err(too_large());
            }
        }
    }
    writer.flush().await.map_err(internal)?;
    drop(writer);
    file.rewind().map_err(internal)?;
    Ok(file)
}

fn too_large() -> ApiError {
    ApiError::PayloadTooLarge(format!("Import is larger than the limit of {IMPORT_LIMIT}"))
}

fn multipart_error(error: multer::Error) -> ApiError {
    match error {
        multer::Error::StreamSizeExceeded { .. } | multer::Error::FieldSizeExceeded { .. } => {
            too_large()
        }
        other => ApiError::BadRequest(format!("Malformed multipart body: {other}")),
    }
}
