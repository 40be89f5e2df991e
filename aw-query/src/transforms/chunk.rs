//! `chunk_events_by_key`: merge runs of equal values (`docs/API.md` §7.6, anchor
//! semantics).

use aw_models::SharedEvent;

/// Walks the events in order, skipping those without `key`; an event whose
/// `data[key]` equals that of the current chunk adds its duration to it,
/// otherwise it starts a new chunk (keeping its timestamp, id and data).
///
/// ```
/// # use aw_query::transforms::chunk_events_by_key;
/// # use aw_models::{Duration, SharedEvent, Timestamp};
/// let at = |s: i64, app: &str| SharedEvent::new(Timestamp::from_nanos(s), Duration::from_secs(1),
///     serde_json::json!({"app": app}).as_object().unwrap().clone());
/// let chunks = chunk_events_by_key(&[at(0, "a"), at(1, "a"), at(2, "b"), at(3, "a")], "app");
/// let durations: Vec<i64> = chunks.iter().map(|e| e.duration.nanos() / 1_000_000_000).collect();
/// assert_eq!(durations, [2, 1, 1]);
/// ```
pub fn chunk_events_by_key(events: &[SharedEvent], key: &str) -> Vec<SharedEvent> {
    let mut chunks: Vec<SharedEvent> = Vec::new();
    for event in events {
        let Some(value) = event.data.get(key) else {
            continue;
        };
        match chunks.last_mut() {
            Some(chunk) if chunk.data.get(key) == Some(value) => {
                chunk.duration = chunk.duration.saturating_add(event.duration);
            }
            _ => chunks.push(event.clone()),
        }
    }
    chunks
}
