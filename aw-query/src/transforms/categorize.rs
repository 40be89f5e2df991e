//! `categorize` and `tag` (spec §7.19, §7.20) over a [`RuleSet`].

use aw_models::Event;
use serde_json::Value as Json;

use crate::error::Failure;
use crate::rules::RuleSet;

/// Sets `data["$category"]` to the deepest matching category path (later
/// rules win among equally deep ones), `["Uncategorized"]` if none.
/// `categories[i]` is the path (a JSON array of strings) of rule `i`.
pub(crate) fn categorize(
    mut events: Vec<Event>,
    categories: &[Json],
    rules: &mut RuleSet,
) -> Result<Vec<Event>, Failure> {
    let uncategorized = Json::Array(vec![Json::String("Uncategorized".into())]);
    let (per_event, answers) = rules.classify(&events, |matched| {
        let mut best = &uncategorized;
        for index in matched {
            let path = &categories[index];
            if path_len(path) >= path_len(best) {
                best = path;
            }
        }
        best.clone()
    })?;
    for (event, answer) in events.iter_mut().zip(per_event) {
        event
            .data
            .insert("$category".to_string(), answers[answer].clone());
    }
    Ok(events)
}

/// Sets `data["$tags"]` to the sorted, deduplicated tags whose rule matches.
pub(crate) fn tag(
    mut events: Vec<Event>,
    tags: &[String],
    rules: &mut RuleSet,
) -> Result<Vec<Event>, Failure> {
    let (per_event, answers) = rules.classify(&events, |matched| {
        let mut names: Vec<&String> = matched.map(|index| &tags[index]).collect();
        names.sort();
        names.dedup();
        Json::Array(
            names
                .into_iter()
                .map(|name| Json::String(name.clone()))
                .collect(),
        )
    })?;
    for (event, answer) in events.iter_mut().zip(per_event) {
        event
            .data
            .insert("$tags".to_string(), answers[answer].clone());
    }
    Ok(events)
}

fn path_len(path: &Json) -> usize {
    path.as_array().map_or(0, Vec::len)
}
