//! One check of the goals: today's (and this week's) active time per
//! category from the summaries (`aw-summary`, the numbers the dashboard
//! shows), each goal's time (its category and subcategories; `All`: all
//! active time), and a message for each goal that crossed a threshold not
//! told yet this period: one message naming the highest threshold
//! reached, the lower ones counted as told, as aw-notify does.

use std::collections::{BTreeSet, HashMap};

use aw_models::summary::Params;
use aw_models::Timestamp;
use aw_summary::calendar::add_days;
use aw_summary::{Calendar, SummaryError};
use jiff::civil::Date;
use serde_json::json;

use crate::channels::{Kind, Message};
use crate::goals::{self, Goal, Period, ALL, SETTING_KEY};
use crate::saved::Saved;
use crate::{outbox, AlertSettings, Alerts, AlertsError, GoalStatus, HostScope, Source};

/// Active time of a period per category path, and in all.
#[derive(Debug, Default)]
pub(crate) struct Totals {
    pub total: f64,
    pub categories: Vec<(Vec<String>, f64)>,
    /// Application, title, category path, seconds (only with
    /// `include_titles`).
    pub titles: Vec<(String, String, Vec<String>, f64)>,
    pub hosts: Vec<String>,
}

impl Totals {
    /// The seconds of `goal`'s category and its subcategories.
    pub fn of(&self, goal: &Goal) -> f64 {
        let path = goal.path();
        if path.is_empty() {
            return self.total;
        }
        self.categories
            .iter()
            .filter(|(names, _)| starts_with(names, &path))
            .map(|(_, seconds)| seconds)
            .sum()
    }

    fn add(&mut self, other: Totals) {
        self.total += other.total;
        self.categories.extend(other.categories);
        self.titles.extend(other.titles);
        for host in other.hosts {
            if !self.hosts.contains(&host) {
                self.hosts.push(host);
            }
        }
    }
}

fn starts_with(names: &[String], path: &[&str]) -> bool {
    names.len() >= path.len() && names.iter().zip(path).all(|(name, want)| name == want)
}

/// The calendar of the alerts: `[alerts] tz` (or the server's zone) and
/// the `startOfDay` and `startOfWeek` settings.
pub(crate) fn calendar(
    settings: &AlertSettings,
    stored: &std::collections::BTreeMap<String, serde_json::Value>,
) -> Result<Calendar, AlertsError> {
    Calendar::new(
        settings.tz.as_deref(),
        stored.get("startOfDay"),
        stored.get("startOfWeek"),
    )
    .map_err(|error| AlertsError::Other(error.to_string()))
}

/// Whose time counts now.
pub(crate) fn scope(settings: &AlertSettings, source: &Source) -> HostScope {
    settings.hosts.unwrap_or_else(|| {
        if (source.is_hub)(source.datastore()) {
            HostScope::All
        } else {
            HostScope::Own
        }
    })
}

/// The totals of `[start, end)` over `hosts` (`None`: every host).
pub(crate) fn totals(
    source: &Source,
    calendar: &Calendar,
    start: Timestamp,
    end: Timestamp,
    hosts: Option<&[String]>,
    titles: bool,
) -> Result<Totals, AlertsError> {
    let by = if titles { "category,title" } else { "category" };
    let one = |host: Option<&str>| -> Result<Totals, AlertsError> {
        let params = Params {
            start: Some(start.to_rfc3339_offset()),
            end: Some(end.to_rfc3339_offset()),
            by: Some(by.to_string()),
            host: host.map(str::to_string),
            tz: Some(calendar.zone_name().to_string()),
            limit: Some(aw_summary::MAX_LIMIT),
            categories: None,
        };
        match aw_summary::summarize(&source.served, &params) {
            Ok(summary) => Ok(Totals {
                total: summary.duration,
                categories: summary
                    .category
                    .unwrap_or_default()
                    .into_iter()
                    .map(|row| (row.category.unwrap_or_else(|| vec![row.key]), row.duration))
                    .collect(),
                titles: summary
                    .title
                    .unwrap_or_default()
                    .into_iter()
                    .map(|row| {
                        (
                            row.app.unwrap_or_default(),
                            row.key,
                            row.category.unwrap_or_default(),
                            row.duration,
                        )
                    })
                    .collect(),
                hosts: summary.hosts,
            }),
            // A host without window data yet counts nothing.
            Err(SummaryError::Argument(error)) if error.argument == "host" => Ok(Totals::default()),
            Err(error) => Err(error.into()),
        }
    };
    match hosts {
        None => one(None),
        Some(hosts) => {
            let mut sum = Totals::default();
            for host in hosts {
                sum.add(one(Some(host))?);
            }
            Ok(sum)
        }
    }
}

