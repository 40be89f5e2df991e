//! API tokens and scopes (`docs/API.md` §9.4, §9.5): the scope matrix of
//! every `/api/` route and `/metrics`, the write token's hosts, revocation
//! and expiry, rate limiting, and that tokens never show where they should
//! not.

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::{event, Client, TestServer};
use serde_json::{json, Value};

const KEY: &str = "the-api-key";

/// A server with an API key and a backup folder; tokens are made with
/// the key.
fn keyed(backups: &std::path::Path) -> TestServer {
    let backups = backups.to_path_buf();
    TestServer::start_with(move |config| {
        config.api_key = Some(KEY.to_string());
        config.backup.dir = backups;
    })
}

fn bearer(client: &Client, secret: &str) -> Client {
    client
        .clone()
        .with_header("Authorization", &format!("Bearer {secret}"))
}

fn admin(server: &TestServer) -> Client {
    bearer(&server.client(), KEY)
}

/// Makes a token through the API; its secret.
fn add_token(admin: &Client, body: Value) -> String {
    let reply = admin.post_json("/api/0/tokens", &body);
    assert_eq!(reply.status, 201, "{}", reply.text());
    let made = reply.json();
    assert_eq!(made["name"], body["name"]);
    made["token"].as_str().unwrap().to_string()
}

fn make_bucket(client: &Client, id: &str, host: &str) {
    let reply = client.post_json(
        &format!("/api/0/buckets/{id}"),
        &json!({"type": "currentwindow", "client": "test", "hostname": host}),
    );
    assert_eq!(reply.status, 200, "{id}: {}", reply.text());
}

fn basic(secret: &str) -> String {
    use base64::Engine;
    let pair = format!("watcher:{secret}");
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair)
    )
}

/// What a credential may do with a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// Reaches the handler: any answer but 401, 403 and 429.
    Allowed,
    Forbidden,
    Unauthorized,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    Nobody,
    Read,
    WriteA,
    WriteB,
    Admin,
    Key,
    Revoked,
    Expired,
    Malformed,
    BasicAdmin,
}

const EVERYONE: [Who; 10] = [
    Who::Nobody,
    Who::Read,
    Who::WriteA,
    Who::WriteB,
    Who::Admin,
    Who::Key,
    Who::Revoked,
    Who::Expired,
    Who::Malformed,
    Who::BasicAdmin,
];

impl Who {
    fn tag(self) -> &'static str {
        match self {
            Who::Nobody => "nobody",
            Who::Read => "read",
            Who::WriteA => "write-a",
            Who::WriteB => "write-b",
            Who::Admin => "admin",
            Who::Key => "key",
            Who::Revoked => "revoked",
            Who::Expired => "expired",
            Who::Malformed => "malformed",
            Who::BasicAdmin => "basic-admin",
        }
    }
}

/// The class of a route for the expectations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// `GET /api/0/info`.
    Public,
    /// Any valid credential.
    Anyone,
    /// Read and admin; write tokens no.
    Reading,
    /// Read, admin, and a write token of host A (the bucket is A's).
    BucketOfA,
    /// Admin, and a write token of host A.
    WriteToA,
    /// Admin and every write token (forwarding: the handler checks hosts).
    Forwarding,
    /// Admin only.
    AdminOnly,
}

fn expect(who: Who, class: Class) -> Expect {
    use Expect::*;
    if class == Class::Public {
        return Allowed;
    }
    match who {
        Who::Nobody | Who::Revoked | Who::Expired | Who::Malformed => Unauthorized,
        Who::Admin | Who::Key | Who::BasicAdmin => Allowed,
        Who::Read => match class {
            Class::Anyone | Class::Reading | Class::BucketOfA => Allowed,
            _ => Forbidden,
        },
        Who::WriteA => match class {
            Class::Anyone | Class::BucketOfA | Class::WriteToA | Class::Forwarding => Allowed,
            _ => Forbidden,
        },
        Who::WriteB => match class {
            Class::Anyone | Class::Forwarding => Allowed,
            _ => Forbidden,
        },
    }
}

/// One request of the matrix: the API document's path template, the
/// method, the path (`{who}` replaced by the credential's tag, so
/// resources one credential changes are its own) and the body.
struct Route {
    method: &'static str,
    template: &'static str,
    path: &'static str,
    body: Option<Value>,
    class: Class,
}

