//! One server for all devices, on the binary: two devices
//! forward their own buckets to a hub (three servers on loopback, each
//! with its own folders), with write tokens made by the `token` command,
//! while the two devices also sync through a folder. The hub ends equal to
//! each device event for event, through new events, heartbeats, deletes,
//! range deletes and redactions; SIGKILL of a device and of the hub in
//! the middle of a backlog, the hub down for a while and a revoked token
//! lose nothing and duplicate nothing, and the device says why it stopped.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{
    binary, encode, signal, spawn_listening, write_testing_config, Client, Signal, Stopped,
};
use serde_json::{json, Value};

const LAPTOP: &str = "aw-watcher-window_laptop";
const LAPTOP_AFK: &str = "aw-watcher-afk_laptop";
const DESKTOP: &str = "aw-watcher-window_desktop";

/// One server process on its own folders under `root`.
struct Node {
    root: std::path::PathBuf,
    process: Option<Stopped>,
    client: Client,
}

impl Node {
    /// Starts the binary in testing mode under `root` on `port` (0: any).
    fn start(root: &Path, port: u16) -> Node {
        let (child, port) = spawn_listening(
            binary(root)
                .args(["--testing", "--port", &port.to_string()])
                .stdout(std::process::Stdio::null()),
        );
        Node {
            root: root.to_path_buf(),
            process: Some(Stopped(child)),
            client: Client {
                port,
                headers: Vec::new(),
            },
        }
    }

    fn restart(&mut self) {
        self.stop();
        let again = Node::start(&self.root, self.client.port);
        self.process = again.process;
    }

    fn stop(&mut self) {
        drop(self.process.take());
    }

    fn kill(&mut self) {
        if let Some(mut process) = self.process.take() {
            signal(&process.0, Signal::KILL).unwrap();
            process.0.wait().unwrap();
            std::mem::forget(process);
        }
    }
}

/// The database file a testing server under `root` serves.
fn db_of(root: &Path) -> std::path::PathBuf {
    root.join("data/activitywatch/aw-server-rust/sqlite-testing.db")
}

