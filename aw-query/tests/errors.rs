//! Every error kind with its position (`docs/API.md` §6.6).

mod common;

use common::check;

#[test]
fn syntax_errors() {
    let cases = [
        ("RETURN = 1", "error Syntax 1:11 expected ';'"),
        ("RETURN = ;", "error Syntax 1:10 expected a value"),
        (
            "RETURN =",
            "error Syntax 1:9 expected a value, found the end of the program",
        ),
        (
            "RETURN = [1,\n",
            "error Syntax 2:1 expected a value, found the end of the program",
        ),
        ("RETURN = -1;", "error Syntax 1:10 expected a value"),
        ("RETURN = [1, 2,];", "error Syntax 1:16 expected a value"),
        ("RETURN = f(1,);", "error Syntax 1:14 expected a value"),
        (
            "RETURN = {\"a\": 1,};",
            "error Syntax 1:18 expected a string key",
        ),
        (
            "RETURN = {a: 1};",
            "error Syntax 1:11 expected a string key",
        ),
        ("RETURN = {\"a\" 1};", "error Syntax 1:15 expected ':'"),
        ("x = 1;\nRETURN = (x;", "error Syntax 2:12 expected ')'"),
        ("RETURN = [1;", "error Syntax 1:12 expected ']'"),
        (
            "RETURN = 1 2;",
            "error Syntax 1:12 expected ';' or an operator",
        ),
        (
            "RETURN = \"open;",
            "error Syntax 1:10 string is never closed",
        ),
        (
            "RETURN = 1 @ 2;",
            "error Syntax 1:12 unexpected character '@'",
        ),
        ("if true RETURN = 1;", "error Syntax 1:9 expected '{'"),
        ("if true { RETURN = 1;", "error Syntax 1:22 expected '}'"),
        ("else { RETURN = 1; }", "error Syntax 1:1 expected a value"),
        ("RETURN = if;", "error Syntax 1:10 expected a value"),
        ("RETURN = 1 + + 2;", "error Syntax 1:14 expected a value"),
        (
            "RETURN == 1;",
            "error UnknownVariable 1:1 unknown variable 'RETURN'",
        ),
        ("x = = 1;", "error Syntax 1:5 expected a value"),
    ];
    for (program, expected) in cases {
        check(program, expected);
    }
}

#[test]
fn name_errors() {
    let cases = [
        (
            "RETURN = x;",
            "error UnknownVariable 1:10 unknown variable 'x'",
        ),
        (
            "a = 1;\n  RETURN = b + a;",
            "error UnknownVariable 2:12 unknown variable 'b'",
        ),
        (
            "RETURN = floood([]);",
            "error UnknownFunction 1:10 unknown function 'floood'",
        ),
        (
            "x = 1; RETURN = x();",
            "error NotAFunction 1:17 'x' is a number, not a function",
        ),
    ];
    for (program, expected) in cases {
        check(program, expected);
    }
}

#[test]
fn argument_errors() {
    let cases = [
        ("RETURN = flood();", "error ArgumentCount 1:10 flood expects 1 argument, got 0"),
        ("RETURN = flood([], 5);", "error ArgumentCount 1:10 flood expects 1 argument, got 2"),
        ("RETURN = nop(1);", "error ArgumentCount 1:10 nop expects 0 arguments, got 1"),
        ("RETURN = find_bucket();", "error ArgumentCount 1:10 find_bucket expects 1 to 2 arguments, got 0"),
        ("RETURN = filter_keyvals([], \"a\");", "error ArgumentCount 1:10 filter_keyvals expects 3 arguments, got 2"),
        ("RETURN = flood({});", "error Type 1:10 argument 1 of flood must be a list of events, got dict"),
        ("RETURN = flood([{}]);", "error Type 1:10 argument 1 of flood must be a list of events, got list"),
        ("RETURN = flood(1);", "error Type 1:10 argument 1 of flood must be a list of events, got number"),
        ("RETURN = query_bucket(1);", "error Type 1:10 argument 1 of query_bucket must be a string, got number"),
        ("RETURN = limit_events([], \"1\");", "error Type 1:10 argument 2 of limit_events must be a number, got string"),
        ("RETURN = merge_events_by_keys([], [1]);", "error Type 1:10 argument 2 of merge_events_by_keys must be a list of strings, got number"),
        ("RETURN = filter_keyvals([], \"a\", [{}]);", "error Type 1:10 argument 3 of filter_keyvals must be a list of strings, numbers, bools or lists, got dict"),
        ("RETURN = contains(1, 1);", "error Type 1:10 contains needs a list or dict, got number"),
        ("RETURN = contains({}, 1);", "error Type 1:10 contains on a dict needs a string key, got number"),
        ("RETURN = simplify_window_titles(query_bucket(\"aw-watcher-afk_laptop\"), \"title\");", "error Type 1:10 every event needs a string 'title'"),
    ];
    for (program, expected) in cases {
        check(program, expected);
    }
}

