//! What counts as active time, written once as a query2 program: window
//! events flooded, kept only while the AFK watcher says `not-afk`,
//! categorized by the user's rules; browser tab events kept only while a
//! window of that browser is active. This is the program aw-webui's
//! activity view runs (its `src/queries.ts`); every summary, report, search
//! and the built-in dashboard's numbers come from it.

use std::collections::BTreeMap;

use aw_models::{is_hostless, Bucket, SYNCED_FROM};
use serde_json::Value;

/// Browser watcher bucket names to the window `app` names of that browser.
const BROWSERS: &[(&str, &str)] = &[
    ("chrome", "(?i)^(google[-_ ]?chrome|chrome|chromium)"),
    ("firefox", "(?i)(firefox|librewolf|waterfox|nightly)"),
    ("opera", "(?i)(opera)"),
    ("brave", "(?i)(brave)"),
    ("edge", "(?i)^(microsoft[-_ ]?edge|msedge)"),
    ("arc", "(?i)^arc(\\.exe)?$"),
    ("vivaldi", "(?i)(vivaldi)"),
    ("orion", "(?i)(orion)"),
    ("yandex", "(?i)(yandex)"),
    ("zen", "(?i)(zen)"),
    ("floorp", "(?i)(floorp)"),
    ("helium", "(?i)(helium)"),
];

/// The buckets a host's activity is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostBuckets {
    /// The host name.
    pub host: String,
    /// Its window watchers' buckets, oldest bucket first: where two
    /// cover the same time, the first counts.
    pub windows: Vec<String>,
    /// Its AFK watchers' buckets, in the same order.
    pub afks: Vec<String>,
    /// The browser watcher buckets whose time is this host's, with the
    /// regex of their browser's window `app` names.
    pub browsers: Vec<(String, &'static str)>,
}

/// The hosts with window data, most recently active first.
pub fn hosts(buckets: &BTreeMap<String, Bucket>) -> Vec<String> {
    let mut hosts: Vec<(Option<aw_models::Timestamp>, &str)> = buckets
        .values()
        .filter(|b| b.kind == "currentwindow" && !b.hostname.is_empty())
        .map(|b| (b.metadata.end, b.hostname.as_str()))
        .collect();
    hosts.sort_by(|a, b| b.cmp(a));
    let mut names: Vec<String> = Vec::new();
    for (_, host) in hosts {
        if !names.iter().any(|name| name == host) {
            names.push(host.to_string());
        }
    }
    names
}

/// The order in which a host's buckets of one kind count where they cover
/// the same time: the one created first, then by id. It depends on
/// nothing their events say, so an event (one dated in the future, say)
/// never changes what counts on another day.
fn precedence(a: &&Bucket, b: &&Bucket) -> std::cmp::Ordering {
    (a.created, &a.id).cmp(&(b.created, &b.id))
}

/// The buckets of each of `hosts` (names [`hosts`] gave, in its order):
/// every window and AFK bucket of the host, and the browser buckets whose
/// time is the host's ([`browser_host`]). `own_host` is the host name of
/// the machine this store serves.
pub fn host_buckets(
    buckets: &BTreeMap<String, Bucket>,
    hosts: &[String],
    own_host: &str,
) -> Vec<HostBuckets> {
    let own_host = own_window_host(buckets, own_host);
    hosts
        .iter()
        .filter_map(|host| {
            let of_host = |kind: &str| {
                let mut found: Vec<&Bucket> = buckets
                    .values()
                    .filter(|b| b.kind == kind && &b.hostname == host)
                    .collect();
                found.sort_by(precedence);
                found.into_iter().map(|b| b.id.clone()).collect::<Vec<_>>()
            };
            let windows = of_host("currentwindow");
            if windows.is_empty() {
                return None;
            }
            let browsers = buckets
                .values()
                .filter(|b| b.kind == "web.tab.current")
                .filter(|b| browser_host(b, own_host) == host)
                .filter_map(|b| {
                    BROWSERS
                        .iter()
                        .find(|(name, _)| b.id.contains(name))
                        .map(|(_, apps)| (b.id.clone(), *apps))
                })
                .collect();
            Some(HostBuckets {
                host: host.clone(),
                windows,
                afks: of_host("afkstatus"),
                browsers,
            })
        })
        .collect()
}

