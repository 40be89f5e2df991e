//! Moving whole buckets in and out: the formats and the streaming passes
//! shared by aw-server's HTTP endpoints (export, import) and its `export`
//! and `import` commands. It knows neither HTTP nor the command line.
//!
//! - `document`: reading export documents (`docs/API.md` §5) with a streaming serde
//!   visitor, and the validate-then-store import of a document file;
//! - `write`: writing the export document, NDJSON and CSV;
//! - `ndjson`: reading NDJSON, converted into an export document;
//! - `legacy`: importing the Python aw-server's database.
//!
//! Nothing here holds a whole document or a whole bucket in memory, but
//! `import_bytes`, by design: a body that `fits_in_memory` is read once.

pub mod document;
mod error;
pub mod legacy;
pub mod ndjson;
pub mod write;

pub use document::{
    fits_in_memory, import_bytes, import_file, import_validated, internal, validate, walk,
    Document, InMemory, Sink, Streamed,
};
pub use error::TransferError;
pub use write::{bucket_head, writer, ExportWriter, Format, JsonWriter};
