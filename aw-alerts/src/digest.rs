//! The digest: the report of the last day (`daily`) or week (`weekly`)
//! by category, by application and by day, in plain text and HTML, with
//! each goal and whether it was met; sent at `digest_time` (local) to
//! e-mail and the webhook, once per period (the period's first day is
//! saved when it went out). A digest names window titles only with
//! `include_titles`.

use aw_models::summary::Params;
use aw_models::Timestamp;
use aw_summary::calendar::add_days;
use aw_summary::render;
use aw_summary::Calendar;
use jiff::civil::Date;
use serde::Serialize;
use serde_json::json;

use crate::channels::{Kind, Message};
use crate::check::{self, words};
use crate::goals::{self, Goal, Period, SETTING_KEY};
use crate::saved::Saved;
use crate::{outbox, AlertSettings, Alerts, AlertsError, DigestStatus, HostScope, Source};

/// How often a digest goes out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DigestPeriod {
    Daily,
    Weekly,
}

/// Rows of each ranked table of a digest.
const ROWS: usize = 15;

/// The first day of the period a digest sent on `today` reports on, and
/// the day after its last.
fn period_of(calendar: &Calendar, period: DigestPeriod, today: Date) -> (Date, Date) {
    match period {
        DigestPeriod::Daily => (add_days(today, -1), today),
        DigestPeriod::Weekly => {
            let this_week = calendar.week_of(today);
            (add_days(this_week, -7), this_week)
        }
    }
}

/// When the digest of the current period goes out: `digest_time` on
/// today (daily) or on the week's first day (weekly).
fn due_at(
    settings: &AlertSettings,
    calendar: &Calendar,
    period: DigestPeriod,
    today: Date,
) -> Timestamp {
    let date = match period {
        DigestPeriod::Daily => today,
        DigestPeriod::Weekly => calendar.week_of(today),
    };
    calendar.clock_time(date, settings.digest_time.0, settings.digest_time.1)
}

/// Sends the digest when it is due and not sent yet; keeps the status's
/// next time.
pub(crate) fn when_due(
    alerts: &Alerts,
    settings: &AlertSettings,
    source: &Source,
) -> Result<(), AlertsError> {
    let Some(period) = settings.digest else {
        return Ok(());
    };
    let stored = source.datastore().settings().wait()?;
    let calendar = check::calendar(settings, &stored)?;
    let now = Timestamp::now();
    // The clock's date (not the day's, which starts at startOfDay).
    let today = calendar.clock_date(now);
    let (first, _) = period_of(&calendar, period, today);
    let mut saved = Saved::load(source.datastore())?;
    let due = due_at(settings, &calendar, period, today);
    let sent = saved.digest_sent.as_deref() == Some(&first.to_string());
    if now >= due && !sent {
        let message = build(settings, source, period, Some(today))?;
        saved.digest_sent = Some(first.to_string());
        outbox::queue(settings, &mut saved, &message);
        saved.store(source.datastore())?;
    }
    let next = if now >= due {
        let later = match period {
            DigestPeriod::Daily => add_days(today, 1),
            DigestPeriod::Weekly => add_days(calendar.week_of(today), 7),
        };
        due_at(settings, &calendar, period, later)
    } else {
        due
    };
    alerts.status_mut().digest = Some(DigestStatus {
        period,
        time: format!(
            "{:02}:{:02}",
            settings.digest_time.0, settings.digest_time.1
        ),
        next: Some(next),
        last_sent: saved.digest_sent.clone(),
    });
    Ok(())
}

