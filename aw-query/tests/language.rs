//! The grammar of `docs/API.md` §6: one case per rule.

mod common;

use common::check;

#[test]
fn literals_and_output_forms() {
    let cases = [
        ("RETURN = 1;", "1.0"),
        ("RETURN = 007;", "7.0"),
        ("RETURN = 1.;", "1.0"),
        ("RETURN = 1.25;", "1.25"),
        (r#"RETURN = "text";"#, r#""text""#),
        (r"RETURN = 'single';", r#""single""#),
        (r#"RETURN = "a\"b";"#, r#""a\"b""#),
        (r"RETURN = 'it\'s';", r#""it's""#),
        (r#"RETURN = "\bvim\b";"#, r#""\\bvim\\b""#),
        ("RETURN = \"two\nlines;\";", r#""two\nlines;""#),
        ("RETURN = true;", "true"),
        ("RETURN = False;", "false"),
        ("RETURN = none;", "null"),
        ("RETURN = [];", "[]"),
        ("RETURN = [1, \"a\", [true]];", r#"[1.0, "a", [true]]"#),
        ("RETURN = {};", "{}"),
        (
            r#"RETURN = {"a": 1, "b": {"c": []}};"#,
            r#"{"a": 1.0, "b": {"c": []}}"#,
        ),
        (r#"RETURN = {"a": 1, "a": 2};"#, r#"{"a": 2.0}"#),
        ("RETURN = 5 % 0;", "null"),
        ("RETURN = print(1);", "null"),
    ];
    for (program, expected) in cases {
        check(program, expected);
    }
}

#[test]
fn statements_assignments_and_return() {
    let cases = [
        ("x = 1; RETURN = x;", "1.0"),
        ("return 2;", "2.0"),
        ("RETURN = 1; RETURN = 2;", "2.0"),
        ("return 1; x = 3; RETURN = x + 1;", "4.0"),
        (";;RETURN = 1;;;", "1.0"),
        ("return x = 5;", "null"),
        ("x = 1;\ny = x;\nRETURN = [x, y];", "[1.0, 1.0]"),
        ("RETURN = \n 1\n +\n 2\n;", "3.0"),
        ("# a comment\nRETURN = 1; # trailing # comment\n", "1.0"),
        ("RETURN = \"# not a comment\";", r##""# not a comment""##),
        ("1 + 1; RETURN = 0;", "0.0"),
        (
            "iffy = 1; returned = 2; true_x = 3; RETURN = iffy + returned + true_x;",
            "6.0",
        ),
    ];
    for (program, expected) in cases {
        check(program, expected);
    }
}

#[test]
fn operators_share_one_precedence_level() {
    let cases = [
        ("RETURN = 1 + 2 * 3;", "9.0"),
        ("RETURN = 1 + (2 * 3);", "7.0"),
        ("RETURN = 10 - 4 - 3;", "3.0"),
        ("RETURN = 7 / 2;", "3.5"),
        ("RETURN = 7 % 4;", "3.0"),
        (r#"RETURN = "a" + "b";"#, r#""ab""#),
        ("RETURN = [1] + [2, 3];", "[1.0, 2.0, 3.0]"),
        ("RETURN = 1 == 1;", "true"),
        ("RETURN = 1 == 2;", "false"),
        (r#"RETURN = "a" == "a" == true;"#, "true"),
        ("RETURN = [1, [2]] == [1, [2]];", "true"),
        (r#"RETURN = {"a": [1]} == {"a": [1]};"#, "true"),
        (r#"RETURN = {"a": 1} == {"a": 2};"#, "false"),
        ("RETURN = none == none;", "true"),
        ("RETURN = [] == [];", "true"),
        ("RETURN = query_bucket(\"aw-watcher-afk_laptop\") == query_bucket(\"aw-watcher-afk_laptop\");", "true"),
        ("RETURN = (((1)));", "1.0"),
    ];
    for (program, expected) in cases {
        check(program, expected);
    }
}

#[test]
fn if_elif_else() {
    let cases = [
        ("if true { RETURN = 1; }", "1.0"),
        ("RETURN = 0; if false { RETURN = 1; }", "0.0"),
        ("if false { RETURN = 1; } else { RETURN = 2; }", "2.0"),
        (
            "if false { RETURN = 1; } elif 1 == 1 { RETURN = 2; } else { RETURN = 3; }",
            "2.0",
        ),
        (
            "if false { RETURN = 1; } elif false { RETURN = 2; } else { RETURN = 3; }",
            "3.0",
        ),
        ("if true { RETURN = 1; } elif true { RETURN = 2; }", "1.0"),
        ("if true { if true { x = 1; } } RETURN = x;", "1.0"),
        ("if true { ; } RETURN = 1;", "1.0"),
        (
            "x = 1; if x == 1 { RETURN = x; } else { RETURN = x + 1; }",
            "1.0",
        ),
    ];
    for (program, expected) in cases {
        check(program, expected);
    }
}

#[test]
fn period_variables_and_rebinding() {
    let cases = [
        ("RETURN = TIMEINTERVAL;", r#""2021-06-01T00:00:00+00:00/2021-06-02T00:00:00+00:00""#),
        ("RETURN = [STARTTIME, ENDTIME, NAME];", r#"["2021-06-01T00:00:00+00:00", "2021-06-02T00:00:00+00:00", ""]"#),
        ("flood = 1; RETURN = flood;", "1.0"),
        ("f = nop; RETURN = f();", "1.0"),
        (
            "TIMEINTERVAL = \"2021-06-01T10:00:30Z/2021-06-01T10:00:32Z\"; RETURN = sum_durations(query_bucket(\"aw-watcher-window_laptop\"));",
            "2.0",
        ),
    ];
    for (program, expected) in cases {
        check(program, expected);
    }
}

#[test]
fn variables_keep_their_values_after_use() {
    // A variable read before its last use must not be moved away or changed
    // by the transform that receives it.
    let cases = [
        (
            "w = query_bucket(\"aw-watcher-window_laptop\"); s = sort_by_duration(w); RETURN = [sum_durations(w), sum_durations(s), w == sort_by_timestamp(w)];",
            "[29.0, 29.0, false]",
        ),
        (
            "w = query_bucket(\"aw-watcher-window_laptop\"); w = limit_events(w, 1); RETURN = sum_durations(w);",
            "10.0",
        ),
        (
            "w = query_bucket(\"aw-watcher-window_laptop\"); if true { a = limit_events(w, 1); } RETURN = sum_durations(w);",
            "29.0",
        ),
        (
            "w = query_bucket(\"aw-watcher-window_laptop\"); RETURN = sum_durations(concat(w, w));",
            "58.0",
        ),
        (
            "w = query_bucket(\"aw-watcher-window_laptop\"); x = w; w = []; RETURN = sum_durations(x);",
            "29.0",
        ),
        (
            "w = query_bucket(\"aw-watcher-window_laptop\"); f = filter_keyvals(w, \"app\", [\"vim\"]); r = filter_keyvals_regex(w, \"app\", \"Fire\"); m = merge_events_by_keys(w, [\"app\"]); RETURN = [sum_durations(f), sum_durations(r), sum_durations(m), sum_durations(w), sum_durations(period_union(w, w))];",
            "[14.0, 15.0, 29.0, 29.0, 29.0]",
        ),
    ];
    for (program, expected) in cases {
        check(program, expected);
    }
}

#[test]
fn every_period_runs_with_a_fresh_environment() {
    let periods: Vec<aw_models::TimeInterval> = [
        "2021-06-01T10:00:00Z/2021-06-01T10:00:05Z",
        "2021-06-01T10:00:30+02:00/2021-06-01T10:00:40Z",
    ]
    .iter()
    .map(|p| p.parse().unwrap())
    .collect();
    let program = "if contains({\"x\": 1}, \"y\") { x = 1; } RETURN = [TIMEINTERVAL, sum_durations(query_bucket(\"aw-watcher-window_laptop\"))];";
    let results = aw_query::query(program, &periods, &common::fixture()).unwrap();
    assert_eq!(
        results,
        [
            serde_json::json!(["2021-06-01T10:00:00+00:00/2021-06-01T10:00:05+00:00", 5.0]),
            serde_json::json!(["2021-06-01T08:00:30+00:00/2021-06-01T10:00:40+00:00", 29.0]),
        ]
    );
    assert_eq!(
        aw_query::query("RETURN = 1;", &[], &common::fixture()).unwrap(),
        Vec::<serde_json::Value>::new()
    );
}
