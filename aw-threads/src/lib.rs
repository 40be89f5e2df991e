//! Thread helpers that the storage, query and server crates all use, kept
//! out of each of them so none owns what the others need: how many cores
//! the machine has, lowering a thread's CPU priority, and the one way a
//! background job runs on a schedule (`schedule`). It depends on no crate
//! of ours.

pub mod schedule;

pub use schedule::{backoff, Next, Schedule, BACKGROUND_NICENESS};

/// The machine's cores, asked once: on Linux the standard library reads
/// the process's cgroup files each time, which showed in a 1-day query's
/// profile.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// Makes the calling thread `by` nicer (lower CPU priority): the
/// datastore's readers and the server's query threads, so that on a small
/// machine heartbeats get the CPU first. Only on Linux, where the nice
/// value belongs to a thread; elsewhere it would be the whole process's.
/// A failure only costs latency, so it is logged.
pub fn lower_priority(by: i32) {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{getpriority_process, setpriority_process};
        // `None` is the calling thread: Linux keeps nice values per thread.
        let result = getpriority_process(None)
            .and_then(|nice| setpriority_process(None, (nice + by).min(19)));
        if let Err(err) = result {
            log::debug!("Could not lower the priority of a thread: {err}");
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = by;
}

/// The CPU time the whole process has used, all threads, where the
/// system says (Linux); `None` elsewhere. For a background job's report
/// of what it cost (its work may run on threads it starts).
pub fn process_cpu_time() -> Option<std::time::Duration> {
    #[cfg(target_os = "linux")]
    {
        let time = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
        Some(std::time::Duration::new(
            u64::try_from(time.tv_sec).ok()?,
            u32::try_from(time.tv_nsec).ok()?,
        ))
    }
    #[cfg(not(target_os = "linux"))]
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn the_process_cpu_time_grows_with_work() {
        let before = process_cpu_time().unwrap();
        let mut x = 0u64;
        while process_cpu_time().unwrap() < before + std::time::Duration::from_millis(5) {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        assert!(x > 0);
    }

    #[test]
    fn there_is_at_least_one_core() {
        assert!(cores() >= 1);
        assert_eq!(cores(), cores());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_lowered_thread_is_nicer_and_others_are_not() {
        use rustix::process::getpriority_process;
        let before = getpriority_process(None).unwrap();
        let inside = std::thread::spawn(|| {
            let start = getpriority_process(None).unwrap();
            lower_priority(3);
            (start, getpriority_process(None).unwrap())
        })
        .join()
        .unwrap();
        assert_eq!(inside.1, (inside.0 + 3).min(19));
        assert_eq!(getpriority_process(None).unwrap(), before);
    }
}
