//! A server other devices may reach (`docs/API.md` §9.5), on the binary:
//! the refused open start beyond loopback, the `token` command on the
//! file and through the server, logs that never show a token (also with
//! `--verbose`), and HTTPS with `tls_cert` and `tls_key`.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use common::{binary, fails, run, write_testing_config, Client, Stopped};

/// A started server and everything it wrote to stderr so far.
struct Started {
    _process: Stopped,
    client: Client,
    stderr: Arc<Mutex<String>>,
}

/// Starts the binary in testing mode with `args` and waits until it
/// listens; stderr is kept.
fn start(root: &Path, args: &[&str]) -> Started {
    let mut child = binary(root)
        .args(["--testing", "--port", "0"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn aw-server");
    let stderr = child.stderr.take().unwrap();
    let kept = Arc::new(Mutex::new(String::new()));
    let (ready, listening) = std::sync::mpsc::channel();
    let sink = Arc::clone(&kept);
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            eprintln!("server: {line}");
            // Kept before the port is announced: a test may read the
            // announce line as soon as `start` returns.
            {
                let mut all = sink.lock().unwrap();
                all.push_str(&line);
                all.push('\n');
            }
            if let Some(port) = common::announced_port(&line) {
                let _ = ready.send(port);
            }
        }
    });
    let port = listening
        .recv()
        .expect("the server exited before listening");
    Started {
        _process: Stopped(child),
        client: Client {
            port,
            headers: Vec::new(),
        },
        stderr: kept,
    }
}

fn stdout_of(root: &Path, args: &[&str]) -> String {
    let output = run(root, args);
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn beyond_loopback_the_start_needs_a_credential_or_the_opt_out() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let db = root.join("remote.db");
    let db = db.to_str().unwrap();

    let refused = fails(
        root,
        &[
            "--testing",
            "--host",
            "0.0.0.0",
            "--port",
            "0",
            "--dbpath",
            db,
        ],
        1,
    );
    assert!(
        refused.contains("Refusing to listen on 0.0.0.0"),
        "{refused}"
    );
    assert!(refused.contains("token add"), "{refused}");
    assert!(
        refused.contains("--allow-unauthenticated-remote"),
        "{refused}"
    );

    // Behind one's own proxy: the explicit opt-out.
    let open = start(
        root,
        &[
            "--host",
            "0.0.0.0",
            "--dbpath",
            db,
            "--allow-unauthenticated-remote",
        ],
    );
    assert_eq!(open.client.get("/api/0/buckets/").status, 200);
    drop(open);

    // A token made on the file is enough.
    let secret = stdout_of(
        root,
        &["token", "add", "admin", "--scope", "admin", "--dbpath", db],
    );
    let secret = secret.trim();
    assert!(secret.starts_with("awt_") && secret.len() == 68, "{secret}");
    let served = start(root, &["--host", "0.0.0.0", "--dbpath", db]);
    assert_eq!(served.client.get("/api/0/buckets/").status, 401);
    let admin = served
        .client
        .clone()
        .with_header("Authorization", &format!("Bearer {secret}"));
    assert_eq!(admin.get("/api/0/buckets/").status, 200);
    // The opt-out in the config file does the same as the flag.
    drop(served);
    let other = root.join("other.db");
    write_testing_config(root, "[auth]\nallow_unauthenticated_remote = true\n");
    let open = start(
        root,
        &["--host", "0.0.0.0", "--dbpath", other.to_str().unwrap()],
    );
    assert_eq!(open.client.get("/api/0/buckets/").status, 200);
}

