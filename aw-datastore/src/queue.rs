//! The writer's queue: a crossbeam channel that the writer sleeps on by
//! parking its thread, woken by the sender that finds it asleep.
//!
//! A heartbeat's round trip passes from an async worker to the writer and
//! back, so the writer sleeps and is woken once per heartbeat whenever
//! they come one at a time (a watcher's heartbeat a second, or a
//! sequential client). The wake-up is what costs: crossbeam's blocking
//! receive first spins and yields the CPU a few times (`sched_yield`, ~4
//! system calls per heartbeat measured here) in case a message is about
//! to come, then sleeps. The writer never waits for a message that way:
//! it takes what is queued without blocking, and when nothing is, it
//! says it sleeps ([`Sleeper`]), looks once more, and parks, and the
//! sender that then sees it asleep unparks it: one `futex` wait and one
//! wake per sleep, nothing spent in between.
//!
//! The two sides follow the store-then-load pattern: the writer sets its
//! flag then looks at the queue, a sender pushes a message then looks at
//! the flag, a full fence between the two steps of each, so at least one
//! of them sees the other's step: either the writer finds the message,
//! or the sender finds the writer asleep and wakes it. A park woken early
//! (an unpark meant for an earlier sleep) just looks again.
//!
//! Dropping the last [`WriterQueue`] wakes the writer too, so it finds the
//! channel disconnected and closes the database.

use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::Thread;

use crossbeam_channel::{Receiver, RecvError, SendError, Sender, TryRecvError};

/// Whether the writer sleeps, and the thread to wake.
#[derive(Debug, Default)]
struct Sleeper {
    asleep: AtomicBool,
    thread: OnceLock<Thread>,
}

impl Sleeper {
    fn wake(&self) {
        if self.asleep.swap(false, Ordering::AcqRel) {
            if let Some(thread) = self.thread.get() {
                thread.unpark();
            }
        }
    }
}

/// The sending end, shared by every handle of a datastore (one per
/// datastore: its drop is the last handle's).
#[derive(Debug)]
pub(crate) struct WriterQueue<T> {
    /// `None` only while dropping.
    sender: Option<Sender<T>>,
    sleeper: Arc<Sleeper>,
}

impl<T> WriterQueue<T> {
    /// Queues `message` (waiting while the queue is full) and wakes the
    /// writer if it sleeps.
    pub(crate) fn send(&self, message: T) -> Result<(), SendError<T>> {
        let Some(sender) = &self.sender else {
            return Err(SendError(message));
        };
        sender.send(message)?;
        fence(Ordering::SeqCst);
        if self.sleeper.asleep.load(Ordering::Relaxed) {
            self.sleeper.wake();
        }
        Ok(())
    }

    /// Messages waiting.
    pub(crate) fn len(&self) -> usize {
        self.sender.as_ref().map_or(0, Sender::len)
    }
}

impl<T> Drop for WriterQueue<T> {
    fn drop(&mut self) {
        // Disconnects the channel, then tells a sleeping writer.
        drop(self.sender.take());
        fence(Ordering::SeqCst);
        self.sleeper.wake();
    }
}

/// The writer's end.
#[derive(Debug)]
pub(crate) struct Queue<T> {
    messages: Receiver<T>,
    sleeper: Arc<Sleeper>,
}

/// A queue of at most `capacity` messages waiting: both ends.
pub(crate) fn bounded<T>(capacity: usize) -> (WriterQueue<T>, Queue<T>) {
    let (sender, messages) = crossbeam_channel::bounded(capacity);
    let sleeper = Arc::new(Sleeper::default());
    (
        WriterQueue {
            sender: Some(sender),
            sleeper: Arc::clone(&sleeper),
        },
        Queue { messages, sleeper },
    )
}

impl<T> Queue<T> {
    /// The receiving end, for calls that must not wait.
    pub(crate) fn receiver(&self) -> &Receiver<T> {
        &self.messages
    }

    /// The next message, sleeping until one comes; an error once every
    /// sender is gone and the queue is empty. Only the writer thread
    /// calls it: that is the thread senders wake.
    pub(crate) fn recv(&self) -> Result<T, RecvError> {
        let _ = self.sleeper.thread.get_or_init(std::thread::current);
        loop {
            match self.messages.try_recv() {
                Ok(message) => return Ok(message),
                Err(TryRecvError::Disconnected) => return Err(RecvError),
                Err(TryRecvError::Empty) => {}
            }
            self.sleeper.asleep.store(true, Ordering::Relaxed);
            fence(Ordering::SeqCst);
            match self.messages.try_recv() {
                Ok(message) => {
                    self.sleeper.asleep.store(false, Ordering::Relaxed);
                    return Ok(message);
                }
                Err(TryRecvError::Disconnected) => {
                    self.sleeper.asleep.store(false, Ordering::Relaxed);
                    return Err(RecvError);
                }
                Err(TryRecvError::Empty) => std::thread::park(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_sleeping_writer_is_woken_by_each_message_and_by_the_last_drop() {
        let (sender, queue) = bounded::<u32>(4);
        std::thread::scope(|scope| {
            let writer = scope.spawn(move || {
                let mut got = Vec::new();
                while let Ok(message) = queue.recv() {
                    got.push(message);
                }
                got
            });
            for message in 0..50 {
                // Now and then long enough for the writer to park.
                if message % 10 == 0 {
                    std::thread::sleep(Duration::from_millis(5));
                }
                sender.send(message).unwrap();
            }
            std::thread::sleep(Duration::from_millis(5));
            drop(sender);
            assert_eq!(writer.join().unwrap(), (0..50).collect::<Vec<_>>());
        });
    }

    #[test]
    fn many_senders_racing_a_sleeping_writer_lose_nothing() {
        let (sender, queue) = bounded::<u64>(8);
        let sender = Arc::new(sender);
        std::thread::scope(|scope| {
            let writer = scope.spawn(move || {
                let mut sum = 0;
                let mut count = 0;
                while let Ok(message) = queue.recv() {
                    sum += message;
                    count += 1;
                }
                (count, sum)
            });
            let senders: Vec<_> = (0..4)
                .map(|_| {
                    let sender = Arc::clone(&sender);
                    scope.spawn(move || {
                        for message in 1..=2_000 {
                            sender.send(message).unwrap();
                            if message % 500 == 0 {
                                std::thread::sleep(Duration::from_millis(1));
                            }
                        }
                    })
                })
                .collect();
            for handle in senders {
                handle.join().unwrap();
            }
            drop(sender);
            assert_eq!(writer.join().unwrap(), (8_000, 4 * 2_000 * 2_001 / 2));
        });
    }

    #[test]
    fn a_message_queued_before_the_writer_starts_is_received() {
        let (sender, queue) = bounded::<u32>(1);
        sender.send(7).unwrap();
        drop(sender);
        assert_eq!(queue.recv(), Ok(7));
        assert_eq!(queue.recv(), Err(RecvError));
    }
}
