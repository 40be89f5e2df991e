//! Fuzzing the import document parser, which reads whatever file a user
//! hands to `import` or POSTs to `/api/0/import`: arbitrary bytes and
//! mutations of real export documents never panic, and every refusal is a
//! client error (4xx) whose message says what is wrong; a document that
//! passes validation imports without a server error.
//!
//! A bounded number of cases runs in the test command from a fixed seed.
//! A longer campaign: `FUZZ_CASES=100000 FUZZ_SEED=7 cargo test --release
//! -p aw-server --test fuzz_import`.

#[path = "../../aw-query/tests/support/fuzz.rs"]
mod fuzz;

use aw_datastore::Datastore;
use aw_server::error::ApiError;
use aw_transfer::document::{import_bytes, validate, InMemory};
use proptest::prelude::*;
use proptest::test_runner::Config;

/// Cases per property in the test command.
const CASES: u32 = 1024;

fn config() -> Config {
    fuzz::config(CASES, 0x001a_0907)
}

/// Export documents as this server, aw-server-rust, the Python server and
/// the web UI write them.
const DOCUMENTS: &[&str] = &[
    r#"{"buckets": {"aw-watcher-window_host": {"id": "aw-watcher-window_host", "created": "2024-01-01T00:00:00+00:00", "type": "currentwindow", "client": "aw-watcher-window", "hostname": "host", "data": {}, "events": [{"id": 1, "timestamp": "2024-01-01T10:00:00.123456+00:00", "duration": 12.5, "data": {"app": "Firefox", "title": "Ünïcode ☃"}}, {"timestamp": "2024-01-01T10:00:13Z", "duration": 0, "data": {"app": "Code", "title": "main.rs"}}]}}}"#,
    r#"{"buckets": {"afk": {"id": "afk", "type": "afkstatus", "client": "aw-watcher-afk", "hostname": "h", "events": [{"timestamp": "2024-02-29T23:59:59.999999Z", "duration": 3600.0, "data": {"status": "not-afk"}}]}, "web": {"id": "web", "type": "web.tab.current", "client": "aw-client-web", "hostname": "h", "created": "2024-01-01T00:00:00Z", "events": []}}}"#,
    r#"{"buckets": {}}"#,
];

/// Pieces a mutation may insert.
const PIECES: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\\",
    "null",
    "true",
    "-1",
    "1e400",
    "\"events\"",
    "\"timestamp\"",
    "\"duration\"",
    "\"data\"",
    "\"id\"",
    "\"buckets\"",
    "\"2024-13-45T99:00:00Z\"",
    "NaN",
    "\u{0}",
    "\u{feff}",
    "é",
    "\"\\ud800\"",
    "9223372036854775807",
    " ",
];

#[derive(Debug, Clone)]
enum Mutation {
    Delete { at: usize, len: usize },
    Insert { at: usize, piece: usize },
    Duplicate { at: usize, len: usize },
    Truncate { at: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1usize..30).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<usize>(), 0..PIECES.len()).prop_map(|(at, piece)| Mutation::Insert { at, piece }),
        (any::<usize>(), 1usize..80).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
    ]
}

/// `text` with each mutation applied, at byte positions (so mutations may
/// also break UTF-8, as a damaged file would).
fn mutate(text: &str, mutations: &[Mutation]) -> Vec<u8> {
    let mut bytes = text.as_bytes().to_vec();
    for mutation in mutations {
        let n = bytes.len().max(1);
        match *mutation {
            Mutation::Delete { at, len } => {
                let at = at % n;
                let end = (at + len).min(bytes.len());
                if at < end {
                    bytes.drain(at..end);
                }
            }
            Mutation::Insert { at, piece } => {
                let at = at % (bytes.len() + 1);
                bytes.splice(at..at, PIECES[piece].bytes());
            }
            Mutation::Duplicate { at, len } => {
                let at = at % n;
                let end = (at + len).min(bytes.len());
                if at < end {
                    let copy = bytes[at..end].to_vec();
                    bytes.splice(end..end, copy);
                }
            }
            Mutation::Truncate { at } => bytes.truncate(at % n),
        }
    }
    bytes
}

thread_local! {
    /// One database file for every case of a thread.
    static STORE: (tempfile::TempDir, Datastore) = {
        let folder = tempfile::tempdir().unwrap();
        let store = Datastore::open(folder.path().join("fuzz.db")).unwrap();
        (folder, store)
    };
}

/// Validates `document`; if it passes, imports it. Refusals must be 4xx
/// with a message; nothing may be a server error.
fn outcome_is_clean(document: &[u8]) -> Result<(), TestCaseError> {
    match validate(InMemory(document)) {
        Err(error) => {
            prop_assert!(!error.to_string().is_empty());
            let status = ApiError::from(error).status().code;
            prop_assert!((400..500).contains(&status), "{status}");
        }
        Ok(_) => {
            let imported = STORE.with(|(_, store)| import_bytes(document.to_vec(), store));
            if let Err(error) = imported {
                let error = ApiError::from(error);
                let status = error.status().code;
                prop_assert!((400..500).contains(&status), "{status} {error}");
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_bytes_are_refused_cleanly(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        outcome_is_clean(&bytes)?;
    }

    #[test]
    fn mutated_documents_import_or_are_refused_cleanly(
        document in 0..DOCUMENTS.len(),
        mutations in proptest::collection::vec(mutation(), 1..5),
    ) {
        outcome_is_clean(&mutate(DOCUMENTS[document], &mutations))?;
    }
}

#[test]
fn the_seed_documents_import() {
    for document in DOCUMENTS {
        assert!(
            validate(InMemory(document.as_bytes())).is_ok(),
            "{document}"
        );
        STORE.with(|(_, store)| import_bytes(document.as_bytes().to_vec(), store).unwrap());
    }
}
