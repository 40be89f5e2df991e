//! Limits that keep hostile programs from exhausting the stack, memory or
//! time. Each one, when hit, is a [`crate::QueryError`] saying which.
//!
//! | limit | value | what it bounds |
//! | --- | --- | --- |
//! | [`MAX_DEPTH`] | 256 | nesting of parentheses, lists, dicts, calls and `if` blocks in the program text, and nesting of list/dict values built at run time (`a = [a];` repeated) |
//! | [`MAX_WEIGHT`] | 16 Mi units | size of a list or dict the program builds (literal, `+`, `concat`): a scalar is 1 unit, a string 1 + bytes/8, an event 8, nested values count in full even when shared, so `a = [a, a];` repeated stops after ~24 steps and the JSON result stays bounded |
//! | [`MAX_STRING_BYTES`] | 16 MiB | length of a string built with `+` |
//! | [`MAX_REGEX_SIZE`] | 1 MiB | compiled size of one regex (`regex` size limit, `fancy-regex` delegate limit) |
//! | [`MAX_BACKTRACK`] | 1,000,000 | backtracking steps of a regex that needs the backtracking engine (lookaround, backreferences), per matched string |
//!
//! Event lists returned by `query_bucket` and by transforms are not
//! limited: their size is the size of the stored data, and no transform
//! makes a list more than a constant factor longer than its inputs. Only
//! concatenation (`+`, `concat`) could multiply them, and it is bounded by
//! [`MAX_WEIGHT`] (at most 2 Mi events per concatenated list).

/// Deepest nesting of syntax and of values.
pub const MAX_DEPTH: usize = 256;

/// Largest weight of a list or dict the program builds.
pub const MAX_WEIGHT: u64 = 16 << 20;

/// Weight of one event inside a list weight.
pub const EVENT_WEIGHT: u64 = 8;

/// Longest string the program builds with `+`.
pub const MAX_STRING_BYTES: usize = 16 << 20;

/// Largest compiled regex.
pub const MAX_REGEX_SIZE: usize = 1 << 20;

/// Most backtracking steps per match of a backtracking regex.
pub const MAX_BACKTRACK: usize = 1_000_000;
