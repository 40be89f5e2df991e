//! The `user` command on the binary (`docs/API.md` §10): people added,
//! listed and removed under the data folder, each with a database file of
//! their own and a first admin token printed once; bad names and taken
//! names exit 1 and change nothing; a person's file taken out and served
//! by a server without users serves their history to their token, and to
//! no one without it.

mod common;

use std::path::Path;

use common::{binary, fails, run, spawn_listening, Client, Stopped};
use serde_json::{json, Value};

/// `user …` on the data folder `data`; its output.
fn user(root: &Path, data: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["user"];
    all.extend_from_slice(args);
    all.extend(["--data-dir", data.to_str().unwrap()]);
    run(root, &all)
}

fn added(root: &Path, data: &Path, name: &str) -> String {
    let output = user(root, data, &["add", name]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("shown only once"), "{stderr}");
    let token = String::from_utf8(output.stdout).unwrap().trim().to_string();
    assert!(token.starts_with("awt_"), "{token}");
    token
}

fn listed(root: &Path, data: &Path) -> Vec<Value> {
    let output = user(root, data, &["list", "--json"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice::<Vec<Value>>(&output.stdout).unwrap()
}

fn names(list: &[Value]) -> Vec<&str> {
    list.iter()
        .map(|user| user["name"].as_str().unwrap())
        .collect()
}

#[test]
fn people_are_added_listed_and_removed_each_with_a_file_of_their_own() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let data = root.join("hub-data");
    let alice = added(root, &data, "alice");
    let bob = added(root, &data, "bob");
    assert_ne!(alice, bob);
    assert!(data.join("users/alice/sqlite.db").exists());
    assert!(data.join("users/bob/sqlite.db").exists());
    assert!(data.join("users/index.db").exists());
    let list = listed(root, &data);
    assert_eq!(names(&list), ["alice", "bob"]);
    assert_eq!(list[0]["tokens"], 1);
    assert_eq!(list[0]["buckets"], 0);
    assert_eq!(list[0]["last"], Value::Null);
    assert!(list[0]["bytes"].as_u64().unwrap() > 0);

    // Bad and taken names: exit 1, nothing made.
    let folders = || {
        let mut names: Vec<String> = std::fs::read_dir(data.join("users"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| !name.starts_with("index.db"))
            .collect();
        names.sort();
        names
    };
    let before = folders();
    for (name, says) in [
        ("alice", "there is a user 'alice' already"),
        ("../evil", "is not a user name"),
        ("a/b", "is not a user name"),
        ("Alice", "is not a user name"),
        (".hidden", "is not a user name"),
        ("removed", "keeps for itself"),
    ] {
        let mut args = vec!["user", "add", name, "--data-dir"];
        args.push(data.to_str().unwrap());
        let said = fails(root, &args, 1);
        assert!(said.contains(says), "{name}: {said}");
    }
    assert_eq!(folders(), before, "nothing made");
    assert!(!root.join("evil").exists());
    assert_eq!(names(&listed(root, &data)), ["alice", "bob"]);

    // Removed: moved aside (kept), or deleted.
    let output = user(root, &data, &["remove", "bob"]);
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{said}");
    assert!(said.contains("their data is in"), "{said}");
    let removed: Vec<_> = std::fs::read_dir(data.join("users/removed"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(removed.len(), 1);
    assert!(
        removed[0].join("sqlite.db").exists(),
        "bob's file kept aside"
    );
    assert!(!data.join("users/bob").exists());
    let said = fails(
        root,
        &[
            "user",
            "remove",
            "bob",
            "--data-dir",
            data.to_str().unwrap(),
        ],
        1,
    );
    assert!(said.contains("there is no user 'bob'"), "{said}");
    // The name is free again.
    added(root, &data, "bob");
    let output = user(root, &data, &["remove", "bob", "--delete"]);
    assert!(output.status.success());
    assert!(!data.join("users/bob").exists());
    assert_eq!(names(&listed(root, &data)), ["alice"]);
}

#[test]
fn a_persons_file_taken_home_is_served_to_their_token_by_any_server() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let data = root.join("hub-data");
    let token = added(root, &data, "alice");
    let file = data.join("users/alice/sqlite.db");
    let home = root.join("alice-home.db");
    std::fs::copy(&file, &home).unwrap();

    // A server without users on the copy: her token works, nothing else.
    let (child, port) = spawn_listening(
        binary(root)
            .args(["--port", "0", "--dbpath", home.to_str().unwrap()])
            .stdout(std::process::Stdio::null()),
    );
    let server = Stopped(child);
    let anonymous = Client {
        port,
        headers: Vec::new(),
    };
    assert_eq!(anonymous.get("/api/0/buckets/").status, 401);
    let alice = Client {
        port,
        headers: vec![("Authorization".to_string(), format!("Bearer {token}"))],
    };
    let reply = alice.post_json(
        "/api/0/buckets/aw-watcher-window_laptop",
        &json!({"type": "currentwindow", "client": "test", "hostname": "laptop"}),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    let reply = alice.get("/api/0/access");
    assert_eq!(reply.json()["name"], "alice-admin");
    assert_eq!(reply.json()["scope"], "admin");
    drop(server);

    // Back on the hub's folder, her file lists what it holds.
    std::fs::copy(&home, &file).unwrap();
    let list = listed(root, &data);
    assert_eq!(list[0]["buckets"], 1);
    assert_eq!(list[0]["hosts"], json!(["laptop"]));
}

#[test]
fn a_person_whose_file_is_served_is_not_removed() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let data = root.join("hub-data");
    added(root, &data, "carol");
    let file = data.join("users/carol/sqlite.db");
    let (child, _port) = spawn_listening(
        binary(root)
            .args(["--port", "0", "--dbpath", file.to_str().unwrap()])
            .stdout(std::process::Stdio::null()),
    );
    let server = Stopped(child);
    let said = fails(
        root,
        &[
            "user",
            "remove",
            "carol",
            "--data-dir",
            data.to_str().unwrap(),
        ],
        1,
    );
    assert!(said.contains("in use by a running server"), "{said}");
    assert!(file.exists());
    drop(server);
    assert_eq!(names(&listed(root, &data)), ["carol"]);
}

#[test]
fn a_persons_further_tokens_are_made_on_their_file_and_indexed() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let data = root.join("hub-data");
    added(root, &data, "dave");
    let data_arg = data.to_str().unwrap();
    let output = run(
        root,
        &[
            "token",
            "add",
            "phone",
            "--scope",
            "write",
            "--host",
            "phone",
            "--user",
            "dave",
            "--data-dir",
            data_arg,
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout)
        .trim()
        .starts_with("awt_"));
    let list = listed(root, &data);
    assert_eq!(
        (
            list[0]["tokens"].as_u64(),
            list[0]["indexed_tokens"].as_u64()
        ),
        (Some(2), Some(2))
    );
    let output = run(
        root,
        &["token", "list", "--user", "dave", "--data-dir", data_arg],
    );
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("dave-admin") && text.contains("phone"),
        "{text}"
    );
    let output = run(
        root,
        &[
            "token",
            "revoke",
            "phone",
            "--user",
            "dave",
            "--data-dir",
            data_arg,
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let list = listed(root, &data);
    assert_eq!(
        (
            list[0]["tokens"].as_u64(),
            list[0]["indexed_tokens"].as_u64()
        ),
        (Some(1), Some(1))
    );
    // Nobody of that name: exit 1, nothing made.
    let said = fails(
        root,
        &[
            "token",
            "add",
            "x",
            "--scope",
            "read",
            "--user",
            "erin",
            "--data-dir",
            data_arg,
        ],
        1,
    );
    assert!(said.contains("there is no user 'erin'"), "{said}");
    assert!(!data.join("users/erin").exists());
}
