//! A server that hosts several people (`[users] enabled`, `docs/API.md`
//! §3.17 and §9.4), on the binary: each request is served the file of
//! the person its token belongs to, and sees nothing of anyone else's;
//! the config's API key manages people and reads none of their data;
//! an existing database becomes `first_user`'s, and a person's file
//! taken home serves their history to their tokens on any server; quiet
//! files close and open again on the next request; snapshots and
//! retention reach every file; groups share only what their members
//! chose; bad input changes nothing.

mod common;

use std::path::{Path, PathBuf};

use common::hosting::*;
use common::{binary, run, spawn_listening, Client, Stopped};
use serde_json::{json, Value};

#[test]
fn each_person_sees_only_their_own_data_and_the_server_key_sees_none_of_it() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    hosting_config(root, "close_after = 1\n");
    let alice_key = add_user(root, "alice");
    let bob_key = add_user(root, "bob");
    let (server, port) = start(root);
    let alice = client(port, &alice_key);
    let bob = client(port, &bob_key);
    let admin = client(port, SERVER_KEY);

    // The same bucket id in both files, and one bucket of Bob's alone.
    seed(&alice, "laptop", "alice's plan");
    seed(&bob, "laptop", "bob's secret");
    seed(&bob, "desktop", "bob's other secret");
    let window = "aw-watcher-window_laptop";
    assert_eq!(titles(&alice, window), ["alice's plan"]);
    assert_eq!(titles(&bob, window), ["bob's secret"]);
    let listed = alice.get("/api/0/buckets/").json();
    assert_eq!(
        listed.as_object().unwrap().keys().collect::<Vec<_>>(),
        [window]
    );
    // Bob's bucket is not there for Alice, by any route.
    let bobs = "aw-watcher-window_desktop";
    for path in [
        format!("/api/0/buckets/{bobs}"),
        format!("/api/0/buckets/{bobs}/events"),
        format!("/api/0/buckets/{bobs}/events/count"),
        format!("/api/0/buckets/{bobs}/export"),
    ] {
        let reply = alice.get(&path);
        assert_eq!(reply.status, 404, "{path}: {}", reply.text());
        assert!(!reply.text().contains("bob's"), "{path}");
    }
    let query = json!({
        "timeperiods": ["2026-12-01T00:00:00Z/2026-12-02T00:00:00Z"],
        "query": [format!("RETURN = query_bucket(\"{bobs}\");")]
    });
    let reply = alice.post_json("/api/0/query/", &query);
    assert!(
        reply.status >= 400 && reply.status < 500,
        "{}",
        reply.text()
    );
    assert!(!reply.text().contains("bob's"));
    let everything = alice.get("/api/0/export").text();
    assert!(everything.contains("alice's plan"));
    assert!(!everything.contains("bob's"), "{everything}");
    let summary = alice
        .get("/api/0/search?text=secret&start=2026-12-01&end=2026-12-02")
        .text();
    assert!(!summary.contains("bob's"), "{summary}");
    assert_eq!(alice.get("/api/0/access").json()["name"], "alice-admin");

    // A setting of Bob's is his alone.
    let reply = bob.post_json("/api/0/settings/theme", &json!("dark"));
    assert_eq!(reply.status, 201, "{}", reply.text());
    assert_eq!(alice.get("/api/0/settings/theme").json(), Value::Null);

    // The server administrator manages people and reads none of them.
    for path in ["/api/0/buckets/", "/api/0/export", "/api/0/settings"] {
        let reply = admin.get(path);
        assert_eq!(reply.status, 403, "{path}: {}", reply.text());
        assert!(message(&reply).contains("person's own token"), "{path}");
    }
    let access = admin.get("/api/0/access").json();
    assert_eq!(access["scope"], "server", "a scope of its own: {access}");
    assert_eq!(alice.get("/api/0/access").json()["user"], "alice");
    let people = admin.get("/api/0/users");
    assert_eq!(people.status, 200, "{}", people.text());
    let names: Vec<String> = people
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|user| user["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["alice", "bob"]);
    assert!(!people.text().contains("secret"));
    // Metrics: a person's own file; the server's counters and its people
    // for the administrator alone.
    let theirs = alice.get("/metrics");
    assert_eq!(theirs.status, 200, "{}", theirs.text());
    let theirs = theirs.text();
    assert!(
        theirs.contains("aw_server_bucket_last_event_age"),
        "{theirs}"
    );
    assert!(
        !theirs.contains("desktop"),
        "Bob's bucket in Alice's metrics"
    );
    assert!(!theirs.contains("aw_server_http_requests"), "{theirs}");
    let server_wide = admin.get("/metrics");
    assert_eq!(server_wide.status, 200, "{}", server_wide.text());
    let server_wide = server_wide.text();
    assert!(server_wide.contains("aw_server_users 2"), "{server_wide}");
    assert!(
        server_wide.contains("aw_server_http_requests_total"),
        "{server_wide}"
    );
    assert!(
        !server_wide.contains("laptop") && !server_wide.contains("desktop"),
        "{server_wide}"
    );

    // A person's admin token does not manage people.
    for (method, path) in [("GET", "/api/0/users"), ("POST", "/api/0/users")] {
        let reply = match method {
            "GET" => alice.get(path),
            _ => alice.post_json(path, &json!({"name": "mallory"})),
        };
        assert_eq!(reply.status, 403, "{method} {path}: {}", reply.text());
        assert!(message(&reply).contains("server administrator's key"));
    }
    let reply = alice.delete("/api/0/users/bob");
    assert_eq!(reply.status, 403, "{}", reply.text());
    // Without a credential: 401, saying a person's token is needed.
    let anonymous = Client {
        port,
        headers: Vec::new(),
    };
    let reply = anonymous.get("/api/0/buckets/");
    assert_eq!(reply.status, 401);
    assert!(
        message(&reply).contains("hosts several people"),
        "{}",
        reply.text()
    );
    assert_eq!(anonymous.get("/api/0/info").status, 200);

    // A token Alice makes reaches her file; revoked, nothing.
    let reply = alice.post_json(
        "/api/0/tokens",
        &json!({"name": "phone", "scope": "write", "hosts": ["phone"]}),
    );
    assert_eq!(reply.status, 201, "{}", reply.text());
    let phone = client(port, reply.json()["token"].as_str().unwrap());
    seed(&phone, "phone", "alice on the phone");
    assert_eq!(
        titles(&alice, "aw-watcher-window_phone"),
        ["alice on the phone"]
    );
    assert_eq!(
        bob.get("/api/0/buckets/aw-watcher-window_phone").status,
        404
    );
    assert_eq!(alice.delete("/api/0/tokens/phone").status, 200);
    assert_eq!(phone.get("/api/0/access").status, 401);

    // A snapshot of Alice's file goes into a folder of her own.
    let reply = alice.post("/api/0/backup", b"");
    assert_eq!(reply.status, 200, "{}", reply.text());
    let snapshot = PathBuf::from(reply.json()["path"].as_str().unwrap());
    assert!(
        snapshot.parent().unwrap().ends_with("backups/users/alice"),
        "{snapshot:?}"
    );
    assert!(snapshot.exists());
    assert_eq!(
        bob.get("/api/0/backup/status").json()["snapshots"],
        json!([])
    );

    // Quiet files close, and open again on the next request.
    wait_until("the quiet files to close", || {
        let people = admin.get("/api/0/users").json();
        people
            .as_array()
            .unwrap()
            .iter()
            .all(|user| user["open"] == false)
    });
    assert_eq!(titles(&bob, window), ["bob's secret"]);
    drop(server);
}

