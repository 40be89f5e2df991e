//! `categorize` and `tag` (`docs/API.md` §7.19, §7.20) over a [`RuleSet`].

use std::sync::Arc;

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
    // Each path is made once and shared by the objects it is given to:
    // copying it was four allocations per distinct object, and as many
    // frees later.
    let uncategorized = Arc::new(Json::Array(vec![Json::String("Uncategorized".into())]));
    let mut paths: Vec<Option<Arc<Json>>> = vec![None; categories.len()];
    let (per_event, answers) = rules.classify(&events, |matched| {
        // `None` is "Uncategorized", one level deep.
        let (mut best, mut depth): (Option<usize>, usize) = (None, 1);
        for index in matched {
            let length = path_len(&categories[index]);
            if length >= depth {
                (best, depth) = (Some(index), length);
            }
        }
        match best {
            Some(index) => {
                Arc::clone(paths[index].get_or_insert_with(|| Arc::new(categories[index].clone())))
            }
            None => Arc::clone(&uncategorized),
        }
    })?;
    // The answer is a function of the data, so it is set once per
    // distinct object, for every event sharing it.
    edit_data(
        &mut events,
        |index, _| per_event.get(index).and_then(|&answer| answers.get(answer)),
        |data, category| data.insert_shared("$category", Arc::clone(category)),
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
        Arc::new(Json::Array(
            names
                .into_iter()
                .map(|name| Json::String(name.clone()))
                .collect(),
        ))
    })?;
    edit_data(
        &mut events,
        |index, _| per_event.get(index).and_then(|&answer| answers.get(answer)),
        |data, tags| data.insert_shared("$tags", Arc::clone(tags)),
    );
    Ok(events)
}

fn path_len(path: &Json) -> usize {
    path.as_array().map_or(0, Vec::len)
}
