//! Summaries of active time (`docs/API.md` §3.13): one computation behind
//! `GET /api/0/summary`, `GET /api/0/search`, the `report` command, the
//! MCP server's tools and the built-in dashboard's numbers, so they all
//! agree to the second.
//!
//! What counts as active is `program`'s query2 program, run per day of
//! the period (`calendar`: days in the caller's time zone, from the
//! `startOfDay` setting) with the user's categories (`categories`); this
//! crate parses the arguments, runs the days and adds up (`fold`). It
//! knows neither HTTP nor the command line: both give it text and turn its
//! [`ArgumentError`] into their own.

pub mod calendar;
pub mod categories;
mod digest;
mod fold;
pub mod program;
pub mod render;

use std::collections::BTreeMap;
use std::sync::Arc;

use aw_cache::{Cache, Kind, Period};
use aw_datastore::Datastore;
use aw_models::{Bucket, SettingValue, TimeInterval, Timestamp};
use aw_query::{EventSource, QueryError};

pub use aw_models::summary::{
    ArgumentError, By, DayRow, Match, Params, Row, SearchParams, SearchResult, Summary,
    TimelineEvent,
};
pub use calendar::Calendar;

use digest::DayResult;
use program::{HostBuckets, Output};

/// Longest period a summary covers: a century of days.
pub const MAX_DAYS: usize = 36_600;

/// Rows of a ranked grouping when the caller gives no `limit`.
pub const DEFAULT_LIMIT: usize = 100;

/// Most rows of a ranked grouping.
pub const MAX_LIMIT: usize = 100_000;

/// Days run together: the query's periods run in parallel, and what they
/// return is held until added up.
const DAYS_PER_RUN: usize = 32;