/// `1h 10m`, `45m`, `2h`: as aw-notify writes durations.
pub(crate) fn words(seconds: f64) -> String {
    let minutes = (seconds.max(0.0) / 60.0).floor() as u64;
    match (minutes / 60, minutes % 60) {
        (0, minutes) => format!("{minutes}m"),
        (hours, 0) => format!("{hours}h"),
        (hours, minutes) => format!("{hours}h {minutes}m"),
    }
}

/// Checks every goal and queues a message for each new crossing.
pub(crate) fn check(
    alerts: &Alerts,
    settings: &AlertSettings,
    source: &Source,
) -> Result<(), AlertsError> {
    let datastore = source.datastore();
    let stored = datastore.settings().wait()?;
    let mut problems = Vec::new();
    let goals = match goals::parse(stored.get(SETTING_KEY).unwrap_or(&serde_json::Value::Null)) {
        Ok(goals) => goals,
        Err(error) => {
            problems.push(format!("the {SETTING_KEY} setting is ignored: {error}"));
            Vec::new()
        }
    };
    let calendar = calendar(settings, &stored)?;
    let today = calendar.today();
    let week = calendar.week_of(today);
    let scope = scope(settings, source);
    let mut saved = Saved::load(datastore)?;
    let before = saved.clone();
    if saved.day.as_deref() != Some(&today.to_string()) {
        saved.day = Some(today.to_string());
        saved.fired_day.clear();
    }
    if saved.week.as_deref() != Some(&week.to_string()) {
        saved.week = Some(week.to_string());
        saved.fired_week.clear();
    }
    let known: BTreeSet<String> = aw_summary::categories::effective(&stored)
        .iter()
        .filter_map(|category| {
            let names: Vec<&str> = category["name"]
                .as_array()?
                .iter()
                .filter_map(|n| n.as_str())
                .collect();
            Some(names.join(" > "))
        })
        .collect();
    let scope_hosts = match scope {
        HostScope::Own => Some(vec![source.own_host.clone()]),
        HostScope::All => None,
    };
    let mut counted: HashMap<(Period, Option<Vec<String>>), Totals> = HashMap::new();
    let mut statuses = Vec::new();
    let mut hosts_seen: Vec<String> = Vec::new();
    for goal in &goals {
        let known_category = goal.category == ALL || known.contains(&goal.category);
        if !known_category {
            problems.push(format!(
                "goal '{}': no category is named '{}' (it counts nothing until one is)",
                goal.label, goal.category
            ));
        }
        let hosts = goal.hosts.clone().or_else(|| scope_hosts.clone());
        let key = (goal.period, hosts.clone());
        if !counted.contains_key(&key) {
            let (start, end) = match goal.period {
                Period::Day => (
                    calendar.day_start(today),
                    calendar.day_start(add_days(today, 1)),
                ),
                Period::Week => (
                    calendar.day_start(week),
                    calendar.day_start(add_days(week, 7)),
                ),
            };
            let totals = totals(
                source,
                &calendar,
                start,
                end,
                hosts.as_deref(),
                settings.include_titles,
            )?;
            counted.insert(key.clone(), totals);
        }
        let totals = &counted[&key];
        for host in &totals.hosts {
            if !hosts_seen.contains(host) {
                hosts_seen.push(host.clone());
            }
        }
        let seconds = totals.of(goal);
        let fired = match goal.period {
            Period::Day => saved.fired_day.entry(goal.key()).or_default(),
            Period::Week => saved.fired_week.entry(goal.key()).or_default(),
        };
        let reached: Vec<u64> = goal
            .thresholds_minutes
            .iter()
            .copied()
            .filter(|minutes| seconds >= (*minutes * 60) as f64)
            .collect();
        let new: Vec<u64> = reached
            .iter()
            .copied()
            .filter(|t| !fired.contains(t))
            .collect();
        if !new.is_empty() {
            fired.extend(new.iter().copied());
            fired.sort_unstable();
            fired.dedup();
        }
        let fired = fired.clone();
        if let Some(&highest) = new.iter().max() {
            let day = match goal.period {
                Period::Day => today,
                Period::Week => week,
            };
            let message = crossing(settings, goal, highest, seconds, day, totals);
            outbox::queue(settings, &mut saved, &message);
        }
        statuses.push(GoalStatus {
            category: goal.category.clone(),
            label: goal.label.clone(),
            positive: goal.positive,
            period: goal.period.name(),
            thresholds_minutes: goal.thresholds_minutes.clone(),
            minutes: (seconds / 60.0 * 10.0).round() / 10.0,
            fired,
            known_category,
        });
    }
    if saved != before {
        // Before any delivery: a crash from here on neither repeats the
        // crossing nor loses its message.
        saved.store(datastore)?;
    }
    let mut status = alerts.status_mut();
    status.day = Some(today.to_string());
    status.tz = Some(calendar.zone_name().to_string());
    status.scope = Some(scope);
    status.hosts = hosts_seen;
    status.goals = statuses;
    status.problems = problems;
    status.last_check = Some(Timestamp::now());
    Ok(())
}

