//! Dataset generators and fixtures shared by the benchmarks.

pub mod synthetic;
