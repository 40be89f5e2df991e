//! Answers for finished periods, kept in memory while the server runs.
//!
//! A period that ended more than `margin` ago rarely changes again, and
//! dashboards ask for the same finished days over and over (a Year view
//! is 365 one-day requests). [`Cache`] keeps the answer computed for a
//! text (a query2 program, a summary's parameters) and a period, least
//! recently used dropped first beyond `max_bytes`.
//!
//! Never stale: the datastore tells the cache, after each commit and
//! before the writers hear back, what span of events' time the commit
//! touched ([`aw_datastore::WriteWatcher`], see [`Cache::watcher`]), and
//! every entry whose period meets it is dropped. An answer is computed
//! under a [`Ticket`] taken before it read anything, and is not kept when
//! a write touched its period after the ticket: it may have read either
//! side of that write. Nothing is written to disk, so a start never serves
//! an answer computed before it.
//!
//! [`query_json`] is `aw_query::query_json` with the finished periods'
//! answers kept.

mod hints;
pub mod prewarm;
mod query;
mod store;

use std::any::Any;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use aw_datastore::{Touched, WriteWatcher};
use aw_models::{Duration, Timestamp};

pub use hints::{Asked, Hints, MAX_PERIODS, MAX_PROGRAMS};
pub use prewarm::{Prewarm, PrewarmStatus};
pub use query::query_json;
pub use store::CacheStats;
use store::Store;

/// How large the cache may grow and which periods count as finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheConfig {
    /// The most the entries and their keys may take.
    pub max_bytes: usize,
    /// A period is finished once its end is this far in the past.
    pub margin: Duration,
    /// Whether the periods remembered from the last run are computed
    /// again after a start (`prewarm.rs`).
    pub prewarm: bool,
}

impl Default for CacheConfig {
    fn default() -> CacheConfig {
        CacheConfig {
            max_bytes: 64 << 20,
            margin: Duration::from_secs(600),
            prewarm: true,
        }
    }
}

/// A span of events' time in nanoseconds since the epoch, both ends
/// included, as the query API's periods are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Period {
    /// The first instant.
    pub start: i64,
    /// The last instant.
    pub end: i64,
}

impl Period {
    /// All time.
    pub const ALL: Period = Period {
        start: i64::MIN,
        end: i64::MAX,
    };

    /// The period from `start` to `end`, both included.
    pub fn new(start: Timestamp, end: Timestamp) -> Period {
        Period {
            start: start.nanos(),
            end: end.nanos(),
        }
    }

    /// Whether the two share an instant.
    pub fn meets(self, other: Period) -> bool {
        self.start <= other.end && other.start <= self.end
    }
}

/// Taken before an answer is computed; an answer is kept only when no
/// write touched its period since. While one is held, every commit is
/// logged for it.
#[derive(Debug)]
pub struct Ticket<'a> {
    seq: u64,
    cache: &'a Cache,
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        self.cache.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The answers for finished periods (see the crate's docs). Shared by
/// every request: one lock, held for a lookup or a store, never while
/// anything is computed.
pub struct Cache {
    config: CacheConfig,
    store: Mutex<Store>,
    hints: Hints,
    /// Tickets held: while there are none, a commit that meets no kept
    /// period has nothing to drop and no answer in flight to refuse, and
    /// leaves the lock alone (a heartbeat's commit, nearly always).
    in_flight: AtomicUsize,
    /// No kept period ends after this (it only grows, so it may be later
    /// than the latest kept end).
    latest_end: AtomicI64,
    /// How the pre-warm keeps a summary's day (see [`Keeper`]).
    summary_keeper: OnceLock<Keeper>,
}

/// Turns what a summary's program answered for one day into what the
/// summaries look up, and what it takes in bytes: the pre-warm computes
/// summaries' days below the crate that folds them. Without one, a day
/// is kept as the JSON value.
pub type Keeper = fn(serde_json::Value) -> (Arc<dyn Any + Send + Sync>, usize);

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("config", &self.config)
            .field("stats", &self.stats())
            .finish()
    }
}

