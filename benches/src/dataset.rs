//! A deterministic year of one person's activity on one host.
//!
//! This is the workload of `../shared/bench/README.md`: a window bucket
//! (`{app, title}`), a Chrome bucket (`{url, title, audible, incognito,
//! tabCount}`) and an AFK bucket (`{status}`), with busy weekday hours, gaps
//! at night and lighter weekends. Days start at 04:00 UTC, as the dashboard
//! counts them. The default spec gives, for 365 days, 535k events (window
//! 297k with 17k distinct titles over 60 apps, web 225k, AFK 12.6k with
//! 1,420 not-afk hours), a 90 MB export document: the reference workload's
//! shape within a few percent. `DatasetSpec::days` and
//! `DatasetSpec::events_per_day` scale it to see how cost grows with history.
//!
//! Everything is drawn from a seeded [`Rng`], so one spec always produces the
//! same events: figures from different runs and commits are comparable.

use std::io::{self, Write};

use aw_models::{Bucket, BucketMetadata, Data, Duration, Event, Timestamp};
use serde_json::{json, Value};

/// The size and shape of a generated dataset.
#[derive(Debug, Clone)]
pub struct DatasetSpec {
    /// Calendar days of history.
    pub days: u32,
    /// Average events a day over all three buckets (1,500 in the reference workload).
    pub events_per_day: u32,
    /// Host name in the bucket ids.
    pub hostname: String,
    /// Seed of the random stream.
    pub seed: u64,
    /// Start of day 0 (04:00 UTC).
    pub start: Timestamp,
}

impl Default for DatasetSpec {
    fn default() -> DatasetSpec {
        DatasetSpec {
            days: 365,
            events_per_day: 1_500,
            hostname: "benchhost".to_string(),
            seed: 0x5EED_2025,
            // Wednesday 2025-01-01, 04:00 UTC.
            start: Timestamp::from_nanos(1_735_704_000 * 1_000_000_000),
        }
    }
}

impl DatasetSpec {
    /// The default workload with `days` of history.
    pub fn with_days(days: u32) -> DatasetSpec {
        DatasetSpec {
            days,
            ..DatasetSpec::default()
        }
    }

    /// Id of the window bucket.
    pub fn window_bucket(&self) -> String {
        format!("aw-watcher-window_{}", self.hostname)
    }

    /// Id of the AFK bucket.
    pub fn afk_bucket(&self) -> String {
        format!("aw-watcher-afk_{}", self.hostname)
    }

    /// Id of the browser bucket.
    pub fn web_bucket(&self) -> String {
        format!("aw-watcher-web-chrome_{}", self.hostname)
    }

    /// Start of day `day` (04:00 UTC).
    pub fn day_start(&self, day: u32) -> Timestamp {
        self.start
            .saturating_add(Duration::from_secs(i64::from(day) * SECONDS_PER_DAY))
    }

    /// End of the generated history.
    pub fn end(&self) -> Timestamp {
        self.day_start(self.days)
    }
}

/// The generated events, oldest first in each bucket.
#[derive(Debug, Clone, Default)]
pub struct Dataset {
    /// `currentwindow` events.
    pub window: Vec<Event>,
    /// `afkstatus` events.
    pub afk: Vec<Event>,
    /// `web.tab.current` events.
    pub web: Vec<Event>,
}

impl Dataset {
    /// All events of the three buckets.
    pub fn len(&self) -> usize {
        self.window.len() + self.afk.len() + self.web.len()
    }

