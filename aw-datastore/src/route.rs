//! How a read reaches a connection: [`Read`], what every read method of
//! `Datastore` returns.
//!
//! A read can run in three places: on the calling thread, on a pooled
//! connection free at once (`local.rs`); on a reader thread (`reader.rs`);
//! or, for a read-only store, on its one thread. Which one is best depends
//! on who waits for the answer, so the choice is made when the caller
//! says how it waits, not by the caller:
//!
//! - [`Read::wait`], for threads that block anyway (query threads, the
//!   command line): on this thread when a connection is free, else on a
//!   reader thread, waiting for its answer.
//! - `.await`, for async handlers: on this thread only when the read is
//!   known to be short (the operation is cheap, or an event listing's
//!   estimate is under [`crate::SMALL_READ`] rows), else on a reader
//!   thread that answers the awaiting task directly, with no blocking
//!   thread in between (`pending.rs`). Handing the command over waits
//!   only while the readers' queue is full (256 reads).
//!
//! Blocking is the primitive and awaiting the refinement, because every
//! read has to be able to block (threads of the query and the command
//! line have no runtime), while only the server's handlers await.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::commands::{ReadCommand, Reply};
use crate::pending::{self, Pending};
use crate::worker::WorkerMessage;
use crate::{Datastore, DatastoreError, Result};

/// Builds the command of a read around the reply it should answer.
type Command<T> = Box<dyn FnOnce(Reply<T>) -> ReadCommand + Send>;

/// When an awaiting caller may run a read on its own thread.
#[derive(Debug, Clone)]
pub(crate) enum OnCaller {
    /// Always: the operation is cheap (buckets, one event, a count).
    Always,
    /// When the listing of `query` in this bucket is estimated short.
    IfShort(String, crate::EventQuery),
    /// Never: the read may be long.
    Never,
}

/// A read the datastore will run when the caller waits for it:
/// `.wait()` on a thread, `.await` in async code.
#[must_use = "a read does nothing until it is waited for or awaited"]
pub struct Read<'a, T> {
    store: &'a Datastore,
    on_caller: OnCaller,
    /// The command, or why there is none (bad arguments).
    command: std::result::Result<Command<T>, DatastoreError>,
}

impl<T> std::fmt::Debug for Read<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Read")
            .field("on_caller", &self.on_caller)
            .finish()
    }
}

impl<'a, T: Send + 'static> Read<'a, T> {
    pub(crate) fn new(
        store: &'a Datastore,
        on_caller: OnCaller,
        command: impl FnOnce(Reply<T>) -> ReadCommand + Send + 'static,
    ) -> Read<'a, T> {
        Read {
            store,
            on_caller,
            command: Ok(Box::new(command)),
        }
    }

    /// A read that answers `error` without running.
    pub(crate) fn failed(store: &'a Datastore, error: DatastoreError) -> Read<'a, T> {
        Read {
            store,
            on_caller: OnCaller::Never,
            command: Err(error),
        }
    }

    /// Runs the read and blocks this thread until its answer.
    pub fn wait(self) -> Result<T> {
        self.store.read(self.command?)
    }
}

impl<T: Send + 'static> IntoFuture for Read<'_, T> {
    type Output = Result<T>;
    type IntoFuture = Answer<T>;

    /// Starts the read for an awaiting task.
    fn into_future(self) -> Answer<T> {
        let store = self.store;
        let mut command = match self.command {
            Ok(command) => command,
            Err(error) => return Answer::Ready(Some(Err(error))),
        };
        if store.closed.load(Ordering::SeqCst) {
            return Answer::Ready(Some(Err(DatastoreError::Closed)));
        }
        let here = match &self.on_caller {
            OnCaller::Always => Some(None),
            OnCaller::IfShort(bucket_id, query) => Some(Some((bucket_id.as_str(), *query))),
            OnCaller::Never => None,
        };
        if let Some(only_if_short) = here {
            match store.try_read_here(command, only_if_short) {
                Ok(answer) => return Answer::Ready(Some(answer)),
                Err(back) => command = back,
            }
        }
        let (reply, answer) = pending::reply_slot(Arc::clone(&store.closed));
        let command = command(Reply::Task(reply));
        // A failed send drops the reply, which answers `Closed`.
        let _ = match &store.readers {
            Some(readers) => readers.send(command).map_err(drop),
            None => store
                .writer
                .send(WorkerMessage::Read(command))
                .map_err(drop),
        };
        Answer::Waiting(answer)
    }
}

/// The answer of an awaited [`Read`].
#[derive(Debug)]
pub enum Answer<T> {
    /// Read on the awaiting thread (taken by the first poll).
    Ready(Option<Result<T>>),
    /// Sent to a reader, which wakes the task.
    Waiting(Pending<T>),
}

// Nothing is pinned through an `Answer`: its answer is moved out whole.
impl<T> Unpin for Answer<T> {}

impl<T> Future for Answer<T> {
    type Output = Result<T>;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Result<T>> {
        match self.get_mut() {
            Answer::Ready(answer) => {
                Poll::Ready(answer.take().unwrap_or(Err(DatastoreError::Closed)))
            }
            Answer::Waiting(pending) => Pin::new(pending).poll(context),
        }
    }
}
