//! Heartbeats beside a long operation: one every 20 ms on a keep-alive
//! connection of their own, each latency kept, so a benchmark can show
//! what the operation costs the watchers (p50, p99, max).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use aw_models::{Duration as AwDuration, Timestamp};
use serde_json::{json, Value};

use crate::http;

/// Heartbeats sent every 20 ms from another thread until stopped.
#[derive(Debug)]
pub struct Heartbeats {
    running: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Vec<Duration>>,
}

impl Heartbeats {
    /// Starts sending heartbeats to `path` (`/api/0/buckets/<id>/heartbeat?...`) of the server at `url`.
    pub fn start(url: &str, path: String) -> Heartbeats {
        let running = Arc::new(AtomicBool::new(true));
        let flag = Arc::clone(&running);
        let mut connection = http::Connection::new(url);
        let thread = std::thread::spawn(move || {
            let mut latencies = Vec::new();
            let mut at = Timestamp::now();
            let mut next = Instant::now();
            while flag.load(Ordering::Relaxed) {
                at = at.saturating_add(AwDuration::from_millis(20));
                let body = json!({"timestamp": at, "duration": 0, "data": {"app": "bench"}});
                let sent = Instant::now();
                let reply = connection
                    .post_json(&path, body.to_string().as_bytes())
                    .expect("heartbeat");
                latencies.push(sent.elapsed());
                assert_eq!(reply.status, 200, "heartbeat answered {}", reply.status);
                next += Duration::from_millis(20);
                if let Some(wait) = next.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
            }
            latencies
        });
        Heartbeats { running, thread }
    }

    /// Stops; the latencies, sorted.
    pub fn stop(self) -> Vec<Duration> {
        self.running.store(false, Ordering::Relaxed);
        let mut latencies = self.thread.join().expect("heartbeat thread");
        latencies.sort();
        latencies
    }
}

/// The `q`-quantile of sorted latencies in milliseconds.
pub fn quantile_ms(sorted: &[Duration], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let index = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[index].as_secs_f64() * 1e3
}

/// One operation of one round: its time, the heartbeats beside it, its
/// answer.
#[derive(Debug)]
pub struct Timed {
    /// What ran.
    pub name: &'static str,
    /// How long it took.
    pub took: Duration,
    /// The heartbeats' latencies, sorted.
    pub latencies: Vec<Duration>,
    /// What it answered.
    pub answer: Value,
}

/// Runs `work` with heartbeats beside it.
pub fn timed(
    name: &'static str,
    url: &str,
    beat_path: &str,
    work: impl FnOnce() -> Value,
) -> Timed {
    let heartbeats = Heartbeats::start(url, beat_path.to_string());
    // Let the heartbeats settle into their rhythm first.
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    let answer = work();
    let took = started.elapsed();
    std::thread::sleep(Duration::from_millis(200));
    Timed {
        name,
        took,
        latencies: heartbeats.stop(),
        answer,
    }
}
