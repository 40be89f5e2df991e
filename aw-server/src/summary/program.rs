//! What counts as active time, written once as a query2 program: window
//! events flooded, kept only while the AFK watcher says `not-afk`,
//! categorized by the user's rules; browser tab events kept only while a
//! window of that browser is active. This is the program aw-webui's
//! activity view runs (its `src/queries.ts`); every summary, report, search
//! and the built-in dashboard's numbers come from it.

use std::collections::BTreeMap;

use aw_models::Bucket;
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
    /// Its window watcher's bucket.
    pub window: String,
    /// Its AFK watcher's bucket, if any.
    pub afk: Option<String>,
    /// Browser watcher buckets, with the regex of their browser's window
    /// `app` names.
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

/// The buckets of each of `hosts` (names [`hosts`] gave, in its order).
/// Browser buckets without a host name of their own (browser watchers
/// often send none) are read for the first host only when several are
/// summed, for every host when one is asked for alone: given to every host
/// of a sum, their time would be counted once per host.
pub fn host_buckets(buckets: &BTreeMap<String, Bucket>, hosts: &[String]) -> Vec<HostBuckets> {
    hosts
        .iter()
        .enumerate()
        .filter_map(|(index, host)| {
            let of_host = |kind: &str| {
                buckets
                    .values()
                    .filter(|b| b.kind == kind && &b.hostname == host)
                    .max_by_key(|b| b.metadata.end)
                    .map(|b| b.id.clone())
            };
            let window = of_host("currentwindow")?;
            let browsers = buckets
                .values()
                .filter(|b| b.kind == "web.tab.current")
                .filter(|b| &b.hostname == host || (index == 0 && is_hostless(b)))
                .filter_map(|b| {
                    BROWSERS
                        .iter()
                        .find(|(name, _)| b.id.contains(name))
                        .map(|(_, apps)| (b.id.clone(), *apps))
                })
                .collect();
            Some(HostBuckets {
                host: host.clone(),
                window,
                afk: of_host("afkstatus"),
                browsers,
            })
        })
        .collect()
}

fn is_hostless(bucket: &Bucket) -> bool {
    bucket.hostname.is_empty() || bucket.hostname == "unknown"
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
    let mut lines = vec![format!(
        "events = flood(query_bucket({}));",
        quote(&buckets.window)
    )];
    if let Some(afk) = &buckets.afk {
        lines.push(format!("not_afk = flood(query_bucket({}));", quote(afk)));
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

    #[test]
    fn hosts_come_most_recent_first_and_hostless_browsers_go_to_the_first() {
        let buckets: BTreeMap<_, _> = [
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
        ]
        .into_iter()
        .collect();
        let hosts = hosts(&buckets);
        assert_eq!(hosts, ["new", "old"]);
        let all = host_buckets(&buckets, &hosts);
        assert_eq!(all[0].afk.as_deref(), Some("aw-watcher-afk_new"));
        assert_eq!(all[0].browsers.len(), 1);
        assert_eq!(all[1].browsers[0].0, "aw-watcher-web-chrome_old");
        // Alone, the old host reads the hostless browser too.
        let alone = host_buckets(&buckets, &hosts[1..]);
        assert_eq!(alone[0].browsers.len(), 2);
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
