//! The query2 language (`docs/API.md`, "Query language"): lexer → parser → syntax tree →
//! interpreter, with the event transforms as pure functions.
//!
//! The entry point is [`query`]: it parses a program once and runs it once
//! per period against an [`EventSource`] (the datastore, or a
//! [`MemorySource`] in tests). Every failure is a [`QueryError`] with an
//! [`ErrorKind`] and, where it belongs to a place in the program, a
//! [`Pos`]; the server turns them into 400 responses. Hostile programs are
//! stopped by the limits documented in [`limits`].
//!
//! How the pieces fit:
//!
//! - `lexer` splits the text into tokens with line and column;
//!   `parser` builds the tree of `ast` (bounded nesting, flat operator
//!   chains) and marks each variable read that is the last use of it.
//! - `interpreter` walks the tree with one environment per period; a last
//!   use moves the value out, so a transform usually owns the only
//!   reference to an event list and works in place. Lists, dicts and event
//!   lists are reference counted (`value`); a list still held by a
//!   variable reaches a transform shared, and filters then copy only what
//!   they keep.
//! - `builtins` is the table of built-in functions: one entry each with
//!   its name, argument count, the function in `functions` that runs it,
//!   and what the analyses need (pure or not, keys observed, reads it may
//!   start ahead). The interpreter calls built-ins through it; the fork
//!   planner (`fork`), the key analysis (`keys`) and the read-ahead
//!   (`prefetch`) derive from it, and a built-in that declares nothing is
//!   treated as impure and observing every key.
//! - `functions` takes each built-in's arguments and hands them to
//!   [`transforms`] (one concept per file), to `rules` for categorize/tag (regexes compiled
//!   by `regex` and kept in a small process-wide cache, with the `regex`
//!   crate for plain patterns and `fancy-regex` for lookaround and
//!   backreferences, and one match per distinct data object or combination
//!   of looked-at values), and to the [`EventSource`].
//! - [`query`] runs several periods on parallel threads (one interpreter
//!   and parsed copy of the program per thread); the result is that of
//!   running them in order.
//! - Events are [`aw_models::SharedEvent`]s: their data objects sit behind
//!   an `Arc` shared by every event with the same data. Sources hand out
//!   shared data (the datastore decodes each distinct stored text once per
//!   read), copying or splitting an event copies a pointer, equality and
//!   grouping look at the pointer first (`merge_events_by_keys` hashes the
//!   key values once per distinct object), and transforms that add keys
//!   (`categorize`, `tag`, `split_url_events`, `simplify_window_titles`)
//!   change each distinct object once (`transforms::edit_data`), in place
//!   when no other list holds it.
//!   A year of the benchmark workload has ~535k events but ~40k distinct
//!   data objects, so this is what keeps a year query's memory and
//!   allocation count near the size of the distinct data. Only what
//!   `RETURN` holds is written out, as JSON text straight from the values
//!   ([`query_json`]).
//!
//! This crate knows nothing of HTTP or SQL: the server maps errors to
//! responses, the datastore selects and clips events.
//!
//! ```
//! use aw_query::{query, MemorySource};
//! let period = "2021-06-01T00:00:00Z/2021-06-02T00:00:00Z".parse().unwrap();
//! let result = query("x = 1 + 2; RETURN = {\"x\": x};", &[period], &MemorySource::new()).unwrap();
//! assert_eq!(result, [serde_json::json!({"x": 3.0})]);
//! ```

mod address;
mod ast;
mod builtins;
mod dropper;
mod error;
mod forcing;
mod fork;
mod functions;
mod interpreter;
mod keys;
mod lexer;
pub mod limits;
mod parser;
mod prefetch;
mod regex;
mod rules;
mod source;
pub mod transforms;
mod value;

use std::sync::atomic::{AtomicUsize, Ordering};

use aw_models::TimeInterval;

pub use error::{ErrorKind, Pos, QueryError};
#[doc(hidden)]
pub use forcing::{fork_always, forks_so_far};
pub use source::{EventSource, MemorySource, SourceError};

/// Runs `program` once per period; one JSON result per period, in order.
///
/// The results as `serde_json` values, for Rust callers; the server
/// answers with [`query_json`], the same results as text.
pub fn query(
    program: &str,
    timeperiods: &[TimeInterval],
    source: &dyn EventSource,
) -> Result<Vec<serde_json::Value>, QueryError> {
    run_periods(program, timeperiods, source, value::Value::into_json)
}

/// Runs `program` once per period and returns the JSON array of the
/// results, in order: the body of the API's answer, written straight from
/// the interpreter's values.
///
/// The program is parsed once; a syntax error fails the request even with
/// no periods. Regexes are compiled once per thread for all periods, and
/// the time budget of backtracking regexes is shared by all periods.
///
/// Several periods run on up to [`MAX_THREADS`] threads (as many as the
/// machine has cores, the calling thread one of them), each taking the
/// next period not yet taken when it is done with one: the dashboard sends
/// up to 16 one-day periods in one request, and they are independent but
/// not equally long (a weekday holds several times a Sunday's events).
/// The result is the same as running them in order; when several fail,
/// the error of the earliest is returned.
pub fn query_json(
    program: &str,
    timeperiods: &[TimeInterval],
    source: &dyn EventSource,
) -> Result<String, QueryError> {
    let results = query_texts(program, timeperiods, source)?;
    Ok(format!("[{}]", results.join(",")))
}

/// Each period's result as JSON text, in order: [`query_json`]'s array
/// before it is joined, for a caller that keeps answers per period.
pub fn query_texts(
    program: &str,
    timeperiods: &[TimeInterval],
    source: &dyn EventSource,
) -> Result<Vec<String>, QueryError> {
    run_periods(program, timeperiods, source, |result| result.to_json_text())
}