/// The host whose browser time a browser bucket holds: its own host name;
/// for one without (`unknown` or empty, as aw-watcher-web sent before it
/// used `!local`), the device named by a copy's id (`…-synced-from-HOST`),
/// else this machine's (`own_host`): its watcher sent to this server.
pub fn browser_host<'b>(bucket: &'b Bucket, own_host: &'b str) -> &'b str {
    if !is_hostless(&bucket.hostname) {
        return &bucket.hostname;
    }
    match bucket.id.split_once(SYNCED_FROM) {
        Some((_, origin)) if !origin.is_empty() => origin,
        _ => own_host,
    }
}

/// The host of this machine's window watcher: `own_host` when it has
/// window data, else the only host that has (a watcher that names its
/// machine otherwise than the system does), else `own_host`.
fn own_window_host<'b>(buckets: &'b BTreeMap<String, Bucket>, own_host: &'b str) -> &'b str {
    let mut window_hosts = buckets
        .values()
        .filter(|b| b.kind == "currentwindow" && !b.hostname.is_empty())
        .map(|b| b.hostname.as_str());
    let Some(first) = window_hosts.next() else {
        return own_host;
    };
    let mut only = Some(first);
    let mut has_own = first == own_host;
    for host in window_hosts {
        has_own |= host == own_host;
        if Some(host) != only {
            only = None;
        }
    }
    match only {
        Some(only) if !has_own => only,
        _ => own_host,
    }
}

/// What a program returns for each period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// `{"duration", "titles", "categories", "domains", "urls"}`: the
    /// total and the events merged by those keys, for totals; with `days`,
    /// also `"span"`, the active time's union (a few events a day), for a
    /// day's first and last activity.
    Merged {
        /// Whether `"span"` is wanted.
        days: bool,
    },
    /// `{"window": [...], "browser": [...]}`: the active events
    /// themselves, for days, hours and timelines.
    Events,
    /// `{"window", "browser", "browser_titles"}`: the active window events
    /// whose title matches a regex, the browser events whose URL does, and
    /// those whose title does.
    Matching(String),
}

/// The program that returns `output` for one host, given the
/// `categorize` rules; `browser`: whether browser events are wanted.
pub fn program(buckets: &HostBuckets, rules: &Value, browser: bool, output: &Output) -> String {
    let mut lines = Vec::new();
    united(&mut lines, "events", &buckets.windows);
    if !buckets.afks.is_empty() {
        united(&mut lines, "not_afk", &buckets.afks);
        lines.push("not_afk = filter_keyvals(not_afk, \"status\", [\"not-afk\"]);".into());
        lines.push("events = filter_period_intersect(events, not_afk);".into());
    }
    lines.push(format!("events = categorize(events, {});", literal(rules)));
    lines.push("browser_events = [];".into());
    if browser {
        for (index, (id, apps)) in buckets.browsers.iter().enumerate() {
            let name = format!("browser_{index}");
            lines.push(format!("{name} = flood(query_bucket({}));", quote(id)));
            lines.push(format!(
                "{name}_window = filter_keyvals_regex(events, \"app\", {});",
                quote(apps)
            ));
            lines.push(format!(
                "{name} = filter_period_intersect({name}, {name}_window);"
            ));
            lines.push(format!("{name} = split_url_events({name});"));
            lines.push(format!("browser_events = concat(browser_events, {name});"));
        }
    }
    match output {
        Output::Merged { days } => {
            // Events lacking a key are left out of a merge, as the
            // dashboards' top lists leave them out; the total counts them.
            let span = if *days {
                ", \"span\": period_union(events, [])"
            } else {
                ""
            };
            lines.push(format!(
                "RETURN = {{\"duration\": sum_durations(events), \
                 \"titles\": merge_events_by_keys(events, [\"app\", \"title\", \"$category\"]), \
                 \"categories\": merge_events_by_keys(events, [\"$category\"]), \
                 \"domains\": merge_events_by_keys(browser_events, [\"$domain\"]), \
                 \"urls\": merge_events_by_keys(browser_events, [\"url\"]){span}}};"
            ));
        }
        Output::Events => {
            lines.push("RETURN = {\"window\": events, \"browser\": browser_events};".into());
        }
        Output::Matching(regex) => {
            let regex = quote(regex);
            lines.push(format!(
                "events = filter_keyvals_regex(events, \"title\", {regex});"
            ));
            lines.push(format!(
                "RETURN = {{\"window\": events, \
                 \"browser\": filter_keyvals_regex(browser_events, \"url\", {regex}), \
                 \"browser_titles\": filter_keyvals_regex(browser_events, \"title\", {regex})}};"
            ));
        }
    }
    lines.join("\n")
}

