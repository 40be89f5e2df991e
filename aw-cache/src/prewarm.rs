//! After a start, the periods the hints name (`hints.rs`) are computed
//! again at low priority, so the first visit after a reboot is a repeat
//! visit; then the hints are stored every few minutes when they changed.
//! The pre-warm runs on an `aw_threads::Schedule` (the background
//! niceness, so requests and heartbeats get the CPU first), a few periods
//! at a time, stops when the store closes, and says how far it got and
//! what CPU it took ([`PrewarmStatus`]).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use aw_datastore::Datastore;
use aw_models::{TimeInterval, Timestamp};
use aw_query::{EventSource, QueryError};
use aw_threads::{Next, Schedule};

use crate::{Cache, Kind, Period};

/// Periods computed together: long enough to use the query's threads,
/// short enough to stop soon at a close.
const CHUNK: usize = 8;

/// How often the hints are stored when they changed.
const SAVE_EVERY: Duration = Duration::from_secs(300);

/// How often the schedule's waits look whether the store closed.
const CHECK: Duration = Duration::from_secs(30);

/// How far the pre-warm got.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct PrewarmStatus {
    /// Whether it runs at all (`[cache] prewarm`).
    pub enabled: bool,
    /// Periods the hints named.
    pub total: u64,
    /// Of those, the ones looked at so far (computed or found kept).
    pub done: u64,
    /// Whether it is over.
    pub finished: bool,
    /// The server's CPU time while it ran, in seconds, where the system
    /// says: every thread's, so requests answered meanwhile count too (at
    /// a start there are few).
    pub cpu_seconds: f64,
}

/// The pre-warm's progress, shared with whoever reports it.
#[derive(Debug, Default)]
pub struct Prewarm {
    status: Mutex<PrewarmStatus>,
}

impl Prewarm {
    /// A pre-warm not begun; `enabled` says whether it will run.
    pub fn new(enabled: bool) -> Prewarm {
        let prewarm = Prewarm::default();
        prewarm.update(|status| status.enabled = enabled);
        prewarm
    }

    /// How far it got.
    pub fn status(&self) -> PrewarmStatus {
        *self.status.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn update(&self, change: impl FnOnce(&mut PrewarmStatus)) {
        change(&mut self.status.lock().unwrap_or_else(PoisonError::into_inner));
    }
}

/// When `prewarm` is enabled: loads the hints `datastore` holds into
/// `cache` and starts the schedule, the pre-warm first (its progress
/// reported in `prewarm`), then the hints stored every few minutes, until
/// the store closes. Disabled, nothing is read, run or stored.
pub fn start(cache: &Arc<Cache>, datastore: &Datastore, prewarm: &Arc<Prewarm>) {
    if !prewarm.status().enabled {
        return;
    }
    match datastore.cache_hints() {
        Ok(text) => cache.load_hints(text.as_deref()),
        Err(error) => log::warn!("Could not read the cache's hints: {error}"),
    }
    let (cache, store, progress) = (Arc::clone(cache), datastore.clone(), Arc::clone(prewarm));
    let open = datastore.clone();
    let mut first = true;
    // On by default, so on every laptop: looking each second whether the
    // store is open was a wakeup a second for good (the watcher-load
    // row's CPU a minute, 155 -> 185 ms). After a close the thread ends
    // within `CHECK`, holding an inert handle meanwhile.
    Schedule::new("aw-cache-prewarm", CHECK).start(
        move || open.is_open(),
        move || {
            if std::mem::take(&mut first) {
                run(&cache, &store, &progress);
            }
            save_hints(&cache, &store);
            Next::After(SAVE_EVERY)
        },
    );
}

/// Stores the hints if they changed (also at shutdown, while the store is
/// still open).
pub fn save_hints(cache: &Cache, datastore: &Datastore) {
    let Some(text) = cache.hints().take_changed() else {
        return;
    };
    if let Err(error) = datastore.set_cache_hints(text) {
        cache.hints().still_changed();
        log::debug!("Could not store the cache's hints: {error}");
    }
}

/// Computes every hinted period the cache lacks, the most recently asked
/// for first.
pub fn run(cache: &Cache, datastore: &Datastore, progress: &Prewarm) {
    let started_cpu = aw_threads::process_cpu_time();
    let started = std::time::Instant::now();
    let programs = cache.hints().programs();
    let total: usize = programs.iter().map(|asked| asked.len()).sum();
    progress.update(|status| status.total = total as u64);
    let mut computed = 0;
    'programs: for asked in &programs {
        let Some((kind, program)) = Kind::of(&asked.program) else {
            progress.update(|status| status.done += asked.len() as u64);
            continue;
        };
        let now = Timestamp::now();
        let periods: Vec<Period> = asked
            .most_recent_first()
            .filter(|&period| cache.is_finished(period, now))
            .collect();
        progress.update(|status| status.done += (asked.len() - periods.len()) as u64);
        for chunk in periods.chunks(CHUNK) {
            if !datastore.is_open() {
                break 'programs;
            }
            match fill(cache, kind, program, &asked.program, chunk, datastore) {
                Ok(count) => computed += count,
                Err(error) => {
                    // The data changed since (a bucket went): not worth
                    // more of its periods.
                    log::debug!("Pre-warm stopped a program: {error}");
                    continue 'programs;
                }
            }
            progress.update(|status| status.done += chunk.len() as u64);
        }
    }
    let cpu = match (started_cpu, aw_threads::process_cpu_time()) {
        (Some(before), Some(after)) => after.saturating_sub(before).as_secs_f64(),
        _ => 0.0,
    };
    progress.update(|status| {
        status.finished = true;
        status.done = status.total;
        status.cpu_seconds = cpu;
    });
    if total > 0 {
        log::info!(
            "Cache pre-warmed: {computed} of {total} remembered periods computed in {:.1} s ({cpu:.1} s of the server's CPU meanwhile)",
            started.elapsed().as_secs_f64()
        );
    }
}

/// Computes the periods of `chunk` the cache lacks and keeps them.
fn fill(
    cache: &Cache,
    kind: Kind,
    program: &str,
    text: &str,
    chunk: &[Period],
    source: &dyn EventSource,
) -> Result<usize, QueryError> {
    let missing: Vec<Period> = chunk
        .iter()
        .copied()
        .filter(|&period| !cache.contains(text, period))
        .collect();
    if missing.is_empty() {
        return Ok(0);
    }
    let ticket = cache.ticket();
    let intervals: Vec<TimeInterval> = missing
        .iter()
        .map(|period| {
            TimeInterval::new(
                Timestamp::from_nanos(period.start),
                Timestamp::from_nanos(period.end),
            )
        })
        .collect();
    match kind {
        Kind::Query => {
            for (period, answer) in missing
                .iter()
                .zip(aw_query::query_texts(program, &intervals, source)?)
            {
                let bytes = answer.len();
                cache.keep(&ticket, text, *period, Arc::new(answer), bytes);
            }
        }
        Kind::Summary => {
            for (period, answer) in missing
                .iter()
                .zip(aw_query::query(program, &intervals, source)?)
            {
                let (answer, bytes) = cache.summary_day(answer);
                cache.keep_any(&ticket, text, *period, answer, bytes);
            }
        }
    }
    Ok(missing.len())
}
