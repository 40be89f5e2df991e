//! Categorization and tagging rules (`docs/API.md` §8) and their matching.
//!
//! A rule dict is checked and its regex compiled once per call of
//! `categorize` or `tag`; [`RuleSet`] then matches events, remembering the
//! answer per distinct combination of the string values the rules look at,
//! so a month of events with a few thousand distinct titles runs each regex
//! a few thousand times, not once per event and rule. Events sharing a data
//! object share the answer without even collecting those values, and the
//! rules the `regex` crate can run are searched together as one
//! `RegexSet`, one pass per string instead of one per rule.

use foldhash::fast::RandomState;
use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault};
use std::sync::{Arc, Mutex, PoisonError};

use aw_models::{EventData, SharedEvent};
use serde_json::Value as Json;

use crate::address::{address, address_map, AddressHasher, AddressMap};
use crate::error::{ErrorKind, Failure};
use crate::limits::MAX_REGEX_SIZE;
use crate::regex::{Matcher, RegexCache};
use crate::value::Value;

/// One rule dict.
#[derive(Debug)]
pub(crate) enum Rule {
    /// `{"type": "none"}`: never matches.
    Never,
    /// `{"type": "regex", "regex": ..., "ignore_case": ..., "select_keys": ...}`.
    Regex {
        matcher: Arc<Matcher>,
        /// The pattern and case flag it was compiled from.
        pattern: String,
        ignore_case: bool,
        /// `None`: every value of `data`.
        select_keys: Option<Vec<String>>,
    },
}

impl Rule {
    /// Checks and compiles a rule dict. A dict without `type` is a regex
    /// rule, as in the Python implementation.
    pub fn parse(value: &Value, regexes: &mut RegexCache) -> Result<Rule, Failure> {
        let bad = |message: String| Failure::new(ErrorKind::Rule, message);
        let Value::Dict(dict) = value else {
            return Err(bad(format!(
                "a rule must be a dict, got {}",
                value.type_name()
            )));
        };
        let entries = dict.entries();
        match entries.get("type") {
            Some(Value::String(kind)) if &**kind == "none" => return Ok(Rule::Never),
            Some(Value::String(kind)) if &**kind == "regex" => {}
            None => {}
            Some(other) => {
                return Err(bad(format!(
                    "rule type must be \"regex\" or \"none\", got {}",
                    describe(other)
                )))
            }
        }
        let pattern = match entries.get("regex") {
            Some(Value::String(pattern)) => pattern,
            Some(other) => {
                return Err(bad(format!(
                    "a regex rule's \"regex\" must be a string, got {}",
                    other.type_name()
                )))
            }
            None => return Err(bad("a regex rule needs a \"regex\" string".into())),
        };
        let ignore_case = match entries.get("ignore_case") {
            None => false,
            Some(Value::Bool(flag)) => *flag,
            Some(other) => {
                return Err(bad(format!(
                    "\"ignore_case\" must be a bool, got {}",
                    other.type_name()
                )))
            }
        };
        let select_keys = match entries.get("select_keys") {
            None => None,
            Some(Value::List(list)) if !list.items().is_empty() => Some(
                list.items()
                    .iter()
                    .map(|key| match key {
                        Value::String(key) => Ok(key.to_string()),
                        other => Err(bad(format!(
                            "\"select_keys\" must hold strings, got {}",
                            other.type_name()
                        ))),
                    })
                    .collect::<Result<_, _>>()?,
            ),
            Some(_) => {
                return Err(bad(
                    "\"select_keys\" must be a non-empty list of strings".into()
                ))
            }
        };
        Ok(Rule::Regex {
            matcher: regexes.get(pattern, ignore_case)?,
            pattern: pattern.to_string(),
            ignore_case,
            select_keys,
        })
    }

    /// Whether the rule considers the value under `key`.
    fn looks_at(&self, key: &str) -> bool {
        match self {
            Rule::Never => false,
            Rule::Regex {
                select_keys: None, ..
            } => true,
            Rule::Regex {
                select_keys: Some(keys),
                ..
            } => keys.iter().any(|selected| selected == key),
        }
    }

