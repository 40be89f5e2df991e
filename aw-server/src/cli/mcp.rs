//! `aw-server mcp`: a Model Context Protocol server over stdio (rmcp), so
//! an assistant can answer questions about the user's time. Its tools only
//! read: `list_buckets`, `summary` and `search` (the `aw-summary` crate's
//! answers, as `GET /api/0/summary` and `/api/0/search` give them) and
//! `query` (a query2 program with the limits of `POST /api/0/query/`).
//!
//! It reads the running server (with the config's API key or `--token`,
//! a read token being enough) or, when none answers, the database file
//! opened read-only without a lock, so a server may start meanwhile.
//! Failures a caller can act on (a bad argument, a program's positioned
//! error, a server that went away) come back as tool errors with the
//! message; stdout carries only the protocol.

use std::sync::Arc;

use clap::Args;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{schemars, tool, tool_handler, tool_router, ServerHandler, ServiceExt};
use serde::Deserialize;
use serde_json::{json, Value};

use super::{connect_read_only, CliError, ConnectionArgs, SummaryFailure, Target};
use aw_summary::{Calendar, Params, SearchParams};

/// Flags of `mcp`.
#[derive(Debug, Clone, Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

/// Runs `mcp` until the client closes stdin.
pub fn run(args: McpArgs) -> Result<(), CliError> {
    let target = connect_read_only(&args.connection)?;
    let where_ = target.backend().describe();
    eprintln!("aw-server mcp: reading {where_}; speaking MCP on stdin and stdout");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|error| CliError(format!("cannot start the MCP runtime: {error}")))?;
    runtime.block_on(async move {
        let service = Activity::new(target)
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|error| CliError(format!("the MCP session failed to start: {error}")))?;
        service
            .waiting()
            .await
            .map_err(|error| CliError(format!("the MCP session failed: {error}")))?;
        Ok(())
    })
}

/// The MCP server: its tools over one target.
#[derive(Clone)]
struct Activity {
    target: Arc<Target>,
    #[allow(dead_code, reason = "read by the code #[tool_handler] writes")]
    tool_router: ToolRouter<Activity>,
}

/// The period of a tool's `start` and `end`: today without either; the
/// day after a `start` that is a date when `end` is left out (a `start`
/// that is a time needs an `end`: the summary says so).
fn period(start: Option<String>, end: Option<String>) -> (String, Option<String>) {
    let start = start.unwrap_or_else(|| "today".to_string());
    if end.is_some() {
        return (start, end);
    }
    let trimmed = start.trim().to_ascii_lowercase();
    let next = match trimmed.as_str() {
        "yesterday" => Some("today".to_string()),
        "today" => Some("tomorrow".to_string()),
        _ => chrono::NaiveDate::parse_from_str(&trimmed, "%Y-%m-%d")
            .ok()
            .and_then(|date| date.succ_opt())
            .map(|date| date.format("%Y-%m-%d").to_string()),
    };
    (start, next)
}

/// Arguments of `summary`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct SummaryArgs {
    /// First instant: a date like 2026-11-27, or today or yesterday (the
    /// start of that day, which begins at the user's start-of-day setting,
    /// 04:00 by default), or an RFC 3339 time like
    /// 2026-11-27T09:00:00+01:00. Default: today.
    #[serde(default)]
    start: Option<String>,
    /// End, exclusive: a date (the start of that day, so a single day D is
    /// start=D, end=the day after) or an RFC 3339 time. Default: the day
    /// after a start that is a date (so today alone without either).
    #[serde(default)]
    end: Option<String>,
    /// Comma-separated groupings: app, title, category, domain, url, host,
    /// day (per day with first and last activity), hour (hour of the local
    /// clock), events (the active events themselves). Default: app.
    #[serde(default)]
    by: Option<String>,
    /// One host name; all hosts summed when absent (see list_buckets).
    #[serde(default)]
    host: Option<String>,
    /// IANA time zone of days and hours, like Europe/Berlin; default the
    /// user's.
    #[serde(default)]
    tz: Option<String>,
    /// Rows per ranked list (default 100).
    #[serde(default)]
    limit: Option<usize>,
}

/// Arguments of `search`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct SearchArgs {
    /// The text window titles, tab titles or URLs contain (any letter case;
    /// not a pattern).
    text: String,
    /// First instant: a date (2026-11-27, today, yesterday) or an RFC 3339
    /// time. Default: today.
    #[serde(default)]
    start: Option<String>,
    /// End, exclusive: a date or an RFC 3339 time. Default: the day after
    /// a start that is a date.
    #[serde(default)]
    end: Option<String>,
    /// One host name; all hosts when absent.
    #[serde(default)]
    host: Option<String>,
    /// IANA time zone of the days; default the user's.
    #[serde(default)]
    tz: Option<String>,
    /// Most matches (default 100).
    #[serde(default)]
    limit: Option<usize>,
}

/// Arguments of `query`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct QueryArgs {
    /// A query2 program (ActivityWatch's query language): statements ending
    /// in `;`, the answer assigned to RETURN. Example:
    /// `events = query_bucket("aw-watcher-window_myhost"); RETURN = sum_durations(events);`
    program: String,
    /// Periods to run the program over, each `START/END` in RFC 3339, like
    /// 2026-11-27T00:00:00+01:00/2026-11-28T00:00:00+01:00. One result per
    /// period.
    timeperiods: Vec<String>,
}

