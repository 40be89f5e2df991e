//! The user's categories, taken from the settings aw-webui writes, so that
//! every summary classifies time as the dashboards do:
//!
//! - `category_sets` (named lists of categories) with `active_set_ids`: the
//!   active sets, in the order of `category_sets`, merged; a name seen in
//!   an earlier set wins. With no active id that exists, the first set.
//! - else the older flat `classes` list;
//! - else aw-webui's default categories (`DEFAULTS`).
//!
//! Parents a category names but nobody defined are added without a rule;
//! categories without a rule type are not given to `categorize`.

use std::collections::{BTreeMap, HashSet};

use aw_models::{SettingValue, TimeInterval, Timestamp};
use aw_query::MemorySource;
use serde_json::{json, Value};

use super::program::literal;
use aw_models::summary::ArgumentError;

/// One of aw-webui's default categories: name path, regex (`None`: no
/// rule), whether it ignores case, colour.
type DefaultCategory = (
    &'static [&'static str],
    Option<&'static str>,
    bool,
    Option<&'static str>,
);

/// aw-webui's default categories.
const DEFAULTS: &[DefaultCategory] = &[
    (&["Work"], Some("Google Docs|libreoffice|ReText"), false, Some("#0F0")),
    (
        &["Work", "Programming"],
        Some("GitHub|Stack Overflow|BitBucket|Gitlab|vim|Spyder|kate|Ghidra|Scite"),
        false,
        None,
    ),
    (&["Work", "Programming", "ActivityWatch"], Some("ActivityWatch|aw-"), true, None),
    (&["Work", "Image"], Some("GIMP|Inkscape"), false, None),
    (&["Work", "Video"], Some("Kdenlive"), false, None),
    (&["Work", "Audio"], Some("Audacity"), false, None),
    (&["Work", "3D"], Some("Blender"), false, None),
    (&["Media"], None, false, Some("#F33")),
    (&["Media", "Games"], Some("Minecraft|RimWorld"), false, Some("#F80")),
    (&["Media", "Video"], Some("YouTube|Plex|VLC"), false, Some("#F33")),
    (
        &["Media", "Social Media"],
        Some("reddit|Facebook|Twitter|Instagram|devRant"),
        true,
        Some("#FCC400"),
    ),
    (&["Media", "Music"], Some("Spotify|Deezer"), true, Some("#A8FC00")),
    (&["Comms"], None, false, Some("#9FF")),
    (
        &["Comms", "IM"],
        Some("Messenger|Telegram|Signal|WhatsApp|Rambox|Slack|Riot|Element|Discord|Nheko|NeoChat|Mattermost"),
        false,
        None,
    ),
    (&["Comms", "Email"], Some("Gmail|Thunderbird|mutt|alpine"), false, None),
];

/// The `[[name, rule], ...]` list `categorize` takes, for `settings`.
pub fn rules(settings: &BTreeMap<String, SettingValue>) -> Value {
    let categories = effective(settings);
    Value::Array(
        categories
            .into_iter()
            .filter(|category| {
                category
                    .get("rule")
                    .and_then(|rule| rule.get("type"))
                    .is_some_and(|kind| !kind.is_null())
            })
            .map(|category| json!([category["name"], category["rule"]]))
            .collect(),
    )
}

/// Checks a category list given instead of the settings' (a preview of
/// categories being edited): a list of categories with names, whose regex
/// rules compile in the query language's dialect and within its limits,
/// as `categorize` will compile them. The error names the category.
pub fn check(categories: &Value) -> Result<(), ArgumentError> {
    let Some(list) = categories.as_array() else {
        return Err(ArgumentError::new(
            "categories",
            "must be a list of categories, as the classes setting holds",
        ));
    };
    for (index, category) in list.iter().enumerate() {
        if !is_category(category) {
            return Err(ArgumentError::new(
                "categories",
                format!(
                    "category {}: needs a name (a list of strings such as [\"Work\", \"Programming\"]) \
                     and a rule ({{\"type\": \"regex\", \"regex\": ...}} or {{\"type\": null}})",
                    index + 1
                ),
            ));
        }
        let rule = &category["rule"];
        if rule.get("type").and_then(Value::as_str) != Some("regex") {
            continue;
        }
        let name = category["name"]
            .as_array()
            .map(|names| names.iter().map(text).collect::<Vec<_>>().join(" > "))
            .unwrap_or_default();
        let problem = |message: String| {
            ArgumentError::new("categories", format!("category '{name}': {message}"))
        };
        if !rule.get("regex").is_some_and(Value::is_string) {
            return Err(problem("a regex rule needs a regex (a string)".to_string()));
        }
        // The rule compiled exactly as the summary will compile it: run
        // alone over no events.
        let program = format!(
            "RETURN = categorize([], {});",
            literal(&json!([[category["name"], rule]]))
        );
        let period = TimeInterval::new(Timestamp::from_nanos(0), Timestamp::from_nanos(0));
        if let Err(error) = aw_query::query(&program, &[period], &MemorySource::default()) {
            // The position is that of the little program above: no help.
            let detail = match error.pos {
                Some(pos) => error
                    .message
                    .strip_prefix(&format!("{pos}: "))
                    .unwrap_or(&error.message)
                    .to_string(),
                None => error.message,
            };
            // It is the only rule of that program: its number says nothing.
            let detail = detail
                .strip_prefix("rule 1: ")
                .unwrap_or(&detail)
                .to_string();
            return Err(problem(detail));
        }
    }
    Ok(())
}

fn text(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_string)
}

