//! A really full file system: commits fail with an error to their writers,
//! nothing unacknowledged is stored, and writes work again once space is
//! freed.
//!
//! Needs to mount a small tmpfs (root, as in CI). Where mounting is not
//! possible the test says so and passes: the same batch failure path is
//! proven by the unit tests in `src/tests.rs` (injected commit failures and
//! `SQLITE_FULL` from `max_page_count`).

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use aw_datastore::{Datastore, DatastoreError};
use common::*;
use serde_json::json;

/// Unmounts on drop, also when an assertion fails.
struct Mount(PathBuf);

impl Mount {
    fn tmpfs(dir: &Path, size: &str) -> Option<Mount> {
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .ok()?;
        status.success().then(|| Mount(dir.to_path_buf()))
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Writes a file until the file system is full; returns its path.
fn fill(dir: &Path) -> PathBuf {
    let path = dir.join("filler");
    let mut file = std::fs::File::create(&path).unwrap();
    let chunk = vec![0u8; 4096];
    while file.write_all(&chunk).is_ok() {}
    let _ = file.sync_all();
    path
}

#[test]
fn full_disk_fails_commits_and_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let Some(_mount) = Mount::tmpfs(dir.path(), "4m") else {
        println!(
            "skipped: cannot mount a tmpfs here; see src/tests.rs for the same path by injection"
        );
        return;
    };
    let store = Datastore::open(dir.path().join("db.sqlite")).unwrap();
    store.create_bucket(bucket("b")).unwrap();
    store.force_commit().unwrap();
    let filler = fill(dir.path());
    let big = "y".repeat(16 * 1024);
    let mut acknowledged = Vec::new();
    let mut failed = 0;
    for i in 0..200 {
        match store.insert_events("b", vec![event(i, 0, json!({"i": i, "big": big}))]) {
            Ok(stored) => acknowledged.push(stored[0].clone()),
            Err(DatastoreError::Storage(err)) => {
                assert_eq!(
                    err.sqlite_error_code(),
                    Some(rusqlite::ErrorCode::DiskFull),
                    "{err}"
                );
                failed += 1;
            }
            Err(other) => panic!("unexpected error {other}"),
        }
    }
    println!(
        "full disk: {} acknowledged, {failed} refused",
        acknowledged.len()
    );
    assert!(failed > 0, "the file system never filled up");
    store.health().unwrap();
    // Nothing refused is stored; everything acknowledged is.
    assert_eq!(
        store.count_events("b", None, None).wait().unwrap(),
        acknowledged.len() as u64
    );
    for event in &acknowledged {
        assert_eq!(&store.event("b", event.id.unwrap()).wait().unwrap(), event);
    }
    // Space comes back: writes work again and survive a reopen.
    std::fs::remove_file(filler).unwrap();
    let after = store
        .insert_events("b", vec![event(1000, 0, json!({"after": true}))])
        .unwrap();
    store.close().unwrap();
    let store = Datastore::open(dir.path().join("db.sqlite")).unwrap();
    assert_eq!(
        store.count_events("b", None, None).wait().unwrap(),
        acknowledged.len() as u64 + 1
    );
    assert!(store.event("b", after[0].id.unwrap()).wait().is_ok());
    store.close().unwrap();
    let conn = rusqlite::Connection::open(dir.path().join("db.sqlite")).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}
