//! Statements run at once (`fork.rs`) must give what running them in
//! order gives: the same answers and the same first failure.

mod common;

use std::sync::{Mutex, PoisonError};

use aw_query::{fork_always, forks_so_far, query_json};
use common::*;

/// `fork_always` is one switch for the process: the tests take turns.
static TURN: Mutex<()> = Mutex::new(());

/// The answer of `program` on the fixture, in order and forked, as text
/// (or the error's kind, position and message).
fn both(program: &str) -> (String, String) {
    let source = fixture();
    let periods = [period()];
    let run = || match query_json(program, &periods, &source) {
        Ok(text) => text,
        Err(error) => format!("error {:?} {:?} {}", error.kind, error.pos, error.message),
    };
    fork_always(false);
    let in_order = run();
    fork_always(true);
    let forked = run();
    fork_always(false);
    (in_order, forked)
}

fn same(program: &str) -> String {
    let _turn = TURN.lock().unwrap_or_else(PoisonError::into_inner);
    let before = forks_so_far();
    let (in_order, forked) = both(program);
    assert_eq!(forked, in_order, "{program}");
    assert!(forks_so_far() > before, "the program forked: {program}");
    in_order
}

/// [`same`] for programs that may not fork: with forking forced, reads
/// are still started ahead and awaited, and statements run while they are.
fn same_whether_forked_or_not(program: &str) -> String {
    let _turn = TURN.lock().unwrap_or_else(PoisonError::into_inner);
    let (in_order, forced) = both(program);
    assert_eq!(forced, in_order, "{program}");
    in_order
}

const DASHBOARD: &str = r#"
    events = flood(query_bucket("aw-watcher-window_laptop"));
    not_afk = flood(query_bucket("aw-watcher-afk_laptop"));
    not_afk = filter_keyvals(not_afk, "status", ["not-afk"]);
    browser_events = [];
    events_web = flood(query_bucket("aw-watcher-web-firefox_laptop"));
    window_web = filter_keyvals(events, "app", ["Firefox"]);
    window_web_re = filter_keyvals_regex(events, "app", "(?i)^fire");
    window_web = sort_by_timestamp(concat(window_web, window_web_re));
    events_web = filter_period_intersect(events_web, window_web);
    events_web = split_url_events(events_web);
    browser_events = concat(browser_events, events_web);
    browser_events = sort_by_timestamp(browser_events);
    audible_events = filter_keyvals(browser_events, "audible", [true]);
    not_afk = period_union(not_afk, audible_events);
    events = filter_period_intersect(events, not_afk);
    events = categorize(events, [[["Work"], {"type": "regex", "regex": "vim"}],
                                 [["Web"], {"type": "regex", "regex": "Fire", "ignore_case": true}]]);
    title_events = sort_by_duration(merge_events_by_keys(events, ["app", "title"]));
    app_events = sort_by_duration(merge_events_by_keys(title_events, ["app"]));
    cat_events = sort_by_duration(merge_events_by_keys(events, ["$category"]));
    app_events = limit_events(app_events, 100);
    duration = sum_durations(events);
    browser_events = split_url_events(browser_events);
    browser_urls = sort_by_duration(merge_events_by_keys(browser_events, ["url"]));
    browser_domains = sort_by_duration(merge_events_by_keys(browser_events, ["$domain"]));
    browser_duration = sum_durations(browser_events);
    RETURN = {"window": {"apps": app_events, "titles": title_events, "cats": cat_events,
                         "active": not_afk, "duration": duration},
              "browser": {"urls": browser_urls, "domains": browser_domains,
                          "duration": browser_duration}};
"#;

#[test]
fn the_dashboard_program_answers_the_same() {
    let answer = same(DASHBOARD);
    assert!(answer.contains("\"$domain\":\"github.com\""), "{answer}");
}

#[test]
fn rebinding_a_name_another_group_read_keeps_the_old_value_there() {
    same(
        r#"
        a = query_bucket("aw-watcher-window_laptop");
        b = flood(a);
        a = sort_by_duration(a);
        c = limit_events(a, 1);
        d = merge_events_by_keys(b, ["app"]);
        RETURN = [a, b, c, d];
        "#,
    );
}

#[test]
fn the_first_failure_in_order_is_reported() {
    // The second group fails at line 5 and the first at line 6: in order,
    // line 5 fails first.
    let answer = same(
        r#"
        a = query_bucket("aw-watcher-window_laptop");
        b = query_bucket("aw-watcher-afk_laptop");
        x = flood(a);
        y = merge_events_by_keys(b, 3);
        x = merge_events_by_keys(x, nothing);
        RETURN = [x, y];
        "#,
    );
    assert!(answer.starts_with("error"), "{answer}");
    assert!(answer.contains("line: 5"), "{answer}");
}

#[test]
fn groups_that_fit_the_budget_alone_but_not_together_fail_as_in_order() {
    // Each group doubles a list to 2^16 items (131,070 units built), just
    // inside the budget alone; together they are past it.
    let doubling = |name: &str| -> String {
        let mut lines = format!("{name} = [0];\n");
        for _ in 0..16 {
            lines.push_str(&format!("{name} = {name} + {name};\n"));
        }
        lines
    };
    let program = format!(
        "a = query_bucket(\"numbers\");\n{}{}RETURN = 1;\n",
        doubling("x"),
        doubling("y")
    );
    let answer = same(&program);
    assert!(answer.contains("TooLarge"), "{answer}");
}

#[test]
fn a_statement_run_while_a_read_is_awaited_fails_as_in_order() {
    // `c` does not need the read of line 3 and runs while it is awaited
    // (forced), failing first; in order the missing bucket fails first.
    let in_order = same_whether_forked_or_not(
        r#"
        a = query_bucket("aw-watcher-window_laptop");
        b = query_bucket("no-such-bucket");
        c = merge_events_by_keys(a, 3);
        RETURN = [b, c];
        "#,
    );
    assert!(in_order.contains("line: 3"), "{in_order}");
}

#[test]
fn statements_run_while_a_read_is_awaited_answer_as_in_order() {
    let in_order = same_whether_forked_or_not(
        r#"
        events = flood(query_bucket("aw-watcher-window_laptop"));
        afk = flood(query_bucket("aw-watcher-afk_laptop"));
        vim = filter_keyvals(events, "app", ["vim"]);
        events = sort_by_duration(events);
        afk = filter_keyvals(afk, "status", ["not-afk"]);
        vim = filter_period_intersect(vim, afk);
        RETURN = [events, afk, vim];
        "#,
    );
    assert!(!in_order.starts_with("error"), "{in_order}");
}

#[test]
fn a_statement_run_while_a_read_is_awaited_joins_its_group_when_the_period_forks() {
    // `stopwatch = []` runs while the web read is awaited (forced), and is
    // part of the span that forks later: its group takes what it wrote.
    let program = DASHBOARD.replace(
        "events = filter_period_intersect(events, not_afk);",
        "events = filter_period_intersect(events, not_afk);\n    stopwatch = [];",
    )
    .replace(
        "browser_duration = sum_durations(browser_events);",
        "browser_duration = sum_durations(browser_events);\n    stopwatch = merge_events_by_keys(stopwatch, [\"label\"]);",
    )
    .replace("\"duration\": browser_duration}", "\"duration\": browser_duration, \"stopwatch\": stopwatch}");
    assert!(program.contains("stopwatch = [];") && program.contains("\"stopwatch\": stopwatch"));
    let answer = same(&program);
    assert!(answer.contains("\"stopwatch\":[]"), "{answer}");
}