#[test]
fn people_are_added_and_removed_through_the_api_and_bad_input_changes_nothing() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    hosting_config(root, "");
    let (server, port) = start(root);
    let admin = client(port, SERVER_KEY);
    let reply = admin.post_json("/api/0/users", &json!({"name": "dana"}));
    assert_eq!(reply.status, 201, "{}", reply.text());
    let added = reply.json();
    assert_eq!(added["token_name"], "dana-admin");
    let dana = client(port, added["token"].as_str().unwrap());
    seed(&dana, "laptop", "dana's day");
    assert!(data_dir(root).join("users/dana/sqlite.db").exists());

    let listed = || admin.get("/api/0/users").text();
    let before = listed();
    for (body, status, says) in [
        (json!({"name": "dana"}), 409, "already"),
        (json!({"name": "../evil"}), 400, "not a user name"),
        (json!({"name": "Dana"}), 400, "not a user name"),
        (json!({"name": "removed"}), 400, "keeps for itself"),
        (json!({"name": "x", "admin": true}), 422, ""),
        (json!({}), 422, ""),
        (json!("dana"), 422, ""),
    ] {
        let reply = admin.post_json("/api/0/users", &body);
        assert_eq!(reply.status, status, "{body}: {}", reply.text());
        assert!(message(&reply).contains(says), "{body}: {}", reply.text());
    }
    assert_eq!(admin.delete("/api/0/users/nobody").status, 404);
    assert_eq!(admin.delete("/api/0/users/dana?delete=maybe").status, 400);
    assert_eq!(listed(), before, "nothing changed");
    assert!(!root.join("evil").exists() && !data_dir(root).join("evil").exists());
    assert_eq!(titles(&dana, "aw-watcher-window_laptop"), ["dana's day"]);

    // Removed while open: closed, moved aside, her token refused as a
    // person this server does not hold (421: another node may).
    let reply = admin.delete("/api/0/users/dana");
    assert_eq!(reply.status, 200, "{}", reply.text());
    let moved = PathBuf::from(reply.json()["moved_to"].as_str().unwrap());
    assert!(moved.join("sqlite.db").exists());
    assert!(!data_dir(root).join("users/dana").exists());
    assert!(dana
        .get("/api/0/buckets/")
        .assert_error(421)
        .contains("does not hold"));
    assert_eq!(admin.get("/api/0/users").json(), json!([]));
    drop(server);
}

