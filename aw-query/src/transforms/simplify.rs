//! `simplify_window_titles` (`docs/API.md` §7.23, from the Python implementation).

use aw_models::{EventData, SharedEvent};

use crate::transforms::edit_data;
use serde_json::Value as Json;

/// Removes a leading `(<digits>)` counter and the spaces after it from
/// `data[key]`; for `key == "title"` on events with an `app`, also writes
/// every `FPS: <number>` as `FPS: ...` and drops a leading `●` or `*` with
/// the spaces after it. `data[key]` must be a string on every event.
///
/// ```
/// # use aw_query::transforms::simplify_window_titles;
/// # use aw_models::{Duration, SharedEvent, Timestamp};
/// let e = SharedEvent::new(Timestamp::from_nanos(0), Duration::ZERO,
///     serde_json::json!({"app": "code", "title": "● (3) main.rs - FPS: 59.2"}).as_object().unwrap().clone());
/// let out = simplify_window_titles(vec![e], "title").unwrap();
/// assert_eq!(out[0].data["title"], "(3) main.rs - FPS: ...");
/// ```
pub fn simplify_window_titles(
    mut events: Vec<SharedEvent>,
    key: &str,
) -> Result<Vec<SharedEvent>, String> {
    let mut failure = None;
    edit_data(
        &mut events,
        |_, data| match simplified(data, key) {
            Ok(text) => text,
            Err(message) => {
                failure.get_or_insert(message);
                None
            }
        },
        |data, text| {
            data.insert(key, Json::String(text));
        },
    );
    failure.map_or(Ok(events), Err)
}

/// The simplified title under `key` of `data`, `None` if it is simple
/// already.
fn simplified(data: &EventData, key: &str) -> Result<Option<String>, String> {
    let window = key == "title" && data.contains_key("app");
    let Some(Json::String(text)) = data.get(key) else {
        return Err(format!(
            "simplify_window_titles: every event needs a string '{key}'"
        ));
    };
    let mut simplified = strip_counter(text).to_string();
    if window {
        simplified = replace_fps(&simplified);
        simplified = strip_dot(&simplified).to_string();
    }
    Ok((simplified != *text).then_some(simplified))
}

fn strip_counter(text: &str) -> &str {
    let Some(rest) = text.strip_prefix('(') else {
        return text;
    };
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    match rest[digits..].strip_prefix(')') {
        Some(after) if digits > 0 => after.trim_start(),
        _ => text,
    }
}

/// `^(●|\*)\s*` removed.
fn strip_dot(text: &str) -> &str {
    text.strip_prefix('●')
        .or_else(|| text.strip_prefix('*'))
        .map_or(text, str::trim_start)
}

/// `FPS:\s+[0-9.]+` replaced by `FPS: ...`.
fn replace_fps(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("FPS:") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 4..];
        let spaces = after.len() - after.trim_start().len();
        let number = after[spaces..]
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(after.len() - spaces);
        if spaces > 0 && number > 0 {
            out.push_str("FPS: ...");
            rest = &after[spaces + number..];
        } else {
            out.push_str("FPS:");
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_cases() {
        let cases = [
            ("(2) Facebook", "Facebook"),
            ("(12)  YouTube", "YouTube"),
            ("() x", "() x"),
            ("(a) x", "(a) x"),
            ("Cemu - FPS: 59.2 - x", "Cemu - FPS: ... - x"),
            ("FPS:59", "FPS:59"),
            ("● main.rs", "main.rs"),
            ("*  notes", "notes"),
            ("x ● y", "x ● y"),
        ];
        for (input, expected) in cases {
            let mut out = strip_counter(input).to_string();
            out = replace_fps(&out);
            out = strip_dot(&out).to_string();
            assert_eq!(out, expected, "{input}");
        }
    }
}