fn routes() -> Vec<Route> {
    let heartbeat = event("2026-11-28T10:00:00Z", 0.0, json!({"app": "a"}));
    let r = |method, template, path, body, class| Route {
        method,
        template,
        path,
        body,
        class,
    };
    use Class::*;
    vec![
        r("GET", "/api/0/info", "/api/0/info", None, Public),
        r("GET", "/api/0/openapi.json", "/api/0/openapi.json", None, Reading),
        r("GET", "/api/0/access", "/api/0/access", None, Anyone),
        r("GET", "/api/0/buckets", "/api/0/buckets/", None, Anyone),
        r("GET", "/api/0/buckets/{bucket_id}", "/api/0/buckets/win_a", None, BucketOfA),
        r(
            "POST",
            "/api/0/buckets/{bucket_id}",
            "/api/0/buckets/new_{who}",
            Some(json!({"type": "t", "client": "c", "hostname": "host-a"})),
            WriteToA,
        ),
        r(
            "PUT",
            "/api/0/buckets/{bucket_id}",
            "/api/0/buckets/win_a",
            Some(json!({"data": {"note": "same host"}})),
            WriteToA,
        ),
        r("DELETE", "/api/0/buckets/{bucket_id}", "/api/0/buckets/victim_{who}", None, AdminOnly),
        r("GET", "/api/0/buckets/{bucket_id}/events", "/api/0/buckets/win_a/events", None, BucketOfA),
        r(
            "POST",
            "/api/0/buckets/{bucket_id}/events",
            "/api/0/buckets/win_a/events",
            Some(json!([heartbeat.clone()])),
            WriteToA,
        ),
        r(
            "DELETE",
            "/api/0/buckets/{bucket_id}/events",
            "/api/0/buckets/win_a/events?start=2020-01-01T00:00:00Z&end=2030-01-01T00:00:00Z&dry_run=true",
            None,
            AdminOnly,
        ),
        r(
            "GET",
            "/api/0/buckets/{bucket_id}/events/count",
            "/api/0/buckets/win_a/events/count",
            None,
            BucketOfA,
        ),
        r(
            "GET",
            "/api/0/buckets/{bucket_id}/events/{event_id}",
            "/api/0/buckets/win_a/events/1",
            None,
            BucketOfA,
        ),
        r(
            "DELETE",
            "/api/0/buckets/{bucket_id}/events/{event_id}",
            "/api/0/buckets/win_a/events/999999",
            None,
            AdminOnly,
        ),
        r(
            "POST",
            "/api/0/buckets/{bucket_id}/heartbeat",
            "/api/0/buckets/win_a/heartbeat?pulsetime=60",
            Some(heartbeat),
            WriteToA,
        ),
        r("GET", "/api/0/buckets/{bucket_id}/export", "/api/0/buckets/win_a/export", None, Reading),
        r("GET", "/api/0/export", "/api/0/export", None, Reading),
        r("POST", "/api/0/import", "/api/0/import", Some(json!({"buckets": {}})), AdminOnly),
        r(
            "POST",
            "/api/0/query",
            "/api/0/query/",
            Some(json!({"timeperiods": ["2026-11-28T00:00:00Z/2026-11-29T00:00:00Z"],
                        "query": ["RETURN = query_bucket(\"win_a\");"]})),
            Reading,
        ),
        r(
            "GET",
            "/api/0/summary",
            "/api/0/summary?start=2026-11-28&end=2026-11-29&by=app,day",
            None,
            Reading,
        ),
        r(
            "POST",
            "/api/0/summary",
            "/api/0/summary?start=2026-11-28&end=2026-11-29&by=category",
            Some(json!({"categories": [{"name": ["A"], "rule": {"type": "regex", "regex": "a"}}]})),
            Reading,
        ),
        r("GET", "/api/0/search", "/api/0/search?text=a&start=2026-11-28&end=2026-11-29", None, Reading),
        r("GET", "/api/0/settings", "/api/0/settings", None, Reading),
        r("GET", "/api/0/settings/{key}", "/api/0/settings/theme", None, Reading),
        r(
            "POST",
            "/api/0/settings/{key}",
            "/api/0/settings/theme_{who}",
            Some(json!("dark")),
            AdminOnly,
        ),
        r("DELETE", "/api/0/settings/{key}", "/api/0/settings/nothing", None, AdminOnly),
        r("POST", "/api/0/privacy/apply", "/api/0/privacy/apply?dry_run=true", None, AdminOnly),
        r("POST", "/api/0/vacuum", "/api/0/vacuum", None, AdminOnly),
        r("POST", "/api/0/backup", "/api/0/backup", None, AdminOnly),
        r("GET", "/api/0/backup/status", "/api/0/backup/status", None, Reading),
        r("GET", "/api/0/database/status", "/api/0/database/status", None, Reading),
        r("GET", "/api/0/retention/status", "/api/0/retention/status", None, Reading),
        r("GET", "/api/0/sync/status", "/api/0/sync/status", None, Reading),
        r("GET", "/metrics", "/metrics", None, Reading),
        r("POST", "/api/0/sync/run", "/api/0/sync/run", None, AdminOnly),
        r("GET", "/api/0/tokens", "/api/0/tokens", None, AdminOnly),
        r(
            "POST",
            "/api/0/tokens",
            "/api/0/tokens",
            Some(json!({"name": "made_{who}", "scope": "read"})),
            AdminOnly,
        ),
        r("DELETE", "/api/0/tokens/{name}", "/api/0/tokens/none_{who}", None, AdminOnly),
        // A server of one person: allowed ones answer 404 (it has no users).
        r("GET", "/api/0/users", "/api/0/users", None, AdminOnly),
        r(
            "POST",
            "/api/0/users",
            "/api/0/users",
            Some(json!({"name": "u-{who}"})),
            AdminOnly,
        ),
        r("DELETE", "/api/0/users/{name}", "/api/0/users/u-{who}", None, AdminOnly),
        r("GET", "/api/0/nodes", "/api/0/nodes", None, AdminOnly),
        r("POST", "/api/0/users/{name}/freeze", "/api/0/users/u-{who}/freeze", None, AdminOnly),
        r("POST", "/api/0/users/{name}/thaw", "/api/0/users/u-{who}/thaw", None, AdminOnly),
        r("GET", "/api/0/users/{name}/file", "/api/0/users/u-{who}/file", None, AdminOnly),
        r("PUT", "/api/0/users/{name}/file", "/api/0/users/u-{who}/file", None, AdminOnly),
        // No groups on a server of one person: allowed ones answer 404.
        r("GET", "/api/0/groups", "/api/0/groups", None, Reading),
        r("POST", "/api/0/groups", "/api/0/groups", Some(json!({"name": "g-{who}"})), AdminOnly),
        r(
            "POST",
            "/api/0/groups/{group}/invitations",
            "/api/0/groups/g-{who}/invitations",
            Some(json!({"user": "someone"})),
            AdminOnly,
        ),
        r("POST", "/api/0/groups/{group}/join", "/api/0/groups/g-{who}/join", None, AdminOnly),
        r("POST", "/api/0/groups/{group}/leave", "/api/0/groups/g-{who}/leave", None, AdminOnly),
        r(
            "GET",
            "/api/0/groups/{group}/totals",
            "/api/0/groups/g-{who}/totals",
            None,
            Reading,
        ),
        r("GET", "/api/0/alerts/status", "/api/0/alerts/status", None, Reading),
        // No [alerts] here: allowed ones answer 409 and send nothing.
        r("POST", "/api/0/alerts/test", "/api/0/alerts/test", None, AdminOnly),
        r("POST", "/api/0/alerts/digest", "/api/0/alerts/digest", None, AdminOnly),
        r("GET", "/api/0/hosts", "/api/0/hosts", None, Reading),
        // Hosts no bucket has: allowed ones answer 404 and change nothing.
        r(
            "POST",
            "/api/0/hosts/{host}/rename",
            "/api/0/hosts/nohost-{who}/rename",
            Some(json!({"to": "other-{who}"})),
            AdminOnly,
        ),
        r(
            "POST",
            "/api/0/hosts/{host}/merge",
            "/api/0/hosts/nohost-{who}/merge",
            Some(json!({"into": "host-a", "dry_run": true})),
            AdminOnly,
        ),
        r(
            "PUT",
            "/api/0/hosts/{alias}/alias",
            "/api/0/hosts/alias-{who}/alias",
            Some(json!({"host": "nohost"})),
            AdminOnly,
        ),
        r("DELETE", "/api/0/hosts/{alias}/alias", "/api/0/hosts/alias-{who}/alias", None, AdminOnly),
        r("GET", "/api/0/forward", "/api/0/forward", None, Reading),
        r("GET", "/api/0/forward/{device}", "/api/0/forward/dev-{who}", None, Forwarding),
        r(
            "POST",
            "/api/0/forward/{device}",
            "/api/0/forward/dev-{who}",
            Some(json!({"bucket": {"id": "fwd_{who}", "type": "t", "client": "c",
                                   "hostname": "host-a"}})),
            WriteToA,
        ),
        r(
            "DELETE",
            "/api/0/forward/{device}/{bucket_id}",
            "/api/0/forward/dev-{who}/none",
            None,
            Forwarding,
        ),
        r(
            "POST",
            "/api/0/forward/{device}/rename",
            "/api/0/forward/dev-{who}/rename",
            Some(json!({"from": "none", "bucket": {"id": "none2", "type": "t", "client": "c",
                        "hostname": "host-a", "data": {}}})),
            Forwarding,
        ),
    ]
}

