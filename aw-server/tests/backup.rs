//! Snapshots through the API (`POST /api/0/backup`) and the `backup`
//! command, online and on the file: written into the backup
//! folder or to `--to`, complete, never replacing a file; bad targets are
//! clear errors that write nothing. The `[backup]` schedule rotates the
//! folder only after a good snapshot, its status is behind the API key,
//! and a full disk (a tmpfs) fails a snapshot without losing an older one.

mod common;
#[path = "../../aw-datastore/tests/support/tmpfs.rs"]
mod tmpfs;

use std::path::Path;

use aw_datastore::{Datastore, EventQuery};
use common::{create_bucket, event, fails, names_in, ok, serve_file, TestServer};
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

#[test]
fn the_api_writes_snapshots_into_the_backup_folder_only() {
    let folder = tempfile::tempdir().unwrap();
    let backups = folder.path().join("backups");
    let db = folder.path().join("served.db");
    let datastore = Datastore::open(&db).unwrap();
    let server = TestServer::start_on(
        None,
        datastore,
        |config| config.backup.dir = backups.clone(),
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
    assert_eq!(names_in(&backups).len(), 2, "{:?}", names_in(&backups));
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
    common::write_testing_config(root, &common::backup_config(&backups));
    let (server, client) = serve_file(root, &db);
    let port = client.port.to_string();
    create_bucket(&client, "b");
    let events = json!([event("2026-11-28T10:00:00Z", 5.0, json!({"title": "kept"}))]);
    assert_eq!(
        client.post_json("/api/0/buckets/b/events", &events).status,
        200
    );

    // Online: into the server's backup folder, named as asked for.
    let said = ok(root, &["backup", "--testing", "--port", &port]);
    assert!(said.contains("Snapshot written:"), "{said}");
    assert_eq!(names_in(&backups).len(), 1);
    assert!(names_in(&backups)[0].starts_with("aw-server-manual-"));
    // --to while the server runs: the command reads the served file
    // itself, beside the server, with every acknowledged write in it.
    let to = root.join("mine.db");
    let served = root.join("while-served.db");
    let more = json!([event(
        "2026-11-28T10:05:00Z",
        5.0,
        json!({"title": "just now"})
    )]);
    assert_eq!(
        client.post_json("/api/0/buckets/b/events", &more).status,
        200
    );
    let db_arg = db.to_str().unwrap();
    let said = ok(
        root,
        &[
            "backup",
            "--testing",
            "--port",
            &port,
            "--dbpath",
            db_arg,
            "--to",
            served.to_str().unwrap(),
        ],
    );
    assert!(said.contains("Snapshot written:"), "{said}");
    assert_eq!(titles(&served, "b"), ["just now", "kept"]);
    let partials = names_in(root);
    assert!(
        !partials.iter().any(|name| name.ends_with(".partial")),
        "{partials:?}"
    );
    // The served file is not the default one: said, nothing written.
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
    assert!(refused.contains("--dbpath"), "{refused}");
    assert!(!to.exists());
    // An existing file is never replaced, served or not.
    let again = fails(
        root,
        &[
            "backup",
            "--dbpath",
            db_arg,
            "--to",
            served.to_str().unwrap(),
        ],
        1,
    );
    assert!(again.contains("exists already"), "{again}");
    assert_eq!(
        client
            .get("/api/0/buckets/b/events")
            .json()
            .as_array()
            .unwrap()
            .len(),
        2
    );
    drop(server);

    // On the file: to --to, which must not exist, in a folder that does.
    ok(
        root,
        &["backup", "--dbpath", db_arg, "--to", to.to_str().unwrap()],
    );
    assert_eq!(titles(&to, "b"), ["just now", "kept"]);
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

/// Polls `status` until `done` holds of it, or fails after a generous
/// deadline.
fn wait_for_status(
    client: &common::Client,
    done: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let reply = client.get("/api/0/backup/status");
        assert_eq!(reply.status, 200, "{}", reply.text());
        let status = reply.json();
        if done(&status) {
            return status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the backup status never got there: {status}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

fn settings(dir: &Path, enabled: bool, interval_secs: u64) -> aw_jobs::backup::BackupSettings {
    aw_jobs::backup::BackupSettings {
        enabled,
        dir: dir.to_path_buf(),
        interval: std::time::Duration::from_secs(interval_secs),
        keep_daily: 1,
        keep_weekly: 0,
        keep_manual: 10,
    }
}

#[test]
fn scheduled_snapshots_rotate_the_folder_and_report_their_status() {
    let folder = tempfile::tempdir().unwrap();
    let backups = folder.path().join("backups");
    std::fs::create_dir_all(&backups).unwrap();
    // Left from before: a snapshot of another week, a killed run's partial
    // file (an hour old), and a file of the user's.
    let old = backups.join("aw-server-2026-11-01T00-00-00Z.db");
    std::fs::write(&old, b"an older snapshot").unwrap();
    let partial = backups.join("aw-server-2026-11-01T00-00-01Z.db.partial");
    let file = std::fs::File::create(&partial).unwrap();
    file.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 3600))
        .unwrap();
    drop(file);
    std::fs::write(backups.join("notes.txt"), b"mine").unwrap();

    let key = "backup-key";
    let datastore = Datastore::open(folder.path().join("served.db")).unwrap();
    let server = TestServer::start_on(
        None,
        datastore,
        |config| {
            config.backup = settings(&backups, true, 1);
            config.api_key = Some(key.to_string());
        },
        |rocket| rocket,
    );
    // The status names paths: behind the API key.
    let anonymous = server.client();
    assert_eq!(anonymous.get("/api/0/backup/status").status, 401);
    let client = server
        .client()
        .with_header("Authorization", &format!("Bearer {key}"));
    create_bucket(&client, "b");

    // Snapshots every second; after each good one only the newest stays.
    let status = wait_for_status(&client, |status| {
        status["last"]["outcome"] == "ok"
            && status["last"]["scheduled"] == true
            && status["snapshots"].as_array().is_some_and(|s| s.len() == 1)
            && !old.exists()
    });
    assert_eq!(status["enabled"], true);
    assert_eq!(status["interval_seconds"], 1);
    assert_eq!(status["dir"], backups.to_str().unwrap());
    let first = status["snapshots"][0]["path"].as_str().unwrap().to_string();
    let status = wait_for_status(&client, |status| {
        status["snapshots"][0]["path"].as_str() != Some(first.as_str())
    });
    assert!(!Path::new(&first).exists(), "rotated away: {first}");
    assert_eq!(status["snapshots"].as_array().unwrap().len(), 1);
    let names = names_in(&backups);
    assert!(names.contains(&"notes.txt".to_string()), "{names:?}");
    assert!(!partial.exists(), "the stale partial file stays: {names:?}");
    assert_eq!(
        names.iter().filter(|name| name.ends_with(".db")).count(),
        1,
        "{names:?}"
    );
    assert!(status["next"].is_string(), "{status}");
    drop(server);
}

#[test]
fn a_full_disk_fails_the_snapshot_and_keeps_the_older_ones() {
    let folder = tempfile::tempdir().unwrap();
    let backups = folder.path().join("backups");
    std::fs::create_dir_all(&backups).unwrap();
    let mount = tmpfs::mounted(
        &backups,
        "4m",
        "a_full_disk_fails_the_snapshot_and_keeps_the_older_ones",
        "the same failure is made below by a folder this user cannot write",
    );
    let datastore = Datastore::open(folder.path().join("served.db")).unwrap();
    let server = TestServer::start_on(
        None,
        datastore,
        // The schedule on (a day apart): the rotation runs after a good one.
        |config| config.backup = settings(&backups, true, 24 * 60 * 60),
        |rocket| rocket,
    );
    let client = server.client();
    create_bucket(&client, "b");
    // About 1 MB of history: more than the full disk has left.
    let events: Vec<serde_json::Value> = (0..4_000)
        .map(|n| {
            event(
                &format!(
                    "2026-11-{:02}T{:02}:{:02}:00Z",
                    1 + n / 1440,
                    n / 60 % 24,
                    n % 60
                ),
                50.0,
                json!({"title": format!("window {n} {}", "x".repeat(150))}),
            )
        })
        .collect();
    assert_eq!(
        client
            .post_json("/api/0/buckets/b/events", &json!(events))
            .status,
        200
    );
    // The schedule's first snapshot, at start.
    let status = wait_for_status(&client, |status| status["last"]["outcome"] == "ok");
    let good = status["last"]["path"].as_str().unwrap().to_string();
    let good_bytes = std::fs::read(&good).unwrap();

    let filler = match &mount {
        Some(_) => Some(tmpfs::fill(&backups)),
        None => {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&backups, std::fs::Permissions::from_mode(0o555)).unwrap();
            None
        }
    };
    let reply = client.post("/api/0/backup", b"");
    let expected = if mount.is_some() { 507 } else { 500 };
    let message = reply.assert_error(expected);
    assert!(!message.is_empty());
    let status = client.get("/api/0/backup/status").json();
    assert_eq!(status["last"]["outcome"], "failed", "{status}");
    assert!(status["last"]["error"].is_string());
    // Nothing partial left, the older snapshot whole.
    let names = names_in(&backups);
    assert!(
        !names.iter().any(|name| name.ends_with(".partial")),
        "{names:?}"
    );
    assert_eq!(std::fs::read(&good).unwrap(), good_bytes);

    // Space comes back: the next snapshot is good; asked for, it leaves
    // the schedule's snapshot where it is.
    match filler {
        Some(filler) => std::fs::remove_file(filler).unwrap(),
        None => {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&backups, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    let reply = client.post("/api/0/backup", b"");
    assert_eq!(reply.status, 200, "{}", reply.text());
    let newest = reply.json()["path"].as_str().unwrap().to_string();
    assert_eq!(titles(Path::new(&newest), "b").len(), 4_000);
    assert_eq!(std::fs::read(&good).unwrap(), good_bytes);
    assert_ne!(good, newest);
    drop(server);
    drop(mount);
}

#[test]
fn snapshots_asked_for_are_named_apart_and_rotated_among_themselves() {
    let folder = tempfile::tempdir().unwrap();
    let backups = folder.path().join("backups");
    std::fs::create_dir_all(&backups).unwrap();
    // This morning's scheduled snapshot.
    let morning = backups.join("aw-server-2026-11-01T06-00-00Z.db");
    std::fs::write(&morning, b"the morning's snapshot").unwrap();
    let db = folder.path().join("served.db");
    let mut with = settings(&backups, false, 3600);
    with.keep_manual = 2;
    let server = TestServer::start_on(
        None,
        Datastore::open(&db).unwrap(),
        move |config| config.backup = with,
        |rocket| rocket,
    );
    let client = server.client();
    create_bucket(&client, "b");
    let mut written = Vec::new();
    for _ in 0..3 {
        let reply = client.post("/api/0/backup", b"");
        assert_eq!(reply.status, 200, "{}", reply.text());
        written.push(reply.json());
    }
    for answer in &written {
        let name = Path::new(answer["path"].as_str().unwrap())
            .file_name()
            .unwrap();
        assert!(
            name.to_string_lossy().starts_with("aw-server-manual-"),
            "{answer}"
        );
    }
    assert_eq!(written[0]["removed"], json!([]));
    assert_eq!(written[1]["removed"], json!([]));
    assert_eq!(written[2]["removed"], json!([written[0]["path"]]));
    // The scheduled one is not theirs to remove.
    assert!(morning.exists());
    let status = client.get("/api/0/backup/status").json();
    assert_eq!(status["keep_manual"], 2);
    let kinds: Vec<bool> = status["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|snapshot| snapshot["manual"].as_bool().unwrap())
        .collect();
    assert_eq!(kinds, [false, true, true]);
    drop(server);

    // Nor the schedule's rotation theirs.
    let server = TestServer::start_on(
        None,
        Datastore::open(&db).unwrap(),
        |config| config.backup = settings(&backups, true, 1),
        |rocket| rocket,
    );
    let client = server.client();
    wait_for_status(&client, |status| {
        status["last"]["scheduled"] == true
            && status["last"]["outcome"] == "ok"
            && !morning.exists()
    });
    let manual = names_in(&backups)
        .into_iter()
        .filter(|name| name.starts_with("aw-server-manual-"))
        .count();
    assert_eq!(manual, 2);
    drop(server);
}
