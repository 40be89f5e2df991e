//! Privacy through HTTP, on file-backed stores: the `privacy_filters`
//! setting in aw-webui's shape filters heartbeats, inserts and imports;
//! invalid rules are refused; applying the rules to history; deleting a
//! time range; retention; vacuum.

mod common;
#[path = "../../aw-datastore/tests/support/privacy_rules.rs"]
mod privacy_rules;

use std::time::{Duration, Instant};

use aw_datastore::Datastore;
use common::{create_bucket, event, Client, TestServer};
use privacy_rules::webui_defaults;
use serde_json::{json, Value};
use tempfile::TempDir;

const WINDOW: &str = "aw-watcher-window_host";

/// A server over the database file in `dir` (fresh at first; a server
/// dropped before has closed it).
fn server(dir: &TempDir, keep_days: Option<u32>) -> TestServer {
    let path = dir.path().join("sqlite.db");
    let datastore = Datastore::open(&path).unwrap();
    TestServer::start_on(
        None,
        datastore,
        |config| {
            config.db_path = path.clone();
            config.keep_days = keep_days;
        },
        |rocket| rocket,
    )
}

fn save_rules(client: &Client, rules: &Value) {
    let reply = client.post_json("/api/0/settings/privacy_filters", rules);
    assert_eq!(reply.status, 201, "{}", reply.text());
}

fn title(text: &str) -> Value {
    json!({"app": "firefox", "title": text})
}

/// Titles of a bucket's events, oldest first.
fn titles(client: &Client, bucket: &str) -> Vec<String> {
    let events = client
        .get(&format!("/api/0/buckets/{bucket}/events"))
        .json();
    let mut titles: Vec<String> = events
        .as_array()
        .unwrap()
        .iter()
        .map(|event| event["data"]["title"].as_str().unwrap_or("").to_string())
        .collect();
    titles.reverse();
    titles
}

fn beat(client: &Client, bucket: &str, body: &Value) -> Value {
    let reply = client.post_json(
        &format!("/api/0/buckets/{bucket}/heartbeat?pulsetime=60"),
        body,
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    reply.json()
}

#[test]
fn webui_rules_filter_heartbeats_inserts_and_imports_until_removed() {
    let dir = TempDir::new().unwrap();
    let server = server(&dir, None);
    let client = server.client();
    create_bucket(&client, WINDOW);
    create_bucket(&client, "aw-watcher-afk_host");
    save_rules(&client, &webui_defaults());

    let answer = beat(
        &client,
        WINDOW,
        &event("2026-01-01T10:00:00Z", 0.0, title("Incognito - Chrome")),
    );
    assert_eq!(answer["data"], json!({}), "never the private data");
    beat(
        &client,
        WINDOW,
        &event("2026-01-01T10:01:00Z", 0.0, title("Online Banking")),
    );
    let reply = client.post_json(
        &format!("/api/0/buckets/{WINDOW}/events"),
        &json!([
            event("2026-01-01T11:00:00Z", 5.0, title("Private Browsing")),
            event("2026-01-01T11:01:00Z", 5.0, title("my banking")),
            event("2026-01-01T11:02:00Z", 5.0, title("news")),
        ]),
    );
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json().as_array().unwrap().len(), 2);
    let document = json!({"buckets": {"aw-watcher-window_laptop": {
    "id": "aw-watcher-window_laptop", "type": "currentwindow", "client": "c",
    "hostname": "laptop", "created": "2026-01-01T00:00:00Z",
    "events": [
        event("2026-01-02T10:00:00Z", 5.0, title("incognito")),
        event("2026-01-02T10:01:00Z", 5.0, title("BANKING")),
        event("2026-01-02T10:02:00Z", 5.0, title("mail")),
    ]}}});
    let reply = client.post_json("/api/0/import", &document);
    assert_eq!(reply.status, 200, "{}", reply.text());
    let summary: Value = serde_json::from_str(reply.header("X-Import-Summary").unwrap()).unwrap();
    assert_eq!(
        (summary["inserted"].as_u64(), summary["dropped"].as_u64()),
        (Some(2), Some(1))
    );
    beat(
        &client,
        "aw-watcher-afk_host",
        &event("2026-01-01T10:00:00Z", 0.0, title("incognito")),
    );

    assert_eq!(titles(&client, WINDOW), ["REDACTED", "REDACTED", "news"]);
    assert_eq!(
        titles(&client, "aw-watcher-window_laptop"),
        ["REDACTED", "mail"]
    );
    assert_eq!(titles(&client, "aw-watcher-afk_host"), ["incognito"]);

    // Removing the setting turns filtering off at once.
    assert_eq!(client.delete("/api/0/settings/privacy_filters").status, 200);
    beat(
        &client,
        WINDOW,
        &event("2026-01-01T12:00:00Z", 0.0, title("incognito")),
    );
    assert_eq!(titles(&client, WINDOW).last().unwrap(), "incognito");
    // So does saving null, and saving the rules again turns it back on.
    save_rules(&client, &webui_defaults());
    beat(
        &client,
        WINDOW,
        &event("2026-01-01T12:05:00Z", 0.0, title("incognito 2")),
    );
    assert_eq!(titles(&client, WINDOW).last().unwrap(), "incognito");
    save_rules(&client, &Value::Null);
    beat(
        &client,
        WINDOW,
        &event("2026-01-01T12:10:00Z", 0.0, title("incognito 3")),
    );
    assert_eq!(titles(&client, WINDOW).last().unwrap(), "incognito 3");
}

