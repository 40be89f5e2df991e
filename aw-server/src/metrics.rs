//! Prometheus metrics (`GET /metrics`, `docs/API.md` §3.14): what they
//! count, and their OpenMetrics text, written by `prometheus-client`.
//!
//! Two kinds of numbers. What requests do is counted as it happens:
//! [`Recorder`], a fairing, counts every response by method, route
//! template and status and times it by method and route template, and the
//! heartbeat handler counts the heartbeats stored per bucket
//! ([`Metrics::heartbeat`]). The rest is read when scraped
//! ([`Scrape::gather`]): the writer's queue and commit times, the sizes of
//! the database file and its WAL, how long ago each bucket's last event
//! ended, and the outcome and age of the last sync pass, hub pass and
//! snapshot (absent until the first).
//!
//! Heartbeats are most of the traffic, so a request pays little: two clock
//! readings, one value in its local cache, a lookup of its route by the
//! route's template (one hash), then an uncontended lock or an atomic per
//! metric. Its labels are made once per route, when the server lifts off:
//! nothing is formatted per request and nothing allocated but the cache
//! entry. Labels come from the route templates Rocket was given, never
//! from a request's path, so their number is bounded by the routes;
//! requests no route took share [`UNMATCHED`], and those the gate refused
//! its rejection route. A bucket label names a bucket that exists or
//! existed: only stored heartbeats are counted.
//!
//! Who may scrape is the gate's decision (`security.rs`); the route is
//! `endpoints/metrics.rs`.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};
use std::time::Instant;

use crate::served::Served;
use aw_cache::{CacheStats, PrewarmStatus};
use aw_datastore::{CommitHistogram, WriterStats, COMMIT_BOUNDS_MICROS};
use aw_models::{Duration, Timestamp};
use prometheus_client::encoding::{EncodeLabelSet, EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};
use rocket::fairing::{Fairing, Info, Kind};
use rocket::http::Status;
use rocket::{Data, Orbit, Request, Response, Rocket, Route};

use crate::error::ApiError;
use crate::ServerState;

/// The prefix of every metric's name.
const PREFIX: &str = "aw_server";

/// The route label of requests no route took.
pub const UNMATCHED: &str = "unmatched";

/// Upper bounds of the request-time histograms' buckets, in seconds: a
/// heartbeat takes some hundred microseconds, a year's query seconds.
const REQUEST_BOUNDS: [f64; 16] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0,
];

/// The labels of a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ResponseLabels {
    method: &'static str,
    route: &'static str,
    status: u16,
}

/// The labels of a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RouteLabels {
    method: &'static str,
    route: &'static str,
}

/// A request-time histogram with [`REQUEST_BOUNDS`].
fn request_histogram() -> Histogram {
    Histogram::new(REQUEST_BOUNDS)
}

/// What is counted as it happens; the server keeps one, shared by the
/// [`Recorder`] and the handlers.
#[derive(Debug)]
pub struct Metrics {
    responses: Family<ResponseLabels, Counter>,
    durations: Family<RouteLabels, Histogram, fn() -> Histogram>,
    heartbeats: BucketCounters,
    /// Each route's labels and metrics, made at liftoff.
    routes: OnceLock<Routes>,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics {
            responses: Family::default(),
            durations: Family::new_with_constructor(request_histogram),
            heartbeats: BucketCounters::default(),
            routes: OnceLock::new(),
        }
    }
}

impl Metrics {
    /// Counts a heartbeat stored into `bucket_id`.
    pub fn heartbeat(&self, bucket_id: &str) {
        self.heartbeats.count(bucket_id);
    }

