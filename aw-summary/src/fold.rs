//! Adding up what the program returns for each day and host: the totals
//! of a summary (`Totals`) and the matches of a search (`Matches`).

use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::{BuildHasher, Hash};

use aw_models::Timestamp;
use serde_json::Value;

use super::calendar::{Calendar, Day};
use super::digest::{pieces, DayResult, Digest, Piece};
use aw_models::summary::{By, DayRow, Match, Row, Summary, TimelineEvent};

#[derive(Default)]
struct DayTotal {
    seconds: f64,
    first: Option<Timestamp>,
    last: Option<Timestamp>,
    categories: BTreeMap<String, f64>,
}

/// A title's seconds and its category (the same for every event of a
/// title, as rules match the application and title).
type TitleTotal = (f64, Option<Vec<String>>);

/// A map of totals by text: a year's titles are hashed and looked up
/// once per title and day, and SipHash was a third of a warm summary's
/// time; foldhash (already the query language's) is seeded per map.
type Totaled<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// The running totals of a summary.
pub struct Totals<'a> {
    by: Vec<By>,
    calendar: &'a Calendar,
    seconds: f64,
    apps: Totaled<String, f64>,
    /// By application, then title.
    titles: Totaled<String, Totaled<String, TitleTotal>>,
    categories: Totaled<Vec<String>, f64>,
    domains: Totaled<String, f64>,
    urls: Totaled<String, f64>,
    hosts: Totaled<String, f64>,
    days: Vec<(Day, DayTotal)>,
    hours: [f64; 24],
    events: Vec<TimelineEvent>,
}