#[test]
fn a_dropped_heartbeat_answers_the_last_event_and_ends_the_merge_chain() {
    let dir = TempDir::new().unwrap();
    let server = server(&dir, None);
    let client = server.client();
    create_bucket(&client, WINDOW);
    save_rules(&client, &webui_defaults());
    beat(
        &client,
        WINDOW,
        &event("2026-01-01T10:00:00Z", 0.0, title("a")),
    );
    let last = beat(
        &client,
        WINDOW,
        &event("2026-01-01T10:00:10Z", 0.0, title("a")),
    );
    let answer = beat(
        &client,
        WINDOW,
        &event("2026-01-01T10:00:20Z", 0.0, title("incognito")),
    );
    assert_eq!(answer, last);
    let next = beat(
        &client,
        WINDOW,
        &event("2026-01-01T10:00:30Z", 0.0, title("a")),
    );
    assert_ne!(next["id"], last["id"]);
    let events = client
        .get(&format!("/api/0/buckets/{WINDOW}/events"))
        .json();
    assert_eq!(
        events[1]["duration"], 10.0,
        "not stretched over the private beat"
    );
}

#[test]
fn invalid_rules_get_400_naming_the_rule_and_the_rules_in_force_stay() {
    let dir = TempDir::new().unwrap();
    let server = server(&dir, None);
    let client = server.client();
    create_bucket(&client, WINDOW);
    save_rules(&client, &webui_defaults());
    let good = json!({"enabled": true, "field": "title", "pattern": "x", "action": "drop"});
    let cases = [
        (
            json!({"enabled": true, "field": "title", "action": "drop"}),
            "pattern",
        ),
        (
            json!({"enabled": true, "pattern": "x", "action": "drop"}),
            "field",
        ),
        (
            json!({"enabled": true, "field": "title", "pattern": "x", "action": "redact"}),
            "replacement",
        ),
        (
            json!({"enabled": true, "field": "title", "pattern": "(?i)(", "action": "drop"}),
            "regular expression",
        ),
        // Within the regex crate's own limit, over the query language's.
        (
            json!({"enabled": true, "field": "title", "pattern": "\\w{2000}", "action": "drop"}),
            "too big",
        ),
        (
            json!({"enabled": true, "field": "title", "pattern": "x", "action": "hide"}),
            "action",
        ),
        (json!([]), "object"),
    ];
    for (rule, needle) in cases {
        let reply = client.post_json("/api/0/settings/privacy_filters", &json!([good, rule]));
        let message = reply.assert_error(400);
        assert!(
            message.contains("rule 2") && message.contains(needle),
            "{rule}: {message}"
        );
    }
    let message = client
        .post_json("/api/0/settings/privacy_filters", &json!({"rules": []}))
        .assert_error(400);
    assert!(message.contains("array"), "{message}");
    assert_eq!(
        client.post("/api/0/settings/privacy_filters", b"[{").status,
        400
    );
    assert_eq!(
        client.get("/api/0/settings/privacy_filters").json(),
        webui_defaults()
    );
    beat(
        &client,
        WINDOW,
        &event("2026-01-01T10:00:00Z", 0.0, title("incognito")),
    );
    assert_eq!(
        client
            .get(&format!("/api/0/buckets/{WINDOW}/events/count"))
            .text(),
        "0"
    );
    // What aw-webui's validator accepts is accepted.
    save_rules(
        &client,
        &json!([{"enabled": false, "bucket_prefix": null, "field": "a.b", "pattern": "x",
                 "action": "drop", "replacement": null}]),
    );
    save_rules(&client, &json!([]));
}

