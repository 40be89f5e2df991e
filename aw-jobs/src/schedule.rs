//! What the server's background jobs (`[sync]`, `[hub]`, `[backup]`,
//! `[retention]`) share: each runs on an `aw_threads::Schedule` for as long
//! as the datastore is open (`start`); the time of the next run for their
//! statuses; their status locks.

use std::sync::{Mutex, MutexGuard};
use std::time::Duration as StdDuration;

use aw_datastore::Datastore;
use aw_models::Timestamp;
use aw_threads::{Next, Schedule};

/// Starts `job` on the schedule thread `name` for as long as `datastore`
/// is open, looking every `check` while it waits.
pub(crate) fn start(
    name: &str,
    check: StdDuration,
    datastore: &Datastore,
    job: impl FnMut() -> Next + Send + 'static,
) {
    let open = datastore.clone();
    // A flag, not a round trip to the writer: a schedule waiting never
    // wakes it.
    Schedule::new(name, check).start(move || open.is_open(), job);
}

/// The time `wait` from now, for a status's next run.
pub(crate) fn in_a_while(wait: StdDuration) -> Timestamp {
    Timestamp::now().saturating_add(as_duration(wait))
}

/// A wait as the models' duration (to the millisecond).
pub(crate) fn as_duration(wait: StdDuration) -> aw_models::Duration {
    aw_models::Duration::from_millis(i64::try_from(wait.as_millis()).unwrap_or(i64::MAX))
}

/// Locks a status; a panic while holding the lock leaves plain data
/// behind, so a poisoned lock is used as it is.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
