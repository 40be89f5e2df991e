//! `split_url_events`: URL parts as data keys (`docs/API.md` §7.13).

use std::collections::HashMap;

use std::sync::Arc;

use aw_models::{EventData, SharedEntries, SharedEvent};

use crate::address::{address, AddressMap};
use crate::transforms::{edit_data, edit_data_on_two};
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
    /// The addresses of the data objects split so far: splitting one
    /// again changes nothing.
    done: AddressMap<()>,
    /// Those objects, kept alive (so their addresses stay theirs) in the
    /// order they were split, which is the order they are freed in when
    /// the splitter is the last to hold them. Freed in the map's order
    /// instead, a year of objects went back to the allocator shuffled,
    /// and the next query's objects were placed in that order: every
    /// later pass over them missed the cache, and the next year query
    /// took ~1.2 times as long (benches/runs/2026-11-25-free-order.md).
    alive: Vec<Arc<EventData>>,
    /// Each distinct URL is parsed once: browser data objects differ in
    /// tab counts and titles far more often than in URLs.
    parsed: ParsedUrls,
}

impl UrlSplitter {
    /// How many data objects it holds.
    pub fn objects(&self) -> usize {
        self.done.len()
    }

    /// `split_url_events(events)`.
    pub fn split(&mut self, events: Vec<SharedEvent>) -> Vec<SharedEvent> {
        self.split_on(events, false)
    }

    /// `split_url_events(events)`, with the URLs of a long list's distinct
    /// objects parsed and attached on two threads when `spare_core` says
    /// that the query has a core with nothing else to do.
    pub fn split_on(&mut self, mut events: Vec<SharedEvent>, spare_core: bool) -> Vec<SharedEvent> {
        // A list split before (the dashboard splits its browser events
        // twice) has nothing to change: one lookup per event finds that,
        // instead of an edit's bookkeeping per distinct object.
        if !self.done.is_empty()
            && events
                .iter()
                .all(|event| self.done.contains_key(&address(&event.data)))
        {
            return events;
        }
        let done = &self.done;
        let parsed = &mut self.parsed;
        let decide = |data: &Arc<EventData>, parsed: &mut ParsedUrls| {
            if done.contains_key(&address(data)) {
                return None;
            }
            missing_url_parts(data, parsed)
        };
        let attach = |data: &mut EventData, parts: Parts| data.attach(&parts);
        // Each distinct object is edited in place when only this list
        // holds it (`edit_data`), so the inputs' data is not kept twice.
        let distinct = if spare_core && events.len() >= TWO_THREAD_SPLIT_EVENTS {
            // The second thread parses into a memory of its own, dropped
            // after: later splits of these objects find them done.
            let mut theirs = ParsedUrls::default();
            edit_data_on_two(
                &mut events,
                [
                    &mut |data: &Arc<EventData>| decide(data, parsed),
                    &mut |data: &Arc<EventData>| decide(data, &mut theirs),
                ],
                attach,
            )
        } else {
            edit_data(&mut events, |_, data| decide(data, parsed), attach)
        };
        for data in distinct {
            if self.done.insert(address(&data), ()).is_none() {
                self.alive.push(data);
            }
        }
        events
    }
}

/// Lists at least this long are split on two threads when a core is
/// spare: a year's browser events split faster on two, and a month's is
/// just over it (`benches/runs/2026-11-21-query-path-2.md`).
const TWO_THREAD_SPLIT_EVENTS: usize = 16_384;

/// Each distinct URL's parts (`None`: not an absolute URL).
type ParsedUrls = HashMap<String, Option<Parts>, foldhash::fast::RandomState>;

/// `$domain`, `$params`, `$path`, `$protocol` of a URL (JSON strings), one
/// block attached to every object with that URL: copies of the parts were
/// four allocations per distinct object, and copies of the objects' entries
/// with four more a large part of a year query's peak memory
/// (`benches/runs/2026-11-23-shared-values.md`).
type Parts = Arc<SharedEntries>;

/// The keys of [`Parts`].
const PART_KEYS: [&str; 4] = ["$domain", "$params", "$path", "$protocol"];