/// Why a summary failed.
#[derive(Debug, thiserror::Error)]
pub enum SummaryError {
    /// The caller's argument.
    #[error("{0}")]
    Argument(ArgumentError),
    /// Reading the store failed.
    #[error(transparent)]
    Datastore(#[from] aw_datastore::DatastoreError),
    /// The program failed (a limit, a read).
    #[error(transparent)]
    Query(#[from] QueryError),
}

impl From<ArgumentError> for SummaryError {
    fn from(error: ArgumentError) -> SummaryError {
        SummaryError::Argument(error)
    }
}

/// Longest search text.
const MAX_SEARCH_CHARS: usize = 500;

/// What a summary reads: the store's buckets, settings and events, and
/// which machine it serves.
pub trait SummarySource {
    /// Every bucket.
    fn buckets(&self) -> Result<BTreeMap<String, Bucket>, SummaryError>;
    /// Every setting.
    fn settings(&self) -> Result<BTreeMap<String, SettingValue>, SummaryError>;
    /// The events.
    fn events(&self) -> &dyn EventSource;
    /// The host name of the machine whose watchers write to the store:
    /// browser buckets without a host of their own are its
    /// ([`program::browser_host`]).
    fn own_host(&self) -> &str;
    /// Where the days' answers are kept once finished, if anywhere.
    fn cache(&self) -> Option<&Cache> {
        None
    }
}

/// A datastore and the host name of the machine it serves.
#[derive(Debug, Clone)]
pub struct Served {
    /// The store.
    pub datastore: Datastore,
    /// This machine's host name (`/api/0/info`'s `hostname`).
    pub own_host: String,
    /// The server's cache of finished periods; `None` on the file, or
    /// when it is off.
    pub cache: Option<Arc<Cache>>,
}

impl SummarySource for Served {
    fn buckets(&self) -> Result<BTreeMap<String, Bucket>, SummaryError> {
        Ok(self.datastore.buckets().wait()?)
    }

    fn settings(&self) -> Result<BTreeMap<String, SettingValue>, SummaryError> {
        Ok(self.datastore.settings().wait()?)
    }

    fn events(&self) -> &dyn EventSource {
        &self.datastore
    }

    fn own_host(&self) -> &str {
        &self.own_host
    }

    fn cache(&self) -> Option<&Cache> {
        self.cache.as_deref()
    }
}

/// The period, calendar and hosts of a request.
struct Scope {
    calendar: Calendar,
    start: Timestamp,
    end: Timestamp,
    hosts: Vec<HostBuckets>,
    rules: serde_json::Value,
}

fn scope(
    source: &dyn SummarySource,
    start: Option<&str>,
    end: Option<&str>,
    host: Option<&str>,
    tz: Option<&str>,
    categories: Option<&serde_json::Value>,
) -> Result<Scope, SummaryError> {
    let settings = source.settings()?;
    let rules = match categories {
        Some(list) => {
            categories::check(list)?;
            let given = BTreeMap::from([("classes".to_string(), list.clone())]);
            categories::rules(&given)
        }
        None => categories::rules(&settings),
    };
    let calendar = Calendar::new(
        tz.filter(|tz| !tz.trim().is_empty()),
        settings.get("startOfDay"),
        settings.get("startOfWeek"),
    )?;
    let required = |argument, value: Option<&str>| {
        value
            .filter(|value| !value.trim().is_empty())
            .ok_or_else(|| {
                ArgumentError::new(
                    argument,
                    "is required: a date (YYYY-MM-DD, today, yesterday) or an RFC 3339 time",
                )
            })
            .and_then(|value| calendar.parse_time(argument, value))
    };
    let start = required("start", start)?;
    let end = required("end", end)?;
    if end <= start {
        return Err(ArgumentError::new(
            "end",
            format!(
                "must be after start ({} is not after {}); a date as end means that day's start",
                end.to_rfc3339_offset(),
                start.to_rfc3339_offset()
            ),
        )
        .into());
    }
    let days = end.duration_since(start).as_secs_f64() / 86_400.0;
    if days > MAX_DAYS as f64 {
        return Err(ArgumentError::new(
            "end",
            format!("the period is longer than {MAX_DAYS} days"),
        )
        .into());
    }
    let buckets = source.buckets()?;
    let all = program::hosts(&buckets);
    let chosen = match host.map(str::trim).filter(|host| !host.is_empty()) {
        None => all,
        Some(host) if all.iter().any(|known| known == host) => vec![host.to_string()],
        Some(host) => {
            let known = if all.is_empty() {
                "there is none yet".to_string()
            } else {
                format!("known: {}", all.join(", "))
            };
            return Err(ArgumentError::new(
                "host",
                format!("no window watcher data of host '{host}' ({known})"),
            )
            .into());
        }
    };
    Ok(Scope {
        calendar,
        start,
        end,
        hosts: program::host_buckets(&buckets, &chosen, source.own_host()),
        rules,
    })
}

fn limit_of(limit: Option<usize>) -> Result<usize, ArgumentError> {
    match limit.unwrap_or(DEFAULT_LIMIT) {
        limit @ 1..=MAX_LIMIT => Ok(limit),
        _ => Err(ArgumentError::new(
            "limit",
            format!("must be between 1 and {MAX_LIMIT}"),
        )),
    }
}

/// The summary `params` ask for.
pub fn summarize(source: &dyn SummarySource, params: &Params) -> Result<Summary, SummaryError> {
    let by = By::parse_list(params.by.as_deref().unwrap_or("app"))?;
    let limit = limit_of(params.limit)?;
    let scope = scope(
        source,
        params.start.as_deref(),
        params.end.as_deref(),
        params.host.as_deref(),
        params.tz.as_deref(),
        params.categories.as_ref(),
    )?;
    let browser = by.iter().any(|by| by.needs_browser());
    let output = if by.iter().any(|by| by.needs_events()) {
        Output::Events
    } else {
        Output::Merged {
            days: by.contains(&By::Day),
        }
    };
    let days = scope.calendar.days(scope.start, scope.end);
    let mut totals = fold::Totals::new(&by, &scope.calendar, &days);
    for host in &scope.hosts {
        let text = program::program(host, &scope.rules, browser, &output);
        run_days(source, &text, &days, |day, result| {
            totals.add(&host.host, day, result);
        })?;
    }
    Ok(totals.finish(
        Summary {
            start: scope.start,
            end: scope.end,
            tz: scope.calendar.zone_name().to_string(),
            hosts: scope.hosts.iter().map(|h| h.host.clone()).collect(),
            duration: 0.0,
            app: None,
            title: None,
            category: None,
            domain: None,
            url: None,
            host: None,
            day: None,
            hour: None,
            events: None,
        },
        limit,
    ))
}

/// The titles and URLs that contain `params.text`.
pub fn search(
    source: &dyn SummarySource,
    params: &SearchParams,
) -> Result<SearchResult, SummaryError> {
    let text = params
        .text
        .as_deref()
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .ok_or_else(|| ArgumentError::new("text", "is required: the text to look for"))?;
    if text.chars().count() > MAX_SEARCH_CHARS {
        return Err(ArgumentError::new(
            "text",
            format!("is longer than {MAX_SEARCH_CHARS} characters"),
        )
        .into());
    }
    let limit = limit_of(params.limit)?;
    let scope = scope(
        source,
        params.start.as_deref(),
        params.end.as_deref(),
        params.host.as_deref(),
        params.tz.as_deref(),
        None,
    )?;
    let output = Output::Matching(format!("(?i){}", regex::escape(text)));
    let days = scope.calendar.days(scope.start, scope.end);
    let mut matches = fold::Matches::default();
    for host in &scope.hosts {
        let program = program::program(host, &scope.rules, true, &output);
        run_days(source, &program, &days, |day, result| {
            if let DayResult::Value(result) = result {
                matches.add(&host.host, day, result);
            }
        })?;
    }
    let (duration, matches) = matches.finish(limit);
    Ok(SearchResult {
        text: text.to_string(),
        start: scope.start,
        end: scope.end,
        tz: scope.calendar.zone_name().to_string(),
        duration,
        matches,
    })
}

/// A summary program's answer for one day as the summaries keep it in
/// the cache (digested), and its bytes: the pre-warm's
/// [`aw_cache::Keeper`].
pub fn kept_day(value: serde_json::Value) -> (Arc<dyn std::any::Any + Send + Sync>, usize) {
    let day = DayResult::of(value);
    let bytes = day.bytes();
    (Arc::new(day), bytes)
}

/// Runs `program` over `days`, some at a time, handing each day's result
/// (digested, `digest.rs`) to `each` in order. Finished days come from the
/// source's cache when it has them, and are kept in it when computed.
fn run_days(
    source: &dyn SummarySource,
    program: &str,
    days: &[calendar::Day],
    mut each: impl FnMut(&calendar::Day, &DayResult),
) -> Result<(), QueryError> {
    // The program is this module's, not the caller's: its lines and
    // columns would say nothing.
    let compute = |asked: &[TimeInterval]| {
        aw_query::query(program, asked, source.events())
            .map(|results| results.into_iter().map(DayResult::of).collect::<Vec<_>>())
            .map_err(|error| QueryError::whole(error.kind, error.detail()))
    };
    // The program holds everything a day's answer depends on (the hosts'
    // buckets, the categories, what is grouped), so it is the key.
    let key = source
        .cache()
        .map(|cache| (cache, Kind::Summary.key(program)));
    let now = Timestamp::now();
    for chunk in days.chunks(DAYS_PER_RUN) {
        let intervals: Vec<TimeInterval> = chunk
            .iter()
            .map(|day| TimeInterval::new(day.start, day.end))
            .collect();
        let answers: Vec<Arc<DayResult>> = match &key {
            Some((cache, text)) => {
                let periods: Vec<Period> = chunk
                    .iter()
                    .map(|day| Period::new(day.start, day.end))
                    .collect();
                cache.answers(
                    text,
                    &periods,
                    now,
                    |missing| compute(&missing.iter().map(|&i| intervals[i]).collect::<Vec<_>>()),
                    DayResult::bytes,
                )?
            }
            None => compute(&intervals)?.into_iter().map(Arc::new).collect(),
        };
        for (day, answer) in chunk.iter().zip(&answers) {
            each(day, answer);
        }
    }
    Ok(())
}
