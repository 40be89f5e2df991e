//! The query2 programs the dashboard sends, for the benchmarks.
//!
//! These follow the Activity view of aw-webui ("fullDesktopQuery" built on
//! "canonicalEvents"): flood the window and AFK buckets, keep not-afk time,
//! pick the browser's window events by app name (an exact list plus a
//! case-insensitive regex), intersect the web events with them, add audible
//! browser time to not-afk, drop window time spent afk, categorize, and
//! summarise by app, title, category, URL, domain and page title. Like the
//! dashboard, the program is sent as one statement per line.

use aw_models::Timestamp;
use serde_json::{json, Value};

/// Buckets a dashboard query reads.
#[derive(Debug, Clone)]
pub struct DashboardBuckets {
    /// `aw-watcher-window_<host>`.
    pub window: String,
    /// `aw-watcher-afk_<host>`.
    pub afk: String,
    /// `aw-watcher-web-chrome_<host>`.
    pub chrome: String,
}

/// The category rules the benchmark categorizes with: about fifteen regex
/// rules as a dashboard user has them, some case-insensitive, and parents
/// without a rule of their own.
pub fn categories() -> Value {
    let regex = |pattern: &str| json!({"type": "regex", "regex": pattern});
    let regex_i = |pattern: &str| json!({"type": "regex", "regex": pattern, "ignore_case": true});
    json!([
        [["Work"], regex("Google Docs|libreoffice|ReText|report|invoice")],
        [["Work", "Programming"], regex("GitHub|Stack Overflow|BitBucket|Gitlab|vim|Spyder|kate|Ghidra|Scite|Code|jetbrains|RStudio|Jupyter")],
        [["Work", "Programming", "ActivityWatch"], regex_i("ActivityWatch|aw-|localhost:5600")],
        [["Work", "Programming", "Rust"], regex_i(r"\.rs\b|crates\.io|docs\.rs|rust-lang")],
        [["Work", "Image"], regex("GIMP|Inkscape|Krita|Shotwell|Eog")],
        [["Work", "Video"], regex("Kdenlive|Blender")],
        [["Work", "Audio"], regex("Audacity")],
        [["Work", "3D"], regex("Blender")],
        [["Comms"], json!({"type": "none"})],
        [["Comms", "IM"], regex("Messenger|Telegram|Signal|WhatsApp|Rambox|Slack|Riot|Element|Discord|Nheko|NeoChat|Mattermost")],
        [["Comms", "Email"], regex("Gmail|Thunderbird|mutt|alpine|mail\\.google")],
        [["Comms", "Video calls"], regex_i("zoom|teams|meet\\.google|jitsi")],
        [["Media", "Games"], regex("Minecraft|RimWorld|Steam")],
        [["Media", "Video"], regex("YouTube|Plex|VLC|vlc|mpv|twitch")],
        [["Media", "Social Media"], regex_i(r"reddit|Facebook|Twitter|Instagram|devRant|\blinkedin\b")],
        [["Media", "Music"], regex("Spotify|Deezer|Rhythmbox")],
        [["Media", "News"], regex_i(r"news\.ycombinator|bbc\.co\.uk|medium\.com")],
    ])
}

