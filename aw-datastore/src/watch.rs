//! Short waits spent watching instead of sleeping.
//!
//! A heartbeat's round trip passes from an async worker to the writer and
//! back. Each side that goes to sleep there must be woken by the other: a
//! futex call, and on a virtual machine an idle CPU that takes tens of
//! microseconds to come back, while the writer needs ~40 us for the whole
//! heartbeat. So while messages come back to back, the writer watches its
//! queue for a moment after each batch before it sleeps ([`Queue`]), and a
//! heartbeat's caller watches for its answer before its task sleeps
//! ([`Pending`](crate::Pending)'s first poll), if the writer was awake when
//! the heartbeat was sent: a sleeping writer must be woken first, and on
//! a busy machine it may be woken on the caller's CPU, where a watching
//! caller would only keep it waiting. Both watch for at most [`budget`].
//! Messages one by one (a watcher's heartbeat a second) are never watched
//! for, so a lightly used server does not spin at all; with a single CPU
//! the other side cannot run while one watches, so nobody does.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvError, TryRecvError};

/// The longest watch: longer than a heartbeat's work on the writer and
/// than a sequential client's turn between two requests.
const WATCH: Duration = Duration::from_micros(200);

/// How long to watch: [`WATCH`], or nothing on a single CPU.
pub(crate) fn budget() -> Duration {
    static BUDGET: OnceLock<Duration> = OnceLock::new();
    *BUDGET.get_or_init(|| {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        if cpus > 1 {
            WATCH
        } else {
            Duration::ZERO
        }
    })
}

/// Spins until `done` holds or `budget` has passed; whether it holds.
pub(crate) fn until(budget: Duration, mut done: impl FnMut() -> bool) -> bool {
    if done() {
        return true;
    }
    if budget.is_zero() {
        return false;
    }
    let started = Instant::now();
    loop {
        // A clock read costs about as much as the check; 16 checks
        // between reads keep the budget to within a microsecond.
        for _ in 0..16 {
            std::hint::spin_loop();
            if done() {
                return true;
            }
        }
        if started.elapsed() >= budget {
            return false;
        }
    }
}

/// A thread's queue, watched for a moment before the thread sleeps on it
/// while messages come back to back.
#[derive(Debug)]
pub(crate) struct Queue<T> {
    messages: Receiver<T>,
    /// Set while the thread sleeps on the queue.
    asleep: Arc<AtomicBool>,
    /// A watch would not have found the last message: it came after a
    /// watch had ended, or after a sleep longer than a watch.
    quiet: bool,
}

impl<T> Queue<T> {
    pub(crate) fn new(messages: Receiver<T>) -> Queue<T> {
        Queue {
            messages,
            asleep: Arc::new(AtomicBool::new(false)),
            quiet: true,
        }
    }

    /// Set while the thread sleeps on the queue.
    pub(crate) fn asleep(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.asleep)
    }

    /// The receiving end, for calls that must not wait.
    pub(crate) fn receiver(&self) -> &Receiver<T> {
        &self.messages
    }

    /// The next message: watched for during [`budget`] unless the queue
    /// is quiet, then slept on. Messages that come one by one (a
    /// watcher's heartbeat every second, or any gap longer than a watch)
    /// make the queue quiet, so a lightly used server never spins.
    pub(crate) fn recv(&mut self) -> Result<T, RecvError> {
        let watch = if self.quiet { Duration::ZERO } else { budget() };
        let mut found = None;
        until(watch, || match self.messages.try_recv() {
            Ok(message) => {
                found = Some(Ok(message));
                true
            }
            Err(TryRecvError::Empty) => false,
            Err(TryRecvError::Disconnected) => {
                found = Some(Err(RecvError));
                true
            }
        });
        if let Some(result) = found {
            self.quiet = false;
            return result;
        }
        self.asleep.store(true, Ordering::Relaxed);
        let slept = Instant::now();
        let result = self.messages.recv();
        self.asleep.store(false, Ordering::Relaxed);
        self.quiet = !watch.is_zero() || slept.elapsed() > budget();
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watching_ends_with_the_condition_or_the_budget() {
        let mut calls = 0;
        assert!(until(Duration::ZERO, || {
            calls += 1;
            true
        }));
        assert_eq!(calls, 1);
        // No budget: one look.
        calls = 0;
        assert!(!until(Duration::ZERO, || {
            calls += 1;
            false
        }));
        assert_eq!(calls, 1);
        let started = Instant::now();
        assert!(!until(Duration::from_millis(2), || false));
        assert!(started.elapsed() >= Duration::from_millis(2));
        let mut countdown = 100;
        assert!(until(Duration::from_secs(60), || {
            countdown -= 1;
            countdown == 0
        }));
    }

    #[test]
    fn a_queue_is_watched_only_while_busy() {
        let (send, receive) = crossbeam_channel::unbounded();
        let mut queue = Queue::new(receive);
        let asleep = queue.asleep();
        send.send(1).unwrap();
        assert_eq!(queue.recv(), Ok(1));
        assert!(!queue.quiet, "a message found at once: busy");
        // Sent long after the watch ended: the sleeping receive gets it,
        // the flag says it slept meanwhile, and the queue is quiet.
        std::thread::scope(|scope| {
            let late = scope.spawn(|| {
                while !asleep.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                std::thread::sleep(Duration::from_millis(2));
                send.send(2).unwrap();
            });
            assert_eq!(queue.recv(), Ok(2));
            late.join().unwrap();
        });
        assert!(!asleep.load(Ordering::Relaxed));
        assert!(queue.quiet);
        send.send(3).unwrap();
        assert_eq!(queue.recv(), Ok(3));
        assert!(!queue.quiet, "found at once");
        drop(send);
        assert_eq!(queue.recv(), Err(RecvError));
        assert!(!queue.quiet);
    }

    #[test]
    fn one_cpu_means_no_watching() {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(budget().is_zero(), cpus == 1);
    }
}