/// Makes a token with the `token` command on the stopped hub's file.
fn token(hub_root: &Path, args: &[&str]) -> String {
    let db = db_of(hub_root);
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let output = binary(hub_root)
        .args(["token", "add"])
        .args(args)
        .arg("--dbpath")
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

/// The hub's tokens, made with the command: a write token for the laptop's
/// host, one for the desktop's, an admin token.
fn hub_tokens(hub_root: &Path) -> [String; 3] {
    // The admin's first: a write token cannot be the first credential.
    let admin = token(hub_root, &["admin", "--scope", "admin"]);
    [
        token(
            hub_root,
            &["laptop", "--scope", "write", "--host", "laptop"],
        ),
        token(
            hub_root,
            &["desktop", "--scope", "write", "--host", "desktop"],
        ),
        admin,
    ]
}

fn device_config(hub_port: u16, token: &str, folder: &Path) -> String {
    format!(
        "[hub]\nurl = \"http://127.0.0.1:{hub_port}\"\ntoken = \"{token}\"\ninterval = 1\n\n\
         [sync]\nenabled = true\nfolder = {:?}\ninterval = 1\n",
        folder.to_str().unwrap()
    )
}

fn make_bucket(client: &Client, id: &str, host: &str) {
    let reply = client.post_json(
        &format!("/api/0/buckets/{id}"),
        &json!({"type": "currentwindow", "client": "aw-watcher-window", "hostname": host}),
    );
    assert!(
        reply.status == 200 || reply.status == 304,
        "{}",
        reply.text()
    );
}

fn at(seconds: i64) -> String {
    chrono::DateTime::from_timestamp(1_790_000_000 + seconds, 0)
        .unwrap()
        .to_rfc3339()
}

fn window(seconds: i64, duration: f64, title: &str) -> Value {
    json!({"timestamp": at(seconds), "duration": duration,
           "data": {"app": "editor", "title": title}})
}

/// The bucket's events without ids, oldest first; `None` when it is not
/// there.
fn events(client: &Client, bucket_id: &str) -> Option<Vec<Value>> {
    let reply = client.get(&format!(
        "/api/0/buckets/{}/events?limit=-1",
        encode(bucket_id)
    ));
    if reply.status == 404 {
        return None;
    }
    assert_eq!(reply.status, 200, "{}", reply.text());
    let mut list: Vec<Value> = reply.json().as_array().unwrap().clone();
    for event in &mut list {
        event.as_object_mut().unwrap().remove("id");
    }
    list.reverse();
    Some(list)
}

/// The ids of the bucket's events.
fn event_ids(client: &Client, bucket_id: &str) -> Vec<i64> {
    client
        .list(&format!(
            "/api/0/buckets/{}/events?limit=-1",
            encode(bucket_id)
        ))
        .iter()
        .map(|event| event["id"].as_i64().unwrap())
        .collect()
}

fn count(client: &Client, bucket_id: &str) -> u64 {
    let reply = client.get(&format!(
        "/api/0/buckets/{}/events/count",
        encode(bucket_id)
    ));
    if reply.status != 200 {
        return 0;
    }
    reply.text().trim().parse().unwrap_or(0)
}

/// Polls `check` until it holds or a generous deadline passes.
fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(90);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn equal_on_hub(hub: &Client, device: &Client, bucket_id: &str) -> bool {
    let here = events(device, bucket_id);
    here.is_some() && events(hub, bucket_id) == here
}

fn hub_status(device: &Client) -> Value {
    device.get("/api/0/sync/status").json()["hub"].clone()
}

#[test]
fn two_devices_and_a_hub_end_equal_while_the_devices_also_sync_through_a_folder() {
    let temp = tempfile::tempdir().unwrap();
    let (hub_root, a_root, b_root) = (
        temp.path().join("hub"),
        temp.path().join("laptop"),
        temp.path().join("desktop"),
    );
    let shared = temp.path().join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    let [laptop_token, desktop_token, admin] = hub_tokens(&hub_root);
    let hub = Node::start(&hub_root, 0);
    let hub_client = hub
        .client
        .clone()
        .with_header("Authorization", &format!("Bearer {admin}"));
    write_testing_config(
        &a_root,
        &device_config(hub.client.port, &laptop_token, &shared),
    );
    write_testing_config(
        &b_root,
        &device_config(hub.client.port, &desktop_token, &shared),
    );
    let a = Node::start(&a_root, 0);
    let b = Node::start(&b_root, 0);

    make_bucket(&a.client, LAPTOP, "laptop");
    make_bucket(&a.client, LAPTOP_AFK, "laptop");
    make_bucket(&b.client, DESKTOP, "desktop");
    let history: Vec<Value> = (0..300)
        .map(|i| window(i * 60, 30.0, &format!("doc {}", i % 7)))
        .collect();
    assert_eq!(
        a.client
            .post_json(&format!("/api/0/buckets/{LAPTOP}/events"), &json!(history))
            .status,
        200
    );
    for i in 0..20 {
        let afk = json!({"timestamp": at(i * 100), "duration": 0.0, "data": {"status": "not-afk"}});
        a.client.post_json(
            &format!("/api/0/buckets/{LAPTOP_AFK}/heartbeat?pulsetime=120"),
            &afk,
        );
        let desk = window(i * 10, 0.0, "terminal");
        b.client.post_json(
            &format!("/api/0/buckets/{DESKTOP}/heartbeat?pulsetime=30"),
            &desk,
        );
    }
    for bucket in [LAPTOP, LAPTOP_AFK] {
        eventually(bucket, || equal_on_hub(&hub_client, &a.client, bucket));
    }
    eventually(DESKTOP, || equal_on_hub(&hub_client, &b.client, DESKTOP));

    // Heartbeats keep extending the newest event: the hub follows.
    for i in 20..30 {
        let desk = window(i * 10, 0.0, "terminal");
        b.client.post_json(
            &format!("/api/0/buckets/{DESKTOP}/heartbeat?pulsetime=30"),
            &desk,
        );
    }
    eventually("the extended event", || {
        equal_on_hub(&hub_client, &b.client, DESKTOP)
    });
    assert_eq!(count(&hub_client, DESKTOP), 1);

    // Deletes, a range delete and a redaction on the laptop reach the hub.
    let stored = a
        .client
        .get(&format!("/api/0/buckets/{LAPTOP}/events?limit=-1"))
        .json();
    let some_id = stored[5]["id"].as_i64().unwrap();
    assert_eq!(
        a.client
            .delete(&format!("/api/0/buckets/{LAPTOP}/events/{some_id}"))
            .status,
        200
    );
    let range = format!(
        "/api/0/buckets/{LAPTOP}/events?start={}&end={}",
        encode(&at(600)),
        encode(&at(1_800))
    );
    assert_eq!(a.client.delete(&range).status, 200);
    let rules = json!([{"enabled": true, "bucket_prefix": "aw-watcher-window", "field": "title",
                        "pattern": "doc 3", "action": "redact", "replacement": "[private]"}]);
    let saved = a
        .client
        .post_json("/api/0/settings/privacy_filters", &rules);
    assert!(saved.status < 300, "{}", saved.text());
    assert_eq!(a.client.post("/api/0/privacy/apply", b"").status, 200);
    eventually("the laptop's changes on the hub", || {
        equal_on_hub(&hub_client, &a.client, LAPTOP)
    });
    let on_hub = events(&hub_client, LAPTOP).unwrap();
    assert!(on_hub.iter().any(|e| e["data"]["title"] == "[private]"));
    assert!(!on_hub.iter().any(|e| e["data"]["title"] == "doc 3"));

    // Meanwhile folder sync: each device has the other's copy, equal too.
    let copy = format!("{DESKTOP}-synced-from-desktop");
    eventually("the desktop's copy on the laptop", || {
        events(&a.client, &copy) == events(&b.client, DESKTOP)
    });
    let laptop_copy = format!("{LAPTOP}-synced-from-laptop");
    eventually("the laptop's copy on the desktop", || {
        events(&b.client, &laptop_copy) == events(&a.client, LAPTOP)
    });
    // Copies are not forwarded: the hub has each bucket once.
    let hub_buckets = hub_client.get("/api/0/buckets/").json();
    let mut ids: Vec<&String> = hub_buckets.as_object().unwrap().keys().collect();
    ids.sort();
    assert_eq!(ids, [LAPTOP_AFK, DESKTOP, LAPTOP]);

    // The status tells the passes.
    let status = hub_status(&a.client);
    assert!(status["passes"].as_u64().unwrap() > 0, "{status}");
    assert!(status["last_error"].is_null(), "{status}");

    // A bucket deleted on the laptop leaves the hub.
    assert_eq!(
        a.client
            .delete(&format!("/api/0/buckets/{LAPTOP_AFK}"))
            .status,
        200
    );
    eventually("the deleted bucket gone from the hub", || {
        events(&hub_client, LAPTOP_AFK).is_none()
    });
}

/// A backlog big enough that a pass takes a while.
fn backlog(events: usize) -> Value {
    let list: Vec<Value> = (0..events as i64)
        .map(|i| window(i * 20, 10.0, &format!("item {}", i % 101)))
        .collect();
    json!({"buckets": {LAPTOP: {"id": LAPTOP, "type": "currentwindow",
        "client": "aw-watcher-window", "hostname": "laptop", "events": list}}})
}

#[test]
fn kills_an_absent_hub_and_a_revoked_token_lose_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let (hub_root, a_root) = (temp.path().join("hub"), temp.path().join("laptop"));
    let shared = temp.path().join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    let admin = token(&hub_root, &["admin", "--scope", "admin"]);
    let laptop_token = token(
        &hub_root,
        &["laptop", "--scope", "write", "--host", "laptop"],
    );
    let mut hub = Node::start(&hub_root, 0);
    let hub_port = hub.client.port;
    let hub_client = || hub_client_of(hub_port, &admin);
    // The device starts with its backlog already stored, so forwarding
    // begins at its start.
    write_testing_config(
        &a_root,
        &device_config(hub.client.port, &laptop_token, &shared),
    );
    let mut a = Node::start(&a_root, 0);
    let total = 60_000;
    assert_eq!(
        a.client.post_json("/api/0/import", &backlog(total)).status,
        200
    );

    // SIGKILL of the device in the middle of the backlog.
    let mut killed_midway = false;
    eventually("some of the backlog on the hub", || {
        let got = count(&hub_client(), LAPTOP);
        if got > 0 && got < total as u64 {
            a.kill();
            killed_midway = true;
        }
        got > 0
    });
    if !killed_midway {
        eprintln!("NOTE: the backlog reached the hub before the device could be killed midway");
        a.kill();
    }
    a.restart();
    eventually("the backlog on the hub after the device's kill", || {
        count(&hub_client(), LAPTOP) == total as u64
    });
    assert!(equal_on_hub(&hub_client(), &a.client, LAPTOP));

    // SIGKILL of the hub in the middle of a second backlog.
    let more: Vec<Value> = (0..20_000)
        .map(|i| window(2_000_000 + i * 20, 10.0, "later"))
        .collect();
    assert_eq!(
        a.client
            .post_json(&format!("/api/0/buckets/{LAPTOP}/events"), &json!(more))
            .status,
        200
    );
    let second = (total + 20_000) as u64;
    let mut hub_killed_midway = false;
    eventually("some of the second backlog on the hub", || {
        let got = count(&hub_client(), LAPTOP);
        if got > total as u64 && got < second {
            hub.kill();
            hub_killed_midway = true;
        }
        got > total as u64
    });
    if !hub_killed_midway {
        eprintln!("NOTE: the second backlog reached the hub before it could be killed midway");
        hub.kill();
    }
    // Down for a while: the device reports it and retries.
    eventually("the device reporting the absent hub", || {
        let status = hub_status(&a.client);
        status["failures"].as_u64().unwrap_or(0) > 0 && status["last_error"].is_string()
    });
    let status = hub_status(&a.client);
    assert!(
        status["last_error"]
            .as_str()
            .unwrap()
            .contains("did not answer"),
        "{status}"
    );
    assert!(status["stopped"].is_null(), "{status}");
    hub.restart();
    eventually("the hub equal again after its kill", || {
        equal_on_hub(&hub_client(), &a.client, LAPTOP)
    });
    assert_eq!(count(&hub_client(), LAPTOP), second);

    // A revoked token stops forwarding with a clear status; the device
    // goes on serving its watchers.
    assert_eq!(hub_client().delete("/api/0/tokens/laptop").status, 200);
    let heartbeat = window(3_000_000, 0.0, "after revoke");
    a.client.post_json(
        &format!("/api/0/buckets/{LAPTOP}/heartbeat?pulsetime=10"),
        &heartbeat,
    );
    eventually("the device saying its token was refused", || {
        hub_status(&a.client)["stopped"].is_string()
    });
    let status = hub_status(&a.client);
    let stopped = status["stopped"].as_str().unwrap();
    assert!(stopped.contains("refused this device's token"), "{stopped}");
    assert!(stopped.contains("HTTP 401"), "{stopped}");
    assert_eq!(count(&a.client, LAPTOP), second + 1);
    assert_eq!(count(&hub_client(), LAPTOP), second);
    let run = a.client.post("/api/0/sync/run?mode=hub", b"");
    assert_eq!(run.status, 502, "{}", run.text());
    assert!(run.json()["message"].as_str().unwrap().contains("refused"));
    let heartbeat = window(3_000_001, 0.0, "after revoke");
    let reply = a.client.post_json(
        &format!("/api/0/buckets/{LAPTOP}/heartbeat?pulsetime=10"),
        &heartbeat,
    );
    assert_eq!(reply.status, 200);
}

