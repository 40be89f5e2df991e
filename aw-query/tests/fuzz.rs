//! Fuzzing the query language's front door: arbitrary bytes and mutations
//! of real programs never panic; each ends in a result or in an error, and
//! a syntax error names a place inside the text.
//!
//! The test command runs a bounded number of cases from a fixed seed, so a
//! run is repeatable. A longer campaign sets `FUZZ_CASES` (and, for other
//! inputs, `FUZZ_SEED`):
//!
//! ```sh
//! FUZZ_CASES=200000 FUZZ_SEED=7 cargo test --release -p aw-query --test fuzz
//! ```
//!
//! "Never a hang" rests on the language's limits (`docs/API.md` §6.7),
//! which `tests/hostile.rs` times; these cases only count outcomes.

mod common;
#[path = "support/fuzz.rs"]
mod fuzz;

use aw_query::{query_json, ErrorKind};
use common::{fixture, period};
use proptest::prelude::*;
use proptest::test_runner::Config;

/// Cases per property in the test command.
const CASES: u32 = 2048;

fn config() -> Config {
    fuzz::config(CASES, 0x5eed_0fa1)
}

/// Programs as clients send them: the seeds the mutations start from.
const PROGRAMS: &[&str] = &[
    r#"events = flood(query_bucket(find_bucket("aw-watcher-window_")));
not_afk = flood(query_bucket(find_bucket("aw-watcher-afk_")));
not_afk = filter_keyvals(not_afk, "status", ["not-afk"]);
events = filter_period_intersect(events, not_afk);
events = categorize(events, [[["Work"], {"type": "regex", "regex": "(?i)code|term"}]]);
title_events = sort_by_duration(merge_events_by_keys(events, ["app", "title"]));
app_events = limit_events(sort_by_duration(merge_events_by_keys(events, ["app"])), 100);
cat_events = sort_by_duration(merge_events_by_keys(events, ["$category"]));
duration = sum_durations(events);
RETURN = {"events": events, "window": {"app_events": app_events, "title_events": title_events, "cat_events": cat_events, "active_events": not_afk, "duration": duration}};"#,
    r#"web = flood(query_bucket("aw-watcher-web-firefox"));
web = split_url_events(web);
urls = merge_events_by_keys(web, ["url", "$domain"]);
RETURN = {"urls": limit_events(sort_by_duration(urls), 10), "n": len_placeholder};"#,
    r#"x = 1 + 2 * 3 - 4 / 2; y = "a" + "b"; z = [x, y, {"k": [1, 2.5e3, true, none]}];
if x > 2 { w = x; } elif x == 2 { w = 0; } else { w = -1; }
RETURN = [z, w, contains(z, 1), tag(query_bucket("aw-watcher-window_host"), [])];"#,
    r#"RETURN = concat(query_bucket("aw-watcher-window_host"), []);"#,
    r#"a = query_bucket_names(); b = nop(); print(a, b); RETURN = {"names": a};"#,
];

/// Pieces a mutation may insert: tokens, and fragments that stress the
/// lexer (unterminated strings, escapes, deep nesting, odd characters).
const PIECES: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ";",
    "=",
    "==",
    "!=",
    "+",
    "-",
    "*",
    "/",
    "%",
    ".",
    ":",
    "\"",
    "'",
    "\\",
    "\\\"",
    "\"\\u00e9\"",
    "\n",
    "\t",
    " ",
    "#",
    "//",
    "RETURN",
    "if",
    "elif",
    "else",
    "true",
    "false",
    "none",
    "1e309",
    "-0",
    "0x1F",
    "9999999999999999999",
    "query_bucket",
    "flood",
    "(((((((((",
    "[[[[[[[[[",
    "\u{0}",
    "\u{feff}",
    "é",
    "☃",
    "\u{1F600}",
];

/// A mutation of a program's text, applied at character boundaries.
#[derive(Debug, Clone)]
enum Mutation {
    Delete { at: usize, len: usize },
    Insert { at: usize, piece: usize },
    Duplicate { at: usize, len: usize },
    Swap { a: usize, b: usize },
    Truncate { at: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1usize..40).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<usize>(), 0..PIECES.len()).prop_map(|(at, piece)| Mutation::Insert { at, piece }),
        (any::<usize>(), 1usize..60).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Swap { a, b }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
    ]
}

/// `text` with each mutation applied in turn.
fn mutate(text: &str, mutations: &[Mutation]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for mutation in mutations {
        let n = chars.len().max(1);
        match *mutation {
            Mutation::Delete { at, len } => {
                let at = at % n;
                let end = (at + len).min(chars.len());
                if at < end {
                    chars.drain(at..end);
                }
            }
            Mutation::Insert { at, piece } => {
                let at = at % (chars.len() + 1);
                chars.splice(at..at, PIECES[piece].chars());
            }
            Mutation::Duplicate { at, len } => {
                let at = at % n;
                let end = (at + len).min(chars.len());
                if at < end {
                    let copy: Vec<char> = chars[at..end].to_vec();
                    chars.splice(end..end, copy);
                }
            }
            Mutation::Swap { a, b } => {
                if !chars.is_empty() {
                    let (a, b) = (a % chars.len(), b % chars.len());
                    chars.swap(a, b);
                }
            }
            Mutation::Truncate { at } => chars.truncate(at % n),
        }
    }
    chars.into_iter().collect()
}

/// Runs `program`: a result, or an error whose syntax errors point inside
/// the text. A panic fails the property through proptest.
fn outcome_is_clean(program: &str) -> Result<(), TestCaseError> {
    match query_json(program, &[period()], &fixture()) {
        Ok(text) => {
            prop_assert!(
                serde_json::from_str::<serde_json::Value>(&text).is_ok(),
                "the answer is JSON"
            );
        }
        Err(error) => {
            prop_assert!(!error.message.is_empty());
            if error.kind == ErrorKind::Syntax {
                let pos = error.pos.expect("a syntax error has a position");
                let lines = program.split('\n').count().max(1) as u32;
                prop_assert!(
                    pos.line >= 1 && pos.line <= lines,
                    "{error:?} in {program:?}"
                );
                let line = program.split('\n').nth(pos.line as usize - 1).unwrap_or("");
                prop_assert!(
                    pos.column >= 1 && pos.column as usize <= line.chars().count() + 1,
                    "{error:?} in {program:?}"
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        outcome_is_clean(&String::from_utf8_lossy(&bytes))?;
    }

    #[test]
    fn token_soup_never_panics(pieces in proptest::collection::vec(0..PIECES.len(), 0..80)) {
        let program: String = pieces.iter().map(|&piece| PIECES[piece]).collect();
        outcome_is_clean(&program)?;
    }

    #[test]
    fn mutated_programs_never_panic(
        program in 0..PROGRAMS.len(),
        mutations in proptest::collection::vec(mutation(), 1..6),
    ) {
        outcome_is_clean(&mutate(PROGRAMS[program], &mutations))?;
    }
}

#[test]
fn the_seed_programs_run_or_fail_cleanly() {
    for program in PROGRAMS {
        outcome_is_clean(program).unwrap();
    }
}