#[test]
fn the_token_command_on_the_file_and_through_the_server() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    write_testing_config(root, "[auth]\napi_key = \"config-key\"\n");
    let db = root.join("tokens.db");
    let db = db.to_str().unwrap();

    // On the file: a read or write token cannot be the first credential.
    let refused = fails(
        root,
        &["token", "add", "dash", "--scope", "read", "--dbpath", db],
        1,
    );
    assert!(
        refused.contains("the first credential must be an admin token"),
        "{refused}"
    );
    stdout_of(
        root,
        &["token", "add", "owner", "--scope", "admin", "--dbpath", db],
    );
    let output = run(
        root,
        &[
            "token",
            "add",
            "laptop",
            "--scope",
            "write",
            "--host",
            "laptop",
            "--host",
            "unknown",
            "--expires",
            "2099-01-01",
            "--dbpath",
            db,
        ],
    );
    assert!(output.status.success());
    let secret = String::from_utf8(output.stdout).unwrap().trim().to_string();
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("shown only now"), "{said}");
    assert!(!said.contains(&secret));
    let refused = fails(
        root,
        &["token", "add", "laptop", "--scope", "read", "--dbpath", db],
        1,
    );
    assert!(refused.contains("exists"), "{refused}");
    let bad = fails(
        root,
        &["token", "add", "x", "--scope", "write", "--dbpath", db],
        1,
    );
    assert!(bad.contains("at least one host"), "{bad}");
    let bad = run(
        root,
        &["token", "add", "x", "--scope", "root", "--dbpath", db],
    );
    assert_eq!(bad.status.code(), Some(2));
    let listed = stdout_of(root, &["token", "list", "--dbpath", db]);
    assert!(
        listed.contains("laptop") && listed.contains("write"),
        "{listed}"
    );
    assert!(listed.contains("laptop,unknown") && listed.contains("2099-01-01"));
    assert!(!listed.contains(&secret) && !listed.contains(&secret[4..]));

    // Through the server, with the config's API key.
    let served = start(root, &["--dbpath", db]);
    let port = served.client.port.to_string();
    let via = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--testing", "--port", &port]);
        stdout_of(root, &all)
    };
    let reader = via(&["token", "add", "dashboard", "--scope", "read"]);
    let reader = reader.trim();
    let listed = via(&["token", "list"]);
    assert!(
        listed.contains("dashboard") && listed.contains("laptop"),
        "{listed}"
    );
    let watcher = served
        .client
        .clone()
        .with_header("Authorization", &format!("Bearer {secret}"));
    let created = watcher.post_json(
        "/api/0/buckets/aw-watcher-window_laptop",
        &serde_json::json!({"type": "currentwindow", "client": "w", "hostname": "laptop"}),
    );
    assert_eq!(created.status, 200);
    let dashboard = served
        .client
        .clone()
        .with_header("Authorization", &format!("Bearer {reader}"));
    assert_eq!(dashboard.get("/api/0/buckets/").status, 200);
    via(&["token", "revoke", "dashboard"]);
    assert_eq!(dashboard.get("/api/0/buckets/").status, 401);
    // An admin token works for the command instead of the key; a read
    // token is refused with the server's reason.
    let admin = via(&["token", "add", "ops", "--scope", "admin"]);
    let mut command = binary(root);
    command
        .args(["token", "list", "--testing", "--port", &port])
        .env("AW_SERVER_TOKEN", admin.trim());
    write_testing_config(root, "");
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stderr = fails(
        root,
        &[
            "token",
            "revoke",
            "laptop",
            "--testing",
            "--port",
            &port,
            "--token",
            &secret,
        ],
        1,
    );
    assert!(
        stderr.contains("403") && stderr.contains("admin token"),
        "{stderr}"
    );
    // Nothing printed or logged shows a secret.
    let logged = served.stderr.lock().unwrap().clone();
    for shown in [&secret, reader, admin.trim()] {
        assert!(!logged.contains(shown));
        assert!(!logged.contains(&shown[4..]));
    }
}

#[test]
fn no_log_line_shows_a_token_even_when_verbose() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    write_testing_config(root, "[auth]\napi_key = \"the-config-key\"\n");
    let db = root.join("logs.db");
    let db = db.to_str().unwrap();
    // The first credential is an admin's.
    stdout_of(
        root,
        &["token", "add", "owner", "--scope", "admin", "--dbpath", db],
    );
    let secret = stdout_of(
        root,
        &["token", "add", "reader", "--scope", "read", "--dbpath", db],
    );
    let secret = secret.trim().to_string();
    let served = start(root, &["--dbpath", db, "--verbose"]);
    let client = &served.client;
    let bearer = client
        .clone()
        .with_header("Authorization", &format!("Bearer {secret}"));
    assert_eq!(bearer.get("/api/0/buckets/").status, 200);
    let basic = {
        use base64::Engine;
        let encoded = base64::engine::general_purpose::STANDARD.encode(format!("w:{secret}"));
        client
            .clone()
            .with_header("Authorization", &format!("Basic {encoded}"))
    };
    assert_eq!(basic.get("/api/0/buckets/").status, 200);
    assert_eq!(bearer.post("/api/0/settings/x", b"1").status, 403);
    // The dashboard's page with its token in the address, and tokens
    // where they are not taken.
    assert_eq!(client.get(&format!("/?token={secret}")).status, 200);
    assert_eq!(
        client
            .get(&format!(
                "/api/0/buckets/?token={secret}&api_key=the-config-key"
            ))
            .status,
        401
    );
    let wrong = format!("{secret}x");
    let refused = client
        .clone()
        .with_header("Authorization", &format!("Bearer {wrong}"));
    assert_eq!(refused.get("/api/0/buckets/").status, 401);
    let key = client
        .clone()
        .with_header("Authorization", "Bearer the-config-key");
    assert_eq!(key.get("/api/0/tokens").status, 200);
    drop(served);

    let mut logged = String::new();
    let logs = root.join("cache/activitywatch/log/aw-server-rust");
    for entry in std::fs::read_dir(&logs).unwrap() {
        logged.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    assert!(
        logged.contains("GET /api/0/buckets"),
        "verbose logs requests"
    );
    assert!(logged.contains("Refused GET /api/0/buckets"), "{logged}");
    for shown in [secret.as_str(), &secret[4..], "the-config-key", &wrong] {
        assert!(!logged.contains(shown), "a log shows {shown}");
    }
}

