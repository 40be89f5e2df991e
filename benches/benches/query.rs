//! The dashboard's query (`aw_benches::dashboard`) over a generated month
//! and year of the benchmark workload (`aw_benches::dataset`), from an
//! in-memory event source: the language's share of the work, without
//! SQLite or HTTP.
//!
//! `cargo bench -p aw-benches --bench query` runs criterion. With
//! `QUERY_BENCH_ONCE=month` (or `year`) the binary instead runs the query
//! once and exits, for measuring peak memory (`/usr/bin/time -v`) or
//! allocations (`heaptrack`, `valgrind --tool=dhat`) of one run.

use std::hint::black_box;
use std::time::Instant;

use aw_benches::dashboard::{self, DashboardBuckets};
use aw_benches::dataset::{self, DatasetSpec};
use aw_models::TimeInterval;
use aw_query::{query_json, MemorySource};
use criterion::Criterion;

/// A source holding `days` of the benchmark workload and the period
/// covering it.
fn fixture(days: u32) -> (MemorySource, TimeInterval, DashboardBuckets) {
    let spec = DatasetSpec::with_days(days);
    let data = dataset::generate(&spec, |_| {});
    let buckets = DashboardBuckets {
        window: spec.window_bucket(),
        afk: spec.afk_bucket(),
        chrome: spec.web_bucket(),
    };
    let mut source = MemorySource::new();
    source.insert(&buckets.window, &spec.hostname, data.window);
    source.insert(&buckets.afk, &spec.hostname, data.afk);
    source.insert(&buckets.chrome, &spec.hostname, data.web);
    (source, TimeInterval::new(spec.start, spec.end()), buckets)
}

const SIZES: &[(&str, u32)] = &[("month", 30), ("year", 365)];

/// Only reads the three buckets (and drops them): the part of the
/// dashboard's time that belongs to the event source, not the language.
fn read_only_query(buckets: &DashboardBuckets) -> String {
    format!(
        r#"
w = query_bucket("{}");
a = query_bucket("{}");
b = query_bucket("{}");
RETURN = 0;
"#,
        buckets.window, buckets.afk, buckets.chrome
    )
}

fn bench_dashboard(criterion: &mut Criterion) {
    for (name, days) in SIZES {
        let (source, period, buckets) = fixture(*days);
        let programs = [
            (
                "dashboard_query",
                dashboard::full_desktop_query(&buckets).join("\n"),
            ),
            ("read_only", read_only_query(&buckets)),
        ];
        for (group_name, program) in &programs {
            let mut group = criterion.benchmark_group(*group_name);
            group.sample_size(10);
            group.bench_function(*name, |bench| {
                bench.iter(|| {
                    query_json(black_box(program), &[period], &source).expect("the query runs")
                })
            });
            group.finish();
        }
    }
}

/// Runs the query once on the named size and prints what it did; with a
/// `-data` suffix (`year-data`) only builds the data set, as a baseline
/// for memory measurements.
fn run_once(name: &str) {
    let (size, data_only) = match name.strip_suffix("-data") {
        Some(size) => (size, true),
        None => (name, false),
    };
    let days = SIZES
        .iter()
        .find(|(known, _)| *known == size)
        .map_or(30, |(_, days)| *days);
    let (source, period, buckets) = fixture(days);
    if data_only {
        let counts: Vec<u64> = [&buckets.window, &buckets.afk, &buckets.chrome]
            .iter()
            .map(|bucket| {
                aw_query::EventSource::count_events(&source, bucket, &period).unwrap_or(0)
            })
            .collect();
        println!("{size}: window, afk, web events: {counts:?}");
        return;
    }
    let program = dashboard::full_desktop_query(&buckets).join("\n");
    let started = Instant::now();
    let text = query_json(&program, &[period], &source).expect("the query runs");
    let elapsed = started.elapsed();
    let result: Vec<serde_json::Value> = serde_json::from_str(&text).expect("the answer is JSON");
    let window = &result[0]["window"];
    println!(
        "{name}: {elapsed:?}; active {:.0} s, browser {:.0} s, {} categories, {} apps",
        window["duration"].as_f64().unwrap_or(0.0),
        result[0]["browser"]["duration"].as_f64().unwrap_or(0.0),
        window["cat_events"].as_array().map_or(0, Vec::len),
        window["app_events"].as_array().map_or(0, Vec::len),
    );
}

fn main() {
    if let Ok(name) = std::env::var("QUERY_BENCH_ONCE") {
        run_once(&name);
        return;
    }
    let mut criterion = Criterion::default().configure_from_args();
    bench_dashboard(&mut criterion);
    criterion.final_summary();
}
