//! Property tests of the transforms against naive models: times are whole
//! seconds on a small grid, so coverage can be compared cell by cell.

use std::collections::BTreeSet;

use std::sync::Arc;

use aw_models::{Duration, EventData, Projector, SharedEvent, Timestamp};
use aw_query::transforms::{
    chunk_events_by_key, filter_period_intersect, flood, flood_classes, merge_events_by_keys,
    period_union, union_no_overlap, FLOOD_PULSETIME,
};
use proptest::prelude::*;
use serde_json::json;

const SEC: i64 = 1_000_000_000;

/// Even ids share one data object per label, as events read from a store
/// do; odd ids get their own equal copy, so the transforms' by-pointer
/// shortcuts must agree with comparing by value.
fn event(id: usize, start: i64, duration: i64, label: u8) -> SharedEvent {
    thread_local! {
        static SHARED: Vec<Arc<EventData>> = (0..3u8).map(|label| Arc::new(label_data(label))).collect();
    }
    let data = if id.is_multiple_of(2) {
        SHARED.with(|shared| Arc::clone(&shared[usize::from(label)]))
    } else {
        Arc::new(label_data(label))
    };
    SharedEvent {
        id: Some(id as i64),
        timestamp: Timestamp::from_nanos(start * SEC),
        duration: Duration::from_nanos(duration * SEC),
        data,
    }
}

fn label_data(label: u8) -> EventData {
    json!({"k": label, "n": label % 2})
        .as_object()
        .cloned()
        .unwrap()
        .into()
}

/// Arbitrary events: any overlap, any order.
fn events() -> impl Strategy<Value = Vec<SharedEvent>> {
    prop::collection::vec((0i64..300, 0i64..30, 0u8..3), 0..40).prop_map(|specs| {
        specs
            .into_iter()
            .enumerate()
            .map(|(i, (s, d, l))| event(i, s, d, l))
            .collect()
    })
}

/// Sorted events that do not overlap each other (gaps of 0..gap seconds).
fn disjoint_events(gap: i64) -> impl Strategy<Value = Vec<SharedEvent>> {
    prop::collection::vec((0i64..gap, 0i64..20, 0u8..3), 0..30).prop_map(|specs| {
        let mut at = 0;
        specs
            .into_iter()
            .enumerate()
            .map(|(i, (g, d, l))| {
                at += g;
                let e = event(i, at, d, l);
                at += d;
                e
            })
            .collect()
    })
}

/// The whole seconds `[t, t+1)` covered by the events.
fn cells(events: &[SharedEvent]) -> BTreeSet<i64> {
    events
        .iter()
        .flat_map(|e| e.timestamp.nanos() / SEC..e.end().nanos() / SEC)
        .collect()
}

fn total(events: &[SharedEvent]) -> i64 {
    events.iter().map(|e| e.duration.nanos()).sum()
}

fn sorted(events: &[SharedEvent]) -> bool {
    events.windows(2).all(|w| w[0].timestamp <= w[1].timestamp)
}

/// No two events share a positive length of time (zero-length events may
/// sit anywhere).
fn disjoint(events: &[SharedEvent]) -> bool {
    events.iter().enumerate().all(|(i, a)| {
        events[i + 1..]
            .iter()
            .all(|b| a.timestamp.max(b.timestamp) >= a.end().min(b.end()))
    })
}

/// Flood as a walk that builds a new list (`docs/API.md` §7.4), the model of the
/// in-place one.
fn flood_model(events: Vec<SharedEvent>, pulsetime: i64) -> Vec<SharedEvent> {
    let mut events = events;
    events.sort_by_key(|e| e.timestamp);
    let mut out: Vec<SharedEvent> = Vec::new();
    for mut next in events {
        let Some(current) = out.last_mut() else {
            out.push(next);
            continue;
        };
        let gap = next.timestamp.nanos() - current.end().nanos();
        if gap < pulsetime && next.data == current.data {
            let end = current.end().max(next.end());
            current.set_end(end);
            continue;
        }
        if (0..pulsetime).contains(&gap) {
            let half = Duration::from_nanos(gap / 2);
            current.duration = current.duration.saturating_add(half);
            next.timestamp = next.timestamp.saturating_sub(half);
            next.duration = next.duration.saturating_add(half);
        }
        out.push(next);
    }
    out
}

