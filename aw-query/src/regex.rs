//! Compiling and running the regexes of `filter_keyvals_regex` and of
//! categorization rules.
//!
//! A pattern the `regex` crate accepts runs on it directly (linear time, no
//! backtracking); only patterns that need lookaround or backreferences go
//! to `fancy-regex`, with a backtracking limit per match and a time budget
//! per query (a pattern just under the per-match limit could otherwise be
//! slow on every one of a year of events). Both engines have a
//! compiled-size limit. Each distinct pattern is compiled once per query.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::error::{ErrorKind, Failure};
use crate::limits::{MAX_BACKTRACK, MAX_BACKTRACK_TIME, MAX_REGEX_SIZE};

/// A compiled regex. Copies share one compiled program *and* its search
/// caches: cloning a `regex::Regex` would give the copy empty caches,
/// whose lazy DFA states every query would then build again.
#[derive(Debug)]
pub(crate) enum Matcher {
    /// Patterns the `regex` crate accepts.
    Fast(Arc<regex::Regex>),
    /// Patterns that need backtracking features, with the query's budget
    /// of backtracking time.
    Fancy(Arc<fancy_regex::Regex>, Arc<TimeBudget>),
}

/// Time the backtracking regexes of one query may spend, shared by the
/// threads that run its periods.
#[derive(Debug)]
pub(crate) struct TimeBudget {
    limit: Duration,
    /// Nanoseconds spent so far.
    spent: AtomicU64,
}

impl TimeBudget {
    /// A budget of `limit`.
    pub fn new(limit: Duration) -> Arc<TimeBudget> {
        Arc::new(TimeBudget {
            limit,
            spent: AtomicU64::new(0),
        })
    }
}

/// Patterns compiled by earlier queries, shared by all queries: the
/// dashboard sends the same ~15 category rules with every query, and
/// compiling them (case-insensitive Unicode classes, literal prefilters)
/// is a visible part of a one-day query. Short patterns only, and a bounded
/// number of them, so a stream of distinct hostile patterns costs at most
/// [`SHARED_PATTERNS`] compiled regexes of memory.
static SHARED: Mutex<Option<HashMap<(String, bool), Matcher>>> = Mutex::new(None);

/// Most patterns kept in the shared cache (it is emptied when full).
pub(crate) const SHARED_PATTERNS: usize = 64;

/// Longest pattern kept in the shared cache.
const SHARED_PATTERN_BYTES: usize = 1024;

impl Matcher {
    /// Compiles `pattern`, case-insensitively if asked, or takes it from
    /// the shared cache; backtracking patterns spend from `budget`.
    pub fn compile(
        pattern: &str,
        ignore_case: bool,
        budget: &Arc<TimeBudget>,
    ) -> Result<Matcher, Failure> {
        let key = (pattern.to_string(), ignore_case);
        // A poisoned lock only means another query panicked mid-insert of
        // a map that is still consistent; keep using it.
        let shared = |shared: &mut Option<HashMap<(String, bool), Matcher>>| {
            shared
                .as_ref()
                .and_then(|map| map.get(&key))
                .map(|found| match found {
                    Matcher::Fast(regex) => Matcher::Fast(Arc::clone(regex)),
                    Matcher::Fancy(regex, _) => {
                        Matcher::Fancy(Arc::clone(regex), Arc::clone(budget))
                    }
                })
        };
        if let Some(found) = shared(&mut SHARED.lock().unwrap_or_else(|e| e.into_inner())) {
            return Ok(found);
        }
        let matcher = Matcher::compile_new(pattern, ignore_case, budget)?;
        if pattern.len() <= SHARED_PATTERN_BYTES {
            let mut guard = SHARED.lock().unwrap_or_else(|e| e.into_inner());
            let map = guard.get_or_insert_with(HashMap::new);
            if map.len() >= SHARED_PATTERNS {
                map.clear();
            }
            let copy = match &matcher {
                Matcher::Fast(regex) => Matcher::Fast(Arc::clone(regex)),
                Matcher::Fancy(regex, budget) => {
                    Matcher::Fancy(Arc::clone(regex), Arc::clone(budget))
                }
            };
            map.insert(key, copy);
        }
        Ok(matcher)
    }

    fn compile_new(
        pattern: &str,
        ignore_case: bool,
        budget: &Arc<TimeBudget>,
    ) -> Result<Matcher, Failure> {
        let fast = regex::RegexBuilder::new(pattern)
            .case_insensitive(ignore_case)
            .size_limit(MAX_REGEX_SIZE)
            .build();
        match fast {
            Ok(regex) => return Ok(Matcher::Fast(Arc::new(regex))),
            Err(regex::Error::CompiledTooBig(_)) => {
                return Err(Failure::new(
                    ErrorKind::Regex,
                    format!("regex {pattern:?} is too big (limit {MAX_REGEX_SIZE} bytes compiled)"),
                ))
            }
            Err(_) => {}
        }
        fancy_regex::RegexBuilder::new(pattern)
            .case_insensitive(ignore_case)
            .backtrack_limit(MAX_BACKTRACK)
            .delegate_size_limit(MAX_REGEX_SIZE)
            .build()
            .map(|regex| Matcher::Fancy(Arc::new(regex), Arc::clone(budget)))
            .map_err(|error| {
                Failure::new(
                    ErrorKind::Regex,
                    format!("invalid regex {pattern:?}: {error}"),
                )
            })
    }