/// The parts of `text`, `None` if it is not an absolute URL.
fn parts(text: &str) -> Option<Parts> {
    let parsed;
    let [scheme, domain, path, query] = match plain_parts(text) {
        Some(plain) => plain,
        None => {
            parsed = url::Url::parse(text).ok()?;
            parser_parts(&parsed)
        }
    };
    let [domain_key, params_key, path_key, protocol_key] = PART_KEYS;
    let part = |text: &str| Json::String(text.to_string());
    Some(Arc::new(SharedEntries::new([
        (domain_key, part(domain)),
        (params_key, part(query)),
        (path_key, part(path)),
        (protocol_key, part(scheme)),
    ])))
}

/// Scheme, domain (the host without `www.`, or the scheme when there is
/// no host), path and query of a parsed URL.
fn parser_parts(url: &url::Url) -> [&str; 4] {
    let domain = match url.host_str() {
        Some(host) if !host.is_empty() => host.strip_prefix("www.").unwrap_or(host),
        _ => url.scheme(),
    };
    [url.scheme(), domain, url.path(), url.query().unwrap_or("")]
}

/// Scheme, domain, path and query of a plain `http` or `https` URL, read
/// off the text as [`parser_parts`] would give them; `None` for any other
/// text, which [`parts`] then parses with the `url` crate.
///
/// Parsing a URL in full (WHATWG rules: normalising, percent-encoding,
/// IDNA) was a visible part of a 1-day dashboard query
/// (`benches/runs/2026-11-23-compact-data.md`), while browser URLs are
/// nearly all written the way the parser would write them back. "Plain"
/// means exactly that: printable ASCII; a lowercase `http://` or
/// `https://`; a host of lowercase letters, digits, `-` and `.`-separated
/// non-empty labels, none starting `xn--` and the last starting with a
/// letter (so never an IPv4 address); no user, port or IPv6 host; a path
/// and query of characters the parser leaves as they are, and no `.` or
/// `..` segment. Anything else takes the full parse, and a test checks
/// that both give the same parts.
fn plain_parts(text: &str) -> Option<[&str; 4]> {
    let (scheme, rest) = if let Some(rest) = text.strip_prefix("https://") {
        ("https", rest)
    } else {
        ("http", text.strip_prefix("http://")?)
    };
    if !text.bytes().all(|byte| byte.is_ascii_graphic()) {
        return None;
    }
    let host_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (host, rest) = rest.split_at(host_end);
    if !plain_host(host) {
        return None;
    }
    let (before_fragment, _fragment) = rest.split_once('#').unwrap_or((rest, ""));
    let (path, query) = before_fragment
        .split_once('?')
        .unwrap_or((before_fragment, ""));
    let plain_path = path
        .bytes()
        .all(|byte| byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/%".contains(&byte))
        && !path
            .split('/')
            .any(|segment| segment == "." || segment == "..")
        && !path.contains("%2e")
        && !path.contains("%2E");
    let plain_query = query
        .bytes()
        .all(|byte| byte.is_ascii_alphanumeric() || b"-._~!$&()*+,;=:@/?%".contains(&byte));
    if !plain_path || !plain_query {
        return None;
    }
    let path = if path.is_empty() { "/" } else { path };
    let domain = host.strip_prefix("www.").unwrap_or(host);
    Some([scheme, domain, path, query])
}

/// Whether `host` is a domain name the URL parser keeps as it is.
fn plain_host(host: &str) -> bool {
    let mut labels = host.split('.').peekable();
    while let Some(label) = labels.next() {
        let plain = !label.is_empty()
            && !label.starts_with("xn--")
            && label
                .bytes()
                .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-');
        let last = labels.peek().is_none();
        if !plain || (last && !label.starts_with(|c: char| c.is_ascii_lowercase())) {
            return false;
        }
    }
    true
}

/// The parts of the URL of `data` to add to it: `None` if it has no
/// absolute URL, or already has them (as when a list is split twice).
/// URLs are parsed through `parsed`.
fn missing_url_parts(data: &EventData, parsed: &mut ParsedUrls) -> Option<Parts> {
    let Some(Json::String(text)) = data.get("url") else {
        return None;
    };
    let found = match parsed.get(text.as_str()) {
        Some(found) => found,
        None => parsed.entry(text.clone()).or_insert_with(|| parts(text)),
    };
    let found = found.as_ref()?;
    let present = PART_KEYS.iter().all(|key| data.get(key) == found.get(key));
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

    /// `events` events over `objects` shared data objects (event `i` holds
    /// object `i % objects`): plain URLs, URLs the full parser must read,
    /// texts that are no URL, and objects without a URL.
    fn long_list(events: usize, objects: usize) -> Vec<SharedEvent> {
        let data: Vec<Arc<EventData>> = (0..objects)
            .map(|n| {
                let value = match n % 4 {
                    0 => json!({"url": format!("https://www.site{}.example/p/{n}?q={n}", n % 97), "title": n}),
                    1 => json!({"url": format!("HTTP://Site{}.example:8080/a b/{n}", n % 13), "title": n}),
                    2 => json!({"url": format!("not a url {n}"), "title": n}),
                    _ => json!({"title": n}),
                };
                Arc::new(value.as_object().cloned().unwrap().into())
            })
            .collect();
        (0..events)
            .map(|i| SharedEvent {
                id: None,
                timestamp: Timestamp::from_nanos(i as i64),
                duration: Duration::ZERO,
                data: Arc::clone(&data[i % objects]),
            })
            .collect()
    }

    #[test]
    fn two_threads_split_a_long_list_as_one_does() {
        let (length, objects) = (TWO_THREAD_SPLIT_EVENTS + 1000, 3001);
        let alone = UrlSplitter::default().split_on(long_list(length, objects), false);
        let input = long_list(length, objects);
        // Objects another list holds are copied, not changed under it.
        let held: Vec<SharedEvent> = input.iter().step_by(7).cloned().collect();
        let held_before: Vec<EventData> = held.iter().map(|e| (*e.data).clone()).collect();
        let mut splitter = UrlSplitter::default();
        let shared = splitter.split_on(input, true);
        assert_eq!(shared.len(), alone.len());
        for (index, (two, one)) in shared.iter().zip(&alone).enumerate() {
            assert_eq!(two.data, one.data, "event {index}");
            // Events that shared an object still share one.
            let first = index % objects;
            assert!(Arc::ptr_eq(&two.data, &shared[first].data), "event {index}");
        }
        assert!(held
            .iter()
            .zip(&held_before)
            .all(|(e, before)| *e.data == *before));
        assert_eq!(shared[0].data["$domain"], "site0.example");
        assert_eq!(shared[1].data["$domain"], "site1.example");
        assert!(shared[2].data.get("$domain").is_none());
        // Split again: nothing changes, on either path.
        let again = splitter.split_on(shared.clone(), true);
        assert!(again
            .iter()
            .zip(&shared)
            .all(|(a, b)| Arc::ptr_eq(&a.data, &b.data)));
    }

    /// An event whose data is only `url`.
    fn event(url: &str) -> SharedEvent {
        let data = json!({"url": url}).as_object().cloned().unwrap();
        SharedEvent::new(Timestamp::from_nanos(0), Duration::ZERO, data)
    }

    #[test]
    fn a_splitter_splits_what_it_has_not_split_yet() {
        let mut splitter = UrlSplitter::default();
        let first = splitter.split(vec![event("https://a.example/x")]);
        assert_eq!(first[0].data["$domain"], "a.example");
        // Split before: handed back as it is.
        let again = splitter.split(first.clone());
        assert!(std::sync::Arc::ptr_eq(&again[0].data, &first[0].data));
        // One object split before, one not: the new one is split too.
        let mixed = splitter.split(vec![first[0].clone(), event("http://www.b.example/y?z=1")]);
        assert!(std::sync::Arc::ptr_eq(&mixed[0].data, &first[0].data));
        assert_eq!(mixed[1].data["$domain"], "b.example");
        assert_eq!(mixed[1].data["$params"], "z=1");
        assert_eq!(splitter.objects(), 2);
    }

    #[test]
    fn a_splitter_keeps_its_objects_in_the_order_it_split_them() {
        let mut splitter = UrlSplitter::default();
        let first = splitter.split(vec![
            event("https://c.example/"),
            event("https://a.example/"),
            event("https://b.example/"),
        ]);
        let second = splitter.split(vec![first[1].clone(), event("https://d.example/")]);
        // They are freed in this order when the splitter goes (see `alive`).
        let kept: Vec<usize> = splitter.alive.iter().map(address).collect();
        let split: Vec<usize> = first
            .iter()
            .chain(&second[1..])
            .map(|e| address(&e.data))
            .collect();
        assert_eq!(kept, split);
    }

    /// The parts as the `url` crate gives them, the reference for the
    /// plain fast path.
    fn parsed_parts(text: &str) -> Option<[String; 4]> {
        let url = url::Url::parse(text).ok()?;
        Some(parser_parts(&url).map(String::from))
    }

    fn check_plain(text: &str) {
        if let Some(plain) = plain_parts(text) {
            assert_eq!(
                Some(plain.map(String::from)),
                parsed_parts(text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn plain_urls_are_read_off_the_text_as_the_parser_reads_them() {
        for text in [
            "https://news.ycombinator.com/item?id=123",
            "https://www.github.com/ActivityWatch/aw-server?tab=repos#readme",
            "http://example.com",
            "http://example.com?q",
            "http://example.com#top",
            "http://example.com/a/b/?x=1&y=%20z",
            "https://a-b.c0.io/~user/file.tar.gz;v=1?k=v/w?z",
        ] {
            assert!(plain_parts(text).is_some(), "{text}");
            check_plain(text);
        }
        for text in [
            "HTTPS://example.com/",
            "https://Example.com/",
            "https://example.com:443/",
            "https://user@example.com/",
            "https://127.0.0.1/",
            "https://0x7f.1/",
            "https://xn--nxasmq6b.com/",
            "https://example.com/a/../b",
            "https://example.com/a/%2e%2E/b",
            "https://example.com/./b",
            "https://example.com/a b",
            "https://example.com/ä",
            "https://example.com/a\\b",
            "https://example.com/{x}",
            "https://example.com/?q='x'",
            "https:///example.com",
            "https://example..com/",
            "https://[::1]/",
            "ftp://example.com/",
        ] {
            assert!(plain_parts(text).is_none(), "{text}");
        }
    }

    /// URLs built from pieces: mostly plain, with pieces the parser
    /// rewrites (case, ports, IPv4 and punycode hosts, dot segments,
    /// characters it percent-encodes) mixed in, one piece in eight.
    fn built_url() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        use proptest::sample::select;
        fn pick(plain: &[&'static str], odd: &[&'static str]) -> BoxedStrategy<&'static str> {
            prop_oneof![7 => select(plain.to_vec()), 1 => select(odd.to_vec())].boxed()
        }
        let scheme = pick(
            &["https://", "http://"],
            &["HTTP://", "https:/", "ftp://", "https:"],
        );
        let userinfo = pick(&[""], &["user@", "a:b@", "@"]);
        let label = pick(
            &[
                "www",
                "example",
                "com",
                "a-b",
                "org",
                "io",
                "a1",
                "b-2c",
                "localhost",
                "-x",
                "x-",
            ],
            &[
                "0", "123", "0x7f", "1e", "Ex", "xn--p1ai", "a_b", "%41", "", "ä",
            ],
        );
        let port = pick(&[""], &[":80", ":443", ":8080", ":"]);
        let segment = pick(
            &[
                "a",
                "item",
                "",
                "x-y_z",
                "~u",
                "b.c",
                "p:q@r",
                ";v=1",
                "!$&()*+,=",
                "%41",
                "%zz",
            ],
            &[
                ".",
                "..",
                "%2e",
                "%2E.",
                ".well-known",
                "x'y",
                "q^",
                "{y}",
                "a b",
                "ä",
                "a|b",
                "a\\b",
                "[x]",
                "`",
            ],
        );
        let query_piece = pick(
            &[
                "id=1", "a=b&c=d", "", "q=a%20b", "s=/x?y", "x=1;y=2", "k=%zz",
            ],
            &["x'y", "q=a b", "^", "{}", "ä", "a\"b", "<>", "`"],
        );
        let fragment = pick(&["", "#top", "#"], &["#a b", "#ä", "#x'y", "#a#b"]);
        (
            scheme,
            userinfo,
            proptest::collection::vec(label, 1..4),
            port,
            proptest::collection::vec(segment, 0..4),
            proptest::option::of(proptest::collection::vec(query_piece, 0..3)),
            fragment,
        )
            .prop_map(
                |(scheme, userinfo, labels, port, segments, query, fragment)| {
                    let mut text = format!("{scheme}{userinfo}{}{port}", labels.join("."));
                    for segment in segments {
                        text.push('/');
                        text.push_str(segment);
                    }
                    if let Some(query) = query {
                        text.push('?');
                        text.push_str(&query.join("&"));
                    }
                    text.push_str(fragment);
                    text
                },
            )
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(5000))]
        #[test]
        fn the_plain_path_agrees_with_the_parser(text in built_url()) {
            check_plain(&text);
        }

        #[test]
        fn the_plain_path_agrees_with_the_parser_on_any_text(
            text in "(https?://)?[ -~]{0,30}"
        ) {
            check_plain(&text);
        }
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