/// filter_period_intersect as a walk that builds a new list of pieces
/// (`docs/API.md` §7.10), the model of the in-place one.
fn intersect_model(events: Vec<SharedEvent>, filter: &[SharedEvent]) -> Vec<SharedEvent> {
    let mut events = events;
    events.sort_by_key(|e| e.timestamp);
    let mut filter: Vec<&SharedEvent> = filter.iter().collect();
    filter.sort_by_key(|e| e.timestamp);
    let mut periods = filter.into_iter().peekable();
    let mut out: Vec<SharedEvent> = Vec::new();
    for mut event in events {
        while event.duration.nanos() > 0 {
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
            let mut piece = event.clone();
            piece.timestamp = start;
            piece.duration = end.duration_since(start);
            out.push(piece);
            let rest_end = event.end();
            event.timestamp = end;
            event.set_end(rest_end);
        }
    }
    out.sort_by_key(|e| e.timestamp);
    out
}

/// `events` reduced to the key `n` (labels 0 and 2 become equal objects),
/// with the classes of their whole objects.
fn reduced(events: &[SharedEvent]) -> (Vec<SharedEvent>, Vec<u32>) {
    let mut reducer = Projector::new(&["n".to_string()]);
    events
        .iter()
        .map(|e| {
            let (data, class) = reducer.reduce((*e.data).clone());
            (SharedEvent { data, ..e.clone() }, class)
        })
        .unzip()
}

/// What a comparison of event lists looks at.
fn plain(events: &[SharedEvent]) -> Vec<(Option<i64>, i64, i64, EventData)> {
    events
        .iter()
        .map(|e| {
            (
                e.id,
                e.timestamp.nanos(),
                e.duration.nanos(),
                (*e.data).clone(),
            )
        })
        .collect()
}

