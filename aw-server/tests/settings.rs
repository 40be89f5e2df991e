//! Settings (`docs/API.md` §3.7).

mod common;

use common::{encode, TestServer};
use serde_json::{json, Value};

#[test]
fn any_json_value_round_trips() {
    let server = TestServer::start();
    let client = server.client();
    assert_eq!(client.get("/api/0/settings").json(), json!({}));
    assert_eq!(client.get("/api/0/settings/").json(), json!({}));
    let values = [
        ("theme", json!("dark")),
        ("startOfDay", json!("04:00")),
        ("number", json!(1.5)),
        ("integer", json!(7)),
        ("flag", json!(false)),
        ("list", json!([1, "a", null])),
        (
            "classes",
            json!([{"id": 1, "name": ["Work"], "rule": {"type": "regex", "regex": "\\bvim\\b"}}]),
        ),
        ("ünï côdé ☃", json!({"a": {}})),
    ];
    for (key, value) in &values {
        let reply = client.post_json(&format!("/api/0/settings/{}", encode(key)), value);
        assert_eq!(reply.status, 201, "{key}: {}", reply.text());
        assert!(reply.body.is_empty());
    }
    for (key, value) in &values {
        assert_eq!(
            &client
                .get(&format!("/api/0/settings/{}", encode(key)))
                .json(),
            value
        );
    }
    let all = client.get("/api/0/settings").json();
    assert_eq!(all.as_object().unwrap().len(), values.len());
    assert_eq!(all["theme"], "dark");
    // Replace.
    client.post_json("/api/0/settings/theme", &json!("light"));
    assert_eq!(client.get("/api/0/settings/theme").json(), "light");
}

#[test]
fn unset_keys_read_null_and_delete_is_idempotent() {
    let server = TestServer::start();
    let client = server.client();
    let reply = client.get("/api/0/settings/never-set");
    assert_eq!(reply.status, 200);
    assert_eq!(reply.text(), "null");
    client.post_json("/api/0/settings/k", &json!(1));
    assert_eq!(client.delete("/api/0/settings/k").status, 200);
    assert_eq!(client.get("/api/0/settings/k").json(), json!(null));
    assert_eq!(client.delete("/api/0/settings/k").status, 200);
    // Storing null is deleting.
    client.post_json("/api/0/settings/k", &json!(2));
    assert_eq!(
        client.post_json("/api/0/settings/k", &json!(null)).status,
        201
    );
    assert_eq!(client.get("/api/0/settings").json(), json!({}));
}

#[test]
fn keys_of_128_characters_or_more_are_refused() {
    let server = TestServer::start();
    let client = server.client();
    let ok = "k".repeat(127);
    assert_eq!(
        client
            .post_json(&format!("/api/0/settings/{ok}"), &json!(1))
            .status,
        201
    );
    let long = "k".repeat(128);
    let path = format!("/api/0/settings/{long}");
    assert_eq!(client.get(&path).assert_error(400), "Too long key");
    assert_eq!(
        client.post_json(&path, &json!(1)).assert_error(400),
        "Too long key"
    );
    assert_eq!(client.delete(&path).assert_error(400), "Too long key");
    // Characters, not bytes.
    let unicode = "é".repeat(127);
    assert_eq!(
        client
            .post_json(&format!("/api/0/settings/{}", encode(&unicode)), &json!(1))
            .status,
        201
    );
    assert_eq!(
        client
            .get("/api/0/settings")
            .json()
            .as_object()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn if_match_refuses_a_write_over_a_value_changed_since_it_was_read() {
    let server = TestServer::start();
    let client = server.client();
    let read = |key: &str| {
        let reply = client.get(&format!("/api/0/settings/{key}"));
        assert_eq!(reply.status, 200);
        let tag = reply.header("etag").expect("an ETag").to_string();
        assert!(tag.starts_with('"') && tag.ends_with('"'), "{tag}");
        (reply.json(), tag)
    };
    let write = |key: &str, value: &Value, tag: &str| {
        client.request(
            "POST",
            &format!("/api/0/settings/{key}"),
            &[("Content-Type", "application/json"), ("If-Match", tag)],
            Some(value.to_string().as_bytes()),
        )
    };
    // Two tabs read the unset key.
    let (value, first) = read("classes");
    assert_eq!(value, json!(null));
    let (_, second) = read("classes");
    assert_eq!(first, second, "the same value has the same tag");
    // The first saves, with the tag it read: stored, with the new tag.
    let saved = write("classes", &json!([{"name": ["A"]}]), &first);
    assert_eq!(saved.status, 201, "{}", saved.text());
    let (value, now) = read("classes");
    assert_eq!(value, json!([{"name": ["A"]}]));
    assert_eq!(saved.header("etag"), Some(now.as_str()));
    assert_ne!(now, first);
    // The second tab's save is refused, and the first's stays.
    let message = write("classes", &json!([{"name": ["B"]}]), &second).assert_error(412);
    assert!(message.contains("changed since it was read"), "{message}");
    assert_eq!(read("classes").0, json!([{"name": ["A"]}]));
    // A delete is conditional too.
    let delete = |tag: &str| {
        client.request(
            "DELETE",
            "/api/0/settings/classes",
            &[("If-Match", tag)],
            None,
        )
    };
    delete(&second).assert_error(412);
    assert_eq!(read("classes").0, json!([{"name": ["A"]}]));
    // Any of several tags, a weak one, and `*` (a stored value) match.
    let several = format!("\"0000000000000000\", W/{now}");
    let saved = write("classes", &json!([{"name": ["C"]}]), &several);
    assert_eq!(saved.status, 201, "{}", saved.text());
    assert_eq!(write("classes", &json!([]), "*").status, 201);
    assert_eq!(delete("*").status, 200);
    assert_eq!(read("classes").0, json!(null));
    write("classes", &json!([]), "*").assert_error(412);
    // Without If-Match, as aw-webui writes, anything goes.
    assert_eq!(
        client
            .post_json("/api/0/settings/classes", &json!(1))
            .status,
        201
    );
}
