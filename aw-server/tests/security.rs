//! Host-header check, CORS and the API key (`docs/API.md` §9), including the path
//! tricks that bypass the reference's key check.

mod common;

use common::{create_bucket, TestServer};

const KEY: &str = "s3cret-key";

fn keyed() -> TestServer {
    TestServer::start_with(|config| config.api_key = Some(KEY.to_string()))
}

#[test]
fn host_header_must_name_localhost() {
    let server = TestServer::start();
    let client = server.client();
    for good in [
        "127.0.0.1",
        "localhost",
        "localhost:5600",
        "127.0.0.1:1",
        "LOCALHOST:80",
    ] {
        let reply = client.request("GET", "/api/0/info", &[("Host", good)], None);
        assert_eq!(reply.status, 200, "{good}");
    }
    for bad in [
        "localhost.evil.example",
        "127.0.0.1.evil.example",
        "evil.example",
        "0.0.0.0",
        "192.168.1.10",
        "10.0.0.1:5600",
        "localhost:abc",
        "",
    ] {
        let reply = client.request("GET", "/api/0/info", &[("Host", bad)], None);
        let message = reply.assert_error(400);
        assert!(
            message.starts_with("Host header is invalid"),
            "{bad}: {message}"
        );
        // Every path, static ones too.
        let reply = client.request("GET", "/", &[("Host", bad)], None);
        reply.assert_error(400);
    }
}

#[test]
fn request_without_host_or_with_two_is_refused() {
    let server = TestServer::start();
    let client = server.client();
    let reply = client.raw(b"GET /api/0/info HTTP/1.0\r\n\r\n");
    assert!(reply
        .assert_error(400)
        .starts_with("Host header is invalid"));
    let reply = client.raw(
        b"GET /api/0/info HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
    );
    reply.assert_error(400);
}

#[test]
fn bad_host_is_refused_before_the_handler_writes() {
    let server = TestServer::start();
    let client = server.client();
    let reply = client.request(
        "POST",
        "/api/0/settings/theme",
        &[("Host", "evil.example")],
        Some(b"\"dark\""),
    );
    reply.assert_error(400);
    assert_eq!(
        client.get("/api/0/settings/theme").json(),
        serde_json::Value::Null
    );
}

#[test]
fn every_bind_checks_the_host_against_allowed_hosts() {
    let server = TestServer::start_with(|config| {
        config.address = "0.0.0.0".parse().unwrap();
        config.api_key = Some(KEY.to_string());
        config.allowed_hosts = vec!["my-laptop.lan".to_string()];
    });
    let client = server.client();
    for good in ["my-laptop.lan:5600", "MY-LAPTOP.lan", "localhost"] {
        let reply = client.request("GET", "/api/0/info", &[("Host", good)], None);
        assert_eq!(reply.status, 200, "{good}");
    }
    for bad in ["evil.example", "my-laptop.lan.evil.example", "192.168.1.10"] {
        let reply = client.request("GET", "/api/0/info", &[("Host", bad)], None);
        let message = reply.assert_error(400);
        assert!(message.contains("allowed_hosts"), "{message}");
    }
}

#[test]
fn own_origin_and_extensions_are_allowed_with_cors_headers() {
    let server = TestServer::start();
    let client = server.client();
    let origins = [
        format!("http://127.0.0.1:{}", server.port),
        format!("http://localhost:{}", server.port),
        format!("http://[::1]:{}", server.port),
        "moz-extension://0d6ee3bd-7c4c-4e5e-8c7e-1a2b3c4d5e6f".to_string(),
        "chrome-extension://nglaklhklhcoonedhgnpgddginnjdadi".to_string(),
    ];
    for origin in &origins {
        let reply = client.request("GET", "/api/0/info", &[("Origin", origin)], None);
        assert_eq!(reply.status, 200, "{origin}");
        assert_eq!(
            reply.header("Access-Control-Allow-Origin"),
            Some(origin.as_str())
        );
        assert_eq!(reply.header("Access-Control-Allow-Credentials"), None);
    }
    // No Origin: no CORS headers.
    let reply = client.get("/api/0/info");
    assert_eq!(reply.header("Access-Control-Allow-Origin"), None);
}

#[test]
fn other_origins_are_refused_before_the_handler() {
    let server = TestServer::start();
    let client = server.client();
    for origin in [
        "http://evil.example",
        "null",
        "http://127.0.0.1:1",
        "https://127.0.0.1:5600",
        "chrome-extension://some-other-extension",
        "moz-extension://",
    ] {
        let reply = client.request("GET", "/api/0/info", &[("Origin", origin)], None);
        reply.assert_error(403);
        assert_eq!(
            reply.header("Access-Control-Allow-Origin"),
            None,
            "{origin}"
        );
        // A cross-site form post writes nothing.
        let reply = client.request(
            "POST",
            "/api/0/settings/theme",
            &[("Origin", origin), ("Content-Type", "text/plain")],
            Some(b"\"dark\""),
        );
        reply.assert_error(403);
    }
    assert_eq!(
        client.get("/api/0/settings/theme").json(),
        serde_json::Value::Null
    );
}