/// Bucket "b" with 10:00-10:10, 10:20-10:30, 10:40-10:50, 11:00-11:10,
/// and "c" with the same.
fn four_events(client: &Client) {
    for bucket in ["b", "c"] {
        create_bucket(client, bucket);
        let events: Vec<Value> = ["10:00", "10:20", "10:40", "11:00"]
            .iter()
            .map(|time| {
                event(
                    &format!("2026-01-01T{time}:00Z"),
                    600.0,
                    json!({"app": "a"}),
                )
            })
            .collect();
        assert_eq!(
            client
                .post_json(&format!("/api/0/buckets/{bucket}/events"), &json!(events))
                .status,
            200
        );
    }
}

fn spans(client: &Client, bucket: &str) -> Vec<(String, f64)> {
    let events = client
        .get(&format!("/api/0/buckets/{bucket}/events"))
        .json();
    let mut spans: Vec<(String, f64)> = events
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["timestamp"].as_str().unwrap().to_string(),
                e["duration"].as_f64().unwrap(),
            )
        })
        .collect();
    spans.reverse();
    spans
}

#[test]
fn a_range_delete_deletes_inside_trims_crossing_and_splits_spanning_events() {
    let dir = TempDir::new().unwrap();
    let server = server(&dir, None);
    let client = server.client();
    four_events(&client);
    let path = "/api/0/buckets/b/events?start=2026-01-01T10:05:00Z&end=2026-01-01T10:45:00Z";
    let dry = client.delete(&format!("{path}&dry_run=true"));
    assert_eq!(dry.status, 200, "{}", dry.text());
    assert_eq!(dry.json(), json!({"deleted": 1, "trimmed": 2}));
    assert_eq!(spans(&client, "b").len(), 4, "a dry run changes nothing");
    let reply = client.delete(path);
    assert_eq!(reply.json(), json!({"deleted": 1, "trimmed": 2}));
    assert_eq!(
        spans(&client, "b"),
        [
            ("2026-01-01T10:00:00Z".to_string(), 300.0),
            ("2026-01-01T10:45:00Z".to_string(), 300.0),
            ("2026-01-01T11:00:00Z".to_string(), 600.0)
        ]
    );
    assert_eq!(spans(&client, "c").len(), 4, "other buckets untouched");
    assert_eq!(client.get("/api/0/buckets/b/events/count").text(), "3");
    // Spanning: split in two, counted once.
    let reply = client
        .delete("/api/0/buckets/c/events?start=2026-01-01T11:02:00Z&end=2026-01-01T11:03:00Z");
    assert_eq!(reply.json(), json!({"deleted": 0, "trimmed": 1}));
    let c = spans(&client, "c");
    assert_eq!(c[3], ("2026-01-01T11:00:00Z".to_string(), 120.0));
    assert_eq!(c[4], ("2026-01-01T11:03:00Z".to_string(), 420.0));
    // An empty range, and one with nothing in it.
    let reply = client
        .delete("/api/0/buckets/c/events?start=2026-01-01T12:00:00Z&end=2026-01-01T13:00:00Z");
    assert_eq!(reply.json(), json!({"deleted": 0, "trimmed": 0}));
    let reply = client
        .delete("/api/0/buckets/c/events?start=2026-01-01T10:05:00Z&end=2026-01-01T10:05:00Z");
    assert_eq!(reply.json(), json!({"deleted": 0, "trimmed": 0}));
    assert_eq!(spans(&client, "c").len(), 5);
}

#[test]
fn range_deletes_with_bad_bounds_are_refused_and_change_nothing() {
    let dir = TempDir::new().unwrap();
    let server = server(&dir, None);
    let client = server.client();
    four_events(&client);
    for query in [
        "",
        "?start=2026-01-01T10:00:00Z",
        "?end=2026-01-01T10:00:00Z",
        "?start=2026-01-01T11:00:00Z&end=2026-01-01T10:00:00Z",
        "?start=yesterday&end=2026-01-01T10:00:00Z",
        "?start=2026-01-01T10:00:00Z&end=2026-01-01T11:00:00Z&dry_run=maybe",
    ] {
        let message = client
            .delete(&format!("/api/0/buckets/b/events{query}"))
            .assert_error(400);
        assert!(!message.is_empty());
    }
    client
        .delete("/api/0/buckets/nope/events?start=2026-01-01T10:00:00Z&end=2026-01-01T11:00:00Z")
        .assert_error(404);
    assert_eq!(spans(&client, "b").len(), 4);
}