/// The effective category list (objects with `name` and `rule`), parents
/// included.
pub fn effective(settings: &BTreeMap<String, SettingValue>) -> Vec<Value> {
    let sets: Vec<&Value> = settings
        .get("category_sets")
        .and_then(Value::as_array)
        .map(|sets| {
            sets.iter()
                .filter(|set| set.get("categories").is_some_and(Value::is_array))
                .collect()
        })
        .unwrap_or_default();
    let categories: Vec<Value> = if let Some(first) = sets.first() {
        let exists = |id: &Value| sets.iter().any(|set| set.get("id") == Some(id));
        let mut active: Vec<&Value> = settings
            .get("active_set_ids")
            .and_then(Value::as_array)
            .map(|ids| ids.iter().filter(|id| exists(id)).collect())
            .unwrap_or_default();
        let first_id = first.get("id").unwrap_or(&Value::Null);
        if active.is_empty() {
            active.push(first_id);
        }
        let mut seen = HashSet::new();
        let mut merged = Vec::new();
        for set in sets
            .iter()
            .filter(|set| active.contains(&set.get("id").unwrap_or(&Value::Null)))
        {
            for category in set["categories"].as_array().into_iter().flatten() {
                if is_category(category) && seen.insert(category["name"].to_string()) {
                    merged.push(category.clone());
                }
            }
        }
        merged
    } else if let Some(classes) = settings.get("classes").and_then(Value::as_array) {
        classes.iter().filter(|c| is_category(c)).cloned().collect()
    } else {
        defaults()
    };
    with_parents(categories)
}

/// aw-webui's default categories.
pub fn defaults() -> Vec<Value> {
    DEFAULTS
        .iter()
        .map(|(name, regex, ignore_case, color)| {
            let rule = match (regex, ignore_case) {
                (Some(regex), true) => {
                    json!({"type": "regex", "regex": regex, "ignore_case": true})
                }
                (Some(regex), false) => json!({"type": "regex", "regex": regex}),
                (None, _) => json!({"type": "none"}),
            };
            let mut category = json!({"name": name, "rule": rule});
            if let Some(color) = color {
                category["data"] = json!({"color": color});
            }
            category
        })
        .chain(std::iter::once(
            json!({"name": ["Uncategorized"], "rule": {"type": null}, "data": {"color": "#CCC"}}),
        ))
        .collect()
}

fn is_category(category: &Value) -> bool {
    category
        .get("name")
        .and_then(Value::as_array)
        .is_some_and(|name| !name.is_empty())
        && category.get("rule").is_some_and(|rule| !rule.is_null())
}

fn with_parents(mut all: Vec<Value>) -> Vec<Value> {
    let mut names: HashSet<String> = all.iter().map(|c| c["name"].to_string()).collect();
    let mut index = 0;
    while index < all.len() {
        if let Some(name) = all[index]["name"].as_array().filter(|name| name.len() >= 2) {
            let parent = Value::Array(name[..name.len() - 1].to_vec());
            if names.insert(parent.to_string()) {
                all.push(json!({"name": parent, "rule": {"type": null}}));
            }
        }
        index += 1;
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(pairs: &[(&str, Value)]) -> BTreeMap<String, SettingValue> {
        pairs
            .iter()
            .map(|(key, value)| (key.to_string(), value.clone()))
            .collect()
    }

    #[test]
    fn without_settings_the_defaults_apply() {
        let rules = rules(&BTreeMap::new());
        let names: Vec<_> = rules
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r[0].clone())
            .collect();
        assert!(names.contains(&json!(["Work", "Programming"])));
        // "Media" has a rule of type "none": given, matching nothing.
        assert!(names.contains(&json!(["Media"])));
        assert!(!names.contains(&json!(["Uncategorized"])));
    }

    #[test]
    fn active_sets_merge_and_the_first_name_wins() {
        let rule = |regex: &str| json!({"type": "regex", "regex": regex});
        let settings = settings(&[
            (
                "category_sets",
                json!([
                    {"id": "a", "categories": [{"name": ["Work"], "rule": rule("a")}]},
                    {"id": "b", "categories": [
                        {"name": ["Work"], "rule": rule("b")},
                        {"name": ["Fun", "Games"], "rule": rule("game")}
                    ]},
                    {"id": "c", "categories": [{"name": ["Other"], "rule": rule("c")}]}
                ]),
            ),
            ("active_set_ids", json!(["b", "a", "missing"])),
            ("classes", json!([{"name": ["Ignored"], "rule": rule("x")}])),
        ]);
        assert_eq!(
            rules(&settings),
            json!([[["Work"], rule("a")], [["Fun", "Games"], rule("game")]])
        );
        let names: Vec<_> = effective(&settings)
            .iter()
            .map(|c| c["name"].clone())
            .collect();
        assert!(names.contains(&json!(["Fun"])), "the parent is added");
    }

    #[test]
    fn classes_apply_without_sets_and_unknown_active_ids_mean_the_first_set() {
        let rule = json!({"type": "regex", "regex": "x"});
        let classes = settings(&[(
            "classes",
            json!([{"name": ["Mine"], "rule": rule}, {"name": []}]),
        )]);
        assert_eq!(rules(&classes), json!([[["Mine"], rule]]));
        let sets = settings(&[
            (
                "category_sets",
                json!([{"id": 1, "categories": [{"name": ["One"], "rule": rule}]}]),
            ),
            ("active_set_ids", json!([7])),
        ]);
        assert_eq!(rules(&sets), json!([[["One"], rule]]));
    }
}
