//! Hosts renamed, merged and aliased over HTTP (`docs/API.md` §3.15): the
//! plan of a dry run changes nothing, a change writes a snapshot first,
//! a watcher still sending as the old name writes into the new buckets,
//! a token for the old name keeps working, and bad input is a clear 4xx
//! that changes nothing.

mod common;

use std::collections::BTreeMap;

use common::{event, Client, TestServer};
use serde_json::{json, Value};

const KEY: &str = "hosts-key";
const HOUR: i64 = 3_600;

fn server(backups: &std::path::Path) -> TestServer {
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

fn put_json(client: &Client, path: &str, body: &Value) -> common::Reply {
    client.request(
        "PUT",
        path,
        &[("Content-Type", "application/json")],
        Some(body.to_string().as_bytes()),
    )
}

fn make_bucket(client: &Client, id: &str, kind: &str, host: &str) {
    let reply = client.post_json(
        &format!("/api/0/buckets/{id}"),
        &json!({"type": kind, "client": format!("aw-watcher-{kind}"), "hostname": host}),
    );
    assert_eq!(reply.status, 200, "{id}: {}", reply.text());
}

/// `count` events a few minutes apart from `start` (seconds), without
/// overlaps of their own, through the import endpoint ([`document`]).
fn generated(
    client: &Client,
    id: &str,
    kind: &str,
    host: &str,
    seed: u64,
    count: usize,
    start: i64,
) {
    let reply = client.post_json(
        "/api/0/import",
        &document(&[(id, kind, host, seed, count, start)]),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
}

fn spans(client: &Client, id: &str) -> Vec<(i64, i64)> {
    client
        .list(&format!("/api/0/buckets/{id}/events?limit=-1"))
        .iter()
        .map(|e| {
            let start = chrono::DateTime::parse_from_rfc3339(e["timestamp"].as_str().unwrap())
                .unwrap()
                .timestamp_millis();
            let length = (e["duration"].as_f64().unwrap() * 1000.0).round() as i64;
            (start, start + length)
        })
        .collect()
}

/// Covered milliseconds per hour.
fn per_hour(spans: &[(i64, i64)]) -> BTreeMap<i64, i64> {
    let mut sorted: Vec<(i64, i64)> = spans.iter().copied().filter(|(s, e)| e > s).collect();
    sorted.sort_unstable();
    let mut joined: Vec<(i64, i64)> = Vec::new();
    for (s, e) in sorted {
        match joined.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => joined.push((s, e)),
        }
    }
    let mut hours = BTreeMap::new();
    for (s, e) in joined {
        let mut at = s;
        while at < e {
            let hour = at.div_euclid(HOUR * 1000);
            let until = ((hour + 1) * HOUR * 1000).min(e);
            *hours.entry(hour).or_insert(0) += until - at;
            at = until;
        }
    }
    hours
}

fn bucket_ids(client: &Client) -> Vec<String> {
    client
        .get("/api/0/buckets/")
        .json()
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

#[test]
fn a_rename_keeps_every_event_and_the_old_name_still_writes() {
    let backups = tempfile::tempdir().unwrap();
    let server = server(backups.path());
    let admin = bearer(&server.client(), KEY);
    make_bucket(
        &admin,
        "aw-watcher-window_mac.local",
        "currentwindow",
        "mac.local",
    );
    make_bucket(&admin, "aw-watcher-afk_mac.local", "afkstatus", "mac.local");
    let inserted = admin.post_json(
        "/api/0/buckets/aw-watcher-window_mac.local/events",
        &json!([event("2026-11-30T09:00:00Z", 60.0, json!({"app": "Code"}))]),
    );
    assert_eq!(inserted.status, 200, "{}", inserted.text());
    // A write token made for the old name before the rename.
    let made = admin.post_json(
        "/api/0/tokens",
        &json!({"name": "watcher", "scope": "write", "hosts": ["mac.local"]}),
    );
    assert_eq!(made.status, 201, "{}", made.text());
    let watcher = bearer(&server.client(), made.json()["token"].as_str().unwrap());
    let before = admin
        .get("/api/0/buckets/aw-watcher-window_mac.local/events")
        .json();

    let plan = admin.post_json(
        "/api/0/hosts/mac.local/rename",
        &json!({"to": "mac", "dry_run": true}),
    );
    assert_eq!(plan.status, 200, "{}", plan.text());
    let plan = plan.json();
    assert_eq!(plan["dry_run"], true);
    assert_eq!(plan["buckets"].as_array().unwrap().len(), 2);
    assert_eq!(plan["snapshot"], Value::Null);
    assert_eq!(
        bucket_ids(&admin),
        vec!["aw-watcher-afk_mac.local", "aw-watcher-window_mac.local"],
        "a dry run changes nothing"
    );
    assert!(common::names_in(backups.path()).is_empty());

    let done = admin.post_json("/api/0/hosts/mac.local/rename", &json!({"to": "mac"}));
    assert_eq!(done.status, 200, "{}", done.text());
    let done = done.json();
    assert_eq!(done["dry_run"], false);
    let snapshot = done["snapshot"].as_str().expect("a snapshot first");
    assert!(std::path::Path::new(snapshot).exists(), "{snapshot}");
    assert_eq!(
        bucket_ids(&admin),
        vec!["aw-watcher-afk_mac", "aw-watcher-window_mac"]
    );
    let renamed = admin.get("/api/0/buckets/aw-watcher-window_mac").json();
    assert_eq!(renamed["hostname"], "mac");
    assert_eq!(
        admin
            .get("/api/0/buckets/aw-watcher-window_mac/events")
            .json(),
        before,
        "events and their ids kept"
    );

    // The watcher, not restarted, with its old token: creates its bucket
    // (answered as existing), sends heartbeats, reads it.
    let created = watcher.post_json(
        "/api/0/buckets/aw-watcher-window_mac.local",
        &json!({"type": "currentwindow", "client": "aw-watcher-window", "hostname": "mac.local"}),
    );
    assert_eq!(created.status, 304, "{}", created.text());
    let beat = watcher.post_json(
        "/api/0/buckets/aw-watcher-window_mac.local/heartbeat?pulsetime=120",
        &event("2026-11-30T09:01:30Z", 0.0, json!({"app": "Code"})),
    );
    assert_eq!(beat.status, 200, "{}", beat.text());
    let events = admin
        .get("/api/0/buckets/aw-watcher-window_mac/events")
        .json();
    assert_eq!(events.as_array().unwrap().len(), 1, "{events}");
    assert_eq!(
        events[0]["duration"], 90.0,
        "merged into the renamed bucket"
    );
    let old = watcher.get("/api/0/buckets/aw-watcher-window_mac.local/events");
    assert_eq!(old.status, 200, "{}", old.text());
    assert_eq!(old.json(), events);
    // query_bucket of the old id reads the new bucket.
    let query = admin.post_json(
        "/api/0/query/",
        &json!({"timeperiods": ["2026-11-30T00:00:00Z/2026-12-01T00:00:00Z"],
                "query": ["RETURN = query_bucket(\"aw-watcher-window_mac.local\");"]}),
    );
    assert_eq!(query.status, 200, "{}", query.text());
    assert_eq!(query.json()[0], events);
    // Only the new buckets are listed; the host list names the alias.
    assert_eq!(bucket_ids(&admin).len(), 2);
    let hosts = admin.get("/api/0/hosts").json();
    assert_eq!(hosts.as_array().unwrap().len(), 1, "{hosts}");
    assert_eq!(hosts[0]["host"], "mac");
    assert_eq!(
        hosts[0]["device_ids"],
        json!([]),
        "made for another machine's host"
    );
    assert_eq!(hosts[0]["aliases"], json!(["mac.local"]));
    assert_eq!(hosts[0]["events"], 1);
}

#[test]
fn a_merge_over_http_keeps_the_union_of_two_histories_every_hour() {
    let backups = tempfile::tempdir().unwrap();
    let server = server(backups.path());
    let admin = bearer(&server.client(), KEY);
    let start = 1_780_000_000;
    generated(
        &admin,
        "aw-watcher-window_mac.local",
        "currentwindow",
        "mac.local",
        1,
        10_000,
        start,
    );
    generated(
        &admin,
        "aw-watcher-window_mac.fritz.box",
        "currentwindow",
        "mac.fritz.box",
        2,
        10_000,
        start + 300 * HOUR,
    );
    generated(
        &admin,
        "aw-watcher-afk_mac.local",
        "afkstatus",
        "mac.local",
        3,
        2_000,
        start,
    );
    let union = per_hour(
        &[
            spans(&admin, "aw-watcher-window_mac.local"),
            spans(&admin, "aw-watcher-window_mac.fritz.box"),
        ]
        .concat(),
    );
    let plan = admin.post_json(
        "/api/0/hosts/mac.local/merge",
        &json!({"into": "mac.fritz.box", "dry_run": true}),
    );
    assert_eq!(plan.status, 200, "{}", plan.text());
    let plan = plan.json();
    let done = admin.post_json(
        "/api/0/hosts/mac.local/merge",
        &json!({"into": "mac.fritz.box"}),
    );
    assert_eq!(done.status, 200, "{}", done.text());
    let done = done.json();
    // The plan shown is the merge done: per bucket, what moves, is cut
    // or dropped.
    for (planned, did) in plan["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .zip(done["buckets"].as_array().unwrap())
    {
        for key in ["from", "to", "action", "events", "moved", "cut", "dropped"] {
            assert_eq!(planned[key], did[key], "{key}: {planned} vs {did}");
        }
    }
    let window = &done["buckets"][1];
    assert_eq!(window["action"], "merge", "{done}");
    assert!(
        window["cut"].as_u64().unwrap() + window["dropped"].as_u64().unwrap() > 0,
        "{window}"
    );
    assert_eq!(
        done["buckets"][0]["action"], "rename",
        "the AFK bucket had no counterpart"
    );
    assert_eq!(
        bucket_ids(&admin),
        vec![
            "aw-watcher-afk_mac.fritz.box",
            "aw-watcher-window_mac.fritz.box"
        ]
    );
    let merged = spans(&admin, "aw-watcher-window_mac.fritz.box");
    assert_eq!(per_hour(&merged), union, "the union of both, every hour");
    let summed: i64 = merged.iter().map(|(s, e)| e - s).sum();
    assert_eq!(summed, union.values().sum::<i64>(), "no time counted twice");
    assert!(done["snapshot"].is_string());
}

#[test]
fn bad_requests_are_clear_and_change_nothing() {
    let backups = tempfile::tempdir().unwrap();
    let server = server(backups.path());
    let admin = bearer(&server.client(), KEY);
    make_bucket(&admin, "w_a", "currentwindow", "a");
    make_bucket(&admin, "w_b", "currentwindow", "b");
    make_bucket(&admin, "x_b", "afkstatus", "stray");
    make_bucket(&admin, "x_a", "input", "a");
    let reader = {
        let made = admin.post_json("/api/0/tokens", &json!({"name": "r", "scope": "read"}));
        bearer(&server.client(), made.json()["token"].as_str().unwrap())
    };
    let writer = {
        let made = admin.post_json(
            "/api/0/tokens",
            &json!({"name": "w", "scope": "write", "hosts": ["a"]}),
        );
        bearer(&server.client(), made.json()["token"].as_str().unwrap())
    };
    let export = || admin.get("/api/0/export").json();
    let before = export();
    let cases: Vec<(&Client, &str, Value, u16, &str)> = vec![
        (
            &admin,
            "/api/0/hosts/nohost/rename",
            json!({"to": "c"}),
            404,
            "no bucket has the host",
        ),
        (
            &admin,
            "/api/0/hosts/a/rename",
            json!({"to": "b"}),
            409,
            "already a host",
        ),
        (
            &admin,
            "/api/0/hosts/a/rename",
            json!({"to": "a"}),
            400,
            "into itself",
        ),
        (
            &admin,
            "/api/0/hosts/a/rename",
            json!({"to": "c/d"}),
            400,
            "not a usable host name",
        ),
        (
            &admin,
            "/api/0/hosts/a/rename",
            json!({"to": "c", "extra": 1}),
            422,
            "",
        ),
        (&admin, "/api/0/hosts/a/rename", json!({}), 422, ""),
        (
            &admin,
            "/api/0/hosts/a/merge",
            json!({"into": "a"}),
            400,
            "into itself",
        ),
        (
            &admin,
            "/api/0/hosts/a/merge",
            json!({"into": "nohost"}),
            404,
            "nohost",
        ),
        // x_a would become x_b, a bucket of another type.
        (
            &admin,
            "/api/0/hosts/a/merge",
            json!({"into": "b"}),
            409,
            "x_b",
        ),
        (
            &reader,
            "/api/0/hosts/a/rename",
            json!({"to": "c"}),
            403,
            "",
        ),
        (
            &writer,
            "/api/0/hosts/a/rename",
            json!({"to": "c"}),
            403,
            "",
        ),
        (
            &writer,
            "/api/0/hosts/a/merge",
            json!({"into": "b"}),
            403,
            "",
        ),
    ];
    for (client, path, body, status, says) in cases {
        let reply = client.post_json(path, &body);
        let message = reply.assert_error(status);
        assert!(message.contains(says), "{path} {body}: {message}");
    }
    let not_json = admin.post("/api/0/hosts/a/rename", b"{to:");
    not_json.assert_error(400);
    // Aliases: a host of its own, an unknown host, an unknown alias.
    put_json(&admin, "/api/0/hosts/b/alias", &json!({"host": "a"})).assert_error(409);
    put_json(&admin, "/api/0/hosts/c/alias", &json!({"host": "nohost"})).assert_error(404);
    put_json(&reader, "/api/0/hosts/c/alias", &json!({"host": "a"})).assert_error(403);
    admin.delete("/api/0/hosts/c/alias").assert_error(404);
    assert_eq!(export(), before, "nothing changed");
    assert!(
        common::names_in(backups.path()).is_empty(),
        "no snapshot for a refusal"
    );
    // The reader may list hosts.
    assert_eq!(reader.get("/api/0/hosts").status, 200);

    // An alias made by hand reaches the host's buckets, and ends.
    let aliased = put_json(&admin, "/api/0/hosts/a.local/alias", &json!({"host": "a"}));
    assert_eq!(aliased.status, 200, "{}", aliased.text());
    assert_eq!(admin.get("/api/0/buckets/w_a.local").json()["id"], "w_a");
    assert_eq!(admin.delete("/api/0/hosts/a.local/alias").status, 204);
    admin.get("/api/0/buckets/w_a.local").assert_error(404);
}

/// An export document of generated buckets: `(id, kind, host, seed,
/// count, start)`.
fn document(buckets: &[(&str, &str, &str, u64, usize, i64)]) -> Value {
    let mut all = serde_json::Map::new();
    for &(id, kind, host, seed, count, start) in buckets {
        let mut state = seed;
        let mut next = move |n: i64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) as i64) % n
        };
        let mut at = start;
        let events: Vec<Value> = (0..count)
            .map(|_| {
                at += next(200);
                let length = next(400);
                let stamp = chrono::DateTime::from_timestamp(at, 0).unwrap().to_rfc3339();
                at += length;
                json!({"timestamp": stamp, "duration": length, "data": {"app": format!("a{}", next(5))}})
            })
            .collect();
        all.insert(
            id.to_string(),
            json!({"id": id, "type": kind, "client": format!("aw-watcher-{kind}"), "hostname": host,
                   "created": "2026-01-01T00:00:00Z", "events": events}),
        );
    }
    json!({"buckets": all})
}

