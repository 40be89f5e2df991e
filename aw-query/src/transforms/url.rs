//! `split_url_events`: URL parts as data keys (spec §7.13).

use std::collections::HashMap;

use std::sync::Arc;

use aw_models::{EventData, SharedEvent};

use crate::transforms::{address, edit_data, AddressMap};
use serde_json::Value as Json;

/// For each event whose `data.url` is an absolute URL, adds `$protocol`,
/// `$domain` (host without port and leading `www.`; the scheme for URLs
/// without host), `$path` and `$params` (query string without `?`).
/// Other events pass unchanged.
///
/// ```
/// # use aw_query::transforms::split_url_events;
/// # use aw_models::{Duration, SharedEvent, Timestamp};
/// let e = SharedEvent::new(Timestamp::from_nanos(0), Duration::ZERO,
///     serde_json::json!({"url": "https://www.github.com:443/ActivityWatch?tab=repos"}).as_object().unwrap().clone());
/// let out = split_url_events(vec![e]);
/// assert_eq!(out[0].data["$domain"], "github.com");
/// assert_eq!(out[0].data["$path"], "/ActivityWatch");
/// assert_eq!(out[0].data["$params"], "tab=repos");
/// ```
pub fn split_url_events(events: Vec<SharedEvent>) -> Vec<SharedEvent> {
    UrlSplitter::default().split(events)
}

/// [`split_url_events`] with memory: a query keeps one per period, so that
/// splitting a list again (the dashboard splits the browser events twice)
/// or splitting another list holding the same data reuses the first
/// results instead of parsing the URLs and comparing the parts again.
#[derive(Debug, Default)]
pub struct UrlSplitter {
    /// The data objects split so far (kept alive, so their addresses stay
    /// theirs): splitting one again changes nothing.
    done: AddressMap<Arc<EventData>>,
    /// Each distinct URL is parsed once: browser data objects differ in
    /// tab counts and titles far more often than in URLs.
    parsed: HashMap<String, Option<Parts>, foldhash::fast::RandomState>,
}

impl UrlSplitter {
    /// `split_url_events(events)`.
    pub fn split(&mut self, mut events: Vec<SharedEvent>) -> Vec<SharedEvent> {
        let parsed = &mut self.parsed;
        let done = &self.done;
        // Each distinct object is edited in place when only this list
        // holds it (`edit_data`), so the inputs' data is not kept twice.
        let distinct = edit_data(
            &mut events,
            |_, data| {
                if done.contains_key(&address(data)) {
                    return None;
                }
                missing_url_parts(data, parsed)
            },
            |data, [protocol, domain, path, params]| {
                // In key order.
                data.insert_shared_all([
                    ("$domain", domain),
                    ("$params", params),
                    ("$path", path),
                    ("$protocol", protocol),
                ]);
            },
        );
        for data in distinct {
            self.done.entry(address(&data)).or_insert(data);
        }
        events
    }
}

/// `$protocol`, `$domain`, `$path`, `$params` of a URL (JSON strings),
/// shared by every object with that URL: a copy for each was four
/// allocations per distinct object, and ~15 MB of a year's browser data.
type Parts = [Arc<Json>; 4];

const PART_KEYS: [&str; 4] = ["$protocol", "$domain", "$path", "$params"];

/// The parts of `text`, `None` if it is not an absolute URL.
fn parts(text: &str) -> Option<Parts> {
    let url = url::Url::parse(text).ok()?;
    let domain = match url.host_str() {
        Some(host) if !host.is_empty() => host.strip_prefix("www.").unwrap_or(host),
        _ => url.scheme(),
    };
    let part = |text: &str| Arc::new(Json::String(text.to_string()));
    Some([
        part(url.scheme()),
        part(domain),
        part(url.path()),
        part(url.query().unwrap_or("")),
    ])
}

/// The parts of the URL of `data` to add to it: `None` if it has no
/// absolute URL, or already has them (as when a list is split twice).
/// URLs are parsed through `parsed`.
fn missing_url_parts(
    data: &EventData,
    parsed: &mut HashMap<String, Option<Parts>, foldhash::fast::RandomState>,
) -> Option<Parts> {
    let Some(Json::String(text)) = data.get("url") else {
        return None;
    };
    let found = match parsed.get(text.as_str()) {
        Some(found) => found,
        None => parsed.entry(text.clone()).or_insert_with(|| parts(text)),
    };
    let found = found.as_ref()?;
    let present = PART_KEYS
        .iter()
        .zip(found)
        .all(|(key, value)| data.get(key) == Some(&**value));
    (!present).then(|| found.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use aw_models::{Duration, Timestamp};
    use serde_json::json;

    #[test]
    fn splitting_twice_shares_the_first_result() {
        let data = json!({"url": "https://example.com/a?b=c"})
            .as_object()
            .cloned()
            .unwrap();
        let event = SharedEvent::new(Timestamp::from_nanos(0), Duration::ZERO, data);
        let once = split_url_events(vec![event.clone(), event]);
        assert!(std::sync::Arc::ptr_eq(&once[0].data, &once[1].data));
        let twice = split_url_events(once.clone());
        assert!(std::sync::Arc::ptr_eq(&once[0].data, &twice[0].data));
        assert_eq!(twice[0].data["$domain"], "example.com");
    }

    #[test]
    fn url_parts() {
        let cases = [
            (
                "https://github.com/ActivityWatch/aw-server?tab=repos",
                Some([
                    "https",
                    "github.com",
                    "/ActivityWatch/aw-server",
                    "tab=repos",
                ]),
            ),
            (
                "http://localhost:5600",
                Some(["http", "localhost", "/", ""]),
            ),
            ("about:blank", Some(["about", "about", "blank", ""])),
            (
                "file:///home/x.txt",
                Some(["file", "file", "/home/x.txt", ""]),
            ),
            ("not a url", None),
        ];
        for (url, expected) in cases {
            let data = json!({"url": url}).as_object().cloned().unwrap();
            let out = split_url_events(vec![SharedEvent::new(
                Timestamp::from_nanos(0),
                Duration::ZERO,
                data,
            )]);
            match expected {
                Some(parts) => {
                    for (key, value) in ["$protocol", "$domain", "$path", "$params"]
                        .iter()
                        .zip(parts)
                    {
                        assert_eq!(out[0].data[*key], value, "{url} {key}");
                    }
                }
                None => assert_eq!(out[0].data.len(), 1, "{url}"),
            }
        }
    }
}