proptest! {
    #[test]
    fn flood_equals_the_model(input in events()) {
        let output = flood(input.clone(), FLOOD_PULSETIME);
        prop_assert_eq!(plain(&output), plain(&flood_model(input, FLOOD_PULSETIME.nanos())));
    }

    #[test]
    fn filter_period_intersect_equals_the_model(input in events(), filter in events()) {
        let output = filter_period_intersect(input.clone(), &filter);
        prop_assert_eq!(plain(&output), plain(&intersect_model(input, &filter)));
    }

    #[test]
    fn flood_by_class_of_reduced_events_merges_as_flood_of_whole_ones(input in events()) {
        // In any order, and newest first (as reads give them) with ties
        // and without.
        let mut newest_first = input.clone();
        newest_first.sort_by_key(|e| std::cmp::Reverse(e.timestamp));
        let mut no_ties = newest_first.clone();
        no_ties.dedup_by_key(|e| e.timestamp);
        for input in [input, newest_first, no_ties] {
            let (kept, classes) = reduced(&input);
            let whole = reduced(&flood(input, FLOOD_PULSETIME)).0;
            prop_assert_eq!(plain(&flood_classes(kept, classes, FLOOD_PULSETIME)), plain(&whole));
        }
    }

    #[test]
    fn flood_covers_the_input_and_stays_sorted(input in events()) {
        let output = flood(input.clone(), FLOOD_PULSETIME);
        prop_assert!(sorted(&output));
        prop_assert!(cells(&input).is_subset(&cells(&output)));
        prop_assert!(output.len() <= input.len());
        prop_assert!(output.iter().all(|e| e.duration.nanos() >= 0));
    }

    #[test]
    fn flood_of_one_kind_equals_merging_gaps_below_pulsetime(specs in prop::collection::vec((0i64..300, 0i64..30), 0..40)) {
        let input: Vec<SharedEvent> = specs.iter().enumerate().map(|(i, (s, d))| event(i, *s, *d, 0)).collect();
        let output = flood(input.clone(), FLOOD_PULSETIME);
        // Naive model: sort, then join intervals whose gap is below 5 s.
        let mut intervals: Vec<(i64, i64)> = specs.iter().map(|(s, d)| (*s, s + d)).collect();
        intervals.sort_by_key(|i| i.0);
        let mut model: Vec<(i64, i64)> = Vec::new();
        for (start, end) in intervals {
            match model.last_mut() {
                Some(last) if start - last.1 < 5 => last.1 = last.1.max(end),
                _ => model.push((start, end)),
            }
        }
        let got: Vec<(i64, i64)> = output.iter().map(|e| (e.timestamp.nanos() / SEC, e.end().nanos() / SEC)).collect();
        prop_assert_eq!(got, model);
    }

    #[test]
    fn flood_of_disjoint_events_fills_exactly_the_small_gaps(input in disjoint_events(12)) {
        let output = flood(input.clone(), FLOOD_PULSETIME);
        prop_assert!(disjoint(&output));
        let small_gaps: i64 = input
            .windows(2)
            .map(|w| w[1].timestamp.nanos() - w[0].end().nanos())
            .filter(|gap| *gap < 5 * SEC)
            .sum();
        prop_assert_eq!(total(&output), total(&input) + small_gaps);
    }

    #[test]
    fn merge_events_by_keys_matches_a_quadratic_model(input in events(), keys in prop::sample::subsequence(vec!["k", "n", "missing"], 0..3)) {
        let keys: Vec<String> = keys.into_iter().map(String::from).collect();
        let output = merge_events_by_keys(&input, &keys);
        let mut model: Vec<SharedEvent> = Vec::new();
        if !keys.is_empty() {
            for e in &input {
                if !keys.iter().all(|k| e.data.contains_key(k)) {
                    continue;
                }
                let found = model.iter_mut().find(|m| keys.iter().all(|k| m.data.get(k) == e.data.get(k)));
                match found {
                    Some(m) => m.duration = m.duration.saturating_add(e.duration),
                    None => {
                        let data = keys.iter().map(|k| (k.clone(), e.data[k].clone())).collect::<EventData>().into();
                        model.push(SharedEvent { id: None, timestamp: e.timestamp, duration: e.duration, data });
                    }
                }
            }
        }
        prop_assert_eq!(&output, &model);
        if !keys.is_empty() && !keys.contains(&"missing".to_string()) {
            prop_assert_eq!(total(&output), total(&input));
        }
    }

    #[test]
    fn chunk_events_by_key_matches_run_length_grouping(input in events()) {
        let output = chunk_events_by_key(&input, "k");
        let mut model: Vec<SharedEvent> = Vec::new();
        for e in &input {
            match model.last_mut() {
                Some(last) if last.data["k"] == e.data["k"] => last.duration = last.duration.saturating_add(e.duration),
                _ => model.push(e.clone()),
            }
        }
        prop_assert_eq!(&output, &model);
        prop_assert_eq!(total(&output), total(&input));
        prop_assert!(output.windows(2).all(|w| w[0].data["k"] != w[1].data["k"]));
    }

    #[test]
    fn filter_period_intersect_keeps_exactly_the_covered_time(input in disjoint_events(15), filter in events()) {
        let output = filter_period_intersect(input.clone(), &filter);
        prop_assert!(sorted(&output));
        prop_assert!(disjoint(&output));
        let covered = cells(&filter);
        for e in &input {
            let pieces: Vec<&SharedEvent> = output.iter().filter(|p| p.id == e.id).collect();
            for piece in &pieces {
                prop_assert!(piece.timestamp >= e.timestamp && piece.end() <= e.end());
                prop_assert_eq!(&piece.data, &e.data);
            }
            let expected = cells(std::slice::from_ref(e)).intersection(&covered).count() as i64;
            let got: i64 = pieces.iter().map(|p| p.duration.nanos() / SEC).sum();
            prop_assert_eq!(got, expected, "event {:?}", e.id);
        }
    }

    #[test]
    fn period_union_is_the_union_without_touching_parts(a in events(), b in events()) {
        let output = period_union(&a, &b);
        prop_assert!(output.windows(2).all(|w| w[0].end() < w[1].timestamp));
        prop_assert!(output.iter().all(|e| e.data.is_empty()));
        let mut all = a.clone();
        all.extend(b.clone());
        prop_assert_eq!(cells(&output), cells(&all));
        prop_assert_eq!(total(&output), cells(&all).len() as i64 * SEC);
    }

    #[test]
    fn union_no_overlap_keeps_the_first_list_and_fills_with_the_second(a in disjoint_events(20), b in disjoint_events(20)) {
        let output = union_no_overlap(a.clone(), b.clone());
        prop_assert!(sorted(&output));
        prop_assert!(disjoint(&output));
        for e in &a {
            prop_assert!(output.contains(e));
        }
        let mut all = a.clone();
        all.extend(b.clone());
        prop_assert_eq!(cells(&output), cells(&all));
        prop_assert_eq!(total(&output), cells(&all).len() as i64 * SEC);
        for piece in output.iter().filter(|p| !a.contains(p)) {
            prop_assert!(b.iter().any(|e| e.data == piece.data && e.timestamp <= piece.timestamp && piece.end() <= e.end()));
        }
    }
}
