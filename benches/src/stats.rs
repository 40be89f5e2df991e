//! Latency samples and their summary.

use std::time::Duration;

use serde_json::{json, Value};

/// The outcome of one scenario on one server.
#[derive(Debug, Clone, Default)]
pub struct Measurement {
    /// One latency per request.
    pub latencies: Vec<Duration>,
    /// Wall time of the whole loop.
    pub wall: Duration,
    /// Server CPU time over the loop.
    pub server_cpu: Duration,
    /// The server's context switches over the loop (all threads).
    pub server_switches: u64,
    /// Requests that did not answer 2xx.
    pub failures: usize,
    /// Extra figures of the scenario (RSS, events, ...).
    pub extra: Vec<(String, f64)>,
}

impl Measurement {
    /// Adds another run's samples.
    pub fn absorb(&mut self, other: Measurement) {
        self.latencies.extend(other.latencies);
        self.wall += other.wall;
        self.server_cpu += other.server_cpu;
        self.server_switches += other.server_switches;
        self.failures += other.failures;
        for (name, value) in other.extra {
            match self
                .extra
                .iter_mut()
                .find(|(existing, _)| *existing == name)
            {
                // Keep the largest (peaks) of repeated figures.
                Some((_, old)) => *old = old.max(value),
                None => self.extra.push((name, value)),
            }
        }
    }

    /// The `q`-quantile latency in milliseconds (nearest rank).
    pub fn quantile_ms(&self, q: f64) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        let mut sorted = self.latencies.clone();
        sorted.sort_unstable();
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        sorted[rank - 1].as_secs_f64() * 1_000.0
    }

    /// Requests per second of wall time.
    pub fn throughput(&self) -> f64 {
        self.latencies.len() as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    /// Server CPU milliseconds per request.
    pub fn cpu_ms_per_request(&self) -> f64 {
        self.server_cpu.as_secs_f64() * 1_000.0 / self.latencies.len().max(1) as f64
    }

    /// Server context switches per request.
    pub fn switches_per_request(&self) -> f64 {
        self.server_switches as f64 / self.latencies.len().max(1) as f64
    }

    /// The figures as JSON.
    pub fn to_json(&self) -> Value {
        let extra: serde_json::Map<String, Value> = self
            .extra
            .iter()
            .map(|(name, value)| (name.clone(), json!(value)))
            .collect();
        json!({
            "requests": self.latencies.len(),
            "failures": self.failures,
            "p50_ms": self.quantile_ms(0.50),
            "p95_ms": self.quantile_ms(0.95),
            "p99_ms": self.quantile_ms(0.99),
            "max_ms": self.quantile_ms(1.0),
            "requests_per_s": self.throughput(),
            "server_cpu_ms_per_request": self.cpu_ms_per_request(),
            "server_switches_per_request": self.switches_per_request(),
            "extra": extra,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_use_nearest_rank() {
        let measurement = Measurement {
            latencies: (1..=100).map(Duration::from_millis).collect(),
            wall: Duration::from_secs(1),
            ..Measurement::default()
        };
        assert_eq!(measurement.quantile_ms(0.5), 50.0);
        assert_eq!(measurement.quantile_ms(0.99), 99.0);
        assert_eq!(measurement.quantile_ms(1.0), 100.0);
        assert_eq!(measurement.throughput(), 100.0);
    }
}
