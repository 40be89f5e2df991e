//! Servers that host several people (`[users] enabled`), for the hosting
//! and the nodes tests: their config, start, clients and a little data.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{binary, run, spawn_listening, Client, Reply, Stopped};
use serde_json::json;

pub const SERVER_KEY: &str = "the-server-administrators-key";

/// Writes the config of a server that hosts several people.
pub fn hosting_config(root: &Path, extra: &str) {
    let folder = root.join("config/activitywatch/aw-server-rust");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("config.toml"),
        format!("[auth]\napi_key = \"{SERVER_KEY}\"\n\n[users]\nenabled = true\n{extra}"),
    )
    .unwrap();
}

pub fn data_dir(root: &Path) -> PathBuf {
    root.join("hub-data")
}

pub fn start(root: &Path) -> (Stopped, u16) {
    let db = data_dir(root).join("sqlite.db");
    let (child, port) = spawn_listening(
        binary(root)
            .args(["--port", "0", "--dbpath", db.to_str().unwrap()])
            .stdout(std::process::Stdio::null()),
    );
    (Stopped(child), port)
}

pub fn client(port: u16, token: &str) -> Client {
    Client {
        port,
        headers: vec![("Authorization".to_string(), format!("Bearer {token}"))],
    }
}

/// `user add NAME` on the data folder; the first token.
pub fn add_user(root: &Path, name: &str) -> String {
    let data = data_dir(root);
    let output = run(
        root,
        &["user", "add", name, "--data-dir", data.to_str().unwrap()],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

/// A window bucket of `host` with one event of `title`, through `client`.
pub fn seed(client: &Client, host: &str, title: &str) {
    let id = format!("aw-watcher-window_{host}");
    let reply = client.post_json(
        &format!("/api/0/buckets/{id}"),
        &json!({"type": "currentwindow", "client": "test", "hostname": host}),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    for second in 0..3 {
        let reply = client.post_json(
            &format!("/api/0/buckets/{id}/heartbeat?pulsetime=5"),
            &json!({
                "timestamp": format!("2026-12-01T10:00:0{second}Z"),
                "duration": 0,
                "data": {"app": "Editor", "title": title}
            }),
        );
        assert_eq!(reply.status, 200, "{}", reply.text());
    }
}

pub fn titles(client: &Client, bucket: &str) -> Vec<String> {
    client
        .list(&format!("/api/0/buckets/{bucket}/events"))
        .iter()
        .map(|event| event["data"]["title"].as_str().unwrap().to_string())
        .collect()
}

pub fn message(reply: &Reply) -> String {
    reply.json()["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "waited for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}
