//! Filtering events by the value of one data key (`docs/API.md` §7.7–§7.9, with the
//! correction §12 B-9: numbers compare by value).

use aw_models::SharedEvent;
use serde_json::Value as Json;

use crate::error::Failure;
use crate::regex::Matcher;

/// Keeps, in order, the events whose `data[key]` equals one of `values`.
///
/// ```
/// # use aw_query::transforms::filter_keyvals;
/// # use aw_models::{Duration, SharedEvent, Timestamp};
/// let of = |n: serde_json::Value| SharedEvent::new(Timestamp::from_nanos(0), Duration::ZERO,
///     serde_json::json!({"n": n}).as_object().unwrap().clone());
/// let kept = filter_keyvals(vec![of(1.into()), of(2.0.into()), of("1".into())], "n", &[serde_json::json!(1.0)]);
/// assert_eq!(kept.len(), 1); // the integer 1, not the string
/// ```
pub fn filter_keyvals(events: Vec<SharedEvent>, key: &str, values: &[Json]) -> Vec<SharedEvent> {
    keep(events, key, values, true)
}

/// Keeps, in order, the events [`filter_keyvals`] would drop (including
/// those without `key`).
///
/// ```
/// # use aw_query::transforms::exclude_keyvals;
/// # use aw_models::{Duration, SharedEvent, Timestamp};
/// let of = |s: &str| SharedEvent::new(Timestamp::from_nanos(0), Duration::ZERO,
///     serde_json::json!({"status": s}).as_object().unwrap().clone());
/// let kept = exclude_keyvals(vec![of("afk"), of("not-afk")], "status", &["afk".into()]);
/// assert_eq!(kept[0].data["status"], "not-afk");
/// ```
pub fn exclude_keyvals(events: Vec<SharedEvent>, key: &str, values: &[Json]) -> Vec<SharedEvent> {
    keep(events, key, values, false)
}

fn keep(
    mut events: Vec<SharedEvent>,
    key: &str,
    values: &[Json],
    wanted: bool,
) -> Vec<SharedEvent> {
    events.retain(|event| has_keyval(event, key, values) == wanted);
    events
}

/// Whether `data[key]` exists and equals one of `values` (the test of
/// [`filter_keyvals`]).
pub fn has_keyval(event: &SharedEvent, key: &str, values: &[Json]) -> bool {
    event.data.get(key).is_some_and(|value| {
        values
            .iter()
            .any(|candidate| json_matches(value, candidate))
    })
}

/// JSON equality in which numbers compare by value (`1 == 1.0`).
pub fn json_matches(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Json::Array(xs), Json::Array(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| json_matches(x, y))
        }
        (Json::Object(xs), Json::Object(ys)) => {
            xs.len() == ys.len()
                && xs
                    .iter()
                    .zip(ys)
                    .all(|((kx, x), (ky, y))| kx == ky && json_matches(x, y))
        }
        _ => a == b,
    }
}

/// Whether `data[key]` is a string the regex matches somewhere (the test of
/// `filter_keyvals_regex`).
pub(crate) fn matches_regex(
    event: &SharedEvent,
    key: &str,
    matcher: &Matcher,
) -> Result<bool, Failure> {
    match event.data.get(key) {
        Some(Json::String(text)) => matcher.is_match(text),
        _ => Ok(false),
    }
}