/// Polls `check` until it holds or a generous deadline passes.
fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_scope_matrix_of_every_api_route() {
    let backups = tempfile::tempdir().unwrap();
    let server = keyed(backups.path());
    let admin_client = admin(&server);
    make_bucket(&admin_client, "win_a", "host-a");
    make_bucket(&admin_client, "win_b", "host-b");
    for who in EVERYONE {
        make_bucket(&admin_client, &format!("victim_{}", who.tag()), "host-a");
    }

    let read = add_token(&admin_client, json!({"name": "read", "scope": "read"}));
    let write_a = add_token(
        &admin_client,
        json!({"name": "write-a", "scope": "write", "hosts": ["host-a"]}),
    );
    let write_b = add_token(
        &admin_client,
        json!({"name": "write-b", "scope": "write", "hosts": ["host-b", "unknown"]}),
    );
    let admin_token = add_token(&admin_client, json!({"name": "admin", "scope": "admin"}));
    let revoked = add_token(&admin_client, json!({"name": "revoked", "scope": "admin"}));
    assert_eq!(admin_client.delete("/api/0/tokens/revoked").status, 200);
    let soon = chrono::Utc::now() + chrono::Duration::seconds(1);
    let expired = add_token(
        &admin_client,
        json!({"name": "expired", "scope": "admin", "expires": soon.to_rfc3339()}),
    );
    while chrono::Utc::now() <= soon {
        std::thread::sleep(Duration::from_millis(50));
    }

    // Every route of the API document is in the matrix.
    let document = admin_client.get("/api/0/openapi.json").json();
    let mut documented = BTreeSet::new();
    for (path, operations) in document["paths"].as_object().unwrap() {
        for method in operations.as_object().unwrap().keys() {
            if ["get", "post", "put", "delete"].contains(&method.as_str()) {
                documented.insert(format!("{} {path}", method.to_uppercase()));
            }
        }
    }
    let routes = routes();
    let covered: BTreeSet<String> = routes
        .iter()
        .map(|route| format!("{} {}", route.method, route.template))
        .collect();
    assert_eq!(covered, documented);

    let anonymous = server.client();
    for who in EVERYONE {
        let client = match who {
            Who::Nobody => anonymous.clone(),
            Who::Read => bearer(&anonymous, &read),
            Who::WriteA => bearer(&anonymous, &write_a),
            Who::WriteB => bearer(&anonymous, &write_b),
            Who::Admin => bearer(&anonymous, &admin_token),
            Who::Key => bearer(&anonymous, KEY),
            Who::Revoked => bearer(&anonymous, &revoked),
            Who::Expired => bearer(&anonymous, &expired),
            Who::Malformed => anonymous
                .clone()
                .with_header("Authorization", &format!("Token {admin_token}")),
            Who::BasicAdmin => anonymous
                .clone()
                .with_header("Authorization", &basic(&admin_token)),
        };
        for route in &routes {
            let path = route.path.replace("{who}", who.tag());
            let body = route
                .body
                .as_ref()
                .map(|body| body.to_string().replace("{who}", who.tag()).into_bytes());
            let headers: &[(&str, &str)] = if body.is_some() {
                &[("Content-Type", "application/json")]
            } else {
                &[]
            };
            let reply = client.request(route.method, &path, headers, body.as_deref());
            let got = match reply.status {
                401 => Expect::Unauthorized,
                403 => Expect::Forbidden,
                429 => panic!("loopback clients are never limited"),
                status => {
                    assert!(status < 500, "{who:?} {} {path}: {status}", route.method);
                    Expect::Allowed
                }
            };
            let wanted = expect(who, route.class);
            assert_eq!(
                got,
                wanted,
                "{who:?} {} {path}: {} {}",
                route.method,
                reply.status,
                reply.text()
            );
            if got != Expect::Allowed {
                // Refusals say why, as JSON.
                assert!(reply.json()["message"].is_string());
            }
        }
    }

    // What the refused ones did not do: victims still there but the
    // admins', no tokens or settings made by others.
    let buckets = admin_client.get("/api/0/buckets/").json();
    for who in EVERYONE {
        let victim = format!("victim_{}", who.tag());
        let admin_like = matches!(who, Who::Admin | Who::Key | Who::BasicAdmin);
        assert_eq!(buckets.get(&victim).is_none(), admin_like, "{victim}");
        let made = format!("new_{}", who.tag());
        let may = admin_like || who == Who::WriteA;
        assert_eq!(buckets.get(&made).is_some(), may, "{made}");
    }
    let tokens = admin_client.get("/api/0/tokens").json();
    let names: BTreeSet<&str> = tokens
        .as_array()
        .unwrap()
        .iter()
        .map(|token| token["name"].as_str().unwrap())
        .collect();
    assert!(names.contains("made_admin") && names.contains("made_key"));
    assert!(!names.contains("made_read") && !names.contains("made_write-a"));
    assert!(!names.contains("revoked"));
    let settings = admin_client.get("/api/0/settings").json();
    assert!(settings.get("theme_read").is_none() && settings.get("theme_write-a").is_none());
}