impl Cache {
    /// An empty cache.
    pub fn new(config: CacheConfig) -> Cache {
        Cache {
            config,
            store: Mutex::default(),
            hints: Hints::default(),
            in_flight: AtomicUsize::new(0),
            latest_end: AtomicI64::new(i64::MIN),
            summary_keeper: OnceLock::new(),
        }
    }

    /// Sets how the pre-warm keeps a summary's day (once; later calls are
    /// ignored).
    pub fn keep_summaries_as(&self, keeper: Keeper) {
        let _ = self.summary_keeper.set(keeper);
    }

    /// A summary's day as the summaries look it up, and its bytes.
    pub(crate) fn summary_day(
        &self,
        value: serde_json::Value,
    ) -> (Arc<dyn Any + Send + Sync>, usize) {
        match self.summary_keeper.get() {
            Some(keeper) => keeper(value),
            None => {
                let bytes = value_bytes(&value);
                (Arc::new(value), bytes)
            }
        }
    }

    /// Its limits.
    pub fn config(&self) -> CacheConfig {
        self.config
    }

    /// Whether `period` ended more than the margin before `now`.
    pub fn is_finished(&self, period: Period, now: Timestamp) -> bool {
        period.end < now.nanos().saturating_sub(self.config.margin.nanos())
    }

    /// What the next start computes again (`prewarm.rs`).
    pub fn hints(&self) -> &Hints {
        &self.hints
    }

    /// Puts stored hints in place of the current ones.
    pub fn load_hints(&self, text: Option<&str>) {
        self.hints.load(text);
    }

    /// Whether an answer for `text` in `period` is kept (a lookup that
    /// counts as neither hit nor miss, nor as a use).
    pub fn contains(&self, text: &str, period: Period) -> bool {
        let store = self.lock();
        store.text_id(text).is_some_and(|id| store.has(id, period))
    }

    /// The ticket an answer about to be computed is kept under.
    pub fn ticket(&self) -> Ticket<'_> {
        // Counted before the number is read: a commit that finds no
        // ticket held came before this one's reads, which see it.
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        Ticket {
            seq: self.lock().seq(),
            cache: self,
        }
    }

    /// The kept answers for `text` in each of `periods` (`None` where
    /// there is none, or it is of another type), under one lock.
    pub fn lookup<T: Any + Send + Sync>(
        &self,
        text: &str,
        periods: &[Period],
    ) -> Vec<Option<Arc<T>>> {
        let mut store = self.lock();
        let id = store.text_id(text);
        periods
            .iter()
            .map(|&period| {
                store
                    .get(id, period)
                    .and_then(|value| value.downcast::<T>().ok())
            })
            .collect()
    }

    /// Keeps `value`, said to take `bytes`, as the answer for `text` in
    /// `period`, unless a write touched the period since `ticket` or the
    /// answer is over an eighth of the cache. Says whether it was kept.
    pub fn keep<T: Any + Send + Sync>(
        &self,
        ticket: &Ticket<'_>,
        text: &str,
        period: Period,
        value: Arc<T>,
        bytes: usize,
    ) -> bool {
        self.keep_any(ticket, text, period, value, bytes)
    }

    /// [`Cache::keep`] of a value of any type.
    pub(crate) fn keep_any(
        &self,
        ticket: &Ticket<'_>,
        text: &str,
        period: Period,
        value: Arc<dyn Any + Send + Sync>,
        bytes: usize,
    ) -> bool {
        let mut store = self.lock();
        // Before the lock is let go, and so before the ticket is: a
        // commit that skips the lock sees it.
        self.latest_end.fetch_max(period.end, Ordering::SeqCst);
        store.put(
            ticket.seq,
            text,
            period,
            value,
            bytes,
            self.config.max_bytes,
        )
    }

    /// The answers for `text` in each of `periods`, in order: the
    /// finished ones it keeps come from it (and are noted for the next
    /// start's pre-warm), the others from one call of `compute`, given the
    /// indexes of the periods missing and answering their values in that
    /// order, under one ticket; the finished ones among those are kept,
    /// each said to take `bytes` of it. An error of `compute` keeps
    /// nothing and is the answer.
    pub fn answers<T: Any + Send + Sync, E>(
        &self,
        text: &str,
        periods: &[Period],
        now: Timestamp,
        compute: impl FnOnce(&[usize]) -> Result<Vec<T>, E>,
        bytes: impl Fn(&T) -> usize,
    ) -> Result<Vec<Arc<T>>, E> {
        let finished: Vec<bool> = periods.iter().map(|&p| self.is_finished(p, now)).collect();
        let asked: Vec<Period> = periods
            .iter()
            .zip(&finished)
            .filter_map(|(&period, &done)| done.then_some(period))
            .collect();
        let mut found = if asked.is_empty() {
            Vec::new()
        } else {
            if self.config.prewarm {
                self.hints.note(text, &asked);
            }
            self.lookup::<T>(text, &asked)
        }
        .into_iter();
        let mut answers: Vec<Option<Arc<T>>> = finished
            .iter()
            .map(|&done| if done { found.next().flatten() } else { None })
            .collect();
        let missing: Vec<usize> = (0..answers.len())
            .filter(|&i| answers[i].is_none())
            .collect();
        if !missing.is_empty() {
            let ticket = self.ticket();
            for (&i, value) in missing.iter().zip(compute(&missing)?) {
                let value = Arc::new(value);
                if finished[i] {
                    self.keep(&ticket, text, periods[i], Arc::clone(&value), bytes(&value));
                }
                answers[i] = Some(value);
            }
        }
        Ok(answers
            .into_iter()
            .map(|answer| answer.expect("every period answered"))
            .collect())
    }

    /// Drops every answer whose period meets one of `spans`.
    pub fn invalidate(&self, spans: &[Period]) {
        self.lock().invalidate(spans.iter().copied());
    }

    /// Drops every answer.
    pub fn clear(&self) {
        self.invalidate(&[Period::ALL]);
    }

    /// The counters and sizes now.
    pub fn stats(&self) -> CacheStats {
        self.lock().stats()
    }

    /// What the datastore tells of its commits, for
    /// `Datastore::watch_writes`.
    pub fn watcher(self: &Arc<Self>) -> impl WriteWatcher + 'static {
        Watcher(Arc::clone(self))
    }

    fn lock(&self) -> MutexGuard<'_, Store> {
        match self.store.lock() {
            Ok(store) => store,
            Err(poisoned) => {
                // A panic in the middle of a change: forget everything, and
                // every answer in flight with it.
                let mut store = poisoned.into_inner();
                store.reset();
                self.store.clear_poison();
                store
            }
        }
    }
}

