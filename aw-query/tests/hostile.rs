//! Hostile programs fail cleanly and fast: each case must end with a clear
//! error or a result within a second (see `TIME_LIMIT` for the margin this
//! debug-mode test allows), on a 2 MiB stack.

mod common;

use std::time::{Duration, Instant};

use aw_models::TimeInterval;
use aw_query::{query, query_json, ErrorKind, MemorySource};
use common::{ev, fixture, period};
use serde_json::json;

/// How long a hostile case may take in this test. The goal is an answer
/// within a second, and the figures printed with `--nocapture` show it on
/// an idle machine. Debug builds on a shared two-core CI runner can be
/// several times slower, while runaway input (super-linear work, unbounded
/// growth) takes minutes. A wider bound still catches that without making
/// the suite flaky.
const TIME_LIMIT: Duration = Duration::from_secs(5);

/// Runs `program` on a fresh 2 MiB thread (the default test stack) and
/// returns its outcome and how long it took.
fn run_on_small_stack(
    source: MemorySource,
    program: String,
    periods: Vec<TimeInterval>,
) -> (
    Result<Vec<serde_json::Value>, aw_query::QueryError>,
    Duration,
) {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let start = Instant::now();
            let result = query(&program, &periods, &source);
            let elapsed = start.elapsed();
            // The server's path, the answer as text, ends the same way
            // and as fast, on the same stack.
            let start = Instant::now();
            let text = query_json(&program, &periods, &source);
            let text_elapsed = start.elapsed();
            match (&result, &text) {
                (Ok(values), Ok(text)) => {
                    assert_eq!(&serde_json::to_string(values).unwrap(), text);
                }
                (Err(error), Err(text_error)) => assert_eq!(error, text_error),
                _ => panic!("query and query_json disagree: {result:?} / {text:?}"),
            }
            (result, elapsed.max(text_elapsed))
        })
        .unwrap()
        .join()
        .expect("the query thread survives")
}

fn expect_kind(program: String, kind: ErrorKind) {
    let (result, elapsed) = run_on_small_stack(fixture(), program.clone(), vec![period()]);
    let shown: String = program.chars().take(60).collect();
    let error = result.expect_err(&shown);
    assert_eq!(error.kind, kind, "{shown}: {error}");
    assert!(elapsed < TIME_LIMIT, "{shown}: took {elapsed:?}");
    eprintln!(
        "{shown:.40}… → {:?} in {elapsed:?}: {}",
        error.kind, error.message
    );
}

fn expect_ok(program: String) -> serde_json::Value {
    let (result, elapsed) = run_on_small_stack(fixture(), program.clone(), vec![period()]);
    let shown: String = program.chars().take(60).collect();
    let mut results = result.unwrap_or_else(|e| panic!("{shown}: {e}"));
    assert!(elapsed < TIME_LIMIT, "{shown}: took {elapsed:?}");
    eprintln!("{shown:.40}… → ok in {elapsed:?}");
    results.remove(0)
}

const DEEP: usize = 10_000;

#[test]
fn deep_nesting_of_every_kind_is_refused() {
    let cases = [
        format!("RETURN = {}1{};", "(".repeat(DEEP), ")".repeat(DEEP)),
        format!("RETURN = {}1{};", "[".repeat(DEEP), "]".repeat(DEEP)),
        format!("RETURN = {}1{};", "{\"a\": ".repeat(DEEP), "}".repeat(DEEP)),
        format!("RETURN = {}[]{};", "concat(".repeat(DEEP), ")".repeat(DEEP)),
        format!(
            "{}RETURN = 1;{}",
            "if true { ".repeat(DEEP),
            " }".repeat(DEEP)
        ),
        format!("RETURN = {}1{};", "1 + (".repeat(DEEP), ")".repeat(DEEP)),
    ];
    for program in cases {
        expect_kind(program, ErrorKind::TooDeep);
    }
}

#[test]
fn nesting_below_the_limit_works() {
    let depth = 200;
    let value = expect_ok(format!(
        "RETURN = {}1{};",
        "[".repeat(depth),
        "]".repeat(depth)
    ));
    let mut inner = &value;
    for _ in 0..depth {
        inner = &inner[0];
    }
    assert_eq!(inner, &json!(1.0));
    expect_ok(format!(
        "RETURN = {}1{};",
        "(".repeat(depth),
        ")".repeat(depth)
    ));
    expect_ok(format!(
        "{}RETURN = 1;{}",
        "if true { ".repeat(depth),
        " }".repeat(depth)
    ));
}

