//! Compiling and running the regexes of `filter_keyvals_regex` and of
//! categorization rules.
//!
//! A pattern the `regex` crate accepts runs on it directly (linear time, no
//! backtracking); only patterns that need lookaround or backreferences go
//! to `fancy-regex`, with a backtracking limit. Both have a compiled-size
//! limit. Each distinct pattern is compiled once per query.

use std::collections::HashMap;
use std::rc::Rc;

use crate::error::{ErrorKind, Failure};
use crate::limits::{MAX_BACKTRACK, MAX_REGEX_SIZE};

/// A compiled regex.
#[derive(Debug)]
pub(crate) enum Matcher {
    /// Patterns the `regex` crate accepts.
    Fast(regex::Regex),
    /// Patterns that need backtracking features.
    Fancy(fancy_regex::Regex),
}

impl Matcher {
    /// Compiles `pattern`, case-insensitively if asked.
    pub fn compile(pattern: &str, ignore_case: bool) -> Result<Matcher, Failure> {
        let fast = regex::RegexBuilder::new(pattern)
            .case_insensitive(ignore_case)
            .size_limit(MAX_REGEX_SIZE)
            .build();
        match fast {
            Ok(regex) => return Ok(Matcher::Fast(regex)),
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
            .map(Matcher::Fancy)
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
            Matcher::Fancy(regex) => regex.is_match(text).map_err(|error| {
                let start: String = text.chars().take(40).collect();
                Failure::new(
                    ErrorKind::Regex,
                    format!(
                        "regex {:?} gave up on the text starting {start:?}: {error}",
                        regex.as_str()
                    ),
                )
            }),
        }
    }
}

/// Compiled regexes of one query, by pattern and case flag.
#[derive(Debug, Default)]
pub(crate) struct RegexCache {
    compiled: HashMap<(String, bool), Rc<Matcher>>,
}

impl RegexCache {
    /// The compiled form of `pattern`, compiling it on first use.
    pub fn get(&mut self, pattern: &str, ignore_case: bool) -> Result<Rc<Matcher>, Failure> {
        if let Some(matcher) = self.compiled.get(&(pattern.to_string(), ignore_case)) {
            return Ok(Rc::clone(matcher));
        }
        let matcher = Rc::new(Matcher::compile(pattern, ignore_case)?);
        self.compiled
            .insert((pattern.to_string(), ignore_case), Rc::clone(&matcher));
        Ok(matcher)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_patterns_take_the_fast_path_and_fancy_ones_fall_back() {
        assert!(matches!(
            Matcher::compile(r"\bvim\b", false),
            Ok(Matcher::Fast(_))
        ));
        assert!(matches!(
            Matcher::compile(r"a(?=b)", false),
            Ok(Matcher::Fancy(_))
        ));
        assert!(matches!(
            Matcher::compile(r"(a)\1", false),
            Ok(Matcher::Fancy(_))
        ));
        let matcher = Matcher::compile("FireFox", true).unwrap();
        assert!(matcher.is_match("my firefox").unwrap());
        assert_eq!(
            Matcher::compile("(", false).unwrap_err().kind,
            ErrorKind::Regex
        );
    }
}
