//! `POST /api/0/query/` (`docs/API.md` §3.6) and B-7: query errors are 400.

mod common;

use common::{create_bucket, event, TestServer};
use serde_json::json;

#[test]
fn one_result_per_period_with_any_offset() {
    let server = TestServer::start();
    let client = server.client();
    create_bucket(&client, "b");
    client.post_json(
        "/api/0/buckets/b/events",
        &json!([
            event("2021-06-01T10:00:00Z", 60.0, json!({"app": "vim"})),
            event("2021-06-02T10:00:00Z", 30.0, json!({"app": "vim"})),
        ]),
    );
    let body = json!({
        "timeperiods": [
            "2021-06-01T00:00:00Z/2021-06-02T00:00:00Z",
            "2021-06-02T02:00:00+02:00/2021-06-03T02:00:00+02:00",
            "2021-06-05T00:00:00-05:30/2021-06-06T00:00:00-05:30",
        ],
        "query": ["events = query_bucket(\"b\");", "RETURN = sum_durations(events);"],
    });
    for path in ["/api/0/query/", "/api/0/query?name=x&cache=1"] {
        let reply = client.post_json(path, &body);
        assert_eq!(reply.status, 200, "{}", reply.text());
        let results = reply.json();
        assert_eq!(results.as_array().unwrap().len(), 3);
        assert_eq!(results[0].as_f64(), Some(60.0));
        assert_eq!(results[1].as_f64(), Some(30.0));
        assert_eq!(results[2].as_f64(), Some(0.0));
    }
    let none = client.post_json(
        "/api/0/query/",
        &json!({"timeperiods": [], "query": ["RETURN = 1;"]}),
    );
    assert_eq!(none.json(), json!([]));
}

#[test]
fn query_errors_are_400_with_a_message_b7() {
    let server = TestServer::start();
    let client = server.client();
    let period = "2021-06-01T00:00:00Z/2021-06-02T00:00:00Z";
    let programs = [
        "RETURN = ;",
        "RETURN = no_such_function();",
        "RETURN = undefined_variable;",
        "RETURN = query_bucket(\"missing-bucket\");",
        "RETURN = 1 / 0;",
        "x = 1;",
        "RETURN = query_bucket;",
        "RETURN = \"unterminated",
    ];
    for program in programs {
        let reply = client.post_json(
            "/api/0/query/",
            &json!({"timeperiods": [period], "query": [program]}),
        );
        let message = reply.assert_error(400);
        assert!(!message.is_empty(), "{program}");
    }
}

#[test]
fn malformed_query_requests_are_refused() {
    let server = TestServer::start();
    let client = server.client();
    let bodies = [
        json!({"timeperiods": ["2021-06-01T00:00:00/2021-06-02T00:00:00Z"], "query": ["RETURN = 1;"]}),
        json!({"timeperiods": ["yesterday"], "query": ["RETURN = 1;"]}),
        json!({"timeperiods": "2021-06-01T00:00:00Z/2021-06-02T00:00:00Z", "query": ["RETURN = 1;"]}),
        json!({"query": ["RETURN = 1;"]}),
        json!({"timeperiods": []}),
        json!({"timeperiods": [], "query": "RETURN = 1;"}),
    ];
    for body in bodies {
        client.post_json("/api/0/query/", &body).assert_error(422);
    }
    client
        .post("/api/0/query/", b"{\"query\": [")
        .assert_error(400);
}

/// A finished day asked again is the cache's answer, the same as a
/// computed one; every way a write reaches that day over HTTP drops it.
#[test]
fn a_finished_period_is_kept_until_a_write_touches_it() {
    let server = TestServer::start();
    let client = server.client();
    create_bucket(&client, "b");
    let day = "2021-06-01T00:00:00Z/2021-06-02T00:00:00Z";
    let body = json!({
        "timeperiods": [day, "2021-06-02T00:00:00Z/2021-06-03T00:00:00Z"],
        "query": ["events = query_bucket(\"b\");", "RETURN = sum_durations(events);"],
    });
    let ask = |path: &str| {
        let reply = client.post_json(path, &body);
        assert_eq!(reply.status, 200, "{}", reply.text());
        reply.json()
    };
    let hits = |server: &TestServer| -> f64 {
        let text = server.client().get("/metrics").text();
        text.lines()
            .find_map(|line| line.strip_prefix("aw_server_cache_hits_total "))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no aw_server_cache_hits_total in {text}"))
    };
    assert_eq!(ask("/api/0/query/"), json!([0.0, 0.0]));
    assert_eq!(ask("/api/0/query/"), json!([0.0, 0.0]));
    assert_eq!(hits(&server), 2.0);

    // An insert.
    client.post_json(
        "/api/0/buckets/b/events",
        &json!([event("2021-06-01T10:00:00Z", 60.0, json!({"app": "vim"}))]),
    );
    assert_eq!(ask("/api/0/query/"), json!([60.0, 0.0]));
    // A heartbeat that extends that event across midnight changes both days.
    let reply = client.post_json(
        "/api/0/buckets/b/heartbeat?pulsetime=100000",
        &event("2021-06-02T01:00:00Z", 0.0, json!({"app": "vim"})),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    let extended = ask("/api/0/query/");
    assert_eq!(extended, json!([50_400.0, 3_600.0]));
    assert_eq!(ask("/api/0/query?cache=false"), extended);
    // A deleted event.
    let events = client.get("/api/0/buckets/b/events").json();
    let id = events[0]["id"].as_i64().unwrap();
    assert_eq!(
        client
            .delete(&format!("/api/0/buckets/b/events/{id}"))
            .status,
        200
    );
    assert_eq!(ask("/api/0/query/"), json!([0.0, 0.0]));
    // A deleted bucket: the program fails, as it does uncached.
    assert_eq!(client.delete("/api/0/buckets/b?force=1").status, 200);
    let gone = client.post_json("/api/0/query/", &body);
    assert_eq!(gone.status, 400, "{}", gone.text());
}

#[test]
fn the_cache_parameter_is_a_flag() {
    let server = TestServer::start();
    let client = server.client();
    let body = json!({
        "timeperiods": ["2021-06-01T00:00:00Z/2021-06-02T00:00:00Z"],
        "query": ["RETURN = 1;"],
    });
    for flag in ["true", "1", "false", "0", "FALSE", ""] {
        let reply = client.post_json(&format!("/api/0/query/?cache={flag}"), &body);
        assert_eq!(reply.status, 200, "{flag}: {}", reply.text());
    }
    let refused = client.post_json("/api/0/query/?cache=maybe", &body);
    assert!(refused.assert_error(400).contains("cache"));
}

#[test]
fn with_the_cache_off_every_answer_is_computed() {
    let server = TestServer::start_with(|config| config.cache = None);
    let client = server.client();
    create_bucket(&client, "b");
    let body = json!({
        "timeperiods": ["2021-06-01T00:00:00Z/2021-06-02T00:00:00Z"],
        "query": ["RETURN = sum_durations(query_bucket(\"b\"));"],
    });
    for _ in 0..2 {
        assert_eq!(
            client.post_json("/api/0/query/", &body).json(),
            json!([0.0])
        );
    }
    let text = client.get("/metrics").text();
    assert!(!text.contains("aw_server_cache_hits_total"), "{text}");
}