    /// Whether no event was generated.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

const SECONDS_PER_DAY: i64 = 86_400;
/// Not-afk sessions on an ordinary weekday at 1,500 events a day; the
/// weekly average, weekends and days off included, comes to ~17 (~34 AFK
/// events a day, ~12.6k a year).
const WEEKDAY_SESSIONS: f64 = 22.4;
/// Share of window events that are the browser (each yields ~2 web events).
const BROWSER_SHARE: f64 = 0.38;

/// Generates the dataset of `spec`, calling `progress(day)` after each day.
pub fn generate(spec: &DatasetSpec, mut progress: impl FnMut(u32)) -> Dataset {
    let mut rng = Rng::new(spec.seed);
    let catalog = Catalog::new(&mut rng);
    let scale = f64::from(spec.events_per_day) / 1_500.0;
    let mut dataset = Dataset::default();
    let mut tabs = 8_i64;
    for day in 0..spec.days {
        // 2025-01-01 is a Wednesday: day 0 is weekday index 2 (Monday = 0).
        let weekday = (day + 2) % 7;
        let level = if rng.chance(0.03) {
            0.0 // a day off: the computer stays off
        } else if weekday >= 5 {
            0.35 * rng.range_f64(0.3, 1.7)
        } else {
            rng.range_f64(0.75, 1.25)
        };
        let sessions = (WEEKDAY_SESSIONS * scale * level).round() as u32;
        let mut now = spec.day_start(day).saturating_add(Duration::from_secs(
            if weekday >= 5 { 6 } else { 4 } * 3600 + rng.range(0, 3600) as i64,
        ));
        for session in 0..sessions {
            let length = Duration::from_secs(rng.range(172, 1_420) as i64);
            let session_end = now.saturating_add(length);
            dataset
                .afk
                .push(event(now, length, json!({"status": "not-afk"})));
            simulate_session(
                &mut rng,
                &catalog,
                now,
                session_end,
                &mut tabs,
                &mut dataset,
            );
            let gap = if session + 1 == sessions {
                None
            } else if rng.chance(0.06) {
                Some(rng.range(1_800, 4_500)) // lunch, a meeting
            } else {
                Some(rng.range(60, 840))
            };
            if let Some(gap) = gap {
                let gap = Duration::from_secs(gap as i64);
                dataset
                    .afk
                    .push(event(session_end, gap, json!({"status": "afk"})));
                now = session_end.saturating_add(gap);
            }
        }
        progress(day);
    }
    dataset
}

/// Window events back to back from `start` to `end`, with web events under
/// the browser ones.
fn simulate_session(
    rng: &mut Rng,
    catalog: &Catalog,
    start: Timestamp,
    end: Timestamp,
    tabs: &mut i64,
    dataset: &mut Dataset,
) {
    let mut now = start;
    let mut previous: Option<(usize, usize)> = None;
    while now < end {
        let seconds = match rng.unit() {
            p if p < 0.62 => rng.range_f64(1.0, 10.0),
            p if p < 0.92 => rng.range_f64(10.0, 40.0),
            _ => rng.range_f64(40.0, 120.0),
        };
        let duration = Duration::from_millis((seconds * 1_000.0) as i64)
            .min(end.duration_since(now))
            .max(Duration::from_millis(1));
        let browser = rng.chance(BROWSER_SHARE);
        if browser {
            let page = catalog.pick_page(rng);
            if previous == Some((usize::MAX, page)) {
                continue; // a watcher would have merged it into the last event
            }
            previous = Some((usize::MAX, page));
            let title = format!("{} - Google Chrome", catalog.pages[page].1);
            dataset.window.push(event(
                now,
                duration,
                json!({"app": "Google-chrome", "title": title}),
            ));
            // One to three tab events share the window event's time.
            let pieces = rng.range(1, 4) as i64;
            let mut piece_start = now;
            for piece in 0..pieces {
                let piece_end = if piece + 1 == pieces {
                    now.saturating_add(duration)
                } else {
                    piece_start.saturating_add(Duration::from_nanos(duration.nanos() / pieces))
                };
                let page = if piece == 0 {
                    page
                } else {
                    catalog.pick_page(rng)
                };
                *tabs = (*tabs + rng.range(0, 3) as i64 - 1).clamp(1, 40);
                let (url, title) = &catalog.pages[page];
                let audible = catalog.is_media(url) && rng.chance(0.7);
                dataset.web.push(event(
                    piece_start,
                    piece_end.duration_since(piece_start),
                    json!({"url": url, "title": title, "audible": audible,
                           "incognito": rng.chance(0.01), "tabCount": *tabs}),
                ));
                piece_start = piece_end;
            }
        } else {
            let app = catalog.pick_app(rng);
            let title = catalog.pick_title(rng, app);
            if previous == Some((app, title)) {
                continue;
            }
            previous = Some((app, title));
            let (name, titles) = &catalog.apps[app];
            dataset.window.push(event(
                now,
                duration,
                json!({"app": name, "title": titles[title]}),
            ));
        }
        now = now.saturating_add(duration);
        // Watchers poll, so events are often a moment apart: gaps that
        // flood fills (under 5 s), as in real data.
        if rng.chance(0.25) {
            now = now.saturating_add(Duration::from_millis(rng.range(50, 3_000) as i64));
        }
    }
}

fn event(timestamp: Timestamp, duration: Duration, data: Value) -> Event {
    let Value::Object(data) = data else {
        unreachable!("every call passes a json! object literal")
    };
    Event::new(timestamp, duration, data)
}

/// Apps, titles and pages with Zipf-like popularity.
struct Catalog {
    apps: Vec<(String, Vec<String>)>,
    app_weights: Zipf,
    title_weights: Vec<Zipf>,
    pages: Vec<(String, String)>,
    page_weights: Zipf,
}

const APP_NAMES: [&str; 59] = [
    "Code",
    "Gnome-terminal",
    "Slack",
    "Firefox",
    "Thunderbird",
    "Spotify",
    "jetbrains-idea",
    "Emacs",
    "zoom",
    "discord",
    "Evince",
    "libreoffice-writer",
    "libreoffice-calc",
    "Nautilus",
    "obsidian",
    "Signal",
    "Alacritty",
    "kitty",
    "Gimp",
    "Inkscape",
    "vlc",
    "mpv",
    "Steam",
    "Gnome-control-center",
    "Postman",
    "DBeaver",
    "Zotero",
    "Anki",
    "KeePassXC",
    "Transmission",
    "Blender",
    "Audacity",
    "Krita",
    "Meld",
    "Gitg",
    "Wireshark",
    "Virt-manager",
    "Remmina",
    "Calibre",
    "Shotwell",
    "Rhythmbox",
    "Gedit",
    "Eog",
    "Baobab",
    "Gnome-calculator",
    "Gnome-system-monitor",
    "Insomnia",
    "Teams",
    "Telegram",
    "Element",
    "Okular",
    "Dolphin",
    "Konsole",
    "Kate",
    "Ghidra",
    "Qgis",
    "RStudio",
    "Jupyter",
    "Xournalpp",
];
const WORDS: [&str; 24] = [
    "report", "budget", "server", "notes", "design", "review", "draft", "plan", "invoice", "query",
    "schema", "release", "meeting", "todo", "roadmap", "thesis", "paper", "lecture", "trip",
    "photos", "backup", "config", "deploy", "metrics",
];
const DOMAINS: [&str; 24] = [
    "github.com",
    "stackoverflow.com",
    "docs.rs",
    "www.youtube.com",
    "mail.google.com",
    "news.ycombinator.com",
    "en.wikipedia.org",
    "www.reddit.com",
    "calendar.google.com",
    "open.spotify.com",
    "crates.io",
    "doc.rust-lang.org",
    "www.twitch.tv",
    "twitter.com",
    "www.linkedin.com",
    "drive.google.com",
    "www.amazon.com",
    "translate.google.com",
    "gitlab.com",
    "www.notion.so",
    "figma.com",
    "medium.com",
    "www.bbc.co.uk",
    "localhost:5600",
];

impl Catalog {
    fn new(rng: &mut Rng) -> Catalog {
        let mut apps = Vec::new();
        let mut title_weights = Vec::new();
        for (rank, name) in APP_NAMES.iter().enumerate() {
            // Popular apps see many distinct titles, rare ones a handful:
            // about 12k window titles in all, plus ~5k browser page titles.
            let pool = (3_000 / (rank + 1)).max(8);
            let titles = (0..pool)
                .map(|n| {
                    let word = WORDS[(n * 7 + rank) % WORDS.len()];
                    match rank % 4 {
                        0 => format!("{word}_{n}.rs - project{} - {name}", n % 13),
                        1 => format!("user@{}: ~/src/{word}/{n}", rng.range(1, 4)),
                        2 => format!("{word} {n} | {name}"),
                        _ => format!("{name} - {word} ({n})"),
                    }
                })
                .collect();
            apps.push((name.to_string(), titles));
            title_weights.push(Zipf::new(pool, 1.05));
        }
        let mut pages = Vec::new();
        for (rank, domain) in DOMAINS.iter().enumerate() {
            for n in 0..(1_200 / (rank + 1)).max(20) {
                let word = WORDS[(n + rank * 5) % WORDS.len()];
                let url = match n % 3 {
                    0 => format!("https://{domain}/{word}/{n}"),
                    1 => format!("https://{domain}/{word}?id={n}&tab=main"),
                    _ => format!("https://{domain}/{word}/{n}#section-{}", n % 5),
                };
                pages.push((url, format!("{word} {n} · {domain}")));
            }
        }
        let page_weights = Zipf::new(pages.len(), 0.9);
        // Shuffle so that popular pages are spread over popular domains.
        for index in (1..pages.len()).rev() {
            pages.swap(index, rng.range(0, index as u64 + 1) as usize);
        }
        Catalog {
            app_weights: Zipf::new(apps.len(), 1.1),
            apps,
            title_weights,
            pages,
            page_weights,
        }
    }