fn hub_client_of(port: u16, admin: &str) -> Client {
    Client {
        port,
        headers: vec![("Authorization".to_string(), format!("Bearer {admin}"))],
    }
}

#[test]
fn a_self_signed_hub_is_reached_with_its_ca_file_and_refused_without() {
    let temp = tempfile::tempdir().unwrap();
    let (hub_root, a_root, b_root) = (
        temp.path().join("hub"),
        temp.path().join("laptop"),
        temp.path().join("desktop"),
    );
    std::fs::create_dir_all(&hub_root).unwrap();
    let (cert, key) = (hub_root.join("cert.pem"), hub_root.join("key.pem"));
    let made = std::process::Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
        ])
        .arg("/CN=hub.local")
        .args(["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
        // Its own trust anchor, so not a CA (rustls refuses a CA
        // certificate presented as the server's).
        .args(["-addext", "basicConstraints=critical,CA:FALSE"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output();
    match made {
        Ok(output) if output.status.success() => {}
        other => panic!(
            "openssl is needed to make this test's certificate (Debian's openssl package): \
             {other:?}"
        ),
    }
    write_testing_config(
        &hub_root,
        &format!("tls_cert = {:?}\ntls_key = {:?}\n", cert, key),
    );
    let [laptop_token, desktop_token, admin] = hub_tokens(&hub_root);
    let hub = Node::start(&hub_root, 0);
    let url = format!("https://127.0.0.1:{}", hub.client.port);
    write_testing_config(
        &a_root,
        &format!(
            "[hub]\nurl = \"{url}\"\ntoken = \"{laptop_token}\"\nca_file = {:?}\ninterval = 1\n",
            cert
        ),
    );
    write_testing_config(
        &b_root,
        &format!("[hub]\nurl = \"{url}\"\ntoken = \"{desktop_token}\"\ninterval = 1\n"),
    );
    let a = Node::start(&a_root, 0);
    let b = Node::start(&b_root, 0);
    make_bucket(&a.client, LAPTOP, "laptop");
    make_bucket(&b.client, DESKTOP, "desktop");
    for (client, bucket) in [(&a.client, LAPTOP), (&b.client, DESKTOP)] {
        let reply = client.post_json(
            &format!("/api/0/buckets/{bucket}/events"),
            &json!([window(0, 5.0, "over TLS")]),
        );
        assert_eq!(reply.status, 200);
    }
    // The device with the hub's certificate forwards over HTTPS.
    eventually("the laptop's event on the hub", || {
        let status = hub_status(&a.client);
        status["last_pass"]["sent"].as_u64().unwrap_or(0) > 0
    });
    let listed = std::process::Command::new("curl")
        .args(["--silent", "--show-error", "--cacert"])
        .arg(&cert)
        .args(["-H", &format!("Authorization: Bearer {admin}")])
        .arg(format!("{url}/api/0/buckets/{LAPTOP}/events"))
        .output()
        .expect("curl is needed to read the hub over HTTPS (Debian's curl package)");
    let on_hub: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(on_hub[0]["data"]["title"], "over TLS", "{on_hub}");
    // The one without it does not trust the hub, and says so; it keeps
    // retrying (a certificate may be fixed on the hub's side).
    eventually("the desktop's certificate failure", || {
        hub_status(&b.client)["last_error"].is_string()
    });
    let status = hub_status(&b.client);
    let error = status["last_error"].as_str().unwrap();
    assert!(error.contains("did not answer"), "{error}");
    assert!(error.to_lowercase().contains("certificate"), "{error}");
    assert!(status["stopped"].is_null(), "{status}");
}

/// A device served in this process, forwarding to `hub_port` with `token`
/// as host `laptop`; its schedule's passes are an hour apart, so the test
/// asks for each.
fn device_in_process(hub_port: u16, token: &str) -> common::TestServer {
    let token = token.to_string();
    common::TestServer::start_with(move |config| {
        config.hostname = "laptop".to_string();
        config.hub = Some(aw_jobs::hub::HubSettings {
            url: format!("http://127.0.0.1:{hub_port}"),
            token,
            ca_file: None,
            interval: Duration::from_secs(3600),
            buckets: None,
        });
    })
}

fn create(client: &Client, id: &str, kind: &str, host: &str) {
    let reply = client.post_json(
        &format!("/api/0/buckets/{id}"),
        &json!({"type": kind, "client": "test", "hostname": host}),
    );
    assert!(
        reply.status == 200 || reply.status == 304,
        "{}",
        reply.text()
    );
}

#[test]
fn a_bucket_of_another_host_is_skipped_and_a_hostless_one_goes_as_the_devices() {
    let hub = common::TestServer::start();
    let hub_client = hub.client();
    // The first token is the admin's; the device's is for its own host only.
    let made = hub_client.post_json("/api/0/tokens", &json!({"name": "me", "scope": "admin"}));
    assert_eq!(made.status, 201, "{}", made.text());
    let admin = hub_client.clone().with_header(
        "Authorization",
        &format!("Bearer {}", made.json()["token"].as_str().unwrap()),
    );
    let made = admin.post_json(
        "/api/0/tokens",
        &json!({"name": "laptop", "scope": "write", "hosts": ["laptop"]}),
    );
    assert_eq!(made.status, 201, "{}", made.text());
    let device = device_in_process(hub.port, made.json()["token"].as_str().unwrap());
    let client = device.client();
    create(&client, LAPTOP, "currentwindow", "laptop");
    create(
        &client,
        "aw-watcher-web-chrome",
        "web.tab.current",
        "unknown",
    );
    create(&client, "aw-watcher-window_vm", "currentwindow", "vm");
    for id in [LAPTOP, "aw-watcher-web-chrome", "aw-watcher-window_vm"] {
        let reply = client.post_json(
            &format!("/api/0/buckets/{id}/events"),
            &json!([window(0, 5.0, "a"), window(10, 5.0, "b")]),
        );
        assert_eq!(reply.status, 200, "{}", reply.text());
    }
    let reply = client.post("/api/0/sync/run?mode=hub", b"");
    assert_eq!(reply.status, 200, "{}", reply.text());
    let pass = reply.json();
    assert_eq!(pass["buckets"], 2, "{pass}");
    assert_eq!(
        pass["skipped"][0]["bucket"], "aw-watcher-window_vm",
        "{pass}"
    );
    let reason = pass["skipped"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("--host vm") && reason.contains("[hub] buckets"),
        "{reason}"
    );
    // The status names it and the schedule goes on.
    let status = client.get("/api/0/sync/status").json();
    assert_eq!(status["hub"]["stopped"], Value::Null, "{status}");
    assert_eq!(status["hub"]["last_pass"]["skipped"][0]["host"], "vm");
    // On the hub: the device's own buckets, the hostless one as the laptop's.
    let buckets = admin.get("/api/0/buckets/").json();
    assert_eq!(
        buckets["aw-watcher-web-chrome"]["hostname"], "laptop",
        "{buckets}"
    );
    assert!(buckets.get(LAPTOP).is_some());
    assert!(buckets.get("aw-watcher-window_vm").is_none());
    let events = admin
        .get("/api/0/buckets/aw-watcher-web-chrome/events")
        .json();
    assert_eq!(events.as_array().unwrap().len(), 2);
    // Later events and a delete still reach it.
    let reply = client.post_json(
        &format!("/api/0/buckets/{LAPTOP}/events"),
        &json!([window(20, 5.0, "c")]),
    );
    assert_eq!(reply.status, 200);
    assert_eq!(
        client
            .delete("/api/0/buckets/aw-watcher-web-chrome?force=1")
            .status,
        200
    );
    let reply = client.post("/api/0/sync/run?mode=hub", b"");
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.json()["forgotten"], 1);
    let events = admin.get(&format!("/api/0/buckets/{LAPTOP}/events")).json();
    assert_eq!(events.as_array().unwrap().len(), 3);
    assert_eq!(
        admin.get("/api/0/buckets/aw-watcher-web-chrome").status,
        404
    );
    // A refused token still stops the schedule.
    assert_eq!(admin.delete("/api/0/tokens/laptop").status, 200);
    let reply = client.post("/api/0/sync/run?mode=hub", b"");
    assert_eq!(reply.status, 502, "{}", reply.text());
    let status = client.get("/api/0/sync/status").json();
    assert!(status["hub"]["stopped"].is_string(), "{status}");
}

#[test]
fn a_host_renamed_while_the_hub_and_the_folder_peer_were_off_reaches_both() {
    let temp = tempfile::tempdir().unwrap();
    let (hub_root, a_root, b_root) = (
        temp.path().join("hub"),
        temp.path().join("laptop"),
        temp.path().join("desktop"),
    );
    let shared = temp.path().join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    let [laptop_token, desktop_token, admin] = hub_tokens(&hub_root);
    let mut hub = Node::start(&hub_root, 0);
    let hub_client = hub
        .client
        .clone()
        .with_header("Authorization", &format!("Bearer {admin}"));
    write_testing_config(
        &a_root,
        &device_config(hub.client.port, &laptop_token, &shared),
    );
    write_testing_config(
        &b_root,
        &device_config(hub.client.port, &desktop_token, &shared),
    );
    let a = Node::start(&a_root, 0);
    let mut b = Node::start(&b_root, 0);
    make_bucket(&a.client, LAPTOP, "laptop");
    let history: Vec<Value> = (0..2_000)
        .map(|i| window(i * 60, 30.0, &format!("doc {}", i % 7)))
        .collect();
    let stored = a
        .client
        .post_json(&format!("/api/0/buckets/{LAPTOP}/events"), &json!(history));
    assert_eq!(stored.status, 200);
    eventually("the laptop on the hub", || {
        equal_on_hub(&hub_client, &a.client, LAPTOP)
    });
    let old_copy = format!("{LAPTOP}-synced-from-laptop");
    eventually("the laptop's copy on the desktop", || {
        events(&b.client, &old_copy) == events(&a.client, LAPTOP)
    });

    let before = event_ids(&hub_client, LAPTOP);
    // Both away; the laptop renames its host and its watcher, not
    // restarted, goes on as `laptop`.
    hub.stop();
    b.stop();
    let renamed = a
        .client
        .post_json("/api/0/hosts/laptop/rename", &json!({"to": "laptop2"}));
    assert_eq!(renamed.status, 200, "{}", renamed.text());
    let new_id = "aw-watcher-window_laptop2";
    for i in 0..5 {
        let beat = a.client.post_json(
            &format!("/api/0/buckets/{LAPTOP}/heartbeat?pulsetime=120"),
            &window(2_000 * 60 + i * 10, 0.0, "after"),
        );
        assert_eq!(beat.status, 200, "{}", beat.text());
    }
    assert_eq!(count(&a.client, new_id), 2_001);

    // Back: the hub renames its copy in place (the laptop's token, made
    // for `laptop`, covers the alias), the peer follows the folder.
    hub.restart();
    b.restart();
    eventually("the renamed bucket on the hub", || {
        equal_on_hub(&hub_client, &a.client, new_id)
    });
    let hub_buckets = hub_client.get("/api/0/buckets/").json();
    let ids: Vec<&String> = hub_buckets.as_object().unwrap().keys().collect();
    assert_eq!(ids, [new_id]);
    assert_eq!(hub_buckets[new_id]["hostname"], "laptop2");
    // Renamed in place, not sent again: the hub's events kept their ids.
    let after = event_ids(&hub_client, new_id);
    assert!(
        before.iter().all(|id| after.contains(id)),
        "the hub's copy was renamed, its {} events kept",
        before.len()
    );
    let new_copy = format!("{new_id}-synced-from-laptop2");
    eventually("the renamed copy on the desktop", || {
        events(&b.client, &new_copy) == events(&a.client, new_id)
    });
    eventually("the old copy gone from the desktop", || {
        events(&b.client, &old_copy).is_none()
    });
}