#[test]
fn an_existing_database_becomes_the_first_users_and_goes_home_with_them() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let db = data_dir(root).join("sqlite.db");
    std::fs::create_dir_all(data_dir(root)).unwrap();
    // One person's server first: a token and some history.
    let output = run(
        root,
        &[
            "token",
            "add",
            "mine",
            "--scope",
            "admin",
            "--dbpath",
            db.to_str().unwrap(),
        ],
    );
    assert!(output.status.success());
    let mine = String::from_utf8(output.stdout).unwrap().trim().to_string();
    let (child, port) = spawn_listening(
        binary(root)
            .args(["--port", "0", "--dbpath", db.to_str().unwrap()])
            .stdout(std::process::Stdio::null()),
    );
    seed(&client(port, &mine), "laptop", "before users");
    drop(Stopped(child));

    hosting_config(root, "first_user = \"sam\"\n");
    let (server, port) = start(root);
    assert!(!db.exists(), "moved, not copied");
    assert!(data_dir(root).join("users/sam/sqlite.db").exists());
    let sam = client(port, &mine);
    assert_eq!(titles(&sam, "aw-watcher-window_laptop"), ["before users"]);
    assert_eq!(sam.get("/api/0/access").json()["name"], "mine");
    let people = client(port, SERVER_KEY).get("/api/0/users").json();
    assert_eq!(people[0]["name"], "sam");
    assert_eq!(people[0]["buckets"], 1);
    drop(server);
    // A second start finds sam and leaves everything where it is.
    let (server, port) = start(root);
    let sam = client(port, &mine);
    seed(&sam, "phone", "while hosted");
    assert_eq!(titles(&sam, "aw-watcher-window_laptop"), ["before users"]);
    drop(server);

    // Sam takes the file home: a server without users serves his history
    // to his token, and to no one without it.
    let home = root.join("sams-home.db");
    std::fs::copy(data_dir(root).join("users/sam/sqlite.db"), &home).unwrap();
    let (child, port) = spawn_listening(
        binary(root)
            .args(["--port", "0", "--dbpath", home.to_str().unwrap()])
            .stdout(std::process::Stdio::null()),
    );
    let _home_server = Stopped(child);
    let sam = client(port, &mine);
    assert_eq!(titles(&sam, "aw-watcher-window_laptop"), ["before users"]);
    assert_eq!(titles(&sam, "aw-watcher-window_phone"), ["while hosted"]);
    let anonymous = Client {
        port,
        headers: Vec::new(),
    };
    assert_eq!(anonymous.get("/api/0/buckets/").status, 401);
}