/// The message of `goal` reaching `threshold` minutes with `seconds`.
fn crossing(
    settings: &AlertSettings,
    goal: &Goal,
    threshold: u64,
    seconds: f64,
    day: Date,
    totals: &Totals,
) -> Message {
    let when = match goal.period {
        Period::Day => "today",
        Period::Week => "this week",
    };
    let (kind, title) = if goal.positive {
        (Kind::Goal, format!("Goal reached: {}", goal.label))
    } else {
        (Kind::Limit, format!("Time spent: {}", goal.label))
    };
    let across = match totals.hosts.len() {
        0 | 1 => String::new(),
        _ => format!(", across {}", totals.hosts.join(", ")),
    };
    let mut text = format!(
        "{}: {}  ({} {when}{across})",
        goal.label,
        words((threshold * 60) as f64),
        words(seconds)
    );
    let mut details = json!({
        "category": goal.category,
        "label": goal.label,
        "positive": goal.positive,
        "period": goal.period.name(),
        "day": day.to_string(),
        "threshold_minutes": threshold,
        "minutes": (seconds / 60.0 * 10.0).round() / 10.0,
        "hosts": totals.hosts,
    });
    if settings.include_titles {
        let path = goal.path();
        let mut titles: Vec<&(String, String, Vec<String>, f64)> = totals
            .titles
            .iter()
            .filter(|(_, _, names, _)| path.is_empty() || starts_with(names, &path))
            .collect();
        titles.sort_by(|a, b| b.3.total_cmp(&a.3));
        titles.truncate(3);
        if !titles.is_empty() {
            text.push_str("\nMost of it:");
            for (app, title, _, seconds) in &titles {
                text.push_str(&format!("\n  {} ({app}): {}", title, words(*seconds)));
            }
            details["titles"] = json!(titles
                .iter()
                .map(|(app, title, _, seconds)| json!({"app": app, "title": title, "seconds": seconds}))
                .collect::<Vec<_>>());
        }
    }
    Message {
        id: uuid::Uuid::new_v4().to_string(),
        kind,
        title,
        text,
        html: None,
        details,
    }
}

/// The message `POST /api/0/alerts/test` sends.
pub(crate) fn test_message(own_host: &str) -> Message {
    Message {
        id: uuid::Uuid::new_v4().to_string(),
        kind: Kind::Test,
        title: "aw-server: a test message".to_string(),
        text: format!(
            "This is a test of the alerts of aw-server on {own_host}: this channel works."
        ),
        html: None,
        details: json!({"host": own_host}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_aw_notify_writes_them() {
        assert_eq!(words(0.0), "0m");
        assert_eq!(words(59.0), "0m");
        assert_eq!(words(45.0 * 60.0), "45m");
        assert_eq!(words(3600.0), "1h");
        assert_eq!(words(4200.0), "1h 10m");
    }

    #[test]
    fn a_category_counts_its_subcategories_and_all_counts_everything() {
        let totals = Totals {
            total: 1000.0,
            categories: vec![
                (vec!["Work".into()], 100.0),
                (vec!["Work".into(), "Programming".into()], 300.0),
                (vec!["Workshop".into()], 50.0),
                (vec!["Media".into(), "Social Media".into()], 200.0),
            ],
            ..Totals::default()
        };
        let goal = |category: &str| Goal {
            category: category.into(),
            label: category.into(),
            thresholds_minutes: vec![1],
            positive: true,
            period: Period::Day,
            hosts: None,
        };
        assert_eq!(totals.of(&goal("Work")), 400.0);
        assert_eq!(totals.of(&goal("Work > Programming")), 300.0);
        assert_eq!(totals.of(&goal("Media")), 200.0);
        assert_eq!(totals.of(&goal("All")), 1000.0);
        assert_eq!(totals.of(&goal("Games")), 0.0);
    }
}