/// The digest of the period before the one `today` (default: now) is in.
pub(crate) fn build(
    settings: &AlertSettings,
    source: &Source,
    period: DigestPeriod,
    today: Option<Date>,
) -> Result<Message, AlertsError> {
    let stored = source.datastore().settings().wait()?;
    let calendar = check::calendar(settings, &stored)?;
    let today = today.unwrap_or_else(|| calendar.clock_date(Timestamp::now()));
    let (first, after) = period_of(&calendar, period, today);
    let scope = check::scope(settings, source);
    let host = match scope {
        HostScope::Own => Some(source.own_host.clone()),
        HostScope::All => None,
    };
    let by = if settings.include_titles {
        "category,app,title,day"
    } else {
        "category,app,day"
    };
    let params = Params {
        start: Some(first.to_string()),
        end: Some(after.to_string()),
        by: Some(by.to_string()),
        host: host.clone(),
        tz: Some(calendar.zone_name().to_string()),
        limit: Some(ROWS),
        categories: None,
    };
    let summary = match aw_summary::summarize(&source.served, &params) {
        Err(aw_summary::SummaryError::Argument(error)) if error.argument == "host" => {
            // No window data of this host yet: a report of nothing.
            aw_summary::summarize(
                &source.served,
                &Params {
                    host: None,
                    ..params.clone()
                },
            )
            .map(|mut summary| {
                summary.duration = 0.0;
                summary.hosts.clear();
                for rows in [&mut summary.app, &mut summary.title, &mut summary.category]
                    .into_iter()
                    .flatten()
                {
                    rows.clear();
                }
                if let Some(days) = &mut summary.day {
                    for day in days {
                        day.duration = 0.0;
                        day.first = None;
                        day.last = None;
                        day.categories.clear();
                    }
                }
                summary
            })?
        }
        other => other?,
    };
    let goals = goals::parse(stored.get(SETTING_KEY).unwrap_or(&serde_json::Value::Null))
        .unwrap_or_default();
    let scope_hosts = host.map(|host| vec![host]);
    let mut lines = Vec::new();
    let mut facts = Vec::new();
    for goal in &goals {
        let hosts = goal.hosts.clone().or_else(|| scope_hosts.clone());
        let (met, of, seconds) =
            goal_outcome(source, &calendar, goal, first, after, hosts.as_deref())?;
        let verb = if goal.positive { "reached" } else { "kept" };
        let first_threshold = goal.thresholds_minutes[0];
        let line = match goal.period {
            Period::Day if of > 1 => format!(
                "{}: {verb} on {met} of {of} days ({} {}; {} in all)",
                goal.label,
                if goal.positive { "at least" } else { "under" },
                words((first_threshold * 60) as f64),
                words(seconds)
            ),
            _ => format!(
                "{}: {} ({} {}, {})",
                goal.label,
                if met > 0 {
                    verb
                } else if goal.positive {
                    "not reached"
                } else {
                    "not kept"
                },
                if goal.positive { "at least" } else { "under" },
                words((first_threshold * 60) as f64),
                words(seconds)
            ),
        };
        facts.push(json!({
            "category": goal.category,
            "label": goal.label,
            "positive": goal.positive,
            "period": goal.period.name(),
            "threshold_minutes": first_threshold,
            "met": met,
            "of": of,
            "minutes": (seconds / 60.0 * 10.0).round() / 10.0,
        }));
        lines.push(line);
    }
    let name = match period {
        DigestPeriod::Daily => format!("{first}"),
        DigestPeriod::Weekly => format!("the week of {first}"),
    };
    let title = format!(
        "Activity digest for {name}: {} active",
        words(summary.duration)
    );
    let mut text = render::table(&summary, &calendar);
    let mut html = render::html(&summary, &calendar);
    if !lines.is_empty() {
        text.push_str("\nGoals\n");
        html.push_str("<h3 style=\"font-family:sans-serif\">Goals</h3>\n<ul style=\"font-family:sans-serif\">\n");
        for line in &lines {
            text.push_str(&format!(" {line}\n"));
            html.push_str(&format!("<li>{}</li>\n", render::escape_html(line)));
        }
        html.push_str("</ul>\n");
    }
    let document = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{}</title></head><body>\n{html}</body></html>\n",
        render::escape_html(&title)
    );
    Ok(Message {
        id: uuid::Uuid::new_v4().to_string(),
        kind: Kind::Digest,
        title,
        text,
        html: Some(document),
        details: json!({
            "period": period,
            "start": first.to_string(),
            "end": after.to_string(),
            "summary": summary,
            "goals": facts,
        }),
    })
}

/// For a goal over `[first, after)`: on how many of how many of its
/// periods it was met, and its seconds in all.
fn goal_outcome(
    source: &Source,
    calendar: &Calendar,
    goal: &Goal,
    first: Date,
    after: Date,
    hosts: Option<&[String]>,
) -> Result<(usize, usize, f64), AlertsError> {
    let threshold = (goal.thresholds_minutes[0] * 60) as f64;
    let met = |seconds: f64| {
        if goal.positive {
            seconds >= threshold
        } else {
            seconds < threshold
        }
    };
    let spans: Vec<(Date, Date)> = match goal.period {
        Period::Week => vec![(first, after)],
        Period::Day => {
            let mut days = Vec::new();
            let mut day = first;
            while day < after {
                days.push((day, add_days(day, 1)));
                day = add_days(day, 1);
            }
            days
        }
    };
    let (mut count, mut all) = (0, 0.0);
    for (start, end) in &spans {
        let totals = check::totals(
            source,
            calendar,
            calendar.day_start(*start),
            calendar.day_start(*end),
            hosts,
            false,
        )?;
        let seconds = totals.of(goal);
        all += seconds;
        if met(seconds) {
            count += 1;
        }
    }
    Ok((count, spans.len(), all))
}