/// A device (a testing server of its own under `root`) that forwards to
/// the hub on `hub_port` with `token`.
fn device(root: &Path, hub_port: u16, token: &str) -> (Stopped, Client) {
    common::write_testing_config(
        root,
        &format!(
            "[hub]\nurl = \"http://127.0.0.1:{hub_port}\"\ntoken = \"{token}\"\ninterval = 1\n"
        ),
    );
    let (child, port) = spawn_listening(
        binary(root)
            .args(["--testing", "--port", "0"])
            .stdout(std::process::Stdio::null()),
    );
    (
        Stopped(child),
        Client {
            port,
            headers: Vec::new(),
        },
    )
}

/// The bucket's events without ids, oldest first; `None` when absent.
fn events(client: &Client, bucket: &str) -> Option<Vec<Value>> {
    let reply = client.get(&format!("/api/0/buckets/{bucket}/events?limit=-1"));
    if reply.status == 404 {
        return None;
    }
    assert_eq!(reply.status, 200, "{}", reply.text());
    let mut list = reply.json().as_array().unwrap().clone();
    for event in &mut list {
        event.as_object_mut().unwrap().remove("id");
    }
    list.reverse();
    Some(list)
}

#[test]
fn two_peoples_devices_forward_into_their_own_files_on_one_hub() {
    let temp = tempfile::tempdir().unwrap();
    let hub_root = temp.path().join("hub");
    hosting_config(&hub_root, "");
    let alice_admin = add_user(&hub_root, "alice");
    let bob_admin = add_user(&hub_root, "bob");
    let (hub, hub_port) = start(&hub_root);
    let alice = client(hub_port, &alice_admin);
    let bob = client(hub_port, &bob_admin);
    // Each makes their device's write token with their own admin token;
    // both devices are called "laptop".
    let write_token = |person: &Client| {
        let reply = person.post_json(
            "/api/0/tokens",
            &json!({"name": "laptop", "scope": "write", "hosts": ["laptop"]}),
        );
        assert_eq!(reply.status, 201, "{}", reply.text());
        reply.json()["token"].as_str().unwrap().to_string()
    };
    let (alices_device, alices_laptop) = device(
        &temp.path().join("alice-laptop"),
        hub_port,
        &write_token(&alice),
    );
    let (bobs_device, bobs_laptop) = device(
        &temp.path().join("bob-laptop"),
        hub_port,
        &write_token(&bob),
    );

    let window = "aw-watcher-window_laptop";
    seed(&alices_laptop, "laptop", "alice writes");
    seed(&bobs_laptop, "laptop", "bob reads");
    let history = |title: &str| -> Value {
        (0..200)
            .map(|i| {
                json!({"timestamp": format!("2026-11-{:02}T{:02}:{:02}:00Z", 1 + i / 24 % 28, i % 24, i % 60),
                       "duration": 30.0, "data": {"app": "Editor", "title": format!("{title} {i}")}})
            })
            .collect()
    };
    for (device, title) in [(&alices_laptop, "alice's doc"), (&bobs_laptop, "bob's doc")] {
        let reply = device.post_json(&format!("/api/0/buckets/{window}/events"), &history(title));
        assert_eq!(reply.status, 200, "{}", reply.text());
    }
    let alice_events = events(&alices_laptop, window).unwrap();
    let bob_events = events(&bobs_laptop, window).unwrap();
    assert_eq!(alice_events.len(), 201);
    wait_until("both laptops on the hub", || {
        events(&alice, window).as_ref() == Some(&alice_events)
            && events(&bob, window).as_ref() == Some(&bob_events)
    });
    // Each file holds its person's laptop alone, event for event.
    assert_ne!(alice_events, bob_events);
    let text = alice.get("/api/0/export").text();
    assert!(!text.contains("bob"), "alice's file holds bob's data");
    let text = bob.get("/api/0/export").text();
    assert!(!text.contains("alice"), "bob's file holds alice's data");
    let devices = alice.get("/api/0/forward").json();
    assert_eq!(devices.as_array().unwrap().len(), 1, "{devices}");
    drop((alices_device, bobs_device, hub));
}

/// A concrete path for `template` that names Bob's things: his bucket,
/// an event id his file has, his setting, his token, his host.
fn naming_bobs(template: &str) -> String {
    template
        .replace("{bucket_id}", "aw-watcher-window_desktop")
        .replace("{event_id}", "1")
        .replace("{key}", "bobs_setting")
        .replace("{name}", "bob-admin")
        .replace("{device}", "bobs-device")
        .replace("{host}", "desktop")
        .replace("{alias}", "desktop")
        .replace("/{group}/leave", "/nogroup/leave")
        .replace("{group}", "family")
}

