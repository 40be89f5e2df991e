//! The export document (`docs/API.md` §5).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Bucket;

/// `{"buckets": {<id>: <bucket with events>}}`, as written by every
/// ActivityWatch server and the dashboard's export button.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExportDocument {
    /// Buckets by id. On import the id inside each bucket wins over the key.
    pub buckets: BTreeMap<String, Bucket>,
}

impl ExportDocument {
    /// The buckets with their ids filled in from the map keys where missing.
    pub fn into_buckets(self) -> Vec<Bucket> {
        self.buckets
            .into_iter()
            .map(|(key, mut bucket)| {
                if bucket.id.is_empty() {
                    bucket.id = key;
                }
                bucket
            })
            .collect()
    }
}