fn stdout_of(root: &std::path::Path, args: &[&str]) -> String {
    let output = common::run(root, args);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_commands_rename_and_merge_on_the_file_and_through_the_server() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let db = root.join("hosts.db");
    let source = root.join("seed.json");
    let start = 1_780_000_000;
    std::fs::write(
        &source,
        document(&[
            (
                "aw-watcher-window_mac.local",
                "currentwindow",
                "mac.local",
                1,
                3_000,
                start,
            ),
            (
                "aw-watcher-window_mac.fritz.box",
                "currentwindow",
                "mac.fritz.box",
                2,
                3_000,
                start + 100 * HOUR,
            ),
            (
                "aw-watcher-afk_mac.fritz.box",
                "afkstatus",
                "mac.fritz.box",
                3,
                500,
                start,
            ),
        ])
        .to_string(),
    )
    .unwrap();
    let db_arg = db.to_str().unwrap();
    common::ok(
        root,
        &["import", "--dbpath", db_arg, source.to_str().unwrap()],
    );

    // On the file: a dry run shows the plan and changes nothing.
    let plan = stdout_of(
        root,
        &[
            "hosts",
            "merge",
            "mac.local",
            "mac.fritz.box",
            "--dry-run",
            "--dbpath",
            db_arg,
        ],
    );
    assert!(plan.contains("dry run, nothing changed"), "{plan}");
    assert!(
        plan.contains(
            "aw-watcher-window_mac.local -> aw-watcher-window_mac.fritz.box: merged, 3000 events"
        ),
        "{plan}"
    );
    let listed: Value = serde_json::from_str(&stdout_of(
        root,
        &["hosts", "list", "--json", "--dbpath", db_arg],
    ))
    .unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 2, "{listed}");

    // Bad input: exit 1, a reason, nothing changed.
    for args in [
        vec!["hosts", "rename", "nohost", "x"],
        vec!["hosts", "rename", "mac.local", "mac.fritz.box"],
        vec!["hosts", "merge", "mac.local", "mac.local"],
        vec!["hosts", "merge", "mac.local", "nohost"],
        vec!["hosts", "unalias", "nohost"],
    ] {
        let mut args = args.clone();
        args.extend(["--dbpath", db_arg]);
        let stderr = common::fails(root, &args, 1);
        assert!(!stderr.trim().is_empty(), "{args:?} says why");
    }
    let after: Value = serde_json::from_str(&stdout_of(
        root,
        &["hosts", "list", "--json", "--dbpath", db_arg],
    ))
    .unwrap();
    assert_eq!(after, listed, "refusals changed nothing");

    // On the file: a rename, with a snapshot first.
    let renamed = stdout_of(
        root,
        &["hosts", "rename", "mac.local", "mac", "--dbpath", db_arg],
    );
    assert!(
        renamed.contains("Snapshot before the change: "),
        "{renamed}"
    );
    assert!(
        renamed.contains("'mac.local' did become an alias of 'mac'"),
        "{renamed}"
    );

    // Through the running server: the merge, then the host list.
    let (server, client) = common::serve_file(root, &db);
    let port = client.port.to_string();
    let merged = stdout_of(
        root,
        &[
            "hosts",
            "merge",
            "mac",
            "mac.fritz.box",
            "--testing",
            "--port",
            &port,
        ],
    );
    assert!(
        merged.contains("Merge of host 'mac' into 'mac.fritz.box' (done)"),
        "{merged}"
    );
    let hosts = client.get("/api/0/hosts").json();
    assert_eq!(hosts.as_array().unwrap().len(), 1, "{hosts}");
    assert_eq!(hosts[0]["aliases"], json!(["mac", "mac.local"]));
    // Every event of both but those wholly inside the other's time.
    let events = hosts[0]["events"].as_u64().unwrap();
    assert!((6_000..=6_500).contains(&events), "{events}");
    let alias = stdout_of(
        root,
        &[
            "hosts",
            "alias",
            "mac.home",
            "mac.fritz.box",
            "--testing",
            "--port",
            &port,
        ],
    );
    assert!(
        alias.contains("'mac.home' now names host 'mac.fritz.box'"),
        "{alias}"
    );
    assert_eq!(
        client
            .get("/api/0/buckets/aw-watcher-window_mac.home")
            .json()["id"],
        "aw-watcher-window_mac.fritz.box"
    );
    drop(server);
}