    /// The OpenMetrics text: the counters of requests when `counters`,
    /// the readings of one file's `scrape`, the numbers of a server's
    /// `people`.
    pub fn encode(
        &self,
        counters: bool,
        scrape: Option<&Scrape>,
        people: Option<&People>,
    ) -> Result<String, fmt::Error> {
        // A registry per scrape: the readings are new each time and the
        // counters are handles on the same atomics, so it costs a few
        // small allocations every scrape (seconds apart), none per request.
        let mut registry = Registry::with_prefix(PREFIX);
        if counters {
            self.register_counters(&mut registry);
        }
        if let Some(scrape) = scrape {
            scrape.register(&mut registry);
        }
        if let Some(people) = people {
            people.register(&mut registry);
        }
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry)?;
        Ok(text)
    }

    fn register_counters(&self, registry: &mut Registry) {
        registry.register(
            "http_requests",
            "HTTP responses by method, route template and status code",
            self.responses.clone(),
        );
        registry.register_with_unit(
            "http_request_duration",
            "Time from a request's arrival until its response is ready to send, by method and route template",
            Unit::Seconds,
            self.durations.clone(),
        );
        registry.register(
            "heartbeats",
            "Heartbeats stored, by bucket",
            self.heartbeats.clone(),
        );
    }

    /// Counts one response and its time.
    fn record(&self, request: &Request<'_>, status: Status, took: std::time::Duration) {
        let seconds = took.as_secs_f64();
        let route = request
            .route()
            .and_then(|route| self.routes.get()?.find(route));
        match route {
            Some(route) => {
                route
                    .duration
                    .get_or_init(|| self.durations.get_or_create(&route.labels).clone())
                    .observe(seconds);
                if status == Status::Ok {
                    route
                        .ok
                        .get_or_init(|| self.responses.get_or_create(&route.response(200)).clone())
                        .inc();
                } else {
                    self.responses
                        .get_or_create(&route.response(status.code))
                        .inc();
                }
            }
            None => {
                let labels = RouteLabels {
                    method: request.method().as_str(),
                    route: UNMATCHED,
                };
                self.durations.get_or_create(&labels).observe(seconds);
                self.responses
                    .get_or_create(&ResponseLabels {
                        method: labels.method,
                        route: labels.route,
                        status: status.code,
                    })
                    .inc();
            }
        }
    }
}

/// A route's labels and its most used metrics, resolved on first use.
#[derive(Debug)]
struct RouteMetrics {
    method: rocket::http::Method,
    labels: RouteLabels,
    duration: OnceLock<Histogram>,
    /// The counter of its 200 answers, the usual one.
    ok: OnceLock<Counter>,
}

impl RouteMetrics {
    fn response(&self, status: u16) -> ResponseLabels {
        ResponseLabels {
            method: self.labels.method,
            route: self.labels.route,
            status,
        }
    }
}

/// Every route's metrics by its whole URI template (query included), then
/// its method.
#[derive(Debug, Default)]
struct Routes(HashMap<&'static str, Vec<RouteMetrics>>);

impl Routes {
    fn new<'a>(routes: impl Iterator<Item = &'a Route>) -> Routes {
        let mut table: HashMap<&'static str, Vec<RouteMetrics>> = HashMap::new();
        for route in routes {
            table
                .entry(intern(route.uri.as_str()))
                .or_default()
                .push(RouteMetrics {
                    method: route.method,
                    labels: RouteLabels {
                        method: route.method.as_str(),
                        route: intern(route.uri.path()),
                    },
                    duration: OnceLock::new(),
                    ok: OnceLock::new(),
                });
        }
        Routes(table)
    }

    fn find(&self, route: &Route) -> Option<&RouteMetrics> {
        self.0
            .get(route.uri.as_str())?
            .iter()
            .find(|known| known.method == route.method)
    }
}

/// `text` as a string that lives as long as the program: one copy per
/// distinct text, so the route templates of every server a process builds
/// (tests build many) are stored once.
fn intern(text: &str) -> &'static str {
    static INTERNED: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut interned = INTERNED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(known) = interned.get(text) {
        return known;
    }
    let leaked: &'static str = Box::leak(text.into());
    interned.insert(leaked);
    leaked
}

/// A counter per bucket, found by the bucket's id without allocating
/// (a `Family` is searched with a whole label set, which would take a new
/// `String` a heartbeat).
#[derive(Debug, Clone, Default)]
struct BucketCounters(Arc<RwLock<HashMap<Box<str>, Counter>>>);

impl BucketCounters {
    fn count(&self, bucket_id: &str) {
        let counters = self.0.read().unwrap_or_else(PoisonError::into_inner);
        if let Some(counter) = counters.get(bucket_id) {
            counter.inc();
            return;
        }
        drop(counters);
        self.0
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(bucket_id.into())
            .or_default()
            .inc();
    }
}

