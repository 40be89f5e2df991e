//! `split_url_events`: URL parts as data keys (spec §7.13).

use aw_models::{Data, SharedEvent};

use crate::transforms::Derived;
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
pub fn split_url_events(mut events: Vec<SharedEvent>) -> Vec<SharedEvent> {
    // URL parsing is done once per distinct data object (see `Derived`).
    let mut derived = Derived::default();
    // Data without an absolute URL is not memoized (it stays as it is).
    for event in &mut events {
        if let Ok(data) = derived.get(&event.data, with_url_parts) {
            event.data = data;
        }
    }
    events
}

/// A copy of `data` with the parts of its URL added (`None` if it already
/// has them, as when a list is split twice); `Err` if it has no absolute
/// URL.
fn with_url_parts(data: &Data) -> Result<Option<Data>, ()> {
    let Some(Json::String(text)) = data.get("url") else {
        return Err(());
    };
    let Ok(url) = url::Url::parse(text) else {
        return Err(());
    };
    let domain = match url.host_str() {
        Some(host) if !host.is_empty() => host.strip_prefix("www.").unwrap_or(host),
        _ => url.scheme(),
    };
    let parts = [
        ("$protocol", url.scheme()),
        ("$domain", domain),
        ("$path", url.path()),
        ("$params", url.query().unwrap_or("")),
    ];
    if parts
        .iter()
        .all(|(key, value)| data.get(*key).and_then(Json::as_str) == Some(*value))
    {
        return Ok(None);
    }
    let mut data = data.clone();
    for (key, value) in parts {
        data.insert(key.to_string(), Json::String(value.to_string()));
    }
    Ok(Some(data))
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