#[test]
fn long_flat_programs_run() {
    // Operator chains and statement lists are flat: no depth limit needed.
    let chain = format!("RETURN = 0{};", " + 1".repeat(DEEP));
    assert_eq!(expect_ok(chain), json!(10_000.0));
    let statements = format!("x = 0;{} RETURN = x;", " x = x + 1;".repeat(DEEP));
    assert_eq!(expect_ok(statements), json!(10_000.0));
}

#[test]
fn values_built_deeper_than_the_limit_are_refused() {
    // Each statement adds a level; no single expression is deep.
    expect_kind(
        format!("a = 1;{} RETURN = a;", " a = [a];".repeat(DEEP)),
        ErrorKind::TooDeep,
    );
    expect_kind(
        format!("a = 1;{} RETURN = a;", " a = {\"k\": a};".repeat(DEEP)),
        ErrorKind::TooDeep,
    );
}

#[test]
fn doubling_bombs_are_refused() {
    let bombs = [
        format!("a = [1];{} RETURN = a;", " a = a + a;".repeat(30)),
        format!("a = [1];{} RETURN = a;", " a = [a, a];".repeat(30)),
        format!(
            "a = {{}};{} RETURN = a;",
            " a = {\"x\": a, \"y\": a};".repeat(30)
        ),
        format!("s = \"xxxxxxxx\";{} RETURN = s;", " s = s + s;".repeat(30)),
        format!(
            "w = query_bucket(\"aw-watcher-window_laptop\");{} RETURN = w;",
            " w = w + w;".repeat(30)
        ),
        format!(
            "w = query_bucket(\"aw-watcher-window_laptop\");{} RETURN = w;",
            " w = concat(w, w);".repeat(30)
        ),
        format!(
            "s = \"xxxxxxxx\";{} a = [s];{} RETURN = a;",
            " s = s + s;".repeat(20),
            " a = a + a;".repeat(20)
        ),
    ];
    for program in bombs {
        expect_kind(program, ErrorKind::TooLarge);
    }
}

#[test]
fn catastrophic_regexes_end_quickly() {
    let mut source = MemorySource::new();
    let long = format!("{}!", "a".repeat(5_000));
    source.insert(
        "b",
        "h",
        (0..20)
            .map(|i| ev(i, i as f64, 1.0, json!({"title": long, "app": "x"})))
            .collect(),
    );
    let cases = [
        // Handled by the linear-time engine.
        ("(a+)+$", None),
        ("(a|aa)*b", None),
        ("(a*)*(a*)*(a*)*c", None),
        ("(?i)(x+x+)+y", None),
        // Need backtracking: either fast enough or stopped by the
        // backtracking limit.
        ("(a+)+(?=b)", Some(None)),
        ("(a*)*\\1b", Some(None)),
        ("(?=(a|aa)*b)", Some(None)),
        // Too big to compile.
        ("((a{100}){100}){100}", Some(Some(ErrorKind::Regex))),
    ];
    for (pattern, kind) in cases {
        let program = format!(
            "RETURN = sum_durations(filter_keyvals_regex(query_bucket(\"b\"), \"title\", \"{pattern}\"));"
        );
        let rules = format!(
            "RETURN = sum_durations(categorize(query_bucket(\"b\"), [[[\"x\"], {{\"type\": \"regex\", \"regex\": \"{pattern}\"}}]]));"
        );
        for program in [program, rules] {
            let (result, elapsed) =
                run_on_small_stack(source.clone(), program.clone(), vec![period()]);
            assert!(elapsed < TIME_LIMIT, "{pattern}: took {elapsed:?}");
            match kind {
                None => assert!(result.is_ok(), "{pattern}: {result:?}"),
                Some(None) => {
                    if let Err(error) = &result {
                        assert_eq!(error.kind, ErrorKind::Regex, "{pattern}: {error}");
                    }
                }
                Some(Some(kind)) => {
                    assert_eq!(result.as_ref().unwrap_err().kind, kind, "{pattern}")
                }
            }
            let outcome = result.map_err(|e| e.message);
            eprintln!("regex {pattern} → {outcome:?} in {elapsed:?}");
        }
    }
}

#[test]
fn ten_thousand_periods_run_within_a_second() {
    let periods: Vec<TimeInterval> = (0..10_000)
        .map(|i| {
            let start = common::at(i as f64 * 4.0);
            TimeInterval::new(start, common::at(i as f64 * 4.0 + 4.0))
        })
        .collect();
    let program = "w = flood(query_bucket(\"aw-watcher-window_laptop\")); RETURN = {\"t\": sum_durations(w), \"top\": limit_events(sort_by_duration(w), 1)};".to_string();
    let (result, elapsed) = run_on_small_stack(fixture(), program, periods);
    let results = result.unwrap();
    assert_eq!(results.len(), 10_000);
    assert_eq!(results[0]["t"], json!(4.0));
    eprintln!("10,000 periods in {elapsed:?}");
    assert!(elapsed < TIME_LIMIT, "took {elapsed:?}");
}

