//! Privacy filters: the rules of the `privacy_filters` setting, compiled,
//! and their effect on one event.
//!
//! The setting is what aw-webui's "Privacy filters" page writes: a JSON
//! array of rules `{enabled, bucket_prefix?, field, pattern, action,
//! replacement?}`. The semantics are aw-server-rust's
//! (`aw-datastore/src/privacy_filter.rs` there): a rule applies to buckets
//! whose id starts with `bucket_prefix` (all when absent); `field` is a
//! dotted path into the event's data, and `pattern` is searched, unanchored,
//! in that field's value when it is a string (a missing or non-string value
//! never matches). Rules apply in order: `redact` replaces the field's value
//! with `replacement` and goes on to the next rule, `drop` stops and the
//! event is not stored.
//!
//! Unlike the reference, which stores any JSON and then silently ignores
//! rules it cannot use, [`PrivacyRules::compile`] refuses the whole set
//! when one rule is wrong, naming the rule, so a caller can refuse to save
//! it. A set already in a database file, which another server may have
//! stored whatever it held, is read with [`PrivacyRules::compile_stored`]:
//! the rules that can be used apply and each other one is reported, since
//! leaving the whole set out would let through what the good rules keep
//! out. The writer thread holds the compiled set and applies it in every
//! write path (`writes.rs`); this module only knows rules and events.

use aw_models::{Data, Event, SettingValue};
use serde_json::Value;

/// The setting key aw-webui saves the rules under.
pub const PRIVACY_FILTERS_KEY: &str = "privacy_filters";

/// Compiled-size limit of a pattern when the caller gives none (the
/// `regex` crate's own default). The server passes the query language's
/// stricter limit when a user saves rules; this one only applies to rules
/// found in a database file, which a user may have written with another
/// server.
pub const DEFAULT_PATTERN_SIZE_LIMIT: usize = 10 * (1 << 20);

/// Most rules in a set. A person writes a handful; the bound keeps one
/// request from making the server compile millions of patterns.
pub const MAX_RULES: usize = 1000;

/// Why a rule set was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// The value is not a JSON array.
    #[error("privacy_filters must be a JSON array of rules, not {0}")]
    NotAnArray(&'static str),
    /// More than `MAX_RULES` (1000) rules.
    #[error("privacy_filters has {0} rules; at most {MAX_RULES} are accepted")]
    TooMany(usize),
    /// One rule is wrong.
    #[error("rule {number}: {problem}")]
    Rule {
        /// 1-based position of the rule, as aw-webui numbers them.
        number: usize,
        /// What is wrong with it.
        problem: String,
    },
}

/// What the rules do to an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// No rule matched: the event is stored as it came.
    Kept,
    /// At least one `redact` rule changed the event's data.
    Redacted,
    /// A `drop` rule matched: the event must not be stored.
    Dropped,
}

/// A rule set ready to apply; empty (the default) lets everything through.
#[derive(Debug, Clone, Default)]
pub struct PrivacyRules {
    rules: Vec<Rule>,
}

#[derive(Debug, Clone)]
struct Rule {
    bucket_prefix: Option<String>,
    /// The dotted path, split.
    path: Vec<String>,
    pattern: regex::Regex,
    /// `Some` for `redact`, `None` for `drop`.
    replacement: Option<String>,
}

