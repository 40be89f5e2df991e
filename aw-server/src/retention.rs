//! Retention: with `[retention] keep_days = N` in the config file, events
//! that ended more than N days ago are deleted when the server starts and
//! once a day after, each run logged with its counts.
//!
//! The deleting is the datastore's (`Datastore::expire`), chunk by chunk,
//! so heartbeats are served while it runs and a run cut short by a crash
//! is finished by the next. This module only schedules it, on a thread of
//! its own that ends when the datastore closes.

use std::time::{Duration as StdDuration, Instant};

use aw_datastore::{Datastore, DatastoreError, Expired};
use aw_models::{Duration, Timestamp};

/// Time between runs.
const PERIOD: StdDuration = StdDuration::from_secs(24 * 60 * 60);
/// How often the sleeping thread checks whether the datastore closed.
const CHECK: StdDuration = StdDuration::from_secs(10);

/// Starts the schedule: a first run now, then one a day.
pub fn start(datastore: Datastore, keep_days: u32) {
    let spawned = std::thread::Builder::new()
        .name("aw-server-retention".to_string())
        .spawn(move || loop {
            match run(&datastore, keep_days, Timestamp::now()) {
                Ok(_) => {}
                Err(DatastoreError::Closed) => return,
                Err(error) => log::error!("Retention run failed: {error}"),
            }
            let next = Instant::now() + PERIOD;
            while Instant::now() < next {
                std::thread::sleep(CHECK);
                if datastore.health().is_err() {
                    return;
                }
            }
        });
    if let Err(error) = spawned {
        log::error!("Could not start the retention thread: {error}");
    }
}

/// One run at `now`: deletes the events that ended before `keep_days`
/// days earlier, logs what it did.
pub fn run(
    datastore: &Datastore,
    keep_days: u32,
    now: Timestamp,
) -> Result<Vec<Expired>, DatastoreError> {
    let cutoff = now.saturating_sub(Duration::from_secs(i64::from(keep_days) * 24 * 60 * 60));
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
