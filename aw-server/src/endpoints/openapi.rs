//! `GET /api/0/openapi.json`: the OpenAPI 3.1 document of every `/api/`
//! endpoint and `/metrics` (`aw-server/src/openapi.json`), embedded at
//! compile time.
//!
//! A test (`tests/openapi.rs`) compares its operations with
//! [`routes`](super::routes), so a route added without describing it, or a
//! description left after a route went, fails the test command; the
//! test command also fuzzes the server with Schemathesis from it
//! (`scripts/test-api`).

use rocket::get;
use rocket::http::ContentType;

/// The document's text.
pub const DOCUMENT: &str = include_str!("../openapi.json");

/// The API's OpenAPI document.
#[get("/api/0/openapi.json")]
pub fn openapi() -> (ContentType, &'static str) {
    (ContentType::JSON, DOCUMENT)
}
