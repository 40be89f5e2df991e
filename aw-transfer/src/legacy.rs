//! Importing the Python aw-server's database (`aw_datastore::LegacyDatabase`
//! reads it): on the first start with a new database, as aw-server-rust
//! does, and with `aw-server import --legacy FILE` at any time.
//!
//! Both store through the import merge (`docs/API.md` §5): buckets are
//! created if missing, events already there are skipped, the privacy rules
//! in force apply. So a second run of the same file adds nothing, and a
//! run cut short is finished by running it again.
//!
//! The first start imports into a file beside the new database and gives
//! it the database's name only once the import is complete and closed, so
//! a start that is killed midway leaves no half-imported database: the
//! next start finds no database and imports again from the beginning.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::sync_channel;
use std::time::Instant;

use aw_datastore::{
    DatabaseKey, Datastore, DatastoreError, ImportSummary, LegacyDatabase, PreparedEvent,
};
use aw_models::Bucket;

use super::write::{ExportWriter, JsonWriter};

/// What an import of a legacy database did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LegacyImport {
    /// Buckets in the file.
    pub buckets: u64,
    /// Events in the file.
    pub events: u64,
    /// What the merge did with them.
    pub summary: ImportSummary,
    /// Events left out because they could not be read.
    pub unreadable: u64,
}

impl std::fmt::Display for LegacyImport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} buckets ({} created), {} events: {} stored, {} already there, {} dropped by privacy filters, {} unreadable",
            self.buckets,
            self.summary.buckets_created,
            self.events,
            self.summary.inserted,
            self.summary.skipped,
            self.summary.dropped,
            self.unreadable
        )
    }
}

/// What the reading thread hands to the storing one.
enum Job {
    Bucket(Bucket),
    Events(String, Vec<PreparedEvent>),
}

/// Imports every bucket and event of `legacy` into `datastore`. One thread
/// reads and prepares the next chunk while this one stores the last, so
/// memory holds a few chunks whatever the file's size. `progress` sees the
/// count of events handled so far.
pub fn import(
    legacy: LegacyDatabase,
    datastore: &Datastore,
    progress: &mut (dyn FnMut(u64) + Send),
) -> Result<LegacyImport, DatastoreError> {
    let buckets = legacy.buckets()?;
    let mut result = LegacyImport {
        buckets: buckets.len() as u64,
        events: buckets.iter().map(|bucket| bucket.events).sum(),
        ..LegacyImport::default()
    };
    let (jobs, queue) = sync_channel::<Job>(2);
    let read = std::thread::scope(|scope| {
        let reader = scope.spawn(move || {
            let mut unreadable = 0;
            for bucket in &buckets {
                if jobs.send(Job::Bucket(bucket.bucket.clone())).is_err() {
                    return Ok(unreadable);
                }
                let id = &bucket.bucket.id;
                legacy.read_events(bucket, |chunk| {
                    unreadable += chunk.unreadable;
                    let mut events = chunk
                        .events
                        .iter()
                        .map(PreparedEvent::new)
                        .collect::<Result<Vec<_>, _>>()?;
                    PreparedEvent::sort_oldest_first(&mut events);
                    // A closed queue means storing failed: stop reading.
                    jobs.send(Job::Events(id.clone(), events))
                        .map_err(|_| DatastoreError::Closed)
                })?;
            }
            Ok::<_, DatastoreError>(unreadable)
        });
        let mut handled = 0;
        let stored = (|| {
            for job in queue {
                match job {
                    Job::Bucket(bucket) => result.summary += datastore.import_bucket(bucket)?,
                    Job::Events(bucket_id, events) => {
                        handled += events.len() as u64;
                        result.summary += datastore.import_prepared(&bucket_id, events)?;
                        progress(handled);
                    }
                }
            }
            Ok::<_, DatastoreError>(())
        })();
        let read = reader
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        // A storage failure explains a reader stopped by it, so it wins.
        stored.and(read)
    })?;
    result.unreadable = read;
    Ok(result)
}

