//! Several periods in one query: they may run on several threads, and the
//! result must be that of running them one by one.

mod common;

use aw_models::TimeInterval;
use aw_query::{query, query_json, ErrorKind};
use common::*;

/// Periods of three days, the first covering the fixture: long enough to
/// be read ahead.
fn long_periods(count: usize) -> Vec<TimeInterval> {
    const DAYS: f64 = 3.0 * 86_400.0;
    (0..count)
        .map(|index| {
            let start = index as f64 * DAYS - 5.0;
            TimeInterval::new(at(start), at(start + DAYS))
        })
        .collect()
}

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
fn the_answer_text_is_the_results_written_as_json() {
    let source = fixture();
    for count in [0, 1, 3] {
        let periods = long_periods(count);
        let values = query(PROGRAM, &periods, &source).unwrap();
        let text = query_json(PROGRAM, &periods, &source).unwrap();
        assert_eq!(
            text,
            serde_json::to_string(&values).unwrap(),
            "{count} periods"
        );
    }
    let failing = "RETURN = {\"f\": [1, query_bucket]};";
    let text = query_json(failing, &long_periods(2), &source).unwrap_err();
    let values = query(failing, &long_periods(2), &source).unwrap_err();
    assert_eq!(text, values);
    assert_eq!(text.kind, ErrorKind::ReturnedFunction);
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

#[test]
fn one_failing_period_fails_the_request_wherever_it_is() {
    let source = fixture();
    // Divides by zero in a period without window events only.
    let program = r#"
        x = 1 / sum_durations(query_bucket("aw-watcher-window_laptop"));
        RETURN = x;
    "#;
    // periods(10): indices 1-4 and 7-8 hold window events, 0, 5, 6 and 9
    // none.
    let all = periods(10);
    let busy: Vec<TimeInterval> = [1, 2, 3, 4, 7, 8].iter().map(|&i| all[i]).collect();
    let answers = query(program, &busy, &source).unwrap();
    assert_eq!(answers.len(), busy.len());
    for position in 0..=busy.len() {
        let mut periods = busy.clone();
        periods.insert(position, all[5]);
        let error = query(program, &periods, &source).unwrap_err();
        assert_eq!(
            error.kind,
            ErrorKind::DivisionByZero,
            "empty period at {position}"
        );
    }
}

/// A source that counts its reads, to see the interpreter's prefetching.
struct Counting {
    inner: aw_query::MemorySource,
    reads: std::sync::Mutex<Vec<(String, TimeInterval)>>,
    threads: std::sync::Mutex<Vec<std::thread::ThreadId>>,
}

impl Counting {
    /// The fixture, with no read counted yet.
    fn new() -> Counting {
        Counting {
            inner: fixture(),
            reads: Default::default(),
            threads: Default::default(),
        }
    }
}

impl aw_query::EventSource for Counting {
    fn query_bucket(
        &self,
        bucket_id: &str,
        interval: &TimeInterval,
    ) -> Result<Vec<aw_models::SharedEvent>, aw_query::SourceError> {
        self.reads
            .lock()
            .unwrap()
            .push((bucket_id.to_string(), *interval));
        self.threads
            .lock()
            .unwrap()
            .push(std::thread::current().id());
        self.inner.query_bucket(bucket_id, interval)
    }

    fn buckets(&self) -> Result<Vec<(String, String)>, aw_query::SourceError> {
        self.inner.buckets()
    }

    fn count_events(
        &self,
        bucket_id: &str,
        interval: &TimeInterval,
    ) -> Result<u64, aw_query::SourceError> {
        self.inner.count_events(bucket_id, interval)
    }
}

#[test]
fn buckets_read_ahead_are_read_once_and_give_the_same_result() {
    let program = r#"
        window = flood(query_bucket("aw-watcher-window_laptop"));
        afk = filter_keyvals(query_bucket("aw-watcher-afk_laptop"), "status", ["not-afk"]);
        again = query_bucket("aw-watcher-window_laptop");
        RETURN = {"active": filter_period_intersect(window, afk), "again": again};
    "#;
    let counting = Counting::new();
    let periods = long_periods(6);
    let prefetched = query(program, &periods, &counting).unwrap();
    // Read twice per period: once ahead, once more for the second call.
    let reads = counting.reads.lock().unwrap().clone();
    assert_eq!(reads.len(), 3 * periods.len(), "{reads:?}");
    for period in &periods {
        let window = reads
            .iter()
            .filter(|(bucket, at)| bucket == "aw-watcher-window_laptop" && at == period)
            .count();
        assert_eq!(window, 2);
    }
    // The same as each period on its own (one period reads nothing ahead
    // only when one bucket is named; here two are, so compare with the
    // sequential answer of a source that is not shared).
    let plain = fixture();
    for (index, period) in periods.iter().enumerate() {
        let alone = query(program, std::slice::from_ref(period), &plain).unwrap();
        assert_eq!(alone[0], prefetched[index]);
    }
}

#[test]
fn a_failing_read_ahead_fails_where_the_program_reads_it() {
    let program = r#"
        window = query_bucket("aw-watcher-window_laptop");
        x = 1 + "a";
        missing = query_bucket("no-such-bucket");
        RETURN = window;
    "#;
    // The type error at line 3 comes first, though the missing bucket was
    // read ahead and failed.
    let err = query(program, &long_periods(1), &fixture()).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Type, "{err}");
    let program = r#"
        window = query_bucket("aw-watcher-window_laptop");
        missing = query_bucket("no-such-bucket");
        RETURN = window;
    "#;
    let err = query(program, &long_periods(1), &fixture()).unwrap_err();
    assert_eq!(err.kind, ErrorKind::NoSuchBucket, "{err}");
    assert_eq!(err.pos.map(|p| p.line), Some(3), "{err}");
}

