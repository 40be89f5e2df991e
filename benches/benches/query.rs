//! The dashboard's query (aw-webui `fullDesktopQuery` built on
//! `canonicalEvents`) over a synthetic month and year of window, afk and
//! web events, from an in-memory event source.
//!
//! `cargo bench -p aw-benches --bench query` runs criterion. With
//! `QUERY_BENCH_ONCE=month` (or `year`) the binary instead runs the query
//! once and exits, for measuring peak memory (`/usr/bin/time -v`) or
//! allocations (`heaptrack`, `valgrind --tool=dhat`) of one run.

use std::hint::black_box;
use std::time::Instant;

use aw_benches::synthetic;
use aw_models::{TimeInterval, Timestamp};
use aw_query::{query, MemorySource};
use criterion::Criterion;

const HOST: &str = "laptop";

/// ~15 rules in the shape of aw-webui's default categories, as the webui
/// pastes them (JSON with `\\` collapsed to `\`).
const CATEGORIES: &str = r#"[
    [["Work"], {"type": "none"}],
    [["Work", "Programming"], {"type": "regex", "regex": "GitHub|Stack Overflow|BitBucket|Gitlab|\bvim\b|Spyder|kate|Ghidra|Scite|Visual Studio Code|Alacritty"}],
    [["Work", "Programming", "ActivityWatch"], {"type": "regex", "regex": "ActivityWatch|aw-", "ignore_case": true}],
    [["Work", "Image"], {"type": "regex", "regex": "Gimp|Inkscape"}],
    [["Work", "Video"], {"type": "regex", "regex": "Kdenlive"}],
    [["Work", "Audio"], {"type": "regex", "regex": "Audacity"}],
    [["Work", "3D"], {"type": "regex", "regex": "Blender"}],
    [["Work", "Documents"], {"type": "regex", "regex": "libreoffice|\.odt", "select_keys": ["app", "title"]}],
    [["Media"], {"type": "none"}],
    [["Media", "Games"], {"type": "regex", "regex": "Minecraft|RimWorld|Steam"}],
    [["Media", "Video"], {"type": "regex", "regex": "YouTube|Plex|VLC", "ignore_case": true}],
    [["Media", "Social Media"], {"type": "regex", "regex": "reddit|Facebook|Twitter|Instagram|devRant|ycombinator", "ignore_case": true}],
    [["Media", "Music"], {"type": "regex", "regex": "Spotify|Deezer", "ignore_case": true}],
    [["Comms"], {"type": "none"}],
    [["Comms", "IM"], {"type": "regex", "regex": "Messenger|Telegram|Signal|WhatsApp|Rambox|Slack|Riot|Element|Discord|Nheko|NeoChat|Mattermost"}],
    [["Comms", "Email"], {"type": "regex", "regex": "Gmail|Thunderbird|mutt|alpine|mail\.google"}],
    [["Comms", "Video"], {"type": "regex", "regex": "Zoom|Meet|Webex", "ignore_case": true}]
]"#;

/// The program aw-webui sends for the Activity view of one desktop host
/// with one browser bucket, `include_audible` and `filter_afk` on.
fn dashboard_query() -> String {
    format!(
        r#"
events = flood(query_bucket("aw-watcher-window_{HOST}"));
not_afk = flood(query_bucket("aw-watcher-afk_{HOST}"));
not_afk = filter_keyvals(not_afk, "status", ["not-afk"]);
browser_events = [];
events_firefox = flood(query_bucket("aw-watcher-web-firefox_{HOST}"));
window_firefox = filter_keyvals(events, "app", ["org.mozilla.firefox", "io.gitlab.librewolf-community", "net.waterfox.waterfox"]);
window_firefox_re = filter_keyvals_regex(events, "app", "(?i)(firefox|librewolf|waterfox|nightly)");
window_firefox = sort_by_timestamp(concat(window_firefox, window_firefox_re));
events_firefox = filter_period_intersect(events_firefox, window_firefox);
events_firefox = split_url_events(events_firefox);
browser_events = concat(browser_events, events_firefox);
browser_events = sort_by_timestamp(browser_events);
audible_events = filter_keyvals(browser_events, "audible", [true]);
not_afk = period_union(not_afk, audible_events);
events = filter_period_intersect(events, not_afk);
stopwatch_events = [];
events = categorize(events, {CATEGORIES});
title_events = sort_by_duration(merge_events_by_keys(events, ["app", "title"]));
app_events   = sort_by_duration(merge_events_by_keys(title_events, ["app"]));
cat_events   = sort_by_duration(merge_events_by_keys(events, ["$category"]));
app_events  = limit_events(app_events, 100);
title_events  = limit_events(title_events, 100);
duration = sum_durations(events);
browser_events = split_url_events(browser_events);
browser_urls = merge_events_by_keys(browser_events, ["url"]);
browser_urls = sort_by_duration(browser_urls);
browser_urls = limit_events(browser_urls, 100);
browser_domains = merge_events_by_keys(browser_events, ["$domain"]);
browser_domains = sort_by_duration(browser_domains);
browser_domains = limit_events(browser_domains, 100);
browser_titles = merge_events_by_keys(browser_events, ["title"]);
browser_titles = sort_by_duration(browser_titles);
browser_titles = limit_events(browser_titles, 100);
browser_duration = sum_durations(browser_events);
stopwatch_events = merge_events_by_keys(stopwatch_events, ["label"]);
stopwatch_events = sort_by_duration(stopwatch_events);
stopwatch_events = limit_events(stopwatch_events, 100);
RETURN = {{
    "window": {{
        "app_events": app_events,
        "title_events": title_events,
        "cat_events": cat_events,
        "active_events": not_afk,
        "duration": duration
    }},
    "browser": {{
        "domains": browser_domains,
        "urls": browser_urls,
        "titles": browser_titles,
        "duration": browser_duration
    }},
    "stopwatch": {{
        "stopwatch_events": stopwatch_events
    }}
}};
"#
    )
}

