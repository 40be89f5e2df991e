//! `aw-server report` (`docs/API.md` §3.13): the summary of a day, week,
//! month or period from the running server or the file, as JSON equal to
//! `GET /api/0/summary`'s, a table, Markdown or a CSV work-hours sheet;
//! bad flags exit 1 naming the flag.

mod common;

use common::{fails, run, seed_two_hosts, serve_file, Client};
use serde_json::Value;

fn report(root: &std::path::Path, args: &[&str]) -> String {
    let output = run(root, &[&["report"], args].concat());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
    String::from_utf8(output.stdout).unwrap()
}

/// The seeded day of `seed_two_hosts`, in its zone.
const SUNDAY_IN_BERLIN: [&str; 4] = ["--day", "2026-03-29", "--tz", "Europe/Berlin"];

/// A database file under `root` with the seeded two hosts, no server on it.
fn seeded_file(root: &std::path::Path) -> std::path::PathBuf {
    let db = root.join("aw.db");
    let (server, client) = serve_file(root, &db);
    seed_two_hosts(&client);
    drop(server);
    db
}

fn summary(client: &Client, query: &str) -> Value {
    let reply = client.get(&format!("/api/0/summary?{query}"));
    assert_eq!(reply.status, 200, "{}", reply.text());
    reply.json()
}

#[test]
fn a_json_report_is_the_endpoints_answer_online_and_offline() {
    let root = tempfile::tempdir().unwrap();
    let db = root.path().join("aw.db");
    let (server, client) = serve_file(root.path(), &db);
    seed_two_hosts(&client);
    let port = client.port.to_string();
    let online = |args: &[&str]| {
        report(
            root.path(),
            &[&["--testing", "--port", port.as_str()], args].concat(),
        )
    };
    let flags = [
        "--day",
        "2026-03-29",
        "--tz",
        "Europe/Berlin",
        "--by",
        "app,title,category,domain,day,hour",
        "--format",
        "json",
    ];
    let from_server: Value = serde_json::from_str(&online(&flags)).unwrap();
    let expected = summary(
        &client,
        "start=2026-03-29&end=2026-03-30&tz=Europe/Berlin&by=app,title,category,domain,day,hour",
    );
    assert_eq!(from_server, expected);
    assert_eq!(expected["duration"], 9660.0 + 5400.0);

    // A week from the startOfWeek setting: Monday 2026-03-23 to the 30th.
    let week: Value = serde_json::from_str(&online(&[
        "--week",
        "2026-03-29",
        "--tz",
        "Europe/Berlin",
        "--by",
        "day",
        "--format",
        "json",
    ]))
    .unwrap();
    let dates: Vec<&str> = week["day"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["date"].as_str().unwrap())
        .collect();
    assert_eq!(dates.first(), Some(&"2026-03-23"));
    assert_eq!(dates.len(), 7);
    let month: Value = serde_json::from_str(&online(&[
        "--month",
        "2026-03-29",
        "--tz",
        "Europe/Berlin",
        "--by",
        "day",
        "--format",
        "json",
    ]))
    .unwrap();
    assert_eq!(month["day"].as_array().unwrap().len(), 31);
    assert_eq!(month["duration"], week["duration"]);

    drop(server);
    let path = db.to_str().unwrap();
    let from_file: Value = serde_json::from_str(&report(
        root.path(),
        &[&["--dbpath", path], &flags[..]].concat(),
    ))
    .unwrap();
    assert_eq!(from_file, expected, "the file gives what the server gave");
}

#[test]
fn tables_markdown_and_a_work_hours_sheet() {
    let root = tempfile::tempdir().unwrap();
    let db = seeded_file(root.path());
    let path = db.to_str().unwrap();
    let period = [&["--dbpath", path][..], &SUNDAY_IN_BERLIN[..]].concat();

    let table = report(
        root.path(),
        &[&period[..], &["--hostname", "laptop"]].concat(),
    );
    assert!(
        table.starts_with(
            "2026-03-29 04:00 to 2026-03-30 04:00 (Europe/Berlin), laptop: 2:41:00 active"
        ),
        "{table}"
    );
    assert!(table.contains("\nBy app\n"), "{table}");
    assert!(table.contains("  Code      2:00:00  74.5 %\n"), "{table}");
    assert!(table.contains("\nBy category\n"), "{table}");

    let md = report(
        root.path(),
        &[&period[..], &["--format", "md", "--by", "title"]].concat(),
    );
    assert!(
        md.contains("| title | app | active | share |\n| --- | --- | ---: | ---: |\n"),
        "{md}"
    );
    assert!(md.contains("| main.rs - Code | Code | 1:30:00 |"), "{md}");

    let sheet = report(
        root.path(),
        &[
            "--dbpath",
            path,
            "--week",
            "2026-03-29",
            "--tz",
            "Europe/Berlin",
            "--by",
            "day",
            "--format",
            "csv",
        ],
    );
    let lines: Vec<&str> = sheet.split("\r\n").collect();
    assert_eq!(lines[0], "date,first,last,active,Uncategorized,Work");
    assert_eq!(lines[1], "2026-03-23,,,0:00:00,0:00:00,0:00:00");
    // Sunday, both hosts: from 09:00 to the late session's end at 03:30 the
    // next morning; Blender is Work (> 3D).
    assert_eq!(lines[7], "2026-03-29,09:00,03:30,4:11:00,2:41:00,1:30:00");
    assert_eq!(
        lines.len(),
        9,
        "a header, 7 days and the final line break: {sheet}"
    );

    let out = root.path().join("week.md");
    report(
        root.path(),
        &[
            &period[..],
            &["--format", "md", "-o", out.to_str().unwrap()],
        ]
        .concat(),
    );
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains("### By app"));
}

