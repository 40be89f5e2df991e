//! Every built-in function of `docs/API.md` §7 and §7.23, on the fixture of
//! `common`.

mod common;

use common::{check, events};
use serde_json::json;

const W: &str = "w = query_bucket(\"aw-watcher-window_laptop\");\n";
const A: &str = "a = query_bucket(\"aw-watcher-afk_laptop\");\n";
const B: &str = "b = query_bucket(\"aw-watcher-web-firefox_laptop\");\n";

fn run(cases: Vec<(String, String)>) {
    for (program, expected) in cases {
        check(&program, &expected);
    }
}

#[test]
fn bucket_functions() {
    run(vec![
        (
            format!("{W}RETURN = w;"),
            events(&[
                (Some(4), 30., 10., json!({"app": "Firefox", "title": "Docs"})),
                (Some(3), 16., 4., json!({"app": "vim", "title": "lib.rs"})),
                (Some(2), 10., 5., json!({"app": "Firefox", "title": "GitHub"})),
                (Some(1), 0., 10., json!({"app": "vim", "title": "main.rs"})),
            ]),
        ),
        (
            "RETURN = query_bucket_names();".into(),
            r#"["aw-watcher-afk_laptop", "aw-watcher-web-firefox_laptop", "aw-watcher-window_desktop", "aw-watcher-window_laptop", "numbers", "titles"]"#.into(),
        ),
        ("RETURN = query_bucket_eventcount(\"aw-watcher-window_laptop\");".into(), "4.0".into()),
        ("RETURN = query_bucket_eventcount(\"aw-watcher-window_desktop\");".into(), "0.0".into()),
        ("RETURN = find_bucket(\"aw-watcher-window_\");".into(), r#""aw-watcher-window_desktop""#.into()),
        ("RETURN = find_bucket(\"aw-watcher-window_\", \"laptop\");".into(), r#""aw-watcher-window_laptop""#.into()),
        ("RETURN = find_bucket(\"aw-watcher-window_laptop\");".into(), r#""aw-watcher-window_laptop""#.into()),
        ("RETURN = find_bucket(\"aw-watcher-afk\");".into(), r#""aw-watcher-afk_laptop""#.into()),
    ]);
}

#[test]
fn flood_merge_and_chunk() {
    run(vec![
        (
            format!("{W}RETURN = flood(w);"),
            events(&[
                (Some(1), 0., 10., json!({"app": "vim", "title": "main.rs"})),
                (
                    Some(2),
                    10.,
                    5.5,
                    json!({"app": "Firefox", "title": "GitHub"}),
                ),
                (Some(3), 15.5, 4.5, json!({"app": "vim", "title": "lib.rs"})),
                (
                    Some(4),
                    30.,
                    10.,
                    json!({"app": "Firefox", "title": "Docs"}),
                ),
            ]),
        ),
        ("RETURN = flood([]);".into(), "[]".into()),
        (
            format!("{W}RETURN = merge_events_by_keys(w, [\"app\"]);"),
            events(&[
                (None, 30., 15., json!({"app": "Firefox"})),
                (None, 16., 14., json!({"app": "vim"})),
            ]),
        ),
        (
            format!(
                "{W}RETURN = merge_events_by_keys(sort_by_timestamp(w), [\"app\", \"title\"]);"
            ),
            events(&[
                (None, 0., 10., json!({"app": "vim", "title": "main.rs"})),
                (None, 10., 5., json!({"app": "Firefox", "title": "GitHub"})),
                (None, 16., 4., json!({"app": "vim", "title": "lib.rs"})),
                (None, 30., 10., json!({"app": "Firefox", "title": "Docs"})),
            ]),
        ),
        (
            format!("{W}RETURN = merge_events_by_keys(w, []);"),
            "[]".into(),
        ),
        (
            format!("{W}RETURN = merge_events_by_keys(w, [\"app\", \"nokey\"]);"),
            "[]".into(),
        ),
        (
            "RETURN = merge_events_by_keys(query_bucket(\"numbers\"), [\"n\"]);".into(),
            events(&[
                (None, 3., 1., json!({"n": [1, [true]]})),
                (None, 2., 1., json!({"n": "1"})),
                (None, 1., 1., json!({"n": 2.5})),
                (None, 0., 1., json!({"n": 1})),
            ]),
        ),
        (
            format!("{W}RETURN = chunk_events_by_key(sort_by_timestamp(concat(w, w)), \"app\");"),
            events(&[
                (Some(1), 0., 20., json!({"app": "vim", "title": "main.rs"})),
                (
                    Some(2),
                    10.,
                    10.,
                    json!({"app": "Firefox", "title": "GitHub"}),
                ),
                (Some(3), 16., 8., json!({"app": "vim", "title": "lib.rs"})),
                (
                    Some(4),
                    30.,
                    20.,
                    json!({"app": "Firefox", "title": "Docs"}),
                ),
            ]),
        ),
        (
            format!("{W}RETURN = chunk_events_by_key(w, \"nokey\");"),
            "[]".into(),
        ),
    ]);
}

#[test]
fn filters() {
    let not_afk = events(&[
        (Some(7), 35., 5., json!({"status": "not-afk"})),
        (Some(5), 0., 25., json!({"status": "not-afk"})),
    ]);
    let n = |id: i64, start: f64, value: serde_json::Value| {
        (Some(id), start, 1., json!({ "n": value }))
    };
    run(vec![
        (
            format!("{A}RETURN = filter_keyvals(a, \"status\", [\"not-afk\"]);"),
            not_afk.clone(),
        ),
        (
            format!("{A}RETURN = exclude_keyvals(a, \"status\", [\"afk\"]);"),
            not_afk,
        ),
        (
            format!("{A}RETURN = filter_keyvals(a, \"status\", []);"),
            "[]".into(),
        ),
        (
            format!("{A}RETURN = sum_durations(exclude_keyvals(a, \"nokey\", [1]));"),
            "40.0".into(),
        ),
        (
            "RETURN = filter_keyvals(query_bucket(\"numbers\"), \"n\", [1]);".into(),
            events(&[n(10, 0., json!(1))]),
        ),
        (
            "RETURN = filter_keyvals(query_bucket(\"numbers\"), \"n\", [2.5, \"1\"]);".into(),
            events(&[n(12, 2., json!("1")), n(11, 1., json!(2.5))]),
        ),
        (
            "RETURN = filter_keyvals(query_bucket(\"numbers\"), \"n\", [[1, [true]]]);".into(),
            events(&[n(13, 3., json!([1, [true]]))]),
        ),
        (
            "RETURN = exclude_keyvals(query_bucket(\"numbers\"), \"n\", [1, 2.5, \"1\"]);".into(),
            events(&[n(13, 3., json!([1, [true]]))]),
        ),
        (
            format!("{B}RETURN = filter_keyvals(b, \"audible\", [true]);"),
            events(&[(
                Some(9),
                30.,
                10.,
                json!({"url": "https://docs.rs/", "title": "Docs", "audible": true}),
            )]),
        ),
        (
            format!(
                "{W}RETURN = sum_durations(filter_keyvals_regex(w, \"app\", \"(?i)FIREFOX\"));"
            ),
            "15.0".into(),
        ),
        (
            format!("{W}RETURN = sum_durations(filter_keyvals_regex(w, \"app\", \"^(?!Fire)\"));"),
            "14.0".into(),
        ),
        (
            format!("{W}RETURN = sum_durations(filter_keyvals_regex(w, \"title\", \"\\.rs$\"));"),
            "14.0".into(),
        ),
        (
            format!("{W}RETURN = sum_durations(filter_keyvals_regex(w, \"app\", \"\"));"),
            "29.0".into(),
        ),
        (
            format!("{W}RETURN = filter_keyvals_regex(w, \"nokey\", \"\");"),
            "[]".into(),
        ),
        (
            "RETURN = filter_keyvals_regex(query_bucket(\"numbers\"), \"n\", \"1\");".into(),
            events(&[n(12, 2., json!("1"))]),
        ),
    ]);
}

#[test]
fn period_functions() {
    let not_afk = "n = filter_keyvals(a, \"status\", [\"not-afk\"]);\n";
    let docs = json!({"url": "https://docs.rs/", "title": "Docs", "audible": true});
    run(vec![
        (
            format!("{W}{A}{not_afk}RETURN = filter_period_intersect(w, n);"),
            events(&[
                (Some(1), 0., 10., json!({"app": "vim", "title": "main.rs"})),
                (Some(2), 10., 5., json!({"app": "Firefox", "title": "GitHub"})),
                (Some(3), 16., 4., json!({"app": "vim", "title": "lib.rs"})),
                (Some(4), 35., 5., json!({"app": "Firefox", "title": "Docs"})),
            ]),
        ),
        (format!("{W}RETURN = filter_period_intersect(w, []);"), "[]".into()),
        (
            format!("{A}{B}{not_afk}RETURN = period_union(n, filter_keyvals(b, \"audible\", [true]));"),
            events(&[(Some(5), 0., 25., json!({})), (Some(9), 30., 10., json!({}))]),
        ),
        (
            format!("{A}{B}{not_afk}RETURN = union_no_overlap(sort_by_timestamp(n), sort_by_timestamp(b));"),
            events(&[
                (Some(5), 0., 25., json!({"status": "not-afk"})),
                (None, 30., 5., docs),
                (Some(7), 35., 5., json!({"status": "not-afk"})),
            ]),
        ),
        (format!("{A}RETURN = sum_durations(union_no_overlap([], a));"), "40.0".into()),
    ]);
}

#[test]
fn urls_sorting_and_lists() {
    run(vec![
        (
            format!("{B}RETURN = split_url_events(b);"),
            events(&[
                (
                    Some(9),
                    30.,
                    10.,
                    json!({"url": "https://docs.rs/", "title": "Docs", "audible": true,
                    "$protocol": "https", "$domain": "docs.rs", "$path": "/", "$params": ""}),
                ),
                (
                    Some(8),
                    10.,
                    5.,
                    json!({"url": "https://www.github.com/x?y=1", "title": "GitHub", "audible": false,
                    "$protocol": "https", "$domain": "github.com", "$path": "/x", "$params": "y=1"}),
                ),
            ]),
        ),
        (
            format!("{W}RETURN = merge_events_by_keys(sort_by_duration(w), [\"title\"]);"),
            events(&[
                (None, 30., 10., json!({"title": "Docs"})),
                (None, 0., 10., json!({"title": "main.rs"})),
                (None, 10., 5., json!({"title": "GitHub"})),
                (None, 16., 4., json!({"title": "lib.rs"})),
            ]),
        ),
        (
            format!("{W}RETURN = merge_events_by_keys(sort_by_timestamp(w), [\"title\"]);"),
            events(&[
                (None, 0., 10., json!({"title": "main.rs"})),
                (None, 10., 5., json!({"title": "GitHub"})),
                (None, 16., 4., json!({"title": "lib.rs"})),
                (None, 30., 10., json!({"title": "Docs"})),
            ]),
        ),
        (format!("{W}RETURN = sum_durations(w);"), "29.0".into()),
        ("RETURN = sum_durations([]);".into(), "0.0".into()),
        (
            format!("{W}RETURN = sum_durations(limit_events(w, 2));"),
            "14.0".into(),
        ),
        (
            format!("{W}RETURN = sum_durations(limit_events(w, 1.9));"),
            "10.0".into(),
        ),
        (format!("{W}RETURN = limit_events(w, 0);"), "[]".into()),
        (format!("{W}RETURN = limit_events(w, 0 - 3);"), "[]".into()),
        (
            format!("{W}RETURN = sum_durations(limit_events(w, 100));"),
            "29.0".into(),
        ),
        ("RETURN = concat();".into(), "[]".into()),
        (
            format!("{W}{A}RETURN = sum_durations(concat(w, [], a));"),
            "69.0".into(),
        ),
        (
            format!("{W}{A}RETURN = sum_durations(w + a);"),
            "69.0".into(),
        ),
        (
            format!("{W}RETURN = concat(limit_events(w, 1), []) == limit_events(w, 1);"),
            "true".into(),
        ),
    ]);
}

#[test]
fn categorize_and_tag() {
    let rules = r#"[
        [["Work"], {"type": "regex", "regex": "vim|docs"}],
        [["Work", "Programming"], {"type": "regex", "regex": "\.RS$", "ignore_case": true, "select_keys": ["title"]}],
        [["Media"], {"type": "none"}],
        [["Web"], {"regex": "firefox", "ignore_case": true}],
        [["Web2"], {"type": "regex", "regex": "GitHub", "select_keys": ["app"]}]
    ]"#;
    let category = |path: &[&str]| json!(path);
    run(vec![
        (
            format!("{W}RETURN = categorize(w, {rules});"),
            events(&[
                (Some(4), 30., 10., json!({"app": "Firefox", "title": "Docs", "$category": category(&["Web"])})),
                (Some(3), 16., 4., json!({"app": "vim", "title": "lib.rs", "$category": category(&["Work", "Programming"])})),
                (Some(2), 10., 5., json!({"app": "Firefox", "title": "GitHub", "$category": category(&["Web"])})),
                (Some(1), 0., 10., json!({"app": "vim", "title": "main.rs", "$category": category(&["Work", "Programming"])})),
            ]),
        ),
        (
            format!("{A}RETURN = categorize(limit_events(a, 1), []);"),
            events(&[(Some(7), 35., 5., json!({"status": "not-afk", "$category": ["Uncategorized"]}))]),
        ),
        (
            format!("{W}c = categorize(w, {rules});\nRETURN = sum_durations(filter_keyvals(c, \"$category\", [[\"Work\", \"Programming\"]]));"),
            "14.0".into(),
        ),
        (
            format!("{W}RETURN = merge_events_by_keys(categorize(w, {rules}), [\"$category\"]);"),
            events(&[
                (None, 30., 15., json!({"$category": ["Web"]})),
                (None, 16., 14., json!({"$category": ["Work", "Programming"]})),
            ]),
        ),
        (
            format!(
                "{W}RETURN = tag(limit_events(w, 2), [[\"b\", {{\"regex\": \"o\"}}], [\"a\", {{\"regex\": \"Fire\"}}], [\"b\", {{\"regex\": \"D\"}}], [\"z\", {{\"type\": \"none\"}}]]);"
            ),
            events(&[
                (Some(4), 30., 10., json!({"app": "Firefox", "title": "Docs", "$tags": ["a", "b"]})),
                (Some(3), 16., 4., json!({"app": "vim", "title": "lib.rs", "$tags": []})),
            ]),
        ),
    ]);
}

#[test]
fn small_functions() {
    run(vec![
        (
            "RETURN = contains([1, \"a\", [2]], [2]);".into(),
            "true".into(),
        ),
        (
            "RETURN = contains([1, \"a\"], \"b\");".into(),
            "false".into(),
        ),
        (
            "RETURN = contains([1, \"a\"], none);".into(),
            "false".into(),
        ),
        (
            "RETURN = contains({\"k\": 1}, \"k\");".into(),
            "true".into(),
        ),
        (
            "RETURN = contains({\"k\": 1}, \"v\");".into(),
            "false".into(),
        ),
        (format!("{W}RETURN = contains(w, 1);"), "false".into()),
        ("RETURN = print();".into(), "null".into()),
        ("RETURN = print(1, \"x\", [none]);".into(), "null".into()),
        ("RETURN = nop();".into(), "1.0".into()),
        (
            "RETURN = simplify_window_titles(query_bucket(\"titles\"), \"title\");".into(),
            events(&[
                (Some(21), 1., 1., json!({"title": "Facebook ● FPS: 1"})),
                (
                    Some(20),
                    0.,
                    1.,
                    json!({"app": "code", "title": "(3) main.rs - FPS: ..."}),
                ),
            ]),
        ),
    ]);
}
