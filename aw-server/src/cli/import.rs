//! `aw-server import FILE...`: export documents (from this server,
//! aw-server-rust, the Python server or the web UI's export button) and
//! NDJSON exports, merged into the target (`docs/API.md` §5: existing buckets keep
//! their fields, events already there are skipped, ids are never reused).
//!
//! Every file is checked completely before anything is stored (pass 1 of
//! `transfer::document`; NDJSON is first converted, line by line, into an
//! export document in a temp file), so a malformed file stores nothing and
//! its error names the file, line and column. Then each file is imported:
//! offline by pass 2 into the datastore, online by streaming the document
//! to `POST /api/0/import` (which checks it again and stores it the same
//! way). Memory stays bounded by a chunk of events either way.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek};
use std::path::{Path, PathBuf};
use std::time::Instant;

use aw_datastore::{ImportSummary, LegacyDatabase};
use aw_models::Bucket;
use clap::Args;

use super::backend::Counted;
use super::progress::{self, Unit};
use super::{close, connect, CliError, ConnectionArgs, Target};
use aw_transfer::document::{reader, Tally};
use aw_transfer::legacy::LegacyImport;
use aw_transfer::ndjson::{self, NdjsonError};
use aw_transfer::walk;

/// Flags of `import`.
#[derive(Debug, Clone, Args)]
pub struct ImportArgs {
    /// Export documents (JSON) or NDJSON exports to import; with
    /// `--legacy`, Python aw-server databases.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The files are databases of the Python aw-server
    /// (`peewee-sqlite.v2.db`, in `~/.local/share/activitywatch/aw-server/`).
    #[arg(long)]
    pub legacy: bool,
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

/// A file that passed pass 1.
struct Checked {
    path: PathBuf,
    /// The export document, rewound: the file itself, or the temp file an
    /// NDJSON file was converted into.
    document: File,
    buckets: Vec<Bucket>,
    events: u64,
}

/// Runs `import`.
pub fn run(args: ImportArgs) -> Result<(), CliError> {
    let started = Instant::now();
    if args.legacy {
        return run_legacy(args, started);
    }
    // Every file is checked before the target is reached: a bad file
    // creates no database file (a new --dbpath stays absent).
    let checked = args
        .files
        .iter()
        .map(|path| check(path))
        .collect::<Result<Vec<_>, _>>()?;
    let new_file = args
        .connection
        .dbpath
        .as_ref()
        .filter(|path| !path.exists())
        .cloned();
    let target = connect(&args.connection, true)?;
    let result = import_all(&target, checked);
    let closed = close(target);
    if result.is_err() {
        if let Some(path) = &new_file {
            remove_new_database(path);
        }
    }
    let total = result?;
    closed?;
    eprintln!(
        "Imported {} file{}: {} buckets created, {} events stored, {} skipped as already there, {} dropped by privacy filters, in {:.1} s",
        args.files.len(),
        if args.files.len() == 1 { "" } else { "s" },
        total.buckets_created,
        total.inserted,
        total.skipped,
        total.dropped,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Removes a database file this command made for an import that failed,
/// and the files beside it, so no empty database is left behind.
fn remove_new_database(path: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal", ".lock"] {
        let mut side = path.as_os_str().to_os_string();
        side.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(side));
    }
}

fn import_all(target: &Target, checked: Vec<Checked>) -> Result<ImportSummary, CliError> {
    let mut total = ImportSummary::default();
    for file in checked {
        total += import(target, file)?;
    }
    Ok(total)
}

/// Pass 1 of one file.
fn check(path: &Path) -> Result<Checked, CliError> {
    let name = path.display();
    let io_error = |error: io::Error| CliError(format!("{name}: {error}"));
    let mut file = File::open(path).map_err(io_error)?;
    if is_csv_export(&mut file).map_err(io_error)? {
        return Err(CliError(format!(
            "{name} is a CSV export, which keeps no bucket types, clients or hosts: it cannot \
             be imported. Export with --format json or --format ndjson to move data between \
             servers; nothing imported"
        )));
    }
    let size = file.metadata().map_err(io_error)?.len();
    let mut document = if is_ndjson(&mut file).map_err(io_error)? {
        let bar = progress::bar(Some(size), Unit::Bytes, format!("Reading {name}"));
        let mut converted = BufWriter::new(tempfile::tempfile().map_err(io_error)?);
        ndjson::to_document(BufReader::new(file), &mut converted, |read| {
            bar.set_position(read)
        })
        .map_err(|error| match error {
            NdjsonError::Invalid { .. } => CliError(format!("{name}: {error}; nothing imported")),
            NdjsonError::Io(error) => io_error(error),
        })?;
        bar.finish_and_clear();
        converted
            .into_inner()
            .map_err(|error| io_error(error.into_error()))?
    } else {
        file
    };
    document.rewind().map_err(io_error)?;
    let size = document.metadata().map_err(io_error)?.len();
    let bar = progress::bar(Some(size), Unit::Bytes, format!("Checking {name}"));
    let mut tally = Tally::default();
    let reading = Counted {
        inner: reader(&document).map_err(|error| CliError(format!("{name}: {error}")))?,
        bar: &bar,
    };
    walk(BufReader::with_capacity(256 * 1024, reading), &mut tally)
        .map_err(|error| CliError(format!("{name}: {error}; nothing imported")))?;
    bar.finish_and_clear();
    document.rewind().map_err(io_error)?;
    Ok(Checked {
        path: path.to_path_buf(),
        document,
        buckets: tally.buckets,
        events: tally.events,
    })
}

/// Pass 2 of one checked file.
fn import(target: &Target, file: Checked) -> Result<ImportSummary, CliError> {
    let name = file.path.display().to_string();
    target
        .backend()
        .import_document(&file.document, &file.buckets, file.events, &name)
}

/// `import --legacy`: every file is opened and checked before anything is
/// stored, then each is imported (`transfer::legacy`): offline straight
/// into the datastore, online as an export document sent to the server.
fn run_legacy(args: ImportArgs, started: Instant) -> Result<(), CliError> {
    let legacies = args
        .files
        .iter()
        .map(|path| {
            LegacyDatabase::open(path)
                .map_err(|error| CliError(format!("{error}; nothing imported")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let target = connect(&args.connection, true)?;
    let mut total = LegacyImport::default();
    let mut result = Ok(());
    for legacy in legacies {
        match target.backend().import_legacy(legacy) {
            Ok(part) => {
                total.buckets += part.buckets;
                total.events += part.events;
                total.unreadable += part.unreadable;
                total.summary += part.summary;
            }
            Err(error) => {
                result = Err(error);
                break;
            }
        }
    }
    let closed = close(target);
    result?;
    closed?;
    eprintln!(
        "Imported {} Python aw-server database{}: {total}, in {:.1} s",
        args.files.len(),
        if args.files.len() == 1 { "" } else { "s" },
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Whether the file's first key is NDJSON's `bucket` or `bucket_id`
/// rather than the document's `buckets`. Leaves the file rewound.
fn is_ndjson(file: &mut File) -> io::Result<bool> {
    let text = head_of(file)?;
    let text = text.trim_start_matches('\u{feff}').trim_start();
    let Some(rest) = text.strip_prefix('{') else {
        return Ok(false);
    };
    let rest = rest.trim_start();
    Ok(["\"bucket\"", "\"bucket_id\""].iter().any(|key| {
        rest.strip_prefix(key)
            .is_some_and(|after| after.trim_start().starts_with(':'))
    }))
}

/// The first bytes of `file`, as text; the file is rewound.
fn head_of(file: &mut File) -> io::Result<String> {
    let mut head = Vec::with_capacity(256);
    file.by_ref().take(256).read_to_end(&mut head)?;
    file.rewind()?;
    Ok(String::from_utf8_lossy(&head).into_owned())
}

/// Whether `file` starts as the CSV export does (`bucket,id,timestamp,
/// duration`, then the data keys).
fn is_csv_export(file: &mut File) -> io::Result<bool> {
    let text = head_of(file)?;
    Ok(text
        .trim_start_matches('\u{feff}')
        .starts_with("bucket,id,timestamp,duration"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn the_first_key_tells_the_format() {
        let cases = [
            ("{\"buckets\": {}}", false),
            ("\u{feff} \n{ \"bucket\" : {}}\n", true),
            ("{\"bucket_id\": \"b\"}", true),
            ("[]", false),
            ("", false),
        ];
        for (text, ndjson) in cases {
            let mut file = tempfile::tempfile().unwrap();
            file.write_all(text.as_bytes()).unwrap();
            file.rewind().unwrap();
            assert_eq!(is_ndjson(&mut file).unwrap(), ndjson, "{text:?}");
        }
    }
}