impl PrivacyRules {
    /// Compiles the setting's value. `null` (no setting) is no rules.
    /// Disabled rules are checked like the others but not kept. A pattern
    /// whose compiled program exceeds `size_limit` bytes is refused.
    pub fn compile(value: &SettingValue, size_limit: usize) -> Result<PrivacyRules, RuleError> {
        let items = match value {
            Value::Null => return Ok(PrivacyRules::default()),
            Value::Array(items) => items,
            Value::Object(_) => return Err(RuleError::NotAnArray("an object")),
            Value::String(_) => return Err(RuleError::NotAnArray("a string")),
            Value::Number(_) => return Err(RuleError::NotAnArray("a number")),
            Value::Bool(_) => return Err(RuleError::NotAnArray("a boolean")),
        };
        if items.len() > MAX_RULES {
            return Err(RuleError::TooMany(items.len()));
        }
        let mut rules = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let problem = |problem: String| RuleError::Rule {
                number: index + 1,
                problem,
            };
            let (enabled, rule) = compile_rule(item, size_limit).map_err(problem)?;
            if enabled {
                rules.push(rule);
            }
        }
        Ok(PrivacyRules { rules })
    }

    /// A set found in a database file: every rule that can be used, in
    /// order, and why each other one cannot (a value that is not an array
    /// gives no rules; rules past the `MAX_RULES` first are left out).
    pub fn compile_stored(value: &SettingValue) -> (PrivacyRules, Vec<RuleError>) {
        let items = match value {
            Value::Array(items) => items,
            _ => {
                return match PrivacyRules::compile(value, DEFAULT_PATTERN_SIZE_LIMIT) {
                    Ok(rules) => (rules, Vec::new()),
                    Err(error) => (PrivacyRules::default(), vec![error]),
                }
            }
        };
        let mut errors = Vec::new();
        if items.len() > MAX_RULES {
            errors.push(RuleError::TooMany(items.len()));
        }
        let mut rules = Vec::new();
        for (index, item) in items.iter().enumerate().take(MAX_RULES) {
            match compile_rule(item, DEFAULT_PATTERN_SIZE_LIMIT) {
                Ok((true, rule)) => rules.push(rule),
                Ok((false, _)) => {}
                Err(problem) => errors.push(RuleError::Rule {
                    number: index + 1,
                    problem,
                }),
            }
        }
        (PrivacyRules { rules }, errors)
    }

    /// Whether no rule is in force.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Whether some rule in force applies to the bucket.
    pub fn applies_to(&self, bucket_id: &str) -> bool {
        self.rules.iter().any(|rule| rule.covers(bucket_id))
    }

    /// Applies the rules to an event's data, redacting it in place.
    pub fn apply(&self, bucket_id: &str, data: &mut Data) -> Verdict {
        let mut verdict = Verdict::Kept;
        for rule in &self.rules {
            if !rule.covers(bucket_id) || !rule.matches(data) {
                continue;
            }
            match &rule.replacement {
                None => return Verdict::Dropped,
                Some(replacement) => {
                    if rule.redact(data, replacement) {
                        verdict = Verdict::Redacted;
                    }
                }
            }
        }
        verdict
    }

    /// [`PrivacyRules::apply`] to an event.
    pub fn apply_to_event(&self, bucket_id: &str, event: &mut Event) -> Verdict {
        self.apply(bucket_id, &mut event.data)
    }
}

impl Rule {
    fn covers(&self, bucket_id: &str) -> bool {
        self.bucket_prefix
            .as_deref()
            .is_none_or(|prefix| bucket_id.starts_with(prefix))
    }

    fn matches(&self, data: &Data) -> bool {
        matches!(lookup(data, &self.path), Some(Value::String(text)) if self.pattern.is_match(text))
    }

    /// Sets the field to the replacement; whether that changed it (a
    /// replacement the pattern matches leaves it as it is the second time,
    /// which keeps applying rules to history idempotent).
    fn redact(&self, data: &mut Data, replacement: &str) -> bool {
        let Some((last, parents)) = self.path.split_last() else {
            return false;
        };
        let mut object = data;
        for part in parents {
            match object.get_mut(part) {
                Some(Value::Object(inner)) => object = inner,
                _ => return false,
            }
        }
        match object.get_mut(last) {
            Some(Value::String(text)) if text == replacement => false,
            Some(value) => {
                *value = Value::String(replacement.to_string());
                true
            }
            None => false,
        }
    }
}

/// The value at a dotted path.
fn lookup<'a>(data: &'a Data, path: &[String]) -> Option<&'a Value> {
    let (last, parents) = path.split_last()?;
    let mut object = data;
    for part in parents {
        match object.get(part) {
            Some(Value::Object(inner)) => object = inner,
            _ => return None,
        }
    }
    object.get(last)
}

/// One rule, checked as aw-webui's validator checks it (and the regex
/// compiled, which aw-webui leaves to the server): whether it is enabled,
/// and the rule.
fn compile_rule(item: &Value, size_limit: usize) -> Result<(bool, Rule), String> {
    let Value::Object(fields) = item else {
        return Err("each rule must be a JSON object".to_string());
    };
    let enabled = match fields.get("enabled") {
        Some(Value::Bool(enabled)) => *enabled,
        _ => return Err("`enabled` must be a boolean".to_string()),
    };
    let pattern = match fields.get("pattern") {
        Some(Value::String(pattern)) if !pattern.trim().is_empty() => pattern,
        Some(Value::String(_)) => return Err("`pattern` cannot be an empty string".to_string()),
        _ => return Err("`pattern` must be a string".to_string()),
    };
    let field =
        match fields.get("field") {
            None | Some(Value::Null) => return Err(
                "`field` is required: the data field the pattern is searched in (e.g. \"title\")"
                    .to_string(),
            ),
            Some(Value::String(field)) if !field.trim().is_empty() => field,
            Some(Value::String(_)) => return Err("`field` cannot be an empty string".to_string()),
            Some(_) => return Err("`field` must be a string".to_string()),
        };
    let bucket_prefix = optional_string(fields.get("bucket_prefix"), "bucket_prefix")?;
    let replacement = optional_string(fields.get("replacement"), "replacement")?;
    let replacement = match fields.get("action") {
        Some(Value::String(action)) if action == "drop" => None,
        Some(Value::String(action)) if action == "redact" => match replacement {
            Some(replacement) => Some(replacement),
            None => {
                return Err("redact rules need a non-empty `replacement` string".to_string());
            }
        },
        _ => return Err("`action` must be either \"drop\" or \"redact\"".to_string()),
    };
    let pattern = regex::RegexBuilder::new(pattern)
        .size_limit(size_limit)
        .build()
        .map_err(|error| match error {
            regex::Error::CompiledTooBig(limit) => format!(
                "`pattern` is too big: its compiled program exceeds the limit of {limit} bytes"
            ),
            other => format!("`pattern` is not a valid regular expression: {other}"),
        })?;
    Ok((
        enabled,
        Rule {
            bucket_prefix,
            path: field.split('.').map(str::to_string).collect(),
            pattern,
            replacement,
        },
    ))
}