#[test]
fn a_write_token_reaches_only_its_hosts_buckets() {
    let backups = tempfile::tempdir().unwrap();
    let server = keyed(backups.path());
    let admin_client = admin(&server);
    make_bucket(&admin_client, "win_b", "host-b");
    let secret = add_token(
        &admin_client,
        json!({"name": "laptop", "scope": "write", "hosts": ["host-a"]}),
    );
    let watcher = bearer(&server.client(), &secret);

    // The watcher's own flow: create, heartbeats, read back.
    make_bucket(&watcher, "win_a", "host-a");
    let heartbeat = |at: &str| event(at, 0.0, json!({"app": "editor"}));
    for at in ["2026-11-28T10:00:00Z", "2026-11-28T10:00:05Z"] {
        let reply = watcher.post_json(
            "/api/0/buckets/win_a/heartbeat?pulsetime=10",
            &heartbeat(at),
        );
        assert_eq!(reply.status, 200, "{}", reply.text());
    }
    let events = watcher.get("/api/0/buckets/win_a/events").json();
    assert_eq!(events.as_array().unwrap().len(), 1);
    assert_eq!(events[0]["duration"], 5.0);
    assert_eq!(watcher.get("/api/0/buckets/win_a/events/count").text(), "1");

    // The listing shows its hosts' buckets only.
    let listed = watcher.get("/api/0/buckets/").json();
    let ids: Vec<&String> = listed.as_object().unwrap().keys().collect();
    assert_eq!(ids, ["win_a"]);

    // Host B's bucket: no create, write, read, delete or re-host.
    let refused = [
        watcher.post_json(
            "/api/0/buckets/win_b2",
            &json!({"type": "t", "client": "c", "hostname": "host-b"}),
        ),
        watcher.post_json(
            "/api/0/buckets/win_b",
            &json!({"type": "t", "client": "c", "hostname": "host-a"}),
        ),
        watcher.post_json(
            "/api/0/buckets/win_b/heartbeat?pulsetime=10",
            &heartbeat("2026-11-28T11:00:00Z"),
        ),
        watcher.post_json(
            "/api/0/buckets/win_b/events",
            &json!([heartbeat("2026-11-28T11:00:00Z")]),
        ),
        watcher.get("/api/0/buckets/win_b"),
        watcher.get("/api/0/buckets/win_b/events"),
        watcher.delete("/api/0/buckets/win_b"),
        watcher.delete("/api/0/buckets/win_a"),
        watcher.request(
            "PUT",
            "/api/0/buckets/win_a",
            &[("Content-Type", "application/json")],
            Some(json!({"hostname": "host-b"}).to_string().as_bytes()),
        ),
        watcher.request(
            "PUT",
            "/api/0/buckets/win_b",
            &[("Content-Type", "application/json")],
            Some(json!({"hostname": "host-a"}).to_string().as_bytes()),
        ),
        watcher.post_json("/api/0/settings/theme", &json!("dark")),
        watcher.post_json("/api/0/tokens", &json!({"name": "mine", "scope": "admin"})),
        watcher.delete("/api/0/tokens/laptop"),
        watcher.post_json("/api/0/import", &json!({"buckets": {}})),
    ];
    for (index, reply) in refused.iter().enumerate() {
        assert_eq!(reply.status, 403, "refusal {index}: {}", reply.text());
    }
    assert!(admin_client.get("/api/0/buckets/win_b2").status == 404);
    let b = admin_client.get("/api/0/buckets/win_b").json();
    assert_eq!(b["hostname"], "host-b");
    assert_eq!(
        admin_client.get("/api/0/buckets/win_b/events/count").text(),
        "0"
    );
    assert_eq!(
        admin_client.get("/api/0/buckets/win_a").json()["hostname"],
        "host-a"
    );
    assert_eq!(
        admin_client.get("/api/0/settings/theme").json(),
        Value::Null
    );

    // Re-hosted by an admin, the bucket leaves the token's reach at once.
    let reply = admin_client.request(
        "PUT",
        "/api/0/buckets/win_a",
        &[("Content-Type", "application/json")],
        Some(json!({"hostname": "host-b"}).to_string().as_bytes()),
    );
    assert_eq!(reply.status, 200);
    let reply = watcher.post_json(
        "/api/0/buckets/win_a/heartbeat?pulsetime=10",
        &heartbeat("2026-11-28T10:00:09Z"),
    );
    assert_eq!(reply.status, 403);
    // aw-watcher-web reports `unknown`: a token may name it.
    let web = add_token(
        &admin_client,
        json!({"name": "browser", "scope": "write", "hosts": ["unknown"]}),
    );
    make_bucket(
        &bearer(&server.client(), &web),
        "aw-watcher-web-firefox",
        "unknown",
    );
}

