//! The dashboard's query over the whole query path without HTTP: a
//! temp-file `Datastore` holding the generated year of the benchmark
//! workload, read through its reader threads, then the language.
//!
//! Each iteration asks for a period it has not asked for just before
//! (days, weeks and months rotate through the year, the year period moves
//! its start by a day), so caches keyed by period cannot make a repeat
//! look cheap: the targets are stated for periods not seen before.
//!
//! `cargo bench -p aw-benches --bench query_datastore` runs criterion
//! (building the database takes a while, once per process). With
//! `QUERY_BENCH_ONCE=year` (or `day`, `week`, `month`, `7days`, or
//! `none` to only open or build the database) the binary runs the query
//! once and exits, for `/usr/bin/time -v`; set `QUERY_BENCH_DB` to a file
//! path to build the database once and reuse it, and
//! `QUERY_BENCH_REPEAT=n` to run n other periods first (warm profiles;
//! their median and fastest times are printed, for A/B runs of two
//! builds, which should alternate which one runs first: the second
//! finds more of the file in the OS's cache).

use std::hint::black_box;
use std::time::Instant;

use aw_benches::dashboard::{self, DashboardBuckets};
use aw_benches::dataset::{self, DatasetSpec};
use aw_datastore::Datastore;
use aw_models::{Event, TimeInterval};
use aw_query::query_json;
use criterion::Criterion;

/// The server's allocator, so the figures are the server's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Events per insert command while building the database.
const CHUNK: usize = 20_000;

/// A database holding the generated year, and what the queries need.
struct Fixture {
    /// Keeps a temporary database file alive.
    _dir: Option<tempfile::TempDir>,
    store: Datastore,
    spec: DatasetSpec,
    program: String,
}

/// The database of `QUERY_BENCH_DB` if that file exists (built there
/// otherwise), or a temporary one. A database built by an earlier process
/// keeps the generator's memory out of a peak-RSS measurement.
fn fixture() -> Fixture {
    let spec = DatasetSpec::with_days(365);
    let buckets = DashboardBuckets {
        window: spec.window_bucket(),
        afk: spec.afk_bucket(),
        chrome: spec.web_bucket(),
    };
    let program = dashboard::full_desktop_query(&buckets).join("\n");
    let (dir, path) = match std::env::var_os("QUERY_BENCH_DB") {
        Some(path) => (None, std::path::PathBuf::from(path)),
        None => {
            let dir = tempfile::tempdir().expect("a temporary directory");
            let path = dir.path().join("bench.db");
            (Some(dir), path)
        }
    };
    if !path.exists() {
        // Closing checkpoints the WAL into the main file, as a server's
        // database mostly is; a year left in the WAL reads slower.
        let store = Datastore::open(&path).expect("the database opens");
        build(&store, &spec);
        store.close().expect("the database closes");
    }
    let store = Datastore::open(&path).expect("the database opens");
    wait_for_bounds(&store, &spec);
    Fixture {
        _dir: dir,
        store,
        program,
        spec,
    }
}

