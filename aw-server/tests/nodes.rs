//! Several nodes for a hub (`docs/API.md` §3.18), on the binary: a
//! person's tokens name them, a node answers 421 to a person it does not
//! hold and 503 with `Retry-After` to one frozen for a move; a frozen
//! file is downloaded whole and received by another node; `aw-server
//! user move` moves a person between two running nodes, rewriting the
//! map file, and refuses a move to a node that is down or holds the
//! person already, or of a person the old node does not hold, changing
//! nothing; `GET /api/0/nodes` lists every node's people, a node that
//! is down as down. (HAProxy in front of three nodes with thirty people's
//! devices: `scripts/test-nodes`.)

mod common;

use std::path::Path;

use common::hosting::*;
use common::{free_port, run, Client, Reply, Stopped};
use serde_json::json;

/// A node: a hosting server under `root`, and its administrator.
fn node(root: &Path) -> (Stopped, u16, Client) {
    hosting_config(root, "");
    let (server, port) = start(root);
    (server, port, client(port, SERVER_KEY))
}

/// Adds `name` through the API; their first token.
fn add(admin: &Client, name: &str) -> String {
    let reply = admin.post_json("/api/0/users", &json!({ "name": name }));
    assert_eq!(reply.status, 201, "{}", reply.text());
    reply.json()["token"].as_str().unwrap().to_string()
}

fn put_file(admin: &Client, name: &str, body: &[u8]) -> Reply {
    admin.request(
        "PUT",
        &format!("/api/0/users/{name}/file"),
        &[("Content-Type", "application/vnd.sqlite3")],
        Some(body),
    )
}

fn people(admin: &Client) -> Vec<String> {
    admin
        .list("/api/0/users")
        .iter()
        .map(|user| user["name"].as_str().unwrap().to_string())
        .collect()
}