#[test]
fn configured_origins_and_regexes_and_testing_origins() {
    let server = TestServer::start_with(|config| {
        config.cors = vec!["http://dashboard.example".to_string()];
        config.cors_regex = vec![r"https://[a-z]+\.example\.org".to_string()];
    });
    let client = server.client();
    let get = |origin: &str| {
        client
            .request("GET", "/api/0/info", &[("Origin", origin)], None)
            .status
    };
    assert_eq!(get("http://dashboard.example"), 200);
    assert_eq!(get("https://abc.example.org"), 200);
    // Regexes match the whole origin.
    assert_eq!(get("https://abc.example.org.evil.net"), 403);
    assert_eq!(get("http://localhost:27180"), 403);
    assert_eq!(get("chrome-extension://abcdef"), 403);

    let testing = TestServer::start_with(|config| config.testing = true);
    let client = testing.client();
    for origin in [
        "http://localhost:27180",
        "http://127.0.0.1:27180",
        "chrome-extension://abcdef",
    ] {
        let reply = client.request("GET", "/api/0/info", &[("Origin", origin)], None);
        assert_eq!(reply.status, 200, "{origin}");
    }
}

#[test]
fn preflight_answers_allowed_origins_and_methods() {
    let server = TestServer::start();
    let client = server.client();
    let origin = format!("http://localhost:{}", server.port);
    for method in ["GET", "POST", "DELETE"] {
        let reply = client.request(
            "OPTIONS",
            "/api/0/buckets/x",
            &[
                ("Origin", &origin),
                ("Access-Control-Request-Method", method),
                (
                    "Access-Control-Request-Headers",
                    "authorization, content-type",
                ),
            ],
            None,
        );
        assert_eq!(reply.status, 200, "{method}");
        assert!(reply.body.is_empty());
        assert_eq!(
            reply.header("Access-Control-Allow-Origin"),
            Some(origin.as_str())
        );
        assert_eq!(
            reply.header("Access-Control-Allow-Methods"),
            Some("GET, DELETE, POST")
        );
        assert_eq!(
            reply.header("Access-Control-Allow-Headers"),
            Some("authorization, content-type")
        );
    }
    let reply = client.request(
        "OPTIONS",
        "/api/0/buckets/x",
        &[
            ("Origin", &origin),
            ("Access-Control-Request-Method", "PUT"),
        ],
        None,
    );
    reply.assert_error(403);
    let reply = client.request(
        "OPTIONS",
        "/api/0/buckets/x",
        &[
            ("Origin", "http://evil.example"),
            ("Access-Control-Request-Method", "GET"),
        ],
        None,
    );
    reply.assert_error(403);
    let reply = client.request("OPTIONS", "/api/0/buckets/", &[], None);
    assert_eq!(reply.status, 200);
}

#[test]
fn api_key_is_required_on_api_paths() {
    let server = keyed();
    let client = server.client();
    let bearer = format!("Bearer {KEY}");
    for (name, value) in [
        ("Authorization", format!("Bearer {KEY}x")),
        ("Authorization", format!("Basic {KEY}")),
        ("Authorization", KEY.to_string()),
        ("Authorization", "Bearer ".to_string()),
        ("X-Api-Key", KEY.to_string()),
    ] {
        let reply = client.request("GET", "/api/0/buckets/", &[(name, &value)], None);
        let message = reply.assert_error(401);
        assert!(message.contains("API key"), "{message}");
    }
    let reply = client.get(&format!("/api/0/buckets/?api_key={KEY}&token={KEY}"));
    reply.assert_error(401);
    let reply = client.request("GET", "/api/0/info", &[("Authorization", &bearer)], None);
    assert_eq!(reply.status, 200);
    // Nothing was written by refused requests.
    let reply = client.request(
        "POST",
        "/api/0/settings/theme",
        &[("Authorization", "Bearer wrong")],
        Some(b"\"dark\""),
    );
    reply.assert_error(401);
    let reply = client.request(
        "GET",
        "/api/0/settings/theme",
        &[("Authorization", &bearer)],
        None,
    );
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json(), serde_json::Value::Null);
}

#[test]
fn api_key_exemptions() {
    let server = keyed();
    let client = server.client();
    assert_eq!(client.get("/api/0/info").status, 200);
    assert_eq!(client.get("/api/0/info/").status, 200);
    assert_eq!(client.get("/").status, 200);
    let reply = client.request(
        "OPTIONS",
        "/api/0/buckets/",
        &[("Access-Control-Request-Method", "GET")],
        None,
    );
    assert_eq!(reply.status, 200);
    // POST to info is not exempt.
    client.post("/api/0/info", b"{}").assert_error(401);
}