    /// Whether some considered string value of `data` matches.
    pub fn matches(&self, data: &EventData) -> Result<bool, Failure> {
        match self {
            Rule::Never => Ok(false),
            Rule::Regex {
                matcher,
                select_keys: None,
                ..
            } => {
                for value in data.values() {
                    if let Json::String(text) = value {
                        if matcher.is_match(text)? {
                            return Ok(true);
                        }
                    }
                }
                Ok(false)
            }
            Rule::Regex {
                matcher,
                select_keys: Some(keys),
                ..
            } => {
                for key in keys {
                    if let Some(Json::String(text)) = data.get(key) {
                        if matcher.is_match(text)? {
                            return Ok(true);
                        }
                    }
                }
                Ok(false)
            }
        }
    }
}

fn describe(value: &Value) -> String {
    match value {
        Value::String(text) => format!("{text:?}"),
        other => other.type_name().to_string(),
    }
}

/// Indices of the set flags, ascending.
fn hits(flags: &[bool]) -> impl Iterator<Item = usize> + '_ {
    flags
        .iter()
        .enumerate()
        .filter_map(|(index, hit)| hit.then_some(index))
}

/// Parsed rules; `classify` answers once per distinct looked-at values.
#[derive(Debug)]
pub(crate) struct RuleSet {
    rules: Vec<Rule>,
    /// Keys any rule looks at; `None` when some rule looks at all of them.
    keys: Option<Vec<String>>,
    hasher: RandomState,
    /// The rules the `regex` crate runs, as one set (see [`FastRules`]).
    fast: Option<FastRules>,
}

/// The plain-regex rules of a set compiled into one `regex::RegexSet`, so
/// that each string is searched once for all of them rather than once per
/// rule (the dashboard's ~15 category rules made regex searching most of
/// `categorize`'s time). Sets are kept in a small process-wide cache, as
/// single patterns are (`crate::regex`).
#[derive(Debug)]
struct FastRules {
    /// Shared with the cache and other queries, with its search caches.
    set: Arc<regex::RegexSet>,
    /// Rule index of each pattern of the set.
    owners: Vec<usize>,
    /// For each rule, whether the set runs it.
    in_set: Vec<bool>,
}

/// Sets compiled by earlier queries, by their patterns and case flags.
type SetKey = Vec<(String, bool)>;
static SETS: Mutex<Option<HashMap<SetKey, Arc<regex::RegexSet>>>> = Mutex::new(None);

/// Most sets kept (the cache is emptied when full).
const SHARED_SETS: usize = 16;

impl FastRules {
    /// The set of the rules run by the `regex` crate, if there are at
    /// least two and they fit the size limit together.
    fn new(rules: &[Rule]) -> Option<FastRules> {
        let mut key: SetKey = Vec::new();
        let mut owners = Vec::new();
        for (index, rule) in rules.iter().enumerate() {
            if let Rule::Regex {
                matcher,
                pattern,
                ignore_case,
                ..
            } = rule
            {
                if matches!(**matcher, Matcher::Fast(_)) {
                    key.push((pattern.clone(), *ignore_case));
                    owners.push(index);
                }
            }
        }
        if owners.len() < 2 {
            return None;
        }
        let mut in_set = vec![false; rules.len()];
        for &owner in &owners {
            in_set[owner] = true;
        }
        let mut sets = SETS.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(set) = sets.as_ref().and_then(|sets| sets.get(&key)) {
            return Some(FastRules {
                set: Arc::clone(set),
                owners,
                in_set,
            });
        }
        // A pattern that compiled alone is balanced, so wrapping it in a
        // group scopes its case flag to it without changing what it means.
        let patterns = key.iter().map(|(pattern, ignore_case)| {
            if *ignore_case {
                format!("(?i:{pattern})")
            } else {
                format!("(?:{pattern})")
            }
        });
        let set = Arc::new(
            regex::RegexSetBuilder::new(patterns)
                .size_limit(MAX_REGEX_SIZE)
                .build()
                .ok()?,
        );
        let cache = sets.get_or_insert_with(HashMap::new);
        if cache.len() >= SHARED_SETS {
            cache.clear();
        }
        cache.insert(key, Arc::clone(&set));
        Some(FastRules {
            set,
            owners,
            in_set,
        })
    }
}

