//! Categorization and tagging rules (spec §8) and their matching.
//!
//! A rule dict is checked and its regex compiled once per call of
//! `categorize` or `tag`; [`RuleSet`] then matches events, remembering the
//! answer per distinct combination of the string values the rules look at,
//! so a month of events with a few thousand distinct titles runs each regex
//! a few thousand times, not once per event and rule.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::rc::Rc;

use aw_models::{Data, SharedEvent};
use serde_json::Value as Json;

use crate::error::{ErrorKind, Failure};
use crate::regex::{Matcher, RegexCache};
use crate::transforms::{address, AddressMap};
use crate::value::Value;

/// One rule dict.
#[derive(Debug)]
pub(crate) enum Rule {
    /// `{"type": "none"}`: never matches.
    Never,
    /// `{"type": "regex", "regex": ..., "ignore_case": ..., "select_keys": ...}`.
    Regex {
        matcher: Rc<Matcher>,
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
            select_keys,
        })
    }

    /// Whether some considered string value of `data` matches.
    pub fn matches(&self, data: &Data) -> Result<bool, Failure> {
        match self {
            Rule::Never => Ok(false),
            Rule::Regex {
                matcher,
                select_keys: None,
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

/// The `(key, string value)` pairs of an event the rules look at.
type Values = Vec<(String, String)>;

/// Rules with a memo of answers per distinct matched values.
#[derive(Debug)]
pub(crate) struct RuleSet {
    rules: Vec<Rule>,
    /// Keys any rule looks at; `None` when some rule looks at all of them.
    keys: Option<Vec<String>>,
    hasher: RandomState,
    /// Hash of the looked-at values → (those values, answer index).
    memo: HashMap<u64, Vec<(Values, usize)>>,
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
            rules,
            keys,
            hasher: RandomState::new(),
            memo: HashMap::new(),
        }
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
        // Events sharing a data object share the answer; `events` is
        // borrowed throughout, so addresses stay unique.
        let mut by_data: AddressMap<usize> = AddressMap::default();
        for event in events {
            if let Some(&index) = by_data.get(&address(&event.data)) {
                per_event.push(index);
                continue;
            }
            scratch.clear();
            for (key, value) in event.data.iter() {
                if let Json::String(text) = value {
                    if self
                        .keys
                        .as_ref()
                        .is_none_or(|keys| keys.binary_search(key).is_ok())
                    {
                        scratch.push((key, text));
                    }
                }
            }
            let hash = self.hasher.hash_one(&scratch);
            let found = self.memo.get(&hash).and_then(|candidates| {
                candidates.iter().find_map(|(values, index)| {
                    let same = values.len() == scratch.len()
                        && values
                            .iter()
                            .zip(&scratch)
                            .all(|((k1, v1), (k2, v2))| k1 == k2 && v1 == v2);
                    same.then_some(*index)
                })
            });
            let index = match found {
                Some(index) => index,
                None => {
                    let mut matched = Vec::new();
                    for (position, rule) in self.rules.iter().enumerate() {
                        if rule.matches(&event.data)? {
                            matched.push(position);
                        }
                    }
                    answers.push(answer(&mut matched.into_iter()));
                    let index = answers.len() - 1;
                    let values = scratch
                        .iter()
                        .map(|(key, value)| (key.to_string(), value.to_string()))
                        .collect();
                    self.memo.entry(hash).or_default().push((values, index));
                    index
                }
            };
            by_data.insert(address(&event.data), index);
            per_event.push(index);
        }
        Ok((per_event, answers))
    }
}
