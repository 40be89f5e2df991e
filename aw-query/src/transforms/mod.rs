//! SharedEvent transforms: pure functions from owned event lists to new owned
//! event lists, one concept per file. They know nothing of the language;
//! `crate::functions` checks arguments and calls them.

mod categorize;
mod chunk;
mod derive;
mod filter;
mod flood;
mod intersect;
mod merge;
mod simplify;
mod sort;
mod union;
mod url;

pub use chunk::chunk_events_by_key;
pub use filter::{exclude_keyvals, filter_keyvals, has_keyval, json_matches};
pub use flood::{flood, flood_classes, FLOOD_PULSETIME};
pub use intersect::filter_period_intersect;
pub use merge::merge_events_by_keys;
pub use simplify::simplify_window_titles;
pub use sort::{limit_events, sort_by_duration, sort_by_timestamp, sum_durations};
pub use union::{period_union, union_no_overlap};
pub use url::{split_url_events, UrlSplitter};

pub(crate) use categorize::{categorize, tag};
pub(crate) use derive::{edit_data, edit_data_on_two, DataMemo};
pub(crate) use filter::matches_regex;

#[cfg(test)]
pub(crate) mod testing {
    use aw_models::{Duration, SharedEvent, Timestamp};
    use serde_json::json;

    /// `[start, end)` in seconds with `data = {"k": label}`.
    pub fn ev(start: f64, end: f64, label: &str) -> SharedEvent {
        let data = json!({ "k": label })
            .as_object()
            .cloned()
            .unwrap_or_default();
        let start = Timestamp::from_nanos((start * 1e9) as i64);
        SharedEvent::new(
            start,
            Duration::from_nanos(((end * 1e9) as i64) - start.nanos()),
            data,
        )
    }

    /// `(start, end, label)` of events, seconds.
    pub fn spans(events: &[SharedEvent]) -> Vec<(f64, f64, String)> {
        events
            .iter()
            .map(|e| {
                (
                    e.timestamp.nanos() as f64 / 1e9,
                    e.end().nanos() as f64 / 1e9,
                    e.data
                        .get("k")
                        .and_then(|v| v.as_str())
                        .unwrap_or("")
                        .to_string(),
                )
            })
            .collect()
    }
}
