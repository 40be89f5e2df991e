//! The arguments and answers of summaries and searches: what the API,
//! the `report` command and the MCP server exchange.

use std::collections::BTreeMap;
use std::fmt;

use crate::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A bad argument, named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentError {
    /// The argument's name as the API spells it (`start`, `by`, ...).
    pub argument: &'static str,
    /// What is wrong with it.
    pub message: String,
}

impl ArgumentError {
    /// An error of `argument`.
    pub fn new(argument: &'static str, message: impl Into<String>) -> ArgumentError {
        ArgumentError {
            argument,
            message: message.into(),
        }
    }
}

impl fmt::Display for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.argument, self.message)
    }
}

/// How a summary groups its time: each value of `by` adds one list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum By {
    /// Window time per application.
    App,
    /// Window time per application and window title.
    Title,
    /// Window time per category.
    Category,
    /// Browser time per domain.
    Domain,
    /// Browser time per URL.
    Url,
    /// Window time per host.
    Host,
    /// Window time per day, with the first and last activity.
    Day,
    /// Window time per hour of the local clock.
    Hour,
    /// The active window events themselves, oldest first.
    Events,
}

impl By {
    /// Every grouping, as the API spells them.
    pub const ALL: [(&'static str, By); 9] = [
        ("app", By::App),
        ("title", By::Title),
        ("category", By::Category),
        ("domain", By::Domain),
        ("url", By::Url),
        ("host", By::Host),
        ("day", By::Day),
        ("hour", By::Hour),
        ("events", By::Events),
    ];

    /// `app,title,...`: one or more groupings, each once.
    pub fn parse_list(text: &str) -> Result<Vec<By>, ArgumentError> {
        let mut list = Vec::new();
        for name in text.split(',').map(str::trim) {
            let by = By::ALL
                .iter()
                .find(|(known, _)| known.eq_ignore_ascii_case(name))
                .map(|(_, by)| *by)
                .ok_or_else(|| {
                    let known: Vec<&str> = By::ALL.iter().map(|(name, _)| *name).collect();
                    ArgumentError::new(
                        "by",
                        format!(
                            "'{name}' is not a grouping; use one or more of {}",
                            known.join(", ")
                        ),
                    )
                })?;
            if !list.contains(&by) {
                list.push(by);
            }
        }
        Ok(list)
    }

    /// Whether the grouping reads browser events.
    pub fn needs_browser(self) -> bool {
        matches!(self, By::Domain | By::Url)
    }

    /// Whether the grouping needs the active events themselves, not only
    /// their merged totals.
    pub fn needs_events(self) -> bool {
        matches!(self, By::Hour | By::Events)
    }
}

/// The arguments of a summary, as text from a request or command line.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Params {
    /// First instant: a date (that day's start) or an RFC 3339 time.
    pub start: Option<String>,
    /// End, exclusive: a date (that day's start) or an RFC 3339 time.
    pub end: Option<String>,
    /// Comma-separated groupings (default `app`).
    pub by: Option<String>,
    /// One host; all hosts when absent.
    pub host: Option<String>,
    /// IANA time zone (default the server's).
    pub tz: Option<String>,
    /// Rows per ranked grouping (default 100).
    pub limit: Option<usize>,
    /// Categories to use instead of those the settings hold (a list in
    /// aw-webui's format, as `classes`): a preview of categories being
    /// edited. Each rule is checked first.
    #[serde(default)]
    pub categories: Option<serde_json::Value>,
}

/// A summary of active time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The period's start.
    pub start: Timestamp,
    /// Its end, exclusive.
    pub end: Timestamp,
    /// The time zone of days and hours.
    pub tz: String,
    /// The hosts summed, most recently active first.
    pub hosts: Vec<String>,
    /// Active time in seconds.
    pub duration: f64,
    /// Per application, longest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<Vec<Row>>,
    /// Per application and title, longest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<Vec<Row>>,
    /// Per category, longest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<Vec<Row>>,
    /// Browser time per domain, longest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<Vec<Row>>,
    /// Browser time per URL, longest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<Vec<Row>>,
    /// Per host, longest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<Vec<Row>>,
    /// Every day of the period, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub day: Option<Vec<DayRow>>,
    /// The 24 hours of the local clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hour: Option<Vec<Row>>,
    /// The active window events, oldest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<TimelineEvent>>,
}

/// The arguments of a search.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SearchParams {
    /// The text titles or URLs contain (any letter case).
    pub text: Option<String>,
    /// As [`Params::start`].
    pub start: Option<String>,
    /// As [`Params::end`].
    pub end: Option<String>,
    /// As [`Params::host`].
    pub host: Option<String>,
    /// As [`Params::tz`].
    pub tz: Option<String>,
    /// Most matches (default 100).
    pub limit: Option<usize>,
}

/// Titles and URLs containing a text, with the time spent on them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResult {
    /// The text searched for.
    pub text: String,
    /// The period's start.
    pub start: Timestamp,
    /// Its end, exclusive.
    pub end: Timestamp,
    /// The time zone of the days.
    pub tz: String,
    /// Active time on all matches, in seconds.
    pub duration: f64,
    /// The matches, longest first.
    pub matches: Vec<Match>,
}

/// One row of a grouping.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// What the row is of: an application, a title, a category's names
    /// joined with `" > "`, a domain, a URL, a host, an hour (`"09:00"`).
    pub key: String,
    /// Seconds.
    pub duration: f64,
    /// The application of a title row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    /// The names of a category row, and the category of a title row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<Vec<String>>,
}

/// One day of a summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DayRow {
    /// The date (`2026-11-27`).
    pub date: String,
    /// The day's first instant (or the period's start).
    pub start: Timestamp,
    /// Active seconds.
    pub duration: f64,
    /// When the first active event began; `null` on a day without activity.
    pub first: Option<Timestamp>,
    /// When the last active event ended.
    pub last: Option<Timestamp>,
    /// Active seconds per top-level category.
    pub categories: BTreeMap<String, f64>,
}

/// One active window event, for a timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineEvent {
    /// Start.
    pub timestamp: Timestamp,
    /// Seconds.
    pub duration: f64,
    /// The host it was on.
    pub host: String,
    /// Its data, with `$category`.
    pub data: Map<String, Value>,
}

/// A title or URL that contains the searched text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Match {
    /// `"title"` (a window title), `"url"` (a browser tab's address) or
    /// `"tab"` (a browser tab's title).
    pub kind: String,
    /// The title or URL.
    pub key: String,
    /// The application of a window title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    /// The hosts it was seen on.
    pub hosts: Vec<String>,
    /// Active seconds.
    pub duration: f64,
    /// Start of its first event in the period.
    pub first: Timestamp,
    /// End of its last event in the period.
    pub last: Timestamp,
    /// The days it was seen on.
    pub days: Vec<String>,
}