#[test]
fn https_with_the_configured_certificate() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let cert = root.join("cert.pem");
    let key = root.join("key.pem");
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
        ])
        .arg("/CN=localhost")
        .args(["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output();
    let made = match made {
        Ok(output) if output.status.success() => output,
        other => panic!(
            "openssl is needed to make this test's certificate (Debian's openssl package): \
             {other:?}"
        ),
    };
    drop(made);
    write_testing_config(
        root,
        &format!("tls_cert = {:?}\ntls_key = {:?}\n", cert, key),
    );
    let db = root.join("tls.db");
    let served = start(root, &["--dbpath", db.to_str().unwrap()]);
    assert!(served
        .stderr
        .lock()
        .unwrap()
        .contains("listening on https://"));
    let url = format!("https://localhost:{}/api/0/info", served.client.port);
    let output = Command::new("curl")
        .args(["--silent", "--show-error", "--cacert"])
        .arg(&cert)
        .arg(&url)
        .output()
        .expect("curl is needed to speak HTTPS to the server (Debian's curl package)");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let info: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(info["testing"], true);
    // Plain HTTP on the same port gets no answer from the API.
    let plain = served
        .client
        .try_raw(b"GET /api/0/info HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    assert!(plain.map_or(true, |reply| reply.status != 200));
    // The commands reach it over HTTPS too (on loopback).
    let port = served.client.port.to_string();
    let made = run(
        root,
        &[
            "token",
            "add",
            "over-tls",
            "--scope",
            "admin",
            "--testing",
            "--port",
            &port,
        ],
    );
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let url = format!("https://localhost:{port}/api/0/access");
    let token = String::from_utf8(made.stdout).unwrap();
    let output = Command::new("curl")
        .args(["--silent", "--cacert"])
        .arg(&cert)
        .arg("-H")
        .arg(format!("Authorization: Bearer {}", token.trim()))
        .arg(&url)
        .output()
        .unwrap();
    let access: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(access["name"], "over-tls");
    // Half a TLS configuration stops the start.
    write_testing_config(root, &format!("tls_cert = {:?}\n", cert));
    let stderr = fails(
        root,
        &["--testing", "--port", "0", "--dbpath", db.to_str().unwrap()],
        1,
    );
    assert!(
        stderr.contains("tls_cert and tls_key go together"),
        "{stderr}"
    );
}

#[test]
fn through_a_server_without_credentials_the_first_token_is_an_admins() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let db = root.join("first.db");
    let served = start(root, &["--dbpath", db.to_str().unwrap()]);
    let port = served.client.port.to_string();
    let online = ["--testing", "--port", port.as_str()];
    let refused = fails(
        root,
        &[&["token", "add", "dash", "--scope", "read"], &online[..]].concat(),
        1,
    );
    assert!(
        refused.contains("the first credential must be an admin token"),
        "{refused}"
    );
    // Nothing changed: the API is still open to the watchers.
    assert_eq!(served.client.get("/api/0/buckets/").status, 200);
    stdout_of(
        root,
        &[&["token", "add", "me", "--scope", "admin"], &online[..]].concat(),
    );
    assert_eq!(served.client.get("/api/0/buckets/").status, 401);
}
