//! Ordering, truncating and summing event lists (`docs/API.md` §7.14–§7.17).

use aw_models::{Duration, SharedEvent};

/// Stable sort, earliest timestamp first.
///
/// ```
/// # use aw_query::transforms::sort_by_timestamp;
/// # use aw_models::{Duration, SharedEvent, Timestamp};
/// let at = |s| SharedEvent::new(Timestamp::from_nanos(s), Duration::ZERO, aw_models::EventData::new());
/// let sorted = sort_by_timestamp(vec![at(3), at(1), at(2)]);
/// assert_eq!(sorted.iter().map(|e| e.timestamp.nanos()).collect::<Vec<_>>(), [1, 2, 3]);
/// ```
pub fn sort_by_timestamp(mut events: Vec<SharedEvent>) -> Vec<SharedEvent> {
    if !events.is_sorted_by_key(|e| e.timestamp) {
        events.sort_by_key(|e| e.timestamp);
    }
    events
}

/// Stable sort, longest duration first.
///
/// ```
/// # use aw_query::transforms::sort_by_duration;
/// # use aw_models::{Duration, SharedEvent, Timestamp};
/// let of = |d| SharedEvent::new(Timestamp::from_nanos(0), Duration::from_secs(d), aw_models::EventData::new());
/// let sorted = sort_by_duration(vec![of(1), of(3), of(2)]);
/// assert_eq!(sorted.iter().map(|e| e.duration.nanos() / 1_000_000_000).collect::<Vec<_>>(), [3, 2, 1]);
/// ```
pub fn sort_by_duration(mut events: Vec<SharedEvent>) -> Vec<SharedEvent> {
    events.sort_by_key(|e| std::cmp::Reverse(e.duration));
    events
}

/// The first `count` events.
///
/// ```
/// # use aw_query::transforms::limit_events;
/// # use aw_models::{Duration, SharedEvent, Timestamp};
/// let e = SharedEvent::new(Timestamp::from_nanos(0), Duration::ZERO, aw_models::EventData::new());
/// assert_eq!(limit_events(vec![e.clone(), e.clone(), e], 2).len(), 2);
/// ```
pub fn limit_events(mut events: Vec<SharedEvent>, count: usize) -> Vec<SharedEvent> {
    events.truncate(count);
    events
}

/// Total duration, truncated to whole milliseconds as the reference does.
///
/// ```
/// # use aw_query::transforms::sum_durations;
/// # use aw_models::{Duration, SharedEvent, Timestamp};
/// let of = |ms| SharedEvent::new(Timestamp::from_nanos(0), Duration::from_nanos(ms), aw_models::EventData::new());
/// assert_eq!(sum_durations(&[of(1_500_000_400), of(2_250_000_000)]), Duration::from_millis(3750));
/// ```
pub fn sum_durations(events: &[SharedEvent]) -> Duration {
    let total = events
        .iter()
        .fold(Duration::ZERO, |sum, e| sum.saturating_add(e.duration));
    Duration::from_nanos(total.nanos() / 1_000_000 * 1_000_000)
}
