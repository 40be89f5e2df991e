//! [`TransferError`]: why reading or storing a document failed, in terms
//! of the document, not of HTTP (`error.rs` maps it to a status, the
//! commands print it).

use aw_datastore::DatastoreError;

/// Why an import or export pass failed.
#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    /// Not an export document: broken JSON syntax, a truncated file.
    #[error("{0}")]
    Malformed(String),
    /// Well-formed JSON with a value that cannot be stored: a bad
    /// timestamp, a bucket id, a wrong type.
    #[error("{0}")]
    Invalid(String),
    /// Reading, spooling or handing over failed on our side (I/O, a
    /// thread, a file that changed between passes).
    #[error("{0}")]
    Failed(String),
    /// The datastore refused or failed.
    #[error(transparent)]
    Store(#[from] DatastoreError),
}

impl TransferError {
    /// A JSON error of the document: broken syntax or a truncated file is
    /// malformed, a well-formed document of the wrong shape invalid.
    pub fn from_json(error: &serde_json::Error) -> TransferError {
        use serde_json::error::Category;
        match error.classify() {
            Category::Data => TransferError::Invalid(format!("Invalid import document: {error}")),
            Category::Syntax | Category::Eof | Category::Io => {
                TransferError::Malformed(format!("Malformed import document: {error}"))
            }
        }
    }
}