/// An optional string field: absent or `null` is `None`; an empty string
/// is refused as aw-webui refuses it.
fn optional_string(value: Option<&Value>, name: &str) -> Result<Option<String>, String> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if !text.trim().is_empty() => Ok(Some(text.clone())),
        Some(Value::String(_)) => Err(format!("`{name}` cannot be empty when provided")),
        Some(_) => Err(format!("`{name}` must be a string when provided")),
    }
}

#[cfg(test)]
#[path = "../tests/support/privacy_rules.rs"]
mod privacy_rules;

#[cfg(test)]
mod tests {
    use super::privacy_rules::webui_defaults;
    use super::*;
    use serde_json::json;

    fn data(value: Value) -> Data {
        match value {
            Value::Object(map) => map,
            _ => panic!("data must be an object"),
        }
    }

    #[test]
    fn webui_defaults_drop_and_redact_window_titles() {
        let rules = PrivacyRules::compile(&webui_defaults(), 1 << 20).unwrap();
        let bucket = "aw-watcher-window_host";
        let mut private =
            data(json!({"app": "firefox", "title": "Mozilla Firefox Private Browsing"}));
        assert_eq!(rules.apply(bucket, &mut private), Verdict::Dropped);
        let mut bank = data(json!({"app": "firefox", "title": "My Online BANKING - Firefox"}));
        assert_eq!(rules.apply(bucket, &mut bank), Verdict::Redacted);
        assert_eq!(bank["title"], "REDACTED");
        assert_eq!(bank["app"], "firefox");
        // Redacting again changes nothing.
        assert_eq!(rules.apply(bucket, &mut bank), Verdict::Kept);
        let mut other = data(json!({"title": "Incognito"}));
        assert_eq!(
            rules.apply("aw-watcher-afk_host", &mut other),
            Verdict::Kept
        );
        assert!(rules.applies_to(bucket));
        assert!(!rules.applies_to("aw-watcher-afk_host"));
    }

    #[test]
    fn redaction_goes_on_and_a_drop_stops() {
        let rules = PrivacyRules::compile(
            &json!([
                {"enabled": true, "field": "url", "pattern": "bank", "action": "redact", "replacement": "x"},
                {"enabled": true, "field": "url", "pattern": "^x$", "action": "drop"},
                {"enabled": true, "field": "title", "pattern": ".", "action": "redact", "replacement": "never"}
            ]),
            1 << 20,
        )
        .unwrap();
        let mut event = data(json!({"url": "https://bank.example", "title": "t"}));
        assert_eq!(rules.apply("b", &mut event), Verdict::Dropped);
        let mut kept = data(json!({"url": "https://example.org", "title": "t"}));
        assert_eq!(rules.apply("b", &mut kept), Verdict::Redacted);
        assert_eq!(kept["title"], "never");
    }

    #[test]
    fn dotted_paths_reach_into_objects_and_ignore_non_strings() {
        let rules = PrivacyRules::compile(
            &json!([{"enabled": true, "field": "tab.title", "pattern": "secret",
                     "action": "redact", "replacement": "-"}]),
            1 << 20,
        )
        .unwrap();
        let mut nested = data(json!({"tab": {"title": "a secret page"}}));
        assert_eq!(rules.apply("b", &mut nested), Verdict::Redacted);
        assert_eq!(nested["tab"]["title"], "-");
        for value in [
            json!({"tab": "secret"}),
            json!({"tab": {"title": 5}}),
            json!({}),
        ] {
            let mut event = data(value.clone());
            assert_eq!(rules.apply("b", &mut event), Verdict::Kept, "{value}");
            assert_eq!(Value::Object(event), value);
        }
    }

