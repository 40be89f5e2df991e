//! Alerts (`docs/API.md` §3.16) against real receivers: the test's own
//! HTTP servers stand in for a webhook and an ntfy server, checking what
//! arrives (body, signature, headers). A limit crossed by today's data is
//! told once per channel within a check interval, with the numbers and no
//! window title; a failing webhook is retried until it takes the message,
//! once, while heartbeats go on; a restart does not tell a threshold
//! again; bad settings are refused or named; a hub counts its devices
//! together. E-mail and digests over SMTP: `scripts/test-alerts`.

mod common;

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aw_alerts::{AlertSettings, Channels, HostScope, Webhook};
use aw_datastore::Datastore;
use common::{event, Client, TestServer};
use serde_json::{json, Value};

const SECRET: &str = "a shared secret";
const PRIVATE_TITLE: &str = "Twitter: my private thought - Mozilla Firefox";

/// What a receiver does with a request.
#[derive(Debug, Clone, Copy)]
enum Answer {
    Status(u16),
    /// Closes the connection without a word.
    Hang,
}

/// A request as a receiver got it.
#[derive(Debug, Clone)]
struct Got {
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    /// What it was answered.
    answered: Option<u16>,
}

impl Got {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// An HTTP server on loopback that records every request and answers
/// from a script (200 when the script is done).
struct Receiver {
    port: u16,
    got: Arc<Mutex<Vec<Got>>>,
}

impl Receiver {
    fn start(script: &[Answer]) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let got = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(script.iter().copied().collect::<VecDeque<_>>()));
        let seen = Arc::clone(&got);
        let answers = script;
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    continue;
                }
                let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
                let mut headers = Vec::new();
                loop {
                    let mut line = String::new();
                    reader.read_line(&mut line).unwrap();
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    let (key, value) = line.split_once(':').unwrap();
                    headers.push((key.trim().to_string(), value.trim().to_string()));
                }
                let length: usize = headers
                    .iter()
                    .find(|(key, _)| key.eq_ignore_ascii_case("content-length"))
                    .map(|(_, value)| value.parse().unwrap())
                    .unwrap_or(0);
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                let answer = answers
                    .lock()
                    .unwrap()
                    .pop_front()
                    .unwrap_or(Answer::Status(200));
                let answered = match answer {
                    Answer::Status(status) => {
                        let _ = write!(
                            stream,
                            "HTTP/1.1 {status} X\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
                        );
                        Some(status)
                    }
                    Answer::Hang => None,
                };
                seen.lock().unwrap().push(Got {
                    path,
                    headers,
                    body,
                    answered,
                });
            }
        });
        Receiver { port, got }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn got(&self) -> Vec<Got> {
        self.got.lock().unwrap().clone()
    }

    /// The requests answered 2xx.
    fn delivered(&self) -> Vec<Got> {
        self.got()
            .into_iter()
            .filter(|got| got.answered.is_some_and(|status| status < 300))
            .collect()
    }

    /// Waits (generously) until `count` requests were delivered.
    fn wait_for(&self, count: usize) -> Vec<Got> {
        self.wait_or_describe(count, String::new)
    }

    /// `wait_for`, and on giving up says what `describe` finds (the
    /// servers' own view of why nothing came).
    fn wait_or_describe(&self, count: usize, describe: impl Fn() -> String) -> Vec<Got> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let delivered = self.delivered();
            if delivered.len() >= count {
                return delivered;
            }
            if Instant::now() >= deadline {
                panic!(
                    "waited for {count} deliveries; got {:?}\n{}",
                    self.got(),
                    describe()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Alerts to a webhook (signed) and an ntfy topic, checked every second.
fn settings(hook: &Receiver, ntfy: &Receiver, hosts: Option<HostScope>) -> AlertSettings {
    AlertSettings {
        channels: Channels {
            webhook: Some(Webhook {
                url: hook.url("/hook"),
                secret: Some(SECRET.to_string()),
            }),
            ntfy: Some(ntfy.url("/my-topic")),
            email: None,
        },
        check_interval: Duration::from_secs(1),
        tz: Some("UTC".to_string()),
        hosts,
        first_retry: Duration::from_millis(200),
        ..AlertSettings::default()
    }
}

fn server_on(db: &std::path::Path, alerts: AlertSettings) -> TestServer {
    TestServer::start_on(
        None,
        Datastore::open(db).unwrap(),
        move |config| {
            config.hostname = "laptop".to_string();
            config.alerts = Some(alerts);
        },
        |rocket| rocket,
    )
}

fn save(client: &Client, key: &str, value: &Value) {
    let reply = client.post_json(&format!("/api/0/settings/{key}"), value);
    assert_eq!(reply.status, 201, "{key}: {}", reply.text());
}

/// The categories (Twitter is Media > Social Media) and a day that began
/// about twelve hours ago, so the last hours are all today's.
fn categories_and_day(client: &Client) {
    save(
        client,
        "classes",
        &json!([
            {"name": ["Media", "Social Media"], "rule": {"type": "regex", "regex": "Twitter"}},
            {"name": ["Work"], "rule": {"type": "regex", "regex": "Code"}}
        ]),
    );
    let hour = (chrono_hour() + 12) % 24;
    save(client, "startOfDay", &json!(format!("{hour:02}:00")));
}

fn chrono_hour() -> u64 {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    seconds / 3600 % 24
}

/// `minutes` of Twitter on `host`, ending a minute ago.
fn seed(client: &Client, host: &str, minutes: f64, ago_minutes: f64) {
    let window = format!("aw-watcher-window_{host}");
    let afk = format!("aw-watcher-afk_{host}");
    for (id, kind) in [(&window, "currentwindow"), (&afk, "afkstatus")] {
        let reply = client.post_json(
            &format!("/api/0/buckets/{id}"),
            &json!({"type": kind, "client": "test", "hostname": host}),
        );
        assert!(matches!(reply.status, 200 | 304), "{}", reply.text());
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let start = now - (ago_minutes + minutes) * 60.0;
    let stamp = aw_models::Timestamp::from_nanos((start * 1e9) as i64).to_rfc3339_offset();
    let insert = |id: &str, data: Value| {
        let reply = client.post_json(
            &format!("/api/0/buckets/{id}/events"),
            &json!([event(&stamp, minutes * 60.0, data)]),
        );
        assert_eq!(reply.status, 200, "{}", reply.text());
    };
    insert(&window, json!({"app": "Firefox", "title": PRIVATE_TITLE}));
    insert(&afk, json!({"status": "not-afk"}));
}

fn limit(thresholds: &[u64]) -> Value {
    json!({"alerts": [{"category": "Media > Social Media", "label": "Social media",
                       "thresholds_minutes": thresholds, "positive": false}]})
}

fn signature(body: &[u8]) -> String {
    aw_alerts::channels::signature(SECRET, body)
}

#[test]
fn a_limit_crossed_today_is_told_once_to_each_channel_with_the_numbers_and_no_title() {
    let (hook, ntfy) = (Receiver::start(&[]), Receiver::start(&[]));
    let folder = tempfile::tempdir().unwrap();
    let server = server_on(&folder.path().join("a.db"), settings(&hook, &ntfy, None));
    let client = server.client();
    categories_and_day(&client);
    seed(&client, "laptop", 50.0, 21.0);
    save(&client, "aw-notify", &limit(&[60, 120]));
    // Under the limit: the checks say so and tell nothing.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status = client.get("/api/0/alerts/status").json();
        if status["goals"][0]["minutes"].as_f64() == Some(50.0) {
            assert_eq!(status["goals"][0]["fired"], json!([]), "{status}");
            break;
        }
        assert!(Instant::now() < deadline, "{status}");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(hook.got().is_empty() && ntfy.got().is_empty());

    // 20 more minutes arrive: 70 of a 60-minute limit.
    seed(&client, "laptop", 20.0, 0.0);
    let hooked = hook.wait_for(1);
    let body = hooked[0].json();
    assert_eq!(hooked[0].path, "/hook");
    assert_eq!(
        hooked[0].header("X-AW-Signature-256"),
        Some(signature(&hooked[0].body).as_str()),
        "signed with the secret"
    );
    assert_eq!(hooked[0].header("Content-Type"), Some("application/json"));
    assert_eq!(body["kind"], "limit", "{body}");
    assert_eq!(body["title"], "Time spent: Social media");
    assert_eq!(body["text"], "Social media: 1h  (1h 10m today)");
    assert_eq!(body["details"]["category"], "Media > Social Media");
    assert_eq!(body["details"]["threshold_minutes"], 60);
    assert_eq!(body["details"]["minutes"], 70.0);
    assert_eq!(body["details"]["hosts"], json!(["laptop"]));
    let told = ntfy.wait_for(1);
    assert_eq!(told[0].path, "/my-topic");
    assert_eq!(told[0].header("Title"), Some("Time spent: Social media"));
    assert_eq!(told[0].header("Tags"), Some("warning"));
    assert_eq!(told[0].text(), "Social media: 1h  (1h 10m today)");
    for got in hook.got().iter().chain(&ntfy.got()) {
        let text = got.text();
        assert!(
            !text.contains("private thought") && !text.contains("Firefox"),
            "{text}"
        );
    }

    // Several checks later: still once each; the status says what went.
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(hook.got().len(), 1);
    assert_eq!(ntfy.got().len(), 1);
    let status = client.get("/api/0/alerts/status").json();
    assert_eq!(status["enabled"], true);
    assert_eq!(status["scope"], "own");
    assert_eq!(status["goals"][0]["fired"], json!([60]), "{status}");
    assert_eq!(status["goals"][0]["known_category"], true);
    let sent: Vec<&str> = status["sent"]
        .as_array()
        .unwrap()
        .iter()
        .map(|sent| sent["channel"].as_str().unwrap())
        .collect();
    assert_eq!(sent.len(), 2, "{status}");
    assert!(
        sent.contains(&"webhook") && sent.contains(&"ntfy"),
        "{status}"
    );
    assert_eq!(status["pending"], json!([]));
    assert_eq!(status["problems"], json!([]));
}

#[test]
fn a_webhook_that_fails_then_hangs_then_answers_gets_the_message_once_while_heartbeats_go_on() {
    let hook = Receiver::start(&[Answer::Status(500), Answer::Hang, Answer::Status(200)]);
    let ntfy = Receiver::start(&[]);
    let folder = tempfile::tempdir().unwrap();
    let server = server_on(&folder.path().join("b.db"), settings(&hook, &ntfy, None));
    let client = server.client();
    categories_and_day(&client);
    seed(&client, "laptop", 61.0, 1.0);
    save(&client, "aw-notify", &limit(&[60]));
    // Heartbeats all along: each answered at once.
    let started = Instant::now();
    let mut beats = 0;
    while hook.delivered().is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{:?}",
            hook.got()
        );
        let reply = client.post_json(
            "/api/0/buckets/aw-watcher-window_laptop/heartbeat?pulsetime=2",
            &json!({"timestamp": aw_models::Timestamp::now().to_rfc3339_offset(), "duration": 0,
                    "data": {"app": "Code", "title": "main.rs"}}),
        );
        assert_eq!(reply.status, 200, "{}", reply.text());
        beats += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(beats > 5, "{beats}");
    let got = hook.got();
    assert_eq!(
        got.iter().map(|got| got.answered).collect::<Vec<_>>(),
        [Some(500), None, Some(200)],
        "tried three times"
    );
    let ids: Vec<String> = got.iter().map(|got| got.json()["id"].to_string()).collect();
    assert!(
        ids.windows(2).all(|pair| pair[0] == pair[1]),
        "one message: {ids:?}"
    );
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(hook.got().len(), 3, "delivered once, not again");
    let status = client.get("/api/0/alerts/status").json();
    let failures = status["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 2, "{status}");
    assert!(
        failures[1]["error"]
            .as_str()
            .unwrap()
            .contains("answered 500"),
        "{status}"
    );
    let webhook_sent = status["sent"]
        .as_array()
        .unwrap()
        .iter()
        .find(|sent| sent["channel"] == "webhook")
        .unwrap()
        .clone();
    assert_eq!(webhook_sent["attempts"], 3, "{status}");
    assert_eq!(ntfy.got().len(), 1, "the other channel was not held up");
}

#[test]
fn a_threshold_told_before_a_restart_is_not_told_again_that_day() {
    let (hook, ntfy) = (Receiver::start(&[]), Receiver::start(&[]));
    let folder = tempfile::tempdir().unwrap();
    let db = folder.path().join("c.db");
    let server = server_on(&db, settings(&hook, &ntfy, None));
    let client = server.client();
    categories_and_day(&client);
    seed(&client, "laptop", 65.0, 61.0);
    save(&client, "aw-notify", &limit(&[60, 120]));
    hook.wait_for(1);
    ntfy.wait_for(1);
    drop(server);

    let server = server_on(&db, settings(&hook, &ntfy, None));
    let client = server.client();
    let deadline = Instant::now() + Duration::from_secs(30);
    while client.get("/api/0/alerts/status").json()["last_check"].is_null() {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(hook.got().len(), 1, "not told again after the restart");
    assert_eq!(ntfy.got().len(), 1);
    // The next threshold still is.
    seed(&client, "laptop", 60.0, 0.0);
    let told = hook.wait_for(2);
    assert_eq!(told[1].json()["details"]["threshold_minutes"], 120);
}

#[test]
fn bad_goal_settings_are_refused_or_named_on_the_status() {
    let (hook, ntfy) = (Receiver::start(&[]), Receiver::start(&[]));
    let folder = tempfile::tempdir().unwrap();
    let server = server_on(&folder.path().join("d.db"), settings(&hook, &ntfy, None));
    let client = server.client();
    let good = limit(&[60]);
    save(&client, "aw-notify", &good);
    for bad in [
        json!([1, 2]),
        json!({"alerts": {"category": "Work"}}),
        json!({"alerts": [{"category": "Work", "thresholds_minutes": [0], "positive": true}]}),
        json!({"alerts": [{"category": "Work", "thresholds_minutes": [1.5], "positive": true}]}),
        json!({"alerts": [{"category": "Work", "thresholds_minutes": [-10], "positive": true}]}),
        json!({"alerts": [{"category": "Work", "thresholds_minutes": [], "positive": true}]}),
        json!({"alerts": [{"category": null, "thresholds_minutes": [5], "positive": true}]}),
        json!({"alerts": [], "hourly_checkins": "yes"}),
    ] {
        let reply = client.post_json("/api/0/settings/aw-notify", &bad);
        let message = reply.assert_error(400);
        assert!(
            message.starts_with("Invalid aw-notify setting: "),
            "{message}"
        );
    }
    assert_eq!(
        client.get("/api/0/settings/aw-notify").json(),
        good,
        "unchanged"
    );

    // An unknown category: named, not fatal.
    save(
        &client,
        "aw-notify",
        &json!({"alerts": [
            {"category": "Gamez", "label": "Games", "thresholds_minutes": [30], "positive": false},
            {"category": "All", "thresholds_minutes": [600], "positive": true}
        ]}),
    );
    let status = wait_status(&client, |status| {
        status["goals"].as_array().is_some_and(|g| g.len() == 2)
    });
    assert_eq!(status["goals"][0]["known_category"], false);
    assert_eq!(status["goals"][1]["known_category"], true);
    let problems = status["problems"].to_string();
    assert!(
        problems.contains("no category is named 'Gamez'"),
        "{problems}"
    );

    // A value stored some other way (an import, an older server): ignored,
    // with the reason.
    server
        .datastore
        .set_setting("aw-notify", json!({"alerts": "all of them"}))
        .unwrap();
    let status = wait_status(&client, |status| {
        status["problems"].to_string().contains("ignored")
    });
    assert_eq!(status["goals"], json!([]));
    assert!(
        status["problems"][0]
            .as_str()
            .unwrap()
            .contains("the aw-notify setting is ignored: alerts must be a list"),
        "{status}"
    );
}

fn wait_status(client: &Client, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status = client.get("/api/0/alerts/status").json();
        if done(&status) {
            return status;
        }
        assert!(Instant::now() < deadline, "{status}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_test_message_reaches_every_channel_and_needs_alerts_on() {
    let (hook, ntfy) = (
        Receiver::start(&[]),
        Receiver::start(&[Answer::Status(503)]),
    );
    let folder = tempfile::tempdir().unwrap();
    let server = server_on(&folder.path().join("e.db"), settings(&hook, &ntfy, None));
    let client = server.client();
    let reply = client.post("/api/0/alerts/test", b"");
    assert_eq!(reply.status, 200, "{}", reply.text());
    let answer = reply.json();
    assert_eq!(
        answer["channels"][0],
        json!({"channel": "webhook", "delivered": true})
    );
    assert_eq!(answer["channels"][1]["channel"], "ntfy");
    assert_eq!(answer["channels"][1]["delivered"], false);
    assert!(
        answer["channels"][1]["error"]
            .as_str()
            .unwrap()
            .contains("503"),
        "{answer}"
    );
    assert_eq!(hook.delivered()[0].json()["kind"], "test");
    // The refused one is retried and arrives.
    let told = ntfy.wait_for(1);
    assert_eq!(told[0].header("Title"), Some("aw-server: a test message"));

    // Flags that are not true or false: 400, nothing sent.
    for query in ["week=null", "send=perhaps"] {
        let message = client
            .post(&format!("/api/0/alerts/digest?{query}"), b"")
            .assert_error(400);
        assert!(message.contains("expected true or false"), "{message}");
    }
    assert_eq!(hook.delivered().len(), 1);

    // A server without [alerts]: a clear 409, and the status says off.
    let off = TestServer::start();
    let client = off.client();
    let message = client.post("/api/0/alerts/test", b"").assert_error(409);
    assert!(message.contains("alerts are off"), "{message}");
    assert_eq!(client.get("/api/0/alerts/status").json()["enabled"], false);
}

#[test]
fn yesterdays_digest_goes_to_the_webhook_with_categories_and_goals() {
    let (hook, ntfy) = (Receiver::start(&[]), Receiver::start(&[]));
    let folder = tempfile::tempdir().unwrap();
    let server = server_on(&folder.path().join("f.db"), settings(&hook, &ntfy, None));
    let client = server.client();
    save(
        &client,
        "classes",
        &json!([{"name": ["Media", "Social Media"], "rule": {"type": "regex", "regex": "Twitter"}}]),
    );
    save(&client, "startOfDay", &json!("00:00"));
    save(&client, "aw-notify", &limit(&[60]));
    // 90 minutes of Twitter yesterday at noon UTC.
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let noon_yesterday = (seconds / 86_400 - 1) * 86_400 + 12 * 3600;
    let minutes_ago = (seconds - noon_yesterday) as f64 / 60.0 - 90.0;
    seed(&client, "laptop", 90.0, minutes_ago);
    let reply = client.post("/api/0/alerts/digest", b"");
    assert_eq!(reply.status, 200, "{}", reply.text());
    let answer = reply.json();
    assert_eq!(
        answer["channels"],
        json!([{"channel": "webhook", "delivered": true}]),
        "not to ntfy"
    );
    let body = hook.delivered()[0].json();
    assert_eq!(body["kind"], "digest");
    assert!(
        body["title"].as_str().unwrap().ends_with("1h 30m active"),
        "{body}"
    );
    let text = body["text"].as_str().unwrap();
    assert!(text.contains("Media > Social Media"), "{text}");
    assert!(text.contains("1:30:00"), "{text}");
    assert!(
        text.contains("Social media: not kept (under 1h, 1h 30m)"),
        "{text}"
    );
    assert!(!text.contains("private thought"), "{text}");
    assert_eq!(body["details"]["goals"][0]["met"], 0);
    assert_eq!(body["details"]["summary"]["duration"], 5400.0);
}

#[test]
fn a_limit_passed_only_by_two_devices_together_is_told_by_their_hub() {
    let (hook, ntfy) = (Receiver::start(&[]), Receiver::start(&[]));
    let folder = tempfile::tempdir().unwrap();
    let alerts = settings(&hook, &ntfy, None);
    let hub = TestServer::start_on(
        None,
        Datastore::open(folder.path().join("hub.db")).unwrap(),
        move |config| {
            config.hostname = "hub".to_string();
            config.api_key = Some("the-hub-key".to_string());
            config.alerts = Some(alerts);
        },
        |rocket| rocket,
    );
    let admin = hub
        .client()
        .with_header("Authorization", "Bearer the-hub-key");
    categories_and_day(&admin);
    save(&admin, "aw-notify", &limit(&[60]));
    let device = |name: &str| {
        let (hub_port, name) = (hub.port, name.to_string());
        TestServer::start_on(
            None,
            Datastore::open(folder.path().join(format!("{name}.db"))).unwrap(),
            move |config| {
                // Each device its own id, as real ones have: with the
                // harness's one id each pass would take the other's
                // buckets on the hub for its own leftovers and forget them.
                config.device_id = format!("{name}-id");
                config.hostname = name;
                config.hub = Some(aw_jobs::hub::HubSettings {
                    url: format!("http://127.0.0.1:{hub_port}"),
                    token: "the-hub-key".to_string(),
                    ca_file: None,
                    interval: Duration::from_secs(1),
                    buckets: None,
                });
            },
            |rocket| rocket,
        )
    };
    let (laptop, desktop) = (device("laptop"), device("desktop"));
    // 35 minutes each: under the limit on either device, over it together.
    seed(&laptop.client(), "laptop", 35.0, 40.0);
    seed(&desktop.client(), "desktop", 35.0, 1.0);
    let told = hook.wait_or_describe(1, || {
        let now = aw_models::Timestamp::now().nanos();
        let stamp = |nanos: i64| aw_models::Timestamp::from_nanos(nanos).to_rfc3339_offset();
        let summary = |params: &str| {
            let (start, end) = (stamp(now - 3 * 3_600_000_000_000), stamp(now));
            let path = format!("/api/0/summary?start={start}&end={end}&{params}");
            admin.get(&path.replace('+', "%2B")).text()
        };
        format!(
            "hub alerts: {}\nhub buckets: {}\nhub today: {}\nlaptop forwarding: {}\n\
             desktop forwarding: {}",
            admin.get("/api/0/alerts/status").text(),
            admin.get("/api/0/buckets/").text(),
            summary("by=category"),
            laptop.client().get("/api/0/sync/status").text(),
            desktop.client().get("/api/0/sync/status").text(),
        )
    });
    let body = told[0].json();
    assert_eq!(body["details"]["minutes"], 70.0, "{body}");
    let mut hosts: Vec<String> = serde_json::from_value(body["details"]["hosts"].clone()).unwrap();
    hosts.sort();
    assert_eq!(hosts, ["desktop", "laptop"]);
    assert!(
        body["text"]
            .as_str()
            .unwrap()
            .starts_with("Social media: 1h  (1h 10m today, across "),
        "{body}"
    );
    let status = admin.get("/api/0/alerts/status").json();
    assert_eq!(status["scope"], "all", "a hub counts all of its devices");
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(hook.got().len(), 1, "once");
}

#[test]
fn a_weekly_goal_is_told_as_reached_and_titles_only_when_opted_in() {
    let (hook, ntfy) = (Receiver::start(&[]), Receiver::start(&[]));
    let folder = tempfile::tempdir().unwrap();
    let mut alerts = settings(&hook, &ntfy, Some(HostScope::All));
    alerts.include_titles = true;
    let server = server_on(&folder.path().join("g.db"), alerts);
    let client = server.client();
    categories_and_day(&client);
    save(
        &client,
        "aw-notify",
        &json!({"alerts": [{"category": "Media", "label": "Reading the news",
                            "thresholds_minutes": [30], "positive": true, "period": "week"}]}),
    );
    seed(&client, "laptop", 40.0, 1.0);
    let body = hook.wait_for(1)[0].json();
    assert_eq!(body["kind"], "goal");
    assert_eq!(body["title"], "Goal reached: Reading the news");
    let text = body["text"].as_str().unwrap();
    assert!(
        text.starts_with("Reading the news: 30m  (40m this week)"),
        "{text}"
    );
    assert!(
        text.contains(&format!("Most of it:\n  {PRIVATE_TITLE} (Firefox): 40m")),
        "include_titles names them: {text}"
    );
    assert_eq!(body["details"]["period"], "week");
    assert_eq!(body["details"]["titles"][0]["title"], PRIVATE_TITLE);
    let status = client.get("/api/0/alerts/status").json();
    assert_eq!(status["scope"], "all");
    assert_eq!(status["goals"][0]["period"], "week");
}

#[test]
fn the_alerts_command_shows_a_digest_on_the_file_and_says_when_alerts_are_off() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let db = root.join("cli.db");
    {
        let server = server_on(&db, AlertSettings::default());
        let client = server.client();
        save(
            &client,
            "classes",
            &json!([{"name": ["Media", "Social Media"], "rule": {"type": "regex", "regex": "Twitter"}}]),
        );
    }
    let db_arg = db.to_str().unwrap();
    // Without [alerts]: the digest is shown all the same (nothing sent)...
    let output = common::run(root, &["alerts", "digest", "--dbpath", db_arg]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(shown.starts_with("Activity digest for "), "{shown}");
    assert!(shown.contains("By category"), "{shown}");
    // ...and sending or testing says alerts are off, exit 1.
    for args in [
        &["alerts", "test", "--dbpath", db_arg][..],
        &["alerts", "digest", "--send", "--dbpath", db_arg][..],
    ] {
        let said = common::fails(root, args, 1);
        assert!(said.contains("alerts are off"), "{said}");
    }
    // A config whose [alerts] is not valid: exit 1, named.
    common::write_testing_config(root, "[alerts]\nntfy_url = \"ntfy.sh/topic\"\n");
    let said = common::fails(
        root,
        &["alerts", "test", "--testing", "--dbpath", db_arg],
        1,
    );
    assert!(said.contains("ntfy_url must be an http"), "{said}");
}

/// The names of a process's threads.
fn thread_names(pid: u32) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim().to_string())
        .collect();
    names.sort();
    names
}

#[test]
fn a_server_without_alerts_runs_no_alerts_thread_and_one_with_them_runs_one() {
    let (hook, ntfy) = (Receiver::start(&[]), Receiver::start(&[]));
    for with in [false, true] {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        let config = if with {
            format!(
                "[alerts]\nwebhook_url = \"{}\"\nntfy_url = \"{}\"\n",
                hook.url("/hook"),
                ntfy.url("/topic")
            )
        } else {
            String::new()
        };
        common::write_testing_config(root, &config);
        let (child, _port) = common::spawn_listening(
            common::binary(root)
                .args(["--testing", "--port", "0"])
                .stdout(std::process::Stdio::null()),
        );
        let stopped = common::Stopped(child);
        let names = thread_names(stopped.0.id());
        let alerts = names.iter().filter(|name| *name == "aw-alerts").count();
        assert_eq!(alerts, usize::from(with), "{with}: {names:?}");
        drop(stopped);
    }
}