#[test]
fn applying_rules_to_history_reports_the_same_counts_dry_and_real() {
    let dir = TempDir::new().unwrap();
    let server = server(&dir, None);
    let client = server.client();
    create_bucket(&client, WINDOW);
    create_bucket(&client, "other");
    let events: Vec<Value> = (0..30)
        .map(|i| {
            let text = ["Incognito", "banking", "page"][i % 3];
            event(&format!("2026-01-01T10:{i:02}:00Z"), 30.0, title(text))
        })
        .collect();
    for bucket in [WINDOW, "other"] {
        assert_eq!(
            client
                .post_json(&format!("/api/0/buckets/{bucket}/events"), &json!(events))
                .status,
            200
        );
    }
    save_rules(&client, &webui_defaults());
    let dry = client.post("/api/0/privacy/apply?dry_run=true", b"");
    assert_eq!(dry.status, 200, "{}", dry.text());
    let dry = dry.json();
    assert_eq!(dry["dry_run"], true);
    assert_eq!(
        dry["buckets"][WINDOW],
        json!({"examined": 30, "dropped": 10, "redacted": 10})
    );
    assert!(dry["buckets"].get("other").is_none());
    assert_eq!(
        client
            .get(&format!("/api/0/buckets/{WINDOW}/events/count"))
            .text(),
        "30"
    );
    let real = client.post("/api/0/privacy/apply", b"").json();
    assert_eq!(real["dry_run"], false);
    assert_eq!(real["buckets"], dry["buckets"]);
    assert_eq!(
        (real["dropped"].as_u64(), real["redacted"].as_u64()),
        (Some(10), Some(10))
    );
    let titles = titles(&client, WINDOW);
    assert_eq!(titles.len(), 20);
    assert!(titles.iter().all(|t| t == "REDACTED" || t == "page"));
    assert_eq!(client.get("/api/0/buckets/other/events/count").text(), "30");
    let again = client.post("/api/0/privacy/apply", b"").json();
    assert_eq!(
        (again["dropped"].as_u64(), again["redacted"].as_u64()),
        (Some(0), Some(0))
    );
}

