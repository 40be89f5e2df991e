//! `aw-server report`: a summary of a day, week, month or any period
//! (`aw_summary`), as a table for the terminal, Markdown, CSV or the API's
//! JSON. Online it asks the running server's `GET /api/0/summary` in this
//! machine's time zone; offline it computes the same summary on the file.

use std::io::Write;
use std::path::PathBuf;

use aw_models::SettingValue;
use clap::{Args, ValueEnum};

use super::progress;
use super::{close, connect, CliError, ConnectionArgs, SummaryFailure, Target};
use aw_summary::calendar::{self, Calendar};
use aw_summary::{render, ArgumentError, Params, Summary};

/// Rows of each list in a table or Markdown, unless `--limit` says.
const SHORT_LIMIT: usize = 10;

/// How the report is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// Aligned columns for a terminal.
    Table,
    /// Markdown tables, to paste into notes.
    Md,
    /// CSV for a spreadsheet (one `--by` only; `--by day` is a work-hours sheet).
    Csv,
    /// The JSON of `GET /api/0/summary`.
    Json,
}

/// Flags of `report`.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// One day (YYYY-MM-DD; without a date, today). The default period.
    #[arg(long, value_name = "DATE", num_args = 0..=1, default_missing_value = "today",
          group = "period")]
    pub day: Option<String>,
    /// The week containing DATE (default this week), from the
    /// `startOfWeek` setting's day.
    #[arg(long, value_name = "DATE", num_args = 0..=1, default_missing_value = "today",
          group = "period")]
    pub week: Option<String>,
    /// The month containing DATE (default this month).
    #[arg(long, value_name = "DATE", num_args = 0..=1, default_missing_value = "today",
          group = "period")]
    pub month: Option<String>,
    /// Start of a period of your own: a date or an RFC 3339 time (with --end).
    #[arg(long, value_name = "T", requires = "end", group = "period")]
    pub start: Option<String>,
    /// Its end, exclusive: a date (that day's start) or an RFC 3339 time.
    #[arg(long, value_name = "T", requires = "start")]
    pub end: Option<String>,
    /// Groupings, comma-separated: app, title, category, domain, url,
    /// host, day, hour, events (default: app,category; app for csv,
    /// which writes one list).
    #[arg(long)]
    pub by: Option<String>,
    /// One host's activity (default: all hosts, summed). (`--host` names
    /// the server to ask.)
    #[arg(long, value_name = "HOST")]
    pub hostname: Option<String>,
    /// IANA time zone of days and hours (default: this machine's).
    #[arg(long)]
    pub tz: Option<String>,
    /// Rows of each ranked list (default 10 for table and md, 100 otherwise).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: ReportFormat,
    /// Output file, or - for stdout.
    #[arg(short, long, value_name = "FILE", default_value = "-")]
    pub output: PathBuf,
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

/// Runs `report`.
pub fn run(args: ReportArgs) -> Result<(), CliError> {
    let target = connect(&args.connection, false)?;
    let result = report(&target, &args);
    let closed = close(target);
    let text = result?;
    closed?;
    if args.output.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|error| CliError(format!("cannot write the report: {error}")))
    } else {
        std::fs::write(&args.output, text)
            .map_err(|error| CliError(format!("cannot write {}: {error}", args.output.display())))
    }
}

fn report(target: &Target, args: &ReportArgs) -> Result<String, CliError> {
    let setting =
        |key: &str| -> Result<Option<SettingValue>, CliError> { target.backend().setting(key) };
    let calendar = Calendar::new(
        args.tz.as_deref(),
        setting("startOfDay")?.as_ref(),
        setting("startOfWeek")?.as_ref(),
    )
    .map_err(flag_error)?;
    let (start, end) = period(args, &calendar).map_err(flag_error)?;
    let limit = args.limit.or(match args.format {
        ReportFormat::Table | ReportFormat::Md => Some(SHORT_LIMIT),
        ReportFormat::Csv | ReportFormat::Json => None,
    });
    let by_text = args.by.clone().unwrap_or_else(|| {
        match args.format {
            ReportFormat::Csv => "app",
            _ => "app,category",
        }
        .to_string()
    });
    let by = aw_summary::By::parse_list(&by_text).map_err(flag_error)?;
    if args.format == ReportFormat::Csv && by.len() != 1 {
        return Err(CliError(
            "--format csv writes one list: give one --by (--by day is a work-hours sheet)".into(),
        ));
    }
    let params = Params {
        start: Some(start),
        end: Some(end),
        by: Some(by_text),
        host: args.hostname.clone(),
        // The server's zone may not be this machine's.
        tz: Some(calendar.zone_name().to_string()),
        limit,
        categories: None,
    };
    let spinner = progress::spinner("Summing up".into());
    let summary: Summary = target
        .backend()
        .summary(&params)
        .map_err(|failure| match failure {
            SummaryFailure::Argument(error) => flag_error(error),
            SummaryFailure::Other(error) => error,
        })?;
    spinner.finish_and_clear();
    Ok(match args.format {
        ReportFormat::Table => render::table(&summary, &calendar),
        ReportFormat::Md => render::markdown(&summary, &calendar),
        ReportFormat::Csv => render::csv(&summary, &calendar).unwrap_or_default(),
        ReportFormat::Json => {
            let mut text = serde_json::to_string_pretty(&summary)
                .map_err(|error| CliError(format!("cannot write JSON: {error}")))?;
            text.push('\n');
            text
        }
    })
}

/// The period's `start` and `end` arguments.
fn period(args: &ReportArgs, calendar: &Calendar) -> Result<(String, String), ArgumentError> {
    let date = |argument: &'static str, text: &str| calendar.parse_date(argument, text);
    if let (Some(start), Some(end)) = (&args.start, &args.end) {
        return Ok((start.clone(), end.clone()));
    }
    let (first, next) = if let Some(week) = &args.week {
        let first = calendar.week_of(date("week", week)?);
        (first, calendar::add_days(first, 7))
    } else if let Some(month) = &args.month {
        let first = date("month", month)?.first_of_month();
        (first, calendar::next_month(first))
    } else {
        let day = date("day", args.day.as_deref().unwrap_or("today"))?;
        (day, calendar::add_days(day, 1))
    };
    Ok((first.to_string(), next.to_string()))
}

/// An argument error in the command's terms: `--tz: ...`.
fn flag_error(error: ArgumentError) -> CliError {
    let flag = match error.argument {
        "host" => "hostname",
        other => other,
    };
    CliError(format!("--{flag}: {}", error.message))
}
