//! Encryption at rest through the binary: `--db-password` and
//! `AW_DB_PASSWORD`. The default build refuses a password rather than
//! writing plaintext; the `sqlcipher` build (`cargo test -p aw-server
//! --features sqlcipher --test encryption`, run by `scripts/test`) keeps
//! the file encrypted and explains a password that does not fit.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::binary;
#[cfg(feature = "sqlcipher")]
use common::{spawn_listening, Client};
use tempfile::TempDir;

fn server(root: &Path, db: &Path, password: Option<&str>) -> Command {
    let mut command = binary(root);
    command
        .args(["--testing", "--no-legacy-import", "--port", "0"])
        .arg("--dbpath")
        .arg(db)
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    if let Some(password) = password {
        command.env("AW_DB_PASSWORD", password);
    }
    command
}

/// Runs a server that is expected to refuse to start: with status 1 for
/// a bad flag, 65 when the database file cannot be read with the key
/// given (or with none): a start that can never succeed, which the systemd
/// unit does not restart.
fn refused(mut command: Command) -> String {
    let output: Output = command.stderr(Stdio::piped()).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let expected = if stderr.contains("empty database password") {
        1
    } else {
        65
    };
    assert_eq!(output.status.code(), Some(expected), "{stderr}");
    stderr
}

#[test]
fn an_empty_password_is_refused() {
    let root = TempDir::new().unwrap();
    let db = root.path().join("db.sqlite");
    let stderr = refused(server(root.path(), &db, Some("")));
    assert!(stderr.contains("empty database password"), "{stderr}");
    assert!(!db.exists());
}

#[cfg(not(feature = "sqlcipher"))]
#[test]
fn without_the_feature_a_password_stops_the_start_and_no_file_is_made() {
    let root = TempDir::new().unwrap();
    let db = root.path().join("db.sqlite");
    let stderr = refused(server(root.path(), &db, Some("pw")));
    assert!(stderr.contains("sqlcipher"), "{stderr}");
    assert!(!db.exists(), "no plaintext database is created");
    // The flag too, and the offline commands.
    let mut flag = server(root.path(), &db, None);
    flag.args(["--db-password", "pw"]);
    assert!(refused(flag).contains("sqlcipher"));
    let output = Command::new(env!("CARGO_BIN_EXE_aw-server"))
        .args(["import", "--dbpath"])
        .arg(&db)
        .arg("/dev/null")
        .env("AW_DB_PASSWORD", "pw")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(!db.exists());
}

#[cfg(feature = "sqlcipher")]
#[test]
fn an_encrypted_database_keeps_its_data_and_explains_a_wrong_password() {
    let root = TempDir::new().unwrap();
    let db = root.path().join("secret.db");
    let start = |password: &str| {
        let mut command = server(root.path(), &db, Some(password));
        let (child, port) = spawn_listening(&mut command);
        (
            child,
            Client {
                port,
                headers: Vec::new(),
            },
        )
    };
    let stop = |mut child: std::process::Child| {
        common::signal(&child, common::Signal::TERM).unwrap();
        assert_eq!(child.wait().unwrap().code(), Some(0));
    };

    let (child, client) = start("correct horse");
    common::create_bucket(&client, "b");
    let events = serde_json::json!([{"timestamp": "2024-01-01T10:00:00Z", "duration": 5,
                                     "data": {"title": "a very private window title"}}]);
    assert_eq!(
        client.post_json("/api/0/buckets/b/events", &events).status,
        200
    );
    stop(child);

    let bytes = std::fs::read(&db).unwrap();
    assert!(!bytes.starts_with(b"SQLite format 3\0"));
    assert!(!bytes.windows(12).any(|window| window == b"very private"));

    let stderr = refused(server(root.path(), &db, Some("wrong horse")));
    assert!(stderr.contains("password is wrong"), "{stderr}");
    let stderr = refused(server(root.path(), &db, None));
    assert!(stderr.contains("encrypted"), "{stderr}");

    let (child, client) = start("correct horse");
    let stored = client.get("/api/0/buckets/b/events").json();
    assert_eq!(stored[0]["data"]["title"], "a very private window title");
    stop(child);

    // The offline commands take the same password.
    let output = Command::new(env!("CARGO_BIN_EXE_aw-server"))
        .args(["export", "--dbpath"])
        .arg(&db)
        .env("AW_DB_PASSWORD", "correct horse")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("very private"));
}
