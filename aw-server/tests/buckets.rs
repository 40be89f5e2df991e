//! Bucket endpoints (`docs/API.md` §3.2).

mod common;

use common::{bucket_body, create_bucket, encode, event, TestServer};
use serde_json::json;

#[test]
fn empty_server_lists_no_buckets() {
    let server = TestServer::start();
    let client = server.client();
    for path in ["/api/0/buckets/", "/api/0/buckets"] {
        let reply = client.get(path);
        assert_eq!(reply.status, 200);
        assert_eq!(reply.json(), json!({}));
    }
}

#[test]
fn create_get_list_delete() {
    let server = TestServer::start();
    let client = server.client();
    let body = json!({"id": "ignored", "type": "currentwindow", "client": "aw-watcher-window",
                      "hostname": "myhost", "created": "2021-06-01T09:00:00.123456789Z",
                      "data": {"k": [1, {"x": null}]}});
    let reply = client.post_json("/api/0/buckets/aw-watcher-window_myhost", &body);
    assert_eq!(reply.status, 200);
    assert!(reply.body.is_empty());

    let bucket = client.get("/api/0/buckets/aw-watcher-window_myhost").json();
    assert_eq!(
        bucket["id"], "aw-watcher-window_myhost",
        "the path's id wins"
    );
    assert_eq!(bucket["type"], "currentwindow");
    assert_eq!(bucket["client"], "aw-watcher-window");
    assert_eq!(bucket["hostname"], "myhost");
    assert_eq!(bucket["created"], "2021-06-01T09:00:00.123456789Z");
    assert_eq!(bucket["data"], json!({"k": [1, {"x": null}]}));
    assert_eq!(bucket["metadata"], json!({"start": null, "end": null}));

    let list = client.get("/api/0/buckets/").json();
    assert_eq!(list.as_object().unwrap().len(), 1);
    assert_eq!(list["aw-watcher-window_myhost"]["type"], "currentwindow");
    assert_eq!(list["aw-watcher-window_myhost"]["events"], json!(null));

    let reply = client.delete("/api/0/buckets/aw-watcher-window_myhost?force=1");
    assert_eq!(reply.status, 200);
    client
        .get("/api/0/buckets/aw-watcher-window_myhost")
        .assert_error(404);
    assert_eq!(client.get("/api/0/buckets/").json(), json!({}));
}

#[test]
fn existing_bucket_answers_304_and_is_unchanged() {
    let server = TestServer::start();
    let client = server.client();
    create_bucket(&client, "b");
    let before = client.get("/api/0/buckets/b").json();
    let reply = client.post_json(
        "/api/0/buckets/b",
        &json!({"type": "other", "client": "other", "hostname": "other", "data": {"a": 1}}),
    );
    assert_eq!(reply.status, 304);
    assert!(reply.body.is_empty());
    assert_eq!(client.get("/api/0/buckets/b").json(), before);
}