/// Lines that set `name` to the flooded events of `ids`, each bucket's
/// only where the ones before it have none.
fn united(lines: &mut Vec<String>, name: &str, ids: &[String]) {
    for (index, id) in ids.iter().enumerate() {
        let read = format!("flood(query_bucket({}))", quote(id));
        lines.push(match index {
            0 => format!("{name} = {read};"),
            _ => format!("{name} = union_no_overlap({name}, {read});"),
        });
    }
}

/// A query language string literal.
fn quote(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\\\""))
}

/// JSON for the query language, whose strings keep every backslash but the
/// one before a quote: a JSON-escaped backslash is written single, as
/// aw-webui writes its category rules.
pub fn literal(value: &Value) -> String {
    value.to_string().replace("\\\\", "\\")
}

#[cfg(test)]
mod tests {
    use super::*;
    use aw_models::Timestamp;

    fn bucket(id: &str, kind: &str, host: &str, end: &str) -> (String, Bucket) {
        let bucket: Bucket = serde_json::from_value(serde_json::json!({
            "id": id, "type": kind, "client": "test", "hostname": host,
        }))
        .unwrap();
        let mut bucket = bucket;
        bucket.metadata.end = Some(Timestamp::parse(end).unwrap());
        (id.to_string(), bucket)
    }

    fn map(list: Vec<(String, Bucket)>) -> BTreeMap<String, Bucket> {
        list.into_iter().collect()
    }