    #[test]
    fn disabled_rules_and_null_are_no_rules() {
        let rules = PrivacyRules::compile(
            &json!([{"enabled": false, "field": "title", "pattern": ".", "action": "drop"}]),
            1 << 20,
        )
        .unwrap();
        assert!(rules.is_empty());
        assert!(PrivacyRules::compile(&Value::Null, 1 << 20)
            .unwrap()
            .is_empty());
        assert!(PrivacyRules::compile(&json!([]), 1 << 20)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn webui_accepted_shapes_compile() {
        // `null` optional fields, a drop with a replacement, unknown keys.
        let value = json!([
            {"enabled": true, "bucket_prefix": null, "field": "title", "pattern": "a",
             "action": "drop", "replacement": null},
            {"enabled": true, "field": "title", "pattern": "a", "action": "drop",
             "replacement": "unused", "note": "mine"}
        ]);
        assert_eq!(
            PrivacyRules::compile(&value, 1 << 20).unwrap().rules.len(),
            2
        );
    }

    #[test]
    fn invalid_rules_name_their_number_and_problem() {
        let good = json!({"enabled": true, "field": "title", "pattern": "a", "action": "drop"});
        let cases = [
            (
                json!({"enabled": true, "pattern": "a", "action": "drop"}),
                "`field` is required",
            ),
            (
                json!({"enabled": true, "field": "title", "pattern": "a", "action": "redact"}),
                "replacement",
            ),
            (
                json!({"enabled": true, "field": "title", "pattern": "a", "action": "redact", "replacement": ""}),
                "replacement",
            ),
            (
                json!({"enabled": true, "field": "title", "pattern": "(", "action": "drop"}),
                "not a valid regular expression",
            ),
            (
                json!({"enabled": true, "field": "title", "pattern": "a{1000}{1000}", "action": "drop"}),
                "too big",
            ),
            (
                json!({"enabled": "yes", "field": "title", "pattern": "a", "action": "drop"}),
                "`enabled`",
            ),
            (
                json!({"enabled": true, "field": "title", "pattern": "a", "action": "hide"}),
                "`action`",
            ),
            (
                json!({"enabled": true, "field": "title", "pattern": "", "action": "drop"}),
                "`pattern`",
            ),
            (
                json!({"enabled": true, "field": 3, "pattern": "a", "action": "drop"}),
                "`field`",
            ),
            (json!("rule"), "JSON object"),
        ];
        for (rule, needle) in cases {
            let error = PrivacyRules::compile(&json!([good.clone(), rule.clone()]), 1 << 20)
                .unwrap_err()
                .to_string();
            assert!(error.starts_with("rule 2: "), "{rule}: {error}");
            assert!(error.contains(needle), "{rule}: {error}");
        }
        assert!(PrivacyRules::compile(&json!({"rules": []}), 1 << 20).is_err());
        let many = Value::Array(vec![good; MAX_RULES + 1]);
        assert_eq!(
            PrivacyRules::compile(&many, 1 << 20).unwrap_err(),
            RuleError::TooMany(MAX_RULES + 1)
        );
    }

    #[test]
    fn a_stored_set_keeps_its_usable_rules_and_names_the_others() {
        let drop = |pattern: &str| json!({"enabled": true, "field": "title", "pattern": pattern, "action": "drop"});
        let stored = json!([drop("secret"), drop("("), {"action": "drop"}, drop("private")]);
        let (rules, errors) = PrivacyRules::compile_stored(&stored);
        assert_eq!(rules.rules.len(), 2);
        let names: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert!(names[0].starts_with("rule 2: "), "{names:?}");
        assert!(names[1].starts_with("rule 3: "), "{names:?}");
        assert_eq!(names.len(), 2);
        let mut notes = data(json!({"title": "private notes"}));
        assert_eq!(rules.apply("any", &mut notes), Verdict::Dropped);

        let (rules, errors) = PrivacyRules::compile_stored(&json!({"rules": []}));
        assert!(rules.is_empty());
        assert_eq!(errors, [RuleError::NotAnArray("an object")]);
        let (rules, errors) = PrivacyRules::compile_stored(&Value::Null);
        assert!(rules.is_empty() && errors.is_empty());
        let many = Value::Array(vec![drop("a"); MAX_RULES + 2]);
        let (rules, errors) = PrivacyRules::compile_stored(&many);
        assert_eq!(rules.rules.len(), MAX_RULES);
        assert_eq!(errors, [RuleError::TooMany(MAX_RULES + 2)]);
    }
}
