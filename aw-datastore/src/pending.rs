//! Replies awaited by async tasks instead of blocked threads.
//!
//! A blocking call costs an async server two thread hand-offs per request
//! on top of the worker's: the task moves the call to a blocking thread,
//! which waits for the worker, then wakes the task again. A [`Pending`]
//! lets the task wait for the worker itself: the worker puts the answer in
//! a shared slot and wakes the task. The hottest calls have this form: the
//! heartbeat (`Datastore::heartbeat_async`) and event listings
//! (`Datastore::events_json_async`).
//!
//! A reply dropped unanswered (the worker stopped or died) answers
//! `Closed`. A command that reached the queue after the stopping worker
//! emptied it is never dropped; its caller sees the closed flag instead,
//! which the worker sets before emptying the queue, so a first poll after
//! the send finds it set (see `Datastore::wait` for the blocking side).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use crate::{DatastoreError, Result};

/// The answer of a command, as a future the worker completes.
#[derive(Debug)]
#[must_use = "a Pending does nothing unless awaited"]
pub struct Pending<T> {
    slot: Arc<Slot<T>>,
    closed: Arc<AtomicBool>,
}

/// The worker's end of a [`Pending`]; answers `Closed` if dropped unused.
#[derive(Debug)]
pub(crate) struct SlotReply<T> {
    slot: Option<Arc<Slot<T>>>,
}

#[derive(Debug)]
struct Slot<T> {
    state: Mutex<State<T>>,
}

#[derive(Debug)]
struct State<T> {
    answer: Option<Result<T>>,
    waker: Option<Waker>,
}

/// A reply for the worker and the future its caller awaits; `closed` is
/// the datastore's closed flag.
pub(crate) fn reply_slot<T>(closed: Arc<AtomicBool>) -> (SlotReply<T>, Pending<T>) {
    let slot = Arc::new(Slot {
        state: Mutex::new(State {
            answer: None,
            waker: None,
        }),
    });
    (
        SlotReply {
            slot: Some(Arc::clone(&slot)),
        },
        Pending { slot, closed },
    )
}

impl<T> Slot<T> {
    fn state(&self) -> MutexGuard<'_, State<T>> {
        // Nothing panics while holding the lock; a poisoned one is intact.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn answer(&self, answer: Result<T>) {
        let waker = {
            let mut state = self.state();
            state.answer = Some(answer);
            state.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl<T> SlotReply<T> {
    /// Hands the answer to the waiting task.
    pub(crate) fn send(mut self, answer: Result<T>) {
        if let Some(slot) = self.slot.take() {
            slot.answer(answer);
        }
    }
}

impl<T> Drop for SlotReply<T> {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            slot.answer(Err(DatastoreError::Closed));
        }
    }
}

impl<T> Future for Pending<T> {
    type Output = Result<T>;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Result<T>> {
        let mut state = self.slot.state();
        if let Some(answer) = state.answer.take() {
            return Poll::Ready(answer);
        }
        // The worker answers every command it took before it sets the
        // flag; what it did not take it will never answer.
        if self.closed.load(Ordering::SeqCst) {
            return Poll::Ready(Err(DatastoreError::Closed));
        }
        state.waker = Some(context.waker().clone());
        Poll::Pending
    }
}
