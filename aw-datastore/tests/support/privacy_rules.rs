//! Privacy rules as clients write them, shared by the datastore's and the
//! server's privacy tests.

use serde_json::{json, Value};

/// aw-webui's default rules, in the shape its settings page saves.
pub fn webui_defaults() -> Value {
    json!([
        {"enabled": true, "bucket_prefix": "aw-watcher-window", "field": "title",
         "pattern": "(?i)(private browsing|incognito)", "action": "drop"},
        {"enabled": true, "bucket_prefix": "aw-watcher-window", "field": "title",
         "pattern": "(?i).*banking.*", "action": "redact", "replacement": "REDACTED"}
    ])
}
