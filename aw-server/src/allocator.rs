//! The server's global allocator, and the one option it sets at start.
//!
//! mimalloc returns memory freed by a large query to the system, where
//! glibc's malloc kept it in one pool per thread (about 100 MB of a year
//! query's peak in `benches/runs/2026-11-21-query-path.md`). How long it
//! waits before giving freed memory back is its purge delay: dashboard
//! queries come back to back, and at mimalloc's default each year query's
//! peak held much of the previous one's memory (165 MB against 124 MB at
//! 100 ms, for ~4 % more time: `benches/runs/2026-11-25-free-order.md`).
//!
//! mimalloc reads `MIMALLOC_PURGE_DELAY` from the environment before
//! `main`; when it is unset, [`set_purge_delay`] sets the option through
//! mimalloc's C API instead. That call is the only `unsafe` code of the
//! project (`scripts/check-architecture` checks that it stays here).
#![allow(
    unsafe_code,
    reason = "mimalloc's options are set through its C API; see the SAFETY comments"
)]

use std::ffi::c_long;

use libmimalloc_sys::{mi_option_get, mi_option_set, mi_option_t};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The delay, in milliseconds, the server runs with unless the
/// environment sets `MIMALLOC_PURGE_DELAY`.
const PURGE_DELAY_MS: c_long = 100;

/// `mi_option_purge_delay` of `mimalloc.h`: the 16th option of
/// `mi_option_e` in both the v2 and v3 sources `libmimalloc-sys` builds
/// (it exports no constant for it). The binary test
/// `the_server_runs_with_a_short_purge_delay_unless_told_otherwise`
/// checks that this reads what `MIMALLOC_PURGE_DELAY` sets.
const MI_OPTION_PURGE_DELAY: mi_option_t = 15;

/// Sets the purge delay to [`PURGE_DELAY_MS`] unless the environment
/// chose one; returns the delay in force. Call it first thing in `main`.
pub fn set_purge_delay() -> c_long {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: mimalloc's option calls are not thread safe; this runs
        // at the start of `main`, before the program starts any thread.
        // The option index is in range (see `MI_OPTION_PURGE_DELAY`).
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) };
    }
    // SAFETY: as above; reading an option in range.
    unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) }
}
