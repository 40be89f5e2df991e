//! `GET /metrics` (`docs/API.md` §3.14): what the counters count after
//! real requests (exactly, by route template and bucket), the readings
//! taken when scraped, and who may scrape. `scripts/test-metrics` checks
//! the text with Prometheus' own OpenMetrics parser.

mod common;

use std::collections::BTreeMap;

use common::{event, Client, TestServer};
use serde_json::json;

const KEY: &str = "the-api-key";
const BUCKET: &str = "aw-watcher-window_metrics-host";
const HEARTBEAT_ROUTE: &str = "/api/0/buckets/<bucket_id>/heartbeat";

/// One sample line of the exposition.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// The samples of an exposition (comment lines skipped).
fn parse(text: &str) -> Vec<Sample> {
    text.lines()
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (name, rest) = match line.find(['{', ' ']) {
                Some(at) => line.split_at(at),
                None => panic!("no value in {line:?}"),
            };
            let (labels, rest) = match rest.strip_prefix('{') {
                Some(rest) => parse_labels(rest),
                None => (BTreeMap::new(), rest),
            };
            let value = rest.trim().split(' ').next().unwrap();
            let value = match value {
                "+Inf" => f64::INFINITY,
                value => value
                    .parse()
                    .unwrap_or_else(|_| panic!("bad value in {line:?}")),
            };
            Sample {
                name: name.to_string(),
                labels,
                value,
            }
        })
        .collect()
}

/// `k="v",...}` and what follows the `}`.
fn parse_labels(mut text: &str) -> (BTreeMap<String, String>, &str) {
    let mut labels = BTreeMap::new();
    loop {
        if let Some(rest) = text.strip_prefix('}') {
            return (labels, rest);
        }
        let (key, rest) = text.split_once("=\"").expect("a label");
        let mut value = String::new();
        let mut chars = rest.char_indices();
        let end = loop {
            match chars.next().expect("a closing quote") {
                (at, '"') => break at,
                (_, '\\') => match chars.next().expect("an escape").1 {
                    'n' => value.push('\n'),
                    other => value.push(other),
                },
                (_, other) => value.push(other),
            }
        };
        labels.insert(key.to_string(), value);
        text = rest[end + 1..].trim_start_matches(',');
    }
}

/// The value of the sample `name` with exactly `labels`, if any.
fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let wanted: BTreeMap<String, String> = labels
        .iter()
        .map(|(key, value)| (key.to_string(), value.to_string()))
        .collect();
    samples
        .iter()
        .find(|sample| sample.name == name && sample.labels == wanted)
        .map(|sample| sample.value)
}

fn scrape(client: &Client) -> Vec<Sample> {
    let reply = client.get("/metrics");
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(
        reply.header("Content-Type"),
        Some("application/openmetrics-text; version=1.0.0; charset=utf-8")
    );
    let text = reply.text();
    assert!(text.ends_with("# EOF\n"), "{text}");
    parse(&text)
}