#[test]
fn revoked_tokens_are_refused_on_the_next_request_and_expiry_holds() {
    let backups = tempfile::tempdir().unwrap();
    let server = keyed(backups.path());
    let admin_client = admin(&server);
    let secret = add_token(&admin_client, json!({"name": "script", "scope": "read"}));
    let script = bearer(&server.client(), &secret);
    assert_eq!(script.get("/api/0/buckets/").status, 200);
    assert_eq!(admin_client.delete("/api/0/tokens/script").status, 200);
    assert_eq!(script.get("/api/0/buckets/").status, 401);
    assert_eq!(admin_client.delete("/api/0/tokens/script").status, 404);

    // Bad requests change nothing.
    for body in [
        json!({"name": "a b", "scope": "read"}),
        json!({"name": "x", "scope": "root"}),
        json!({"name": "x", "scope": "write"}),
        json!({"name": "x", "scope": "read", "hosts": ["h"]}),
        json!({"name": "x", "scope": "read", "expires": "2001-01-01"}),
        json!({"name": "x", "scope": "read", "expires": "soon"}),
        json!({"name": "x", "scope": "read", "token": "chosen"}),
    ] {
        let reply = admin_client.post_json("/api/0/tokens", &body);
        assert!(
            reply.status == 400 || reply.status == 422,
            "{body}: {}",
            reply.status
        );
        assert!(reply.json()["message"].is_string());
    }
    assert_eq!(admin_client.get("/api/0/tokens").json(), json!([]));
    let _ = add_token(&admin_client, json!({"name": "x", "scope": "read"}));
    let reply = admin_client.post_json("/api/0/tokens", &json!({"name": "x", "scope": "admin"}));
    assert_eq!(reply.status, 409);
    let listed = admin_client.get("/api/0/tokens").json();
    assert_eq!(listed[0]["scope"], "read");

    // The listing: every field but the secret.
    let secret = add_token(
        &admin_client,
        json!({"name": "until", "scope": "write", "hosts": ["h1", "h2"], "expires": "2099-01-01"}),
    );
    let listed = admin_client.get("/api/0/tokens").json();
    let until = named(&admin_client, "until");
    assert_eq!(until["hosts"], json!(["h1", "h2"]));
    assert_eq!(until["expires"], "2099-01-01T00:00:00Z");
    assert_eq!(until["last_used"], Value::Null);
    assert!(until["created"].is_string());
    assert!(!listed.to_string().contains(&secret));
    assert!(until.get("hash").is_none() && until.get("token").is_none());

    // "Last used" is recorded (once a minute at most), off the request.
    let user = bearer(&server.client(), &secret);
    assert_eq!(user.get("/api/0/access").json()["name"], "until");
    let last_used = || named(&admin_client, "until")["last_used"].clone();
    eventually("last_used", || last_used().is_string());
    let first = last_used();
    assert_eq!(user.get("/api/0/access").status, 200);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(last_used(), first);
}

