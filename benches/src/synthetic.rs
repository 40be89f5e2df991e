//! Synthetic activity for the query benchmarks: a user's window, afk and
//! browser events over a number of days, deterministic for a given seed.
//!
//! Sizes follow a heavy real user: per day about 820 window events, 33
//! afk events and 630 web events (a year: ~300k window, ~12k afk, ~230k
//! web). Window events follow each other with gaps of 0–3 s and
//! occasional overlaps, so `flood` has work to do; titles carry counters
//! and file names so there are thousands of distinct titles.

use aw_models::{Data, Duration, Event, Timestamp};
use serde_json::{json, Value};

/// A tiny deterministic generator (SplitMix64), so the data set needs no
/// extra dependency and is the same on every run.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator starting from `seed`.
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

    /// A number in `0..bound`.
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound.max(1)
    }

    /// One of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// The three buckets of one synthetic user.
#[derive(Debug, Clone, Default)]
pub struct Activity {
    /// `aw-watcher-window` events: `app`, `title`.
    pub window: Vec<Event>,
    /// `aw-watcher-afk` events: `status`.
    pub afk: Vec<Event>,
    /// `aw-watcher-web` events: `url`, `title`, `audible`, `incognito`, `tabCount`.
    pub web: Vec<Event>,
}

const NON_BROWSER_APPS: &[(&str, &[&str])] = &[
    (
        "code",
        &[
            "main.rs - aw-server - Visual Studio Code",
            "lib.rs - aw-query",
            "Cargo.toml",
            "README.md - notes",
        ],
    ),
    (
        "vim",
        &[
            "~/src/aw-server/aw-query/src/parser.rs",
            "~/.config/nvim/init.lua",
            "/tmp/scratch.txt",
        ],
    ),
    (
        "Alacritty",
        &["zsh: ~/src", "cargo test", "htop", "ssh build@ci"],
    ),
    (
        "Slack",
        &[
            "general | Team",
            "random | Team",
            "dm | Alice",
            "(3) Slack | Team",
        ],
    ),
    (
        "Thunderbird",
        &["Inbox - Mail", "Write: Re: release", "(12) Inbox"],
    ),
    (
        "Spotify",
        &["Spotify Premium", "Daft Punk - Around the World"],
    ),
    (
        "Gimp",
        &["[Untitled]-1.0 (RGB color 8-bit gamma integer)", "logo.xcf"],
    ),
    ("zoom", &["Zoom Meeting", "Zoom - Free Account"]),
    ("Blender", &["Blender [scene.blend]"]),
    ("Telegram", &["Telegram (4)", "Saved Messages"]),
    (
        "libreoffice-writer",
        &["report.odt - LibreOffice Writer", "Untitled 1"],
    ),
    ("Steam", &["Steam", "RimWorld"]),
];

const BROWSERS: &[&str] = &["Firefox", "firefox", "Google-chrome"];

const SITES: &[(&str, &[&str])] = &[
    (
        "github.com",
        &[
            "/ActivityWatch/aw-server-rust",
            "/ActivityWatch/aw-webui/pulls",
            "/notifications",
            "/rust-lang/rust/issues",
        ],
    ),
    ("www.youtube.com", &["/watch", "/", "/feed/subscriptions"]),
    (
        "stackoverflow.com",
        &["/questions/tagged/rust", "/questions/123456/how-to"],
    ),
    (
        "docs.rs",
        &["/serde_json/latest/serde_json/", "/regex/latest/regex/"],
    ),
    ("mail.google.com", &["/mail/u/0/", "/mail/u/0/#inbox"]),
    ("www.reddit.com", &["/r/rust/", "/r/programming/", "/"]),
    ("news.ycombinator.com", &["/", "/item"]),
    (
        "en.wikipedia.org",
        &["/wiki/Rust_(programming_language)", "/wiki/SQLite"],
    ),
    ("localhost:5600", &["/", "/#/activity/laptop/view/"]),
    ("meet.google.com", &["/abc-defg-hij"]),
    ("twitter.com", &["/home", "/notifications"]),
    ("open.spotify.com", &["/playlist/37i9dQZF1DXcBWIGoYBM5M"]),
];

fn data(value: Value) -> Data {
    match value {
        Value::Object(map) => map,
        _ => Data::new(),
    }
}

/// `days` days of activity ending at `end`, newest last.
pub fn activity(days: u32, end: Timestamp, seed: u64) -> Activity {
    const DAY: i64 = 86_400;
    let mut rng = Rng::new(seed);
    let mut activity = Activity::default();
    let start = end.nanos() - i64::from(days) * DAY * 1_000_000_000;
    let mut next_id = 1;
    let mut id = || {
        next_id += 1;
        next_id
    };
    let at = |secs: i64| Timestamp::from_nanos(start + secs * 1_000_000_000);
    for day in 0..i64::from(days) {
        // Active from 8:00 for about 12 hours, in sessions broken by afk time.
        let mut t = day * DAY + 8 * 3600 + rng.below(1800) as i64;
        let day_end = day * DAY + 20 * 3600;
        while t < day_end {
            let session = 900 + rng.below(1800) as i64;
            let session_end = (t + session).min(day_end);
            activity.afk.push(Event {
                id: Some(id()),
                timestamp: at(t),
                duration: Duration::from_secs(session_end - t),
                data: data(json!({"status": "not-afk"})),
            });
            while t < session_end {
                let length = 5 + rng.below(55) as i64;
                let browser = rng.below(100) < 45;
                let (app, title) = if browser {
                    let (host, paths) = rng.pick(SITES);
                    let path = rng.pick(paths);
                    let title = format!("{host}{path} ({}) - Browser", rng.below(40));
                    let url = format!("https://{host}{path}?page={}", rng.below(20));
                    // The web watcher records the tab in shorter events.
                    let mut u = t;
                    while u < t + length {
                        let piece = (5 + rng.below(30) as i64).min(t + length - u);
                        activity.web.push(Event {
                            id: Some(id()),
                            timestamp: at(u),
                            duration: Duration::from_secs(piece),
                            data: data(json!({
                                "url": url,
                                "title": title,
                                "audible": rng.below(10) == 0,
                                "incognito": false,
                                "tabCount": 3 + rng.below(20),
                            })),
                        });
                        u += piece;
                    }
                    (rng.pick(BROWSERS).to_string(), title)
                } else {
                    let (app, titles) = rng.pick(NON_BROWSER_APPS);
                    let title = rng.pick(titles);
                    let title = if rng.below(4) == 0 {
                        format!("{title} [{}]", rng.below(50))
                    } else {
                        title.to_string()
                    };
                    (app.to_string(), title)
                };
                // Gaps of 0–3 s, and now and then an overlap of a second.
                let gap = rng.below(5) as i64 - 1;
                activity.window.push(Event {
                    id: Some(id()),
                    timestamp: at(t),
                    duration: Duration::from_secs(length + i64::from(gap < 0)),
                    data: data(json!({"app": app, "title": title})),
                });
                t += length + gap.max(0);
            }
            let away = 300 + rng.below(1800) as i64;
            activity.afk.push(Event {
                id: Some(id()),
                timestamp: at(session_end),
                duration: Duration::from_secs(away),
                data: data(json!({"status": "afk"})),
            });
            t = session_end + away;
        }
    }
    activity
}
