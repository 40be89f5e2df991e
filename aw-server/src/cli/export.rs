//! `aw-server export`: buckets and their events to a file or stdout, as
//! the export document, NDJSON or CSV (`transfer::write`).
//!
//! Offline, events are read with `Datastore::events_page`; online, each
//! bucket's `GET /api/0/buckets/{id}/export` is parsed as it arrives
//! (`transfer::walk`). Either way one page or one event is in memory at a
//! time. `--start`/`--end` keep the events that overlap the range (end at
//! or after `--start`, start at or before `--end`), unclipped, so an
//! export of a range re-imports as the same events.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use aw_models::{Bucket, Event, Timestamp};
use clap::Args;
use indicatif::ProgressBar;

use super::progress::{self, Unit};
use super::{close, connect, parse_time, CliError, ConnectionArgs, Target};
use aw_transfer::{ExportWriter, Format};

/// `--format`: the formats of `aw_transfer::Format`, as flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// The export document of the web UI and aw-client.
    Json,
    /// One bucket or event per line.
    Ndjson,
    /// A table of events with a column per data key.
    Csv,
}

impl From<ExportFormat> for Format {
    fn from(format: ExportFormat) -> Format {
        match format {
            ExportFormat::Json => Format::Json,
            ExportFormat::Ndjson => Format::Ndjson,
            ExportFormat::Csv => Format::Csv,
        }
    }
}

/// Flags of `export`.
#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// Export only this bucket (repeat for more); default: every bucket.
    #[arg(long = "bucket", value_name = "ID")]
    pub buckets: Vec<String>,
    /// Only events ending at or after this time (RFC 3339 or YYYY-MM-DD).
    #[arg(long, value_parser = parse_time, value_name = "T")]
    pub start: Option<Timestamp>,
    /// Only events starting at or before this time (RFC 3339 or YYYY-MM-DD).
    #[arg(long, value_parser = parse_time, value_name = "T")]
    pub end: Option<Timestamp>,
    /// Output format.
    #[arg(long, value_enum, default_value = "json")]
    pub format: ExportFormat,
    /// Output file, or - for stdout.
    #[arg(short, long, value_name = "FILE", default_value = "-")]
    pub output: PathBuf,
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

/// Runs `export`.
pub fn run(args: ExportArgs) -> Result<(), CliError> {
    let started = Instant::now();
    let target = connect(&args.connection, false)?;
    let buckets = select(&target, &args.buckets)?;
    let to_stdout = args.output.as_os_str() == "-";
    let reader_gone = Arc::new(AtomicBool::new(false));
    let result = write_all(&target, &buckets, &args, to_stdout, &reader_gone);
    let closed = close(target);
    let events = match result {
        Ok(events) => events,
        // `export | head`: the reader had what it wanted. Like other
        // Unix tools, stop quietly and successfully.
        Err(_) if reader_gone.load(Ordering::Relaxed) => return closed,
        Err(error) => {
            if !to_stdout {
                // Leave no half-written export that looks like a whole one.
                let _ = std::fs::remove_file(&args.output);
            }
            return Err(error);
        }
    };
    closed?;
    eprintln!(
        "Exported {} buckets, {events} events in {:.1} s",
        buckets.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The buckets to export, in id order or as named; a missing one is an
/// error.
fn select(target: &Target, wanted: &[String]) -> Result<Vec<Bucket>, CliError> {
    let mut all = target.backend().buckets()?;
    if wanted.is_empty() {
        return Ok(all.into_values().collect());
    }
    let mut selected = Vec::with_capacity(wanted.len());
    for id in wanted {
        if selected.iter().any(|bucket: &Bucket| &bucket.id == id) {
            continue;
        }
        match all.remove(id) {
            Some(bucket) => selected.push(bucket),
            None => {
                return Err(CliError(format!(
                    "no bucket '{id}'; the buckets are: {}",
                    all.keys().cloned().collect::<Vec<_>>().join(", ")
                )))
            }
        }
    }
    Ok(selected)
}

fn write_all(
    target: &Target,
    buckets: &[Bucket],
    args: &ExportArgs,
    to_stdout: bool,
    reader_gone: &Arc<AtomicBool>,
) -> Result<u64, CliError> {
    let total = buckets
        .iter()
        .map(|bucket| target.backend().count(&bucket.id))
        .sum::<Result<u64, CliError>>()?;
    let output: Box<dyn Write> = if to_stdout {
        let stdout = Stdout {
            inner: io::stdout().lock(),
            reader_gone: Arc::clone(reader_gone),
        };
        Box::new(BufWriter::with_capacity(256 * 1024, stdout))
    } else {
        let file = File::create(&args.output).map_err(|error| write_error(&args.output, error))?;
        Box::new(BufWriter::with_capacity(256 * 1024, file))
    };
    let output_name = if to_stdout {
        Path::new("stdout")
    } else {
        &args.output
    };
    let mut writer = aw_transfer::writer(args.format.into(), output)
        .map_err(|error| write_error(output_name, error))?;
    let bar = progress::bar(Some(total), Unit::Events, "Exporting".into());
    let mut filter = Filter {
        start: args.start,
        end: args.end,
        writer: &mut *writer,
        bar: &bar,
        written: 0,
    };
    for bucket in buckets {
        filter
            .writer
            .bucket(bucket)
            .map_err(|error| write_error(output_name, error))?;
        target.backend().export_events(bucket, &mut |event| {
            filter
                .event(event)
                .map_err(|error| write_error(output_name, error))
        })?;
    }
    let written = filter.written;
    writer
        .finish()
        .map_err(|error| write_error(output_name, error))?;
    bar.finish_and_clear();
    Ok(written)
}

/// Standard output that notes when its reader went away (a closed pipe).
struct Stdout {
    inner: io::StdoutLock<'static>,
    reader_gone: Arc<AtomicBool>,
}

impl Stdout {
    fn note(&self, result: io::Result<usize>) -> io::Result<usize> {
        if matches!(&result, Err(error) if error.kind() == io::ErrorKind::BrokenPipe) {
            self.reader_gone.store(true, Ordering::Relaxed);
        }
        result
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let result = self.inner.write(buf);
        self.note(result)
    }

    fn flush(&mut self) -> io::Result<()> {
        let result = self.inner.flush().map(|()| 0);
        self.note(result).map(|_| ())
    }
}

fn write_error(path: &Path, error: io::Error) -> CliError {
    CliError(format!("cannot write {}: {error}", path.display()))
}

/// Keeps the events overlapping `[start, end]` and writes them.
struct Filter<'a> {
    start: Option<Timestamp>,
    end: Option<Timestamp>,
    writer: &'a mut dyn ExportWriter,
    bar: &'a ProgressBar,
    written: u64,
}

impl Filter<'_> {
    fn event(&mut self, event: &Event) -> io::Result<()> {
        self.bar.inc(1);
        let after_start = self.start.is_none_or(|start| event.end() >= start);
        let before_end = self.end.is_none_or(|end| event.timestamp <= end);
        if after_start && before_end {
            self.writer.event(event)?;
            self.written += 1;
        }
        Ok(())
    }
}
