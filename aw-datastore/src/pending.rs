//! Replies awaited by async tasks instead of blocked threads.
//!
//! The reply itself is tokio's one-shot channel; this module adds what a
//! bare one-shot lacks here: the closed flag, for commands the stopped
//! worker will never see, and the watched first poll (`watch.rs`).
//!
//! A blocking call costs an async server two thread hand-offs per request
//! on top of the worker's: the task moves the call to a blocking thread,
//! which waits for the worker, then wakes the task again. A [`Pending`]
//! lets the task wait for the worker itself: the worker puts the answer in
//! a shared slot and wakes the task. The hottest calls have this form: the
//! heartbeat (`Datastore::heartbeat_async`) and every read awaited by a handler
//! (`route.rs`).
//!
//! A reply dropped unanswered (the worker stopped or died) answers
//! `Closed`. A command that reached the queue after the stopping worker
//! emptied it is never dropped; its caller sees the closed flag instead,
//! which the worker sets before emptying the queue, so a first poll after
//! the send finds it set (see `Datastore::wait` for the blocking side).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::sync::oneshot::{self, error::TryRecvError};

use crate::{watch, DatastoreError, Result};

/// The answer of a command, as a future the worker completes.
#[derive(Debug)]
#[must_use = "a Pending does nothing unless awaited"]
pub struct Pending<T> {
    answer: oneshot::Receiver<Result<T>>,
    closed: Arc<AtomicBool>,
    /// How long the first poll watches for the answer.
    watch: Duration,
}

/// The worker's end of a [`Pending`]; answers `Closed` if dropped unused
/// (the receiver then sees its sender gone).
#[derive(Debug)]
pub(crate) struct SlotReply<T> {
    sender: oneshot::Sender<Result<T>>,
}

/// A reply for the worker and the future its caller awaits; `closed` is
/// the datastore's closed flag. The reply travels through tokio's
/// one-shot channel, which wakes the task when the answer is sent.
pub(crate) fn reply_slot<T>(closed: Arc<AtomicBool>) -> (SlotReply<T>, Pending<T>) {
    let (sender, answer) = oneshot::channel();
    (
        SlotReply { sender },
        Pending {
            answer,
            closed,
            watch: Duration::ZERO,
        },
    )
}

impl<T> SlotReply<T> {
    /// Hands the answer to the waiting task.
    pub(crate) fn send(self, answer: Result<T>) {
        // A caller that stopped waiting drops the answer.
        let _ = self.sender.send(answer);
    }
}

impl<T> Pending<T> {
    /// Makes the first poll watch for the answer for up to `budget`
    /// before the task sleeps (see `watch.rs`).
    pub(crate) fn watched(mut self, budget: Duration) -> Pending<T> {
        self.watch = budget;
        self
    }

    /// The answer if it is there: `None` while it is not.
    fn try_take(&mut self) -> Option<Result<T>> {
        match self.answer.try_recv() {
            Ok(answer) => Some(answer),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Closed) => Some(Err(DatastoreError::Closed)),
        }
    }
}

impl<T> Future for Pending<T> {
    type Output = Result<T>;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Result<T>> {
        let this = self.get_mut();
        // Only a watched Pending's first poll watches; others look once below.
        let budget = std::mem::take(&mut this.watch);
        if !budget.is_zero() {
            let mut taken = None;
            let closed = Arc::clone(&this.closed);
            watch::until(budget, || {
                taken = this.try_take();
                taken.is_some() || closed.load(Ordering::Relaxed)
            });
            if let Some(answer) = taken {
                return Poll::Ready(answer);
            }
        }
        if let Poll::Ready(answer) = Pin::new(&mut this.answer).poll(context) {
            return Poll::Ready(answer.unwrap_or(Err(DatastoreError::Closed)));
        }
        // The worker answers every command it took before it sets the
        // flag; what it did not take it will never answer. An answer sent
        // just before the flag was set is taken first.
        if this.closed.load(Ordering::SeqCst) {
            return Poll::Ready(this.try_take().unwrap_or(Err(DatastoreError::Closed)));
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;
    use std::task::{Wake, Waker};
    use std::time::Instant;

    use super::*;

    /// A waker that counts its wakes.
    struct Counter(AtomicUsize);

    impl Wake for Counter {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// A reply, its pending answer watched for `budget`, the closed flag
    /// and a waker's counter.
    struct Watched {
        reply: SlotReply<u32>,
        pending: Pending<u32>,
        closed: Arc<AtomicBool>,
        counter: Arc<Counter>,
    }

    impl Watched {
        fn new(budget: Duration) -> Watched {
            let closed = Arc::new(AtomicBool::new(false));
            let (reply, pending) = reply_slot::<u32>(Arc::clone(&closed));
            Watched {
                reply,
                pending: pending.watched(budget),
                closed,
                counter: Arc::new(Counter(AtomicUsize::new(0))),
            }
        }
    }

    fn poll(pending: &mut Pending<u32>, counter: &Arc<Counter>) -> Poll<Result<u32>> {
        let waker = Waker::from(Arc::clone(counter));
        Pin::new(pending).poll(&mut Context::from_waker(&waker))
    }

    #[test]
    fn a_watched_answer_is_taken_without_sleeping() {
        let Watched {
            reply,
            mut pending,
            counter,
            ..
        } = Watched::new(Duration::from_secs(60));
        std::thread::scope(|scope| {
            scope.spawn(move || {
                std::thread::sleep(Duration::from_millis(5));
                reply.send(Ok(7));
            });
            assert!(matches!(poll(&mut pending, &counter), Poll::Ready(Ok(7))));
        });
        assert_eq!(counter.0.load(Ordering::SeqCst), 0, "never slept");
    }

    #[test]
    fn a_late_answer_wakes_the_task_after_the_watch() {
        let Watched {
            reply,
            mut pending,
            counter,
            ..
        } = Watched::new(Duration::from_millis(2));
        let started = Instant::now();
        assert!(poll(&mut pending, &counter).is_pending());
        assert!(started.elapsed() >= Duration::from_millis(2));
        // Later polls do not watch again.
        let again = Instant::now();
        assert!(poll(&mut pending, &counter).is_pending());
        assert!(again.elapsed() < Duration::from_secs(1));
        reply.send(Ok(8));
        assert_eq!(counter.0.load(Ordering::SeqCst), 1);
        assert!(matches!(poll(&mut pending, &counter), Poll::Ready(Ok(8))));
    }

    #[test]
    fn closing_ends_a_watch() {
        let Watched {
            reply,
            mut pending,
            closed,
            counter,
        } = Watched::new(Duration::from_secs(60));
        closed.store(true, Ordering::SeqCst);
        let started = Instant::now();
        assert!(matches!(
            poll(&mut pending, &counter),
            Poll::Ready(Err(DatastoreError::Closed))
        ));
        assert!(started.elapsed() < Duration::from_secs(30));
        drop(reply);
    }
}
