//! Snapshots through the API (`POST /api/0/backup`) and the `backup`
//! command, online and on the file (issue #37): written into the backup
//! folder or to `--to`, complete, never replacing a file; bad targets are
//! clear errors that write nothing.

mod common;

use std::path::Path;
use std::process::Stdio;

use aw_datastore::{Datastore, EventQuery};
use common::{binary, create_bucket, event, fails, ok, spawn_listening, Stopped, TestServer};
use serde_json::json;

/// The titles of a bucket in the database file at `path`.
fn titles(path: &Path, bucket_id: &str) -> Vec<String> {
    let store = Datastore::open(path).unwrap();
    let events = store
        .events(bucket_id, EventQuery::default())
        .wait()
        .unwrap();
    store.close().unwrap();
    events
        .iter()
        .map(|event| event.data["title"].as_str().unwrap().to_string())
        .collect()
}

fn files(folder: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .map(|entries| {
            entries
                .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn the_api_writes_snapshots_into_the_backup_folder_only() {
    let folder = tempfile::tempdir().unwrap();
    let backups = folder.path().join("backups");
    let db = folder.path().join("served.db");
    let datastore = Datastore::open(&db).unwrap();
    let server = TestServer::start_on(
        None,
        datastore,
        |config| config.backup_dir = backups.clone(),
        |rocket| rocket,
    );
    let client = server.client();
    create_bucket(&client, "b");
    let first = json!([event(
        "2026-11-28T10:00:00Z",
        5.0,
        json!({"title": "before"})
    )]);
    assert_eq!(
        client.post_json("/api/0/buckets/b/events", &first).status,
        200
    );

    let reply = client.post("/api/0/backup", b"");
    assert_eq!(reply.status, 200, "{}", reply.text());
    let written = reply.json();
    let path = Path::new(written["path"].as_str().unwrap()).to_path_buf();
    assert_eq!(path.parent(), Some(backups.as_path()));
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("aw-server-") && name.ends_with("Z.db"),
        "{name}"
    );
    assert_eq!(written["bytes"], std::fs::metadata(&path).unwrap().len());
    // A second one in the same second gets a name of its own.
    let second = json!([event(
        "2026-11-28T10:01:00Z",
        5.0,
        json!({"title": "after"})
    )]);
    assert_eq!(
        client.post_json("/api/0/buckets/b/events", &second).status,
        200
    );
    assert_eq!(client.post("/api/0/backup", b"").status, 200);
    assert_eq!(files(&backups).len(), 2, "{:?}", files(&backups));
    // Each holds what was written before it.
    assert_eq!(titles(&path, "b"), ["before"]);
    drop(server);
}

#[test]
fn the_backup_command_works_online_and_on_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let db = root.join("served.db");
    let backups = root.join("backups");
    std::fs::create_dir_all(root.join("config/activitywatch/aw-server-rust")).unwrap();
    std::fs::write(
        root.join("config/activitywatch/aw-server-rust/config-testing.toml"),
        format!("[backup]\ndir = {:?}\n", backups.to_str().unwrap()),
    )
    .unwrap();
    let (child, port) = spawn_listening(
        binary(root)
            .args(["--testing", "--port", "0", "--dbpath"])
            .arg(&db)
            .stdout(Stdio::null()),
    );
    let server = Stopped(child);
    let port = port.to_string();
    let client = common::Client {
        port: port.parse().unwrap(),
        headers: Vec::new(),
    };
    create_bucket(&client, "b");
    let events = json!([event("2026-11-28T10:00:00Z", 5.0, json!({"title": "kept"}))]);
    assert_eq!(
        client.post_json("/api/0/buckets/b/events", &events).status,
        200
    );

    // Online: into the server's backup folder; --to is refused.
    let said = ok(root, &["backup", "--testing", "--port", &port]);
    assert!(said.contains("Snapshot written:"), "{said}");
    assert_eq!(files(&backups).len(), 1);
    let to = root.join("mine.db");
    let refused = fails(
        root,
        &[
            "backup",
            "--testing",
            "--port",
            &port,
            "--to",
            to.to_str().unwrap(),
        ],
        1,
    );
    assert!(refused.contains("[backup] dir"), "{refused}");
    assert!(!to.exists());
    drop(server);

    // On the file: to --to, which must not exist, in a folder that does.
    let db_arg = db.to_str().unwrap();
    ok(
        root,
        &["backup", "--dbpath", db_arg, "--to", to.to_str().unwrap()],
    );
    assert_eq!(titles(&to, "b"), ["kept"]);
    let again = fails(
        root,
        &["backup", "--dbpath", db_arg, "--to", to.to_str().unwrap()],
        1,
    );
    assert!(again.contains("exists already"), "{again}");
    let nowhere = root.join("no-such-folder").join("s.db");
    let missing = fails(
        root,
        &[
            "backup",
            "--dbpath",
            db_arg,
            "--to",
            nowhere.to_str().unwrap(),
        ],
        1,
    );
    assert!(missing.contains("no folder"), "{missing}");
    let absent = fails(
        root,
        &["backup", "--dbpath", root.join("none.db").to_str().unwrap()],
        1,
    );
    assert!(absent.contains("no database file"), "{absent}");
}
