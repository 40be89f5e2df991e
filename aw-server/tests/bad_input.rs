//! Table-driven bad input: every malformed request gets its 4xx JSON error,
//! changes nothing, and the server still reads and writes afterwards.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;

use common::{create_bucket, event, Client, TestServer};
use serde_json::{json, Value};

/// One bad request: method, path, content type, body, expected status.
struct Case {
    method: &'static str,
    path: String,
    content_type: &'static str,
    body: Vec<u8>,
    status: u16,
}

const JSON: &str = "application/json";
const EVENTS: &str = "/api/0/buckets/fixture/events";
const HEARTBEAT: &str = "/api/0/buckets/fixture/heartbeat?pulsetime=60";

fn case(method: &'static str, path: &str, body: &str, status: u16) -> Case {
    Case {
        method,
        path: path.to_string(),
        content_type: JSON,
        body: body.as_bytes().to_vec(),
        status,
    }
}

fn post(path: &str, body: &str, status: u16) -> Case {
    case("POST", path, body, status)
}

fn get(path: &str, status: u16) -> Case {
    case("GET", path, "", status)
}

fn events_with(event: &str) -> String {
    format!("[{event}]")
}

fn cases() -> Vec<Case> {
    let bucket = r#"{"type": "t", "client": "c", "hostname": "h"}"#;
    let ok_event = r#"{"timestamp": "2021-06-01T10:00:00Z", "duration": 1, "data": {}}"#;
    let import_bucket = |extra: &str| {
        format!(
            r#"{{"buckets": {{"imp": {{"type": "t", "client": "c", "hostname": "h"{extra}}}}}}}"#
        )
    };
    let boundary = "XyZ";
    let multipart = |field: &str, content: &str| {
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"; filename=\"f.json\"\r\n\r\n{content}\r\n--{boundary}--\r\n"
        )
    };
    let full_import = import_bucket(&format!(r#", "events": [{ok_event}, {ok_event}]"#));
    let mut cases = vec![
        // Bucket creation.
        post("/api/0/buckets/new", "{", 400),
        post("/api/0/buckets/new", "", 400),
        post("/api/0/buckets/new", "null", 422),
        post("/api/0/buckets/new", "[]", 422),
        post("/api/0/buckets/new", "\"bucket\"", 422),
        post("/api/0/buckets/new", "{}", 422),
        post(
            "/api/0/buckets/new",
            r#"{"client": "c", "hostname": "h"}"#,
            422,
        ),
        post(
            "/api/0/buckets/new",
            r#"{"type": "t", "hostname": "h"}"#,
            422,
        ),
        post("/api/0/buckets/new", r#"{"type": "t", "client": "c"}"#, 422),
        post(
            "/api/0/buckets/new",
            r#"{"type": 5, "client": "c", "hostname": "h"}"#,
            422,
        ),
        post(
            "/api/0/buckets/new",
            r#"{"type": "t", "client": "c", "hostname": null}"#,
            422,
        ),
        post(
            "/api/0/buckets/new",
            r#"{"type": "t", "client": "c", "hostname": "h", "data": []}"#,
            422,
        ),
        post(
            "/api/0/buckets/new",
            r#"{"type": "t", "client": "c", "hostname": "h", "data": "x"}"#,
            422,
        ),
        post(
            "/api/0/buckets/new",
            r#"{"type": "t", "client": "c", "hostname": "h", "created": "bad"}"#,
            422,
        ),
        post(
            "/api/0/buckets/new",
            r#"{"type": "t", "client": "c", "hostname": "h", "created": "2021-06-01T10:00:00"}"#,
            422,
        ),
        post(
            "/api/0/buckets/new",
            r#"{"type": "t", "client": "c", "hostname": "h", "created": "3000-01-01T00:00:00Z"}"#,
            422,
        ),
        post(
            "/api/0/buckets/new",
            r#"{"type": "t", "client": "c", "hostname": "h", "events": [{"data": {}}]}"#,
            422,
        ),
        post("/api/0/buckets/new", &format!("{bucket} trailing"), 400),
        post("/api/0/buckets/a%00b", bucket, 400),
        post("/api/0/buckets/line%0Abreak", bucket, 400),
        post(&format!("/api/0/buckets/{}", "x".repeat(1001)), bucket, 400),
        post("/api/0/buckets/%FF%FE", bucket, 400),
        // Event insertion.
        post(EVENTS, ok_event, 422),
        post(EVENTS, "[1]", 422),
        post(EVENTS, r#"[{"data": {}}]"#, 422),
        post(EVENTS, r#"[{"timestamp": "2021-06-01T10:00:00Z"}]"#, 422),
        post(
            EVENTS,
            r#"[{"timestamp": "2021-06-01T10:00:00Z", "data": null}]"#,
            422,
        ),
        post(EVENTS, r#"[{"timestamp": 1622541600, "data": {}}]"#, 422),
        post(
            EVENTS,
            r#"[{"timestamp": "2021-06-01T10:00:00", "data": {}}]"#,
            422,
        ),
        post(EVENTS, r#"[{"timestamp": "not a time", "data": {}}]"#, 422),
        post(
            EVENTS,
            r#"[{"timestamp": "1600-01-01T00:00:00Z", "data": {}}]"#,
            422,
        ),
        post(
            EVENTS,
            r#"[{"timestamp": "2300-01-01T00:00:00Z", "data": {}}]"#,
            422,
        ),
        post(
            EVENTS,
            r#"[{"timestamp": "2021-06-01T10:00:00Z", "duration": -1, "data": {}}]"#,
            422,
        ),
        post(
            EVENTS,
            r#"[{"timestamp": "2021-06-01T10:00:00Z", "duration": "1", "data": {}}]"#,
            422,
        ),
        post(
            EVENTS,
            r#"[{"timestamp": "2021-06-01T10:00:00Z", "duration": 1e300, "data": {}}]"#,
            422,
        ),
        post(
            EVENTS,
            r#"[{"timestamp": "2021-06-01T10:00:00Z", "duration": 9.3e9, "data": {}}]"#,
            422,
        ),
        post(
            EVENTS,
            r#"[{"timestamp": "2262-04-11T00:00:00Z", "duration": 86400, "data": {}}]"#,
            422,
        ),
        post(
            EVENTS,
            r#"[{"timestamp": "2021-06-01T10:00:00Z", "duration": NaN, "data": {}}]"#,
            400,
        ),
        post(
            EVENTS,
            r#"[{"timestamp": "2021-06-01T10:00:00Z", "duration": Infinity, "data": {}}]"#,
            400,
        ),
        post(
            EVENTS,
            r#"[{"id": "7", "timestamp": "2021-06-01T10:00:00Z", "data": {}}]"#,
            422,
        ),
        post(
            EVENTS,
            r#"[{"id": 1.5, "timestamp": "2021-06-01T10:00:00Z", "data": {}}]"#,
            422,
        ),
        post(EVENTS, &format!("[{ok_event}, {ok_event}"), 400),
        post(
            EVENTS,
            &format!(r#"[{ok_event}, {{"timestamp": "bad", "data": {{}}}}]"#),
            422,
        ),
        post("/api/0/buckets/missing/events", &events_with(ok_event), 404),
        // Event listing and single events.
        get(&format!("{EVENTS}?start=garbage"), 400),
        get(&format!("{EVENTS}?end=garbage"), 400),
        get(&format!("{EVENTS}?start=2021-06-01T10:00:00"), 400),
        get(&format!("{EVENTS}?start=3000-01-01T00:00:00Z"), 400),
        get(&format!("{EVENTS}?limit=-2"), 400),
        get(&format!("{EVENTS}?limit=abc"), 400),
        get(&format!("{EVENTS}?limit=1.5"), 400),
        get(&format!("{EVENTS}/abc"), 400),
        get(&format!("{EVENTS}/1.5"), 400),
        get(&format!("{EVENTS}/99999999999999999999"), 400),
        case("DELETE", &format!("{EVENTS}/abc"), "", 400),
        get(&format!("{EVENTS}/count?start=bad"), 400),
        get(&format!("{EVENTS}/count?end=2021-06-01"), 400),
        // Heartbeats.
        post("/api/0/buckets/fixture/heartbeat", ok_event, 400),
        post(
            "/api/0/buckets/fixture/heartbeat?pulsetime=abc",
            ok_event,
            400,
        ),
        post(
            "/api/0/buckets/fixture/heartbeat?pulsetime=-5",
            ok_event,
            400,
        ),
        post(
            "/api/0/buckets/fixture/heartbeat?pulsetime=NaN",
            ok_event,
            400,
        ),
        post(
            "/api/0/buckets/fixture/heartbeat?pulsetime=inf",
            ok_event,
            400,
        ),
        post(
            "/api/0/buckets/fixture/heartbeat?pulsetime=1e300",
            ok_event,
            400,
        ),
        post(HEARTBEAT, &events_with(ok_event), 422),
        post(HEARTBEAT, r#"{"timestamp": "2021-06-01T10:00:00Z"}"#, 422),
        post(
            HEARTBEAT,
            r#"{"timestamp": "2021-06-01T10:00:00Z", "duration": -1, "data": {}}"#,
            422,
        ),
        post(
            HEARTBEAT,
            r#"{"timestamp": "2021-06-01T10:00:00Z", "data": {"#,
            400,
        ),
        // Settings.
        post(&format!("/api/0/settings/{}", "k".repeat(128)), "1", 400),
        post("/api/0/settings/k", "", 400),
        post("/api/0/settings/k", "{\"a\":", 400),
        post("/api/0/settings/k", "tru", 400),
        // Query.
        post("/api/0/query/", "{", 400),
        post(
            "/api/0/query/",
            r#"{"timeperiods": ["bad"], "query": ["RETURN = 1;"]}"#,
            422,
        ),
        post("/api/0/query/", r#"{"timeperiods": []}"#, 422),
        post(
            "/api/0/query/",
            r#"{"timeperiods": [], "query": "RETURN = 1;"}"#,
            422,
        ),
        post(
            "/api/0/query/",
            r#"{"timeperiods": ["2021-06-01T00:00:00Z/2021-06-02T00:00:00Z"], "query": ["RETURN = nope();"]}"#,
            400,
        ),
        // Imports.
        post("/api/0/import", "{", 400),
        post("/api/0/import", "[]", 422),
        post("/api/0/import", "{}", 422),
        post(
            "/api/0/import",
            r#"{"buckets": {"imp": {"client": "c", "hostname": "h"}}}"#,
            422,
        ),
        post(
            "/api/0/import",
            &import_bucket(r#", "events": [{"timestamp": "bad", "data": {}}]"#),
            422,
        ),
        post("/api/0/import", &import_bucket(r#", "events": {}"#), 422),
        post("/api/0/import", &full_import[..full_import.len() - 20], 400),
        post(
            "/api/0/import",
            r#"{"buckets": {"a\u0000b": {"type": "t", "client": "c", "hostname": "h"}}}"#,
            422,
        ),
        Case {
            method: "POST",
            path: "/api/0/import".into(),
            content_type: "multipart/form-data",
            body: multipart("buckets.json", &full_import).into_bytes(),
            status: 400,
        },
        Case {
            method: "POST",
            path: "/api/0/import".into(),
            content_type: "multipart/form-data; boundary=XyZ",
            body: multipart("not-buckets", &full_import).into_bytes(),
            status: 400,
        },
        Case {
            method: "POST",
            path: "/api/0/import".into(),
            content_type: "multipart/form-data; boundary=XyZ",
            body: multipart("buckets.json", &full_import[..full_import.len() - 20]).into_bytes(),
            status: 400,
        },
        Case {
            method: "POST",
            path: "/api/0/import".into(),
            content_type: "multipart/form-data; boundary=XyZ",
            body: multipart("buckets.json", &full_import).as_bytes()[..60].to_vec(),
            status: 400,
        },
        // Routing.
        case("PATCH", "/api/0/buckets/fixture", bucket, 405),
        case("PUT", "/api/0/buckets/fixture", r#"{"type": 1}"#, 400),
        case("PUT", "/api/0/buckets/fixture", r#"{"data": [1]}"#, 400),
        case("PUT", "/api/0/buckets/fixture", "[]", 400),
        case("PUT", "/api/0/buckets/fixture", "{", 400),
        case("PUT", "/api/0/buckets/nothing", bucket, 404),
        get("/api/0/buckets/fixture/nothing", 404),
        Case {
            method: "POST",
            path: EVENTS.into(),
            content_type: "text/plain",
            body: b"[{".to_vec(),
            status: 400,
        },
    ];
    // Not valid UTF-8 inside a JSON string.
    cases.push(Case {
        method: "POST",
        path: "/api/0/settings/k".into(),
        content_type: JSON,
        body: b"\"\xff\xfe\"".to_vec(),
        status: 400,
    });
    cases
}

/// Everything stored: all buckets with their events, and all settings.
fn snapshot(client: &Client) -> (Value, Value) {
    let export = client.get("/api/0/export");
    assert_eq!(export.status, 200);
    let settings = client.get("/api/0/settings");
    assert_eq!(settings.status, 200);
    (export.json(), settings.json())
}

fn fixture(client: &Client) {
    create_bucket(client, "fixture");
    let reply = client.post_json(
        EVENTS,
        &json!([
            event("2021-06-01T09:00:00Z", 60.0, json!({"app": "a"})),
            event("2021-06-01T09:05:00Z", 60.0, json!({"app": "b"})),
        ]),
    );
    assert_eq!(reply.status, 200);
    assert_eq!(
        client.post_json("/api/0/settings/canary", &json!(1)).status,
        201
    );
}

/// A read and a write that change nothing when they succeed: the canary
/// setting rewritten with its value and a heartbeat inside the newest event.
fn still_serving(client: &Client) {
    assert_eq!(client.get("/api/0/buckets/fixture").status, 200);
    assert_eq!(
        client.post_json("/api/0/settings/canary", &json!(1)).status,
        201
    );
    let reply = client.post_json(
        "/api/0/buckets/fixture/heartbeat?pulsetime=0",
        &event("2021-06-01T09:05:00Z", 0.0, json!({"app": "b"})),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
}

#[test]
fn bad_requests_are_refused_and_change_nothing() {
    let server = TestServer::start();
    let client = server.client();
    fixture(&client);
    let before = snapshot(&client);
    let cases = cases();
    assert!(cases.len() >= 60, "{} cases", cases.len());
    for (index, case) in cases.iter().enumerate() {
        let reply = client.request(
            case.method,
            &case.path,
            &[("Content-Type", case.content_type)],
            Some(&case.body),
        );
        let label = format!(
            "case {index}: {} {} {:?}",
            case.method,
            case.path,
            String::from_utf8_lossy(&case.body)
        );
        assert_eq!(reply.status, case.status, "{label}: {}", reply.text());
        assert!(
            reply.json()["message"].is_string(),
            "{label}: {}",
            reply.text()
        );
        still_serving(&client);
        assert_eq!(snapshot(&client), before, "{label} changed the data");
    }
}

/// Sends a request with a body of `size` bytes from a second thread (the
/// server may answer and close before reading it all) and reads the answer.
fn send_large(port: u16, path: &str, size: usize) -> u16 {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: {size}\r\nConnection: close\r\n\r\n"
    );
    let sender = std::thread::spawn(move || {
        let _ = writer.write_all(head.as_bytes());
        let _ = writer.write_all(b"[");
        let chunk = vec![b' '; 1 << 20];
        let mut sent = 1;
        while sent < size {
            let n = chunk.len().min(size - sent);
            if writer.write_all(&chunk[..n]).is_err() {
                return;
            }
            sent += n;
        }
    });
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    drop(stream);
    let _ = sender.join();
    let text = String::from_utf8_lossy(&answer);
    text.split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0)
}

#[test]
fn bodies_over_the_limit_are_413() {
    let server = TestServer::start();
    let client = server.client();
    fixture(&client);
    let before = snapshot(&client);
    // One byte over: the server reads it while checking the limit, so it
    // closes with nothing unread and the client is not reset before it
    // reads the answer.
    let size = 64 * 1024 * 1024 + 1;
    assert_eq!(send_large(server.port, EVENTS, size), 413);
    assert_eq!(send_large(server.port, "/api/0/settings/big", size), 413);
    still_serving(&client);
    assert_eq!(snapshot(&client), before);
}