/// The value of an unlabelled sample in a node's `/metrics`.
fn gauge(admin: &Client, name: &str) -> f64 {
    let reply = admin.get("/metrics");
    assert_eq!(reply.status, 200, "{}", reply.text());
    let text = reply.text();
    text.lines()
        .find_map(|line| line.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no {name} in {text}"))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn a_node_refuses_people_it_does_not_hold_with_421_and_one_being_moved_with_503() {
    let temp = tempfile::tempdir().unwrap();
    let (one_root, two_root) = (temp.path().join("one"), temp.path().join("two"));
    let (_one, one_port, one) = node(&one_root);
    let (_two, two_port, two) = node(&two_root);
    let token = add(&one, "alice");
    let hex = token
        .strip_prefix("awt_alice.")
        .expect("the token names her");
    assert!(hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()));
    let alice_one = client(one_port, &token);
    seed(&alice_one, "laptop", "alice's day");
    let made = alice_one.post_json(
        "/api/0/tokens",
        &json!({"name": "phone", "scope": "write", "hosts": ["phone"]}),
    );
    assert_eq!(made.status, 201, "{}", made.text());
    assert!(made.json()["token"]
        .as_str()
        .unwrap()
        .starts_with("awt_alice."));

    // Her token on a node that does not hold her: 421, retry, logged.
    let alice_two = client(two_port, &token);
    let refused = alice_two.get("/api/0/buckets/");
    assert!(refused.assert_error(421).contains("does not hold"));
    assert_eq!(refused.header("Retry-After"), Some("2"));
    assert_eq!(
        client(two_port, &format!("awt_bob.{hex}"))
            .get("/api/0/buckets/")
            .status,
        421
    );
    // A token naming nobody (or no valid name) is simply unknown.
    for unknown in [
        format!("awt_{hex}"),
        format!("awt_Bob.{hex}"),
        "x".repeat(20),
    ] {
        let reply = client(two_port, &unknown).get("/api/0/buckets/");
        assert_eq!(reply.status, 401, "{unknown}: {}", reply.text());
    }

    // Bad input changes nothing.
    assert!(one
        .get("/api/0/users/alice/file")
        .assert_error(409)
        .contains("not frozen"));
    one.post("/api/0/users/nobody/freeze", b"")
        .assert_error(404);
    one.post("/api/0/users/nobody/thaw", b"").assert_error(404);
    one.get("/api/0/users/nobody/file").assert_error(404);
    put_file(&two, "alice", b"this is no database").assert_error(400);
    put_file(&two, "../evil", b"x").assert_error(400);
    put_file(&two, "Alice", b"x").assert_error(400);
    assert!(people(&two).is_empty());
    assert_eq!(
        titles(&alice_one, "aw-watcher-window_laptop"),
        ["alice's day"]
    );
    let leftovers: Vec<_> = std::fs::read_dir(data_dir(&two_root).join("users"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .filter(|name| name.to_string_lossy().starts_with(".incoming"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // Alice's own token manages no people.
    assert_eq!(alice_one.post("/api/0/users/alice/freeze", b"").status, 403);

    // Frozen: her requests wait; her file comes whole.
    let frozen = one.post("/api/0/users/alice/freeze", b"");
    assert_eq!(frozen.status, 200, "{}", frozen.text());
    let bytes = frozen.json()["bytes"].as_u64().unwrap();
    let waiting = alice_one.get("/api/0/buckets/");
    assert!(waiting.assert_error(503).contains("being moved"));
    assert_eq!(waiting.header("Retry-After"), Some("5"));
    assert_eq!(gauge(&one, "aw_server_users_moving"), 1.0);
    let file = one.get("/api/0/users/alice/file");
    assert_eq!(file.status, 200);
    assert_eq!(file.header("Content-Type"), Some("application/vnd.sqlite3"));
    assert_eq!(file.body.len() as u64, bytes);
    assert!(file.body.starts_with(b"SQLite format 3\0"));

    // Received by the other node, once: there her tokens are hers.
    let received = put_file(&two, "alice", &file.body);
    assert_eq!(received.status, 201, "{}", received.text());
    assert_eq!(received.json()["bytes"].as_u64(), Some(bytes));
    assert!(put_file(&two, "alice", &file.body)
        .assert_error(409)
        .contains("already"));
    assert_eq!(people(&two), ["alice"]);
    assert_eq!(
        titles(&alice_two, "aw-watcher-window_laptop"),
        ["alice's day"]
    );
    let made = alice_two.post_json("/api/0/tokens", &json!({"name": "tablet", "scope": "read"}));
    assert_eq!(made.status, 201, "{}", made.text());
    assert!(made.json()["token"]
        .as_str()
        .unwrap()
        .starts_with("awt_alice."));

    // A move given up: the first node serves her again.
    assert_eq!(one.post("/api/0/users/alice/thaw", b"").status, 200);
    assert_eq!(
        titles(&alice_one, "aw-watcher-window_laptop"),
        ["alice's day"]
    );
    assert_eq!(gauge(&one, "aw_server_users_moving"), 0.0);
    one.get("/api/0/users/alice/file").assert_error(409);
}

/// `user move NAME` with `args`, under `root` (its config has the key).
fn user_move(root: &Path, name: &str, args: &[&str]) -> (bool, String) {
    let mut all = vec!["user", "move", name];
    all.extend_from_slice(args);
    let output = run(root, &all);
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn user_move_moves_a_person_between_running_nodes_and_refuses_what_cannot_be_done() {
    let temp = tempfile::tempdir().unwrap();
    let (one_root, two_root) = (temp.path().join("one"), temp.path().join("two"));
    let (_one, one_port, one) = node(&one_root);
    let (_two, two_port, two) = node(&two_root);
    let (one_url, two_url) = (
        format!("http://127.0.0.1:{one_port}"),
        format!("http://127.0.0.1:{two_port}"),
    );
    let alice = add(&one, "alice");
    seed(&client(one_port, &alice), "laptop", "alice's day");
    let carol_one = add(&one, "carol");
    add(&two, "carol");
    let map = temp.path().join("people.map");
    std::fs::write(&map, "# person node\nalice one\ncarol one\n").unwrap();
    let map_arg = map.to_str().unwrap();

    let refusals = [
        (
            "alice",
            format!("http://127.0.0.1:{}", free_port()),
            "did not answer",
        ),
        ("carol", two_url.clone(), "holds 'carol' already"),
        ("nobody", two_url.clone(), "does not hold 'nobody'"),
    ];
    for (name, to, says) in &refusals {
        let (ok, said) = user_move(
            &one_root,
            name,
            &[
                "--from",
                &one_url,
                "--to",
                to,
                "--map-file",
                map_arg,
                "--to-backend",
                "two",
            ],
        );
        assert!(!ok && said.contains(says), "{name} to {to}: {said}");
        assert!(said.contains("nothing was changed"), "{said}");
    }
    assert_eq!(
        std::fs::read_to_string(&map).unwrap(),
        "# person node\nalice one\ncarol one\n"
    );
    assert_eq!(people(&one), ["alice", "carol"]);
    assert_eq!(people(&two), ["carol"]);
    assert_eq!(gauge(&one, "aw_server_users_moving"), 0.0);
    assert_eq!(
        titles(&client(one_port, &alice), "aw-watcher-window_laptop"),
        ["alice's day"]
    );
    assert_eq!(
        client(one_port, &carol_one).get("/api/0/buckets/").status,
        200
    );

    // The move: her data served by the second node, the map rewritten,
    // the first node's copy put aside and her token refused there as
    // misdirected. The key comes from the config file.
    let (ok, said) = user_move(
        &one_root,
        "alice",
        &[
            "--from",
            &one_url,
            "--to",
            &two_url,
            "--map-file",
            map_arg,
            "--to-backend",
            "two",
        ],
    );
    assert!(ok, "{said}");
    assert!(said.contains("Moved alice"), "{said}");
    assert!(said.contains("answered 503 for"), "{said}");
    assert_eq!(
        std::fs::read_to_string(&map).unwrap(),
        "# person node\nalice two\ncarol one\n"
    );
    assert_eq!(people(&one), ["carol"]);
    assert_eq!(people(&two), ["alice", "carol"]);
    assert_eq!(
        titles(&client(two_port, &alice), "aw-watcher-window_laptop"),
        ["alice's day"]
    );
    assert_eq!(client(one_port, &alice).get("/api/0/buckets/").status, 421);
    let removed = data_dir(&one_root).join("users/removed");
    assert!(
        std::fs::read_dir(&removed).unwrap().count() == 1,
        "her old copy is put aside in {}",
        removed.display()
    );

    // Moved already: refused, nothing changed.
    let (ok, said) = user_move(
        &one_root,
        "alice",
        &["--from", &one_url, "--to", &two_url, "--key", SERVER_KEY],
    );
    assert!(!ok && said.contains("does not hold 'alice'"), "{said}");
    assert_eq!(
        titles(&client(two_port, &alice), "aw-watcher-window_laptop"),
        ["alice's day"]
    );
    // A wrong key: refused by the node, nothing changed.
    let (ok, said) = user_move(
        &one_root,
        "alice",
        &["--from", &two_url, "--to", &one_url, "--key", "wrong"],
    );
    assert!(!ok && said.contains("401"), "{said}");
    assert_eq!(people(&two), ["alice", "carol"]);
}

#[test]
fn every_nodes_people_are_listed_for_the_administrator_and_a_node_down_as_down() {
    let temp = tempfile::tempdir().unwrap();
    let (one_root, two_root) = (temp.path().join("one"), temp.path().join("two"));
    let (_two, two_port, two) = node(&two_root);
    add(&two, "bob");
    let down = format!("http://127.0.0.1:{}", free_port());
    hosting_config(
        &one_root,
        &format!("nodes = [\"http://127.0.0.1:{two_port}/\", \"{down}\"]\n"),
    );
    let (_one, one_port, one) = {
        let (server, port) = start(&one_root);
        (server, port, client(port, SERVER_KEY))
    };
    let alice = add(&one, "alice");
    seed(&client(one_port, &alice), "laptop", "alice's day");

    let reply = one.get("/api/0/nodes");
    assert_eq!(reply.status, 200, "{}", reply.text());
    let nodes = reply.json();
    let nodes = nodes.as_array().unwrap();
    assert_eq!(nodes.len(), 3);
    assert_eq!(nodes[0]["url"], json!(null));
    assert_eq!(nodes[0]["up"], true);
    assert_eq!(nodes[0]["people"][0]["name"], "alice");
    assert_eq!(nodes[0]["people"][0]["hosts"], json!(["laptop"]));
    assert_eq!(nodes[0]["people"][0]["moving"], false);
    assert_eq!(
        nodes[0]["bytes"], nodes[0]["people"][0]["bytes"],
        "a node's total is its people's"
    );
    assert_eq!(nodes[1]["url"], format!("http://127.0.0.1:{two_port}"));
    assert_eq!(nodes[1]["up"], true);
    assert_eq!(nodes[1]["people"][0]["name"], "bob");
    assert_eq!(nodes[2]["url"], down);
    assert_eq!(nodes[2]["up"], false);
    assert!(nodes[2]["error"]
        .as_str()
        .unwrap()
        .contains("did not answer"));
    assert_eq!(nodes[2]["people"], json!([]));

    // A person's token sees no one's; a server of one person has no nodes.
    assert_eq!(client(one_port, &alice).get("/api/0/nodes").status, 403);
    let single = common::TestServer::start();
    assert_eq!(single.client().get("/api/0/nodes").status, 404);

    // A node's address that is none: the server does not start.
    let bad = temp.path().join("bad");
    hosting_config(&bad, "nodes = [\"node2:5600\"]\n");
    let output = run(&bad, &["--port", "0"]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("is no node's address"));
}