impl<'a> Totals<'a> {
    /// Nothing yet, for the groupings `by` over `days`.
    pub fn new(by: &[By], calendar: &'a Calendar, days: &[Day]) -> Totals<'a> {
        Totals {
            by: by.to_vec(),
            calendar,
            seconds: 0.0,
            apps: Totaled::default(),
            titles: Totaled::default(),
            categories: Totaled::default(),
            domains: Totaled::default(),
            urls: Totaled::default(),
            hosts: Totaled::default(),
            days: days.iter().map(|day| (*day, DayTotal::default())).collect(),
            hours: [0.0; 24],
            events: Vec::new(),
        }
    }

    fn wants(&self, by: By) -> bool {
        self.by.contains(&by)
    }

    /// Adds one day's result of one host: merged lists (`duration`,
    /// `titles`, `categories`, `domains`, `urls`, digested) or events
    /// (`window`, `browser`).
    pub fn add(&mut self, host: &str, day: &Day, result: &DayResult) {
        match result {
            DayResult::Merged(digest) => self.add_digest(host, day, digest),
            DayResult::Value(result) => self.add_events(host, day, result),
        }
    }

    fn add_seconds(&mut self, host: &str, seconds: f64) {
        self.seconds += seconds;
        self.hosts.add(host, seconds);
    }

    fn add_title(&mut self, app: &str, title: &str, seconds: f64, category: Option<&[String]>) {
        self.apps.add(app, seconds);
        if !self.wants(By::Title) {
            return;
        }
        let titles = match self.titles.get_mut(app) {
            Some(titles) => titles,
            None => self.titles.entry(app.to_string()).or_default(),
        };
        let entry = match titles.get_mut(title) {
            Some(entry) => entry,
            None => titles.entry(title.to_string()).or_default(),
        };
        entry.0 += seconds;
        if entry.1.is_none() {
            entry.1 = category.map(<[String]>::to_vec);
        }
    }

    fn add_digest(&mut self, host: &str, day: &Day, digest: &Digest) {
        self.add_seconds(host, digest.seconds);
        for title in &digest.titles {
            let category = title.category.map(|index| digest.names(index));
            self.add_title(&title.app, &title.title, title.seconds, category);
        }
        for &(index, seconds) in &digest.categories {
            self.categories.add(digest.names(index), seconds);
        }
        for (domain, seconds) in &digest.domains {
            self.domains.add(&**domain, *seconds);
        }
        if self.wants(By::Url) {
            for (url, seconds) in &digest.urls {
                self.urls.add(&**url, *seconds);
            }
        }
        if digest.has_span {
            self.add_day_span(day, digest);
        }
    }

    /// A day's figures from a merged result: its total, the active time's
    /// union for the first and last activity, the merged categories.
    fn add_day_span(&mut self, day: &Day, digest: &Digest) {
        let index = self
            .days
            .partition_point(|(each, _)| each.start < day.start);
        let Some((_, total)) = self.days.get_mut(index) else {
            return;
        };
        total.seconds += digest.seconds;
        if let Some((start, end)) = digest.extent {
            total.first = Some(total.first.map_or(start, |first| first.min(start)));
            total.last = Some(total.last.map_or(end, |last| last.max(end)));
        }
        for &(index, seconds) in &digest.categories {
            if let Some(top) = digest.names(index).first() {
                *total.categories.entry(top.clone()).or_default() += seconds;
            }
        }
    }

    fn add_events(&mut self, host: &str, day: &Day, result: &Value) {
        let seconds = pieces(result, "window").map(|piece| piece.seconds).sum();
        self.add_seconds(host, seconds);
        for piece in pieces(result, "window") {
            let (Some(app), Some(title)) = (piece.text("app"), piece.text("title")) else {
                continue;
            };
            let category = piece.category();
            self.add_title(&app, &title, piece.seconds, category.as_deref());
        }
        for piece in pieces(result, "window") {
            if let Some(category) = piece.category() {
                self.categories.add(category.as_slice(), piece.seconds);
            }
        }
        for piece in pieces(result, "browser") {
            if let Some(domain) = piece.text("$domain") {
                self.domains.add(&domain, piece.seconds);
            }
        }
        if self.wants(By::Url) {
            for piece in pieces(result, "browser") {
                if let Some(url) = piece.text("url") {
                    self.urls.add(&url, piece.seconds);
                }
            }
        }
        let index = self
            .days
            .partition_point(|(each, _)| each.start < day.start);
        let wants_hours = self.wants(By::Hour);
        let wants_events = self.wants(By::Events);
        for piece in pieces(result, "window") {
            let end = piece.end();
            if let Some((_, total)) = self.days.get_mut(index) {
                total.seconds += piece.seconds;
                total.first = Some(
                    total
                        .first
                        .map_or(piece.start, |first| first.min(piece.start)),
                );
                total.last = Some(total.last.map_or(end, |last| last.max(end)));
                if let Some(top) = piece.category().and_then(|names| names.into_iter().next()) {
                    *total.categories.entry(top).or_default() += piece.seconds;
                }
            }
            if wants_hours {
                let mut from = piece.start;
                while from < end {
                    let (hour, next) = self.calendar.hour_at(from);
                    let (hour, next) = (hour as usize, next.min(end));
                    self.hours[hour % 24] += next.duration_since(from).as_secs_f64();
                    from = next;
                }
            }
            if wants_events {
                self.events.push(TimelineEvent {
                    timestamp: piece.start,
                    duration: piece.seconds,
                    host: host.to_string(),
                    data: piece.data.clone(),
                });
            }
        }
    }

    /// The summary, its lists cut to `limit` rows.
    pub fn finish(mut self, mut summary: Summary, limit: usize) -> Summary {
        summary.duration = self.seconds;
        let ranked = |map: Totaled<String, f64>| {
            ranked(
                map.into_iter()
                    .map(|(key, seconds)| (row(key, seconds), seconds)),
                limit,
            )
        };
        for by in self.by.clone() {
            match by {
                By::App => summary.app = Some(ranked(std::mem::take(&mut self.apps))),
                By::Title => {
                    let rows =
                        std::mem::take(&mut self.titles)
                            .into_iter()
                            .flat_map(|(app, titles)| {
                                titles.into_iter().map(move |(title, (seconds, category))| {
                                    let mut row = row(title, seconds);
                                    row.app = Some(app.clone());
                                    row.category = category;
                                    (row, seconds)
                                })
                            });
                    summary.title = Some(self::ranked(rows, limit));
                }
                By::Category => {
                    let rows =
                        std::mem::take(&mut self.categories)
                            .into_iter()
                            .map(|(names, seconds)| {
                                let mut row = row(names.join(" > "), seconds);
                                row.category = Some(names);
                                (row, seconds)
                            });
                    summary.category = Some(self::ranked(rows, limit));
                }
                By::Domain => summary.domain = Some(ranked(std::mem::take(&mut self.domains))),
                By::Url => summary.url = Some(ranked(std::mem::take(&mut self.urls))),
                By::Host => summary.host = Some(ranked(std::mem::take(&mut self.hosts))),
                By::Day => {
                    summary.day = Some(
                        self.days
                            .iter()
                            .map(|(day, total)| DayRow {
                                date: day.date.to_string(),
                                start: day.start,
                                duration: total.seconds,
                                first: total.first,
                                last: total.last,
                                categories: total.categories.clone(),
                            })
                            .collect(),
                    )
                }
                By::Hour => {
                    summary.hour = Some(
                        self.hours
                            .iter()
                            .enumerate()
                            .map(|(hour, seconds)| row(format!("{hour:02}:00"), *seconds))
                            .collect(),
                    )
                }
                By::Events => {
                    let mut events = std::mem::take(&mut self.events);
                    events.sort_by_key(|event| event.timestamp);
                    summary.events = Some(events);
                }
            }
        }
        summary
    }
}

/// The maps of totals by text (or by category names).
trait TotalMap<Q: ?Sized> {
    /// Adds `seconds` to the total of `key`, copying the key only when new.
    fn add(&mut self, key: &Q, seconds: f64);
}

impl<Q, S> TotalMap<Q> for HashMap<Q::Owned, f64, S>
where
    Q: ToOwned + Hash + Eq + ?Sized,
    Q::Owned: Hash + Eq + Borrow<Q>,
    S: BuildHasher,
{
    fn add(&mut self, key: &Q, seconds: f64) {
        match self.get_mut(key) {
            Some(total) => *total += seconds,
            None => {
                self.insert(key.to_owned(), seconds);
            }
        }
    }
}

fn row(key: String, seconds: f64) -> Row {
    Row {
        key,
        duration: seconds,
        app: None,
        category: None,
    }
}

/// Longest first (equal ones by key), at most `limit`.
fn ranked(rows: impl Iterator<Item = (Row, f64)>, limit: usize) -> Vec<Row> {
    let mut rows: Vec<(Row, f64)> = rows.collect();
    rows.sort_by(|(a, a_seconds), (b, b_seconds)| {
        b_seconds
            .total_cmp(a_seconds)
            .then_with(|| a.key.cmp(&b.key))
            .then_with(|| a.app.cmp(&b.app))
    });
    rows.truncate(limit);
    rows.into_iter().map(|(row, _)| row).collect()
}

struct Found {
    hosts: BTreeSet<String>,
    seconds: f64,
    first: Timestamp,
    last: Timestamp,
    days: BTreeSet<String>,
}

/// The running matches of a search, by kind, key and application.
#[derive(Default)]
pub struct Matches {
    found: HashMap<(&'static str, String, Option<String>), Found>,
    seconds: f64,
}

impl Matches {
    /// Adds one day's result of one host (`window`, `browser` and
    /// `browser_titles`).
    pub fn add(&mut self, host: &str, day: &Day, result: &Value) {
        let mut seen = HashSet::new();
        for piece in pieces(result, "window") {
            self.seconds += piece.seconds;
            if let Some(title) = piece.text("title") {
                self.note(("title", title, piece.text("app")), host, day, &piece);
            }
        }
        for piece in pieces(result, "browser") {
            if let Some(url) = piece.text("url") {
                seen.insert((piece.start, url.clone()));
                self.note(("url", url, None), host, day, &piece);
            }
        }
        for piece in pieces(result, "browser_titles") {
            if let Some(title) = piece.text("title") {
                // A tab whose URL matched is already counted by its URL.
                if !seen.contains(&(piece.start, piece.text("url").unwrap_or_default())) {
                    self.note(("tab", title, None), host, day, &piece);
                }
            }
        }
    }