impl RuleSet {
    /// A set of parsed rules.
    pub fn new(rules: Vec<Rule>) -> RuleSet {
        let mut keys = Some(Vec::new());
        for rule in &rules {
            match (rule, &mut keys) {
                (
                    Rule::Regex {
                        select_keys: None, ..
                    },
                    _,
                ) => keys = None,
                (
                    Rule::Regex {
                        select_keys: Some(selected),
                        ..
                    },
                    Some(all),
                ) => {
                    for key in selected {
                        if !all.contains(key) {
                            all.push(key.clone());
                        }
                    }
                }
                _ => {}
            }
        }
        if let Some(keys) = &mut keys {
            keys.sort();
        }
        RuleSet {
            fast: FastRules::new(&rules),
            rules,
            keys,
            hasher: RandomState::default(),
        }
    }

    /// Marks in `matched` (one flag per rule, cleared first) the rules
    /// matching `data`. A buffer the caller reuses: three vectors per
    /// distinct object were most of `categorize`'s allocations.
    fn mark_matching(&self, data: &EventData, matched: &mut Vec<bool>) -> Result<(), Failure> {
        matched.clear();
        matched.resize(self.rules.len(), false);
        if let Some(fast) = &self.fast {
            for (key, value) in data.iter() {
                let Json::String(text) = value else {
                    continue;
                };
                for pattern in fast.set.matches(text).iter() {
                    let owner = fast.owners[pattern];
                    if self.rules[owner].looks_at(key) {
                        matched[owner] = true;
                    }
                }
            }
        }
        for (index, rule) in self.rules.iter().enumerate() {
            let in_set = self.fast.as_ref().is_some_and(|fast| fast.in_set[index]);
            if !in_set && rule.matches(data)? {
                matched[index] = true;
            }
        }
        Ok(())
    }

    /// Indices of the rules matching `data`, ascending.
    #[cfg(test)]
    fn matching(&self, data: &EventData) -> Result<Vec<usize>, Failure> {
        let mut matched = Vec::new();
        self.mark_matching(data, &mut matched)?;
        Ok(hits(&matched).collect())
    }

    /// For each event, `answer(matching rule indices)` computed once per
    /// distinct looked-at values; returns per event an index into the
    /// returned answers.
    pub fn classify<T>(
        &mut self,
        events: &[SharedEvent],
        mut answer: impl FnMut(&mut dyn Iterator<Item = usize>) -> T,
    ) -> Result<(Vec<usize>, Vec<T>), Failure> {
        let mut answers = Vec::new();
        let mut per_event = Vec::with_capacity(events.len());
        let mut scratch: Vec<(&str, &str)> = Vec::new();
        let mut matched: Vec<bool> = Vec::new();
        // Hash of the looked-at values → (the first event that had them,
        // answer index). The values are compared through that event's
        // data, which `events` keeps alive, instead of copies of them: a
        // copy was five allocations per distinct object.
        let mut memo: HashMap<u64, Vec<(usize, usize)>, BuildHasherDefault<AddressHasher>> =
            HashMap::default();
        // Events sharing a data object share the answer; `events` is
        // borrowed throughout, so addresses stay unique.
        let mut by_data: AddressMap<usize> = address_map(events.len());
        for (position, event) in events.iter().enumerate() {
            if let Some(&index) = by_data.get(&address(&event.data)) {
                per_event.push(index);
                continue;
            }
            scratch.clear();
            self.looked_at(&event.data, &mut scratch);
            let hash = self.hasher.hash_one(&scratch);
            let found = memo.get(&hash).and_then(|candidates| {
                candidates.iter().find_map(|&(first, index)| {
                    let data = &events.get(first)?.data;
                    self.same_looked_at(data, &scratch).then_some(index)
                })
            });
            let index = match found {
                Some(index) => index,
                None => {
                    self.mark_matching(&event.data, &mut matched)?;
                    answers.push(answer(&mut hits(&matched)));
                    let index = answers.len() - 1;
                    memo.entry(hash).or_default().push((position, index));
                    index
                }
            };
            by_data.insert(address(&event.data), index);
            per_event.push(index);
        }
        Ok((per_event, answers))
    }

