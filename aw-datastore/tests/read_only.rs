//! `Datastore::open_read_only`: reading a file beside the server that
//! serves it, without a lock, without writing, without blocking a server
//! that starts meanwhile.

mod common;

use aw_datastore::{Datastore, EventQuery};
use common::{app, bucket, event, TempDb};

fn apps(store: &Datastore) -> Vec<String> {
    let mut apps: Vec<String> = store
        .events("b", EventQuery::default())
        .wait()
        .unwrap()
        .iter()
        .map(|event| event.data["app"].as_str().unwrap().to_string())
        .collect();
    apps.sort();
    apps
}

#[test]
fn reads_a_served_file_and_never_blocks_or_writes() {
    let db = TempDb::new();
    let server = db.open();
    server.create_bucket(bucket("b")).unwrap();
    server
        .insert_events(
            "b",
            vec![event(0, 10, app("vim")), event(20, 5, app("firefox"))],
        )
        .unwrap();

    // Beside the server holding the file.
    let reader = Datastore::open_read_only(db.path(), None).unwrap();
    assert_eq!(apps(&reader), ["firefox", "vim"]);
    assert!(reader.buckets().wait().unwrap().contains_key("b"));
    assert!(reader
        .insert_events("b", vec![event(40, 1, app("x"))])
        .is_err());
    assert!(reader.set_setting("theme", "dark".into()).is_err());

    // The server stops and starts again while the reader stays open.
    server.close().unwrap();
    drop(server);
    let again = Datastore::open(db.path()).expect("a server starts beside a reader");
    again
        .insert_events("b", vec![event(60, 1, app("later"))])
        .unwrap();
    assert_eq!(
        apps(&reader),
        ["firefox", "later", "vim"],
        "each read sees the newest commit"
    );
    assert_eq!(apps(&again), ["firefox", "later", "vim"]);
    drop(reader);
    again.close().unwrap();
}

#[test]
fn a_missing_file_is_an_error_and_nothing_is_created() {
    let db = TempDb::new();
    assert!(Datastore::open_read_only(db.path(), None).is_err());
    assert!(!db.path().exists());
}
