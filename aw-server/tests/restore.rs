//! `aw-server restore` and `aw-server backup --list` as a user runs them
//!: a snapshot taken through the running server, more writes,
//! the server stopped, the snapshot restored: the database exports exactly
//! as the snapshot does, the file that was there is kept aside, and new
//! events get ids never issued before. Refused while a server uses the
//! file; a snapshot that is not a database, a missing one, or a folder
//! that cannot be written is a clear error that changes nothing.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{binary, create_bucket, event, export_copy, fails, names_in, ok, serve_file, Client};
use serde_json::{json, Value};

/// A test home with a testing config whose `[backup] dir` is `backups`.
fn home() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("served.db");
    let backups = dir.path().join("backups");
    common::write_testing_config(dir.path(), &common::backup_config(&backups));
    (dir, db, backups)
}

/// The buckets and events of a database file, as `export` writes them.
fn export(root: &Path, db: &Path) -> BTreeMap<String, Value> {
    export_copy(root, db)["buckets"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(id, bucket)| (id.clone(), bucket.clone()))
        .collect()
}

fn insert(client: &Client, start: &str, title: &str) -> i64 {
    let reply = client.post_json(
        "/api/0/buckets/b/events",
        &json!([event(start, 10.0, json!({ "title": title }))]),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    // The answer has no ids; the bucket's newest event does.
    let events = client.get("/api/0/buckets/b/events?limit=1").json();
    events[0]["id"].as_i64().unwrap()
}

#[test]
fn a_snapshot_restores_as_it_was_and_ids_go_on_above_every_one_issued() {
    let (dir, db, backups) = home();
    let root = dir.path();
    let (server, client) = serve_file(root, &db);
    let port = client.port.to_string();
    create_bucket(&client, "b");
    insert(&client, "2026-11-28T08:00:00Z", "one");
    insert(&client, "2026-11-28T08:01:00Z", "two");
    let said = ok(root, &["backup", "--testing", "--port", &port]);
    assert!(said.contains("Snapshot written:"), "{said}");
    let listed = binary(root)
        .args(["backup", "--list", "--testing"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&listed.stdout).into_owned();
    let snapshot_name = names_in(&backups).pop().unwrap();
    assert!(table.contains(&snapshot_name), "{table}");
    let snapshot = backups.join(&snapshot_name);
    // After the snapshot: more history, and a deletion.
    insert(&client, "2026-11-28T08:02:00Z", "three");
    let highest = insert(&client, "2026-11-28T08:03:00Z", "four");
    let first = client.get("/api/0/buckets/b/events").json();
    let one = first
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["data"]["title"] == "one")
        .unwrap()["id"]
        .as_i64()
        .unwrap();
    assert_eq!(
        client
            .delete(&format!("/api/0/buckets/b/events/{one}"))
            .status,
        200
    );

    // Refused while the server uses the file; nothing moves.
    let before = names_in(root);
    let db_arg = db.to_str().unwrap();
    let snapshot_arg = snapshot.to_str().unwrap();
    let refused = fails(root, &["restore", snapshot_arg, "--dbpath", db_arg], 1);
    assert!(refused.contains("stop it"), "{refused}");
    assert_eq!(names_in(root), before);
    drop(server);

    let wanted = export(root, &snapshot);
    let said = ok(root, &["restore", snapshot_arg, "--dbpath", db_arg]);
    assert!(said.contains("Checked the snapshot"), "{said}");
    assert!(
        said.contains("Moved the database that was in place aside"),
        "{said}"
    );
    assert!(said.contains("New events get ids from"), "{said}");
    assert_eq!(export(root, &db), wanted);
    // The file that was in place is kept, whole.
    let aside = names_in(root)
        .into_iter()
        .find(|name| {
            name.starts_with("served.db.before-restore-")
                && !name.contains("-wal")
                && !name.contains("-shm")
        })
        .unwrap_or_else(|| panic!("nothing aside: {:?}", names_in(root)));
    let kept = export(root, &root.join(&aside));
    let titles: Vec<&str> = kept["b"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["data"]["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles.len(), 3, "{titles:?}");

    // Served again: the restored history, and a new event's id is above
    // every id issued before the restore.
    let (server, client) = serve_file(root, &db);
    let events = client.get("/api/0/buckets/b/events").json();
    assert_eq!(events.as_array().unwrap().len(), 2);
    let new = insert(&client, "2026-11-28T09:00:00Z", "five");
    assert!(
        new > highest,
        "id {new} was issued before (up to {highest})"
    );
    drop(server);
}

#[test]
fn bad_snapshots_and_targets_are_clear_errors_that_change_nothing() {
    let (dir, db, _backups) = home();
    let root = dir.path();
    let (server, client) = serve_file(root, &db);
    create_bucket(&client, "b");
    insert(&client, "2026-11-28T08:00:00Z", "kept");
    drop(server);
    let wanted = export(root, &db);
    let db_arg = db.to_str().unwrap();

    let text = root.join("notes.txt");
    std::fs::write(&text, "just some words, not a database").unwrap();
    let before = names_in(root);
    for (snapshot, said) in [
        (text.to_str().unwrap(), "not a database"),
        (
            root.join("missing.db").to_str().unwrap(),
            "no snapshot file",
        ),
    ] {
        let error = fails(root, &["restore", snapshot, "--dbpath", db_arg], 1);
        assert!(
            error.contains("not restored") && error.contains(said),
            "{error}"
        );
        assert_eq!(names_in(root), before);
    }
    assert_eq!(export(root, &db), wanted);

    // --to a folder that does not exist, or that cannot be written.
    let missing = root.join("no-such-folder/s.db");
    let error = fails(
        root,
        &[
            "backup",
            "--dbpath",
            db_arg,
            "--to",
            missing.to_str().unwrap(),
        ],
        1,
    );
    assert!(error.contains("no folder"), "{error}");
    let unwritable = fails(
        root,
        &[
            "backup",
            "--dbpath",
            db_arg,
            "--to",
            "/proc/aw-server-snapshot.db",
        ],
        1,
    );
    assert!(unwritable.contains("cannot write"), "{unwritable}");
    assert!(!Path::new("/proc/aw-server-snapshot.db").exists());
    assert_eq!(export(root, &db), wanted);
}