#[test]
fn created_defaults_to_now() {
    let server = TestServer::start();
    let client = server.client();
    create_bucket(&client, "b");
    let created = client.get("/api/0/buckets/b").json()["created"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(created.starts_with("20"), "{created}");
}

#[test]
fn local_hostname_becomes_the_servers() {
    let server = TestServer::start();
    let client = server.client();
    let reply = client.post_json(
        "/api/0/buckets/aw-watcher-web-firefox",
        &json!({"type": "web.tab.current", "client": "aw-client-js", "hostname": "!local",
                "data": {"keep": true}}),
    );
    assert_eq!(reply.status, 200);
    let bucket = client.get("/api/0/buckets/aw-watcher-web-firefox").json();
    assert_eq!(bucket["hostname"], "testhost");
    assert_eq!(
        bucket["data"],
        json!({"keep": true, "device_id": "test-device-id"})
    );
}

#[test]
fn missing_buckets_are_404_everywhere() {
    let server = TestServer::start();
    let client = server.client();
    let message = client.get("/api/0/buckets/nope").assert_error(404);
    assert!(message.contains("nope"), "{message}");
    client.delete("/api/0/buckets/nope").assert_error(404);
    client.get("/api/0/buckets/nope/events").assert_error(404);
    client
        .get("/api/0/buckets/nope/events/count")
        .assert_error(404);
    client.get("/api/0/buckets/nope/events/1").assert_error(404);
    client.get("/api/0/buckets/nope/export").assert_error(404);
    client
        .post_json("/api/0/buckets/nope/events", &json!([]))
        .assert_error(404);
    client
        .post_json(
            "/api/0/buckets/nope/heartbeat?pulsetime=1",
            &event("2021-06-01T10:00:00Z", 0.0, json!({})),
        )
        .assert_error(404);
}

#[test]
fn ids_with_any_character_but_slash_work_when_encoded() {
    let server = TestServer::start();
    let client = server.client();
    let ids = [
        "with space",
        "ünïcødé☃",
        "a:b@c+d",
        "100%",
        "quote'\"",
        "hash#q?amp&",
        "[br];,~",
        "dots.in.id",
        "...",
        "back\\slash",
    ];
    for id in ids {
        let path = format!("/api/0/buckets/{}", encode(id));
        let reply = client.post_json(&path, &bucket_body("t"));
        assert_eq!(reply.status, 200, "{id}: {}", reply.text());
        assert_eq!(client.get(&path).json()["id"], id);
        let events = client.post_json(
            &format!("{path}/events"),
            &json!([event("2021-06-01T10:00:00Z", 1.0, json!({}))]),
        );
        assert_eq!(events.status, 200, "{id}");
    }
    let list = client.get("/api/0/buckets/").json();
    for id in ids {
        assert_eq!(list[id]["id"], id);
    }
}

#[test]
fn recreated_bucket_starts_empty() {
    let server = TestServer::start();
    let client = server.client();
    create_bucket(&client, "b");
    client.post_json(
        "/api/0/buckets/b/events",
        &json!([event("2021-06-01T10:00:00Z", 1.0, json!({}))]),
    );
    assert_eq!(client.delete("/api/0/buckets/b").status, 200);
    create_bucket(&client, "b");
    assert_eq!(client.get("/api/0/buckets/b/events").json(), json!([]));
    assert_eq!(client.get("/api/0/buckets/b/events/count").text(), "0");
    assert_eq!(
        client.get("/api/0/buckets/b").json()["metadata"],
        json!({"start": null, "end": null})
    );
}

#[test]
fn create_works_without_content_type() {
    let server = TestServer::start();
    let client = server.client();
    let reply = client.request(
        "POST",
        "/api/0/buckets/b",
        &[],
        Some(bucket_body("t").to_string().as_bytes()),
    );
    assert_eq!(reply.status, 200);
    let reply = client.request(
        "POST",
        "/api/0/buckets/c",
        &[("Content-Type", "application/json"), ("charset", "utf-8")],
        Some(bucket_body("t").to_string().as_bytes()),
    );
    assert_eq!(reply.status, 200);
}

/// `PUT /api/0/buckets/<id>` (the Python server's update) replaces the
/// fields it is given and keeps the rest, the id, creation time and events.
#[test]
fn update_replaces_given_fields_and_keeps_the_rest() {
    let server = TestServer::start();
    let client = server.client();
    let body = json!({"type": "currentwindow", "client": "aw-watcher-window",
                      "hostname": "old", "created": "2021-06-01T09:00:00Z",
                      "data": {"keep": false}});
    assert_eq!(client.post_json("/api/0/buckets/b1", &body).status, 200);
    let events =
        json!([{"timestamp": "2021-06-01T10:00:00Z", "duration": 5, "data": {"app": "x"}}]);
    assert_eq!(
        client.post_json("/api/0/buckets/b1/events", &events).status,
        200
    );

    let update = |body: serde_json::Value| {
        let text = body.to_string();
        client.request(
            "PUT",
            "/api/0/buckets/b1",
            &[("Content-Type", "application/json")],
            Some(text.as_bytes()),
        )
    };
    let reply = update(
        json!({"hostname": "new", "data": {"device_id": "d"}, "id": "other",
                              "created": "2000-01-01T00:00:00Z"}),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    let answered = reply.json();
    let stored = client.get("/api/0/buckets/b1").json();
    assert_eq!(answered, stored);
    assert_eq!(stored["id"], "b1");
    assert_eq!(stored["hostname"], "new");
    assert_eq!(stored["data"], json!({"device_id": "d"}));
    assert_eq!(stored["type"], "currentwindow");
    assert_eq!(stored["client"], "aw-watcher-window");
    assert_eq!(stored["created"], "2021-06-01T09:00:00Z");
    assert_eq!(stored["metadata"]["start"], "2021-06-01T10:00:00Z");

    let reply = update(json!({"type": "afkstatus", "client": "c2"}));
    assert_eq!(reply.status, 200);
    let stored = client.get("/api/0/buckets/b1").json();
    assert_eq!(
        (stored["type"].as_str(), stored["client"].as_str()),
        (Some("afkstatus"), Some("c2"))
    );
    assert_eq!(stored["hostname"], "new");
    assert_eq!(
        client
            .get("/api/0/buckets/b1/events")
            .json()
            .as_array()
            .unwrap()
            .len(),
        1
    );

    assert_eq!(update(json!({"hostname": 5})).status, 400);
    assert_eq!(
        client.get("/api/0/buckets/b1").json(),
        stored,
        "a bad body changes nothing"
    );
    let missing = client.request("PUT", "/api/0/buckets/nope", &[], Some(b"{}"));
    assert_eq!(missing.status, 404);
    assert!(missing.json()["message"].is_string());
}
