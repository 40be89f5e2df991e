//! Adding up what the program returns for each day and host: the totals
//! of a summary (`Totals`) and the matches of a search (`Matches`).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use aw_models::Timestamp;
use serde_json::{Map, Value};

use super::calendar::{Calendar, Day};
use aw_models::summary::{By, DayRow, Match, Row, Summary, TimelineEvent};

/// One event of a result, as the program wrote it.
struct Piece<'a> {
    start: Timestamp,
    seconds: f64,
    data: &'a Map<String, Value>,
}

fn pieces<'a>(result: &'a Value, list: &str) -> impl Iterator<Item = Piece<'a>> {
    result
        .get(list)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|event| {
            let start = Timestamp::parse(event.get("timestamp")?.as_str()?).ok()?;
            let seconds = event.get("duration")?.as_f64()?;
            let data = event.get("data")?.as_object()?;
            Some(Piece {
                start,
                seconds,
                data,
            })
        })
}

impl Piece<'_> {
    fn end(&self) -> Timestamp {
        Timestamp::from_nanos(
            self.start
                .nanos()
                .saturating_add((self.seconds * 1e9).round() as i64),
        )
    }

    /// The text of a key: a string as it is, anything else as JSON.
    fn text(&self, key: &str) -> Option<String> {
        self.data.get(key).map(text_of)
    }

    fn category(&self) -> Option<Vec<String>> {
        let names = self.data.get("$category")?.as_array()?;
        Some(names.iter().map(text_of).collect())
    }
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

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

/// The running totals of a summary.
pub struct Totals<'a> {
    by: Vec<By>,
    calendar: &'a Calendar,
    seconds: f64,
    apps: HashMap<String, f64>,
    titles: HashMap<(String, String), TitleTotal>,
    categories: HashMap<Vec<String>, f64>,
    domains: HashMap<String, f64>,
    urls: HashMap<String, f64>,
    hosts: HashMap<String, f64>,
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
            apps: HashMap::new(),
            titles: HashMap::new(),
            categories: HashMap::new(),
            domains: HashMap::new(),
            urls: HashMap::new(),
            hosts: HashMap::new(),
            days: days.iter().map(|day| (*day, DayTotal::default())).collect(),
            hours: [0.0; 24],
            events: Vec::new(),
        }
    }

    fn wants(&self, by: By) -> bool {
        self.by.contains(&by)
    }

    /// Adds one day's result of one host: merged lists (`duration`,
    /// `titles`, `categories`, `domains`, `urls`) or events (`window`,
    /// `browser`).
    pub fn add(&mut self, host: &str, day: &Day, result: &Value) {
        let merged = result.get("duration").is_some();
        let (seconds, titles, categories, domains, urls) = if merged {
            (
                result["duration"].as_f64().unwrap_or(0.0),
                "titles",
                "categories",
                "domains",
                "urls",
            )
        } else {
            let seconds = pieces(result, "window").map(|piece| piece.seconds).sum();
            (seconds, "window", "window", "browser", "browser")
        };
        self.seconds += seconds;
        *self.hosts.entry(host.to_string()).or_default() += seconds;
        for piece in pieces(result, titles) {
            let (Some(app), Some(title)) = (piece.text("app"), piece.text("title")) else {
                continue;
            };
            *self.apps.entry(app.clone()).or_default() += piece.seconds;
            if self.wants(By::Title) {
                let entry = self.titles.entry((app, title)).or_default();
                entry.0 += piece.seconds;
                if entry.1.is_none() {
                    entry.1 = piece.category();
                }
            }
        }
        for piece in pieces(result, categories) {
            if let Some(category) = piece.category() {
                *self.categories.entry(category).or_default() += piece.seconds;
            }
        }
        for piece in pieces(result, domains) {
            if let Some(domain) = piece.text("$domain") {
                *self.domains.entry(domain).or_default() += piece.seconds;
            }
        }
        if self.wants(By::Url) {
            for piece in pieces(result, urls) {
                if let Some(url) = piece.text("url") {
                    *self.urls.entry(url).or_default() += piece.seconds;
                }
            }
        }
        if merged {
            if result.get("span").is_some() {
                self.add_day_span(day, seconds, result);
            }
        } else {
            self.add_events(host, day, result);
        }
    }

    /// A day's figures from a merged result: its total, the active time's
    /// union for the first and last activity, the merged categories.
    fn add_day_span(&mut self, day: &Day, seconds: f64, result: &Value) {
        let index = self
            .days
            .partition_point(|(each, _)| each.start < day.start);
        let Some((_, total)) = self.days.get_mut(index) else {
            return;
        };
        total.seconds += seconds;
        for piece in pieces(result, "span") {
            let end = piece.end();
            total.first = Some(
                total
                    .first
                    .map_or(piece.start, |first| first.min(piece.start)),
            );
            total.last = Some(total.last.map_or(end, |last| last.max(end)));
        }
        for piece in pieces(result, "categories") {
            if let Some(top) = piece.category().and_then(|names| names.into_iter().next()) {
                *total.categories.entry(top).or_default() += piece.seconds;
            }
        }
    }

    fn add_events(&mut self, host: &str, day: &Day, result: &Value) {
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
        let ranked = |map: HashMap<String, f64>| {
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
                    let rows = std::mem::take(&mut self.titles).into_iter().map(
                        |((app, title), (seconds, category))| {
                            let mut row = row(title, seconds);
                            row.app = Some(app);
                            row.category = category;
                            (row, seconds)
                        },
                    );
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
