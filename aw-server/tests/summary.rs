//! `GET /api/0/summary` and `GET /api/0/search` (`docs/API.md` §3.13):
//! active time as the dashboards count it, per day in the caller's time
//! zone, grouped; bad arguments are 400s that name the argument.

mod common;

use common::{seed_two_hosts as seed, Client, TestServer};
use serde_json::{json, Value};

/// A server on the laptop: the seed's browser bucket without a host is
/// its own watcher's.
fn laptop() -> TestServer {
    TestServer::start_with(|config| config.hostname = "laptop".to_string())
}

fn summary(client: &Client, query: &str) -> Value {
    let reply = client.get(&format!("/api/0/summary?{query}"));
    assert_eq!(reply.status, 200, "{query}: {}", reply.text());
    reply.json()
}

fn rows(summary: &Value, by: &str) -> Vec<(String, f64)> {
    summary[by]
        .as_array()
        .unwrap_or_else(|| panic!("no {by} in {summary}"))
        .iter()
        .map(|row| {
            (
                row["key"].as_str().unwrap().to_string(),
                row["duration"].as_f64().unwrap(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, f64)]) -> Vec<(String, f64)> {
    list.iter()
        .map(|(key, seconds)| (key.to_string(), *seconds))
        .collect()
}

#[test]
fn a_day_is_summed_as_the_dashboard_counts_it() {
    let server = laptop();
    let client = server.client();
    seed(&client);
    let day = summary(
        &client,
        "start=2026-03-29&end=2026-03-30&host=laptop&tz=Europe/Berlin&by=app,title,category,domain,url,host",
    );
    // Code 5400 + 1800 (after midnight) + 60 (untitled), Firefox 1800,
    // Terminal 600 of its 1800 (AFK after 10 minutes).
    assert_eq!(day["duration"], 9660.0);
    assert_eq!(day["hosts"], json!(["laptop"]));
    assert_eq!(day["tz"], "Europe/Berlin");
    assert_eq!(day["start"], "2026-03-29T02:00:00Z", "04:00 CEST");
    assert_eq!(day["end"], "2026-03-30T02:00:00Z");
    assert_eq!(
        rows(&day, "app"),
        pairs(&[("Code", 7200.0), ("Firefox", 1800.0), ("Terminal", 600.0)])
    );
    assert_eq!(day["title"][0]["key"], "main.rs - Code");
    assert_eq!(day["title"][0]["app"], "Code");
    // aw-webui's default categories: GitHub is Work > Programming.
    assert_eq!(
        rows(&day, "category"),
        pairs(&[("Uncategorized", 7860.0), ("Work > Programming", 1800.0)])
    );
    assert_eq!(
        day["category"][1]["category"],
        json!(["Work", "Programming"])
    );
    assert_eq!(rows(&day, "domain"), pairs(&[("github.com", 1200.0)]));
    assert_eq!(
        rows(&day, "url"),
        pairs(&[("https://github.com/ActivityWatch", 1200.0)])
    );
    assert_eq!(rows(&day, "host"), pairs(&[("laptop", 9660.0)]));
    assert!(day.get("day").is_none(), "only the groupings asked for");

    // The same figures through the query endpoint, as aw-webui asks.
    let query = client.post_json(
        "/api/0/query/",
        &json!({
            "timeperiods": ["2026-03-29T02:00:00Z/2026-03-30T02:00:00Z"],
            "query": [
                "events = flood(query_bucket(\"window_laptop\"));",
                "afk = filter_keyvals(flood(query_bucket(\"afk_laptop\")), \"status\", [\"not-afk\"]);",
                "RETURN = sum_durations(filter_period_intersect(events, afk));"
            ]
        }),
    );
    assert_eq!(query.json()[0].as_f64(), Some(9660.0));
}

#[test]
fn days_and_hours_follow_the_zone_and_daylight_saving() {
    let server = laptop();
    let client = server.client();
    seed(&client);
    let week = summary(
        &client,
        "start=2026-03-28&end=2026-03-31&host=laptop&tz=Europe/Berlin&by=day,hour",
    );
    let days = week["day"].as_array().unwrap();
    let dates: Vec<&str> = days.iter().map(|d| d["date"].as_str().unwrap()).collect();
    assert_eq!(dates, ["2026-03-28", "2026-03-29", "2026-03-30"]);
    // Saturday's day starts at 04:00 CET (+01:00), Sunday's at 04:00 CEST.
    assert_eq!(days[0]["start"], "2026-03-28T03:00:00Z");
    assert_eq!(days[1]["start"], "2026-03-29T02:00:00Z");
    assert_eq!(days[0]["duration"], 0.0);
    assert_eq!(days[0]["first"], Value::Null);
    assert_eq!(days[1]["duration"], 9660.0);
    assert_eq!(days[1]["first"], "2026-03-29T07:00:00Z");
    assert_eq!(days[1]["last"], "2026-03-30T01:30:00Z");
    assert_eq!(
        days[1]["categories"],
        json!({"Uncategorized": 7860.0, "Work": 1800.0})
    );
    // Days alone are computed without the events (a day's active span):
    // the same rows.
    let days_alone = summary(
        &client,
        "start=2026-03-28&end=2026-03-31&host=laptop&tz=Europe/Berlin&by=day",
    );
    assert_eq!(days_alone["day"], week["day"]);
    let hours = rows(&week, "hour");
    assert_eq!(hours.len(), 24);
    assert_eq!(hours[9], ("09:00".to_string(), 3600.0));
    assert_eq!(hours[10], ("10:00".to_string(), 3600.0));
    assert_eq!(hours[11], ("11:00".to_string(), 600.0));
    assert_eq!(hours[3], ("03:00".to_string(), 1800.0));
    assert_eq!(hours[14], ("14:00".to_string(), 60.0));
    // In UTC the same time falls on other clock hours, and the late
    // session starts a day of its own (01:00 UTC is before 04:00).
    let utc = summary(
        &client,
        "start=2026-03-29&end=2026-03-31&host=laptop&tz=UTC&by=day,hour",
    );
    assert_eq!(rows(&utc, "hour")[7], ("07:00".to_string(), 3600.0));
    assert_eq!(utc["day"][0]["duration"], 9660.0);
    // A Sunday-first week and a later day start come from the settings.
    client.post_json("/api/0/settings/startOfDay", &json!("00:00"));
    let midnight = summary(
        &client,
        "start=2026-03-29&end=2026-03-31&host=laptop&tz=Europe/Berlin&by=day",
    );
    assert_eq!(midnight["day"][0]["start"], "2026-03-28T23:00:00Z");
    assert_eq!(midnight["day"][0]["duration"], 7860.0);
    assert_eq!(midnight["day"][1]["duration"], 1800.0);
}

/// Every grouping's rows summed over the hosts asked alone equal the
/// rows of all hosts together.
fn assert_all_is_the_sum(client: &Client, period: &str, hosts: &[&str]) {
    let by = "app,title,category,domain,url,host,hour";
    let all = summary(client, &format!("{period}&by={by}&limit=100000"));
    let alone: Vec<Value> = hosts
        .iter()
        .map(|host| {
            summary(
                client,
                &format!("{period}&by={by}&limit=100000&host={host}"),
            )
        })
        .collect();
    let sum = |grouping: &str, summary: &Value| -> f64 {
        summary[grouping]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row["duration"].as_f64().unwrap())
            .sum()
    };
    for grouping in ["app", "title", "category", "domain", "url", "host", "hour"] {
        let each: f64 = alone.iter().map(|one| sum(grouping, one)).sum();
        assert_eq!(sum(grouping, &all), each, "{grouping}: {all}");
    }
    let each: f64 = alone
        .iter()
        .map(|one| one["duration"].as_f64().unwrap())
        .sum();
    assert_eq!(all["duration"].as_f64().unwrap(), each);
}

#[test]
fn browser_time_without_a_host_is_this_machines_and_all_hosts_are_their_sum() {
    let server = laptop();
    let client = server.client();
    seed(&client);
    let period = "start=2026-03-29&end=2026-03-30&tz=Europe/Berlin";
    let all = summary(&client, &format!("{period}&by=host,domain"));
    assert_eq!(
        all["hosts"],
        json!(["laptop", "desktop"]),
        "most recently active first"
    );
    assert_eq!(all["duration"], 9660.0 + 5400.0);
    assert_eq!(
        rows(&all, "host"),
        pairs(&[("laptop", 9660.0), ("desktop", 5400.0)])
    );
    assert_eq!(rows(&all, "domain"), pairs(&[("github.com", 1200.0)]));
    // The hostless Firefox bucket was sent by the laptop's watcher (this
    // server is the laptop): the desktop's Firefox window had none.
    let desktop = summary(&client, &format!("{period}&host=desktop&by=app,domain"));
    assert_eq!(
        rows(&desktop, "app"),
        pairs(&[("Blender", 3600.0), ("Firefox", 1800.0)])
    );
    assert_eq!(rows(&desktop, "domain"), pairs(&[]));
    let laptop = summary(&client, &format!("{period}&host=laptop&by=domain"));
    assert_eq!(rows(&laptop, "domain"), pairs(&[("github.com", 1200.0)]));
    assert_all_is_the_sum(&client, period, &["laptop", "desktop"]);

    // On a hub whose own machine runs no watcher, a browser bucket without
    // a host is no device's: counted for none, so still the sum.
    let hub = TestServer::start_with(|config| config.hostname = "hub".to_string());
    let hub_client = hub.client();
    seed(&hub_client);
    let desktop = summary(&hub_client, &format!("{period}&host=desktop&by=domain"));
    assert_eq!(rows(&desktop, "domain"), pairs(&[]));
    assert_all_is_the_sum(&hub_client, period, &["laptop", "desktop"]);
    // A device's browser bucket as forwarding now names it: its host's.
    let reply = hub_client.post_json(
        "/api/0/buckets/aw-watcher-web-chrome-synced-from-desktop",
        &json!({"type": "web.tab.current", "client": "test", "hostname": "desktop"}),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    let reply = hub_client.post_json(
        "/api/0/buckets/window_desktop/events",
        &json!([common::event(
            "2026-03-29T17:00:00Z",
            600.0,
            json!({"app": "Google-chrome", "title": "Docs"})
        )]),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    let reply = hub_client.post_json(
        "/api/0/buckets/aw-watcher-web-chrome-synced-from-desktop/events",
        &json!([common::event(
            "2026-03-29T17:00:00Z",
            600.0,
            json!({"url": "https://docs.rs/", "title": "Docs"})
        )]),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    let desktop = summary(&hub_client, &format!("{period}&host=desktop&by=domain"));
    assert_eq!(rows(&desktop, "domain"), pairs(&[("docs.rs", 600.0)]));
    let laptop = summary(&hub_client, &format!("{period}&host=laptop&by=domain"));
    assert_eq!(rows(&laptop, "domain"), pairs(&[]));
    assert_all_is_the_sum(&hub_client, period, &["laptop", "desktop"]);
}

#[test]
fn a_second_window_or_afk_bucket_of_a_host_adds_its_time_and_hides_none() {
    let server = laptop();
    let client = server.client();
    seed(&client);
    let query = "start=2026-03-29&end=2026-03-30&host=laptop&tz=Europe/Berlin&by=app";
    let before = summary(&client, query);
    assert_eq!(before["duration"], 9660.0);
    let create = |id: &str, kind: &str| {
        let reply = client.post_json(
            &format!("/api/0/buckets/{id}"),
            &json!({"type": kind, "client": "test", "hostname": "laptop"}),
        );
        assert_eq!(reply.status, 200, "{}", reply.text());
    };
    let insert = |id: &str, events: Value| {
        let reply = client.post_json(&format!("/api/0/buckets/{id}/events"), &events);
        assert_eq!(reply.status, 200, "{}", reply.text());
    };
    // A Wayland watcher beside the X11 one, one heartbeat after the other's
    // last event: its (zero) time adds nothing, the first bucket still counts.
    create("aw-watcher-window-wayland_laptop", "currentwindow");
    let reply = client.post_json(
        "/api/0/buckets/aw-watcher-window-wayland_laptop/heartbeat?pulsetime=60",
        &json!({"timestamp": "2026-03-30T02:00:00Z", "duration": 0.0,
                "data": {"app": "Code", "title": "late.rs - Code"}}),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(summary(&client, query), before);
    // Where both cover the same time, the bucket made first counts: the
    // Wayland bucket's overlapping event changes nothing...
    insert(
        "aw-watcher-window-wayland_laptop",
        json!([
            common::event(
                "2026-03-29T07:00:00Z",
                1800.0,
                json!({"app": "Other", "title": "o"})
            ),
            // ...nor does one in the future, for this day.
            common::event(
                "2099-01-01T00:00:00Z",
                60.0,
                json!({"app": "Future", "title": "f"})
            ),
        ]),
    );
    assert_eq!(summary(&client, query), before);
    // Time only the second buckets have counts: 12:00-12:05 local is not
    // AFK only by a second AFK watcher, and only the Wayland bucket has a
    // window then.
    create("aw-watcher-afk-wayland_laptop", "afkstatus");
    insert(
        "aw-watcher-afk-wayland_laptop",
        json!([
            common::event("2026-03-29T10:00:00Z", 300.0, json!({"status": "not-afk"})),
            // Overlaps the first AFK bucket's "afk" 11:10-11:20: that one counts.
            common::event("2026-03-29T09:05:00Z", 900.0, json!({"status": "not-afk"})),
            // The same span as the first's not-afk morning, saying afk: hidden.
            common::event("2026-03-29T07:00:00Z", 600.0, json!({"status": "afk"})),
        ]),
    );
    insert(
        "aw-watcher-window-wayland_laptop",
        json!([common::event(
            "2026-03-29T10:00:00Z",
            300.0,
            json!({"app": "Wayland", "title": "w"})
        )]),
    );
    let after = summary(&client, query);
    assert_eq!(
        rows(&after, "app"),
        rows(&before, "app")
            .into_iter()
            .chain([("Wayland".to_string(), 300.0)])
            .collect::<Vec<_>>()
    );
    assert_eq!(after["duration"], 9660.0 + 300.0);
}

#[test]
fn events_come_oldest_first_with_their_host_and_category() {
    let server = laptop();
    let client = server.client();
    seed(&client);
    let day = summary(
        &client,
        "start=2026-03-29&end=2026-03-30&tz=Europe/Berlin&by=events",
    );
    let events = day["events"].as_array().unwrap();
    let starts: Vec<&str> = events
        .iter()
        .map(|e| e["timestamp"].as_str().unwrap())
        .collect();
    let mut sorted = starts.clone();
    sorted.sort();
    assert_eq!(starts, sorted);
    assert_eq!(events[0]["host"], "laptop");
    assert_eq!(events[0]["data"]["app"], "Code");
    assert_eq!(events[0]["data"]["$category"], json!(["Uncategorized"]));
    let total: f64 = events.iter().map(|e| e["duration"].as_f64().unwrap()).sum();
    assert_eq!(total, day["duration"].as_f64().unwrap());
}

#[test]
fn the_user_categories_and_limit_apply() {
    let server = laptop();
    let client = server.client();
    seed(&client);
    client.post_json(
        "/api/0/settings/classes",
        &json!([{"name": ["Dev", "Editor"], "rule": {"type": "regex", "regex": "\\.rs - Code$"}}]),
    );
    let day = summary(
        &client,
        "start=2026-03-29&end=2026-03-30&host=laptop&tz=Europe/Berlin&by=category,app&limit=1",
    );
    assert_eq!(rows(&day, "category"), pairs(&[("Dev > Editor", 7200.0)]));
    assert_eq!(rows(&day, "app"), pairs(&[("Code", 7200.0)]));
}

#[test]
fn search_finds_titles_and_urls_with_their_time() {
    let server = laptop();
    let client = server.client();
    seed(&client);
    let reply =
        client.get("/api/0/search?text=GITHUB&start=2026-03-01&end=2026-04-01&tz=Europe/Berlin");
    assert_eq!(reply.status, 200, "{}", reply.text());
    let found = reply.json();
    assert_eq!(found["duration"], 1800.0);
    let matches = found["matches"].as_array().unwrap();
    assert_eq!(matches.len(), 2, "{found}");
    assert_eq!(matches[0]["kind"], "title");
    assert_eq!(matches[0]["key"], "GitHub - Mozilla Firefox");
    assert_eq!(matches[0]["app"], "Firefox");
    assert_eq!(matches[0]["first"], "2026-03-29T08:30:00Z");
    assert_eq!(matches[0]["last"], "2026-03-29T09:00:00Z");
    assert_eq!(matches[0]["days"], json!(["2026-03-29"]));
    assert_eq!(matches[1]["kind"], "url");
    assert_eq!(matches[1]["duration"], 1200.0);
    // Regex characters are text.
    let none = client.get("/api/0/search?text=.*&start=2026-03-01&end=2026-04-01");
    assert_eq!(none.json()["matches"], json!([]));
}

#[test]
fn bad_arguments_are_400s_naming_the_argument() {
    let server = laptop();
    let client = server.client();
    seed(&client);
    let cases = [
        ("/api/0/summary?end=2026-03-30", "start"),
        ("/api/0/summary?start=2026-03-29", "end"),
        ("/api/0/summary?start=2026-03-29&end=2026-03-29", "end"),
        ("/api/0/summary?start=2026-03-30&end=2026-03-29", "end"),
        ("/api/0/summary?start=someday&end=2026-03-29", "start"),
        ("/api/0/summary?start=2026-03-29&end=2026-13-01", "end"),
        ("/api/0/summary?start=0001-01-01&end=2026-03-29", "start"),
        ("/api/0/summary?start=1800-01-01&end=2026-03-29", "end"),
        (
            "/api/0/summary?start=2026-03-29&end=2026-03-30&by=app,nope",
            "by",
        ),
        ("/api/0/summary?start=2026-03-29&end=2026-03-30&by=", "by"),
        (
            "/api/0/summary?start=2026-03-29&end=2026-03-30&tz=Mars/Olympus",
            "tz",
        ),
        (
            "/api/0/summary?start=2026-03-29&end=2026-03-30&host=phone",
            "host",
        ),
        (
            "/api/0/summary?start=2026-03-29&end=2026-03-30&limit=0",
            "limit",
        ),
        (
            "/api/0/summary?start=2026-03-29&end=2026-03-30&limit=-3",
            "limit",
        ),
        ("/api/0/search?start=2026-03-29&end=2026-03-30", "text"),
        (
            "/api/0/search?text=%20&start=2026-03-29&end=2026-03-30",
            "text",
        ),
        ("/api/0/search?text=x&start=2026-03-29", "end"),
    ];
    for (path, argument) in cases {
        let message = client.get(path).assert_error(400);
        assert!(
            message.starts_with(&format!("{argument}: ")),
            "{path}: {message}"
        );
    }
    // Relative dates are dates, by the calendar's days.
    let relative = summary(&client, "start=yesterday&end=today&tz=UTC&by=app");
    let today = summary(&client, "start=today&end=tomorrow&tz=UTC&by=app");
    assert_eq!(relative["end"], today["start"]);
    // A period without data is no error.
    let empty = summary(&client, "start=2001-01-01&end=2001-01-02&by=day,app");
    assert_eq!(empty["duration"], 0.0);
    assert_eq!(empty["app"], json!([]));
}

#[test]
fn a_preview_uses_the_categories_given_and_saves_nothing() {
    let server = laptop();
    let client = server.client();
    seed(&client);
    let query = "start=2026-03-29&end=2026-03-30&host=laptop&tz=Europe/Berlin&by=category,title";
    let saved = summary(&client, query);
    // Title rows name their category; under the default categories the
    // editor is not categorized.
    let code = |summary: &Value| {
        summary["title"]
            .as_array()
            .unwrap()
            .iter()
            .find(|row| row["key"] == "main.rs - Code")
            .cloned()
            .unwrap()
    };
    assert_eq!(code(&saved)["category"], json!(["Uncategorized"]));
    let categories = json!([
        {"id": 1, "name": ["Work"], "rule": {"type": null}, "data": {"color": "#0F0"}},
        {"id": 2, "name": ["Work", "Editing"], "rule": {"type": "regex", "regex": "main\\.rs", "ignore_case": false}},
        {"id": 3, "name": ["Shell"], "rule": {"type": "regex", "regex": "BASH", "ignore_case": true}},
    ]);
    let reply = client.post_json(
        &format!("/api/0/summary?{query}"),
        &json!({ "categories": categories }),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    let preview = reply.json();
    assert_eq!(preview["duration"], saved["duration"]);
    assert_eq!(code(&preview)["category"], json!(["Work", "Editing"]));
    assert_eq!(
        rows(&preview, "category"),
        pairs(&[
            ("Work > Editing", 5400.0),
            ("Uncategorized", 3660.0),
            ("Shell", 600.0),
        ])
    );
    // Nothing was stored: the saved categories still apply.
    assert_eq!(summary(&client, query), saved);
    assert_eq!(client.get("/api/0/settings/classes").json(), json!(null));
}

#[test]
fn a_preview_names_the_category_whose_rule_the_server_refuses() {
    let server = laptop();
    let client = server.client();
    seed(&client);
    let query = "/api/0/summary?start=2026-03-29&end=2026-03-30&tz=Europe/Berlin&by=category";
    let refused = |body: Value| client.post_json(query, &body).assert_error(400);
    let message = refused(json!({"categories": [
        {"name": ["Work"], "rule": {"type": "regex", "regex": "fine"}},
        {"name": ["Work", "Broken"], "rule": {"type": "regex", "regex": "(unclosed"}},
    ]}));
    assert!(
        message.starts_with("categories: category 'Work > Broken': invalid regex"),
        "{message}"
    );
    // The server's dialect decides: look-around is fine here (aw-webui's
    // rules use it), though Rust's plain `regex` refuses it.
    let reply = client.post_json(
        query,
        &json!({"categories": [{"name": ["Ahead"], "rule": {"type": "regex", "regex": "Code(?=x)"}}]}),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    let message = refused(json!({"categories": [{"name": ["No rule"]}]}));
    assert!(
        message.starts_with("categories: category 1: needs a name"),
        "{message}"
    );
    let message = refused(json!({"categories": {"name": ["Work"]}}));
    assert!(
        message.starts_with("categories: must be a list"),
        "{message}"
    );
    let message = refused(json!({"categories": [{"name": ["R"], "rule": {"type": "regex"}}]}));
    assert!(message.contains("needs a regex"), "{message}");
    assert_eq!(client.post_json(query, &json!({})).status, 422);
    assert_eq!(
        client
            .post_json(query, &json!({"categories": [], "other": 1}))
            .status,
        422
    );
    assert_eq!(client.post(query, b"{").status, 400);
}

/// The finished days of a summary come from the cache: asked again, the
/// week is the same, and after every kind of write (an event into a kept
/// day, a heartbeat, a delete, new categories, a new host's bucket) it
/// equals the summary of a server that keeps nothing.
#[test]
fn a_summarys_kept_days_are_never_stale() {
    let cached = laptop();
    let computed = TestServer::start_with(|config| {
        config.hostname = "laptop".to_string();
        config.cache = None;
    });
    let week = "start=2026-03-26&end=2026-04-02&tz=Europe/Berlin&by=app,category,day,host";
    let both = |write: &dyn Fn(&Client)| {
        write(&cached.client());
        write(&computed.client());
        let kept = summary(&cached.client(), week);
        assert_eq!(kept, summary(&computed.client(), week));
        // Again, now from the cache.
        assert_eq!(summary(&cached.client(), week), kept);
        kept
    };
    let seeded = both(&|client| seed(client));
    let hits = |server: &TestServer| -> f64 {
        let text = server.client().get("/metrics").text();
        text.lines()
            .find_map(|line| line.strip_prefix("aw_server_cache_hits_total "))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0.0)
    };
    assert!(hits(&cached) >= 7.0, "the second week came from the cache");
    let insert = |id: &'static str, events: Value| {
        move |client: &Client| {
            let reply = client.post_json(&format!("/api/0/buckets/{id}/events"), &events);
            assert_eq!(reply.status, 200, "{}", reply.text());
        }
    };
    // Not counted yet: no AFK data says the laptop was in use then.
    both(&insert(
        "window_laptop",
        json!([common::event(
            "2026-03-30T10:00:00Z",
            600.0,
            json!({"app": "Mail", "title": "Inbox"})
        )]),
    ));
    let more = both(&insert(
        "afk_laptop",
        json!([common::event(
            "2026-03-30T09:00:00Z",
            7200.0,
            json!({"status": "not-afk"})
        )]),
    ));
    assert_ne!(more, seeded);
    both(&|client| {
        let reply = client.post_json(
            "/api/0/buckets/window_laptop/heartbeat?pulsetime=3600",
            &common::event(
                "2026-03-30T10:10:00Z",
                0.0,
                json!({"app": "Mail", "title": "Inbox"}),
            ),
        );
        assert_eq!(reply.status, 200, "{}", reply.text());
    });
    both(&|client| {
        let events = client
            .get("/api/0/buckets/window_laptop/events?start=2026-03-29T07:00:00Z&end=2026-03-29T07:30:00Z")
            .json();
        let id = events[0]["id"].as_i64().unwrap();
        assert_eq!(
            client
                .delete(&format!("/api/0/buckets/window_laptop/events/{id}"))
                .status,
            200
        );
    });
    both(&|client| {
        let classes = json!([{
            "name": ["Mail"],
            "rule": {"type": "regex", "regex": "Inbox"},
        }]);
        assert_eq!(
            client.post_json("/api/0/settings/classes", &classes).status,
            201
        );
    });
    both(&|client| {
        let body = json!({"type": "currentwindow", "client": "test", "hostname": "tablet"});
        assert_eq!(
            client
                .post_json("/api/0/buckets/window_tablet", &body)
                .status,
            200
        );
        insert(
            "window_tablet",
            json!([common::event(
                "2026-03-28T10:00:00Z",
                900.0,
                json!({"app": "Notes", "title": "x"})
            )]),
        )(client);
    });
}