/// What a kept answer answers: the key's text is the kind's prefix and
/// the program, so a summary's day and a query's period never meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The query API's: JSON text per period (`query_json`).
    Query,
    /// A summary's days: the parsed JSON value per day (`aw-summary`).
    Summary,
}

impl Kind {
    const PREFIXES: [(Kind, &'static str); 2] =
        [(Kind::Query, "query\n"), (Kind::Summary, "summary\n")];

    /// The key text of `program`'s answers of this kind.
    pub fn key(self, program: &str) -> String {
        let prefix = Kind::PREFIXES
            .iter()
            .find(|(kind, _)| *kind == self)
            .map_or("", |(_, prefix)| prefix);
        format!("{prefix}{program}")
    }

    /// The kind and program of a key text.
    pub fn of(text: &str) -> Option<(Kind, &str)> {
        Kind::PREFIXES
            .iter()
            .find_map(|&(kind, prefix)| text.strip_prefix(prefix).map(|program| (kind, program)))
    }
}

/// About what a parsed JSON value takes in memory: its text's length
/// twice over (the nodes, the strings' own allocations).
pub fn value_bytes(value: &serde_json::Value) -> usize {
    serde_json::to_string(value).map_or(0, |text| 2 * text.len())
}

struct Watcher(Arc<Cache>);

impl WriteWatcher for Watcher {
    fn committed(&self, touched: &Touched) {
        if touched.everything() {
            self.0.clear();
            return;
        }
        let cache = &self.0;
        if cache.in_flight.load(Ordering::SeqCst) == 0 {
            let latest = cache.latest_end.load(Ordering::SeqCst);
            if touched.spans().iter().all(|&(start, _)| start > latest) {
                return;
            }
        }
        cache.lock().invalidate(
            touched
                .spans()
                .iter()
                .map(|&(start, end)| Period { start, end }),
        );
    }
}

#[cfg(test)]
mod tests;
