//! Export and import (`docs/API.md` §3.5, §5) and B-5 for imports.

mod common;

use common::{create_bucket, encode, event, Client, Reply, TestServer};
use serde_json::{json, Value};

fn fill(client: &Client, bucket: &str, count: usize) {
    create_bucket(client, bucket);
    let events: Vec<Value> = (0..count)
        .map(|i| {
            event(
                &format!("2021-06-01T10:{:02}:{:02}Z", i / 60 % 60, i % 60),
                1.0,
                json!({"i": i}),
            )
        })
        .collect();
    let reply = client.post_json(&format!("/api/0/buckets/{bucket}/events"), &json!(events));
    assert_eq!(reply.status, 200);
}

/// Posts `document` to `/api/0/import` as the web UI does: a multipart
/// form whose file part is named `field`.
fn import_multipart(client: &Client, field: &str, document: &str) -> Reply {
    let (content_type, body) = multipart(field, document);
    client.request(
        "POST",
        "/api/0/import",
        &[("Content-Type", &content_type)],
        Some(&body),
    )
}

fn multipart(field: &str, document: &str) -> (String, Vec<u8>) {
    let boundary = "----aw-test-boundary-7MA4YWxkTrZu0gW";
    let body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nignored\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"; filename=\"export.json\"\r\n\
         Content-Type: application/json\r\n\r\n{document}\r\n--{boundary}--\r\n"
    );
    (
        format!("multipart/form-data; boundary={boundary}"),
        body.into_bytes(),
    )
}

fn counts(client: &Client) -> Vec<(String, String)> {
    let buckets = client.get("/api/0/buckets/").json();
    buckets
        .as_object()
        .unwrap()
        .keys()
        .map(|id| {
            let count = client
                .get(&format!("/api/0/buckets/{}/events/count", encode(id)))
                .text();
            (id.clone(), count)
        })
        .collect()
}

#[test]
fn bucket_export_is_the_document_with_a_download_name() {
    let server = TestServer::start();
    let client = server.client();
    fill(&client, "b", 2500);
    let reply = client.get("/api/0/buckets/b/export");
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.header("Content-Disposition"),
        Some("attachment; filename=aw-bucket-export_b.json")
    );
    assert!(reply
        .header("Content-Type")
        .unwrap()
        .starts_with("application/json"));
    let document = reply.json();
    let bucket = &document["buckets"]["b"];
    assert_eq!(bucket["id"], "b");
    assert_eq!(bucket["type"], "test");
    let events = bucket["events"].as_array().unwrap();
    assert_eq!(events.len(), 2500);
    assert!(events[0]["id"].is_i64());
    assert_eq!(events[0]["data"]["i"], 2499, "newest first");
    assert_eq!(events[2499]["data"]["i"], 0);
}

#[test]
fn export_all_has_every_bucket() {
    let server = TestServer::start();
    let client = server.client();
    assert_eq!(client.get("/api/0/export").json(), json!({"buckets": {}}));
    fill(&client, "a", 3);
    fill(&client, "b", 0);
    let reply = client.get("/api/0/export");
    assert_eq!(
        reply.header("Content-Disposition"),
        Some("attachment; filename=aw-buckets-export.json")
    );
    let document = reply.json();
    assert_eq!(
        document["buckets"]["a"]["events"].as_array().unwrap().len(),
        3
    );
    assert_eq!(document["buckets"]["b"]["events"], json!([]));
}

#[test]
fn non_ascii_bucket_ids_get_a_safe_file_name() {
    let server = TestServer::start();
    let client = server.client();
    let id = "ünï côdé \"quoted\"; ☃";
    let reply = client.post_json(
        &format!("/api/0/buckets/{}", encode(id)),
        &common::bucket_body("t"),
    );
    assert_eq!(reply.status, 200);
    let reply = client.get(&format!("/api/0/buckets/{}/export", encode(id)));
    assert_eq!(reply.status, 200);
    let disposition = reply.header("Content-Disposition").unwrap();
    assert!(disposition.is_ascii(), "{disposition}");
    assert!(!disposition.contains('"'));
    assert_eq!(reply.json()["buckets"][id]["id"], id);
}

#[test]
fn export_delete_import_round_trips() {
    let server = TestServer::start();
    let client = server.client();
    let body = json!({"type": "currentwindow", "client": "c", "hostname": "h",
                      "created": "2020-01-01T00:00:00.5Z", "data": {"device_id": "x"}});
    client.post_json("/api/0/buckets/b", &body);
    client.post_json(
        "/api/0/buckets/b/events",
        &json!([
            event(
                "2021-06-01T10:00:00.123456789Z",
                1.5,
                json!({"a": [1, {"b": null}]})
            ),
            event("2021-06-01T11:00:00Z", 0.0, json!({}))
        ]),
    );
    let before_bucket = client.get("/api/0/buckets/b").json();
    let before_events = client.get("/api/0/buckets/b/events").json();
    let export = client.get("/api/0/buckets/b/export").body;
    client.delete("/api/0/buckets/b");
    let reply = client.post("/api/0/import", &export);
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert!(reply.body.is_empty());
    let after_bucket = client.get("/api/0/buckets/b").json();
    for field in [
        "id", "type", "client", "hostname", "created", "data", "metadata",
    ] {
        assert_eq!(after_bucket[field], before_bucket[field], "{field}");
    }
    let strip = |events: &Value| -> Vec<Value> {
        events
            .as_array()
            .unwrap()
            .iter()
            .map(|e| json!([e["timestamp"], e["duration"], e["data"]]))
            .collect()
    };
    assert_eq!(
        strip(&client.get("/api/0/buckets/b/events").json()),
        strip(&before_events)
    );
}

