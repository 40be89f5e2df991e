//! Retention: with `[retention] keep_days = N` in the config file, events
//! that ended more than N days ago are deleted when the server starts and
//! once a day after, each run logged with its counts.
//!
//! The deleting is the datastore's (`Datastore::expire`), chunk by chunk,
//! so heartbeats are served while it runs and a run cut short by a crash
//! is finished by the next. This module only schedules it, on a thread of
//! its own that ends when the datastore closes, and keeps what the last run
//! did for `GET /api/0/retention/status` (the dashboard's Status page).

use std::sync::{Arc, Mutex};
use std::time::Duration as StdDuration;

use aw_datastore::{Datastore, DatastoreError, Expired};
use aw_models::{Duration, Timestamp};
use aw_threads::Next;
use serde::Serialize;

use crate::schedule::{self, in_a_while, lock};

/// Time between runs.
const PERIOD: StdDuration = StdDuration::from_secs(24 * 60 * 60);
/// How often the sleeping thread checks whether the datastore closed.
const CHECK: StdDuration = StdDuration::from_secs(10);

/// What `GET /api/0/retention/status` answers.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RetentionStatus {
    /// Whether `[retention]` is configured (runs are scheduled).
    pub enabled: bool,
    /// Its `keep_days`.
    pub keep_days: Option<u32>,
    /// Whether a run is deleting now.
    pub running: bool,
    /// The last run that finished since the server started.
    pub last_run: Option<RetentionRun>,
    /// The last run's failure, if it failed.
    pub last_error: Option<String>,
    /// When the next run starts.
    pub next_run: Option<Timestamp>,
}

/// A finished run.
#[derive(Debug, Clone, Serialize)]
pub struct RetentionRun {
    /// When it started.
    pub started: Timestamp,
    /// When it finished.
    pub finished: Timestamp,
    /// Events that ended before this were deleted.
    pub cutoff: Timestamp,
    /// Events deleted, all buckets.
    pub deleted: u64,
}

/// The schedule's status, shared with the endpoint.
#[derive(Debug, Default)]
pub struct Retention {
    keep_days: Option<u32>,
    status: Mutex<RetentionStatus>,
}

impl Retention {
    /// The status of a server with `keep_days` (`None`: no retention).
    pub fn new(keep_days: Option<u32>) -> Retention {
        Retention {
            keep_days,
            status: Mutex::new(RetentionStatus {
                enabled: keep_days.is_some(),
                keep_days,
                ..RetentionStatus::default()
            }),
        }
    }

    /// What the schedule did and will do.
    pub fn status(&self) -> RetentionStatus {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, RetentionStatus> {
        lock(&self.status)
    }
}

/// Starts the schedule when `keep_days` is set: a first run now, then one
/// a day, until the datastore closes.
pub fn start(datastore: &Datastore, retention: &Arc<Retention>) {
    let Some(keep_days) = retention.keep_days else {
        return;
    };
    let (datastore, retention) = (datastore.clone(), Arc::clone(retention));
    schedule::start(
        "aw-server-retention",
        CHECK,
        &datastore.clone(),
        move || {
            let started = Timestamp::now();
            retention.lock().running = true;
            let outcome = run(&datastore, keep_days, started);
            {
                let mut status = retention.lock();
                status.running = false;
                status.next_run = Some(in_a_while(PERIOD));
                match &outcome {
                    Ok(expired) => {
                        status.last_error = None;
                        status.last_run = Some(RetentionRun {
                            started,
                            finished: Timestamp::now(),
                            cutoff: cutoff_of(started, keep_days),
                            deleted: expired.iter().map(|bucket| bucket.deleted).sum(),
                        });
                    }
                    Err(error) => status.last_error = Some(error.to_string()),
                }
            }
            match outcome {
                Ok(_) => Next::After(PERIOD),
                Err(DatastoreError::Closed) => Next::Stop,
                Err(error) => {
                    log::error!("Retention run failed: {error}");
                    Next::After(PERIOD)
                }
            }
        },
    );
}

/// Events that ended before this, `keep_days` before `now`, are expired.
fn cutoff_of(now: Timestamp, keep_days: u32) -> Timestamp {
    now.saturating_sub(Duration::from_secs(i64::from(keep_days) * 24 * 60 * 60))
}

/// One run at `now`: deletes the events that ended before `keep_days`
/// days earlier, logs what it did.
pub fn run(
    datastore: &Datastore,
    keep_days: u32,
    now: Timestamp,
) -> Result<Vec<Expired>, DatastoreError> {
    let cutoff = cutoff_of(now, keep_days);
    let expired = datastore.expire(cutoff, &mut |_| {})?;
    let total: u64 = expired.iter().map(|bucket| bucket.deleted).sum();
    if total == 0 {
        log::info!("Retention ({keep_days} days): no events ended before {cutoff}");
    } else {
        let buckets: Vec<String> = expired
            .iter()
            .map(|bucket| format!("{} {}", bucket.bucket_id, bucket.deleted))
            .collect();
        log::info!(
            "Retention ({keep_days} days): deleted {total} events that ended before {cutoff} ({})",
            buckets.join(", ")
        );
    }
    Ok(expired)
}
