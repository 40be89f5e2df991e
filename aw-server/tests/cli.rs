//! The `export` and `import` commands of the binary, offline on temp-file
//! databases and online through a spawned server: round trips to the
//! nanosecond in every format, merging without duplicates, malformed files
//! that store nothing, and the errors that exit with 1.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;

mod common;

use common::{binary, fails, free_port, ok, run, spawn_listening, Stopped};
use serde_json::{json, Value};
use tempfile::TempDir;

/// A server on a free port over `db`, stopped (SIGTERM) when dropped.
struct Server {
    _child: Stopped,
    port: String,
}

impl Server {
    fn start(root: &Path, db: &Path) -> Server {
        Server::start_with(root, db, &[])
    }

    fn start_with(root: &Path, db: &Path, args: &[&str]) -> Server {
        let (child, port) = spawn_listening(
            binary(root)
                .args(["--testing", "--port", "0", "--dbpath"])
                .arg(db)
                .args(args)
                .stdout(Stdio::null()),
        );
        Server {
            _child: Stopped(child),
            port: port.to_string(),
        }
    }

    /// `args` plus the flags that reach this server.
    fn args<'a>(&'a self, args: &[&'a str]) -> Vec<&'a str> {
        let mut all = args.to_vec();
        all.extend(["--testing", "--port", &self.port]);
        all
    }
}

fn path(root: &Path, name: &str) -> PathBuf {
    root.join(name)
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Two buckets whose events need every nanosecond and every data shape.
fn document() -> Value {
    json!({"buckets": {
        "aw-watcher-window_a": {
            "id": "aw-watcher-window_a", "type": "currentwindow", "client": "aw-watcher-window",
            "hostname": "a", "created": "2026-01-01T00:00:00.123456789Z", "data": {"device_id": "x"},
            "events": [
                {"id": 9, "timestamp": "2026-11-20T10:00:00.000000001Z", "duration": 1.5,
                 "data": {"app": "vim", "title": "a, \"quoted\"\ntitle"}},
                {"id": 10, "timestamp": "2026-11-20T09:00:00.999999999Z", "duration": 0.000000001,
                 "data": {"app": "firefox", "nested": {"n": [1, 2.5, null]}}},
                {"timestamp": "2026-11-19T08:00:00+02:00", "duration": 0, "data": {}}
            ]
        },
        "ünï côdé/bucket": {
            "type": "afkstatus", "client": "aw-watcher-afk", "hostname": "a",
            "created": "2026-01-02T00:00:00Z",
            "events": [{"timestamp": "2026-11-20T10:00:00Z", "duration": 3600, "data": {"status": "afk"}}]
        }
    }})
}

/// What a round trip must keep, per bucket id: the bucket's own fields and
/// the set of events (timestamp, duration, data).
fn essence(document: &Value) -> Value {
    let mut buckets = serde_json::Map::new();
    for (key, bucket) in document["buckets"].as_object().unwrap() {
        let id = bucket["id"].as_str().unwrap_or(key).to_string();
        let mut events: Vec<String> = bucket["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|event| {
                let timestamp =
                    chrono::DateTime::parse_from_rfc3339(event["timestamp"].as_str().unwrap())
                        .unwrap()
                        .timestamp_nanos_opt()
                        .unwrap();
                let duration = (event["duration"].as_f64().unwrap() * 1e9).round() as i64;
                format!("{timestamp} {duration} {}", event["data"])
            })
            .collect();
        events.sort();
        let created = chrono::DateTime::parse_from_rfc3339(bucket["created"].as_str().unwrap())
            .unwrap()
            .timestamp_nanos_opt();
        buckets.insert(
            id,
            json!({"type": bucket["type"], "client": bucket["client"], "hostname": bucket["hostname"],
                   "created": created, "data": bucket.get("data").cloned().unwrap_or(json!({})),
                   "events": events}),
        );
    }
    Value::Object(buckets)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

fn write_source(root: &Path) -> PathBuf {
    let file = path(root, "source.json");
    fs::write(&file, document().to_string()).unwrap();
    file
}

#[test]
fn offline_round_trips_keep_every_event_in_every_format() {
    let dir = TempDir::new().unwrap();
    let root = dir.path();
    let source = write_source(root);
    let (a, b, c) = (path(root, "a.db"), path(root, "b.db"), path(root, "c.db"));
    let stderr = ok(root, &["import", "--dbpath", s(&a), s(&source)]);
    assert!(
        stderr.contains("2 buckets created, 4 events stored, 0 skipped"),
        "{stderr}"
    );

    let first = path(root, "first.json");
    ok(root, &["export", "--dbpath", s(&a), "-o", s(&first)]);
    assert_eq!(essence(&read_json(&first)), essence(&document()));
    ok(root, &["import", "--dbpath", s(&b), s(&first)]);
    let second = path(root, "second.json");
    ok(root, &["export", "--dbpath", s(&b), "-o", s(&second)]);
    assert_eq!(essence(&read_json(&second)), essence(&document()));

    // NDJSON: importable on its own, the same events again.
    let ndjson = path(root, "export.ndjson");
    ok(
        root,
        &[
            "export",
            "--dbpath",
            s(&a),
            "--format",
            "ndjson",
            "-o",
            s(&ndjson),
        ],
    );
    let text = fs::read_to_string(&ndjson).unwrap();
    assert_eq!(text.lines().count(), 2 + 4);
    ok(root, &["import", "--dbpath", s(&c), s(&ndjson)]);
    let third = path(root, "third.json");
    ok(root, &["export", "--dbpath", s(&c), "-o", s(&third)]);
    assert_eq!(essence(&read_json(&third)), essence(&document()));

    // CSV to stdout: one column per data key, quoted where needed.
    let output = binary(root)
        .args([
            "export",
            "--dbpath",
            s(&a),
            "--format",
            "csv",
            "--bucket",
            "aw-watcher-window_a",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let csv = String::from_utf8(output.stdout).unwrap();
    let mut lines = csv.split("\r\n");
    assert_eq!(
        lines.next(),
        Some("bucket,id,timestamp,duration,app,nested,title")
    );
    assert!(csv.contains("\"a, \"\"quoted\"\"\ntitle\""), "{csv}");
    assert!(
        csv.contains("2026-11-20T10:00:00.000000001Z,1.5,vim,,"),
        "{csv}"
    );
    assert!(csv.contains("\"{\"\"n\"\":[1,2.5,null]}\""), "{csv}");
}

#[test]
fn reimporting_adds_nothing_twice_and_other_hosts_add_their_buckets() {
    let dir = TempDir::new().unwrap();
    let root = dir.path();
    let source = write_source(root);
    let db = path(root, "a.db");
    ok(root, &["import", "--dbpath", s(&db), s(&source)]);
    let stderr = ok(
        root,
        &["import", "--dbpath", s(&db), s(&source), s(&source)],
    );
    assert!(
        stderr.contains("0 buckets created, 0 events stored, 8 skipped"),
        "{stderr}"
    );

    let mut other = source_of_host("b");
    other["buckets"]["aw-watcher-window_a"] = document()["buckets"]["aw-watcher-window_a"].clone();
    let other_file = path(root, "other.json");
    fs::write(&other_file, other.to_string()).unwrap();
    let stderr = ok(root, &["import", "--dbpath", s(&db), s(&other_file)]);
    assert!(
        stderr.contains("1 buckets created, 1 events stored, 3 skipped"),
        "{stderr}"
    );
    let export = path(root, "export.json");
    ok(root, &["export", "--dbpath", s(&db), "-o", s(&export)]);
    let buckets = read_json(&export)["buckets"].as_object().unwrap().len();
    assert_eq!(buckets, 3);
}

fn source_of_host(host: &str) -> Value {
    json!({"buckets": {format!("aw-watcher-afk_{host}"): {
        "type": "afkstatus", "client": "aw-watcher-afk", "hostname": host,
        "created": "2026-01-02T00:00:00Z",
        "events": [{"timestamp": "2026-11-20T10:00:00Z", "duration": 1, "data": {"status": "afk"}}]
    }}})
}

#[test]
fn online_round_trip_and_merge_go_through_the_server() {
    let dir = TempDir::new().unwrap();
    let root = dir.path();
    let source = write_source(root);
    let db = path(root, "served.db");
    let server = Server::start(root, &db);

    let stderr = ok(root, &server.args(&["import", s(&source)]));
    assert!(
        stderr.contains("2 buckets created, 4 events stored, 0 skipped"),
        "{stderr}"
    );
    let stderr = ok(root, &server.args(&["import", s(&source)]));
    assert!(stderr.contains("0 events stored, 4 skipped"), "{stderr}");

    let first = path(root, "first.json");
    ok(root, &server.args(&["export", "-o", s(&first)]));
    assert_eq!(essence(&read_json(&first)), essence(&document()));

    // Through a second, empty server: the same document back.
    let second_dir = TempDir::new().unwrap();
    let other = Server::start(second_dir.path(), &path(second_dir.path(), "other.db"));
    ok(root, &other.args(&["import", s(&first)]));
    let second = path(root, "second.json");
    ok(root, &other.args(&["export", "-o", s(&second)]));
    assert_eq!(essence(&read_json(&second)), essence(&document()));

    // NDJSON online, one bucket.
    let ndjson = path(root, "afk.ndjson");
    ok(
        root,
        &server.args(&[
            "export",
            "--format",
            "ndjson",
            "--bucket",
            "ünï côdé/bucket",
            "-o",
            s(&ndjson),
        ]),
    );
    let lines: Vec<Value> = fs::read_to_string(&ndjson)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["bucket"]["id"], "ünï côdé/bucket");
    assert_eq!(lines[1]["bucket_id"], "ünï côdé/bucket");

    // A range keeps the events overlapping it, unclipped; both ends count.
    let range = path(root, "range.json");
    ok(
        root,
        &server.args(&[
            "export",
            "--start",
            "2026-11-20T09:30:00Z",
            "--end",
            "2026-11-20T10:00:00.000000001Z",
            "-o",
            s(&range),
        ]),
    );
    let range = read_json(&range);
    let window = range["buckets"]["aw-watcher-window_a"]["events"]
        .as_array()
        .unwrap();
    assert_eq!(window.len(), 1, "{window:?}");
    assert_eq!(window[0]["duration"], 1.5);
    let afk = range["buckets"]["ünï côdé/bucket"]["events"]
        .as_array()
        .unwrap();
    assert_eq!(afk[0]["duration"], 3600.0, "unclipped");

    // The served file is not written by a second process, nor served by
    // a second server.
    let stderr = fails(root, &["import", "--dbpath", s(&db), s(&source)], 1);
    assert!(stderr.contains("served by a running aw-server"), "{stderr}");
    let stderr = fails(root, &["--testing", "--port", "0", "--dbpath", s(&db)], 1);
    assert!(stderr.contains("in use by another process"), "{stderr}");
}

#[test]
fn the_api_key_of_the_config_file_is_sent() {
    let dir = TempDir::new().unwrap();
    let root = dir.path();
    let source = write_source(root);
    let config = path(root, "config.toml");
    fs::write(&config, "[auth]\napi_key = \"sesame\"\n").unwrap();
    let server = Server::start_with(root, &path(root, "served.db"), &["-c", s(&config)]);
    let stderr = fails(root, &server.args(&["import", s(&source)]), 1);
    assert!(
        stderr.contains("401") && stderr.contains("--token"),
        "{stderr}"
    );
    ok(
        root,
        &server.args(&["import", "-c", s(&config), s(&source)]),
    );
    let out = path(root, "out.json");
    ok(
        root,
        &server.args(&["export", "-c", s(&config), "-o", s(&out)]),
    );
    assert_eq!(essence(&read_json(&out)), essence(&document()));
}

/// A valid document with a bad timestamp in the middle of its events.
fn bad_timestamp_document() -> String {
    let mut document = document();
    let events = document["buckets"]["aw-watcher-window_a"]["events"]
        .as_array_mut()
        .unwrap();
    events[1]["timestamp"] = json!("2026-11-31T09:00:00Z");
    document.to_string()
}

fn malformed_files(root: &Path) -> Vec<PathBuf> {
    let whole = document().to_string();
    let ndjson_bad = format!(
        "{}\n{}\n{{\"bucket_id\": \"new\", \"timestamp\": \"nope\"}}\n",
        json!({"bucket": {"id": "new", "type": "t", "client": "c", "hostname": "h"}}),
        json!({"bucket_id": "new", "timestamp": "2026-11-20T10:00:00Z", "duration": 1, "data": {}}),
    );
    let cases = [
        ("truncated.json", whole[..whole.len() / 2].to_string()),
        ("shape.json", json!({"buckets": [document()]}).to_string()),
        (
            "no-type.json",
            json!({"buckets": {"new": {"client": "c", "hostname": "h"}}}).to_string(),
        ),
        ("timestamp.json", bad_timestamp_document()),
        ("bad.ndjson", ndjson_bad),
    ];
    cases
        .into_iter()
        .map(|(name, text)| {
            let file = path(root, name);
            fs::write(&file, text).unwrap();
            file
        })
        .collect()
}

#[test]
fn malformed_files_leave_the_target_unchanged() {
    let dir = TempDir::new().unwrap();
    let root = dir.path();
    let db = path(root, "a.db");
    let good = path(root, "good.json");
    fs::write(&good, source_of_host("good").to_string()).unwrap();
    ok(root, &["import", "--dbpath", s(&db), s(&good)]);
    let before = path(root, "before.json");
    ok(root, &["export", "--dbpath", s(&db), "-o", s(&before)]);
    let server_db = path(root, "served.db");
    let server = Server::start(root, &server_db);
    ok(root, &server.args(&["import", s(&good)]));

    for file in malformed_files(root) {
        let name = file.file_name().unwrap().to_str().unwrap().to_string();
        // The good file first: nothing of a run with a bad file is stored.
        let source = write_source(root);
        for args in [
            vec!["import", "--dbpath", s(&db), s(&source), s(&file)],
            server.args(&["import", s(&source), s(&file)]),
        ] {
            let stderr = fails(root, &args, 1);
            assert!(stderr.contains(&name), "{stderr}");
            assert!(
                stderr.contains("line") && stderr.contains("column"),
                "{stderr}"
            );
        }
        let after = path(root, "after.json");
        ok(root, &["export", "--dbpath", s(&db), "-o", s(&after)]);
        assert_eq!(
            essence(&read_json(&after)),
            essence(&read_json(&before)),
            "{name}"
        );
        ok(root, &server.args(&["export", "-o", s(&after)]));
        assert_eq!(
            essence(&read_json(&after)),
            essence(&read_json(&before)),
            "{name}"
        );
    }
}

#[test]
fn missing_buckets_servers_and_files_are_errors() {
    let dir = TempDir::new().unwrap();
    let root = dir.path();
    let db = path(root, "a.db");
    let source = write_source(root);
    ok(root, &["import", "--dbpath", s(&db), s(&source)]);
    let out = path(root, "out.json");

    let stderr = fails(
        root,
        &[
            "export",
            "--dbpath",
            s(&db),
            "--bucket",
            "nope",
            "-o",
            s(&out),
        ],
        1,
    );
    assert!(stderr.contains("no bucket 'nope'"), "{stderr}");
    assert!(!out.exists(), "no partial file");
    let port = free_port().to_string();
    let stderr = fails(root, &["export", "--port", &port], 1);
    assert!(
        stderr.contains(&format!("no aw-server answers on 127.0.0.1:{port}")),
        "{stderr}"
    );
    let stderr = fails(root, &["import", "--port", &port, s(&source)], 1);
    assert!(stderr.contains("no aw-server answers"), "{stderr}");
    let stderr = fails(root, &["export", "--dbpath", s(&path(root, "none.db"))], 1);
    assert!(stderr.contains("no database file"), "{stderr}");
    let stderr = fails(
        root,
        &["import", "--dbpath", s(&db), s(&path(root, "none.json"))],
        1,
    );
    assert!(stderr.contains("none.json"), "{stderr}");

    // Usage errors are clap's.
    fails(root, &["export", "--format", "xml"], 2);
    fails(root, &["export", "--start", "someday"], 2);
    fails(root, &["import"], 2);
}

#[test]
fn without_a_server_the_default_database_is_used() {
    let dir = TempDir::new().unwrap();
    let root = dir.path();
    let source = write_source(root);
    // --testing picks port 5666; make sure nothing answers there by
    // pointing the testing config at a free port.
    let config = path(root, "config.toml");
    fs::write(&config, format!("port = {}\n", free_port())).unwrap();
    let stderr = ok(root, &["import", "--testing", "-c", s(&config), s(&source)]);
    assert!(stderr.contains("working on the database file"), "{stderr}");
    let db = root.join("data/activitywatch/aw-server-rust/sqlite-testing.db");
    assert!(db.exists());
    let out = path(root, "out.json");
    ok(
        root,
        &["export", "--testing", "-c", s(&config), "-o", s(&out)],
    );
    assert_eq!(essence(&read_json(&out)), essence(&document()));
}

#[test]
fn export_to_a_closed_pipe_stops_quietly() {
    let dir = TempDir::new().unwrap();
    let root = dir.path();
    let db = path(root, "big.db");
    // Enough events that the export outgrows the pipe and its buffer.
    let events: Vec<Value> = (0..20_000)
        .map(|i| {
            json!({"timestamp": format!("2021-06-01T{:02}:{:02}:{:02}Z", i / 3600 % 24, i / 60 % 60, i % 60),
                   "duration": 1.0, "data": {"app": "vim", "title": format!("file {i} with a longer title")}})
        })
        .collect();
    let source = path(root, "big.json");
    let document = json!({"buckets": {"w": {"id": "w", "type": "currentwindow", "client": "c",
        "hostname": "h", "events": events}}});
    fs::write(&source, document.to_string()).unwrap();
    ok(root, &["import", "--dbpath", s(&db), s(&source)]);
    let mut child = binary(root)
        .args(["export", "--dbpath", s(&db), "-o", "-"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read a little, then close the pipe, as `| head -c 100` does.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 100];
    std::io::Read::read_exact(&mut stdout, &mut first).unwrap();
    drop(stdout);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{:?}: {stderr}", output.status);
    assert!(!stderr.contains("cannot write"), "{stderr}");
    assert!(String::from_utf8_lossy(&first).starts_with("{\"buckets\""));
}

/// aw-webui's default privacy rules.
fn webui_rules() -> Value {
    json!([
        {"enabled": true, "bucket_prefix": "aw-watcher-window", "field": "title",
         "pattern": "(?i)(private browsing|incognito)", "action": "drop"},
        {"enabled": true, "bucket_prefix": "aw-watcher-window", "field": "title",
         "pattern": "(?i).*banking.*", "action": "redact", "replacement": "REDACTED"}
    ])
}

/// A document of one window bucket: a private, a banking and a plain
/// title, 10:00, 10:10 and 10:20, ten minutes each.
fn window_document() -> Value {
    let event = |time: &str, title: &str| {
        json!({"timestamp": format!("2026-01-01T{time}:00Z"), "duration": 600.0,
               "data": {"title": title}})
    };
    json!({"buckets": {"aw-watcher-window_h": {
        "id": "aw-watcher-window_h", "type": "currentwindow", "client": "c", "hostname": "h",
        "events": [event("10:00", "Incognito"), event("10:10", "Banking"), event("10:20", "news")]
    }}})
}

/// Saves the privacy rules in `db` through a server on it.
/// A temporary folder where `window_document()` was written to
/// `window.json` and imported offline into `sqlite.db`: (the folder, the
/// database, the document).
fn imported_window() -> (TempDir, PathBuf, PathBuf) {
    let dir = TempDir::new().unwrap();
    let root = dir.path();
    let db = path(root, "sqlite.db");
    let source = path(root, "window.json");
    fs::write(&source, window_document().to_string()).unwrap();
    ok(root, &["import", "--dbpath", s(&db), s(&source)]);
    (dir, db, source)
}

fn save_rules(root: &Path, db: &Path) {
    let server = Server::start(root, db);
    let client = common::Client {
        port: server.port.parse().unwrap(),
        headers: Vec::new(),
    };
    let reply = client.post_json("/api/0/settings/privacy_filters", &webui_rules());
    assert_eq!(reply.status, 201, "{}", reply.text());
}

fn titles(root: &Path, db: &Path) -> Vec<String> {
    let out = path(root, "titles.json");
    ok(root, &["export", "--dbpath", s(db), "-o", s(&out)]);
    let document = read_json(&out);
    let mut titles: Vec<String> = document["buckets"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|bucket| bucket["events"].as_array().unwrap().clone())
        .map(|event| event["data"]["title"].as_str().unwrap().to_string())
        .collect();
    titles.sort();
    titles
}

#[test]
fn offline_imports_and_history_obey_the_stored_privacy_rules() {
    // Stored before the rules: history to clean.
    let (dir, db, source) = imported_window();
    let root = dir.path();
    save_rules(root, &db);
    let dry = ok(
        root,
        &["apply-privacy-filters", "--dbpath", s(&db), "--dry-run"],
    );
    assert!(
        dry.contains("1 would be dropped, 1 would be redacted"),
        "{dry}"
    );
    assert_eq!(titles(root, &db), ["Banking", "Incognito", "news"]);
    let real = ok(root, &["apply-privacy-filters", "--dbpath", s(&db)]);
    assert!(real.contains("1 dropped, 1 redacted"), "{real}");
    assert_eq!(titles(root, &db), ["REDACTED", "news"]);
    // An offline import applies the rules as it stores.
    let fresh = path(root, "fresh.db");
    save_rules(root, &fresh);
    let imported = ok(root, &["import", "--dbpath", s(&fresh), s(&source)]);
    assert!(
        imported.contains("1 dropped by privacy filters"),
        "{imported}"
    );
    assert_eq!(titles(root, &fresh), ["REDACTED", "news"]);
}

#[test]
fn stored_rules_another_server_wrote_apply_without_the_unusable_one() {
    let (dir, db, _) = imported_window();
    let root = dir.path();
    // As aw-server-rust stores any JSON: a rule that does not compile
    // between the two good ones.
    let mut rules = webui_rules();
    rules.as_array_mut().unwrap().insert(
        1,
        json!({"enabled": true, "field": "title", "pattern": "(", "action": "drop"}),
    );
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "INSERT OR REPLACE INTO key_value (key, value, last_modified) \
         VALUES ('settings.privacy_filters', ?1, 0)",
        [rules.to_string()],
    )
    .unwrap();
    drop(conn);
    let applied = ok(root, &["apply-privacy-filters", "--dbpath", s(&db)]);
    assert!(
        applied.contains(
            "aw-server: error: A stored privacy filter is not applied, the others are: rule 2:"
        ),
        "{applied}"
    );
    assert!(applied.contains("1 dropped, 1 redacted"), "{applied}");
    assert_eq!(titles(root, &db), ["REDACTED", "news"]);
}

#[test]
fn delete_range_works_offline_and_online_with_a_dry_run() {
    let (dir, db, _) = imported_window();
    let root = dir.path();
    let range = [
        "--start",
        "2026-01-01T10:05:00Z",
        "--end",
        "2026-01-01T10:25:00Z",
    ];
    let mut args = vec!["delete-range", "--dbpath", s(&db), "--all", "--dry-run"];
    args.extend(range);
    let dry = ok(root, &args);
    assert!(
        dry.contains("1 events would be deleted, 2 would be trimmed"),
        "{dry}"
    );
    assert_eq!(titles(root, &db).len(), 3);
    let server = Server::start(root, &db);
    let mut args = server.args(&["delete-range", "--bucket", "aw-watcher-window_h"]);
    args.extend(range);
    let done = ok(root, &args);
    assert!(done.contains("1 events deleted, 2 trimmed"), "{done}");
    drop(server);
    assert_eq!(titles(root, &db), ["Incognito", "news"]);
    let mut args = vec![
        "delete-range",
        "--dbpath",
        s(&db),
        "--bucket",
        "aw-watcher-window_h",
    ];
    args.extend([
        "--start",
        "2026-01-01T11:00:00Z",
        "--end",
        "2026-01-01T10:00:00Z",
    ]);
    let refused = fails(root, &args, 1);
    assert!(refused.contains("before --start"), "{refused}");
    fails(root, &["delete-range", "--dbpath", s(&db), "--all"], 2);
}

#[test]
fn vacuum_works_offline_and_online() {
    let (dir, db, _) = imported_window();
    let root = dir.path();
    let offline = ok(root, &["vacuum", "--dbpath", s(&db)]);
    assert!(
        offline.contains("it needs about") && offline.contains("Vacuumed:"),
        "{offline}"
    );
    let server = Server::start(root, &db);
    let online = ok(root, &server.args(&["vacuum"]));
    assert!(
        online.contains("through the server") && online.contains("Vacuumed:"),
        "{online}"
    );
    drop(server);
    assert_eq!(titles(root, &db).len(), 3);
}

#[test]
fn help_describes_the_history_commands() {
    let dir = TempDir::new().unwrap();
    let help = String::from_utf8(run(dir.path(), &["--help"]).stdout).unwrap();
    for command in ["delete-range", "apply-privacy-filters", "vacuum"] {
        assert!(help.contains(command), "{help}");
    }
    let help = String::from_utf8(run(dir.path(), &["delete-range", "--help"]).stdout).unwrap();
    for flag in [
        "--bucket",
        "--all",
        "--start",
        "--end",
        "--dry-run",
        "--dbpath",
    ] {
        assert!(help.contains(flag), "{help}");
    }
}

#[test]
fn a_csv_export_is_refused_by_name_and_a_failed_import_leaves_no_new_database() {
    let root = TempDir::new().unwrap();
    let root = root.path();
    let source = write_source(root);
    let db = path(root, "source.db");
    ok(root, &["import", "--dbpath", s(&db), s(&source)]);
    let csv = path(root, "export.csv");
    ok(
        root,
        &[
            "export",
            "--dbpath",
            s(&db),
            "--format",
            "csv",
            "-o",
            s(&csv),
        ],
    );
    let fresh = path(root, "fresh.db");
    let message = fails(root, &["import", "--dbpath", s(&fresh), s(&csv)], 1);
    assert!(
        message.contains("is a CSV export") && message.contains("--format json"),
        "{message}"
    );
    assert!(!message.contains("expected value"), "{message}");
    let broken = path(root, "broken.json");
    fs::write(&broken, "{\"buckets\": {\"b\": ").unwrap();
    fails(root, &["import", "--dbpath", s(&fresh), s(&broken)], 1);
    let left: Vec<String> = common::names_in(root)
        .into_iter()
        .filter(|name| name.starts_with("fresh.db"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