#[test]
fn reimport_merges_without_duplicates() {
    let server = TestServer::start();
    let client = server.client();
    fill(&client, "b", 20);
    let export = client.get("/api/0/export").body;
    let summaries: Vec<Value> = (0..2)
        .map(|_| {
            let reply = client.post("/api/0/import", &export);
            assert_eq!(reply.status, 200);
            assert!(reply.body.is_empty());
            serde_json::from_str(reply.header("x-import-summary").unwrap()).unwrap()
        })
        .collect();
    let summary = json!({"buckets_created": 0, "inserted": 0, "skipped": 20, "dropped": 0});
    assert_eq!(summaries, [summary.clone(), summary]);
    assert_eq!(client.get("/api/0/buckets/b/events/count").text(), "20");
    // A document with one more event adds just that one.
    let mut document: Value = serde_json::from_slice(&export).unwrap();
    document["buckets"]["b"]["events"]
        .as_array_mut()
        .unwrap()
        .push(event("2022-01-01T00:00:00Z", 1.0, json!({"new": true})));
    document["buckets"]["b"]["type"] = json!("changed");
    assert_eq!(client.post_json("/api/0/import", &document).status, 200);
    assert_eq!(client.get("/api/0/buckets/b/events/count").text(), "21");
    assert_eq!(
        client.get("/api/0/buckets/b").json()["type"],
        "test",
        "fields unchanged"
    );
}

#[test]
fn multipart_imports_use_the_buckets_json_field() {
    let server = TestServer::start();
    let client = server.client();
    let document = json!({"buckets": {"m": {"id": "m", "type": "t", "client": "c", "hostname": "h",
        "events": [event("2021-06-01T10:00:00Z", 1.0, json!({"x": 1}))]}}})
    .to_string();
    for field in ["buckets.json", "buckets"] {
        let reply = import_multipart(&client, field, &document);
        assert_eq!(reply.status, 200, "{field}: {}", reply.text());
    }
    assert_eq!(client.get("/api/0/buckets/m/events/count").text(), "1");
    let reply = import_multipart(&client, "wrong-name", &document);
    reply.assert_error(400);
}

#[test]
fn imported_ids_never_touch_other_buckets_b5() {
    let server = TestServer::start();
    let client = server.client();
    fill(&client, "mine", 3);
    let mine = client.get("/api/0/buckets/mine/events").json();
    let ids: Vec<Value> = mine
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].clone())
        .collect();
    let foreign: Vec<Value> = ids
        .iter()
        .map(|id| json!({"id": id, "timestamp": "2030-01-01T00:00:00Z", "duration": 9, "data": {"foreign": id}}))
        .collect();
    let document = json!({"buckets": {"theirs": {"id": "theirs", "type": "t", "client": "c",
                                                 "hostname": "h", "events": foreign}}});
    assert_eq!(client.post_json("/api/0/import", &document).status, 200);
    assert_eq!(client.get("/api/0/buckets/mine/events").json(), mine);
    let theirs = client.get("/api/0/buckets/theirs/events").json();
    assert_eq!(theirs.as_array().unwrap().len(), 3);
    for event in theirs.as_array().unwrap() {
        assert!(!ids.contains(&event["id"]), "{event}");
    }
}

#[test]
fn a_broken_import_stores_nothing() {
    let server = TestServer::start();
    let client = server.client();
    fill(&client, "existing", 2);
    let before = counts(&client);
    let good_bucket = json!({"type": "t", "client": "c", "hostname": "h",
        "events": (0..50).map(|i| event(&format!("2021-06-01T10:00:{i:02}Z"), 1.0, json!({}))).collect::<Vec<_>>()});
    let valid_then_bad = json!({"buckets": {
        "first": good_bucket,
        "second": {"type": "t", "client": "c", "hostname": "h",
                   "events": [event("2021-06-01T10:00:00Z", 1.0, json!({})), {"timestamp": "bad", "data": {}}]}
    }});
    client
        .post_json("/api/0/import", &valid_then_bad)
        .assert_error(422);
    let text = json!({"buckets": {"first": good_bucket, "existing": good_bucket}}).to_string();
    let truncated = &text[..text.len() * 3 / 4];
    client
        .post("/api/0/import", truncated.as_bytes())
        .assert_error(400);
    let reply = import_multipart(&client, "buckets.json", truncated);
    reply.assert_error(400);
    assert_eq!(counts(&client), before);
}
