//! The proptest settings of the fuzz tests (aw-query's programs,
//! aw-server's import documents): a fixed seed, so a run is repeatable,
//! and `FUZZ_CASES`/`FUZZ_SEED` to run longer or elsewhere.

use proptest::test_runner::{Config, RngSeed};

/// `cases` and `seed` unless `FUZZ_CASES` or `FUZZ_SEED` say otherwise;
/// no failure files are written (a failure prints its seed instead).
pub fn config(cases: u32, seed: u64) -> Config {
    let cases = std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(cases);
    let seed = std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(seed);
    Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        ..Config::default()
    }
}