#[test]
fn path_tricks_do_not_bypass_the_api_key() {
    let server = keyed();
    let client = server.client();
    let tricks = [
        "/%61pi/0/buckets/",
        "/%61%70%69/0/buckets",
        "/api/%30/buckets",
        "/api/0/%62uckets/",
        "//api/0/buckets/",
        "///api//0//buckets//",
        "/API/0/buckets/",
        "/Api/0/buckets",
        "/%41PI/0/buckets",
        "/./api/0/buckets/",
        "/static/../api/0/buckets/",
        "/x/..%2fapi/0/buckets",
        "/%2e/api/0/buckets",
        "/%2E%2E/api/0/buckets",
        "/api/0/buckets/%2e%2e/%2e%2e/settings",
        "/api/0/info/../buckets",
        "/api/0/info/%2e%2e/buckets",
        "/api/0/settings/",
        "/api/0/export",
    ];
    for path in tricks {
        let reply = client.get(path);
        // 400 for refused paths, 401 for API paths, 404 where the path does
        // not reach the API at all (`/x/..%2fapi/...` is a file name).
        assert!(
            matches!(reply.status, 400 | 401 | 404),
            "{path}: {} {}",
            reply.status,
            reply.text()
        );
        assert!(reply.json()["message"].is_string(), "{path}");
        // Writes too.
        let reply = client.request("POST", path, &[], Some(b"{}"));
        assert!(
            matches!(reply.status, 400 | 401 | 404),
            "POST {path}: {}",
            reply.status
        );
    }
    let reply = client.request("POST", "/%61pi/0/settings/x", &[], Some(b"1"));
    reply.assert_error(401);
    let reply = client.request("DELETE", "//api/0/buckets/b", &[], None);
    reply.assert_error(401);
}

#[test]
fn encoded_paths_route_like_plain_ones_once_authorised() {
    let server = keyed();
    let client = server
        .client()
        .with_header("Authorization", &format!("Bearer {KEY}"));
    assert_eq!(client.get("/%61pi/0/info").json()["hostname"], "testhost");
    assert_eq!(client.get("//api//0//info//").status, 200);
    create_bucket(&client, "b1");
    assert_eq!(client.get("/%61pi/0/buckets/").json()["b1"]["id"], "b1");
    assert_eq!(client.get("//api/0/buckets//b1/").json()["id"], "b1");
}

#[test]
fn refusals_to_an_allowed_origin_are_readable_by_the_page() {
    let server = keyed();
    let origin = format!("http://127.0.0.1:{}", server.port);
    let reply = server
        .client()
        .request("GET", "/api/0/buckets/", &[("Origin", &origin)], None);
    reply.assert_error(401);
    assert_eq!(
        reply.header("Access-Control-Allow-Origin"),
        Some(origin.as_str())
    );
}