/// The program of the dashboard's Activity view, one statement per line.
pub fn full_desktop_query(buckets: &DashboardBuckets) -> Vec<String> {
    // The dashboard pastes JSON.stringify(categories) into the program after
    // collapsing `\\` to `\`, so regex escapes reach the server as written.
    let categories = categories().to_string().replace(r"\\", r"\");
    let browser_names = json!(["com.google.Chrome", "org.chromium.Chromium"]).to_string();
    let browser_regex = json!("(?i)^(google[-_ ]?chrome|chrome|chromium)").to_string();
    let program = format!(
        r#"
        events = flood(query_bucket("{window}"));
        not_afk = flood(query_bucket("{afk}"));
        not_afk = filter_keyvals(not_afk, "status", ["not-afk"]);
        browser_events = [];
        events_chrome = flood(query_bucket("{chrome}"));
        window_chrome = filter_keyvals(events, "app", {browser_names});
        window_chrome_re = filter_keyvals_regex(events, "app", {browser_regex});
        window_chrome = sort_by_timestamp(concat(window_chrome, window_chrome_re));
        events_chrome = filter_period_intersect(events_chrome, window_chrome);
        events_chrome = split_url_events(events_chrome);
        browser_events = concat(browser_events, events_chrome);
        browser_events = sort_by_timestamp(browser_events);
        audible_events = filter_keyvals(browser_events, "audible", [true]);
        not_afk = period_union(not_afk, audible_events);
        events = filter_period_intersect(events, not_afk);
        stopwatch_events = [];
        events = categorize(events, {categories});
        title_events = sort_by_duration(merge_events_by_keys(events, ["app", "title"]));
        app_events = sort_by_duration(merge_events_by_keys(title_events, ["app"]));
        cat_events = sort_by_duration(merge_events_by_keys(events, ["$category"]));
        app_events = limit_events(app_events, 100);
        title_events = limit_events(title_events, 100);
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
            "window": {{"app_events": app_events, "title_events": title_events,
                        "cat_events": cat_events, "active_events": not_afk, "duration": duration}},
            "browser": {{"domains": browser_domains, "urls": browser_urls,
                         "titles": browser_titles, "duration": browser_duration}},
            "stopwatch": {{"stopwatch_events": stopwatch_events}}
        }};
        "#,
        window = buckets.window,
        afk = buckets.afk,
        chrome = buckets.chrome,
    );
    split_statements(&program)
}

/// The browser summary alone (the dashboard's Browser view).
pub fn browser_query(buckets: &DashboardBuckets) -> Vec<String> {
    let program = format!(
        r#"
        window = flood(query_bucket("{window}"));
        window = filter_keyvals_regex(window, "app", "(?i)^(google[-_ ]?chrome|chrome|chromium)");
        web = flood(query_bucket("{chrome}"));
        web = filter_period_intersect(web, window);
        web = split_url_events(web);
        domains = sort_by_duration(merge_events_by_keys(web, ["$domain"]));
        urls = limit_events(sort_by_duration(merge_events_by_keys(web, ["url"])), 100);
        RETURN = {{"domains": limit_events(domains, 100), "urls": urls, "duration": sum_durations(web)}};
        "#,
        window = buckets.window,
        chrome = buckets.chrome,
    );
    split_statements(&program)
}

/// Splits a program into `;`-terminated statements outside double-quoted
/// strings, one per line, as the dashboard sends it.
pub fn split_statements(program: &str) -> Vec<String> {
    let mut statements = Vec::new();
    let mut current = String::new();
    let mut in_string = false;
    let mut escaped = false;
    for character in program.chars() {
        current.push(character);
        if escaped {
            escaped = false;
        } else if character == '\\' && in_string {
            escaped = true;
        } else if character == '"' {
            in_string = !in_string;
        } else if character == ';' && !in_string {
            statements.push(current.trim().to_string());
            current.clear();
        }
    }
    if !current.trim().is_empty() {
        statements.push(format!("{};", current.trim()));
    }
    statements
}

/// The built-in dashboard's Year view of `host` from the day starting at
/// `first` to the one starting at `end` (dates in UTC) in `zone`: the
/// path and query of its one `/api/0/summary` request (docs/API.md 3.13).
pub fn year_summary_path(first: Timestamp, end: Timestamp, host: &str, zone: &str) -> String {
    let date = |t: Timestamp| t.to_string().get(..10).unwrap_or_default().to_string();
    format!(
        "/api/0/summary?start={}&end={}&by=app,title,category,domain,day&host={host}&tz={zone}&limit=20",
        date(first),
        date(end),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_split_outside_strings_only() {
        let lines = split_statements(r#"a = "x;y"; b = 1;"#);
        assert_eq!(lines, vec![r#"a = "x;y";"#, "b = 1;"]);
    }

    #[test]
    fn category_regexes_keep_single_backslashes() {
        let buckets = DashboardBuckets {
            window: "w".into(),
            afk: "a".into(),
            chrome: "c".into(),
        };
        let program = full_desktop_query(&buckets).join("\n");
        assert!(program.contains(r#"\.rs\b"#), "{program}");
        assert!(!program.contains(r"\\"));
    }
}
