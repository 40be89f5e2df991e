//! The one way a background job runs on a schedule: a thread of its own at
//! [`BACKGROUND_NICENESS`], the job run now and then after each wait it
//! asks for, the wait cut short when the job's store closes, and the
//! retry wait after failures ([`backoff`]). What a job did and when it runs
//! next are the job's own to keep for its status.

use std::time::{Duration, Instant};

/// How much nicer than the rest the background threads are (the
/// datastore's readers, the query threads, the schedules): on a small
/// machine heartbeats get the CPU first.
pub const BACKGROUND_NICENESS: i32 = 10;

/// What a job asks for after a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Run again after this long.
    After(Duration),
    /// End the schedule (the store closed).
    Stop,
}

/// A schedule's thread: its name, how often its wait looks whether the
/// job's store is still open (`alive`), and the job.
#[derive(Debug, Clone)]
pub struct Schedule {
    name: String,
    check: Duration,
}

impl Schedule {
    /// A schedule of a thread named `name` whose waits look every `check`
    /// whether the job should go on.
    pub fn new(name: &str, check: Duration) -> Schedule {
        Schedule {
            name: name.to_string(),
            check,
        }
    }

    /// Starts `job`: it runs now, then again after each wait it answers,
    /// until it answers [`Next::Stop`] or `alive` says no during a wait.
    /// A thread that cannot be started is logged.
    pub fn start(
        self,
        alive: impl Fn() -> bool + Send + 'static,
        mut job: impl FnMut() -> Next + Send + 'static,
    ) {
        let check = self.check;
        let spawned = std::thread::Builder::new()
            .name(self.name.clone())
            .spawn(move || {
                crate::lower_priority(BACKGROUND_NICENESS);
                while let Next::After(wait) = job() {
                    if !wait_while(&alive, wait, check) {
                        return;
                    }
                }
            });
        if let Err(error) = spawned {
            log::error!("Could not start the thread {}: {error}", self.name);
        }
    }
}

/// Waits `wait`, looking every `check` whether `alive`; false when it was
/// not (the schedule then ends).
fn wait_while(alive: &dyn Fn() -> bool, wait: Duration, check: Duration) -> bool {
    let until = Instant::now() + wait;
    loop {
        let now = Instant::now();
        if now >= until {
            return alive();
        }
        std::thread::sleep(check.min(until - now));
        if !alive() {
            return false;
        }
    }
}

/// The wait after `failures` failed runs in a row: `interval` after none,
/// else `first`, doubling with each further failure, up to `interval`
/// (never below `first`).
pub fn backoff(failures: u32, first: Duration, interval: Duration) -> Duration {
    if failures == 0 {
        return interval;
    }
    let doubled = first.saturating_mul(1 << failures.min(16).saturating_sub(1));
    doubled.min(interval.max(first))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
    use std::sync::Arc;

    #[test]
    fn failed_runs_are_retried_sooner_doubling_up_to_the_interval() {
        let (first, minute) = (Duration::from_secs(5), Duration::from_secs(60));
        let waits: Vec<u64> = (0..6)
            .map(|n| backoff(n, first, minute).as_secs())
            .collect();
        assert_eq!(waits, [60, 5, 10, 20, 40, 60]);
        assert_eq!(backoff(40, first, minute), minute);
        assert_eq!(backoff(1, first, Duration::from_secs(1)).as_secs(), 5);
    }

    #[test]
    fn a_job_runs_until_it_stops_or_its_store_closes() {
        let runs = Arc::new(AtomicU32::new(0));
        let counted = Arc::clone(&runs);
        Schedule::new("test-stop", Duration::from_millis(5)).start(
            || true,
            move || match counted.fetch_add(1, Ordering::SeqCst) {
                0..=2 => Next::After(Duration::from_millis(1)),
                _ => Next::Stop,
            },
        );
        let open = Arc::new(AtomicBool::new(true));
        let closed = Arc::new(AtomicU32::new(0));
        let (watched, counted_closed) = (Arc::clone(&open), Arc::clone(&closed));
        Schedule::new("test-close", Duration::from_millis(5)).start(
            move || watched.load(Ordering::SeqCst),
            move || {
                counted_closed.fetch_add(1, Ordering::SeqCst);
                Next::After(Duration::from_secs(3600))
            },
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        while (runs.load(Ordering::SeqCst) < 4 || closed.load(Ordering::SeqCst) < 1)
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        open.store(false, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(runs.load(Ordering::SeqCst), 4, "three waits, then the stop");
        assert_eq!(
            closed.load(Ordering::SeqCst),
            1,
            "the hour's wait ended at the close"
        );
    }
}
