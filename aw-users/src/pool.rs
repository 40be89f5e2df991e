//! The users whose files are open: each opens on first use and closes
//! after a quiet while, and at most `max_open` are open at once (the
//! least recently used one that no request holds makes room).
//!
//! Generic over what an open user is (the server's store, tokens and
//! cache), so this knows nothing of them but that they are shared as
//! `Arc`s: a user is "held" while anything but the pool has a clone.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Why a user could not be had.
#[derive(Debug, thiserror::Error)]
pub enum PoolError<E> {
    /// `max_open` users are open and every one is in use.
    #[error("{0} people's files are open and all are in use; try again in a moment")]
    Full(usize),
    /// Opening failed.
    #[error(transparent)]
    Open(E),
}

#[derive(Debug)]
struct Entry<T> {
    value: Arc<T>,
    used: Instant,
}

/// The open users, by name.
#[derive(Debug)]
pub struct Pool<T> {
    open: Mutex<HashMap<String, Entry<T>>>,
    max_open: usize,
    quiet: Duration,
}

impl<T> Pool<T> {
    /// At most `max_open` (at least 1) open; one unused for `quiet`
    /// closes at the next [`Pool::quiet_ones`].
    pub fn new(max_open: usize, quiet: Duration) -> Pool<T> {
        Pool {
            open: Mutex::default(),
            max_open: max_open.max(1),
            quiet,
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry<T>>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// User `name`, opened by `open` if they are not open. When the pool
    /// is full, the least recently used user nobody holds is taken out
    /// and handed to `close` first. Opening happens under the pool's
    /// lock, so a user is never opened twice.
    pub fn get<E>(
        &self,
        name: &str,
        open: impl FnOnce() -> Result<T, E>,
        close: impl FnOnce(Arc<T>),
    ) -> Result<Arc<T>, PoolError<E>> {
        let mut entries = self.lock();
        if let Some(entry) = entries.get_mut(name) {
            entry.used = Instant::now();
            return Ok(Arc::clone(&entry.value));
        }
        if entries.len() >= self.max_open {
            let idle = entries
                .iter()
                .filter(|(_, entry)| Arc::strong_count(&entry.value) == 1)
                .min_by_key(|(_, entry)| entry.used)
                .map(|(name, _)| name.clone());
            let Some(idle) = idle else {
                return Err(PoolError::Full(self.max_open));
            };
            if let Some(entry) = entries.remove(&idle) {
                close(entry.value);
            }
        }
        let value = Arc::new(open().map_err(PoolError::Open)?);
        entries.insert(
            name.to_string(),
            Entry {
                value: Arc::clone(&value),
                used: Instant::now(),
            },
        );
        Ok(value)
    }

    /// User `name` if open (not counted as a use).
    pub fn peek(&self, name: &str) -> Option<Arc<T>> {
        self.lock().get(name).map(|entry| Arc::clone(&entry.value))
    }

    /// Takes out the users unused for the quiet while whom nobody holds,
    /// for the caller to close.
    pub fn quiet_ones(&self) -> Vec<(String, Arc<T>)> {
        let mut entries = self.lock();
        let quiet: Vec<String> = entries
            .iter()
            .filter(|(_, entry)| {
                Arc::strong_count(&entry.value) == 1 && entry.used.elapsed() >= self.quiet
            })
            .map(|(name, _)| name.clone())
            .collect();
        quiet
            .into_iter()
            .filter_map(|name| entries.remove(&name).map(|entry| (name, entry.value)))
            .collect()
    }

    /// Takes out user `name` (removed, say), held or not.
    pub fn take(&self, name: &str) -> Option<Arc<T>> {
        self.lock().remove(name).map(|entry| entry.value)
    }

    /// Takes out every user (at shutdown).
    pub fn take_all(&self) -> Vec<(String, Arc<T>)> {
        self.lock()
            .drain()
            .map(|(name, entry)| (name, entry.value))
            .collect()
    }

    /// The names of the open users, sorted.
    pub fn open_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.lock().keys().cloned().collect();
        names.sort();
        names
    }

    /// How many are open.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    fn opened(name: &str) -> impl FnOnce() -> Result<String, String> + '_ {
        move || Ok(name.to_string())
    }

    #[test]
    fn a_user_opens_once_and_is_shared() {
        let pool: Pool<String> = Pool::new(4, Duration::from_secs(60));
        let one = pool.get("a", opened("a"), drop).unwrap();
        let two = pool
            .get::<String>("a", || panic!("opened twice"), drop)
            .unwrap();
        assert!(Arc::ptr_eq(&one, &two));
        assert_eq!(pool.open_names(), ["a"]);
    }

    #[test]
    fn a_full_pool_closes_the_least_recently_used_that_nobody_holds() {
        let pool: Pool<String> = Pool::new(2, Duration::from_secs(60));
        let closed = RefCell::new(Vec::new());
        let close = |value: Arc<String>| closed.borrow_mut().push((*value).clone());
        let held = pool.get("a", opened("a"), close).unwrap();
        drop(pool.get("b", opened("b"), close).unwrap());
        drop(pool.get("c", opened("c"), close).unwrap());
        // "a" is older but held: "b" made room.
        assert_eq!(*closed.borrow(), ["b"]);
        assert_eq!(pool.open_names(), ["a", "c"]);
        let _c = pool.get("c", opened("c"), close).unwrap();
        let full = pool.get("d", opened("d"), close);
        assert!(matches!(full, Err(PoolError::Full(2))), "{full:?}");
        drop(held);
        pool.get("d", opened("d"), close).unwrap();
        assert_eq!(*closed.borrow(), ["b", "a"]);
    }

    #[test]
    fn quiet_users_close_unless_held_and_a_failed_open_leaves_nothing() {
        let pool: Pool<String> = Pool::new(8, Duration::ZERO);
        let held = pool.get("a", opened("a"), drop).unwrap();
        drop(pool.get("b", opened("b"), drop).unwrap());
        let quiet: Vec<String> = pool.quiet_ones().into_iter().map(|(n, _)| n).collect();
        assert_eq!(quiet, ["b"]);
        assert_eq!(pool.open_names(), ["a"]);
        drop(held);
        assert_eq!(pool.quiet_ones().len(), 1);
        assert!(pool.is_empty());
        let failed = pool.get("x", || Err::<String, _>("no".to_string()), drop);
        assert!(matches!(failed, Err(PoolError::Open(ref why)) if why == "no"));
        assert!(pool.is_empty());
    }
}
