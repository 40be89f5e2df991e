//! The goals and limits of the `aw-notify` setting, as aw-webui's
//! notification panel writes it and aw-notify reads it:
//!
//! ```json
//! {"alerts": [{"category": "Work", "label": "Deep work",
//!              "thresholds_minutes": [60, 120, 240], "positive": true}],
//!  "hourly_checkins": true, "new_day_greetings": true}
//! ```
//!
//! `category` is a category's names joined with `" > "` (its
//! subcategories count too) or `"All"` (all active time); `positive: false`
//! makes it a limit. Two fields are this server's own and ignored by
//! aw-notify: `period` (`"day"`, the default, or `"week"`) and `hosts`
//! (only these hosts' time). [`parse`] refuses what aw-webui's loader
//! refuses (thresholds that are not positive whole minutes, a category
//! that is not a string, flags that are not booleans, a port out of
//! range) and nothing it takes; other top-level fields are kept as they
//! are. An empty category is `"All"`, as the panel saves it.

use serde_json::Value;

/// The setting's key.
pub const SETTING_KEY: &str = "aw-notify";

/// The category that stands for all active time.
pub const ALL: &str = "All";

/// Most goals in the setting: each costs a little of every check.
pub const MAX_GOALS: usize = 1000;

/// The most minutes a threshold may be (beyond any period's length; the
/// panel sets no bound, this keeps the arithmetic whole).
pub const MAX_MINUTES: u64 = 1_000_000_000;

/// A goal or limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Goal {
    /// `"Work > Programming"`, or [`ALL`].
    pub category: String,
    /// What messages call it; the category when the setting has none.
    pub label: String,
    /// Ascending, each once.
    pub thresholds_minutes: Vec<u64>,
    /// A goal (reach it) rather than a limit (stay under it).
    pub positive: bool,
    /// The period its time is counted over.
    pub period: Period,
    /// Only these hosts' time; `None`: every host the server counts.
    pub hosts: Option<Vec<String>>,
}

impl Goal {
    /// The goal's names as categories are matched: `["Work",
    /// "Programming"]`; empty for [`ALL`].
    pub fn path(&self) -> Vec<&str> {
        if self.category == ALL {
            Vec::new()
        } else {
            self.category.split(" > ").map(str::trim).collect()
        }
    }

    /// What identifies it across edits of its thresholds: a threshold
    /// fired stays fired when others are added.
    pub fn key(&self) -> String {
        format!(
            "{}|{}|{}|{}",
            self.category,
            self.label,
            if self.positive { "goal" } else { "limit" },
            self.period.name()
        )
    }
}

/// The period a goal counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Period {
    Day,
    Week,
}

impl Period {
    /// As the setting spells it.
    pub fn name(self) -> &'static str {
        match self {
            Period::Day => "day",
            Period::Week => "week",
        }
    }
}

/// Why a value is not a usable `aw-notify` setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct GoalError(pub String);

/// The goals of a stored value; `null` (no setting) has none.
pub fn parse(value: &Value) -> Result<Vec<Goal>, GoalError> {
    let fail = |message: String| Err(GoalError(message));
    let object = match value {
        Value::Null => return Ok(Vec::new()),
        Value::Object(object) => object,
        _ => return fail("must be an object such as {\"alerts\": [...]}".to_string()),
    };
    for flag in [
        "hourly_checkins",
        "new_day_greetings",
        "server_monitoring",
        "productivity_score",
    ] {
        if let Some(found) = object.get(flag) {
            if !found.is_boolean() && !found.is_null() {
                return fail(format!("{flag} must be true or false"));
            }
        }
    }
    if let Some(port) = object.get("http_port") {
        if !port.is_null() && port.as_u64().is_none_or(|port| port > 65_535) {
            return fail("http_port must be a whole number from 0 to 65535".to_string());
        }
    }
    let alerts = match object.get("alerts") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(alerts)) => alerts,
        Some(_) => return fail("alerts must be a list".to_string()),
    };
    if alerts.len() > MAX_GOALS {
        return fail(format!("alerts: at most {MAX_GOALS} goals"));
    }
    let mut goals = Vec::with_capacity(alerts.len());
    for (index, alert) in alerts.iter().enumerate() {
        let goal = parse_goal(alert)
            .map_err(|message| GoalError(format!("alerts[{index}]: {message}")))?;
        goals.push(goal);
    }
    Ok(goals)
}