/// The JSON form of each period's result, made by `output` (see
/// [`query_json`]).
fn run_periods<T: Send>(
    program: &str,
    timeperiods: &[TimeInterval],
    source: &dyn EventSource,
    output: interpreter::Output<T>,
) -> Result<Vec<T>, QueryError> {
    let parsed = parse_cached(program)?;
    let budget = regex::TimeBudget::new(limits::MAX_BACKTRACK_TIME);
    let threads = aw_threads::cores()
        .clamp(1, MAX_THREADS)
        .min(timeperiods.len());
    if threads <= 1 {
        let mut interpreter =
            interpreter::Interpreter::new(source, regex::RegexCache::sharing(budget));
        return timeperiods
            .iter()
            .map(|period| interpreter.run(&parsed, period, output))
            .collect();
    }
    // The calling thread takes periods too, with its warm allocator heap,
    // instead of waiting for the others.
    let mut results: Vec<Option<Result<T, QueryError>>> =
        timeperiods.iter().map(|_| None).collect();
    let next = &AtomicUsize::new(0);
    // The earliest period known to fail: later ones cannot matter, so no
    // thread starts one. Every earlier period was taken before it (the
    // counter only grows) and is finished by its thread.
    let failed = &AtomicUsize::new(usize::MAX);
    let run_share = |parsed: &interpreter::Program, budget| {
        let mut done = Vec::new();
        let mut interpreter =
            interpreter::Interpreter::new(source, regex::RegexCache::sharing(budget));
        // The other threads have the other cores.
        interpreter.allow_fork(false);
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            if index >= timeperiods.len() || index > failed.load(Ordering::Relaxed) {
                break;
            }
            let result = interpreter.run(parsed, &timeperiods[index], output);
            if result.is_err() {
                failed.fetch_min(index, Ordering::Relaxed);
            }
            done.push((index, result));
        }
        done
    };
    std::thread::scope(|scope| {
        let handles: Vec<_> = (1..threads)
            .map(|_| {
                let budget = std::sync::Arc::clone(&budget);
                let parsed: &interpreter::Program = &parsed;
                scope.spawn(move || run_share(parsed, budget))
            })
            .collect();
        let mine = run_share(&parsed, std::sync::Arc::clone(&budget));
        for (index, result) in mine {
            results[index] = Some(result);
        }
        for handle in handles {
            match handle.join() {
                Ok(done) => {
                    for (index, result) in done {
                        results[index] = Some(result);
                    }
                }
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    });
    let mut out = Vec::with_capacity(results.len());
    for result in results {
        match result {
            Some(result) => out.push(result?),
            // Only after an earlier period failed, which returned above.
            None => unreachable!("every period up to the first failure ran"),
        }
    }
    Ok(out)
}

/// Most threads one query runs its periods on.
pub const MAX_THREADS: usize = 4;

/// A parsed program, shared by the runs that use it.
type Program = std::rc::Rc<interpreter::Program>;

/// Programs cached parsed per thread.
const CACHED_PROGRAMS: usize = 4;

/// Longest program cached parsed, in bytes of text: the dashboard's are a
/// few kilobytes, and a huge one-off program should not stay in memory.
const CACHED_PROGRAM_BYTES: usize = 256 * 1024;

thread_local! {
    /// The last few programs parsed on this thread, by text. The dashboard
    /// sends the same few programs again and again, for other periods, and
    /// parsing one (its category rules are a long literal) showed in a
    /// 1-day query's profile (`benches/runs/2026-11-21-query-path.md`).
    /// Each thread has its own cache.
    static PARSED: std::cell::RefCell<Vec<(Box<str>, Program)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// `program` parsed, from this thread's recent programs if it is one of
/// them. Only programs that parse are cached; a failing one fails again.
fn parse_cached(program: &str) -> Result<Program, QueryError> {
    PARSED.with_borrow_mut(|cache| {
        if let Some(found) = cache.iter().position(|(text, _)| **text == *program) {
            let entry = cache.remove(found);
            let parsed = std::rc::Rc::clone(&entry.1);
            cache.push(entry);
            return Ok(parsed);
        }
        let parsed: Program = std::rc::Rc::new(parser::parse(program)?.into());
        if program.len() > CACHED_PROGRAM_BYTES {
            return Ok(parsed);
        }
        if cache.len() >= CACHED_PROGRAMS {
            cache.remove(0);
        }
        cache.push((program.into(), std::rc::Rc::clone(&parsed)));
        Ok(parsed)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_cached_parsed_per_thread_and_answer_the_same() {
        let program = "x = 1 + 2; RETURN = {\"x\": x, \"at\": STARTTIME};";
        let first = parse_cached(program).unwrap();
        let again = parse_cached(program).unwrap();
        assert!(std::rc::Rc::ptr_eq(&first, &again));
        let periods: Vec<TimeInterval> = [
            "2021-06-01T00:00:00Z/2021-06-02T00:00:00Z",
            "2021-06-02T00:00:00Z/2021-06-03T00:00:00Z",
        ]
        .iter()
        .map(|period| period.parse().unwrap())
        .collect();
        let source = MemorySource::new();
        let once = query(program, &periods, &source).unwrap();
        assert_eq!(query(program, &periods, &source).unwrap(), once);
        assert_eq!(once[1]["at"], "2021-06-02T00:00:00+00:00");
        // Only the last few stay; a failing program is never cached.
        for n in 0..CACHED_PROGRAMS {
            parse_cached(&format!("RETURN = {n};")).unwrap();
        }
        assert!(!std::rc::Rc::ptr_eq(
            &first,
            &parse_cached(program).unwrap()
        ));
        assert!(parse_cached("RETURN = ;").is_err());
        assert!(parse_cached("RETURN = ;").is_err());
    }
}
