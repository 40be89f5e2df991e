//! Unions of periods: `period_union` and `union_no_overlap` (`docs/API.md` §7.11,
//! §7.12).

use aw_models::{SharedEvent, Timestamp};

/// The time covered by either list, as sorted, non-overlapping events with
/// empty data; events that overlap or touch are joined, and each output
/// event keeps the id of the first event of its run.
///
/// ```
/// # use aw_query::transforms::period_union;
/// # use aw_models::{Duration, SharedEvent, Timestamp};
/// let at = |s: i64, e: i64| SharedEvent::new(Timestamp::from_nanos(s), Duration::from_nanos(e - s), aw_models::EventData::new());
/// let out = period_union(&[at(0, 2), at(5, 6)], &[at(2, 3), at(8, 9)]);
/// let spans: Vec<(i64, i64)> = out.iter().map(|e| (e.timestamp.nanos(), e.end().nanos())).collect();
/// assert_eq!(spans, [(0, 3), (5, 6), (8, 9)]);
/// ```
pub fn period_union(events1: &[SharedEvent], events2: &[SharedEvent]) -> Vec<SharedEvent> {
    let mut all: Vec<&SharedEvent> = events1.iter().chain(events2).collect();
    all.sort_by_key(|event| event.timestamp);
    let mut out: Vec<SharedEvent> = Vec::new();
    for event in all {
        match out.last_mut() {
            Some(last) if event.timestamp <= last.end() => {
                if event.end() > last.end() {
                    last.set_end(event.end());
                }
            }
            _ => out.push(SharedEvent {
                id: event.id,
                ..SharedEvent::empty(event.timestamp, event.duration)
            }),
        }
    }
    out
}

/// Merges two timestamp-sorted lists into one sorted list without overlap,
/// cutting away the parts of `events2` that overlap `events1` (a cut event
/// may be split in two; pieces have no id). Neither input is sorted here.
///
/// Unlike the reference, every `events2` event inside one `events1` event
/// is cut away, not only the first, and an `events2` event is also split
/// at a zero-length `events1` event inside it, so the result never
/// overlaps.
///
/// ```
/// # use aw_query::transforms::union_no_overlap;
/// # use aw_models::{Duration, SharedEvent, Timestamp};
/// let at = |s: i64, e: i64, k: &str| SharedEvent::new(Timestamp::from_nanos(s), Duration::from_nanos(e - s),
///     serde_json::json!({"k": k}).as_object().unwrap().clone());
/// let out = union_no_overlap(
///     vec![at(0, 3, "x"), at(7, 9, "x"), at(14, 17, "x")],
///     vec![at(1, 5, "y"), at(10, 16, "y"), at(19, 21, "y")],
/// );
/// let spans: Vec<(i64, i64)> = out.iter().map(|e| (e.timestamp.nanos(), e.end().nanos())).collect();
/// assert_eq!(spans, [(0, 3), (3, 5), (7, 9), (10, 14), (14, 17), (19, 21)]);
/// ```
pub fn union_no_overlap(events1: Vec<SharedEvent>, events2: Vec<SharedEvent>) -> Vec<SharedEvent> {
    let mut out = Vec::with_capacity(events1.len() + events2.len());
    let mut firsts = events1.into_iter().peekable();
    let mut seconds = events2.into_iter();
    let mut second = seconds.next();
    while let (Some(a), Some(b)) = (firsts.peek(), second.as_mut()) {
        let b_starts_in_a = a.timestamp <= b.timestamp && b.timestamp < a.end();
        if b_starts_in_a && b.end() <= a.end() {
            // Wholly covered by `a`: cut away. `a` stays current, since the
            // next events of `events2` may fall inside it too (the
            // reference emits `a` here and then leaves those uncut).
            second = seconds.next();
        } else if b_starts_in_a {
            let b_end = b.end();
            cut(b, a.end(), b_end);
            out.extend(firsts.next());
        } else if b.timestamp < a.timestamp && a.timestamp < b.end() {
            // `b` runs into `a` (even a zero-length `a`): emit the part
            // before it and keep the rest.
            let a_start = a.timestamp;
            let mut before = b.clone();
            cut(&mut before, b.timestamp, a_start);
            out.push(before);
            let b_end = b.end();
            cut(b, a_start, b_end);
        } else if a.timestamp <= b.timestamp {
            out.extend(firsts.next());
        } else {
            out.extend(second.take());
            second = seconds.next();
        }
    }
    out.extend(firsts);
    out.extend(second);
    out.extend(seconds);
    out
}

/// Makes `event` the piece `[start, end)` of itself, without id.
fn cut(event: &mut SharedEvent, start: Timestamp, end: Timestamp) {
    event.id = None;
    event.timestamp = start;
    event.set_end(end);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transforms::testing::{ev, spans};

    /// Regressions found by `tests/properties.rs`.
    #[test]
    fn union_no_overlap_never_overlaps() {
        type Case = (
            Vec<SharedEvent>,
            Vec<SharedEvent>,
            Vec<(f64, f64, &'static str)>,
        );
        let cases: Vec<Case> = vec![
            (
                vec![ev(0., 18., "x")],
                vec![ev(0., 1., "y"), ev(1., 2., "y")],
                vec![(0., 18., "x")],
            ),
            (
                vec![ev(0., 18., "x")],
                vec![ev(0., 0., "y"), ev(0., 1., "y"), ev(17., 20., "y")],
                vec![(0., 18., "x"), (18., 20., "y")],
            ),
            (
                vec![ev(7., 7., "x"), ev(10., 11., "x")],
                vec![ev(3., 13., "y")],
                vec![
                    (3., 7., "y"),
                    (7., 7., "x"),
                    (7., 10., "y"),
                    (10., 11., "x"),
                    (11., 13., "y"),
                ],
            ),
            (
                vec![ev(0., 3., "x"), ev(7., 9., "x"), ev(14., 17., "x")],
                vec![ev(1., 5., "y"), ev(10., 16., "y"), ev(19., 21., "y")],
                vec![
                    (0., 3., "x"),
                    (3., 5., "y"),
                    (7., 9., "x"),
                    (10., 14., "y"),
                    (14., 17., "x"),
                    (19., 21., "y"),
                ],
            ),
        ];
        for (first, second, expected) in cases {
            let expected: Vec<_> = expected
                .iter()
                .map(|(s, e, k)| (*s, *e, k.to_string()))
                .collect();
            assert_eq!(spans(&union_no_overlap(first, second)), expected);
        }
    }

    #[test]
    fn period_union_joins_touching_events() {
        let out = period_union(
            &[ev(0., 2., "a"), ev(5., 6., "b")],
            &[ev(2., 3., "c"), ev(1., 1., "d")],
        );
        assert_eq!(
            spans(&out),
            vec![(0., 3., String::new()), (5., 6., String::new())]
        );
    }
}
