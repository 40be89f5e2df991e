//! A damaged database as the server and `aw-server check` meet it: a
//! start on a file with a damaged page salvages it and serves
//! every event outside that page, logging what it recovered and where the
//! damaged file went; a start on a file that is no database exits once
//! with status 65 and leaves it byte-identical; damage met while serving
//! is answered as such, stops writes, shows in `GET
//! /api/0/database/status`, and the next start salvages; `check` tells
//! healthy from damaged, and `check --repair` salvages.
//!
//! Time budget: about 10 s in a debug build.

mod common;
#[path = "../../aw-datastore/tests/support/pages.rs"]
mod pages;

use std::path::{Path, PathBuf};
use std::process::Stdio;

use aw_datastore::Datastore;
use aw_models::{Bucket, BucketMetadata, Data, Duration, Event, Timestamp};
use common::{binary, fails, names_in, ok, serve_file};
use pages::{pages_of_kind, scramble, TABLE_LEAF};

const EVENTS: usize = 12_000;

/// A database of `EVENTS` window events at `root/db.sqlite`, closed
/// cleanly.
fn generated(root: &Path) -> PathBuf {
    let path = root.join("db.sqlite");
    let store = Datastore::open(&path).unwrap();
    store
        .create_bucket(Bucket {
            id: "aw-watcher-window_me".into(),
            kind: "currentwindow".into(),
            client: "aw-watcher-window".into(),
            hostname: "me".into(),
            created: None,
            data: Data::new(),
            metadata: BucketMetadata::default(),
            events: None,
            last_updated: None,
        })
        .unwrap();
    let start = Timestamp::parse("2026-01-01T00:00:00Z").unwrap();
    let events: Vec<Event> = (0..EVENTS)
        .map(|n| {
            let mut data = Data::new();
            data.insert("app".into(), format!("app{}", n % 5).into());
            data.insert("title".into(), format!("window {n} of a long day").into());
            Event {
                id: None,
                timestamp: start.saturating_add(Duration::from_secs(60 * n as i64)),
                duration: Duration::from_secs(50),
                data,
            }
        })
        .collect();
    store.insert_events("aw-watcher-window_me", events).unwrap();
    store.close().unwrap();
    path
}

/// Scrambles a table leaf page in the middle of the file; returns the
/// rows it held.
fn damage_a_page(path: &Path) -> usize {
    let mut file = std::fs::read(path).unwrap();
    let leaves = pages_of_kind(&file, TABLE_LEAF);
    let (index, cells) = leaves[leaves.len() / 2];
    scramble(&mut file, index, 42);
    std::fs::write(path, &file).unwrap();
    cells as usize
}

/// [`damage_a_page`] behind the server's back: the file keeps its time, so
/// the last clean close still vouches for it and no check runs at start.
fn damage_a_page_quietly(path: &Path) -> usize {
    let modified = std::fs::metadata(path).unwrap().modified().unwrap();
    let lost = damage_a_page(path);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(modified)
        .unwrap();
    lost
}

fn event_count(client: &common::Client) -> u64 {
    let reply = client.get("/api/0/buckets/aw-watcher-window_me/events/count");
    assert_eq!(reply.status, 200, "{}", reply.text());
    reply.json().as_u64().unwrap()
}

/// Everything the server logged to its files under `root`.
fn logged(root: &Path) -> String {
    let folder = root.join("cache/activitywatch/log/aw-server-rust");
    names_in(&folder)
        .iter()
        .map(|name| std::fs::read_to_string(folder.join(name)).unwrap_or_default())
        .collect()
}

#[test]
fn a_start_on_a_damaged_page_salvages_and_serves_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let db = generated(root);
    let lost = damage_a_page(&db);
    let damaged_bytes = std::fs::read(&db).unwrap();

    let (server, client) = serve_file(root, &db);
    assert_eq!(event_count(&client), (EVENTS - lost) as u64);
    drop(server);

    let log = logged(root);
    assert!(log.contains("is damaged"), "{log}");
    assert!(
        log.contains(&format!("Salvaged {} events", EVENTS - lost)),
        "{log}"
    );
    assert!(log.contains("aw-server restore"), "{log}");
    // The damaged file is kept whole beside the new one.
    let aside = names_in(root)
        .into_iter()
        .find(|name| name.starts_with("db.sqlite.damaged-") && !name.ends_with("-shm"))
        .unwrap_or_else(|| panic!("nothing kept: {:?}", names_in(root)));
    assert_eq!(std::fs::read(root.join(aside)).unwrap(), damaged_bytes);
    // Healthy now; a second start salvages nothing.
    let said = ok(root, &["check", "--dbpath", db.to_str().unwrap()]);
    assert!(said.contains("is healthy"), "{said}");
}