impl EncodeMetric for BucketCounters {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), fmt::Error> {
        let counters = self.0.read().unwrap_or_else(PoisonError::into_inner);
        for (bucket, counter) in counters.iter() {
            counter.encode(encoder.encode_family(&[("bucket", &**bucket)])?)?;
        }
        Ok(())
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Counter
    }

    fn is_empty(&self) -> bool {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    }
}

/// When a request's head arrived, in its local cache.
#[derive(Debug, Clone, Copy)]
struct Arrived(Option<Instant>);

/// The fairing that counts and times every response. Attached before the
/// gate, so a request's time includes the gate's checks; it ends when the
/// response's head is ready, before its body is sent.
#[derive(Debug)]
pub struct Recorder(pub Arc<Metrics>);

#[rocket::async_trait]
impl Fairing for Recorder {
    fn info(&self) -> Info {
        Info {
            name: "metrics",
            kind: Kind::Request | Kind::Response | Kind::Liftoff,
        }
    }

    async fn on_liftoff(&self, rocket: &Rocket<Orbit>) {
        let _ = self.0.routes.set(Routes::new(rocket.routes()));
    }

    async fn on_request(&self, request: &mut Request<'_>, _data: &mut Data<'_>) {
        request.local_cache(|| Arrived(Some(Instant::now())));
    }

    async fn on_response<'r>(&self, request: &'r Request<'_>, response: &mut Response<'r>) {
        if let Arrived(Some(arrived)) = request.local_cache(|| Arrived(None)) {
            self.0.record(request, response.status(), arrived.elapsed());
        }
    }
}

/// How the last run of a feature ended, and how long ago.
#[derive(Debug, Clone, Copy, PartialEq)]
struct LastRun {
    success: bool,
    age_seconds: f64,
}

impl LastRun {
    /// The newer of the last success and the last failure, if any.
    fn of(succeeded: Option<Timestamp>, failed: Option<Timestamp>, now: Timestamp) -> Option<Self> {
        let (success, at) = match (succeeded, failed) {
            (Some(good), Some(bad)) if good > bad => (true, good),
            (_, Some(bad)) => (false, bad),
            (Some(good), None) => (true, good),
            (None, None) => return None,
        };
        Some(LastRun {
            success,
            age_seconds: seconds_between(at, now),
        })
    }
}

/// What is read when scraped.
#[derive(Debug)]
pub struct Scrape {
    writer: WriterStats,
    database_bytes: Option<u64>,
    wal_bytes: Option<u64>,
    /// Seconds since each bucket's last event ended, for buckets with
    /// events.
    since_last_event: Vec<(String, f64)>,
    sync: Option<LastRun>,
    hub: Option<LastRun>,
    backup: Option<LastRun>,
    /// The cache of finished periods, when it is on.
    cache: Option<CacheStats>,
    /// Its pre-warm after this start, when it runs.
    prewarm: Option<PrewarmStatus>,
}

impl Scrape {
    /// Reads everything now. The buckets' ends are the writer's facts
    /// (`stats.rs`), known without SQL; the file sizes are two `stat`s.
    pub async fn gather(state: &ServerState, served: &Served) -> Result<Scrape, ApiError> {
        let buckets = served.datastore.buckets().await?;
        let now = Timestamp::now();
        let since_last_event = buckets
            .into_values()
            .filter_map(|bucket| Some((bucket.id, seconds_between(bucket.metadata.end?, now))))
            .collect();
        let sync = served.jobs.sync.status();
        let hub = served.jobs.hub.status();
        let hub = hub.as_ref().and_then(|hub| {
            LastRun::of(
                hub.last_pass.as_ref().map(|pass| pass.finished),
                hub.last_error_at,
                now,
            )
        });
        let backup = served.jobs.backups.last().and_then(|last| {
            let ended = last
                .time
                .saturating_add(Duration::from_nanos((last.duration_ms * 1e6) as i64));
            match last.outcome {
                "ok" => LastRun::of(Some(ended), None, now),
                _ => LastRun::of(None, Some(ended), now),
            }
        });
        Ok(Scrape {
            writer: served.datastore.writer_stats(),
            database_bytes: file_size(&served.db_path),
            wal_bytes: file_size(&wal_path(&served.db_path)).or(Some(0)),
            since_last_event,
            sync: LastRun::of(
                sync.last_pass.as_ref().map(|pass| pass.finished),
                sync.last_error_at,
                now,
            ),
            hub,
            backup,
            cache: served.cache.as_ref().map(|cache| cache.stats()),
            prewarm: Some(state.prewarm.status()).filter(|status| status.enabled),
        })
    }