fn make_bucket(client: &Client, id: &str) {
    let reply = client.post_json(
        &format!("/api/0/buckets/{id}"),
        &json!({"type": "currentwindow", "client": "test", "hostname": "metrics-host"}),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
}

/// Sends `count` heartbeats of one unchanging window, a second apart,
/// the first `seconds_ago` seconds ago.
fn heartbeats(client: &Client, first: usize, count: usize, seconds_ago: i64) {
    let start = chrono::Utc::now() - chrono::Duration::seconds(seconds_ago);
    for index in first..first + count {
        let at = start + chrono::Duration::seconds(index as i64);
        let reply = client.post_json(
            &format!("/api/0/buckets/{BUCKET}/heartbeat?pulsetime=5"),
            &event(&at.to_rfc3339(), 0.0, json!({"app": "editor"})),
        );
        assert_eq!(reply.status, 200, "{}", reply.text());
    }
}

fn heartbeat_samples(samples: &[Sample]) -> (Option<f64>, Option<f64>, Option<f64>) {
    (
        value(samples, "aw_server_heartbeats_total", &[("bucket", BUCKET)]),
        value(
            samples,
            "aw_server_http_requests_total",
            &[
                ("method", "POST"),
                ("route", HEARTBEAT_ROUTE),
                ("status", "200"),
            ],
        ),
        value(
            samples,
            "aw_server_http_request_duration_seconds_count",
            &[("method", "POST"), ("route", HEARTBEAT_ROUTE)],
        ),
    )
}

#[test]
fn heartbeats_are_counted_exactly_by_bucket_and_route_template() {
    let server = TestServer::start();
    let client = server.client();
    make_bucket(&client, BUCKET);
    make_bucket(&client, "empty-bucket");

    let before = scrape(&client);
    assert_eq!(heartbeat_samples(&before), (None, None, None));

    heartbeats(&client, 0, 5, 120);
    let after = scrape(&client);
    assert_eq!(heartbeat_samples(&after), (Some(5.0), Some(5.0), Some(5.0)));
    heartbeats(&client, 5, 3, 120);
    let later = scrape(&client);
    assert_eq!(heartbeat_samples(&later), (Some(8.0), Some(8.0), Some(8.0)));

    // Labels are route templates: no request's path, no bucket id.
    for sample in later
        .iter()
        .filter(|sample| sample.name.starts_with("aw_server_http_"))
    {
        let route = &sample.labels["route"];
        assert!(route.starts_with('/') || route == "unmatched", "{sample:?}");
        assert!(!route.contains(BUCKET), "{sample:?}");
    }
    // The scrapes count too, under their own template.
    assert_eq!(
        value(
            &later,
            "aw_server_http_requests_total",
            &[("method", "GET"), ("route", "/metrics"), ("status", "200")]
        ),
        Some(2.0)
    );
    // Creating the buckets: 200 each.
    assert_eq!(
        value(
            &later,
            "aw_server_http_requests_total",
            &[
                ("method", "POST"),
                ("route", "/api/0/buckets/<bucket_id>"),
                ("status", "200")
            ]
        ),
        Some(2.0)
    );

    // A request no route takes has one fixed label, whatever its path.
    for path in ["/nothing/here", "/nothing/else"] {
        assert_eq!(client.post(path, b"").status, 404);
    }
    let unmatched = scrape(&client);
    assert_eq!(
        value(
            &unmatched,
            "aw_server_http_requests_total",
            &[
                ("method", "POST"),
                ("route", "unmatched"),
                ("status", "404")
            ]
        ),
        Some(2.0)
    );
    // Heartbeats to a bucket that does not exist are not counted.
    let missing = client.post_json(
        "/api/0/buckets/no-such-bucket/heartbeat?pulsetime=5",
        &event("2026-11-28T10:00:00Z", 0.0, json!({})),
    );
    assert_eq!(missing.status, 404);
    let samples = scrape(&client);
    assert!(samples
        .iter()
        .all(|sample| sample.labels.get("bucket").map(String::as_str) != Some("no-such-bucket")));
    assert_eq!(
        value(
            &samples,
            "aw_server_http_requests_total",
            &[
                ("method", "POST"),
                ("route", HEARTBEAT_ROUTE),
                ("status", "404")
            ]
        ),
        Some(1.0)
    );
}

#[test]
fn scrapes_read_the_store_the_files_and_the_last_snapshot() {
    let backups = tempfile::tempdir().unwrap();
    let folder = backups.path().to_path_buf();
    let server = TestServer::start_with(move |config| config.backup.dir = folder);
    let client = server.client();
    make_bucket(&client, BUCKET);
    make_bucket(&client, "empty-bucket");
    // The last heartbeat a minute ago: its event ends then (duration 0
    // merged with the one before: it ends at the last heartbeat).
    heartbeats(&client, 0, 2, 61);

    let samples = scrape(&client);
    let age = value(
        &samples,
        "aw_server_bucket_last_event_age_seconds",
        &[("bucket", BUCKET)],
    )
    .expect("the bucket's age");
    assert!((59.0..120.0).contains(&age), "{age}");
    // A bucket without events has no age.
    assert!(samples
        .iter()
        .all(|sample| sample.labels.get("bucket").map(String::as_str) != Some("empty-bucket")));

    let database = value(&samples, "aw_server_database_size_bytes", &[]).unwrap();
    assert!(database > 0.0, "{database}");
    assert!(value(&samples, "aw_server_database_wal_size_bytes", &[]).unwrap() >= 0.0);
    assert_eq!(
        value(&samples, "aw_server_writer_queue_depth", &[]),
        Some(0.0)
    );
    // Each write so far was a commit of its own: two buckets, two
    // heartbeats (none were sent together).
    let commits = value(
        &samples,
        "aw_server_writer_commit_duration_seconds_count",
        &[],
    )
    .unwrap();
    assert!(commits >= 4.0, "{commits}");
    assert_eq!(
        value(
            &samples,
            "aw_server_writer_commit_duration_seconds_bucket",
            &[("le", "+Inf")]
        ),
        Some(commits)
    );

    // Sync, hub and backup never ran: no series.
    let of_feature = |sample: &Sample, features: &[&str]| {
        features
            .iter()
            .any(|feature| sample.name.starts_with(&format!("aw_server_{feature}_")))
    };
    assert!(samples
        .iter()
        .all(|sample| !of_feature(sample, &["sync", "hub", "backup"])));

    let backup = client.post("/api/0/backup", b"");
    assert_eq!(backup.status, 200, "{}", backup.text());
    let samples = scrape(&client);
    assert_eq!(
        value(&samples, "aw_server_backup_last_success", &[]),
        Some(1.0)
    );
    let age = value(&samples, "aw_server_backup_last_age_seconds", &[]).unwrap();
    assert!((0.0..60.0).contains(&age), "{age}");
    assert!(samples
        .iter()
        .all(|sample| !of_feature(sample, &["sync", "hub"])));
}

#[test]
fn scraping_needs_a_read_credential_when_the_server_has_one() {
    let server = TestServer::start_with(|config| config.api_key = Some(KEY.to_string()));
    let anonymous = server.client();
    let admin = anonymous
        .clone()
        .with_header("Authorization", &format!("Bearer {KEY}"));
    let token = |scope: &str, hosts: Option<Vec<&str>>| {
        let mut body = json!({"name": format!("{scope}-token"), "scope": scope});
        if let Some(hosts) = hosts {
            body["hosts"] = json!(hosts);
        }
        let reply = admin.post_json("/api/0/tokens", &body);
        assert_eq!(reply.status, 201, "{}", reply.text());
        let secret = reply.json()["token"].as_str().unwrap().to_string();
        anonymous
            .clone()
            .with_header("Authorization", &format!("Bearer {secret}"))
    };
    let read = token("read", None);
    let write = token("write", Some(vec!["metrics-host"]));

    for path in ["/metrics", "/metrics/", "/METRICS", "//metrics"] {
        anonymous.get(path).assert_error(401);
    }
    write.get("/metrics").assert_error(403);
    // API paths and /metrics need no trailing slash: it is the same path.
    assert_eq!(read.get("/metrics/").status, 200);
    let scraped = scrape(&read);
    assert!(value(&scraped, "aw_server_database_size_bytes", &[]).is_some());
    scrape(&admin);
    // The refusals are counted under the gate's route, not theirs.
    let samples = scrape(&admin);
    assert!(
        value(
            &samples,
            "aw_server_http_requests_total",
            &[
                ("method", "GET"),
                ("route", "/__aw-server/rejected"),
                ("status", "401")
            ]
        )
        .unwrap()
            >= 4.0
    );
    // The Host check comes first, as everywhere.
    read.request("GET", "/metrics", &[("Host", "evil.example")], None)
        .assert_error(400);
}

#[test]
fn without_credentials_metrics_are_open_like_the_api() {
    let server = TestServer::start();
    let samples = scrape(&server.client());
    assert!(value(&samples, "aw_server_writer_queue_depth", &[]).is_some());
}
