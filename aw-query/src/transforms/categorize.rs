//! `categorize` and `tag` (spec §7.19, §7.20) over a [`RuleSet`].

use aw_models::{Data, SharedEvent};
use serde_json::Value as Json;

use crate::error::Failure;
use crate::rules::RuleSet;
use crate::transforms::Derived;

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
        best.clone()
    })?;
    // The answer is a function of the data, so one derived object per
    // distinct input object serves every event sharing it.
    let mut derived = Derived::default();
    for (event, answer) in events.iter_mut().zip(per_event) {
        let Ok(data) = derived.get(&event.data, |data| {
            Ok::<_, std::convert::Infallible>(Some(with_key(data, "$category", &answers[answer])))
        });
        event.data = data;
    }
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
    let mut derived = Derived::default();
    for (event, answer) in events.iter_mut().zip(per_event) {
        let Ok(data) = derived.get(&event.data, |data| {
            Ok::<_, std::convert::Infallible>(Some(with_key(data, "$tags", &answers[answer])))
        });
        event.data = data;
    }
    Ok(events)
}

/// A copy of `data` with `key` set to `value`.
fn with_key(data: &Data, key: &str, value: &Json) -> Data {
    let mut data = data.clone();
    data.insert(key.to_string(), value.clone());
    data
}

fn path_len(path: &Json) -> usize {
    path.as_array().map_or(0, Vec::len)
}
