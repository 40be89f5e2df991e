//! Several periods in one query: they may run on several threads, and the
//! result must be that of running them one by one.

mod common;

use aw_models::TimeInterval;
use aw_query::{query, ErrorKind};
use common::*;

/// Periods of 5 s covering the fixture, plus one before it.
fn periods(count: usize) -> Vec<TimeInterval> {
    (0..count)
        .map(|index| {
            let start = index as f64 * 5.0 - 5.0;
            TimeInterval::new(at(start), at(start + 5.0))
        })
        .collect()
}

const PROGRAM: &str = r#"
    events = flood(query_bucket("aw-watcher-window_laptop"));
    events = categorize(events, [[["Work"], {"type": "regex", "regex": "(?i)vim"}],
                                 [["Web"], {"type": "regex", "regex": "Fire(?=fox)"}]]);
    RETURN = {"apps": merge_events_by_keys(events, ["app", "$category"]),
              "period": TIMEINTERVAL, "total": sum_durations(events)};
"#;

#[test]
fn periods_in_one_query_equal_periods_queried_alone() {
    let source = fixture();
    for count in [0, 1, 2, 3, 9] {
        let periods = periods(count);
        let together = query(PROGRAM, &periods, &source).unwrap();
        let alone: Vec<_> = periods
            .iter()
            .map(|period| query(PROGRAM, &[*period], &source).unwrap().remove(0))
            .collect();
        assert_eq!(together, alone, "{count} periods");
    }
}

#[test]
fn the_earliest_failing_period_decides_the_error() {
    let source = fixture();
    // Every period fails, whichever thread runs it: the error is the one
    // of the first period, as when they run in order.
    let program = r#"
        n = query_bucket_eventcount("aw-watcher-window_laptop");
        x = 1 / (n - n);
        RETURN = x;
    "#;
    let error = query(program, &periods(6), &source).unwrap_err();
    assert_eq!(error.kind, ErrorKind::DivisionByZero);
    let error = query(r#"RETURN = query_bucket("nope");"#, &periods(5), &source).unwrap_err();
    assert!(error.to_string().contains("nope"), "{error}");
}