    /// Registers the readings: those of a feature that never ran are left
    /// out.
    fn register(&self, registry: &mut Registry) {
        registry.register(
            "writer_queue_depth",
            "Commands waiting for the database writer",
            ConstGauge::new(i64::try_from(self.writer.queued).unwrap_or(i64::MAX)),
        );
        registry.register_with_unit(
            "writer_commit_duration",
            "Time of the database writer's commits (each commits a batch of writes)",
            Unit::Seconds,
            CommitDurations(self.writer.commits.clone()),
        );
        for (name, help, bytes) in [
            (
                "database_size",
                "Size of the database file",
                self.database_bytes,
            ),
            (
                "database_wal_size",
                "Size of the database's write-ahead log (0 when there is none)",
                self.wal_bytes,
            ),
        ] {
            if let Some(bytes) = bytes {
                let bytes = i64::try_from(bytes).unwrap_or(i64::MAX);
                registry.register_with_unit(name, help, Unit::Bytes, ConstGauge::new(bytes));
            }
        }
        registry.register_with_unit(
            "bucket_last_event_age",
            "Seconds since the end of each bucket's last event (buckets with events)",
            Unit::Seconds,
            BucketGauges(self.since_last_event.clone()),
        );
        if let Some(cache) = self.cache {
            for (name, help, count) in [
                ("cache_hits", "Finished periods answered from the cache", cache.hits),
                ("cache_misses", "Finished periods the cache did not have", cache.misses),
                ("cache_evictions", "Answers dropped to stay under [cache] max_mb, least recently used first", cache.evictions),
                ("cache_invalidations", "Answers dropped because a write touched their period", cache.invalidated),
                ("cache_refusals", "Answers not kept: a write touched their period while they were computed, or they were too large", cache.refused),
            ] {
                registry.register(name, help, ConstCounter::new(count));
            }
            registry.register(
                "cache_entries",
                "Answers in the cache",
                ConstGauge::new(i64::try_from(cache.entries).unwrap_or(i64::MAX)),
            );
            registry.register_with_unit(
                "cache_size",
                "Memory the cache's answers and keys take",
                Unit::Bytes,
                ConstGauge::new(i64::try_from(cache.bytes).unwrap_or(i64::MAX)),
            );
        }
        if let Some(prewarm) = self.prewarm {
            registry.register(
                "cache_prewarm_periods",
                "Periods remembered from the last run, to compute again after this start",
                ConstGauge::new(i64::try_from(prewarm.total).unwrap_or(i64::MAX)),
            );
            registry.register(
                "cache_prewarm_done",
                "Of those, the ones the pre-warm has looked at",
                ConstGauge::new(i64::try_from(prewarm.done).unwrap_or(i64::MAX)),
            );
            registry.register_with_unit(
                "cache_prewarm_cpu",
                "The server's CPU time while the pre-warm ran (0 until it finished)",
                Unit::Seconds,
                ConstGauge::new(prewarm.cpu_seconds),
            );
        }
        for (feature, what, run) in [
            ("sync", "folder sync pass", self.sync),
            ("hub", "forwarding pass to the hub", self.hub),
            ("backup", "snapshot", self.backup),
        ] {
            let Some(run) = run else { continue };
            registry.register(
                format!("{feature}_last_success"),
                format!("Whether the last {what} succeeded (1) or failed (0)"),
                ConstGauge::new(i64::from(run.success)),
            );
            registry.register_with_unit(
                format!("{feature}_last_age"),
                format!("Seconds since the last {what} ended"),
                Unit::Seconds,
                ConstGauge::new(run.age_seconds),
            );
        }
    }
}

/// The writer's commit times as a histogram.
#[derive(Debug)]
struct CommitDurations(CommitHistogram);