    fn pick_app(&self, rng: &mut Rng) -> usize {
        self.app_weights.sample(rng)
    }

    fn pick_title(&self, rng: &mut Rng, app: usize) -> usize {
        self.title_weights[app].sample(rng)
    }

    fn pick_page(&self, rng: &mut Rng) -> usize {
        self.page_weights.sample(rng)
    }

    fn is_media(&self, url: &str) -> bool {
        ["youtube", "spotify", "twitch"]
            .iter()
            .any(|site| url.contains(site))
    }
}

/// Ranks `0..n` with probability proportional to `1 / (rank + 1)^exponent`.
struct Zipf {
    cumulative: Vec<f64>,
}

impl Zipf {
    fn new(n: usize, exponent: f64) -> Zipf {
        let mut total = 0.0;
        let cumulative = (0..n)
            .map(|rank| {
                total += 1.0 / ((rank + 1) as f64).powf(exponent);
                total
            })
            .collect();
        Zipf { cumulative }
    }

    fn sample(&self, rng: &mut Rng) -> usize {
        let total = self.cumulative.last().copied().unwrap_or(0.0);
        let target = rng.unit() * total;
        self.cumulative
            .partition_point(|&weight| weight < target)
            .min(self.cumulative.len() - 1)
    }
}

/// SplitMix64: small, fast and good enough for workloads. Written here
/// rather than taken from a crate so the stream can never change under us
/// with a dependency update, which would silently change every dataset.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A stream determined by `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform integer in `[low, high)`.
    pub fn range(&mut self, low: u64, high: u64) -> u64 {
        low + self.next_u64() % (high - low).max(1)
    }