/// A body for a route that would do something if the thing it names
/// were Alice's.
fn body_for(method: &str, template: &str) -> Option<Value> {
    let event = json!({"timestamp": "2026-12-01T11:00:00Z", "duration": 1.0,
                       "data": {"app": "Editor", "title": "alice was here"}});
    Some(match (method, template) {
        ("GET" | "DELETE", _) => return None,
        (_, "/api/0/buckets/{bucket_id}") => {
            json!({"type": "currentwindow", "client": "test", "hostname": "laptop"})
        }
        (_, "/api/0/buckets/{bucket_id}/heartbeat") => event,
        (_, "/api/0/buckets/{bucket_id}/events") => json!([event]),
        (_, "/api/0/query") => json!({
            "timeperiods": ["2026-12-01T00:00:00Z/2026-12-02T00:00:00Z"],
            "query": ["RETURN = query_bucket(\"aw-watcher-window_desktop\");"]}),
        (_, "/api/0/settings/{key}") => json!("alice's value"),
        (_, "/api/0/hosts/{host}/rename") => json!({"to": "alices-desktop"}),
        (_, "/api/0/hosts/{host}/merge") => json!({"into": "laptop"}),
        (_, "/api/0/hosts/{alias}/alias") => json!({"host": "laptop"}),
        (_, "/api/0/tokens") => json!({"name": "bob-admin", "scope": "read"}),
        (_, "/api/0/groups") => json!({"name": "family"}),
        (_, "/api/0/groups/{group}/invitations") => json!({"user": "bob"}),
        (_, "/api/0/groups/{group}/join") => json!({"share_apps": true}),
        _ => json!({}),
    })
}

/// What Bob's data is, as he reads it.
fn bobs_state(bob: &Client) -> Vec<String> {
    [
        "/api/0/export",
        "/api/0/settings",
        "/api/0/hosts",
        "/api/0/buckets/aw-watcher-window_desktop/events",
    ]
    .iter()
    .map(|path| {
        let reply = bob.get(path);
        assert_eq!(reply.status, 200, "{path}: {}", reply.text());
        reply.text()
    })
    .chain(std::iter::once(
        // Tokens without "last used", which his own reads change.
        bob.get("/api/0/tokens")
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|token| token["name"].to_string())
            .collect::<Vec<_>>()
            .join(","),
    ))
    .collect()
}

#[test]
fn no_route_reaches_another_persons_data() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    hosting_config(root, "");
    let alice_key = add_user(root, "alice");
    let bob_key = add_user(root, "bob");
    let (server, port) = start(root);
    let alice = client(port, &alice_key);
    let bob = client(port, &bob_key);
    seed(&alice, "laptop", "alice's own");
    seed(&bob, "desktop", "bob-zqprivate window");
    let reply = bob.post_json(
        "/api/0/settings/bobs_setting",
        &json!("bob-zqprivate value"),
    );
    assert_eq!(reply.status, 201);
    // Bob's app and a page he read, which he does not share.
    bobs_browsing(&bob);
    // Alice and Bob are in a group; he shares his categories only.
    share(&alice, &bob, "family", false);
    let reply = alice.post_json(
        "/api/0/tokens",
        &json!({"name": "alices-laptop", "scope": "write", "hosts": ["laptop"]}),
    );
    let alice_write = client(port, reply.json()["token"].as_str().unwrap());
    let admin = client(port, SERVER_KEY);
    let before = bobs_state(&bob);

    let document = alice.get("/api/0/openapi.json").json();
    let mut tried = 0;
    for (template, operations) in document["paths"].as_object().unwrap() {
        for method in operations.as_object().unwrap().keys() {
            let method = method.to_uppercase();
            if !["GET", "POST", "PUT", "DELETE"].contains(&method.as_str()) {
                continue;
            }
            let path = naming_bobs(template);
            let peoples = template.starts_with("/api/0/users") || template == "/api/0/nodes";
            let body = body_for(&method, template).map(|body| body.to_string().into_bytes());
            let headers: &[(&str, &str)] = &[("Content-Type", "application/json")];
            for (who, caller) in [("alice", &alice), ("alice's write token", &alice_write)] {
                let reply = caller.request(&method, &path, headers, body.as_deref());
                assert!(
                    reply.status < 500,
                    "{who} {method} {path}: {} {}",
                    reply.status,
                    reply.text()
                );
                assert!(
                    !reply.text().contains("zqprivate"),
                    "{who} {method} {path} shows Bob's data: {}",
                    reply.text()
                );
                if peoples {
                    assert_eq!(reply.status, 403, "{who} {method} {path}");
                }
            }
            // The server administrator: the people's routes, nothing else.
            let reply = admin.request(&method, &path, headers, body.as_deref());
            let public = [
                "/api/0/info",
                "/api/0/openapi.json",
                "/api/0/access",
                "/metrics",
            ]
            .contains(&template.as_str());
            if !peoples && !public {
                assert_eq!(
                    reply.status,
                    403,
                    "server key {method} {path}: {}",
                    reply.text()
                );
            }
            assert!(!reply.text().contains("zqprivate"), "{method} {path}");
            tried += 1;
        }
    }
    assert!(tried >= 54, "{tried} routes");
    assert_eq!(bobs_state(&bob), before, "Bob's data changed");
    assert_eq!(bob.get("/api/0/access").json()["name"], "bob-admin");
    drop(server);
}

