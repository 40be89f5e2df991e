use std::sync::Arc;

use aw_models::{Duration, Timestamp};

use crate::{Cache, CacheConfig, Period};

fn period(start: i64, end: i64) -> Period {
    Period { start, end }
}

fn cache(max_bytes: usize) -> Cache {
    Cache::new(CacheConfig {
        max_bytes,
        margin: Duration::from_secs(600),
        prewarm: false,
    })
}

fn keep(cache: &Cache, text: &str, p: Period, answer: &str) -> bool {
    let ticket = cache.ticket();
    cache.keep(&ticket, text, p, Arc::new(answer.to_string()), answer.len())
}

fn found(cache: &Cache, text: &str, p: Period) -> Option<String> {
    cache.lookup::<String>(text, &[p])[0].as_deref().cloned()
}

#[test]
fn an_answer_is_found_for_its_text_and_period_only() {
    let cache = cache(1 << 20);
    assert!(keep(&cache, "a", period(0, 10), "[1]"));
    assert_eq!(found(&cache, "a", period(0, 10)).as_deref(), Some("[1]"));
    assert_eq!(found(&cache, "a", period(0, 11)), None);
    assert_eq!(found(&cache, "b", period(0, 10)), None);
    let stats = cache.stats();
    assert_eq!((stats.hits, stats.misses, stats.entries), (1, 2, 1));
    // Another type under the same key is no answer.
    assert!(cache.lookup::<u32>("a", &[period(0, 10)])[0].is_none());
}

#[test]
fn a_write_drops_exactly_the_periods_it_meets() {
    let cache = cache(1 << 20);
    for day in 0..5 {
        assert!(keep(&cache, "a", period(day * 100, day * 100 + 99), "[]"));
    }
    // Touches day 1's last instant and day 2's first.
    cache.invalidate(&[period(199, 200)]);
    let kept: Vec<bool> = (0..5)
        .map(|day| found(&cache, "a", period(day * 100, day * 100 + 99)).is_some())
        .collect();
    assert_eq!(kept, [true, false, false, true, true]);
    assert_eq!(cache.stats().invalidated, 2);
    cache.clear();
    assert_eq!(cache.stats().entries, 0);
}

#[test]
fn an_answer_computed_across_a_write_to_its_period_is_not_kept() {
    let cache = cache(1 << 20);
    let ticket = cache.ticket();
    cache.invalidate(&[period(50, 60)]);
    let answer = Arc::new("[]".to_string());
    assert!(!cache.keep(&ticket, "a", period(0, 99), Arc::clone(&answer), 2));
    // A write elsewhere does not stop it.
    assert!(cache.keep(&ticket, "a", period(100, 199), Arc::clone(&answer), 2));
    // Nor does one before the ticket.
    let later = cache.ticket();
    assert!(cache.keep(&later, "a", period(0, 99), answer, 2));
    assert_eq!(cache.stats().refused, 1);
}

#[test]
fn old_invalidations_still_refuse_once_folded() {
    let cache = cache(1 << 20);
    let ticket = cache.ticket();
    cache.invalidate(&[period(50, 60)]);
    for i in 0..200 {
        cache.invalidate(&[period(10_000 + i, 10_000 + i)]);
    }
    assert!(!cache.keep(&ticket, "a", period(0, 99), Arc::new(String::new()), 0));
}

#[test]
fn the_least_recently_used_go_first_and_the_limit_holds() {
    let answer = "x".repeat(1000);
    let cache = cache(10_000);
    for day in 0..10 {
        assert!(keep(&cache, "a", period(day, day), &answer));
        // Day 0 stays in use.
        assert!(found(&cache, "a", period(0, 0)).is_some());
        assert!(cache.stats().bytes <= 10_000);
    }
    assert!(found(&cache, "a", period(0, 0)).is_some());
    assert!(found(&cache, "a", period(1, 1)).is_none());
    assert!(found(&cache, "a", period(9, 9)).is_some());
    assert!(cache.stats().evictions > 0);
    // Too large for the cache: not kept at all.
    assert!(!keep(&cache, "a", period(99, 99), &"y".repeat(3000)));
}

#[test]
fn the_bytes_come_back_to_zero() {
    let cache = cache(1 << 20);
    for text in ["a", "bb", "ccc"] {
        for day in 0..3 {
            keep(&cache, text, period(day, day), "[1,2,3]");
        }
    }
    assert!(cache.stats().bytes > 0);
    cache.invalidate(&[period(0, 1)]);
    assert_eq!(cache.stats().entries, 3);
    cache.clear();
    assert_eq!(cache.stats().bytes, 0);
}

#[test]
fn finished_means_ended_more_than_the_margin_ago() {
    let cache = cache(1 << 20);
    let now = Timestamp::from_nanos(1_000 * 1_000_000_000);
    let second = 1_000_000_000;
    assert!(cache.is_finished(period(0, 399 * second), now));
    assert!(!cache.is_finished(period(0, 400 * second), now));
    assert!(!cache.is_finished(period(0, 2_000 * second), now));
}