fn parse_goal(alert: &Value) -> Result<Goal, String> {
    let Some(alert) = alert.as_object() else {
        return Err("must be an object with category and thresholds_minutes".to_string());
    };
    let category = match alert.get("category") {
        Some(Value::String(text)) if !text.trim().is_empty() => text.trim().to_string(),
        Some(Value::String(_)) => ALL.to_string(),
        Some(_) => {
            return Err("category must be a string (\"Work > Programming\" or \"All\")".to_string())
        }
        None => return Err("category is missing".to_string()),
    };
    let label = match alert.get("label") {
        None | Some(Value::Null) => category.clone(),
        Some(Value::String(text)) if text.trim().is_empty() => category.clone(),
        Some(Value::String(text)) => text.trim().to_string(),
        Some(_) => return Err("label must be a string".to_string()),
    };
    let Some(Value::Array(list)) = alert.get("thresholds_minutes") else {
        return Err(
            "thresholds_minutes must be a list of whole minutes, such as [60, 120]".to_string(),
        );
    };
    if list.is_empty() {
        return Err("thresholds_minutes is empty".to_string());
    }
    let mut thresholds = Vec::with_capacity(list.len());
    for threshold in list {
        match threshold.as_u64() {
            Some(minutes @ 1..=MAX_MINUTES) => thresholds.push(minutes),
            _ => {
                return Err(format!(
                    "thresholds_minutes: {threshold} is not a positive whole number of minutes \
                     (1 to {MAX_MINUTES})"
                ))
            }
        }
    }
    thresholds.sort_unstable();
    thresholds.dedup();
    let positive = match alert.get("positive") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(positive)) => *positive,
        Some(_) => return Err("positive must be true (a goal) or false (a limit)".to_string()),
    };
    let period = match alert.get("period") {
        None | Some(Value::Null) => Period::Day,
        Some(Value::String(text)) if text == "day" => Period::Day,
        Some(Value::String(text)) if text == "week" => Period::Week,
        Some(_) => return Err("period must be \"day\" or \"week\"".to_string()),
    };
    let hosts = match alert.get("hosts") {
        None | Some(Value::Null) => None,
        Some(Value::Array(hosts)) => {
            let names: Option<Vec<String>> = hosts
                .iter()
                .map(|host| host.as_str().map(str::to_string).filter(|h| !h.is_empty()))
                .collect();
            match names {
                Some(names) if !names.is_empty() => Some(names),
                _ => return Err("hosts must be a list of host names".to_string()),
            }
        }
        Some(_) => return Err("hosts must be a list of host names".to_string()),
    };
    Ok(Goal {
        category,
        label,
        thresholds_minutes: thresholds,
        positive,
        period,
        hosts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_panels_setting_is_read_with_its_goals_and_limits() {
        let goals = parse(&json!({
            "alerts": [
                {"category": "Work", "label": "Deep work", "thresholds_minutes": [240, 60, 120], "positive": true},
                {"category": "Media > Social Media", "label": "", "thresholds_minutes": [60], "positive": false},
                {"category": "All", "thresholds_minutes": [480], "period": "week", "hosts": ["laptop"]}
            ],
            "hourly_checkins": true,
            "new_day_greetings": false,
            "something_else": 3
        }))
        .unwrap();
        assert_eq!(goals.len(), 3);
        assert_eq!(goals[0].thresholds_minutes, [60, 120, 240]);
        assert!(goals[0].positive);
        assert_eq!(goals[1].label, "Media > Social Media");
        assert_eq!(goals[1].path(), ["Media", "Social Media"]);
        assert!(!goals[1].positive);
        assert_eq!(goals[2].period, Period::Week);
        assert!(goals[2].path().is_empty());
        assert_eq!(goals[2].hosts.as_deref(), Some(&["laptop".to_string()][..]));
        assert_eq!(parse(&Value::Null).unwrap(), []);
        assert_eq!(parse(&json!({})).unwrap(), []);
        // As the panel saves an empty category and label.
        let saved = parse(&json!({"alerts": [{"category": "", "label": null, "thresholds_minutes": [60], "positive": false}], "http_port": 5600})).unwrap();
        assert_eq!(
            (saved[0].category.as_str(), saved[0].label.as_str()),
            ("All", "All")
        );
    }

    #[test]
    fn what_the_panel_would_refuse_is_refused_by_name() {
        let refused = |value: Value, says: &str| {
            let error = parse(&value).unwrap_err().0;
            assert!(error.contains(says), "{value}: {error}");
        };
        refused(json!([1]), "must be an object");
        refused(json!({"alerts": {}}), "alerts must be a list");
        refused(
            json!({"alerts": [{"thresholds_minutes": [1]}]}),
            "alerts[0]: category is missing",
        );
        refused(
            json!({"alerts": [{"category": 3, "thresholds_minutes": [1]}]}),
            "category must be a string",
        );
        refused(
            json!({"alerts": [{"category": null, "thresholds_minutes": [1]}]}),
            "category must be a string",
        );
        refused(json!({"http_port": 70000}), "http_port must be");
        refused(
            json!({"productivity_score": 1}),
            "productivity_score must be",
        );
        for bad in [
            json!(0),
            json!(-5),
            json!(1.5),
            json!("60"),
            json!(MAX_MINUTES + 1),
        ] {
            refused(
                json!({"alerts": [{"category": "Work", "thresholds_minutes": [30, bad]}]}),
                "not a positive whole number of minutes",
            );
        }
        refused(
            json!({"alerts": [{"category": "Work", "thresholds_minutes": []}]}),
            "is empty",
        );
        refused(
            json!({"alerts": [{"category": "Work"}]}),
            "thresholds_minutes must be a list",
        );
        refused(
            json!({"alerts": [{"category": "Work", "thresholds_minutes": [1], "positive": "yes"}]}),
            "positive must be",
        );
        refused(
            json!({"alerts": [{"category": "Work", "thresholds_minutes": [1], "period": "month"}]}),
            "period must be",
        );
        refused(
            json!({"alerts": [{"category": "Work", "thresholds_minutes": [1], "hosts": "laptop"}]}),
            "hosts must be",
        );
        refused(
            json!({"hourly_checkins": "often"}),
            "hourly_checkins must be",
        );
    }
}
