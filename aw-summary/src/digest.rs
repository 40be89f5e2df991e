//! A day's answer as the cache keeps it and the fold reads it.
//!
//! The program of a week, month or year view answers each day with merged
//! event lists in JSON (`program.rs`, `Output::Merged`): a few hundred
//! kilobytes of timestamps, ids and nested objects on a busy day, of
//! which the fold reads keys, category names and seconds. [`Digest`]
//! keeps just those, in the pieces' order, so a year of days fits the
//! cache several times over and folding a kept day parses nothing. The
//! other outputs (a day's events, a search's matches) are kept as the
//! program returned them.

use std::mem::size_of;

use aw_models::Timestamp;
use serde_json::{Map, Value};

/// One day's answer of one host's program.
pub enum DayResult {
    /// Merged lists, digested (a result with a `duration`).
    Merged(Digest),
    /// Anything else, as the program returned it.
    Value(Value),
}

impl DayResult {
    /// Digests a merged result; keeps any other as it is.
    pub fn of(result: Value) -> DayResult {
        if result.get("duration").is_some() {
            DayResult::Merged(Digest::of(&result))
        } else {
            DayResult::Value(result)
        }
    }

    /// About what it takes in memory, for the cache's limit.
    pub fn bytes(&self) -> usize {
        match self {
            DayResult::Merged(digest) => digest.bytes(),
            DayResult::Value(value) => aw_cache::value_bytes(value),
        }
    }
}

/// A merged piece of `titles` that has an application and a title.
pub struct Title {
    pub app: Box<str>,
    pub title: Box<str>,
    /// Its `$category`, an index into [`Digest::names`].
    pub category: Option<u32>,
    pub seconds: f64,
}

/// What the fold reads of a merged result, in the order of its pieces.
#[derive(Default)]
pub struct Digest {
    /// `duration`: the day's active seconds.
    pub seconds: f64,
    pub titles: Vec<Title>,
    /// The pieces of `categories` that have a `$category`: an index into
    /// `names`, and seconds.
    pub categories: Vec<(u32, f64)>,
    /// The category name lists the pieces use, each once.
    pub names: Vec<Vec<String>>,
    /// The pieces of `domains` with a `$domain`.
    pub domains: Vec<(Box<str>, f64)>,
    /// The pieces of `urls` with a `url`.
    pub urls: Vec<(Box<str>, f64)>,
    /// Whether the result had a `span` (the day view's first and last
    /// activity was asked for) and the earliest start and latest end of
    /// its pieces.
    pub has_span: bool,
    pub extent: Option<(Timestamp, Timestamp)>,
}

impl Digest {
    /// The digest of a merged result.
    pub fn of(result: &Value) -> Digest {
        let mut digest = Digest {
            seconds: result["duration"].as_f64().unwrap_or(0.0),
            has_span: result.get("span").is_some(),
            ..Digest::default()
        };
        for piece in pieces(result, "titles") {
            let (Some(app), Some(title)) = (piece.text("app"), piece.text("title")) else {
                continue;
            };
            let category = piece.category().map(|names| digest.name(names));
            digest.titles.push(Title {
                app: app.into(),
                title: title.into(),
                category,
                seconds: piece.seconds,
            });
        }
        for piece in pieces(result, "categories") {
            if let Some(names) = piece.category() {
                let index = digest.name(names);
                digest.categories.push((index, piece.seconds));
            }
        }
        for piece in pieces(result, "domains") {
            if let Some(domain) = piece.text("$domain") {
                digest.domains.push((domain.into(), piece.seconds));
            }
        }
        for piece in pieces(result, "urls") {
            if let Some(url) = piece.text("url") {
                digest.urls.push((url.into(), piece.seconds));
            }
        }
        for piece in pieces(result, "span") {
            let (start, end) = (piece.start, piece.end());
            digest.extent = Some(match digest.extent {
                Some((first, last)) => (first.min(start), last.max(end)),
                None => (start, end),
            });
        }
        digest
    }