/// A source holding `days` of synthetic activity and the period covering it.
fn fixture(days: u32) -> (MemorySource, TimeInterval) {
    // 2026-01-01T00:00:00Z, a fixed end so every run sees the same data.
    let end = Timestamp::from_nanos(1_767_225_600_000_000_000);
    let activity = synthetic::activity(days, end, 42);
    let start = Timestamp::from_nanos(end.nanos() - i64::from(days) * 86_400_000_000_000);
    let mut source = MemorySource::new();
    source.insert(&format!("aw-watcher-window_{HOST}"), HOST, activity.window);
    source.insert(&format!("aw-watcher-afk_{HOST}"), HOST, activity.afk);
    source.insert(
        &format!("aw-watcher-web-firefox_{HOST}"),
        HOST,
        activity.web,
    );
    (source, TimeInterval::new(start, end))
}

const SIZES: &[(&str, u32)] = &[("month", 30), ("year", 365)];

/// Only reads the three buckets (and drops them): the part of the
/// dashboard's time that belongs to the event source, not the language.
fn read_only_query() -> String {
    format!(
        r#"
w = query_bucket("aw-watcher-window_{HOST}");
a = query_bucket("aw-watcher-afk_{HOST}");
b = query_bucket("aw-watcher-web-firefox_{HOST}");
RETURN = 0;
"#
    )
}

fn bench_dashboard(criterion: &mut Criterion) {
    let programs = [
        ("dashboard_query", dashboard_query()),
        ("read_only", read_only_query()),
    ];
    for (name, days) in SIZES {
        let (source, period) = fixture(*days);
        for (group_name, program) in &programs {
            let mut group = criterion.benchmark_group(*group_name);
            group.sample_size(10);
            group.bench_function(*name, |bench| {
                bench
                    .iter(|| query(black_box(program), &[period], &source).expect("the query runs"))
            });
            group.finish();
        }
    }
}

/// Runs the query once on the named size and prints what it did; with a
/// `-data` suffix (`year-data`) only builds the data set, as a baseline
/// for memory measurements.
fn run_once(name: &str) {
    let (size, data_only) = match name.strip_suffix("-data") {
        Some(size) => (size, true),
        None => (name, false),
    };
    let days = SIZES
        .iter()
        .find(|(known, _)| *known == size)
        .map_or(30, |(_, days)| *days);
    let (source, period) = fixture(days);
    if data_only {
        let counts: Vec<u64> = ["window", "afk", "web-firefox"]
            .iter()
            .map(|kind| {
                let bucket = format!("aw-watcher-{kind}_{HOST}");
                aw_query::EventSource::count_events(&source, &bucket, &period).unwrap_or(0)
            })
            .collect();
        println!("{size}: window, afk, web events: {counts:?}");
        return;
    }
    let program = dashboard_query();
    let started = Instant::now();
    let result = query(&program, &[period], &source).expect("the query runs");
    let elapsed = started.elapsed();
    let window = &result[0]["window"];
    println!(
        "{name}: {elapsed:?}; active {:.0} s, browser {:.0} s, {} categories, {} apps",
        window["duration"].as_f64().unwrap_or(0.0),
        result[0]["browser"]["duration"].as_f64().unwrap_or(0.0),
        window["cat_events"].as_array().map_or(0, Vec::len),
        window["app_events"].as_array().map_or(0, Vec::len),
    );
}

fn main() {
    if let Ok(name) = std::env::var("QUERY_BENCH_ONCE") {
        run_once(&name);
        return;
    }
    let mut criterion = Criterion::default().configure_from_args();
    bench_dashboard(&mut criterion);
    criterion.final_summary();
}
