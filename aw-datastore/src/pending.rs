//! Replies awaited by async tasks instead of blocked threads.
//!
//! The reply itself is tokio's one-shot channel; this module adds what a
//! bare one-shot lacks here: the closed flag, for commands the stopped
//! worker will never see.
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

use tokio::sync::oneshot::{self, error::TryRecvError};

use crate::{DatastoreError, Result};

/// The answer of a command, as a future the worker completes.
#[derive(Debug)]
#[must_use = "a Pending does nothing unless awaited"]
pub struct Pending<T> {
    answer: oneshot::Receiver<Result<T>>,
    closed: Arc<AtomicBool>,
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
    (SlotReply { sender }, Pending { answer, closed })
}

impl<T> SlotReply<T> {
    /// Hands the answer to the waiting task.
    pub(crate) fn send(self, answer: Result<T>) {
        // A caller that stopped waiting drops the answer.
        let _ = self.sender.send(answer);
    }
}

impl<T> Pending<T> {
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

    use super::*;

    /// A waker that counts its wakes.
    struct Counter(AtomicUsize);

    impl Wake for Counter {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn poll(pending: &mut Pending<u32>, counter: &Arc<Counter>) -> Poll<Result<u32>> {
        let waker = Waker::from(Arc::clone(counter));
        Pin::new(pending).poll(&mut Context::from_waker(&waker))
    }

    #[test]
    fn an_answer_wakes_the_task_once() {
        let closed = Arc::new(AtomicBool::new(false));
        let (reply, mut pending) = reply_slot::<u32>(Arc::clone(&closed));
        let counter = Arc::new(Counter(AtomicUsize::new(0)));
        assert!(poll(&mut pending, &counter).is_pending());
        assert!(poll(&mut pending, &counter).is_pending());
        reply.send(Ok(8));
        assert_eq!(counter.0.load(Ordering::SeqCst), 1);
        assert!(matches!(poll(&mut pending, &counter), Poll::Ready(Ok(8))));
    }

    #[test]
    fn an_answer_already_there_is_taken_at_the_first_poll() {
        let closed = Arc::new(AtomicBool::new(false));
        let (reply, mut pending) = reply_slot::<u32>(Arc::clone(&closed));
        let counter = Arc::new(Counter(AtomicUsize::new(0)));
        reply.send(Ok(7));
        assert!(matches!(poll(&mut pending, &counter), Poll::Ready(Ok(7))));
        assert_eq!(counter.0.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_closed_datastore_or_a_dropped_reply_answers_closed() {
        let closed = Arc::new(AtomicBool::new(false));
        let (reply, mut pending) = reply_slot::<u32>(Arc::clone(&closed));
        let counter = Arc::new(Counter(AtomicUsize::new(0)));
        closed.store(true, Ordering::SeqCst);
        assert!(matches!(
            poll(&mut pending, &counter),
            Poll::Ready(Err(DatastoreError::Closed))
        ));
        drop(reply);
        let (reply, mut pending) = reply_slot::<u32>(Arc::new(AtomicBool::new(false)));
        drop(reply);
        assert!(matches!(
            poll(&mut pending, &counter),
            Poll::Ready(Err(DatastoreError::Closed))
        ));
    }
}