    fn note(
        &mut self,
        key: (&'static str, String, Option<String>),
        host: &str,
        day: &Day,
        piece: &Piece,
    ) {
        let end = piece.end();
        let found = self.found.entry(key).or_insert_with(|| Found {
            hosts: BTreeSet::new(),
            seconds: 0.0,
            first: piece.start,
            last: end,
            days: BTreeSet::new(),
        });
        found.hosts.insert(host.to_string());
        found.seconds += piece.seconds;
        found.first = found.first.min(piece.start);
        found.last = found.last.max(end);
        found.days.insert(day.date.to_string());
    }

    /// Active seconds on matching window titles, and the matches, longest
    /// first, at most `limit`.
    pub fn finish(self, limit: usize) -> (f64, Vec<Match>) {
        let mut matches: Vec<Match> = self
            .found
            .into_iter()
            .map(|((kind, key, app), found)| Match {
                kind: kind.to_string(),
                key,
                app,
                hosts: found.hosts.into_iter().collect(),
                duration: found.seconds,
                first: found.first,
                last: found.last,
                days: found.days.into_iter().collect(),
            })
            .collect();
        matches.sort_by(|a, b| {
            b.duration
                .total_cmp(&a.duration)
                .then_with(|| a.kind.cmp(&b.kind))
                .then_with(|| a.key.cmp(&b.key))
        });
        matches.truncate(limit);
        (self.seconds, matches)
    }
}
