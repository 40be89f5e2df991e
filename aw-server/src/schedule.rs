//! What the background schedules (`[sync]`, `[hub]`) share: sleeping
//! until the next pass while watching for the datastore's close, the time
//! of that pass for their statuses, and their status locks.

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration as StdDuration, Instant};

use aw_datastore::Datastore;
use aw_models::Timestamp;

/// How often a sleeping schedule checks whether the datastore closed.
const CHECK: StdDuration = StdDuration::from_secs(1);

/// The time `wait` from now, for a status's next pass.
pub(crate) fn in_a_while(wait: StdDuration) -> Timestamp {
    let millis = i64::try_from(wait.as_millis()).unwrap_or(i64::MAX);
    Timestamp::now().saturating_add(aw_models::Duration::from_millis(millis))
}

/// Sleeps for `wait` on a schedule's thread, looking every second whether
/// the datastore closed; false when it did (the schedule then ends).
pub(crate) fn sleep_while_open(datastore: &Datastore, wait: StdDuration) -> bool {
    let until = Instant::now() + wait;
    while Instant::now() < until {
        std::thread::sleep(CHECK.min(until - Instant::now()));
        if datastore.health().is_err() {
            return false;
        }
    }
    true
}

/// Locks a status; a panic while holding the lock leaves plain data
/// behind, so a poisoned lock is used as it is.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
