//! Settings stored under `settings.<key>` as JSON text.

mod common;

use common::*;
use serde_json::json;

#[test]
fn settings_round_trip_any_json() {
    let db = TempDb::new();
    let store = db.open();
    assert!(store.settings().wait().unwrap().is_empty());
    assert_eq!(store.setting("theme").wait().unwrap(), None);
    let values = [
        ("theme", json!("dark")),
        ("startOfDay", json!("04:00")),
        (
            "classes",
            json!([{"name": ["Work"], "rule": {"type": "regex", "regex": "a|b\\\\c"}}]),
        ),
        ("n", json!(1.5)),
        ("flag", json!(true)),
        ("ünï code/and%punct", json!({"a": null})),
    ];
    for (key, value) in &values {
        store.set_setting(key, value.clone()).unwrap();
    }
    store.set_setting("theme", json!("light")).unwrap();
    let all = store.settings().wait().unwrap();
    assert_eq!(all.len(), values.len());
    assert_eq!(all["theme"], json!("light"));
    assert_eq!(
        store.setting("classes").wait().unwrap(),
        Some(values[2].1.clone())
    );
    store.delete_setting("theme").unwrap();
    store.delete_setting("never-set").unwrap();
    assert_eq!(store.setting("theme").wait().unwrap(), None);
    store.close().unwrap();
    let store = db.open();
    assert_eq!(store.settings().wait().unwrap().len(), values.len() - 1);
}

#[test]
fn settings_use_the_reference_key_convention() {
    let db = TempDb::new();
    let store = db.open();
    store.set_setting("theme", json!("dark")).unwrap();
    store.close().unwrap();
    let conn = rusqlite::Connection::open(db.path()).unwrap();
    let (key, value): (String, String) = conn
        .query_row("SELECT key, value FROM key_value", [], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .unwrap();
    assert_eq!(
        (key.as_str(), value.as_str()),
        ("settings.theme", "\"dark\"")
    );
    // Keys outside the prefix (the reference's own) are not settings.
    conn.execute(
        "INSERT INTO key_value VALUES ('IGNORE_FILTERS_APPS', 'x', 0), ('settingsX', '1', 0), ('SETTINGS.y', '1', 0)",
        [],
    )
    .unwrap();
    drop(conn);
    let store = db.open();
    assert_eq!(
        store.settings().wait().unwrap().keys().collect::<Vec<_>>(),
        vec!["theme"]
    );
}