    /// Whether the regex matches anywhere in `text`.
    pub fn is_match(&self, text: &str) -> Result<bool, Failure> {
        match self {
            Matcher::Fast(regex) => Ok(regex.is_match(text)),
            Matcher::Fancy(regex, budget) => {
                let started = Instant::now();
                let result = regex.is_match(text).map_err(|error| {
                    let start: String = text.chars().take(40).collect();
                    Failure::new(
                        ErrorKind::Regex,
                        format!(
                            "regex {:?} gave up on the text starting {start:?}: {error}",
                            regex.as_str()
                        ),
                    )
                });
                let elapsed = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
                let spent = budget
                    .spent
                    .fetch_add(elapsed, Ordering::Relaxed)
                    .saturating_add(elapsed);
                if Duration::from_nanos(spent) > budget.limit {
                    return Err(Failure::new(
                        ErrorKind::Regex,
                        format!(
                            "regexes with lookaround or backreferences took more than {:?} in this query (last: {:?})",
                            budget.limit,
                            regex.as_str()
                        ),
                    ));
                }
                result
            }
        }
    }
}

/// Compiled regexes of one query, by pattern and case flag.
#[derive(Debug)]
pub(crate) struct RegexCache {
    compiled: HashMap<(String, bool), Arc<Matcher>>,
    budget: Arc<TimeBudget>,
}

impl Default for RegexCache {
    fn default() -> RegexCache {
        RegexCache::with_time_budget(MAX_BACKTRACK_TIME)
    }
}

impl RegexCache {
    /// A cache whose backtracking regexes may spend `limit` in all.
    pub fn with_time_budget(limit: Duration) -> RegexCache {
        RegexCache::sharing(TimeBudget::new(limit))
    }

    /// A cache whose backtracking regexes draw on `budget`, which other
    /// caches of the same query (one per thread) share.
    pub fn sharing(budget: Arc<TimeBudget>) -> RegexCache {
        RegexCache {
            compiled: HashMap::new(),
            budget,
        }
    }

    /// An empty cache drawing on the same time budget, for another thread
    /// of the same query.
    pub fn sibling(&self) -> RegexCache {
        RegexCache::sharing(Arc::clone(&self.budget))
    }

    /// The compiled form of `pattern`, compiling it on first use.
    pub fn get(&mut self, pattern: &str, ignore_case: bool) -> Result<Arc<Matcher>, Failure> {
        if let Some(matcher) = self.compiled.get(&(pattern.to_string(), ignore_case)) {
            return Ok(Arc::clone(matcher));
        }
        let matcher = Arc::new(Matcher::compile(pattern, ignore_case, &self.budget)?);
        self.compiled
            .insert((pattern.to_string(), ignore_case), Arc::clone(&matcher));
        Ok(matcher)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_patterns_take_the_fast_path_and_fancy_ones_fall_back() {
        let mut cache = RegexCache::default();
        assert!(matches!(
            *cache.get(r"\bvim\b", false).unwrap(),
            Matcher::Fast(_)
        ));
        assert!(matches!(
            *cache.get(r"a(?=b)", false).unwrap(),
            Matcher::Fancy(..)
        ));
        assert!(matches!(
            *cache.get(r"(a)\1", false).unwrap(),
            Matcher::Fancy(..)
        ));
        let matcher = cache.get("FireFox", true).unwrap();
        assert!(matcher.is_match("my firefox").unwrap());
        assert_eq!(cache.get("(", false).unwrap_err().kind, ErrorKind::Regex);
    }

    #[test]
    fn shared_patterns_keep_each_querys_budget() {
        let pattern = r"(x|xx)+(?=y)z?";
        let first = RegexCache::default().get(pattern, false).unwrap();
        assert!(first.is_match("xxy").unwrap());
        // Taken from the shared cache, but spending this cache's budget.
        let mut spent = RegexCache::with_time_budget(Duration::ZERO);
        let again = spent.get(pattern, false).unwrap();
        assert_eq!(again.is_match("xxy").unwrap_err().kind, ErrorKind::Regex);
        assert!(first.is_match("xxy").unwrap());
    }

    #[test]
    fn backtracking_regexes_share_a_time_budget_per_query() {
        let mut cache = RegexCache::with_time_budget(Duration::from_millis(20));
        let matcher = cache.get(r"(a|aa)+(?=b)", false).unwrap();
        let text = "a".repeat(200);
        let failure = (0..1_000_000)
            .find_map(|_| matcher.is_match(&text).err())
            .expect("the budget runs out");
        assert_eq!(failure.kind, ErrorKind::Regex);
        assert!(
            failure.message.contains("took more than"),
            "{}",
            failure.message
        );
    }
}
