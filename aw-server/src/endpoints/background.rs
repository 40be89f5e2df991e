//! Threads for CPU-heavy work (queries), at a lower priority; two of them
//! stay idle between requests.
//!
//! A query computes for up to about a second, and on two cores a heartbeat
//! arriving meanwhile waited a scheduler time slice or more behind it. So
//! queries run on threads 10 nice levels below the rest of the server (on
//! Linux), and heartbeats get the CPU first. Rocket's blocking pool (tokio's
//! `spawn_blocking`) cannot be used for them: an unprivileged thread cannot
//! raise its priority back, and the pool's threads go on to run the other
//! blocking work of the server (event inserts, settings, imports) at the
//! lowered priority.
//!
//! A fresh thread starts with an empty allocator heap and fills it again
//! (fresh pages, first touches), which made a short query measurably
//! slower (`benches/runs/2026-11-21-small-requests-and-import.md`). So up
//! to [`IDLE_THREADS`] threads (one per core here) wait
//! for the next query; more at once (parallel clients) start threads that
//! end with their work, since keeping them all made those slower.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::LazyLock;
use std::time::Duration;

use crossbeam_channel::{unbounded, Receiver, Sender};

use crate::error::ApiError;

/// Most background threads at a time: the limit of Rocket's blocking
/// pool, which ran queries before.
const MAX_THREADS: usize = 512;

/// Most threads that stay waiting for work.
const IDLE_THREADS: usize = 2;

/// How long an idle thread waits for more work before it ends. A waiting
/// thread keeps what its last query freed (mimalloc reuses a thread's
/// freed pages and gives them back when the thread ends;
/// `benches/runs/2026-11-24-memory.md`).
/// The dashboard sends its queries in bursts, so a few seconds keep the
/// heap warm for a burst and give the memory back soon after.
const IDLE: Duration = Duration::from_secs(5);

type Job = Box<dyn FnOnce() + Send + 'static>;

/// Idle threads wait on one queue. `idle` counts the waiting threads
/// minus the jobs sent to them and not yet taken, so a sender that claims
/// one (by decrementing it) knows a thread will take its job; `staying`
/// counts the threads that may wait.
struct Pool {
    jobs: Sender<Job>,
    waiting: Receiver<Job>,
    idle: AtomicUsize,
    staying: AtomicUsize,
}

static POOL: LazyLock<Pool> = LazyLock::new(|| {
    let (jobs, waiting) = unbounded();
    Pool {
        jobs,
        waiting,
        idle: AtomicUsize::new(0),
        staying: AtomicUsize::new(0),
    }
});

/// Bounds the threads, so a flood of queries waits instead of starting a
/// thread each.
static PERMITS: rocket::tokio::sync::Semaphore =
    rocket::tokio::sync::Semaphore::const_new(MAX_THREADS);

/// Runs `work` on a background thread and awaits its result. A panic in
/// `work` becomes a 500.
pub async fn background<T, F>(work: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ApiError> + Send + 'static,
{
    let permit = PERMITS
        .acquire()
        .await
        .map_err(|error| ApiError::Internal(format!("Cannot start background work: {error}")))?;
    let (sender, receiver) = rocket::tokio::sync::oneshot::channel();
    run(Box::new(move || {
        let _permit = permit;
        // The request may have been dropped meanwhile; nobody waits.
        let _ = sender.send(work());
    }))
    .map_err(|error| ApiError::Internal(format!("Cannot start a thread: {error}")))?;
    match receiver.await {
        Ok(result) => result,
        Err(_) => Err(ApiError::Internal(
            "Internal error while handling the request: the work panicked".to_string(),
        )),
    }
}

/// Hands `job` to a waiting thread, or starts one.
fn run(job: Job) -> std::io::Result<()> {
    let pool = &*POOL;
    if take_one(&pool.idle) {
        // A thread is waiting, and stays until it has taken a job.
        return match pool.jobs.send(job) {
            Ok(()) => Ok(()),
            // Unreachable: the pool holds the receiver.
            Err(failed) => start(failed.into_inner()),
        };
    }
    start(job)
}

fn start(job: Job) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("aw-background".to_string())
        .spawn(move || {
            aw_threads::lower_priority(aw_threads::BACKGROUND_NICENESS);
            job();
            let pool = &*POOL;
            let stays = pool
                .staying
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |staying| {
                    (staying < IDLE_THREADS).then_some(staying + 1)
                })
                .is_ok();
            if stays {
                let _slot = StayingSlot(pool);
                serve(pool);
            }
        })
        .map(|_| ())
}

/// A staying thread's place, given up when the thread ends, even by a panic
/// in a job.
struct StayingSlot(&'static Pool);

impl Drop for StayingSlot {
    fn drop(&mut self) {
        self.0.staying.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Takes jobs until none came for [`IDLE`].
fn serve(pool: &Pool) {
    loop {
        pool.idle.fetch_add(1, Ordering::SeqCst);
        loop {
            match pool.waiting.recv_timeout(IDLE) {
                Ok(job) => {
                    job();
                    break;
                }
                Err(_) => {
                    // Leave only if that leaves a thread for every job
                    // already promised; otherwise one is on its way.
                    if take_one(&pool.idle) {
                        return;
                    }
                }
            }
        }
    }
}

/// Decrements `count` unless it is zero; whether it did.
fn take_one(count: &AtomicUsize) -> bool {
    count
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[rocket::async_test]
    async fn threads_are_reused_and_answer_in_parallel() {
        let first = background(|| Ok(std::thread::current().id()))
            .await
            .unwrap();
        // The thread that ran the first job waits for the next.
        for _ in 0..100 {
            if POOL.idle.load(Ordering::SeqCst) > 0 {
                break;
            }
            rocket::tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let second = background(|| Ok(std::thread::current().id()))
            .await
            .unwrap();
        assert_eq!(first, second);
        // More at once than stay idle: each gets a thread.
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(5));
        let jobs: Vec<_> = (0..5)
            .map(|n| {
                let barrier = std::sync::Arc::clone(&barrier);
                rocket::tokio::spawn(background(move || {
                    barrier.wait();
                    Ok(n)
                }))
            })
            .collect();
        let mut answers = Vec::new();
        for job in jobs {
            answers.push(job.await.unwrap().unwrap());
        }
        assert_eq!(answers, [0, 1, 2, 3, 4]);
        assert!(POOL.staying.load(Ordering::SeqCst) <= IDLE_THREADS);
        let failed = background::<(), _>(|| panic!("on purpose")).await;
        assert!(matches!(failed, Err(ApiError::Internal(_))));
    }
}