#[test]
fn long_programs_and_strings_lex_quickly() {
    expect_kind(
        format!("RETURN = \"{}", "\\\"".repeat(100_000)),
        ErrorKind::Syntax,
    );
    expect_kind(
        format!("RETURN = {};", "1".repeat(100_000) + " +"),
        ErrorKind::Syntax,
    );
    let huge_number = format!("RETURN = {};", "9".repeat(400));
    assert_eq!(expect_ok(huge_number), json!(null));
}

proptest::proptest! {
    /// Any soup of tokens ends in a result or an error, never a panic.
    #[test]
    fn random_programs_never_panic(tokens in proptest::collection::vec(proptest::sample::select(vec![
        "x", "y", "RETURN", "=", "==", "+", "-", "*", "/", "%", "(", ")", "[", "]", "{", "}", ",", ":", ";",
        "if", "elif", "else", "return", "true", "none", "0", "1.5", "\"s\"", "'t'", "\"app\"", "\n", "#c\n",
        "query_bucket(\"aw-watcher-window_laptop\")", "flood", "concat", "merge_events_by_keys", "sum_durations",
        "filter_keyvals", "categorize", "limit_events", "contains", "TIMEINTERVAL", "[[\"A\"], {\"regex\": \"a\"}]",
    ]), 0..40)) {
        let program = tokens.join(" ");
        let _ = query(&program, &[period()], &fixture());
    }
}

#[test]
fn many_copies_of_a_bucket_are_refused() {
    let mut source = MemorySource::new();
    source.insert(
        "big",
        "h",
        (0..20_000)
            .map(|i| ev(i, i as f64, 1.0, json!({"app": "x", "title": "y"})))
            .collect(),
    );
    // Each statement copies the bucket a variable still holds.
    let copies: String = (0..40)
        .map(|i| format!(" c{i} = sort_by_duration(w);"))
        .collect();
    let program = format!("w = query_bucket(\"big\");{copies} RETURN = 0;");
    let (result, elapsed) = run_on_small_stack(source.clone(), program, vec![period()]);
    let error = result.unwrap_err();
    assert_eq!(error.kind, ErrorKind::TooLarge, "{error}");
    assert!(elapsed < TIME_LIMIT, "took {elapsed:?}");
    eprintln!(
        "40 copies of 20,000 events → {} in {elapsed:?}",
        error.message
    );
    // A few copies, as real queries make, are fine.
    let program = "w = query_bucket(\"big\"); a = filter_keyvals(w, \"app\", [\"x\"]); b = sort_by_duration(w); RETURN = sum_durations(a) + sum_durations(b);";
    let (result, _) = run_on_small_stack(source, program.to_string(), vec![period()]);
    assert_eq!(result.unwrap(), [json!(40_000.0)]);
}

#[test]
fn hostile_data_stays_near_linear() {
    // 40,000 events that all overlap each other (negative gaps everywhere),
    // with alternating and repeated data: the shape that made the Python
    // server spin for minutes.
    let mut source = MemorySource::new();
    let events: Vec<_> = (0..40_000)
        .map(|i| {
            let title = format!("title {}", i % 2_000);
            let app = if i % 2 == 0 { "a" } else { "b" };
            ev(
                i,
                i as f64 * 0.5,
                100_000.0 - i as f64,
                json!({"app": app, "title": title}),
            )
        })
        .collect();
    source.insert("overlapping", "h", events);
    let rules = (0..15)
        .map(|i| format!("[[\"c{i}\"], {{\"type\": \"regex\", \"regex\": \"title {i}\\\\b|x{i}\", \"ignore_case\": true}}]"))
        .collect::<Vec<_>>()
        .join(", ");
    let program = format!(
        "e = query_bucket(\"overlapping\");
         f = flood(e);
         i = filter_period_intersect(e, f);
         u = union_no_overlap(sort_by_timestamp(e), f);
         p = period_union(e, f);
         c = categorize(e, [{rules}]);
         m = merge_events_by_keys(c, [\"app\", \"title\", \"$category\"]);
         k = chunk_events_by_key(e, \"app\");
         RETURN = [sum_durations(f), sum_durations(i), sum_durations(u), sum_durations(p), sum_durations(m), sum_durations(k)];"
    );
    let (result, elapsed) = run_on_small_stack(source, program, vec![period()]);
    let result = result.unwrap();
    eprintln!(
        "40,000 overlapping events through every period transform in {elapsed:?}: {result:?}"
    );
    assert!(elapsed < TIME_LIMIT, "took {elapsed:?}");
}
