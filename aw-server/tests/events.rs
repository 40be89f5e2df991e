//! Event endpoints (`docs/API.md` §3.3) and the corrections B-1, B-2, B-5, B-6.

mod common;

use common::{create_bucket, event, Client, TestServer};
use serde_json::{json, Value};

/// Three events 10:00-10:10, 10:20-10:30, 10:40-10:50 in bucket `b`.
fn three_events(client: &Client) -> Vec<Value> {
    create_bucket(client, "b");
    let reply = client.post_json(
        "/api/0/buckets/b/events",
        &json!([
            event("2021-06-01T10:00:00Z", 600.0, json!({"n": 1})),
            event("2021-06-01T10:40:00Z", 600.0, json!({"n": 3})),
            event("2021-06-01T10:20:00Z", 600.0, json!({"n": 2})),
        ]),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    reply.json().as_array().unwrap().clone()
}

fn data_n(events: &Value) -> Vec<i64> {
    events
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["data"]["n"].as_i64().unwrap())
        .collect()
}

#[test]
fn insert_answers_the_stored_events_with_ids() {
    let server = TestServer::start();
    let client = server.client();
    let stored = three_events(&client);
    assert_eq!(stored.len(), 3);
    for event in &stored {
        assert!(event["id"].is_i64(), "{event}");
        assert_eq!(event["duration"], 600.0);
    }
    let empty = client.post_json("/api/0/buckets/b/events", &json!([]));
    assert_eq!(empty.status, 200);
    assert_eq!(empty.json(), json!([]));
}

#[test]
fn listing_is_newest_first_with_limit() {
    let server = TestServer::start();
    let client = server.client();
    three_events(&client);
    let all = client.get("/api/0/buckets/b/events");
    assert_eq!(data_n(&all.json()), [3, 2, 1]);
    assert_eq!(
        data_n(&client.get("/api/0/buckets/b/events?limit=-1").json()),
        [3, 2, 1]
    );
    assert_eq!(
        data_n(&client.get("/api/0/buckets/b/events?limit=2").json()),
        [3, 2]
    );
    assert_eq!(
        client.get("/api/0/buckets/b/events?limit=0").json(),
        json!([])
    );
    let first = &all.json()[0];
    assert_eq!(first["timestamp"], "2021-06-01T10:40:00Z");
    assert_eq!(
        first.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["data", "duration", "id", "timestamp"]
    );
}

#[test]
fn start_and_end_select_inclusively_and_clip() {
    let server = TestServer::start();
    let client = server.client();
    three_events(&client);
    let reply =
        client.get("/api/0/buckets/b/events?start=2021-06-01T10:05:00Z&end=2021-06-01T10:25:00Z");
    let events = reply.json();
    assert_eq!(data_n(&events), [2, 1]);
    assert_eq!(events[0]["timestamp"], "2021-06-01T10:20:00Z");
    assert_eq!(events[0]["duration"], 300.0);
    assert_eq!(events[1]["timestamp"], "2021-06-01T10:05:00Z");
    assert_eq!(events[1]["duration"], 300.0);
    // Touching a bound counts, with duration 0.
    let touching = client
        .get("/api/0/buckets/b/events?start=2021-06-01T10:10:00Z&end=2021-06-01T10:15:00Z")
        .json();
    assert_eq!(data_n(&touching), [1]);
    assert_eq!(touching[0]["duration"], 0.0);
    // Offsets are converted; an encoded '+' works.
    let offset = client
        .get("/api/0/buckets/b/events?start=2021-06-01T12:45:00%2B02:00")
        .json();
    assert_eq!(data_n(&offset), [3]);
    // start > end: nothing.
    let reversed =
        client.get("/api/0/buckets/b/events?start=2021-06-01T11:00:00Z&end=2021-06-01T10:00:00Z");
    assert_eq!(reversed.json(), json!([]));
}

#[test]
fn count_honours_start_and_end_b2() {
    let server = TestServer::start();
    let client = server.client();
    three_events(&client);
    let count = client.get("/api/0/buckets/b/events/count");
    assert_eq!(count.status, 200);
    assert_eq!(count.text(), "3");
    let count = client
        .get("/api/0/buckets/b/events/count?start=2021-06-01T10:05:00Z&end=2021-06-01T10:25:00Z");
    assert_eq!(count.text(), "2");
    let count = client.get("/api/0/buckets/b/events/count?start=2021-06-01T10:45:00Z");
    assert_eq!(count.text(), "1");
    client
        .get("/api/0/buckets/b/events/count?start=garbage")
        .assert_error(400);
}

