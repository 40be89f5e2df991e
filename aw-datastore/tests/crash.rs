//! Acknowledged writes survive SIGKILL.
//!
//! The test binary re-runs itself as a child (selected by an environment
//! variable) that writes heartbeats and inserts as fast as it can from two
//! threads and prints every acknowledged result. The parent kills it with
//! SIGKILL at varying moments (after a varying number of acknowledgements,
//! while the child keeps writing), reopens the file and checks that every
//! acknowledged write is there and the file is intact.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use aw_datastore::{Datastore, DatastoreError};
use aw_models::{Duration, Event, Timestamp};
use common::*;
use serde_json::json;

const CHILD_DB: &str = "AW_DATASTORE_CRASH_CHILD_DB";
const CHILD_ROUND: &str = "AW_DATASTORE_CRASH_CHILD_ROUND";
const KILLS: u64 = 24;

#[test]
fn acknowledged_writes_survive_sigkill() {
    if let Ok(path) = std::env::var(CHILD_DB) {
        let round: i64 = std::env::var(CHILD_ROUND).unwrap().parse().unwrap();
        child(&path, round);
        return;
    }
    let db = TempDb::new();
    let mut checked = 0u64;
    let mut losses = 0u64;
    for round in 0..KILLS {
        // Spread the kill moments from the first acknowledgement to a few
        // thousand, in no particular order.
        let kill_after = 1 + (round * 7919) % 2500;
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "acknowledged_writes_survive_sigkill",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_DB, db.path())
            .env(CHILD_ROUND, round.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut acks = Vec::new();
        for line in lines.by_ref() {
            let line = line.unwrap();
            if line.starts_with("ACK ") {
                acks.push(line);
                if acks.len() as u64 >= kill_after {
                    break;
                }
            }
        }
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();
        // Everything printed before the kill was acknowledged too.
        acks.extend(
            lines
                .map_while(Result::ok)
                .filter(|line| line.starts_with("ACK ")),
        );
        let store = Datastore::open(db.path()).unwrap();
        for ack in &acks {
            checked += 1;
            if let Err(reason) = verify(&store, ack) {
                eprintln!("LOST after kill {round}: {ack}: {reason}");
                losses += 1;
            }
        }
        store.close().unwrap();
        let conn = rusqlite::Connection::open(db.path()).unwrap();
        let integrity: String = conn
            .query_row("PRAGMA integrity_check", [], |row| row.get(0))
            .unwrap();
        assert_eq!(integrity, "ok", "after kill {round}");
    }
    println!("crash test: {KILLS} SIGKILLs, {checked} acknowledged writes checked, {losses} lost");
    assert_eq!(losses, 0);
    assert!(checked >= KILLS);
}

/// Checks one `ACK` line against the reopened store.
fn verify(store: &Datastore, ack: &str) -> Result<(), String> {
    let fields: Vec<&str> = ack.split_whitespace().collect();
    let number = |i: usize| fields[i].parse::<i64>().unwrap();
    let stored = store
        .event("b", number(2))
        .wait()
        .map_err(|e| e.to_string())?;
    match fields[1] {
        "insert" => {
            let expected = Event {
                id: Some(number(2)),
                timestamp: Timestamp::from_nanos(number(3)),
                duration: Duration::from_nanos(number(4)),
                data: object(json!({"round": number(5), "n": number(6)})),
            };
            (stored == expected)
                .then_some(())
                .ok_or(format!("stored {stored:?}"))
        }
        "heartbeat" => {
            let ok = stored.timestamp.nanos() == number(3) && stored.end().nanos() >= number(4);
            ok.then_some(()).ok_or(format!("stored {stored:?}"))
        }
        other => Err(format!("unknown kind {other}")),
    }
}

/// Writes until killed, printing each acknowledged result.
fn child(path: &str, round: i64) {
    let store = Datastore::open(path).unwrap();
    match store.create_bucket(bucket("b")) {
        Ok(()) | Err(DatastoreError::BucketExists(_)) => {}
        Err(err) => panic!("{err}"),
    }
    let print = |line: String| {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{line}").unwrap();
        out.flush().unwrap();
    };
    let base = round * 1_000_000;
    std::thread::scope(|scope| {
        let heartbeats = store.clone();
        scope.spawn(move || {
            for i in 0.. {
                // Runs of 40 merging heartbeats, then a change of data.
                let data = json!({"round": round, "run": i / 40});
                let beat = event(base + i, 0, data);
                let stored = heartbeats
                    .heartbeat("b", beat, Duration::from_secs(2))
                    .unwrap();
                print(format!(
                    "ACK heartbeat {} {} {}",
                    stored.id.unwrap(),
                    stored.timestamp.nanos(),
                    stored.end().nanos()
                ));
            }
        });
        let inserts = store.clone();
        scope.spawn(move || {
            for n in 0.. {
                let fresh = event(
                    base + 500_000 + n,
                    1 + n % 5,
                    json!({"round": round, "n": n}),
                );
                let stored = inserts.insert_events("b", vec![fresh]).unwrap().remove(0);
                print(format!(
                    "ACK insert {} {} {} {round} {n}",
                    stored.id.unwrap(),
                    stored.timestamp.nanos(),
                    stored.duration.nanos()
                ));
            }
        });
    });
}