/// Waits until a one-day read is cheap. An opened file's buckets get their
/// duration bounds from a scan the writer runs in the background (see
/// `aw-datastore/src/bounds.rs`); until it ends, range reads walk the
/// bucket's whole older history. A server pays that only in its first
/// moments; the bench measures the steady state.
fn wait_for_bounds(store: &Datastore, spec: &DatasetSpec) {
    let day = aw_datastore::EventQuery {
        // The last day: unbounded, its read walks the whole year.
        start: Some(spec.day_start(spec.days - 1)),
        end: Some(spec.end()),
        limit: None,
    };
    let started = Instant::now();
    while started.elapsed() < std::time::Duration::from_secs(60) {
        let read = Instant::now();
        store
            .events(&spec.window_bucket(), day)
            .wait()
            .expect("the bucket reads");
        if read.elapsed() < std::time::Duration::from_millis(5) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    eprintln!("bounds known after {:?}", started.elapsed());
}

/// Stores the generated year in `store`.
fn build(store: &Datastore, spec: &DatasetSpec) {
    let started = Instant::now();
    let data = dataset::generate(spec, |_| {});
    for mut bucket in dataset::buckets(spec, data) {
        let events: Vec<Event> = bucket.events.take().unwrap_or_default();
        let id = bucket.id.clone();
        store.create_bucket(bucket).expect("the bucket is created");
        for chunk in events.chunks(CHUNK) {
            store
                .insert_events(&id, chunk.to_vec())
                .expect("the events are stored");
        }
    }
    eprintln!("database built in {:?}", started.elapsed());
}

/// The `index`-th period of a size: the periods rotate through the year so
/// that consecutive iterations never ask for the same one.
fn periods(spec: &DatasetSpec, size: &str, index: u32) -> Vec<TimeInterval> {
    let span = |first: u32, days: u32| {
        TimeInterval::new(spec.day_start(first), spec.day_start(first + days))
    };
    match size {
        // 97 and 13 are prime to the year's length, so the rotation visits
        // days all over the year, weekdays and weekends.
        "day" => vec![span((index * 97) % 365, 1)],
        "week" => vec![span((index * 13) % (365 - 7), 7)],
        "month" => vec![span((index * 7) % (365 - 30), 30)],
        "year" => {
            let start = spec.day_start(index % 7);
            vec![TimeInterval::new(start, spec.end())]
        }
        "7days" => {
            let first = (index * 13) % (365 - 7);
            (first..first + 7).map(|day| span(day, 1)).collect()
        }
        other => panic!("unknown size '{other}'"),
    }
}

const SIZES: &[&str] = &["day", "week", "month", "7days", "year"];

fn bench(fixture: &Fixture, criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("dashboard_datastore");
    group.sample_size(10);
    group.measurement_time(std::time::Duration::from_secs(4));
    group.warm_up_time(std::time::Duration::from_secs(1));
    for size in SIZES {
        let mut index = 0u32;
        group.bench_function(*size, |bench| {
            bench.iter(|| {
                index += 1;
                let periods = periods(&fixture.spec, size, index);
                query_json(black_box(&fixture.program), &periods, &fixture.store)
                    .expect("the query runs")
            })
        });
    }
    group.finish();
}

/// Runs one query of `size`; `year-read` (any size with `-read`) only
/// reads the three buckets, the datastore's share of the time.
fn run_once(fixture: &Fixture, size: &str) {
    if size == "none" {
        return;
    }
    let (size, program) = match size.strip_suffix("-read") {
        Some(size) => {
            let read = |bucket: String| format!("query_bucket(\"{bucket}\");");
            let spec = &fixture.spec;
            let program = format!(
                "{} {} {} RETURN = 0;",
                read(spec.window_bucket()),
                read(spec.afk_bucket()),
                read(spec.web_bucket())
            );
            (size, program)
        }
        None => (size, fixture.program.clone()),
    };
    // QUERY_BENCH_REPEAT=n runs n queries (of different periods) first,
    // for profiles of warm queries.
    let repeat: u32 = std::env::var("QUERY_BENCH_REPEAT")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let mut times = Vec::new();
    for index in 0..repeat {
        let periods = periods(&fixture.spec, size, index + 2);
        let started = Instant::now();
        query_json(&program, &periods, &fixture.store).expect("the query runs");
        times.push(started.elapsed());
    }
    if !times.is_empty() {
        times.sort();
        println!(
            "{repeat} earlier queries of other periods: median {:?}, fastest {:?}",
            times[times.len() / 2],
            times[0]
        );
    }
    let periods = periods(&fixture.spec, size, 1);
    let started = Instant::now();
    // The server's call: the answer's text.
    let text = query_json(&program, &periods, &fixture.store).expect("the query runs");
    let elapsed = started.elapsed();
    let result: Vec<serde_json::Value> = serde_json::from_str(&text).expect("the answer is JSON");
    let active: f64 = result
        .iter()
        .map(|r| r["window"]["duration"].as_f64().unwrap_or(0.0))
        .sum();
    println!(
        "{size}: {elapsed:?}; {} periods, active {active:.0} s, {} categories in the first",
        result.len(),
        result[0]
            .get("window")
            .map_or(&serde_json::Value::Null, |w| &w["cat_events"])
            .as_array()
            .map_or(0, Vec::len),
    );
}

fn main() {
    let fixture = fixture();
    if let Ok(size) = std::env::var("QUERY_BENCH_ONCE") {
        run_once(&fixture, &size);
    } else {
        let mut criterion = Criterion::default().configure_from_args();
        bench(&fixture, &mut criterion);
        criterion.final_summary();
    }
    // A clean close stores the buckets' facts and bounds, so the next run
    // on the same QUERY_BENCH_DB does not count and scan them again on the
    // writer (~17 % of a profile's samples otherwise).
    fixture.store.close().expect("the database closes");
}
