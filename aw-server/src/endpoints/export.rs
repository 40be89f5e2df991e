//! Export of one bucket or all of them (`docs/API.md` §3.5), streamed.
//!
//! The document `{"buckets": {<id>: {...bucket, "events": [...]}}}` is
//! written page by page from `Datastore::events_page`, so an export of any
//! size needs only one page of events in memory. The status line is sent
//! before the events are read: a storage failure half-way can only end the
//! body early, which leaves invalid JSON that no client will mistake for a
//! complete export (and the failure is logged).

use aw_datastore::{Datastore, DatastoreError};
use aw_models::{Bucket, Event};
use rocket::get;
use rocket::http::{ContentType, Header};
use rocket::request::Request;
use rocket::response::stream::ByteStream;
use rocket::response::{self, Responder, Response};

use crate::error::ApiError;
use crate::served::Served;
use aw_transfer::bucket_head;

/// Events read from the store per step.
const PAGE_SIZE: usize = 1000;

/// A streamed export document with its download file name.
#[derive(Debug)]
pub struct Export<S> {
    filename: String,
    body: ByteStream<S>,
}

impl<'r, S> Responder<'r, 'r> for Export<S>
where
    S: rocket::futures::Stream<Item = Vec<u8>> + Send + 'r,
{
    fn respond_to(self, request: &'r Request<'_>) -> response::Result<'r> {
        Response::build_from(self.body.respond_to(request)?)
            .header(ContentType::JSON)
            .header(Header::new(
                "Content-Disposition",
                format!("attachment; filename={}", self.filename),
            ))
            .ok()
    }
}

/// Every bucket with its events.
#[get("/api/0/export")]
pub async fn export_all(
    served: &Served,
) -> Result<Export<impl rocket::futures::Stream<Item = Vec<u8>>>, ApiError> {
    let datastore = served.datastore.clone();
    let buckets = datastore.buckets().await?;
    Ok(Export {
        filename: "aw-buckets-export.json".to_string(),
        body: document(datastore, buckets.into_values().collect()),
    })
}

/// One bucket with its events; 404 if it does not exist.
#[get("/api/0/buckets/<bucket_id>/export")]
pub async fn export_bucket(
    bucket_id: &str,
    served: &Served,
) -> Result<Export<impl rocket::futures::Stream<Item = Vec<u8>>>, ApiError> {
    let datastore = served.datastore.clone();
    let bucket = datastore.bucket(bucket_id).await?;
    Ok(Export {
        filename: format!("aw-bucket-export_{}.json", safe_filename(bucket_id)),
        body: document(datastore, vec![bucket]),
    })
}

/// The export document of `buckets`, a chunk at a time.
fn document(
    datastore: Datastore,
    buckets: Vec<Bucket>,
) -> ByteStream<impl rocket::futures::Stream<Item = Vec<u8>>> {
    ByteStream! {
        yield b"{\"buckets\":{".to_vec();
        for (index, bucket) in buckets.into_iter().enumerate() {
            let mut head = if index > 0 { b",".to_vec() } else { Vec::new() };
            match bucket_head(&bucket) {
                Ok(text) => head.extend_from_slice(text.as_bytes()),
                Err(error) => {
                    log::error!("Export of bucket '{}' failed: {error}", bucket.id);
                    return;
                }
            }
            yield head;
            let mut after: Option<Event> = None;
            loop {
                let page = datastore.events_page(&bucket.id, after.as_ref(), PAGE_SIZE).await;
                let page = match page {
                    Ok(page) => page,
                    // Deleted while exporting: its events end here.
                    Err(DatastoreError::NoSuchBucket(_)) => break,
                    Err(error) => {
                        log::error!("Export of bucket '{}' failed: {error}", bucket.id);
                        return;
                    }
                };
                let mut chunk = Vec::new();
                for event in &page {
                    if after.is_some() || !chunk.is_empty() {
                        chunk.push(b',');
                    }
                    if let Err(error) = serde_json::to_writer(&mut chunk, event) {
                        log::error!("Export of bucket '{}' failed: {error}", bucket.id);
                        return;
                    }
                }
                let last_page = page.len() < PAGE_SIZE;
                after = page.into_iter().last();
                yield chunk;
                if last_page || after.is_none() {
                    break;
                }
            }
            yield b"]}".to_vec();
        }
        yield b"}}".to_vec();
    }
}

/// A bucket id as a safe file name: anything but ASCII letters, digits,
/// `-`, `_` and `.` becomes `_`, so header values stay plain ASCII.
fn safe_filename(bucket_id: &str) -> String {
    bucket_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_sanitised() {
        assert_eq!(safe_filename("aw-watcher_x.1"), "aw-watcher_x.1");
        assert_eq!(safe_filename("a b/ü\"\r\n;"), "a_b______");
    }
}