/// The listing of the token `name`.
fn named(admin: &Client, name: &str) -> Value {
    admin
        .get("/api/0/tokens")
        .json()
        .as_array()
        .unwrap()
        .iter()
        .find(|token| token["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no token {name}"))
}

#[test]
fn credentials_never_travel_in_the_address() {
    let backups = tempfile::tempdir().unwrap();
    let server = keyed(backups.path());
    let admin_client = admin(&server);
    let secret = add_token(&admin_client, json!({"name": "r", "scope": "read"}));
    let anonymous = server.client();
    for path in [
        format!("/api/0/buckets/?token={secret}"),
        format!("/api/0/buckets/?api_key={KEY}"),
        format!("/api/0/buckets/?access_token={secret}"),
    ] {
        assert_eq!(anonymous.get(&path).status, 401, "{path}");
    }
    // The dashboard's own page takes `?token=` (its script reads it).
    assert_eq!(anonymous.get(&format!("/?token={secret}")).status, 200);
}

#[test]
fn without_credentials_the_api_is_open_and_a_first_token_closes_it() {
    let server = TestServer::start();
    let client = server.client();
    assert_eq!(
        client.get("/api/0/access").json(),
        json!({"authenticated": false, "scope": "admin", "name": null, "hosts": []})
    );
    let secret = add_token(&client, json!({"name": "first", "scope": "admin"}));
    assert_eq!(client.get("/api/0/buckets/").status, 401);
    let admin_client = bearer(&client, &secret);
    assert_eq!(admin_client.get("/api/0/buckets/").status, 200);
    assert_eq!(
        admin_client.get("/api/0/access").json()["authenticated"],
        true
    );
    // Revoking the last credential opens the API again.
    assert_eq!(admin_client.delete("/api/0/tokens/first").status, 200);
    assert_eq!(client.get("/api/0/buckets/").status, 200);
}