#[test]
fn scheduled_snapshots_and_retention_reach_every_persons_file() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let backups = root.join("backups");
    hosting_config(root, "");
    let alice_key = add_user(root, "alice");
    let bob_key = add_user(root, "bob");
    // Their history first, with an event older than retention keeps.
    let (server, port) = start(root);
    let alice = client(port, &alice_key);
    let reply = alice.post_json(
        "/api/0/buckets/aw-watcher-window_laptop",
        &json!({"type": "currentwindow", "client": "test", "hostname": "laptop"}),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    let ago = |days: i64| (chrono::Utc::now() - chrono::Duration::days(days)).to_rfc3339();
    let reply = alice.post_json(
        "/api/0/buckets/aw-watcher-window_laptop/events",
        &json!([{"timestamp": ago(60), "duration": 60.0, "data": {"app": "Editor", "title": "old"}},
                {"timestamp": ago(1), "duration": 60.0, "data": {"app": "Editor", "title": "recent"}}]),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    seed(&client(port, &bob_key), "desktop", "bob's");
    drop(server);

    hosting_config(
        root,
        &format!(
            "\n[backup]\nenabled = true\ndir = {:?}\n\n[retention]\nkeep_days = 30\n",
            backups.to_str().unwrap()
        ),
    );
    let (_server, port) = start(root);
    let scheduled = |name: &str| {
        common::names_in(&backups.join("users").join(name))
            .into_iter()
            .filter(|file| file.starts_with("aw-server-2") && file.ends_with(".db"))
            .count()
    };
    wait_until("a scheduled snapshot of each person", || {
        scheduled("alice") == 1 && scheduled("bob") == 1
    });
    let alice = client(port, &alice_key);
    wait_until("alice's old event expired", || {
        titles(&alice, "aw-watcher-window_laptop") == ["recent"]
    });
    assert_eq!(
        titles(&client(port, &bob_key), "aw-watcher-window_desktop"),
        ["bob's"]
    );
}

#[test]
fn a_password_for_peoples_files_is_refused_at_the_start() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    hosting_config(root, "");
    let db = data_dir(root).join("sqlite.db");
    let output = binary(root)
        .args(["--port", "0", "--dbpath", db.to_str().unwrap()])
        .env("AW_DB_PASSWORD", "a password")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("not encrypted by this server yet"), "{said}");
    assert!(!data_dir(root).join("users").exists(), "nothing made");
}