    #[test]
    fn hosts_come_most_recent_first_and_hostless_browsers_are_this_machines() {
        let buckets = map(vec![
            bucket(
                "aw-watcher-window_old",
                "currentwindow",
                "old",
                "2026-01-01T00:00:00Z",
            ),
            bucket(
                "aw-watcher-window_new",
                "currentwindow",
                "new",
                "2026-11-01T00:00:00Z",
            ),
            bucket(
                "aw-watcher-afk_new",
                "afkstatus",
                "new",
                "2026-11-01T00:00:00Z",
            ),
            bucket(
                "aw-watcher-web-firefox",
                "web.tab.current",
                "unknown",
                "2026-11-01T00:00:00Z",
            ),
            bucket(
                "aw-watcher-web-chrome_old",
                "web.tab.current",
                "old",
                "2026-01-01T00:00:00Z",
            ),
        ]);
        let hosts = hosts(&buckets);
        assert_eq!(hosts, ["new", "old"]);
        // This machine is `old`: the hostless bucket is its, summed or alone.
        let all = host_buckets(&buckets, &hosts, "old");
        assert_eq!(all[0].afks, ["aw-watcher-afk_new"]);
        assert!(all[0].browsers.is_empty());
        let ids = |host: &HostBuckets| {
            host.browsers
                .iter()
                .map(|b| b.0.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            ids(&all[1]),
            ["aw-watcher-web-chrome_old", "aw-watcher-web-firefox"]
        );
        let alone = host_buckets(&buckets, &hosts[..1], "old");
        assert!(
            alone[0].browsers.is_empty(),
            "never a host that sent no browser data"
        );
        // A machine with no window data of its own: the hostless bucket is nobody's.
        let elsewhere = host_buckets(&buckets, &hosts, "hub");
        assert_eq!(ids(&elsewhere[1]), ["aw-watcher-web-chrome_old"]);
        assert!(elsewhere[0].browsers.is_empty());
    }

    #[test]
    fn a_copy_without_a_host_is_the_device_its_id_names() {
        let buckets = map(vec![
            bucket(
                "aw-watcher-window_a",
                "currentwindow",
                "a",
                "2026-11-01T00:00:00Z",
            ),
            bucket(
                "aw-watcher-window_b",
                "currentwindow",
                "b",
                "2026-11-01T00:00:00Z",
            ),
            bucket(
                "aw-watcher-web-firefox-synced-from-b",
                "web.tab.current",
                "",
                "2026-11-01T00:00:00Z",
            ),
        ]);
        let all = host_buckets(&buckets, &hosts(&buckets), "a");
        let b = all.iter().find(|host| host.host == "b").unwrap();
        assert_eq!(b.browsers.len(), 1);
        assert!(all
            .iter()
            .find(|host| host.host == "a")
            .unwrap()
            .browsers
            .is_empty());
    }

    #[test]
    fn one_window_host_named_otherwise_than_the_machine_is_the_machines() {
        let buckets = map(vec![
            bucket(
                "aw-watcher-window_me",
                "currentwindow",
                "me",
                "2026-11-01T00:00:00Z",
            ),
            bucket(
                "aw-watcher-web-firefox",
                "web.tab.current",
                "unknown",
                "2026-11-01T00:00:00Z",
            ),
        ]);
        let all = host_buckets(&buckets, &hosts(&buckets), "me.fritz.box");
        assert_eq!(all[0].browsers.len(), 1);
    }

    #[test]
    fn every_window_and_afk_bucket_of_a_host_counts_the_first_made_first() {
        let mut buckets = map(vec![
            bucket(
                "aw-watcher-window_h",
                "currentwindow",
                "h",
                "2026-11-01T00:00:00Z",
            ),
            bucket(
                "aw-watcher-window-wayland_h",
                "currentwindow",
                "h",
                "2099-01-01T00:00:00Z",
            ),
            bucket("aw-watcher-afk_h", "afkstatus", "h", "2026-11-01T00:00:00Z"),
            bucket(
                "aw-watcher-afk-2_h",
                "afkstatus",
                "h",
                "2026-11-01T00:00:00Z",
            ),
        ]);
        let made = |at: &str| Some(Timestamp::parse(at).unwrap());
        buckets.get_mut("aw-watcher-window_h").unwrap().created = made("2026-01-01T00:00:00Z");
        buckets
            .get_mut("aw-watcher-window-wayland_h")
            .unwrap()
            .created = made("2026-06-01T00:00:00Z");
        let all = host_buckets(&buckets, &hosts(&buckets), "h");
        assert_eq!(
            all[0].windows,
            ["aw-watcher-window_h", "aw-watcher-window-wayland_h"]
        );
        // No creation times: by id.
        assert_eq!(all[0].afks, ["aw-watcher-afk-2_h", "aw-watcher-afk_h"]);
        let text = program(&all[0], &serde_json::json!([]), false, &Output::Events);
        assert!(text.starts_with(
            "events = flood(query_bucket(\"aw-watcher-window_h\"));\n\
             events = union_no_overlap(events, flood(query_bucket(\"aw-watcher-window-wayland_h\")));\n\
             not_afk = flood(query_bucket(\"aw-watcher-afk-2_h\"));\n\
             not_afk = union_no_overlap(not_afk, flood(query_bucket(\"aw-watcher-afk_h\")));"
        ), "{text}");
    }

    #[test]
    fn rules_are_written_with_single_backslashes() {
        let rules = serde_json::json!([[["Dev"], {"type": "regex", "regex": "\\bvim\\b"}]]);
        assert_eq!(
            literal(&rules),
            r#"[[["Dev"],{"regex":"\bvim\b","type":"regex"}]]"#
        );
    }
}