#[test]
fn failed_authentication_is_limited_per_client_behind_a_trusted_proxy() {
    let backups = tempfile::tempdir().unwrap();
    let backups = backups.path().to_path_buf();
    let server = TestServer::start_with(move |config| {
        config.api_key = Some(KEY.to_string());
        config.backup.dir = backups;
        config.trusted_proxies = vec!["127.0.0.1".parse().unwrap()];
    });
    let client = server.client();
    let from = |ip: &str, secret: &str| {
        client.request(
            "GET",
            "/api/0/buckets/",
            &[
                ("X-Forwarded-For", ip),
                ("Authorization", &format!("Bearer {secret}")),
            ],
            None,
        )
    };
    for _ in 0..10 {
        assert_eq!(from("203.0.113.5", "guess").status, 401);
    }
    let limited = from("203.0.113.5", "guess");
    assert_eq!(limited.status, 429);
    assert!(limited.header("Retry-After").is_some());
    // Limited even with the right key, until the burst refills.
    assert_eq!(from("203.0.113.5", KEY).status, 429);
    // Other clients are not.
    assert_eq!(from("203.0.113.6", KEY).status, 200);
    // Without a credential nothing is counted.
    for _ in 0..20 {
        let reply = client.request(
            "GET",
            "/api/0/buckets/",
            &[("X-Forwarded-For", "203.0.113.7")],
            None,
        );
        assert_eq!(reply.status, 401);
    }
    assert_eq!(from("203.0.113.7", KEY).status, 200);
    // The proxy's own loopback requests are never limited.
    for _ in 0..20 {
        assert_eq!(bearer(&client, "guess").get("/api/0/buckets/").status, 401);
    }
    assert_eq!(admin(&server).get("/api/0/buckets/").status, 200);
}

