//! Limits that keep hostile programs from exhausting the stack, memory or
//! time. Each one, when hit, is a [`crate::QueryError`] saying which.
//!
//! | limit | value | what it bounds |
//! | --- | --- | --- |
//! | [`MAX_DEPTH`] | 256 | nesting of parentheses, lists, dicts, calls and `if` blocks in the program text, and nesting of list/dict values built at run time (`a = [a];` repeated) |
//! | build budget | [`BUILD_BUDGET_BASE`] + [`BUILD_BUDGET_PER_READ`] × events read | what one run (one period) may build: every list or dict item created by a literal or `+`, every event of a `+` or `concat` result, every event copied out of a list a variable still holds, and every 8 bytes of a string built with `+` count 1 unit. Reading buckets raises the budget, so concatenating or copying what was read a few times always fits, while doubling a list stops after a few hundred thousand items and keeping many copies of a bucket stops after a few |
//! | [`MAX_WEIGHT`] | 4 Mi units | total size of one list or dict, nested values counted in full even when shared (a scalar or an event is 1 unit, a string 1 + bytes/8), so `a = [a, a];` repeated (which costs almost no memory) stops after ~22 steps and the JSON result stays bounded |
//! | [`MAX_STRING_BYTES`] | 1 MiB | length of a string built with `+` |
//! | [`MAX_REGEX_SIZE`] | 1 MiB | compiled size of one regex (`regex` size limit, `fancy-regex` delegate limit) |
//! | [`MAX_BACKTRACK`] | 1,000,000 | backtracking steps of a regex that needs the backtracking engine (lookaround, backreferences), per matched string |
//! | [`MAX_BACKTRACK_TIME`] | 2 s | total time such regexes may spend matching in one query (all periods) |
//!
//! SharedEvent lists returned by `query_bucket` and by transforms are otherwise
//! not limited: their size is the size of the stored data, and no
//! transform makes a list more than a constant factor longer than its
//! inputs. Memory therefore stays within a constant factor of what the
//! program reads; a program that reads the same bucket many times still
//! holds that many copies (reads are not limited here). The limits are
//! sized so that reaching any of them takes well under a second even in a
//! debug build.

use crate::error::{ErrorKind, Failure};

/// Deepest nesting of syntax and of values.
pub const MAX_DEPTH: usize = 256;

/// Largest weight of one list or dict.
pub const MAX_WEIGHT: u64 = 4 << 20;

/// Build budget of a run that reads nothing.
pub const BUILD_BUDGET_BASE: u64 = 128 << 10;

/// Build budget added per event read from the source.
pub const BUILD_BUDGET_PER_READ: u64 = 4;

/// Longest string the program builds with `+`.
pub const MAX_STRING_BYTES: usize = 1 << 20;

/// Largest compiled regex.
pub const MAX_REGEX_SIZE: usize = 1 << 20;

/// Most backtracking steps per match of a backtracking regex.
pub const MAX_BACKTRACK: usize = 1_000_000;

/// Most time the backtracking regexes of one query may spend matching.
pub const MAX_BACKTRACK_TIME: std::time::Duration = std::time::Duration::from_secs(2);

/// What one run has built and read so far.
#[derive(Debug, Default, Clone)]
pub(crate) struct Budget {
    built: u64,
    read: u64,
}

impl Budget {
    /// Records events read from the source.
    pub fn read(&mut self, events: usize) {
        self.read = self.read.saturating_add(events as u64);
    }

    /// Adds what `other`, a copy of `base` that went on by itself, built
    /// and read since, failing if the two together are past the budget.
    pub fn join(&mut self, base: &Budget, other: &Budget) -> Result<(), Failure> {
        self.read = self
            .read
            .saturating_add(other.read.saturating_sub(base.read));
        self.charge(usize::try_from(other.built.saturating_sub(base.built)).unwrap_or(usize::MAX))
    }

    /// Charges `units` of building, failing past the budget. Called before
    /// the work, so the failing step costs nothing.
    pub fn charge(&mut self, units: usize) -> Result<(), Failure> {
        let limit =
            BUILD_BUDGET_BASE.saturating_add(self.read.saturating_mul(BUILD_BUDGET_PER_READ));
        self.built = self.built.saturating_add(units as u64);
        if self.built > limit {
            return Err(Failure::new(
                ErrorKind::TooLarge,
                format!(
                    "the query builds too much: more than {limit} units (list items, copied or concatenated events, 8-byte string words) in one run; see the query limits"
                ),
            ));
        }
        Ok(())
    }
}
