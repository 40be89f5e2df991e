//! A summary as people read it: an aligned table for a terminal, Markdown
//! for notes, CSV for a spreadsheet (with `day` alone: a work-hours sheet
//! of date, first and last activity, active time and one column per
//! top-level category). Durations are written `H:MM:SS`, times in the
//! summary's zone.

use std::collections::HashMap;
use std::fmt::Write;

use super::calendar::Calendar;
use aw_models::summary::{DayRow, Row, Summary};

/// One list of a summary, as rows of cells with a header.
struct Table {
    title: String,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    /// Columns aligned to the right (numbers).
    right: Vec<bool>,
}

/// `H:MM:SS` of `seconds`, rounded to the second.
pub fn hms(seconds: f64) -> String {
    let total = seconds.max(0.0).round() as u64;
    format!("{}:{:02}:{:02}", total / 3600, total / 60 % 60, total % 60)
}

fn tables(summary: &Summary, calendar: &Calendar) -> Vec<Table> {
    let total = summary.duration;
    let share = |seconds: f64| {
        if total > 0.0 {
            format!("{:.1} %", seconds * 100.0 / total)
        } else {
            "-".to_string()
        }
    };
    let ranked = |title: &str, rows: &Option<Vec<Row>>, with_app: bool| {
        rows.as_ref().map(|rows| {
            let mut header = vec![title.to_string()];
            if with_app {
                header.push("app".into());
            }
            header.extend(["active".into(), "share".into()]);
            let mut right = vec![false; header.len()];
            let width = right.len();
            right[width - 2] = true;
            right[width - 1] = true;
            Table {
                title: format!("By {title}"),
                header,
                rows: rows
                    .iter()
                    .map(|row| {
                        let mut cells = vec![row.key.clone()];
                        if with_app {
                            cells.push(row.app.clone().unwrap_or_default());
                        }
                        cells.extend([hms(row.duration), share(row.duration)]);
                        cells
                    })
                    .collect(),
                right,
            }
        })
    };
    let mut tables: Vec<Table> = [
        ranked("app", &summary.app, false),
        ranked("title", &summary.title, true),
        ranked("category", &summary.category, false),
        ranked("domain", &summary.domain, false),
        ranked("url", &summary.url, false),
        ranked("host", &summary.host, false),
    ]
    .into_iter()
    .flatten()
    .collect();
    if let Some(days) = &summary.day {
        tables.push(day_table(days, calendar));
    }
    if let Some(hours) = &summary.hour {
        tables.push(Table {
            title: "By hour".into(),
            header: vec!["hour".into(), "active".into()],
            rows: hours
                .iter()
                .map(|row| vec![row.key.clone(), hms(row.duration)])
                .collect(),
            right: vec![false, true],
        });
    }
    if let Some(events) = &summary.events {
        tables.push(Table {
            title: "Events".into(),
            header: vec![
                "start".into(),
                "active".into(),
                "host".into(),
                "app".into(),
                "title".into(),
            ],
            rows: events
                .iter()
                .map(|event| {
                    let text = |key: &str| {
                        event
                            .data
                            .get(key)
                            .and_then(|v| v.as_str())
                            .unwrap_or_default()
                            .to_string()
                    };
                    vec![
                        calendar.clock(event.timestamp),
                        hms(event.duration),
                        event.host.clone(),
                        text("app"),
                        text("title"),
                    ]
                })
                .collect(),
            right: vec![false, true, false, false, false],
        });
    }
    tables
}

/// The work-hours sheet: a row per day, a column per top-level category
/// (longest first over the period).
fn day_table(days: &[DayRow], calendar: &Calendar) -> Table {
    let mut totals: HashMap<&str, f64> = HashMap::new();
    for day in days {
        for (name, seconds) in &day.categories {
            *totals.entry(name).or_default() += seconds;
        }
    }
    let mut names: Vec<&str> = totals.keys().copied().collect();
    names.sort_by(|a, b| totals[b].total_cmp(&totals[a]).then_with(|| a.cmp(b)));
    let mut header: Vec<String> = ["date", "first", "last", "active"]
        .map(String::from)
        .to_vec();
    header.extend(names.iter().map(|name| name.to_string()));
    let mut right = vec![false, false, false, true];
    right.extend(names.iter().map(|_| true));
    let clock =
        |time: Option<aw_models::Timestamp>| time.map(|t| calendar.clock(t)).unwrap_or_default();
    Table {
        title: "By day".into(),
        header,
        rows: days
            .iter()
            .map(|day| {
                let mut cells = vec![
                    day.date.clone(),
                    clock(day.first),
                    clock(day.last),
                    hms(day.duration),
                ];
                cells.extend(
                    names
                        .iter()
                        .map(|name| hms(day.categories.get(*name).copied().unwrap_or(0.0))),
                );
                cells
            })
            .collect(),
        right,
    }
}

fn heading(summary: &Summary, calendar: &Calendar) -> String {
    let hosts = if summary.hosts.is_empty() {
        "no host with window data".to_string()
    } else {
        summary.hosts.join(", ")
    };
    format!(
        "{} {} to {} {} ({}), {hosts}: {} active",
        calendar.date_of(summary.start),
        calendar.clock(summary.start),
        calendar.date_of(summary.end),
        calendar.clock(summary.end),
        summary.tz,
        hms(summary.duration)
    )
}

