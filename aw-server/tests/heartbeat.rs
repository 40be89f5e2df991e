//! Heartbeats (`docs/API.md` §3.4, §4) and the corrections B-3, B-4.

mod common;

use common::{create_bucket, event, Client, TestServer};
use serde_json::{json, Value};

fn beat(client: &Client, bucket: &str, pulsetime: &str, body: &Value) -> Value {
    let reply = client.post_json(
        &format!("/api/0/buckets/{bucket}/heartbeat?pulsetime={pulsetime}"),
        body,
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    reply.json()
}

#[test]
fn heartbeats_merge_within_pulsetime() {
    let server = TestServer::start();
    let client = server.client();
    create_bucket(&client, "b");
    let first = beat(
        &client,
        "b",
        "10",
        &event("2021-06-01T10:00:00Z", 0.0, json!({"app": "vim"})),
    );
    assert!(first["id"].is_i64());
    let second = beat(
        &client,
        "b",
        "10",
        &event("2021-06-01T10:00:05Z", 0.0, json!({"app": "vim"})),
    );
    assert_eq!(second["id"], first["id"]);
    assert_eq!(second["timestamp"], "2021-06-01T10:00:00Z");
    assert_eq!(second["duration"], 5.0);
    // Fractional pulsetime.
    let third = beat(
        &client,
        "b",
        "2.5",
        &event("2021-06-01T10:00:07.5Z", 0.0, json!({"app": "vim"})),
    );
    assert_eq!(third["id"], first["id"]);
    assert_eq!(third["duration"], 7.5);
    // Different data: a new event.
    let other = beat(
        &client,
        "b",
        "10",
        &event("2021-06-01T10:00:08Z", 0.0, json!({"app": "emacs"})),
    );
    assert_ne!(other["id"], first["id"]);
    assert_eq!(client.get("/api/0/buckets/b/events/count").text(), "2");
}

#[test]
fn heartbeat_ignores_a_client_id() {
    let server = TestServer::start();
    let client = server.client();
    create_bucket(&client, "b");
    let stored = client
        .post_json(
            "/api/0/buckets/b/events",
            &json!([event("2021-06-01T09:00:00Z", 1.0, json!({"x": 1}))]),
        )
        .json();
    let id = stored[0]["id"].clone();
    let mut body = event("2021-06-01T10:00:00Z", 0.0, json!({"y": 1}));
    body["id"] = id.clone();
    let result = beat(&client, "b", "0", &body);
    assert_ne!(result["id"], id);
    assert_eq!(client.get("/api/0/buckets/b/events/count").text(), "2");
}

#[test]
fn heartbeat_after_deleting_the_last_event_b3() {
    let server = TestServer::start();
    let client = server.client();
    create_bucket(&client, "b");
    let data = json!({"app": "vim"});
    let first = beat(
        &client,
        "b",
        "10",
        &event("2021-06-01T10:00:00Z", 0.0, data.clone()),
    );
    client.delete(&format!("/api/0/buckets/b/events/{}", first["id"]));
    let next = beat(
        &client,
        "b",
        "10",
        &event("2021-06-01T10:00:05Z", 0.0, data.clone()),
    );
    assert_eq!(next["timestamp"], "2021-06-01T10:00:05Z");
    assert_eq!(client.get("/api/0/buckets/b/events/count").text(), "1");
}

#[test]
fn heartbeat_after_recreating_the_bucket_b4() {
    let server = TestServer::start();
    let client = server.client();
    create_bucket(&client, "b");
    let data = json!({"app": "vim"});
    beat(
        &client,
        "b",
        "10",
        &event("2021-06-01T10:00:00Z", 0.0, data.clone()),
    );
    client.delete("/api/0/buckets/b");
    create_bucket(&client, "b");
    let next = beat(
        &client,
        "b",
        "10",
        &event("2021-06-01T10:00:05Z", 0.0, data),
    );
    assert_eq!(next["timestamp"], "2021-06-01T10:00:05Z");
    assert_eq!(next["duration"], 0.0);
    assert_eq!(client.get("/api/0/buckets/b/events/count").text(), "1");
}

#[test]
fn pulsetime_is_required_and_numeric() {
    let server = TestServer::start();
    let client = server.client();
    create_bucket(&client, "b");
    let body = event("2021-06-01T10:00:00Z", 0.0, json!({})).to_string();
    for query in [
        "",
        "?pulsetime=",
        "?pulsetime=abc",
        "?pulsetime=-1",
        "?pulsetime=NaN",
        "?pulsetime=1e300",
    ] {
        let reply = client.post(
            &format!("/api/0/buckets/b/heartbeat{query}"),
            body.as_bytes(),
        );
        reply.assert_error(400);
    }
    assert_eq!(client.get("/api/0/buckets/b/events/count").text(), "0");
}

#[test]
fn a_body_that_is_no_event_object_is_refused_by_name() {
    let server = TestServer::start();
    let client = server.client();
    create_bucket(&client, "b");
    let path = "/api/0/buckets/b/heartbeat?pulsetime=5";
    let list = client
        .post_json(
            path,
            &json!([{"timestamp": "2026-12-01T09:00:00Z", "duration": 0, "data": {}}]),
        )
        .assert_error(422);
    assert!(
        list.contains("a JSON object with timestamp, duration and data")
            && list.contains("a list of events goes to POST /api/0/buckets/b/events"),
        "{list}"
    );
    for body in [json!(["a"]), json!([]), json!(5), json!("x")] {
        let message = client.post_json(path, &body).assert_error(422);
        assert!(
            message.contains("expected an event: a JSON object") && !message.contains("Wire"),
            "{body}: {message}"
        );
    }
    assert_eq!(client.get("/api/0/buckets/b/events").json(), json!([]));
}