    /// Uniform float in `[low, high)`.
    pub fn range_f64(&mut self, low: f64, high: f64) -> f64 {
        low + self.unit() * (high - low)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
}

/// The three buckets of `spec` with their events, as an import expects.
pub fn buckets(spec: &DatasetSpec, dataset: Dataset) -> Vec<Bucket> {
    let bucket = |id: String, kind: &str, client: &str, events: Vec<Event>| Bucket {
        id,
        kind: kind.to_string(),
        client: client.to_string(),
        hostname: spec.hostname.clone(),
        created: Some(spec.start),
        data: Data::new(),
        metadata: BucketMetadata::default(),
        events: Some(events),
        last_updated: None,
    };
    vec![
        bucket(
            spec.window_bucket(),
            "currentwindow",
            "aw-watcher-window",
            dataset.window,
        ),
        bucket(
            spec.afk_bucket(),
            "afkstatus",
            "aw-watcher-afk",
            dataset.afk,
        ),
        bucket(
            spec.web_bucket(),
            "web.tab.current",
            "aw-watcher-web-chrome",
            dataset.web,
        ),
    ]
}

/// The dataset of `spec` as one export document per bucket, the way the
/// HTTP benches import it (a request per bucket); says on stderr what it
/// generates.
pub fn export_documents(spec: &DatasetSpec) -> io::Result<Vec<Vec<u8>>> {
    eprintln!("Generating {} days of history...", spec.days);
    let data = generate(spec, |_| {});
    eprintln!("{} events", data.len());
    buckets(spec, data)
        .into_iter()
        .map(|bucket| {
            let mut document = Vec::new();
            write_export(&[bucket], &mut document, |_| {}).map(|()| document)
        })
        .collect()
}

/// Writes buckets as one export document (`{"buckets": {...}}`), newest
/// event first as servers export them, calling `progress(events_written)`
/// every 10,000 events.
pub fn write_export(
    buckets: &[Bucket],
    mut out: impl Write,
    mut progress: impl FnMut(u64),
) -> io::Result<()> {
    let mut written = 0_u64;
    out.write_all(b"{\"buckets\":{")?;
    for (index, bucket) in buckets.iter().enumerate() {
        if index > 0 {
            out.write_all(b",")?;
        }
        serde_json::to_writer(&mut out, &bucket.id)?;
        out.write_all(b":")?;
        // The bucket without its events, then the events one by one, so no
        // second copy of the whole document is built in memory.
        let header = Bucket {
            events: None,
            ..bucket.clone()
        };
        let mut header = serde_json::to_value(&header)?;
        if let Some(fields) = header.as_object_mut() {
            fields.remove("events");
        }
        let header = serde_json::to_string(&header)?;
        out.write_all(&header.as_bytes()[..header.len() - 1])?;
        out.write_all(b",\"events\":[")?;
        for (position, event) in bucket.events.iter().flatten().rev().enumerate() {
            if position > 0 {
                out.write_all(b",")?;
            }
            serde_json::to_writer(&mut out, event)?;
            written += 1;
            if written.is_multiple_of(10_000) {
                progress(written);
            }
        }
        out.write_all(b"]}")?;
    }
    out.write_all(b"}}")?;
    progress(written);
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_events() {
        let spec = DatasetSpec::with_days(7);
        let first = generate(&spec, |_| {});
        let second = generate(&spec, |_| {});
        assert_eq!(first.window, second.window);
        assert_eq!(first.web, second.web);
        assert_eq!(first.afk, second.afk);
    }

    #[test]
    fn buckets_have_no_overlapping_events() {
        let data = generate(&DatasetSpec::with_days(14), |_| {});
        for events in [&data.window, &data.afk, &data.web] {
            for pair in events.windows(2) {
                assert!(pair[0].end() <= pair[1].timestamp, "{pair:?}");
            }
        }
    }

    #[test]
    fn export_document_parses_back() {
        let spec = DatasetSpec::with_days(3);
        let buckets = buckets(&spec, generate(&spec, |_| {}));
        let mut out = Vec::new();
        write_export(&buckets, &mut out, |_| {}).unwrap();
        let document: aw_models::ExportDocument = serde_json::from_slice(&out).unwrap();
        let parsed = document.into_buckets();
        assert_eq!(parsed.len(), 3);
        for bucket in parsed {
            let original = buckets.iter().find(|b| b.id == bucket.id).unwrap();
            let mut events = bucket.events.unwrap();
            events.reverse();
            assert_eq!(Some(events), original.events);
        }
    }
}