/// Aligned columns for a terminal.
pub fn table(summary: &Summary, calendar: &Calendar) -> String {
    let mut out = heading(summary, calendar);
    out.push('\n');
    for table in tables(summary, calendar) {
        let mut widths: Vec<usize> = table.header.iter().map(|h| h.chars().count()).collect();
        for row in &table.rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let mut text = String::from(" ");
            for ((cell, width), right) in cells.iter().zip(&widths).zip(&table.right) {
                let pad = width - cell.chars().count();
                if *right {
                    text.push_str(&" ".repeat(pad + 1));
                    text.push_str(cell);
                } else {
                    text.push(' ');
                    text.push_str(cell);
                    text.push_str(&" ".repeat(pad));
                }
                text.push(' ');
            }
            text.trim_end().to_string()
        };
        let _ = writeln!(out, "\n{}", table.title);
        let _ = writeln!(out, "{}", line(&table.header));
        for row in &table.rows {
            let _ = writeln!(out, "{}", line(row));
        }
        if table.rows.is_empty() {
            let _ = writeln!(out, "  (nothing)");
        }
    }
    out
}

/// Markdown tables.
pub fn markdown(summary: &Summary, calendar: &Calendar) -> String {
    let mut out = format!("**{}**\n", heading(summary, calendar));
    let escape = |cell: &str| cell.replace('|', "\\|").replace('\n', " ");
    for table in tables(summary, calendar) {
        let _ = writeln!(out, "\n### {}\n", table.title);
        let cells = |row: &[String]| {
            row.iter()
                .map(|c| escape(c))
                .collect::<Vec<_>>()
                .join(" | ")
        };
        let _ = writeln!(out, "| {} |", cells(&table.header));
        let rule: Vec<&str> = table
            .right
            .iter()
            .map(|r| if *r { "---:" } else { "---" })
            .collect();
        let _ = writeln!(out, "| {} |", rule.join(" | "));
        for row in &table.rows {
            let _ = writeln!(out, "| {} |", cells(row));
        }
    }
    out
}

/// A document of HTML tables (for e-mail: inline styles, no scripts, no
/// outside resources); every text escaped.
pub fn html(summary: &Summary, calendar: &Calendar) -> String {
    let mut out = format!(
        "<h2 style=\"font-family:sans-serif\">{}</h2>\n",
        escape_html(&heading(summary, calendar))
    );
    for table in tables(summary, calendar) {
        let _ = writeln!(
            out,
            "<h3 style=\"font-family:sans-serif\">{}</h3>",
            escape_html(&table.title)
        );
        out.push_str("<table style=\"border-collapse:collapse;font-family:sans-serif\">\n<tr>");
        for (cell, right) in table.header.iter().zip(&table.right) {
            let _ = write!(
                out,
                "<th style=\"{}\">{}</th>",
                cell_style(*right),
                escape_html(cell)
            );
        }
        out.push_str("</tr>\n");
        for row in &table.rows {
            out.push_str("<tr>");
            for (cell, right) in row.iter().zip(&table.right) {
                let _ = write!(
                    out,
                    "<td style=\"{}\">{}</td>",
                    cell_style(*right),
                    escape_html(cell)
                );
            }
            out.push_str("</tr>\n");
        }
        if table.rows.is_empty() {
            let _ = writeln!(
                out,
                "<tr><td colspan=\"{}\">(nothing)</td></tr>",
                table.header.len()
            );
        }
        out.push_str("</table>\n");
    }
    out
}

fn cell_style(right: bool) -> &'static str {
    if right {
        "padding:2px 8px;text-align:right"
    } else {
        "padding:2px 8px;text-align:left"
    }
}

/// `text` with `&`, `<`, `>` and quotes as entities.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// CSV (RFC 4180) of the summary's one list; `None` when it has more or
/// none.
pub fn csv(summary: &Summary, calendar: &Calendar) -> Option<String> {
    let mut tables = tables(summary, calendar);
    if tables.len() != 1 {
        return None;
    }
    let table = tables.remove(0);
    let field = |cell: &str| {
        if cell.contains([',', '"', '\n', '\r']) {
            format!("\"{}\"", cell.replace('"', "\"\""))
        } else {
            cell.to_string()
        }
    };
    let mut out = String::new();
    for row in std::iter::once(&table.header).chain(&table.rows) {
        let line: Vec<String> = row.iter().map(|c| field(c)).collect();
        out.push_str(&line.join(","));
        out.push_str("\r\n");
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use aw_models::Timestamp;

    #[test]
    fn durations_are_hours_minutes_seconds() {
        assert_eq!(hms(0.0), "0:00:00");
        assert_eq!(hms(8223.4), "2:17:03");
        assert_eq!(hms(90000.0), "25:00:00");
    }

    #[test]
    fn html_has_a_table_per_grouping_with_every_text_escaped() {
        let calendar = Calendar::new(Some("UTC"), None, None).unwrap();
        let row = |key: &str, duration: f64| Row {
            key: key.to_string(),
            duration,
            app: None,
            category: None,
        };
        let summary = Summary {
            start: Timestamp::from_nanos(0),
            end: Timestamp::from_nanos(86_400_000_000_000),
            tz: "UTC".to_string(),
            hosts: vec!["laptop".to_string()],
            duration: 5400.0,
            app: Some(vec![row("<script>", 3600.0), row("Tom & Jerry's", 1800.0)]),
            title: None,
            category: Some(vec![row("Work > Programming", 5400.0)]),
            domain: None,
            url: None,
            host: None,
            day: None,
            hour: None,
            events: None,
        };
        let html = html(&summary, &calendar);
        assert!(
            html.contains("<h3 style=\"font-family:sans-serif\">By app</h3>"),
            "{html}"
        );
        assert!(html.contains(">By category</h3>"), "{html}");
        assert!(html.contains(">&lt;script&gt;</td>"), "{html}");
        assert!(html.contains(">Tom &amp; Jerry&#39;s</td>"), "{html}");
        assert!(html.contains(">Work &gt; Programming</td><td style=\"padding:2px 8px;text-align:right\">1:30:00</td>"), "{html}");
        assert!(!html.contains("<script>"), "{html}");
    }
}
