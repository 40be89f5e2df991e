//! Benchmark support: the generated workload, the dashboard's queries, and
//! the pieces of the HTTP load driver (`src/bin/load.rs`).

pub mod dashboard;
pub mod dataset;
pub mod heartbeats;
pub mod http;
pub mod server;
pub mod stats;