#[test]
fn a_start_on_a_file_that_is_no_database_exits_once_and_leaves_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let db = generated(root);
    let mut bytes = std::fs::read(&db).unwrap();
    bytes[..100].fill(0);
    std::fs::write(&db, &bytes).unwrap();
    let before = names_in(root);

    let output = binary(root)
        .args(["--testing", "--port", "0", "--dbpath"])
        .arg(&db)
        .stdout(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(65), "{stderr}");
    assert!(stderr.contains(db.to_str().unwrap()), "{stderr}");
    assert!(stderr.contains("aw-server restore"), "{stderr}");
    // Said once, as what it is: no password was given, and a zeroed
    // header is no encrypted file.
    assert_eq!(stderr.matches("cannot start").count(), 1, "{stderr}");
    assert!(stderr.contains("is zeroed"), "{stderr}");
    if !aw_datastore::ENCRYPTION_AVAILABLE {
        assert!(
            !stderr.contains("password") && !stderr.contains("encrypted"),
            "{stderr}"
        );
    }
    assert_eq!(std::fs::read(&db).unwrap(), bytes, "the file was changed");
    let after: Vec<String> = names_in(root)
        .into_iter()
        .filter(|name| name != "cache" && name != "config" && name != "data")
        .collect();
    let before: Vec<String> = before
        .into_iter()
        .filter(|name| name != "cache" && name != "config" && name != "data")
        .collect();
    assert_eq!(after, before);

    let said = fails(root, &["check", "--dbpath", db.to_str().unwrap()], 1);
    assert!(said.contains("not a database"), "{said}");
    assert!(said.contains("is zeroed"), "{said}");
    assert_eq!(std::fs::read(&db).unwrap(), bytes);
}

#[test]
fn check_tells_damage_and_repair_salvages_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let db = generated(root);
    let db_arg = db.to_str().unwrap();
    let said = ok(root, &["check", "--dbpath", db_arg]);
    assert!(said.contains("is healthy"), "{said}");

    let lost = damage_a_page(&db);
    let said = fails(root, &["check", "--dbpath", db_arg], 1);
    assert!(
        said.contains("is damaged") && said.contains("--repair"),
        "{said}"
    );
    // What quick_check found, not only SQLite's "malformed".
    let found = said
        .split_once("is damaged (")
        .and_then(|(_, rest)| rest.split_once(")."))
        .map_or("", |(found, _)| found);
    assert!(
        found.contains("Page ") || found.contains("table "),
        "{said}"
    );
    let said = ok(root, &["check", "--repair", "--dbpath", db_arg]);
    assert!(
        said.contains(&format!("Salvaged {} events", EVENTS - lost)),
        "{said}"
    );
    assert!(said.contains("aw-watcher-window_me"), "{said}");
    let said = ok(root, &["check", "--dbpath", db_arg]);
    assert!(said.contains("is healthy"), "{said}");
    let store = Datastore::open(&db).unwrap();
    assert_eq!(
        store
            .count_events("aw-watcher-window_me", None, None)
            .wait()
            .unwrap(),
        (EVENTS - lost) as u64
    );
    store.close().unwrap();
}

#[test]
fn damage_met_while_serving_is_said_and_the_next_start_salvages() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let db = generated(root);
    let lost = damage_a_page_quietly(&db);
    let start = || serve_file(root, &db);
    let (server, client) = start();
    let status = client.get("/api/0/database/status").json();
    assert_eq!(status["healthy"], true, "{status}");
    // A summary over the damaged page says so, not where in a program it
    // did not write the user was.
    let message = client
        .get("/api/0/summary?start=2026-01-01&end=2026-01-10&tz=UTC")
        .assert_error(500);
    assert!(
        message.contains("is damaged") && !message.starts_with("line "),
        "{message}"
    );
    let message = client
        .get("/api/0/buckets/aw-watcher-window_me/events")
        .assert_error(500);
    assert!(
        message.contains("is damaged") && message.contains("restart"),
        "{message}"
    );
    let status = client.get("/api/0/database/status").json();
    assert_eq!(status["healthy"], false, "{status}");
    assert!(status["damage"].is_string(), "{status}");
    assert_eq!(status["path"], db.to_str().unwrap());
    // No more writes into the damaged file.
    let refused = client
        .post_json(
            "/api/0/buckets/aw-watcher-window_me/heartbeat?pulsetime=5",
            &serde_json::json!({"timestamp": "2026-11-28T10:00:00Z", "duration": 0, "data": {"app": "x"}}),
        )
        .assert_error(500);
    assert!(refused.contains("is damaged"), "{refused}");
    drop(server);

    // The next start checks the file and salvages it.
    let (server, client) = start();
    assert_eq!(event_count(&client), (EVENTS - lost) as u64);
    // Healthy (the salvaged file), with what the salvage did: as `check`
    // says it.
    let status = client.get("/api/0/database/status").json();
    assert_eq!(status["healthy"], true, "{status}");
    assert_eq!(status["damage"], serde_json::Value::Null, "{status}");
    assert_eq!(
        status["salvage"]["events"],
        (EVENTS - lost) as u64,
        "{status}"
    );
    assert_eq!(
        status["salvage"]["buckets"][0]["recovered"],
        (EVENTS - lost) as u64
    );
    let damaged = status["salvage"]["damaged"].as_str().unwrap().to_string();
    drop(server);
    let said = ok(root, &["check", "--dbpath", db.to_str().unwrap()]);
    assert!(
        said.contains("is healthy") && said.contains("salvaged from a damaged file"),
        "{said}"
    );
    assert!(said.contains(&damaged), "{said}");
}
