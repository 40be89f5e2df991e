//! Buckets and the bucket creation request (`docs/API.md` §2.4, §3.2).

use serde::{Deserialize, Serialize};

use crate::{Data, Event, ModelError, Timestamp};

/// What joins the id of a bucket copied from another device to the name
/// of that device, as aw-sync names the copies:
/// `<bucket id>-synced-from-<origin>`.
pub const SYNCED_FROM: &str = "-synced-from-";
/// The bucket data key naming the device a bucket comes from.
pub const ORIGIN_KEY: &str = "$aw.sync.origin";

/// Whether a bucket is this device's own, not a copy of another device's.
pub fn is_own_bucket(bucket_id: &str) -> bool {
    !bucket_id.contains(SYNCED_FROM)
}

/// Whether a bucket's host name names no host: empty, or `unknown`, as
/// aw-watcher-web reported before it sent `!local`. Such a bucket is the
/// device's whose server its watcher wrote to.
pub fn is_hostless(hostname: &str) -> bool {
    hostname.is_empty() || hostname == "unknown"
}

/// Checks a bucket id a client gives: 1 to 1000 bytes, no control
/// characters (`docs/API.md` §2.4).
pub fn check_bucket_id(bucket_id: &str) -> Result<(), ModelError> {
    if bucket_id.is_empty() || bucket_id.len() > 1000 || bucket_id.chars().any(char::is_control) {
        return Err(ModelError::InvalidBucketId(bucket_id.to_string()));
    }
    Ok(())
}

/// Earliest event start and latest event end of a bucket; `None` when empty.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BucketMetadata {
    /// Start of the earliest event.
    #[serde(default)]
    pub start: Option<Timestamp>,
    /// End of the latest-ending event.
    #[serde(default)]
    pub end: Option<Timestamp>,
}

/// A bucket as listed, fetched and exported.
///
/// On import `id` may be missing (the export map key is used then),
/// `metadata` and `last_updated` are ignored, and `events` may be absent
/// or `null`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// Unique id, e.g. `aw-watcher-window_myhost`.
    #[serde(default)]
    pub id: String,
    /// What the events mean, e.g. `currentwindow`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The watcher that writes to it.
    pub client: String,
    /// Host the watcher runs on.
    pub hostname: String,
    /// Creation time; set by the store when absent.
    #[serde(default)]
    pub created: Option<Timestamp>,
    /// Free-form object, e.g. `{"device_id": ...}`.
    #[serde(default)]
    pub data: Data,
    /// Event extent, computed by the store.
    #[serde(default)]
    pub metadata: BucketMetadata,
    /// Only filled in export documents.
    #[serde(default)]
    pub events: Option<Vec<Event>>,
    /// Equals `metadata.end` when sent.
    #[serde(default)]
    pub last_updated: Option<Timestamp>,
}

/// The body of `PUT /api/0/buckets/{bid}` (the Python server's update):
/// each field given replaces the stored one, absent (or `null`) ones are
/// kept. Other
/// keys (`id`, `created`, ...) are ignored, as the Python server ignores
/// them: a bucket's id and creation time never change.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct UpdateBucket {
    /// New bucket type.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// New watcher name.
    #[serde(default)]
    pub client: Option<String>,
    /// New host name.
    #[serde(default)]
    pub hostname: Option<String>,
    /// New free-form object (replaces the whole object).
    #[serde(default)]
    pub data: Option<Data>,
}

/// The body of `POST /api/0/buckets/{bid}`; the id comes from the path.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CreateBucket {
    /// Ignored: the path is authoritative.
    #[serde(default)]
    pub id: Option<String>,
    /// Bucket type.
    #[serde(rename = "type")]
    pub kind: String,
    /// Watcher name.
    pub client: String,
    /// Host name, or `!local` for the server's own.
    pub hostname: String,
    /// Creation time; now when absent.
    #[serde(default)]
    pub created: Option<Timestamp>,
    /// Free-form object.
    #[serde(default)]
    pub data: Data,
    /// Events to insert into the new bucket (the reference accepts this).
    #[serde(default)]
    pub events: Option<Vec<Event>>,
}

impl CreateBucket {
    /// The bucket this request creates under `id`.
    pub fn into_bucket(self, id: String) -> Bucket {
        Bucket {
            id,
            kind: self.kind,
            client: self.client,
            hostname: self.hostname,
            created: self.created,
            data: self.data,
            metadata: BucketMetadata::default(),
            events: self.events,
            last_updated: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bucket_serializes_every_field() {
        let bucket = Bucket {
            id: "b".into(),
            kind: "currentwindow".into(),
            client: "c".into(),
            hostname: "h".into(),
            created: Some(Timestamp::from_nanos(0)),
            data: Data::new(),
            metadata: BucketMetadata::default(),
            events: None,
            last_updated: None,
        };
        assert_eq!(
            serde_json::to_value(&bucket).unwrap(),
            json!({"id": "b", "type": "currentwindow", "client": "c", "hostname": "h",
                   "created": "1970-01-01T00:00:00Z", "data": {},
                   "metadata": {"start": null, "end": null}, "events": null, "last_updated": null})
        );
    }

    #[test]
    fn create_request_needs_type_client_hostname() {
        let ok: CreateBucket =
            serde_json::from_value(json!({"type": "t", "client": "c", "hostname": "h"})).unwrap();
        assert_eq!(ok.into_bucket("x".into()).id, "x");
        for missing in ["type", "client", "hostname"] {
            let mut body = json!({"type": "t", "client": "c", "hostname": "h"});
            body.as_object_mut().unwrap().remove(missing);
            assert!(
                serde_json::from_value::<CreateBucket>(body).is_err(),
                "{missing}"
            );
        }
        assert!(serde_json::from_value::<CreateBucket>(
            json!({"type": 1, "client": "c", "hostname": "h"})
        )
        .is_err());
    }

    #[test]
    fn bucket_ids_are_checked() {
        assert!(check_bucket_id("aw-watcher-window_host").is_ok());
        assert!(check_bucket_id("ünï côdé / ☃ \"'#?&").is_ok());
        for bad in ["", "a\nb", "tab\there", &"x".repeat(1001)] {
            assert!(check_bucket_id(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn copies_of_other_devices_buckets_are_not_own() {
        assert!(is_own_bucket("aw-watcher-window_laptop"));
        assert!(!is_own_bucket("aw-watcher-window_laptop-synced-from-desk"));
    }

    #[test]
    fn update_request_fields_are_each_optional() {
        let empty: UpdateBucket = serde_json::from_value(json!({})).unwrap();
        assert_eq!(empty, UpdateBucket::default());
        let full: UpdateBucket = serde_json::from_value(
            json!({"type": "t", "client": "c", "hostname": "h", "data": {"k": 1}, "id": "ignored"}),
        )
        .unwrap();
        assert_eq!(full.kind.as_deref(), Some("t"));
        assert_eq!(full.data.unwrap()["k"], 1);
        for bad in [
            json!({"type": 1}),
            json!({"data": []}),
            json!({"hostname": {}}),
        ] {
            assert!(
                serde_json::from_value::<UpdateBucket>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }
}