#[test]
fn a_browser_extension_may_call_only_what_aw_watcher_web_needs() {
    let server = TestServer::start();
    let client = server.client();
    let own = format!("http://localhost:{}", server.port);
    let seeded = client.post_json(
        "/api/0/buckets/aw-watcher-window_laptop/events",
        &serde_json::json!([]),
    );
    assert_eq!(seeded.status, 404, "no such bucket yet");
    let made = client.post_json(
        "/api/0/buckets/aw-watcher-window_laptop",
        &serde_json::json!({"type": "currentwindow", "client": "w", "hostname": "laptop"}),
    );
    assert_eq!(made.status, 200);
    for origin in [
        "moz-extension://0d6ee3bd-7c4c-4e5e-8c7e-1a2b3c4d5e6f",
        "moz-extension://another-extension-installed-beside-it",
        "chrome-extension://nglaklhklhcoonedhgnpgddginnjdadi",
    ] {
        let with = |method: &str, path: &str, body: Option<&[u8]>| {
            client.request(
                method,
                path,
                &[("Origin", origin), ("Content-Type", "application/json")],
                body,
            )
        };
        // What aw-watcher-web sends works, with its CORS headers.
        let bucket =
            br#"{"type": "web.tab.current", "client": "aw-client-web", "hostname": "!local"}"#;
        let heartbeat = br#"{"timestamp": "2026-12-01T09:00:00Z", "duration": 0,
                             "data": {"url": "https://example.org/", "title": "Example"}}"#;
        for (method, path, body) in [
            ("GET", "/api/0/info", None),
            ("HEAD", "/api/0/info/", None),
            (
                "POST",
                "/api/0/buckets/aw-watcher-web-firefox_laptop",
                Some(&bucket[..]),
            ),
            (
                "POST",
                "/api/0/buckets/aw-watcher-web-firefox_laptop/heartbeat?pulsetime=60",
                Some(&heartbeat[..]),
            ),
        ] {
            let reply = with(method, path, body);
            assert!(
                reply.status == 200 || reply.status == 304,
                "{origin} {method} {path}: {}",
                reply.text()
            );
            assert_eq!(reply.header("Access-Control-Allow-Origin"), Some(origin));
        }
        for path in [
            "/api/0/buckets/aw-watcher-web-firefox_laptop",
            "/api/0/buckets/aw-watcher-web-firefox_laptop/heartbeat",
        ] {
            let reply = client.request(
                "OPTIONS",
                path,
                &[
                    ("Origin", origin),
                    ("Access-Control-Request-Method", "POST"),
                    ("Access-Control-Request-Headers", "content-type"),
                ],
                None,
            );
            assert_eq!(reply.status, 200, "{origin} preflight {path}");
            assert_eq!(reply.header("Access-Control-Allow-Origin"), Some(origin));
        }
        // Anything else: 403 before the handler, no CORS header, even a
        // "simple" POST the browser would send without a preflight.
        for (method, path, body) in [
            ("GET", "/api/0/export", None),
            ("GET", "/api/0/buckets/", None),
            ("GET", "/api/0/buckets/aw-watcher-web-firefox_laptop/events", None),
            ("DELETE", "/api/0/buckets/aw-watcher-web-firefox_laptop", None),
            ("POST", "/api/0/query/", Some(&br#"{"timeperiods": [], "query": []}"#[..])),
            ("POST", "/api/0/settings/theme", Some(&b"\"dark\""[..])),
            (
                "POST",
                "/api/0/buckets/aw-watcher-window_laptop/heartbeat?pulsetime=60",
                Some(&br#"{"timestamp": "2026-12-01T09:00:00Z", "duration": 0, "data": {"app": "x"}}"#[..]),
            ),
            ("POST", "/api/0/buckets/aw-watcher-window_other", Some(&bucket[..])),
            // Matched on the canonical path: encodings change nothing.
            ("GET", "/%61pi/0/export", None),
            ("GET", "//api/0/export", None),
        ] {
            let reply = client.request(
                method,
                path,
                &[("Origin", origin), ("Content-Type", "text/plain")],
                body,
            );
            let message = reply.assert_error(403);
            assert!(message.contains("cors_regex"), "{message}");
            assert_eq!(reply.header("Access-Control-Allow-Origin"), None, "{origin} {method} {path}");
        }
        for (path, wanted) in [
            ("/api/0/export", Some("GET")),
            ("/api/0/import", Some("POST")),
            (
                "/api/0/buckets/aw-watcher-web-firefox_laptop",
                Some("DELETE"),
            ),
            (
                "/api/0/buckets/aw-watcher-web-firefox_laptop/heartbeat",
                None,
            ),
        ] {
            let mut headers = vec![("Origin", origin)];
            if let Some(wanted) = wanted {
                headers.push(("Access-Control-Request-Method", wanted));
            }
            let reply = client.request("OPTIONS", path, &headers, None);
            reply.assert_error(403);
            assert_eq!(reply.header("Access-Control-Allow-Origin"), None);
            assert_eq!(reply.header("Access-Control-Allow-Methods"), None);
        }
    }
    // Nothing the refused requests carried was stored.
    assert_eq!(
        client.get("/api/0/settings/theme").json(),
        serde_json::Value::Null
    );
    assert_eq!(
        client
            .get("/api/0/buckets/aw-watcher-window_laptop/events")
            .json(),
        serde_json::json!([])
    );
    assert_eq!(
        client.get("/api/0/buckets/aw-watcher-window_other").status,
        404
    );
    // The own pages go on reaching everything.
    let reply = client.request("GET", "/api/0/export", &[("Origin", &own)], None);
    assert_eq!(reply.status, 200);
}

#[test]
fn an_extension_origin_the_user_lists_is_trusted_as_listed() {
    let origin = "moz-extension://0d6ee3bd-7c4c-4e5e-8c7e-1a2b3c4d5e6f";
    for listed in ["cors", "cors_regex"] {
        let server = TestServer::start_with(|config| match listed {
            "cors" => config.cors = vec![origin.to_string()],
            _ => config.cors_regex = vec![r"moz-extension://0d6ee3bd-.*".to_string()],
        });
        let client = server.client();
        let reply = client.request("GET", "/api/0/export", &[("Origin", origin)], None);
        assert_eq!(reply.status, 200, "{listed}");
        assert_eq!(reply.header("Access-Control-Allow-Origin"), Some(origin));
        // Another extension is still held to the built-in rule.
        let other = "moz-extension://someone-else";
        let reply = client.request("GET", "/api/0/export", &[("Origin", other)], None);
        reply.assert_error(403);
    }
}
