//! The one test helper of the language tests: [`check`] runs a program
//! against a small fixture and compares the result with the expectation.
#![allow(dead_code)] // each test file uses part of the helpers

use aw_models::{Duration, Event, TimeInterval, Timestamp};
use aw_query::{query, ErrorKind, MemorySource};
use serde_json::{json, Value};

/// 2021-06-01T10:00:00Z plus `secs`.
pub fn at(secs: f64) -> Timestamp {
    Timestamp::from_nanos(1_622_541_600_000_000_000 + (secs * 1e9) as i64)
}

/// An event starting `start` seconds after 10:00 lasting `duration` seconds.
pub fn ev(id: i64, start: f64, duration: f64, data: Value) -> Event {
    let mut event = Event::new(
        at(start),
        Duration::from_nanos((duration * 1e9) as i64),
        data.as_object().cloned().expect("event data is an object"),
    );
    event.id = Some(id);
    event
}

/// The fixture: a window, an afk and a web bucket on host "laptop", and an
/// empty bucket on "desktop".
pub fn fixture() -> MemorySource {
    let mut source = MemorySource::new();
    source.insert(
        "aw-watcher-window_laptop",
        "laptop",
        vec![
            ev(1, 0.0, 10.0, json!({"app": "vim", "title": "main.rs"})),
            ev(2, 10.0, 5.0, json!({"app": "Firefox", "title": "GitHub"})),
            ev(3, 16.0, 4.0, json!({"app": "vim", "title": "lib.rs"})),
            ev(4, 30.0, 10.0, json!({"app": "Firefox", "title": "Docs"})),
        ],
    );
    source.insert(
        "aw-watcher-afk_laptop",
        "laptop",
        vec![
            ev(5, 0.0, 25.0, json!({"status": "not-afk"})),
            ev(6, 25.0, 10.0, json!({"status": "afk"})),
            ev(7, 35.0, 5.0, json!({"status": "not-afk"})),
        ],
    );
    source.insert(
        "aw-watcher-web-firefox_laptop",
        "laptop",
        vec![
            ev(
                8,
                10.0,
                5.0,
                json!({"url": "https://www.github.com/x?y=1", "title": "GitHub", "audible": false}),
            ),
            ev(
                9,
                30.0,
                10.0,
                json!({"url": "https://docs.rs/", "title": "Docs", "audible": true}),
            ),
        ],
    );
    source.insert("aw-watcher-window_desktop", "desktop", Vec::new());
    source.insert(
        "numbers",
        "laptop",
        vec![
            ev(10, 0.0, 1.0, json!({"n": 1})),
            ev(11, 1.0, 1.0, json!({"n": 2.5})),
            ev(12, 2.0, 1.0, json!({"n": "1"})),
            ev(13, 3.0, 1.0, json!({"n": [1, [true]]})),
        ],
    );
    source.insert(
        "titles",
        "laptop",
        vec![
            ev(
                20,
                0.0,
                1.0,
                json!({"app": "code", "title": "● (3) main.rs - FPS: 59.2"}),
            ),
            ev(21, 1.0, 1.0, json!({"title": "(2) Facebook ● FPS: 1"})),
        ],
    );
    source
}

/// The period of every check: the whole day of the fixture.
pub fn period() -> TimeInterval {
    "2021-06-01T00:00:00Z/2021-06-02T00:00:00Z".parse().unwrap()
}

/// Runs `program` on the fixture for [`period`] and compares with
/// `expected`: JSON text of the result, or `error <Kind> <line>:<column>
/// <message fragment>` (`-:-` for errors without position).
pub fn check(program: &str, expected: &str) {
    check_with(&fixture(), program, expected);
}

/// [`check`] against another source.
pub fn check_with(source: &MemorySource, program: &str, expected: &str) {
    let result = query(program, &[period()], source);
    match expected.strip_prefix("error ") {
        None => {
            let expected: Value = serde_json::from_str(expected)
                .unwrap_or_else(|e| panic!("bad expectation {expected:?}: {e}"));
            match result {
                Ok(results) => assert_eq!(results, [expected], "program: {program}"),
                Err(error) => panic!("program: {program}\nunexpected error: {error}"),
            }
        }
        Some(spec) => {
            let mut parts = spec.splitn(3, ' ');
            let kind = parts.next().unwrap();
            let position = parts.next().unwrap();
            let fragment = parts.next().unwrap_or("");
            let error = match result {
                Ok(results) => panic!("program: {program}\nexpected an error, got {results:?}"),
                Err(error) => error,
            };
            assert_eq!(
                format!("{:?}", error.kind),
                kind,
                "program: {program}\n{error}"
            );
            let got = match error.pos {
                Some(pos) => format!("{}:{}", pos.line, pos.column),
                None => "-:-".to_string(),
            };
            assert_eq!(got, position, "program: {program}\n{error}");
            assert!(
                error.message.contains(fragment),
                "program: {program}\nmessage {:?} lacks {fragment:?}",
                error.message
            );
            assert_eq!(error.to_string(), error.message);
        }
    }
}

/// The JSON text of events given as `(id, start, duration, data)`, written
/// as the server writes them.
pub fn events(list: &[(Option<i64>, f64, f64, Value)]) -> String {
    let values: Vec<Value> = list
        .iter()
        .map(|(id, start, duration, data)| {
            json!({
                "id": id,
                "timestamp": at(*start).to_string(),
                "duration": duration,
                "data": data,
            })
        })
        .collect();
    Value::Array(values).to_string()
}

/// Runs `program` and returns its error kind (for tests that only care
/// that a hostile input fails cleanly).
pub fn error_kind(program: &str) -> Option<ErrorKind> {
    query(program, &[period()], &fixture())
        .err()
        .map(|e| e.kind)
}
