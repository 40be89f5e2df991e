//! Switches for tests: force the paths long periods take (forks, reads
//! ahead, projected reads) on small inputs, and count the forks made.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

static ALWAYS: AtomicBool = AtomicBool::new(false);

/// Makes every run fork wherever a plan allows, whatever the period's
/// length and the events its groups start from, and read ahead and read
/// only the observed keys (`crate::keys`) as long periods do, so that tests can
/// compare such runs with runs in order on small inputs. Not for use
/// outside tests.
#[doc(hidden)]
pub fn fork_always(always: bool) {
    ALWAYS.store(always, Ordering::Relaxed);
}

static FORKS: AtomicUsize = AtomicUsize::new(0);

/// How many times runs of this process forked, for tests.
#[doc(hidden)]
pub fn forks_so_far() -> usize {
    FORKS.load(Ordering::Relaxed)
}

/// Counts a fork.
pub(crate) fn count_fork() {
    FORKS.fetch_add(1, Ordering::Relaxed);
}

/// Whether [`fork_always`] is on.
pub(crate) fn always() -> bool {
    ALWAYS.load(Ordering::Relaxed)
}
