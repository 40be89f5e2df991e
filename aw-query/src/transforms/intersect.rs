//! `filter_period_intersect`: the parts of events inside filter periods
//! (spec §7.10).

use aw_models::SharedEvent;

use super::sort::sort_by_timestamp;

/// Sorts both lists, then walks them together: each event is consumed left
/// to right by the filter periods it overlaps, producing one clipped copy
/// per overlap (same id and data). Zero-length events are dropped; touching
/// is not overlapping. Linear after the sorts.
///
/// ```
/// # use aw_query::transforms::filter_period_intersect;
/// # use aw_models::{Duration, SharedEvent, Timestamp};
/// let at = |s: i64, e: i64| SharedEvent::new(Timestamp::from_nanos(s * 1_000_000_000),
///     Duration::from_secs(e - s), aw_models::EventData::new());
/// // [0,10) [12,20) ∩ [2,5) [8,14) [18,30) = [2,5) [8,10) [12,14) [18,20)
/// let out = filter_period_intersect(vec![at(0, 10), at(12, 20)], &[at(2, 5), at(8, 14), at(18, 30)]);
/// let starts: Vec<i64> = out.iter().map(|e| e.timestamp.nanos() / 1_000_000_000).collect();
/// assert_eq!(starts, [2, 8, 12, 18]);
/// ```
pub fn filter_period_intersect(
    events: Vec<SharedEvent>,
    filter: &[SharedEvent],
) -> Vec<SharedEvent> {
    if events.is_empty() || filter.is_empty() {
        return Vec::new();
    }
    let events = sort_by_timestamp(events);
    // The filter is only read: sort references to it.
    let mut filter: Vec<&SharedEvent> = filter.iter().collect();
    if !filter.is_sorted_by_key(|e| e.timestamp) {
        filter.sort_by_key(|e| e.timestamp);
    }
    // Sized once, so a year-long list is not copied and faulted in again
    // at each doubling. Each piece is an overlap of an event and a period;
    // walking both lists in order, there are fewer overlaps than events
    // and periods together (unless events overlap each other). Room left
    // unused is never touched, so it takes no memory.
    let mut out = Vec::with_capacity(events.len() + filter.len());
    let mut periods = filter.into_iter().peekable();
    let mut sorted = true;
    for mut event in events {
        loop {
            if event.duration.nanos() <= 0 {
                break;
            }
            let Some(period) = periods.peek() else {
                break;
            };
            if event.end() <= period.timestamp {
                break;
            }
            if event.timestamp >= period.end() {
                periods.next();
                continue;
            }
            let start = event.timestamp.max(period.timestamp);
            let end = event.end().min(period.end());
            // The piece shares the event's data: no copy.
            let piece = SharedEvent {
                id: event.id,
                timestamp: start,
                duration: end.duration_since(start),
                data: event.data.clone(),
            };
            let rest_end = event.end();
            event.timestamp = end;
            event.set_end(rest_end);
            if out
                .last()
                .is_some_and(|last: &SharedEvent| last.timestamp > piece.timestamp)
            {
                sorted = false;
            }
            out.push(piece);
        }
        if periods.peek().is_none() {
            break;
        }
    }
    if sorted {
        out
    } else {
        sort_by_timestamp(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transforms::testing::{ev, spans};

    #[test]
    fn spec_example_and_edges() {
        type Case = (
            Vec<SharedEvent>,
            Vec<SharedEvent>,
            Vec<(f64, f64, &'static str)>,
        );
        let cases: Vec<Case> = vec![
            (
                vec![ev(0., 10., "a"), ev(12., 20., "b")],
                vec![ev(2., 5., ""), ev(8., 14., ""), ev(18., 30., "")],
                vec![
                    (2., 5., "a"),
                    (8., 10., "a"),
                    (12., 14., "b"),
                    (18., 20., "b"),
                ],
            ),
            (vec![ev(0., 10., "a")], vec![], vec![]),
            (vec![ev(0., 10., "a")], vec![ev(10., 20., "")], vec![]),
            (vec![ev(5., 5., "a")], vec![ev(0., 20., "")], vec![]),
            (
                vec![ev(0., 10., "a")],
                vec![ev(0., 4., ""), ev(2., 6., "")],
                vec![(0., 4., "a"), (4., 6., "a")],
            ),
            (
                vec![ev(0., 10., "a")],
                vec![ev(5., 5., "")],
                vec![(5., 5., "a")],
            ),
        ];
        for (events, filter, expected) in cases {
            let expected: Vec<_> = expected
                .iter()
                .map(|(s, e, k)| (*s, *e, k.to_string()))
                .collect();
            assert_eq!(spans(&filter_period_intersect(events, &filter)), expected);
        }
    }
}