/// Bob's app and the page he read, on the day `seed` uses: names no
/// route may show anyone else.
fn bobs_browsing(bob: &Client) {
    let at = "2026-12-01T10:00:10Z";
    for (id, kind, data) in [
        (
            "aw-watcher-window_desktop",
            "currentwindow",
            json!({"app": "zqprivate-app", "title": "a zqprivate title"}),
        ),
        (
            "aw-watcher-web-firefox_desktop",
            "web.tab.current",
            json!({"url": "https://zqprivate.example/page", "title": "zqprivate page"}),
        ),
        (
            "aw-watcher-afk_desktop",
            "afkstatus",
            json!({"status": "not-afk"}),
        ),
    ] {
        let reply = bob.post_json(
            &format!("/api/0/buckets/{id}"),
            &json!({"type": kind, "client": "test", "hostname": "desktop"}),
        );
        assert!(matches!(reply.status, 200 | 304), "{}", reply.text());
        let reply = bob.post_json(
            &format!("/api/0/buckets/{id}/events"),
            &json!([{"timestamp": at, "duration": 600.0, "data": data}]),
        );
        assert_eq!(reply.status, 200, "{}", reply.text());
    }
}

/// `owner` makes group `name` (sharing their apps) and invites `other`,
/// who joins, sharing apps or not.
fn share(owner: &Client, other: &Client, name: &str, other_shares_apps: bool) {
    let reply = owner.post_json("/api/0/groups", &json!({"name": name, "share_apps": true}));
    assert_eq!(reply.status, 201, "{}", reply.text());
    let other_name = other.get("/api/0/access").json()["name"]
        .as_str()
        .unwrap()
        .trim_end_matches("-admin")
        .to_string();
    let reply = owner.post_json(
        &format!("/api/0/groups/{name}/invitations"),
        &json!({"user": other_name}),
    );
    assert_eq!(reply.status, 201, "{}", reply.text());
    let reply = other.post_json(
        &format!("/api/0/groups/{name}/join"),
        &json!({"share_apps": other_shares_apps}),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
}

const DAY: &str = "start=2026-12-01&end=2026-12-02&tz=UTC";

#[test]
fn sharing_is_by_choice_and_shows_categories_only_unless_apps_are_shared() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    hosting_config(root, "");
    let keys: Vec<String> = ["alice", "bob", "carol"]
        .iter()
        .map(|name| add_user(root, name))
        .collect();
    let (_server, port) = start(root);
    let [alice, bob, carol] = [0, 1, 2].map(|n| client(port, &keys[n]));
    seed(&alice, "laptop", "alice's plan");
    bobs_browsing(&bob);

    // Alice makes a group and invites Bob: an invitation only.
    let reply = alice.post_json(
        "/api/0/groups",
        &json!({"name": "family", "share_apps": true}),
    );
    assert_eq!(reply.status, 201, "{}", reply.text());
    let reply = alice.post_json("/api/0/groups/family/invitations", &json!({"user": "bob"}));
    assert_eq!(reply.status, 201, "{}", reply.text());
    let bobs = bob.get("/api/0/groups").json();
    assert_eq!(bobs["groups"], json!([]));
    assert_eq!(bobs["invitations"][0]["group"], "family");
    assert_eq!(bobs["invitations"][0]["invited_by"], "alice");
    let totals = format!("/api/0/groups/family/totals?{DAY}");
    assert_eq!(bob.get(&totals).status, 404, "invited is not joined");
    let alices = alice.get(&totals).json();
    let names: Vec<&str> = alices["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|member| member["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["alice"], "nothing of Bob's before he joins");
    // Carol, never invited, sees nothing of it and cannot join.
    assert_eq!(carol.get(&totals).status, 404);
    assert_eq!(
        carol.get("/api/0/groups").json(),
        json!({"groups": [], "invitations": []})
    );
    assert_eq!(carol.post("/api/0/groups/family/join", b"").status, 404);
    assert_eq!(
        carol
            .post_json(
                "/api/0/groups/family/invitations",
                &json!({"user": "carol"})
            )
            .status,
        404
    );

    // Bob joins, sharing his categories only.
    let reply = bob.post("/api/0/groups/family/join", b"");
    assert_eq!(reply.status, 200, "{}", reply.text());
    let reply = alice.get(&totals);
    assert_eq!(reply.status, 200, "{}", reply.text());
    let text = reply.text();
    assert!(
        !text.contains("zqprivate"),
        "Bob's app, title or URL shown: {text}"
    );
    let shared = reply.json();
    let member = |name: &str| {
        shared["members"]
            .as_array()
            .unwrap()
            .iter()
            .find(|member| member["name"] == name)
            .unwrap()
            .clone()
    };
    let bob_shared = member("bob");
    assert_eq!(bob_shared["shares"], json!(["categories"]));
    assert!(bob_shared.get("apps").is_none());
    assert_eq!(bob_shared["days"][0]["date"], "2026-12-01");
    assert!(
        bob_shared["duration"].as_f64().unwrap() > 0.0,
        "{bob_shared}"
    );
    assert!(!bob_shared["days"][0]["categories"]
        .as_object()
        .unwrap()
        .is_empty());
    // Alice chose to share her apps: they are there.
    assert_eq!(member("alice")["apps"]["Editor"], 2.0);
    // Bob reads the same totals now that he is a member.
    assert_eq!(bob.get(&totals).status, 200);

    // Bad input: a clear 4xx, nothing changed.
    for (caller, method, path, body, status) in [
        (
            &alice,
            "POST",
            "/api/0/groups",
            json!({"name": "family"}),
            409,
        ),
        (
            &alice,
            "POST",
            "/api/0/groups",
            json!({"name": "Family!"}),
            400,
        ),
        (
            &alice,
            "POST",
            "/api/0/groups",
            json!({"name": "x", "share_titles": true}),
            422,
        ),
        (
            &alice,
            "POST",
            "/api/0/groups/family/invitations",
            json!({"user": "nobody"}),
            404,
        ),
        (
            &alice,
            "POST",
            "/api/0/groups/family/invitations",
            json!({"user": "bob"}),
            409,
        ),
        (
            &alice,
            "POST",
            "/api/0/groups/nogroup/invitations",
            json!({"user": "carol"}),
            404,
        ),
        (
            &alice,
            "POST",
            "/api/0/groups/family/join",
            json!({"share": "all"}),
            422,
        ),
    ] {
        let reply = caller.request(
            method,
            path,
            &[("Content-Type", "application/json")],
            Some(body.to_string().as_bytes()),
        );
        assert_eq!(
            reply.status,
            status,
            "{method} {path} {body}: {}",
            reply.text()
        );
        assert!(reply.json()["message"].is_string());
    }
    let reply = alice.get("/api/0/groups/family/totals?start=yesterday-ish");
    assert_eq!(reply.status, 400, "{}", reply.text());
    assert_eq!(alice.post("/api/0/groups/nogroup/leave", b"").status, 404);
    let reply = client(port, SERVER_KEY).get(&totals);
    assert_eq!(reply.status, 403, "the server administrator sees no group");

    // Bob leaves: from the next request on, nothing of his is shown.
    assert_eq!(bob.post("/api/0/groups/family/leave", b"").status, 200);
    let after = alice.get(&totals).json();
    let names: Vec<&str> = after["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|member| member["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["alice"]);
    assert_eq!(bob.get(&totals).status, 404);
}

