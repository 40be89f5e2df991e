//! `categorize` and `tag` (spec §7.19, §7.20) over a [`RuleSet`].

use aw_models::SharedEvent;
use serde_json::Value as Json;

use crate::error::Failure;
use crate::rules::RuleSet;
use crate::transforms::edit_data;

/// Sets `data["$category"]` to the deepest matching category path (later
/// rules win among equally deep ones), `["Uncategorized"]` if none.
/// `categories[i]` is the path (a JSON array of strings) of rule `i`.
pub(crate) fn categorize(
    mut events: Vec<SharedEvent>,
    categories: &[Json],
    rules: &mut RuleSet,
) -> Result<Vec<SharedEvent>, Failure> {
    let uncategorized = Json::Array(vec![Json::String("Uncategorized".into())]);
    let (per_event, answers) = rules.classify(&events, |matched| {
        let mut best = &uncategorized;
        for index in matched {
            let path = &categories[index];
            if path_len(path) >= path_len(best) {
                best = path;
            }
        }
        best
    })?;
    // The answer is a function of the data, so it is set once per
    // distinct object, for every event sharing it.
    edit_data(
        &mut events,
        |index, _| {
            per_event
                .get(index)
                .and_then(|&answer| answers.get(answer).copied())
        },
        |data, category| {
            data.insert("$category", category.clone());
        },
    );
    Ok(events)
}

/// Sets `data["$tags"]` to the sorted, deduplicated tags whose rule matches.
pub(crate) fn tag(
    mut events: Vec<SharedEvent>,
    tags: &[String],
    rules: &mut RuleSet,
) -> Result<Vec<SharedEvent>, Failure> {
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
    edit_data(
        &mut events,
        |index, _| per_event.get(index).and_then(|&answer| answers.get(answer)),
        |data, tags| {
            data.insert("$tags", tags.clone());
        },
    );
    Ok(events)
}

fn path_len(path: &Json) -> usize {
    path.as_array().map_or(0, Vec::len)
}