#[test]
fn tokens_move_with_the_file_as_hashes_only() {
    let backups = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let (backup_dir, sync_dir) = (backups.path().to_path_buf(), folder.path().to_path_buf());
    let server = TestServer::start_with(move |config| {
        config.api_key = Some(KEY.to_string());
        config.backup.dir = backup_dir;
        config.sync = Some(aw_jobs::sync::SyncSettings {
            enabled: false,
            folder: sync_dir,
            interval: Duration::from_secs(300),
            mode: aw_models::SyncMode::Both,
            buckets: None,
            allow_plaintext_copy: false,
        });
    });
    let admin_client = admin(&server);
    let secret = add_token(
        &admin_client,
        json!({"name": "w", "scope": "write", "hosts": ["host-a"]}),
    );
    make_bucket(&admin_client, "win_a", "host-a");
    let export = admin_client.get("/api/0/export").text();
    assert!(!export.contains(&secret) && !export.contains("aw-server.token"));
    let reply = admin_client.post("/api/0/backup", b"");
    assert_eq!(reply.status, 200, "{}", reply.text());
    let status = admin_client.get("/api/0/backup/status").text();
    assert!(!status.contains(&secret));
    // The sync folder gets buckets and events, never a token or its hash.
    let pass = admin_client.post("/api/0/sync/run?mode=push", b"");
    assert_eq!(pass.status, 200, "{}", pass.text());
    let mut pushed = 0;
    for entry in walk(folder.path()) {
        let bytes = std::fs::read(&entry).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(&secret[4..]) && !text.contains("aw-server.token"));
        pushed += 1;
    }
    assert!(pushed > 0, "the push wrote the device's file");
    server.datastore.force_commit().unwrap();
    // The file holds the hash, not the token.
    let snapshot = reply.json()["path"].as_str().unwrap().to_string();
    let bytes = std::fs::read(&snapshot).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains("aw-server.token.w"));
    assert!(!text.contains(&secret));
    assert!(!text.contains(&secret[4..]));
}

/// Every file under `folder`.
fn walk(folder: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn the_first_credential_is_an_admin_token_or_nothing_is_made() {
    let server = TestServer::start();
    let open = server.client();
    for body in [
        json!({"name": "dash", "scope": "read"}),
        json!({"name": "watcher", "scope": "write", "hosts": ["laptop"]}),
    ] {
        let message = open.post_json("/api/0/tokens", &body).assert_error(409);
        assert!(
            message.contains("the first credential must be an admin token")
                && message.contains("--scope admin"),
            "{message}"
        );
    }
    // Nothing changed: the API is still open, and no token exists.
    assert_eq!(open.get("/api/0/tokens").json(), json!([]));
    assert_eq!(open.get("/api/0/access").json()["authenticated"], false);
    assert_eq!(open.get("/api/0/buckets/").status, 200);
    // An admin first, then the others through it.
    let owner = add_token(&open, json!({"name": "me", "scope": "admin"}));
    let owner = bearer(&open, &owner);
    add_token(&owner, json!({"name": "dash", "scope": "read"}));
    // With a configured key, the key is the admin: a read token may come first.
    let temp = tempfile::tempdir().unwrap();
    let keyed = keyed(temp.path());
    add_token(&admin(&keyed), json!({"name": "dash", "scope": "read"}));
}

#[test]
fn the_authorization_scheme_is_read_in_any_letter_case() {
    let temp = tempfile::tempdir().unwrap();
    let server = keyed(temp.path());
    let client = server.client();
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let reply = client
            .clone()
            .with_header("Authorization", &format!("{scheme} {KEY}"))
            .get("/api/0/buckets/");
        assert_eq!(reply.status, 200, "{scheme}: {}", reply.text());
    }
    let basic = basic(KEY);
    let lower = basic.replacen("Basic", "BASIC", 1);
    let reply = client
        .clone()
        .with_header("Authorization", &lower)
        .get("/api/0/buckets/");
    assert_eq!(reply.status, 200);
    // Another scheme, or none, is still refused.
    for header in [
        format!("Token {KEY}"),
        KEY.to_string(),
        format!("Bearer{KEY}"),
    ] {
        let reply = client
            .clone()
            .with_header("Authorization", &header)
            .get("/api/0/buckets/");
        assert_eq!(reply.status, 401, "{header}");
    }
}