impl EncodeMetric for CommitDurations {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), fmt::Error> {
        // Per bucket, not cumulative: the encoder adds them up.
        let buckets: Vec<(f64, u64)> = COMMIT_BOUNDS_MICROS
            .iter()
            .map(|&micros| micros as f64 / 1e6)
            .chain(std::iter::once(f64::INFINITY))
            .zip(self.0.counts)
            .collect();
        encoder.encode_histogram::<NoLabelSet>(
            self.0.total.as_secs_f64(),
            self.0.count(),
            &buckets,
            None,
        )
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}

/// The people of a server that hosts several, for its administrator.
#[derive(Debug)]
pub struct People {
    users: u64,
    open: u64,
    max_open: u64,
    moving: u64,
    /// Their files' sizes with their logs, in all.
    bytes: u64,
}

impl People {
    /// Reads `hosting` now.
    pub fn of(hosting: &crate::Hosting) -> Result<People, ApiError> {
        let users = hosting.users.index().users().map_err(ApiError::Datastore)?;
        let (mut bytes, mut moving) = (0, 0);
        for user in &users {
            let file = hosting.users.file_of(&user.name);
            bytes += file_size(&file).unwrap_or(0) + file_size(&wal_path(&file)).unwrap_or(0);
            moving += u64::from(hosting.is_moving(&user.name));
        }
        Ok(People {
            moving,
            bytes,
            users: users.len() as u64,
            open: hosting.open_users().len() as u64,
            max_open: hosting.settings().max_open as u64,
        })
    }

    fn register(&self, registry: &mut Registry) {
        registry.register(
            "users",
            "People this server hosts",
            ConstGauge::new(self.users as i64),
        );
        registry.register(
            "users_open",
            "People whose database file is open now",
            ConstGauge::new(self.open as i64),
        );
        registry.register(
            "users_max_open",
            "The most people's files open at once ([users] max_open)",
            ConstGauge::new(self.max_open as i64),
        );
        registry.register(
            "users_moving",
            "People frozen here for a move to another node",
            ConstGauge::new(self.moving as i64),
        );
        registry.register_with_unit(
            "users_data",
            "The people's database files with their logs, in all",
            Unit::Bytes,
            ConstGauge::new(self.bytes as i64),
        );
    }
}

/// A gauge per bucket, read at scrape time.
#[derive(Debug)]
struct BucketGauges(Vec<(String, f64)>);

impl EncodeMetric for BucketGauges {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), fmt::Error> {
        for (bucket, value) in &self.0 {
            ConstGauge::new(*value)
                .encode(encoder.encode_family(&[("bucket", bucket.as_str())])?)?;
        }
        Ok(())
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Gauge
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Seconds from `earlier` to `later` (negative if `earlier` is later).
fn seconds_between(earlier: Timestamp, later: Timestamp) -> f64 {
    later.duration_since(earlier).as_secs_f64()
}

/// A file's size; `None` if it cannot be read (a missing WAL is empty).
fn file_size(path: &Path) -> Option<u64> {
    match std::fs::metadata(path) {
        Ok(metadata) => Some(metadata.len()),
        Err(error) if error.kind() == ErrorKind::NotFound => None,
        Err(error) => {
            log::debug!("Cannot read the size of {}: {error}", path.display());
            None
        }
    }
}

/// The WAL beside a database file, as SQLite names it.
fn wal_path(db_path: &Path) -> PathBuf {
    let mut name = db_path.as_os_str().to_owned();
    name.push("-wal");
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newer_of_success_and_failure_is_the_last_run() {
        let at = |secs: i64| Timestamp::from_nanos(secs * 1_000_000_000);
        let now = at(100);
        assert_eq!(LastRun::of(None, None, now), None);
        assert_eq!(
            LastRun::of(Some(at(90)), None, now),
            Some(LastRun {
                success: true,
                age_seconds: 10.0
            })
        );
        assert_eq!(
            LastRun::of(Some(at(90)), Some(at(95)), now),
            Some(LastRun {
                success: false,
                age_seconds: 5.0
            })
        );
        assert_eq!(
            LastRun::of(Some(at(99)), Some(at(95)), now).map(|run| run.success),
            Some(true)
        );
    }

    #[test]
    fn templates_are_interned_once() {
        let first = intern("/api/0/buckets/<bucket_id>");
        let second = intern(&String::from("/api/0/buckets/<bucket_id>"));
        assert!(std::ptr::eq(first, second));
    }
}