#[test]
fn retention_deletes_events_that_ended_before_keep_days_at_start() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("sqlite.db");
    {
        let store = Datastore::open(&path).unwrap();
        let now = aw_models::Timestamp::now();
        let days = |n: i64| now.saturating_sub(aw_models::Duration::from_secs(n * 86_400));
        let event = |start, seconds| json!({"timestamp": start, "duration": seconds, "data": {}});
        let bucket: aw_models::Bucket = serde_json::from_value(json!({
            "id": "b", "type": "test", "client": "c", "hostname": "h",
            "events": [
                event(days(40), 60),
                // Started before the cutoff, ended after it: kept.
                event(days(31), 2 * 86_400),
                event(days(1), 60),
            ]
        }))
        .unwrap();
        store.create_bucket(bucket).unwrap();
        store.close().unwrap();
    }
    let server = server(&dir, Some(30));
    let client = server.client();
    let deadline = Instant::now() + Duration::from_secs(60);
    while client.get("/api/0/buckets/b/events/count").text() != "2" {
        assert!(Instant::now() < deadline, "retention did not run");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn vacuum_reports_the_file_size_before_and_after() {
    let dir = TempDir::new().unwrap();
    let server = server(&dir, None);
    let client = server.client();
    create_bucket(&client, "b");
    let big = "x".repeat(4000);
    let events: Vec<Value> = (0..500)
        .map(|i| {
            event(
                &format!("2026-01-01T10:{:02}:{:02}Z", i / 60, i % 60),
                1.0,
                json!({"t": format!("{big}{i}")}),
            )
        })
        .collect();
    assert_eq!(
        client
            .post_json("/api/0/buckets/b/events", &json!(events))
            .status,
        200
    );
    let reply = client.post("/api/0/vacuum", b"");
    assert_eq!(reply.status, 200, "{}", reply.text());
    let sizes = reply.json();
    assert!(
        sizes["size_before"].as_u64().unwrap() > 2_000_000,
        "{sizes}"
    );
    assert!(sizes["size_after"].as_u64().unwrap() > 0, "{sizes}");
    assert_eq!(client.get("/api/0/buckets/b/events/count").text(), "500");
}

#[test]
fn a_dry_run_counts_what_unsaved_rules_would_do_and_checks_them() {
    let dir = TempDir::new().unwrap();
    let server = server(&dir, None);
    let client = server.client();
    create_bucket(&client, WINDOW);
    let events: Vec<Value> = (0..9)
        .map(|i| {
            let text = ["Incognito", "banking", "page"][i % 3];
            event(&format!("2026-01-01T10:{i:02}:00Z"), 30.0, title(text))
        })
        .collect();
    client.post_json(&format!("/api/0/buckets/{WINDOW}/events"), &json!(events));
    // Nothing saved: without a body the dry run finds nothing to do...
    let saved = client.post("/api/0/privacy/apply?dry_run=true", b"").json();
    assert_eq!(
        (saved["dropped"].as_u64(), saved["redacted"].as_u64()),
        (Some(0), Some(0))
    );
    // ...with the rules being edited, what they would do.
    let edited = json!([
        {"enabled": true, "field": "title", "pattern": "(?i)incognito", "action": "drop"},
        {"enabled": true, "field": "title", "pattern": "bank", "action": "redact", "replacement": "X"},
        {"enabled": false, "field": "title", "pattern": "page", "action": "drop"},
    ]);
    let reply = client.post_json("/api/0/privacy/apply?dry_run=true", &edited);
    assert_eq!(reply.status, 200, "{}", reply.text());
    let preview = reply.json();
    assert_eq!(
        preview["buckets"][WINDOW],
        json!({"examined": 9, "dropped": 3, "redacted": 3})
    );
    // Rules a save would refuse are refused here, named by number.
    let mut broken = edited.clone();
    broken[1]["pattern"] = json!("(bank");
    let message = client
        .post_json("/api/0/privacy/apply?dry_run=true", &broken)
        .assert_error(400);
    assert!(
        message.starts_with("Invalid privacy filters: rule 2:"),
        "{message}"
    );
    // Rules in the body are never applied: save them first.
    let message = client
        .post_json("/api/0/privacy/apply", &edited)
        .assert_error(400);
    assert!(message.contains("only for a dry run"), "{message}");
    assert_eq!(titles(&client, WINDOW).len(), 9, "nothing changed");
    assert_eq!(
        client.get("/api/0/settings/privacy_filters").json(),
        json!(null)
    );
    // `null` is no body.
    let null = client
        .post("/api/0/privacy/apply?dry_run=true", b"null")
        .json();
    assert_eq!(null["buckets"], json!({}));
}

#[test]
fn the_status_says_what_retention_did_and_what_a_vacuum_would_give_back() {
    let dir = TempDir::new().unwrap();
    let server = server(&dir, None);
    let client = server.client();
    let off = client.get("/api/0/retention/status").json();
    assert_eq!(off["enabled"], false);
    assert_eq!(off["last_run"], json!(null));
    create_bucket(&client, "b");
    let big = "x".repeat(4000);
    let events: Vec<Value> = (0..300)
        .map(|i| {
            event(
                &format!("2026-01-01T10:{:02}:{:02}Z", i / 60, i % 60),
                1.0,
                json!({"t": format!("{big}{i}")}),
            )
        })
        .collect();
    client.post_json("/api/0/buckets/b/events", &json!(events));
    let before = client.get("/api/0/database/status").json();
    assert!(before["size"].as_u64().unwrap() > 1_000_000, "{before}");
    // Deleting a bucket leaves its pages free in the file.
    assert_eq!(client.delete("/api/0/buckets/b").status, 200);
    let after = client.get("/api/0/database/status").json();
    let reclaimable = after["reclaimable"].as_u64().unwrap();
    assert!(reclaimable > 1_000_000, "{after}");
    let vacuumed = client.post("/api/0/vacuum", b"").json();
    let given_back =
        vacuumed["size_before"].as_u64().unwrap() - vacuumed["size_after"].as_u64().unwrap();
    assert!(given_back >= reclaimable / 2, "{vacuumed} after {after}");
    assert_eq!(
        client.get("/api/0/database/status").json()["reclaimable"],
        0
    );
    drop(server);

    let server = self::server(&dir, Some(30));
    let client = server.client();
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        let status = client.get("/api/0/retention/status").json();
        if !status["last_run"].is_null() {
            break status;
        }
        assert!(Instant::now() < deadline, "retention did not run: {status}");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status["enabled"], true);
    assert_eq!(status["keep_days"], 30);
    assert_eq!(status["last_run"]["deleted"], 0);
    assert_eq!(status["last_error"], json!(null));
    assert!(status["next_run"].is_string(), "{status}");
}