/// Writes `legacy` as an export document (`docs/API.md` §5) to `output`,
/// for a running server's `POST /api/0/import`. Returns the counts of
/// events written and left out as unreadable.
pub fn write_document(
    legacy: &LegacyDatabase,
    output: impl Write,
    progress: &mut dyn FnMut(u64),
) -> Result<(u64, u64), DatastoreError> {
    let mut writer = JsonWriter::new(output)?;
    let (mut written, mut unreadable) = (0, 0);
    for bucket in legacy.buckets()? {
        writer.bucket(&bucket.bucket)?;
        legacy.read_events(&bucket, |chunk| {
            unreadable += chunk.unreadable;
            for event in &chunk.events {
                writer.event(event)?;
            }
            written += chunk.events.len() as u64;
            progress(written);
            Ok(())
        })?;
    }
    Box::new(writer).finish()?;
    Ok((written, unreadable))
}

/// The first start's import (see the module doc): when `db_path` does not
/// exist and `source` does, imports `source` into a new database file and
/// puts it at `db_path`. A missing source is not worth a word above info;
/// a source that cannot be read gets a warning naming the file and the
/// server starts with an empty database as usual. Never fails the start.
pub fn import_on_first_start(source: &Path, db_path: &Path, key: Option<&DatabaseKey>) {
    if db_path.exists() {
        return;
    }
    if !source.exists() {
        log::info!(
            "No Python aw-server database at {}: nothing to import",
            source.display()
        );
        return;
    }
    let started = Instant::now();
    log::info!(
        "New database: importing the Python aw-server database {}",
        source.display()
    );
    match import_into_new(source, db_path, key) {
        Ok(Some(imported)) => log::info!(
            "Imported {}: {imported}, in {:.2} s",
            source.display(),
            started.elapsed().as_secs_f64()
        ),
        Ok(None) => log::warn!(
            "{} was created while {} was imported; the import was discarded. Run `aw-server import --legacy {}` to import it into it.",
            db_path.display(),
            source.display(),
            source.display()
        ),
        Err(error) => log::warn!(
            "Could not import the Python aw-server database {}: {error}. Nothing was imported; the server starts with a new database. Once the file can be read, run `aw-server import --legacy {}`.",
            source.display(),
            source.display()
        ),
    }
}

/// The file the first start imports into before it becomes `db_path`.
fn staging_path(db_path: &Path) -> PathBuf {
    let mut name = db_path.as_os_str().to_owned();
    name.push(".legacy-import");
    PathBuf::from(name)
}

/// Removes a database file and the files SQLite and our lock keep beside it.
fn remove_database_files(path: &Path) -> io::Result<()> {
    for suffix in ["", "-wal", "-shm", ".lock"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        match std::fs::remove_file(PathBuf::from(name)) {
            Err(error) if error.kind() != io::ErrorKind::NotFound => return Err(error),
            _ => {}
        }
    }
    Ok(())
}

/// Imports into the staging file, closes it, then links it to `db_path`
/// unless that appeared meanwhile (`Ok(None)`).
fn import_into_new(
    source: &Path,
    db_path: &Path,
    key: Option<&DatabaseKey>,
) -> Result<Option<LegacyImport>, DatastoreError> {
    let legacy = LegacyDatabase::open(source)?;
    let staging = staging_path(db_path);
    // Left by a start that was killed midway.
    remove_database_files(&staging)?;
    let datastore = Datastore::open_with_key(&staging, key)?;
    let total = legacy
        .buckets()?
        .iter()
        .map(|bucket| bucket.events)
        .sum::<u64>();
    let mut next_report = 0;
    let imported = import(legacy, &datastore, &mut |handled| {
        if handled >= next_report {
            log::info!("Imported {handled} of {total} events");
            next_report = handled + 100_000;
        }
    });
    let closed = datastore.close();
    let imported = match imported.and_then(|imported| closed.map(|()| imported)) {
        Ok(imported) => imported,
        Err(error) => {
            let _ = remove_database_files(&staging);
            return Err(error);
        }
    };
    // A clean close leaves no WAL; the database file alone is complete.
    // Linking (unlike renaming) never replaces a database that another
    // process created at `db_path` meanwhile.
    let placed = match std::fs::hard_link(&staging, db_path) {
        Ok(()) => true,
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => false,
        // A file system without hard links: a rename, checked first.
        Err(_) if !db_path.exists() => {
            std::fs::rename(&staging, db_path)?;
            true
        }
        Err(error) => return Err(error.into()),
    };
    remove_database_files(&staging)?;
    Ok(placed.then_some(imported))
}