#[test]
fn a_persons_report_through_the_server_is_theirs_alone() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    hosting_config(root, "");
    let alice_key = add_user(root, "alice");
    let bob_key = add_user(root, "bob");
    let (_server, port) = start(root);
    seed(&client(port, &alice_key), "laptop", "alice's plan");
    bobs_browsing(&client(port, &bob_key));
    let port = port.to_string();
    let report = |token: &str| {
        binary(root)
            .args([
                "report",
                "--start",
                "2026-12-01T00:00:00Z",
                "--end",
                "2026-12-02T00:00:00Z",
            ])
            .args([
                "--by",
                "app,title",
                "--format",
                "json",
                "--tz",
                "UTC",
                "--port",
                &port,
            ])
            .env("AW_SERVER_TOKEN", token)
            .output()
            .unwrap()
    };
    let alices = report(&alice_key);
    let text = String::from_utf8_lossy(&alices.stdout);
    assert!(
        alices.status.success(),
        "{}",
        String::from_utf8_lossy(&alices.stderr)
    );
    assert!(
        text.contains("Editor") && text.contains("alice's plan"),
        "{text}"
    );
    assert!(
        !text.contains("zqprivate"),
        "Bob's in Alice's report: {text}"
    );
    let bobs = report(&bob_key);
    let text = String::from_utf8_lossy(&bobs.stdout);
    assert!(
        text.contains("zqprivate-app") && !text.contains("alice"),
        "{text}"
    );
    // The server administrator's key reads nobody's report.
    let refused = report(SERVER_KEY);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("403")
            || String::from_utf8_lossy(&refused.stderr).contains("person's own token"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}
