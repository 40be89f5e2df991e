//! Unions of periods: `period_union` and `union_no_overlap` (spec §7.11,
//! §7.12).

use aw_models::{Data, Event, Timestamp};

use super::sort::sort_by_timestamp;

/// The time covered by either list, as sorted, non-overlapping events with
/// empty data; events that overlap or touch are joined, and each output
/// event keeps the id of the first event of its run.
///
/// ```
/// # use aw_query::transforms::period_union;
/// # use aw_models::{Duration, Event, Timestamp};
/// let at = |s: i64, e: i64| Event::new(Timestamp::from_nanos(s), Duration::from_nanos(e - s), Default::default());
/// let out = period_union(vec![at(0, 2), at(5, 6)], vec![at(2, 3), at(8, 9)]);
/// let spans: Vec<(i64, i64)> = out.iter().map(|e| (e.timestamp.nanos(), e.end().nanos())).collect();
/// assert_eq!(spans, [(0, 3), (5, 6), (8, 9)]);
/// ```
pub fn period_union(mut events1: Vec<Event>, events2: Vec<Event>) -> Vec<Event> {
    events1.extend(events2);
    let mut out: Vec<Event> = Vec::new();
    for event in sort_by_timestamp(events1) {
        match out.last_mut() {
            Some(last) if event.timestamp <= last.end() => {
                if event.end() > last.end() {
                    last.set_end(event.end());
                }
            }
            _ => out.push(Event {
                id: event.id,
                timestamp: event.timestamp,
                duration: event.duration,
                data: Data::new(),
            }),
        }
    }
    out
}

/// Merges two timestamp-sorted lists into one sorted list without overlap,
/// cutting away the parts of `events2` that overlap `events1` (a cut event
/// may be split in two; pieces have no id). Neither input is sorted here.
///
/// ```
/// # use aw_query::transforms::union_no_overlap;
/// # use aw_models::{Duration, Event, Timestamp};
/// let at = |s: i64, e: i64, k: &str| Event::new(Timestamp::from_nanos(s), Duration::from_nanos(e - s),
///     serde_json::json!({"k": k}).as_object().unwrap().clone());
/// let out = union_no_overlap(
///     vec![at(0, 3, "x"), at(7, 9, "x"), at(14, 17, "x")],
///     vec![at(1, 5, "y"), at(10, 16, "y"), at(19, 21, "y")],
/// );
/// let spans: Vec<(i64, i64)> = out.iter().map(|e| (e.timestamp.nanos(), e.end().nanos())).collect();
/// assert_eq!(spans, [(0, 3), (3, 5), (7, 9), (10, 14), (14, 17), (19, 21)]);
/// ```
pub fn union_no_overlap(events1: Vec<Event>, events2: Vec<Event>) -> Vec<Event> {
    let mut out = Vec::with_capacity(events1.len() + events2.len());
    let mut firsts = events1.into_iter().peekable();
    let mut seconds = events2.into_iter();
    let mut second = seconds.next();
    while let (Some(a), Some(b)) = (firsts.peek(), second.as_mut()) {
        let overlap = a.timestamp.max(b.timestamp) < a.end().min(b.end());
        if overlap && a.timestamp <= b.timestamp {
            let a_end = a.end();
            if b.end() > a_end {
                cut(b, a_end, b.end());
            } else {
                second = seconds.next();
            }
            out.extend(firsts.next());
        } else if overlap {
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
fn cut(event: &mut Event, start: Timestamp, end: Timestamp) {
    event.id = None;
    event.timestamp = start;
    event.set_end(end);
}