#[tool_router]
impl Activity {
    fn new(target: Target) -> Activity {
        Activity {
            target: Arc::new(target),
            tool_router: Activity::tool_router(),
        }
    }

    #[tool(
        description = "List the buckets of activity data (one per watcher and host): id, \
        type (currentwindow, afkstatus, web.tab.current, ...), hostname and the time of \
        the last event. Host names found here are what `summary` and `search` take."
    )]
    async fn list_buckets(&self) -> CallToolResult {
        self.blocking(|target| {
            let buckets = target.backend().buckets()?;
            let list: Vec<Value> = buckets
                .values()
                .map(|bucket| {
                    json!({
                        "id": bucket.id,
                        "type": bucket.kind,
                        "hostname": bucket.hostname,
                        "client": bucket.client,
                        "first_event": bucket.metadata.start,
                        "last_event": bucket.metadata.end,
                    })
                })
                .collect();
            Ok(json!(list))
        })
        .await
    }

    #[tool(
        description = "Active time in a period, counted as the ActivityWatch dashboard \
        counts it (window time while the user was not AFK, categorized by the user's \
        categories; browser time inside the browser's windows), grouped by app, title, \
        category, domain, url, host, day or hour. Durations are seconds. Use it for \
        questions like 'how long did I spend in my editor this week' or 'when did I start \
        and stop working each day' (by=day)."
    )]
    async fn summary(&self, Parameters(args): Parameters<SummaryArgs>) -> CallToolResult {
        let (start, end) = period(args.start, args.end);
        let params = Params {
            start: Some(start),
            end,
            by: args.by,
            host: args.host,
            tz: args.tz.or_else(local_zone),
            limit: args.limit,
            categories: None,
        };
        self.blocking(move |target| {
            let summary = target
                .backend()
                .summary(&params)
                .map_err(|failure| match failure {
                    SummaryFailure::Argument(error) => CliError(error.to_string()),
                    SummaryFailure::Other(error) => error,
                })?;
            serde_json::to_value(summary).map_err(|error| CliError(error.to_string()))
        })
        .await
    }

    #[tool(
        description = "Find window titles, browser tab titles and URLs that contain a \
        text (any letter case) in a period, with the active time spent on each, the first \
        and last time seen, the hosts and the days. Durations are seconds."
    )]
    async fn search(&self, Parameters(args): Parameters<SearchArgs>) -> CallToolResult {
        let (start, end) = period(args.start, args.end);
        let params = SearchParams {
            text: Some(args.text),
            start: Some(start),
            end,
            host: args.host,
            tz: args.tz.or_else(local_zone),
            limit: args.limit,
        };
        self.blocking(move |target| {
            let found = target.backend().search(&params)?;
            serde_json::to_value(found).map_err(|error| CliError(error.to_string()))
        })
        .await
    }

    #[tool(
        description = "Run a query2 program (ActivityWatch's query language, as the web \
        dashboard sends to /api/0/query/) over one or more periods; one result per period. \
        Read-only, with the server's limits on time and size. Prefer `summary` for totals."
    )]
    async fn query(&self, Parameters(args): Parameters<QueryArgs>) -> CallToolResult {
        self.blocking(move |target| {
            let request = json!({"query": [args.program], "timeperiods": args.timeperiods});
            target.backend().query(&request)
        })
        .await
    }
}

impl Activity {
    /// Runs `work` on a blocking thread (HTTP and SQLite block); its value
    /// as pretty JSON text, its error as a tool error.
    async fn blocking(
        &self,
        work: impl FnOnce(&Target) -> Result<Value, CliError> + Send + 'static,
    ) -> CallToolResult {
        let target = Arc::clone(&self.target);
        let outcome = tokio::task::spawn_blocking(move || work(&target)).await;
        match outcome {
            Ok(Ok(value)) => {
                let text =
                    serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string());
                CallToolResult::success(vec![ContentBlock::text(text)])
            }
            Ok(Err(CliError(message))) => CallToolResult::error(vec![ContentBlock::text(message)]),
            Err(error) => CallToolResult::error(vec![ContentBlock::text(format!(
                "the tool failed: {error}"
            ))]),
        }
    }
}

#[tool_handler]
impl ServerHandler for Activity {
    fn get_info(&self) -> ServerConfig {
        let zone = local_zone().unwrap_or_else(|| "UTC".into());
        let today = Calendar::new(Some(&zone), None, None)
            .map(|calendar| calendar.today().to_string())
            .unwrap_or_default();
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("aw-server", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "Read-only access to the user's ActivityWatch data: which applications, window \
                 titles, categories and web sites they spent time on, and when. The user's time \
                 zone is {zone}; today is {today}. Periods take dates (YYYY-MM-DD, the start of \
                 that day) or RFC 3339 times; an end date is exclusive. Durations are seconds. \
                 Start with `summary` (by=app,category for a day or week; by=day for working \
                 hours); `list_buckets` names the hosts; `search` finds a title or site."
            ))
    }
}

/// This machine's IANA zone, as days are cut in it.
fn local_zone() -> Option<String> {
    Calendar::new(None, None, None)
        .ok()
        .map(|calendar| calendar.zone_name().to_string())
}
