//! Freeing large values on a thread of their own.
//!
//! A year's lists hold hundreds of thousands of events and tens of
//! thousands of data objects; freeing them touches each one and took a
//! visible part of a year query (`benches/runs/2026-11-25-free-order.md`),
//! on its critical path: the end of a run frees the
//! browser objects `split_url_events` kept, just before the answer goes
//! out. [`later`] hands such a value to one long-lived thread that frees
//! what it is given in order, so the query goes on (or answers) on the
//! core it has while the other core frees. On one core, when that thread
//! cannot be started, or when it is four values behind, the caller frees
//! the value itself as before.

use std::sync::mpsc::{self, SyncSender};
use std::sync::OnceLock;

/// A value to free.
type Garbage = Box<dyn Send>;

/// Values waiting for the thread, beyond which callers free their own.
const QUEUED: usize = 4;

/// Frees `value` on the freeing thread if it can take it, here otherwise.
pub(crate) fn later<T: Send + 'static>(value: T) {
    let Some(sender) = sender() else {
        return;
    };
    // A full queue or a dead thread hands the value back, dropped here.
    let _ = sender.try_send(Box::new(value));
}

/// The freeing thread's queue, started on first use; `None` on one core or
/// when no thread could be started.
fn sender() -> Option<&'static SyncSender<Garbage>> {
    static SENDER: OnceLock<Option<SyncSender<Garbage>>> = OnceLock::new();
    SENDER
        .get_or_init(|| {
            if aw_threads::cores() < 2 {
                return None;
            }
            let (sender, receiver) = mpsc::sync_channel::<Garbage>(QUEUED);
            std::thread::Builder::new()
                .name("aw-query-free".into())
                .spawn(move || receiver.into_iter().for_each(drop))
                .ok()
                .map(|_| sender)
        })
        .as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    struct Counted(Arc<AtomicUsize>);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn every_value_is_freed_here_or_there() {
        let freed = Arc::new(AtomicUsize::new(0));
        for _ in 0..100 {
            later(Counted(Arc::clone(&freed)));
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while freed.load(Ordering::SeqCst) < 100 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(freed.load(Ordering::SeqCst), 100);
    }
}