#[test]
fn buckets_found_by_literal_filters_are_read_ahead_once() {
    let program = r#"
        window = flood(query_bucket(find_bucket("aw-watcher-window_")));
        afk = query_bucket(find_bucket("aw-watcher-afk_", "laptop"));
        RETURN = {"active": filter_period_intersect(window, filter_keyvals(afk, "status", ["not-afk"]))};
    "#;
    let counting = Counting::new();
    let periods = long_periods(3);
    let prefetched = query(program, &periods, &counting).unwrap();
    let reads = counting.reads.lock().unwrap().clone();
    // Each bucket once per period: the interpreter took the read made
    // ahead instead of reading again.
    assert_eq!(reads.len(), 2 * periods.len(), "{reads:?}");
    // Resolved as find_bucket resolves: the first id in order without a
    // hostname, the laptop's with one.
    assert!(reads
        .iter()
        .all(|(bucket, _)| bucket == "aw-watcher-window_desktop"
            || bucket == "aw-watcher-afk_laptop"));
    let plain = fixture();
    for (index, period) in periods.iter().enumerate() {
        let alone = query(program, std::slice::from_ref(period), &plain).unwrap();
        assert_eq!(alone[0], prefetched[index]);
    }
}

#[test]
fn only_periods_of_two_days_or_more_are_read_ahead() {
    let program = r#"
        window = query_bucket("aw-watcher-window_laptop");
        afk = query_bucket("aw-watcher-afk_laptop");
        RETURN = {"window": window, "afk": afk};
    "#;
    let caller = std::thread::current().id();
    for (periods, ahead) in [(periods(1), false), (long_periods(1), true)] {
        let counting = Counting::new();
        query(program, &periods, &counting).unwrap();
        let threads = counting.threads.lock().unwrap().clone();
        assert_eq!(threads.len(), 2);
        // Read ahead means the second read on a thread of its own; the
        // first is the interpreter's, which would only wait for it.
        let on_caller = threads.iter().filter(|thread| **thread == caller).count();
        assert_eq!(on_caller, if ahead { 1 } else { 2 }, "{periods:?}");
    }
}