#[test]
fn bad_flags_exit_1_naming_the_flag() {
    let root = tempfile::tempdir().unwrap();
    let db = root.path().join("aw.db");
    let (server, client) = serve_file(root.path(), &db);
    seed_two_hosts(&client);
    let port = client.port.to_string();
    let online = ["--testing", "--port", port.as_str()];
    let cases: [(&[&str], &str); 4] = [
        (&["--tz", "Mars/Olympus"], "--tz: 'Mars/Olympus'"),
        (
            &["--day", "2026-02-30"],
            "--day: '2026-02-30' is not a date",
        ),
        (&["--by", "app,nope"], "--by: 'nope'"),
        (
            &["--by", "app,day", "--format", "csv"],
            "--format csv writes one list",
        ),
    ];
    for (args, expected) in cases {
        let message = fails(root.path(), &[&["report"], &online[..], args].concat(), 1);
        assert!(message.contains(expected), "{args:?}: {message}");
    }
    // Checked by the server: its message names the argument.
    let message = fails(
        root.path(),
        &[&["report"], &online[..], &["--hostname", "phone"]].concat(),
        1,
    );
    assert!(
        message.contains("host: no window watcher data of host 'phone'"),
        "{message}"
    );
    let message = fails(
        root.path(),
        &[
            &["report"],
            &online[..],
            &["--start", "2026-03-30", "--end", "2026-03-29"],
        ]
        .concat(),
        1,
    );
    assert!(message.contains("end: must be after start"), "{message}");
    drop(server);
    let path = db.to_str().unwrap();
    let message = fails(
        root.path(),
        &["report", "--dbpath", path, "--hostname", "phone"],
        1,
    );
    assert!(
        message.contains("--hostname: no window watcher data of host 'phone'"),
        "{message}"
    );
    // --start needs --end, and periods exclude each other (clap: exit 2).
    fails(
        root.path(),
        &["report", "--dbpath", path, "--start", "2026-03-29"],
        2,
    );
    fails(
        root.path(),
        &["report", "--dbpath", path, "--day", "--week"],
        2,
    );
}

#[test]
fn csv_needs_no_by_and_days_may_be_today_or_yesterday() {
    let root = tempfile::tempdir().unwrap();
    let db = seeded_file(root.path());
    let path = db.to_str().unwrap();
    let day = [&["--dbpath", path][..], &SUNDAY_IN_BERLIN[..]].concat();
    // CSV writes one list: without --by, the applications.
    let csv = report(root.path(), &[&day[..], &["--format", "csv"]].concat());
    assert!(csv.starts_with("app,active,share\r\nCode,"), "{csv}");
    // Relative dates name the day that holds now: the seeded file's day
    // starts at 04:00, so between midnight and 04:00 UTC today is still
    // the calendar's yesterday.
    let json = |args: &[&str]| -> Value {
        serde_json::from_str(&report(
            root.path(),
            &[&["--dbpath", path, "--tz", "UTC", "--format", "json"], args].concat(),
        ))
        .unwrap()
    };
    for _ in 0..3 {
        let day_of_now = || (chrono::Utc::now() - chrono::Duration::hours(4)).date_naive();
        let before = day_of_now();
        let yesterday = json(&["--day", "yesterday"]);
        let week = json(&["--week", "Yesterday"]);
        let today = json(&["--start", "today", "--end", "tomorrow"]);
        if day_of_now() != before {
            continue; // The day's start passed meanwhile.
        }
        let date = |shift: i64| format!("{}T04:00:00Z", before + chrono::Duration::days(shift));
        assert_eq!(yesterday["start"], date(-1), "{yesterday}");
        assert_eq!(yesterday["end"], date(0));
        assert_eq!(
            (today["start"].clone(), today["end"].clone()),
            (date(0).into(), date(1).into())
        );
        assert!(week["start"].as_str().unwrap() <= date(-1).as_str());
        break;
    }
    let message = fails(
        root.path(),
        &[&["report"], &day[..2], &["--day", "someday"]].concat(),
        1,
    );
    assert!(
        message
            .contains("--day: 'someday' is not a date: YYYY-MM-DD, today, yesterday or tomorrow"),
        "{message}"
    );
}

#[test]
fn a_command_says_what_to_give_a_server_that_needs_a_credential_or_listens_elsewhere() {
    let root = tempfile::tempdir().unwrap();
    common::write_testing_config(root.path(), "[auth]\napi_key = \"the-key\"\n");
    // The default database, served on a port that is not the config's.
    let (child, port) = common::spawn_listening(
        common::binary(root.path())
            .args(["--testing", "--port", "0"])
            .stdout(std::process::Stdio::null()),
    );
    let _server = common::Stopped(child);
    let message = fails(root.path(), &["report", "--testing"], 1);
    assert!(
        message.contains("listens on another address or port") && message.contains("--port"),
        "{message}"
    );
    assert!(!message.contains("--dbpath"), "{message}");
    // The right port, but no credential: the flags to give, not headers.
    std::fs::write(
        root.path()
            .join("config/activitywatch/aw-server-rust/config-testing.toml"),
        "",
    )
    .unwrap();
    let port = port.to_string();
    let message = fails(root.path(), &["report", "--testing", "--port", &port], 1);
    assert!(
        message.contains("--token") && message.contains("AW_SERVER_TOKEN"),
        "{message}"
    );
    assert!(!message.contains("Authorization"), "{message}");
}