#[test]
fn operator_and_condition_errors() {
    let cases = [
        (
            "RETURN = 1 + \"a\";",
            "error Type 1:12 cannot apply '+' to number and string",
        ),
        (
            "RETURN = \"a\" - \"b\";",
            "error Type 1:14 cannot apply '-' to string and string",
        ),
        (
            "RETURN = [1] + query_bucket(\"aw-watcher-afk_laptop\");",
            "error Type 1:14 cannot apply '+' to list and list of events",
        ),
        (
            "RETURN = 1 == \"1\";",
            "error Type 1:12 cannot compare number with string",
        ),
        (
            "RETURN = 1 / 0;",
            "error DivisionByZero 1:12 division by zero",
        ),
        (
            "x = 0;\nRETURN = (1 + 1) / x;",
            "error DivisionByZero 2:18 division by zero",
        ),
        (
            "if 1 { RETURN = 1; }",
            "error Type 1:4 an if condition must be a bool, got number",
        ),
        (
            "if false { } elif \"x\" { }",
            "error Type 1:19 an if condition must be a bool, got string",
        ),
    ];
    for (program, expected) in cases {
        check(program, expected);
    }
}

#[test]
fn bucket_errors() {
    let cases = [
        (
            "RETURN = query_bucket(\"nope\");",
            "error NoSuchBucket 1:10 query_bucket: there is no bucket 'nope'",
        ),
        (
            "RETURN = query_bucket_eventcount(\"nope\");",
            "error NoSuchBucket 1:10 there is no bucket 'nope'",
        ),
        (
            "RETURN = find_bucket(\"aw-watcher-nope\");",
            "error NoSuchBucket 1:10 no bucket matches filter 'aw-watcher-nope'",
        ),
        (
            "RETURN = find_bucket(\"aw-watcher-afk_\", \"desktop\");",
            "error NoSuchBucket 1:10 on host 'desktop'",
        ),
        (
            "TIMEINTERVAL = \"today\"; RETURN = query_bucket(\"aw-watcher-afk_laptop\");",
            "error Type 1:34 TIMEINTERVAL \"today\" is not",
        ),
        (
            "TIMEINTERVAL = 1; RETURN = query_bucket(\"aw-watcher-afk_laptop\");",
            "error Type 1:28 TIMEINTERVAL must be a string",
        ),
    ];
    for (program, expected) in cases {
        check(program, expected);
    }
}

#[test]
fn regex_and_rule_errors() {
    let w = "w = query_bucket(\"aw-watcher-window_laptop\");\n";
    let cases = [
        ("RETURN = filter_keyvals_regex([], \"app\", \"(\");".to_string(), "error Regex 1:10 invalid regex \"(\""),
        (format!("{w}RETURN = categorize(w, [[[\"A\"], {{\"type\": \"regex\", \"regex\": \"[\"}}]]);"), "error Regex 2:10 rule 1: invalid regex"),
        (format!("{w}RETURN = categorize(w, [[[\"A\"], {{\"type\": \"other\"}}]]);"), "error Rule 2:10 rule 1: rule type must be \"regex\" or \"none\", got \"other\""),
        (format!("{w}RETURN = categorize(w, [[[\"A\"], {{\"type\": \"regex\"}}]]);"), "error Rule 2:10 needs a \"regex\" string"),
        (format!("{w}RETURN = categorize(w, [[[\"A\"], {{\"type\": \"regex\", \"regex\": 1}}]]);"), "error Rule 2:10 must be a string, got number"),
        (format!("{w}RETURN = categorize(w, [[[\"A\"], {{\"regex\": \"a\", \"ignore_case\": 1}}]]);"), "error Rule 2:10 \"ignore_case\" must be a bool"),
        (format!("{w}RETURN = categorize(w, [[[\"A\"], {{\"regex\": \"a\", \"select_keys\": []}}]]);"), "error Rule 2:10 non-empty list of strings"),
        (format!("{w}RETURN = categorize(w, [[[\"A\"], {{\"regex\": \"a\", \"select_keys\": [1]}}]]);"), "error Rule 2:10 must hold strings"),
        (format!("{w}RETURN = categorize(w, [[\"A\", {{\"type\": \"none\"}}]]);"), "error Rule 2:10 a category must be a list of strings"),
        (format!("{w}RETURN = categorize(w, [[[\"A\"]]]);"), "error Rule 2:10 rule 1 of categorize must be a list [name, rule dict]"),
        (format!("{w}RETURN = categorize(w, [[[\"A\"], 1]]);"), "error Rule 2:10 a rule must be a dict, got number"),
        (format!("{w}RETURN = tag(w, [[1, {{\"type\": \"none\"}}]]);"), "error Rule 2:10 a tag must be a string, got number"),
    ];
    for (program, expected) in cases {
        check(&program, expected);
    }
}

#[test]
fn whole_program_errors() {
    let cases = [
        ("", "error NoReturn -:- never sets RETURN"),
        ("x = 1;", "error NoReturn -:- never sets RETURN"),
        ("# only a comment", "error NoReturn -:- never sets RETURN"),
        (
            "RETURN = flood;",
            "error ReturnedFunction -:- the function 'flood'",
        ),
        (
            "RETURN = {\"f\": [query_bucket]};",
            "error ReturnedFunction -:- the function 'query_bucket'",
        ),
    ];
    for (program, expected) in cases {
        check(program, expected);
    }
}
