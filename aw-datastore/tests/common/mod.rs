//! Helpers shared by the datastore integration tests.
#![allow(dead_code)]

use aw_datastore::{Datastore, EventQuery};
use aw_models::{Bucket, BucketMetadata, Data, Duration, Event, Timestamp};
use serde_json::json;

/// A temporary directory holding one database file.
pub struct TempDb {
    pub dir: tempfile::TempDir,
}

impl TempDb {
    pub fn new() -> TempDb {
        TempDb {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn path(&self) -> std::path::PathBuf {
        self.dir.path().join("sqlite.db")
    }

    pub fn open(&self) -> Datastore {
        Datastore::open(self.path()).unwrap()
    }
}

/// A bucket with the given id and no events.
pub fn bucket(id: &str) -> Bucket {
    Bucket {
        id: id.to_string(),
        kind: "currentwindow".to_string(),
        client: "aw-watcher-window".to_string(),
        hostname: "host".to_string(),
        created: Some(Timestamp::parse("2021-06-01T09:00:00.123456789Z").unwrap()),
        data: Data::new(),
        metadata: BucketMetadata::default(),
        events: None,
        last_updated: None,
    }
}

/// Seconds since the epoch as a timestamp.
pub fn at(secs: i64) -> Timestamp {
    Timestamp::from_nanos(secs * 1_000_000_000)
}

/// An event from seconds and a JSON object.
pub fn event(start_secs: i64, duration_secs: i64, data: serde_json::Value) -> Event {
    Event::new(
        at(start_secs),
        Duration::from_secs(duration_secs),
        object(data),
    )
}

pub fn object(value: serde_json::Value) -> Data {
    match value {
        serde_json::Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

pub fn app(name: &str) -> serde_json::Value {
    json!({"app": name})
}

/// (start secs, duration secs) of events, for compact assertions.
pub fn spans(events: &[Event]) -> Vec<(i64, i64)> {
    events
        .iter()
        .map(|e| {
            (
                e.timestamp.nanos() / 1_000_000_000,
                e.duration.nanos() / 1_000_000_000,
            )
        })
        .collect()
}

/// A datastore with one empty bucket `b` on a temp file.
pub fn with_bucket() -> (TempDb, Datastore) {
    let db = TempDb::new();
    let store = db.open();
    store.create_bucket(bucket("b")).unwrap();
    (db, store)
}

/// Runs a future on this thread (the crate has no async runtime).
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(std::sync::Arc::new(Unpark(std::thread::current())));
    let mut context = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
        std::thread::park();
    }
}

/// A bucket's events, oldest first.
pub fn oldest_first(store: &Datastore, bucket_id: &str) -> Vec<Event> {
    let mut events = store
        .events(bucket_id, EventQuery::default())
        .wait()
        .unwrap();
    events.reverse();
    events
}
