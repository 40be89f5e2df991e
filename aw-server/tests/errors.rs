//! Every error response, Rocket's own included, is `{"message": ...}`; a
//! panicking handler gives a JSON 500 and the server keeps serving.

mod common;

use common::TestServer;

#[rocket::get("/boom")]
fn boom() -> &'static str {
    panic!("handler failure for the test")
}

#[test]
fn unknown_routes_are_json_404() {
    let server = TestServer::start();
    let client = server.client();
    for path in [
        "/api/0/nothing",
        "/api/1/info",
        "/api/0/buckets/b/unknown",
        "/nothing",
    ] {
        let message = client.get(path).assert_error(404);
        assert!(!message.is_empty(), "{path}");
    }
    client
        .request("PUT", "/api/0/nothing/b", &[], Some(b"{}"))
        .assert_error(404);
    client
        .request("PATCH", "/api/0/settings/x/y", &[], Some(b"{}"))
        .assert_error(404);
    // The internal rejection route is not reachable directly.
    client.get("/__aw-server/rejected").assert_error(404);
}

#[test]
fn malformed_json_is_400_with_the_parser_message() {
    let server = TestServer::start();
    let client = server.client();
    let message = client
        .post("/api/0/buckets/b", b"{\"type\": ")
        .assert_error(400);
    assert!(message.contains("EOF"), "{message}");
    let message = client
        .post("/api/0/buckets/b", b"{'type': 1}")
        .assert_error(400);
    assert!(message.contains("line 1 column"), "{message}");
    let message = client
        .post(
            "/api/0/buckets/b",
            br#"{"type": 1, "client": "c", "hostname": "h"}"#,
        )
        .assert_error(422);
    assert!(message.contains("invalid type"), "{message}");
}

#[test]
fn a_panicking_handler_gives_json_500_and_the_server_goes_on() {
    let server = TestServer::start_full(
        |_| {},
        |rocket| rocket.mount("/test", rocket::routes![boom]),
    );
    let client = server.client();
    for _ in 0..3 {
        client.get("/test/boom").assert_error(500);
    }
    assert_eq!(client.get("/api/0/info").status, 200);
}

#[test]
fn unparsable_request_targets_are_json_errors() {
    let server = TestServer::start();
    let client = server.client();
    // Invalid UTF-8 after decoding.
    client.get("/api/0/buckets/%ff%fe").assert_error(400);
}

/// A known API path asked with a method it does not take: 405 with the
/// methods it does take (found by fuzzing the API from its document).
#[test]
fn a_known_path_with_another_method_is_405_with_allow() {
    let server = TestServer::start();
    let client = server.client();
    for (method, path, allow) in [
        ("TRACE", "/api/0/buckets", "GET"),
        ("PATCH", "/api/0/buckets/b", "DELETE, GET, POST, PUT"),
        ("PATCH", "/api/0/buckets/b/events/7", "DELETE, GET"),
        ("DELETE", "/api/0/info", "GET"),
        ("PUT", "/api/0/query", "POST"),
        ("GET", "/api/0/query", "POST"),
        ("GET", "/api/0/import", "POST"),
    ] {
        let reply = client.request(method, path, &[], None);
        assert_eq!(reply.status, 405, "{method} {path}");
        assert_eq!(reply.header("Allow"), Some(allow), "{method} {path}");
        assert!(reply.json()["message"].as_str().unwrap().contains(method));
    }
    // An unknown path stays 404, whatever the method.
    assert_eq!(
        client.request("PUT", "/api/0/nothing", &[], None).status,
        404
    );
    assert_eq!(client.get("/api/0/buckets/b/events/7/more").status, 404);
}

/// `?start=x&start=y` would read as no `start` at all: it is refused.
#[test]
fn a_query_parameter_given_twice_is_400() {
    let server = TestServer::start();
    let client = server.client();
    client.post_json("/api/0/buckets/b", &common::bucket_body("t"));
    let reply = client.get("/api/0/buckets/b/events?start=null&start=null");
    let message = reply.assert_error(400);
    assert!(message.contains("'start'"), "{message}");
    assert_eq!(
        client
            .get("/api/0/buckets/b/events/count?end=2021-01-01T00:00:00Z&end=2022-01-01T00:00:00Z")
            .status,
        400
    );
    assert_eq!(
        client
            .get("/api/0/buckets/b/events?start=2021-01-01T00:00:00Z&limit=5")
            .status,
        200
    );
}