#[test]
fn a_merge_killed_midway_is_finished_at_the_next_start() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let db = root.join("big.db");
    let source = root.join("big.json");
    let start = 1_780_000_000;
    let from = "aw-watcher-window_old";
    let into = "aw-watcher-window_new";
    std::fs::write(
        &source,
        document(&[
            (from, "currentwindow", "old", 11, 40_000, start),
            (
                into,
                "currentwindow",
                "new",
                12,
                40_000,
                start + 2_000 * HOUR,
            ),
        ])
        .to_string(),
    )
    .unwrap();
    common::ok(
        root,
        &[
            "import",
            "--dbpath",
            db.to_str().unwrap(),
            source.to_str().unwrap(),
        ],
    );
    let (server, client) = common::serve_file(root, &db);
    let union = per_hour(&[spans(&client, from), spans(&client, into)].concat());
    let count = |client: &Client| -> Option<u64> {
        let reply = client.get(&format!("/api/0/buckets/{from}/events/count"));
        (reply.status == 200).then(|| reply.json().as_u64().unwrap())
    };
    let merging = {
        let client = client.clone();
        std::thread::spawn(move || {
            let body = json!({"into": "new"}).to_string();
            let head = format!(
                "POST /api/0/hosts/old/merge HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                client.port,
                body.len()
            );
            client.try_raw(head.as_bytes()).map(|reply| reply.status)
        })
    };
    // Killed once some events moved and before all did.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let mut midway = false;
    loop {
        match count(&client) {
            Some(left) if left < 40_000 => {
                midway = left > 0;
                break;
            }
            None => break,
            _ => {}
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the merge never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    common::signal(&server.0, common::Signal::KILL).unwrap();
    drop(server);
    let answered = merging.join().unwrap();
    if !midway {
        eprintln!(
            "WARNING: the merge was not caught midway (answered {answered:?}); the restart \
             below still checks the finished state"
        );
    }
    assert!(midway, "the kill must land while events are moving");
    let (_server, client) = common::serve_file(root, &db);
    let ids = bucket_ids(&client);
    assert_eq!(
        ids,
        vec![into.to_string()],
        "the merge was finished at the start"
    );
    let merged = spans(&client, into);
    assert_eq!(
        per_hour(&merged),
        union,
        "intact: the union of both, every hour"
    );
    assert_eq!(
        merged.iter().map(|(s, e)| e - s).sum::<i64>(),
        union.values().sum::<i64>()
    );
    let hosts = client.get("/api/0/hosts").json();
    assert_eq!(hosts[0]["aliases"], json!(["old"]), "{hosts}");
}

#[test]
fn a_bucket_of_this_machine_carries_its_device_id() {
    let backups = tempfile::tempdir().unwrap();
    let server = server(backups.path());
    let admin = bearer(&server.client(), KEY);
    let info = admin.get("/api/0/info").json();
    let own = info["hostname"].as_str().unwrap();
    make_bucket(
        &admin,
        &format!("aw-watcher-window_{own}"),
        "currentwindow",
        own,
    );
    make_bucket(&admin, "elsewhere", "currentwindow", "another-machine");
    let named = admin.post_json(
        "/api/0/buckets/named",
        &json!({"type": "t", "client": "c", "hostname": own, "data": {"device_id": "its-own"}}),
    );
    assert_eq!(named.status, 200);
    let device =
        |id: &str| admin.get(&format!("/api/0/buckets/{id}")).json()["data"]["device_id"].clone();
    assert_eq!(
        device(&format!("aw-watcher-window_{own}")),
        info["device_id"]
    );
    assert_eq!(device("elsewhere"), Value::Null);
    assert_eq!(device("named"), "its-own");
    // Renamed, it still names the device that made it.
    let renamed = admin.post_json(
        &format!("/api/0/hosts/{own}/rename"),
        &json!({"to": "renamed-machine"}),
    );
    assert_eq!(renamed.status, 200, "{}", renamed.text());
    assert_eq!(
        device("aw-watcher-window_renamed-machine"),
        info["device_id"]
    );
    let hosts = admin.get("/api/0/hosts").json();
    let host = hosts
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["host"] == "renamed-machine")
        .unwrap();
    assert_eq!(host["device_ids"], json!([info["device_id"], "its-own"]));
}