    /// Whether `key` is one some rule looks at.
    fn looks_at_key(&self, key: &str) -> bool {
        self.keys.as_ref().is_none_or(|keys| {
            keys.binary_search_by(|probe| probe.as_str().cmp(key))
                .is_ok()
        })
    }

    /// The (key, string value) pairs of `data` the rules look at, in key
    /// order.
    fn looked_at<'a>(&self, data: &'a EventData, out: &mut Vec<(&'a str, &'a str)>) {
        for (key, value) in data.iter() {
            if let Json::String(text) = value {
                if self.looks_at_key(key) {
                    out.push((key, text));
                }
            }
        }
    }

    /// Whether `data` has exactly the looked-at pairs `values`.
    fn same_looked_at(&self, data: &EventData, values: &[(&str, &str)]) -> bool {
        let mut wanted = values.iter();
        for (key, value) in data.iter() {
            if let Json::String(text) = value {
                if self.looks_at_key(key) && wanted.next() != Some(&(key, text.as_str())) {
                    return false;
                }
            }
        }
        wanted.next().is_none()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use serde_json::json;

    fn rule(pattern: &str, ignore_case: bool, select_keys: &[&str]) -> Value {
        let mut entries = BTreeMap::new();
        entries.insert("type".to_string(), Value::string("regex"));
        entries.insert("regex".to_string(), Value::string(pattern));
        entries.insert("ignore_case".to_string(), Value::Bool(ignore_case));
        if !select_keys.is_empty() {
            let keys = select_keys.iter().map(|key| Value::string(*key)).collect();
            entries.insert("select_keys".to_string(), Value::list(keys).unwrap());
        }
        Value::dict(entries).unwrap()
    }

    /// The set of plain regexes answers what the rules answer one by one.
    #[test]
    fn one_set_matches_like_the_rules_one_by_one() {
        let mut regexes = RegexCache::default();
        let mut none = BTreeMap::new();
        none.insert("type".to_string(), Value::string("none"));
        let specs = [
            rule("vim|emacs", false, &[]),
            rule("firefox", true, &[]),
            rule(r"(?i)^(google[-_ ]?chrome|chrome)", false, &["app"]),
            rule(r"\bmail\b", true, &["title"]),
            rule("(?-i)Doc", true, &[]),
            rule("a(?=b)", false, &[]),
            Value::dict(none).unwrap(),
            rule("^$", false, &["title"]),
        ];
        let rules: Vec<Rule> = specs
            .iter()
            .map(|spec| Rule::parse(spec, &mut regexes).unwrap())
            .collect();
        let naive: Vec<Rule> = specs
            .iter()
            .map(|spec| Rule::parse(spec, &mut regexes).unwrap())
            .collect();
        let set = RuleSet::new(rules);
        assert!(set.fast.is_some());
        let apps = [
            "vim",
            "Firefox",
            "Google-Chrome",
            "chromium",
            "mail",
            "ab",
            "",
        ];
        let titles = [
            "", "My Mail", "mail", "Docs", "docs", "emacs", "FIREFOX", "xab",
        ];
        for app in apps {
            for title in titles {
                let data = json!({"app": app, "title": title, "n": 3});
                let data = &EventData::from(data.as_object().unwrap());
                let expected: Vec<usize> = naive
                    .iter()
                    .enumerate()
                    .filter(|(_, rule)| rule.matches(data).unwrap())
                    .map(|(index, _)| index)
                    .collect();
                assert_eq!(set.matching(data).unwrap(), expected, "{app:?} {title:?}");
            }
        }
    }
}