    /// About what it takes in memory: itself, its lists and their text.
    pub fn bytes(&self) -> usize {
        let text = |list: &[(Box<str>, f64)]| -> usize {
            list.iter()
                .map(|(key, _)| size_of::<(Box<str>, f64)>() + key.len())
                .sum()
        };
        size_of::<Digest>()
            + self
                .titles
                .iter()
                .map(|t| size_of::<Title>() + t.app.len() + t.title.len())
                .sum::<usize>()
            + self.categories.len() * size_of::<(u32, f64)>()
            + self
                .names
                .iter()
                .map(|names| {
                    size_of::<Vec<String>>()
                        + names
                            .iter()
                            .map(|name| size_of::<String>() + name.len())
                            .sum::<usize>()
                })
                .sum::<usize>()
            + text(&self.domains)
            + text(&self.urls)
    }

    /// The category name list at `index`.
    pub fn names(&self, index: u32) -> &[String] {
        &self.names[index as usize]
    }

    fn name(&mut self, names: Vec<String>) -> u32 {
        let index = match self.names.iter().position(|known| *known == names) {
            Some(index) => index,
            None => {
                self.names.push(names);
                self.names.len() - 1
            }
        };
        u32::try_from(index).unwrap_or(u32::MAX)
    }
}

/// One event of a result, as the program wrote it.
pub(crate) struct Piece<'a> {
    pub start: Timestamp,
    pub seconds: f64,
    pub data: &'a Map<String, Value>,
}

/// The events of the list `list` of a result.
pub(crate) fn pieces<'a>(result: &'a Value, list: &str) -> impl Iterator<Item = Piece<'a>> {
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
    pub fn end(&self) -> Timestamp {
        Timestamp::from_nanos(
            self.start
                .nanos()
                .saturating_add((self.seconds * 1e9).round() as i64),
        )
    }

    /// The text of a key: a string as it is, anything else as JSON.
    pub fn text(&self, key: &str) -> Option<String> {
        self.data.get(key).map(text_of)
    }

    pub fn category(&self) -> Option<Vec<String>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_merged_result_keeps_what_the_fold_reads_in_order() {
        let piece = |app: &str, title: Option<&str>, seconds: f64| {
            let mut data = serde_json::json!({"app": app, "$category": ["Work", app]});
            if let Some(title) = title {
                data["title"] = title.into();
            }
            serde_json::json!({"timestamp": "2025-01-01T10:00:00Z", "duration": seconds, "data": data})
        };
        let result = serde_json::json!({
            "duration": 30.0,
            "titles": [piece("a", Some("x"), 10.0), piece("b", None, 5.0), piece("a", Some("y"), 15.0)],
            "categories": [piece("a", None, 25.0), piece("b", None, 5.0)],
            "domains": [{"timestamp": "2025-01-01T10:00:00Z", "duration": 3.0, "data": {"$domain": "example.org"}}],
            "urls": [],
            "span": [
                {"timestamp": "2025-01-01T11:00:00Z", "duration": 60.0, "data": {}},
                {"timestamp": "2025-01-01T09:00:00Z", "duration": 60.0, "data": {}},
            ],
        });
        let DayResult::Merged(digest) = DayResult::of(result) else {
            panic!("a result with a duration is merged");
        };
        assert_eq!(digest.seconds, 30.0);
        let titles: Vec<(&str, &str, f64)> = digest
            .titles
            .iter()
            .map(|t| (&*t.app, &*t.title, t.seconds))
            .collect();
        assert_eq!(titles, [("a", "x", 10.0), ("a", "y", 15.0)]);
        // One name list for both of a's titles and its category piece.
        assert_eq!(digest.names.len(), 2);
        assert_eq!(
            digest.names(digest.titles[1].category.unwrap()),
            ["Work", "a"]
        );
        assert_eq!(digest.categories.len(), 2);
        assert_eq!(&*digest.domains[0].0, "example.org");
        let (first, last) = digest.extent.unwrap();
        assert_eq!(first.to_string(), "2025-01-01T09:00:00Z");
        assert_eq!(last.to_string(), "2025-01-01T11:01:00Z");
        assert!(digest.bytes() > size_of::<Digest>());
        assert!(matches!(
            DayResult::of(serde_json::json!({"window": []})),
            DayResult::Value(_)
        ));
    }
}
