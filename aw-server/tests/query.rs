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