#[test]
fn get_and_delete_one_event_b1() {
    let server = TestServer::start();
    let client = server.client();
    let stored = three_events(&client);
    let id = stored[0]["id"].as_i64().unwrap();
    let reply = client.get(&format!("/api/0/buckets/b/events/{id}"));
    assert_eq!(reply.json(), stored[0]);

    // Missing id and an id of another bucket are 404, not 500.
    client
        .get("/api/0/buckets/b/events/999999")
        .assert_error(404);
    create_bucket(&client, "other");
    client
        .get(&format!("/api/0/buckets/other/events/{id}"))
        .assert_error(404);
    client.get("/api/0/buckets/b/events/abc").assert_error(400);

    // Deleting through another bucket changes nothing.
    let reply = client.request(
        "DELETE",
        &format!("/api/0/buckets/other/events/{id}"),
        &[("Content-Type", "application/json")],
        Some(b"{}"),
    );
    assert_eq!(reply.status, 200);
    assert_eq!(client.get("/api/0/buckets/b/events/count").text(), "3");

    assert_eq!(
        client
            .delete(&format!("/api/0/buckets/b/events/{id}"))
            .status,
        200
    );
    client
        .get(&format!("/api/0/buckets/b/events/{id}"))
        .assert_error(404);
    assert_eq!(client.get("/api/0/buckets/b/events/count").text(), "2");
    // Deleting a missing id is fine.
    assert_eq!(client.delete("/api/0/buckets/b/events/999999").status, 200);
}

#[test]
fn event_with_id_replaces_only_in_its_own_bucket_b5() {
    let server = TestServer::start();
    let client = server.client();
    let stored = three_events(&client);
    let id = stored[0]["id"].as_i64().unwrap();
    let mut replacement = event("2021-06-01T11:00:00Z", 5.0, json!({"n": 9}));
    replacement["id"] = json!(id);
    let reply = client.post_json("/api/0/buckets/b/events", &json!([replacement]));
    assert_eq!(reply.status, 200);
    let fetched = client.get(&format!("/api/0/buckets/b/events/{id}")).json();
    assert_eq!(fetched["data"], json!({"n": 9}));
    assert_eq!(fetched["timestamp"], "2021-06-01T11:00:00Z");
    assert_eq!(client.get("/api/0/buckets/b/events/count").text(), "3");

    // The same id posted to another bucket must not touch bucket b.
    create_bucket(&client, "other");
    let mut foreign = event("2021-06-01T12:00:00Z", 1.0, json!({"n": 100}));
    foreign["id"] = json!(id);
    let reply = client.post_json("/api/0/buckets/other/events", &json!([foreign]));
    assert_eq!(reply.status, 200);
    let fetched = client.get(&format!("/api/0/buckets/b/events/{id}")).json();
    assert_eq!(fetched["data"], json!({"n": 9}));
    assert_eq!(client.get("/api/0/buckets/b/events/count").text(), "3");
    assert_eq!(client.get("/api/0/buckets/other/events/count").text(), "1");
}

#[test]
fn bucket_metadata_follows_the_events_b6() {
    let server = TestServer::start();
    let client = server.client();
    let stored = three_events(&client);
    let metadata = client.get("/api/0/buckets/b").json()["metadata"].clone();
    assert_eq!(
        metadata,
        json!({"start": "2021-06-01T10:00:00Z", "end": "2021-06-01T10:50:00Z"})
    );
    let newest = stored.iter().find(|e| e["data"]["n"] == 3).unwrap()["id"]
        .as_i64()
        .unwrap();
    client.delete(&format!("/api/0/buckets/b/events/{newest}"));
    let metadata = client.get("/api/0/buckets/b").json()["metadata"].clone();
    assert_eq!(metadata["end"], "2021-06-01T10:30:00Z");
    let listed = client.get("/api/0/buckets/").json()["b"]["metadata"].clone();
    assert_eq!(listed, metadata);
}

#[test]
fn data_and_precision_are_kept() {
    let server = TestServer::start();
    let client = server.client();
    create_bucket(&client, "b");
    let data =
        json!({"": 1, "a.b": [1, 1.5, {"$x": null}], "ünï": "☃", "nested": {"deep": [true]}});
    let reply = client.post_json(
        "/api/0/buckets/b/events",
        &json!([event(
            "2021-06-01T10:00:00.123456789+02:00",
            0.001,
            data.clone()
        )]),
    );
    assert_eq!(reply.status, 200);
    let events = client.get("/api/0/buckets/b/events").json();
    assert_eq!(events[0]["data"], data);
    assert_eq!(events[0]["timestamp"], "2021-06-01T08:00:00.123456789Z");
    assert_eq!(events[0]["duration"], 0.001);
}

#[test]
fn listings_larger_than_a_body_piece_arrive_whole() {
    let server = TestServer::start();
    let client = server.client();
    create_bucket(&client, "b");
    // About 2.6 MB of JSON: several 1 MB pieces.
    let title = "t".repeat(600);
    let events: Vec<Value> = (0..4_000)
        .map(|i| {
            event(
                &format!(
                    "2021-06-01T{:02}:{:02}:{:02}Z",
                    i / 3600,
                    i / 60 % 60,
                    i % 60
                ),
                1.0,
                json!({"n": i, "title": title}),
            )
        })
        .collect();
    let reply = client.post_json("/api/0/buckets/b/events", &Value::from(events));
    assert_eq!(reply.status, 200, "{}", reply.text());
    let listing = client.get("/api/0/buckets/b/events?limit=-1");
    assert_eq!(listing.status, 200);
    assert!(listing.body.len() > 2_500_000, "{}", listing.body.len());
    assert_eq!(
        listing.header("Content-Length"),
        Some(listing.body.len().to_string().as_str())
    );
    let numbers = data_n(&listing.json());
    assert_eq!(numbers, (0..4_000).rev().collect::<Vec<i64>>());
}
