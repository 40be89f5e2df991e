//! `filter_period_intersect`: the parts of events inside filter periods
//! (`docs/API.md` §7.10).

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
    let mut events = sort_by_timestamp(events);
    // The filter is only read: sort references to it.
    let mut filter: Vec<&SharedEvent> = filter.iter().collect();
    if !filter.is_sorted_by_key(|e| e.timestamp) {
        filter.sort_by_key(|e| e.timestamp);
    }
    // In place: each event's first piece is written over the events (at
    // `written`, never past the event itself), and only further pieces of
    // an event (one crossing several periods) are kept aside, with the
    // number of the in-place piece they follow: a new list for a year of
    // window events would touch as many pages again.
    let mut periods = filter.into_iter().peekable();
    let mut written = 0;
    let mut extra: Vec<(usize, SharedEvent)> = Vec::new();
    let mut sorted = true;
    let mut last_start = None;
    for index in 0..events.len() {
        if periods.peek().is_none() {
            break;
        }
        let Some(event) = events.get(index) else {
            break;
        };
        // What is left of the event: [start, end).
        let (mut start, end) = (event.timestamp, event.end());
        let mut first = None;
        loop {
            if end.nanos().saturating_sub(start.nanos()) <= 0 {
                break;
            }
            let Some(period) = periods.peek() else {
                break;
            };
            if end <= period.timestamp {
                break;
            }
            if start >= period.end() {
                periods.next();
                continue;
            }
            let piece_start = start.max(period.timestamp);
            let piece_end = end.min(period.end());
            start = piece_end;
            if last_start.is_some_and(|last| last > piece_start) {
                sorted = false;
            }
            last_start = Some(piece_start);
            if first.is_none() {
                first = Some((piece_start, piece_end));
            } else {
                // The piece shares the event's data: no copy.
                extra.push((
                    written,
                    SharedEvent {
                        id: event.id,
                        timestamp: piece_start,
                        duration: piece_end.duration_since(piece_start),
                        data: event.data.clone(),
                    },
                ));
            }
        }
        if let (Some((piece_start, piece_end)), Some(event)) = (first, events.get_mut(index)) {
            event.timestamp = piece_start;
            event.duration = piece_end.duration_since(piece_start);
            events.swap(written, index);
            written += 1;
        }
    }
    events.truncate(written);
    place_extra_pieces(&mut events, extra);
    if sorted {
        events
    } else {
        sort_by_timestamp(events)
    }
}

/// Puts each extra piece right after the in-place piece it follows (and
/// after the extra pieces before it), moving the later pieces back once.
fn place_extra_pieces(pieces: &mut Vec<SharedEvent>, mut extra: Vec<(usize, SharedEvent)>) {
    if extra.is_empty() {
        return;
    }
    let Some(filler) = pieces.last().cloned() else {
        return;
    };
    let mut unplaced = pieces.len();
    let total = unplaced + extra.len();
    pieces.resize(total, filler);
    let mut free_end = total;
    while let Some((after, piece)) = extra.pop() {
        while unplaced > after + 1 {
            free_end -= 1;
            unplaced -= 1;
            pieces.swap(free_end, unplaced);
        }
        free_end -= 1;
        if let Some(slot) = pieces.get_mut(free_end) {
            *slot = piece;
        }
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
