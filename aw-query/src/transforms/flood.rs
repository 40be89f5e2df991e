//! `flood`: fill small gaps between consecutive events (`docs/API.md` §7.4).

use aw_models::{Duration, SharedEvent};

use super::sort::sort_by_timestamp;

/// Gaps shorter than this are filled.
pub const FLOOD_PULSETIME: Duration = Duration::from_secs(5);

/// Sorts by timestamp, then walks the events once: a next event with the
/// same data that overlaps or follows within `pulsetime` is merged into the
/// current one; with different data, a gap below `pulsetime` is split in the
/// middle. Overlaps between different data are left alone. Linear after the
/// sort, whatever the overlaps.
///
/// ```
/// # use aw_query::transforms::{flood, FLOOD_PULSETIME};
/// # use aw_models::{Duration, SharedEvent, Timestamp};
/// let at = |s: i64, d: i64, app: &str| SharedEvent::new(
///     Timestamp::from_nanos(s * 1_000_000_000), Duration::from_secs(d),
///     serde_json::json!({"app": app}).as_object().unwrap().clone());
/// // [0,1)a [2,3)a [4,5)a [8,10)b  →  [0,6.5)a [6.5,10)b
/// let out = flood(vec![at(0, 1, "a"), at(2, 1, "a"), at(4, 1, "a"), at(8, 2, "b")], FLOOD_PULSETIME);
/// assert_eq!(out.len(), 2);
/// assert_eq!(out[0].duration, Duration::from_millis(6500));
/// assert_eq!(out[1].timestamp, Timestamp::from_nanos(6_500_000_000));
/// ```
pub fn flood(events: Vec<SharedEvent>, pulsetime: Duration) -> Vec<SharedEvent> {
    let events = sort_by_timestamp(events);
    flood_sorted(events, pulsetime, |current, _, next, _| {
        next.same_data(current)
    })
}

/// [`flood`] of events whose data was reduced to some keys, each compared
/// by the class of its whole data (`classes`, one per event, see
/// `aw_models::ProjectedEvents`): the events merge and split as the whole
/// events would. Without a class per event (a source gives a short read
/// whole, with no classes) the data are compared, as [`flood`] does.
pub fn flood_classes(
    events: Vec<SharedEvent>,
    classes: Vec<u32>,
    pulsetime: Duration,
) -> Vec<SharedEvent> {
    if classes.len() != events.len() {
        return flood(events, pulsetime);
    }
    // Sorted as `flood` sorts (by timestamp, stably), the classes moved
    // along. A read gives its events newest first: when no two start at
    // the same time, turning both lists around is that sort.
    let (events, classes) = if events
        .windows(2)
        .all(|pair| pair[0].timestamp > pair[1].timestamp)
    {
        let (mut events, mut classes) = (events, classes);
        events.reverse();
        classes.reverse();
        (events, classes)
    } else {
        let mut paired: Vec<(SharedEvent, u32)> = events.into_iter().zip(classes).collect();
        paired.sort_by_key(|(event, _)| event.timestamp);
        paired.into_iter().unzip()
    };
    flood_sorted(events, pulsetime, |_, current, _, next| {
        classes.get(current) == classes.get(next)
    })
}

/// The walk of [`flood`] over events sorted by timestamp; `same` tells
/// whether the current event (the first two arguments: the event and the
/// index it had in `events`) and the next (the same) hold equal data.
fn flood_sorted(
    mut events: Vec<SharedEvent>,
    pulsetime: Duration,
    mut same: impl FnMut(&SharedEvent, usize, &SharedEvent, usize) -> bool,
) -> Vec<SharedEvent> {
    // In place: the output is never longer than the input, so it is
    // written over the sorted events (the last kept event at `last`,
    // events merged into it left behind and dropped at the end): a new
    // vector for a year of events would touch as many pages again.
    let mut last = 0;
    // Where the event at `last` was in `events` before it moved there.
    let mut last_from = 0;
    for index in 1..events.len() {
        let (kept, rest) = events.split_at_mut(index);
        let (Some(current), Some(next)) = (kept.get_mut(last), rest.first_mut()) else {
            break;
        };
        let gap = next.timestamp.nanos().saturating_sub(current.end().nanos());
        if gap < pulsetime.nanos() && same(current, last_from, next, index) {
            let end = current.end().max(next.end());
            current.set_end(end);
            continue;
        }
        if (0..pulsetime.nanos()).contains(&gap) {
            let half = Duration::from_nanos(gap / 2);
            current.duration = current.duration.saturating_add(half);
            next.timestamp = next.timestamp.saturating_sub(half);
            next.duration = next.duration.saturating_add(half);
        }
        last += 1;
        last_from = index;
        events.swap(last, index);
    }
    events.truncate(last + 1);
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transforms::testing::{ev, spans};

    fn check(input: Vec<SharedEvent>, expected: &[(f64, f64, &str)]) {
        let got = spans(&flood(input, FLOOD_PULSETIME));
        let expected: Vec<_> = expected
            .iter()
            .map(|(s, e, k)| (*s, *e, k.to_string()))
            .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn spec_examples() {
        check(vec![ev(0., 1., "a"), ev(3., 4., "a")], &[(0., 4., "a")]);
        check(
            vec![ev(0., 1., "a"), ev(3., 4., "b")],
            &[(0., 2., "a"), (2., 4., "b")],
        );
        check(
            vec![ev(0., 1., "a"), ev(6., 7., "a")],
            &[(0., 1., "a"), (6., 7., "a")],
        );
        check(vec![ev(0., 10., "a"), ev(5., 15., "a")], &[(0., 15., "a")]);
        check(
            vec![ev(0., 10., "a"), ev(1., 6., "b")],
            &[(0., 10., "a"), (1., 6., "b")],
        );
        check(
            vec![
                ev(4., 5., "a"),
                ev(0., 1., "a"),
                ev(8., 10., "b"),
                ev(2., 3., "a"),
            ],
            &[(0., 6.5, "a"), (6.5, 10., "b")],
        );
        check(vec![], &[]);
    }
}
