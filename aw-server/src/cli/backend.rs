//! The one way a command reaches the data: [`Backend`], which the running
//! server (over HTTP, [`Server`]) and the database file ([`Local`]) both
//! implement, so each command is written once against it. What the two
//! do differently (a request, or the datastore's call with its progress
//! bar) is here, and nowhere else.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek};
use std::path::{Path, PathBuf};

use aw_datastore::{
    Datastore, ImportSummary, LegacyDatabase, PrivacyRules, RangeDeletion, RulesReport,
    PRIVACY_FILTERS_KEY,
};
use aw_hosts::Change;
use aw_models::{
    Bucket, CreatedToken, Event, HostInfo, HostReport, NewToken, PassReport, QueryRequest,
    SettingValue, TimeInterval, Timestamp, TokenInfo,
};
use aw_summary::{ArgumentError, Params, SearchParams, SearchResult, Summary, SummaryError};
use aw_transfer::legacy::{self, LegacyImport};
use aw_transfer::{import_validated, Sink, Streamed, TransferError};

use super::progress::{self, Unit};
use super::{CliError, Server};
use crate::auth::{list_tokens, make_token, AddError};
use crate::dirs;
use crate::endpoints::privacy::database_size;
use aw_jobs::backup::{BackupSettings, Written};

/// Events read per page of an export from the file: pages are read in
/// order, so one page (not a whole bucket) is in memory at a time.
const PAGE_SIZE: usize = 1000;

/// This device's id for a command on the database file: `explicit`
/// (`--device-id`), else the one the server stored beside its database.
pub fn device_id(explicit: Option<&str>) -> Result<String, CliError> {
    match explicit {
        Some(id) => Ok(id.to_string()),
        None => dirs::data_dir()
            .and_then(|dir| dirs::device_id(&dir))
            .map_err(|error| CliError(format!("cannot read the device id: {error}"))),
    }
}

/// The file's store as the server of this machine reads it for
/// summaries.
pub fn served(datastore: &Datastore) -> aw_summary::Served {
    aw_summary::Served {
        datastore: datastore.clone(),
        own_host: dirs::hostname(),
        cache: None,
    }
}

/// A summary that failed: an argument the summary refused (a command
/// names its flag), or anything else, said.
#[derive(Debug)]
pub enum SummaryFailure {
    /// A bad argument, found on the file.
    Argument(ArgumentError),
    /// Any other failure, the server's refusals included.
    Other(CliError),
}

impl From<CliError> for SummaryFailure {
    fn from(error: CliError) -> SummaryFailure {
        SummaryFailure::Other(error)
    }
}

/// A folder sync pass a command asks for.
#[derive(Debug, Clone)]
pub struct SyncRequest {
    /// The folder (absolute).
    pub folder: PathBuf,
    /// Whether `--sync-dir` named it (a server must sync with it).
    pub folder_given: bool,
    /// The way the pass goes.
    pub mode: aw_models::SyncMode,
    /// The buckets it takes (`None`: all, or the configured ones).
    pub buckets: Option<Vec<String>>,
    /// Events ending before this are left out.
    pub start: Option<Timestamp>,
    /// Offline: the configured buckets, when `buckets` is `None`.
    pub configured_buckets: Option<Vec<String>>,
    /// Offline: `--device-id`.
    pub device_id: Option<String>,
    /// Offline: `[sync] allow_plaintext_copy`.
    pub allow_plaintext_copy: bool,
}

/// What a command may ask of where the data is.
pub trait Backend: Send + Sync {
    /// Where the data is, for messages: "the server at …", "the database
    /// file …".
    fn describe(&self) -> String;
    /// Every bucket, by id.
    fn buckets(&self) -> Result<BTreeMap<String, Bucket>, CliError>;
    /// A bucket's event count.
    fn count(&self, bucket_id: &str) -> Result<u64, CliError>;
    /// Each event of a bucket, oldest first, to `each` (whose error, a
    /// write's, ends the export as it is).
    fn export_events(
        &self,
        bucket: &Bucket,
        each: &mut dyn FnMut(&Event) -> Result<(), CliError>,
    ) -> Result<(), CliError>;
    /// A checked export document into the store (`name` for messages).
    fn import_document(
        &self,
        document: &File,
        buckets: &[Bucket],
        events: u64,
        name: &str,
    ) -> Result<ImportSummary, CliError>;
    /// A Python aw-server database into the store.
    fn import_legacy(&self, legacy: LegacyDatabase) -> Result<LegacyImport, CliError>;
    /// A setting; `None` when unset.
    fn setting(&self, key: &str) -> Result<Option<SettingValue>, CliError>;
    /// A summary (`docs/API.md` §3.13).
    fn summary(&self, params: &Params) -> Result<Summary, SummaryFailure>;
    /// A search.
    fn search(&self, params: &SearchParams) -> Result<SearchResult, CliError>;
    /// A query2 request (`{"query", "timeperiods"}`): one result per period.
    fn query(&self, request: &serde_json::Value) -> Result<serde_json::Value, CliError>;
    /// Makes a token; `None` when the name is taken. The flag: whether it
    /// is the first credential. `has_key`: the config file sets an API key.
    fn add_token(
        &self,
        request: &NewToken,
        has_key: bool,
    ) -> Result<(Option<CreatedToken>, bool), CliError>;
    /// Every token, by name.
    fn tokens(&self) -> Result<Vec<TokenInfo>, CliError>;
    /// Revokes a token; false when there is none of that name.
    fn revoke_token(&self, name: &str) -> Result<bool, CliError>;
    /// Deletes `[start, end)` of a bucket, or says what it would.
    fn delete_range(
        &self,
        bucket_id: &str,
        start: Timestamp,
        end: Timestamp,
        dry_run: bool,
    ) -> Result<RangeDeletion, CliError>;
    /// Applies the stored privacy rules to history, or says what it would.
    fn apply_privacy(&self, dry_run: bool) -> Result<Vec<RulesReport>, CliError>;
    /// Gives the space of deleted events back: the sizes before and after.
    fn vacuum(&self) -> Result<(u64, u64), CliError>;
    /// A snapshot asked for into the backup folder (`settings`: the
    /// config file's, for the file).
    fn snapshot(&self, settings: BackupSettings) -> Result<Written, CliError>;
    /// A folder sync pass.
    fn sync(&self, request: &SyncRequest) -> Result<PassReport, CliError>;
    /// The hosts (`aw_hosts::hosts`).
    fn hosts(&self) -> Result<Vec<HostInfo>, CliError>;
    /// A rename or merge of hosts, after a snapshot into the backup
    /// folder (`settings`: the config file's, for the file).
    fn change_hosts(
        &self,
        change: &Change,
        dry_run: bool,
        settings: BackupSettings,
    ) -> Result<HostReport, CliError>;
    /// Makes `alias` a name of `host`.
    fn set_host_alias(&self, alias: &str, host: &str) -> Result<(), CliError>;
    /// Ends an alias.
    fn unset_host_alias(&self, alias: &str) -> Result<(), CliError>;
}

/// The database file, opened by this process.
#[derive(Debug)]
pub struct Local {
    /// The open datastore (holding the file's lock, unless read-only).
    pub datastore: Datastore,
    /// Its file.
    pub path: PathBuf,
    /// Opened read-only, without the lock.
    pub read_only: bool,
}

fn store_error(error: aw_datastore::DatastoreError) -> CliError {
    CliError(format!("the database failed: {error}"))
}

impl Backend for Local {
    fn describe(&self) -> String {
        let read_only = if self.read_only { " (read-only)" } else { "" };
        format!("the database file {}{read_only}", self.path.display())
    }

    fn buckets(&self) -> Result<BTreeMap<String, Bucket>, CliError> {
        self.datastore
            .buckets()
            .wait()
            .map_err(|error| CliError(format!("cannot list the buckets: {error}")))
    }

    fn count(&self, bucket_id: &str) -> Result<u64, CliError> {
        self.datastore
            .count_events(bucket_id, None, None)
            .wait()
            .map_err(|error| CliError(format!("reading bucket '{bucket_id}' failed: {error}")))
    }

    fn export_events(
        &self,
        bucket: &Bucket,
        each: &mut dyn FnMut(&Event) -> Result<(), CliError>,
    ) -> Result<(), CliError> {
        let mut after: Option<Event> = None;
        loop {
            let page = self
                .datastore
                .events_page(&bucket.id, after.as_ref(), PAGE_SIZE)
                .wait()
                .map_err(|error| {
                    CliError(format!("reading bucket '{}' failed: {error}", bucket.id))
                })?;
            for event in &page {
                each(event)?;
            }
            if page.len() < PAGE_SIZE {
                return Ok(());
            }
            after = page.into_iter().last();
        }
    }

    fn import_document(
        &self,
        document: &File,
        buckets: &[Bucket],
        events: u64,
        name: &str,
    ) -> Result<ImportSummary, CliError> {
        let bar = progress::bar(Some(events), Unit::Events, format!("Importing {name}"));
        let reader = aw_transfer::document::reader(document)
            .map_err(|error| CliError(format!("{name}: {error}")))?;
        let summary =
            import_validated(Streamed(reader), buckets, &self.datastore, &mut |summary| {
                bar.set_position(summary.inserted + summary.skipped + summary.dropped)
            })
            .map_err(|error| CliError(format!("{name}: import failed: {error}")))?;
        bar.finish_and_clear();
        Ok(summary)
    }

    fn import_legacy(&self, legacy: LegacyDatabase) -> Result<LegacyImport, CliError> {
        let name = legacy.path().display().to_string();
        let failed =
            |error: &dyn std::fmt::Display| CliError(format!("{name}: import failed: {error}"));
        let buckets = legacy.buckets().map_err(|error| failed(&error))?;
        let events = buckets.iter().map(|bucket| bucket.events).sum();
        let bar = progress::bar(Some(events), Unit::Events, format!("Importing {name}"));
        let imported = legacy::import(legacy, &self.datastore, &mut |handled| {
            bar.set_position(handled)
        })
        .map_err(|error| failed(&error))?;
        bar.finish_and_clear();
        Ok(imported)
    }

    fn setting(&self, key: &str) -> Result<Option<SettingValue>, CliError> {
        self.datastore
            .setting(key)
            .wait()
            .map_err(|error| CliError(format!("cannot read the settings: {error}")))
    }

    fn summary(&self, params: &Params) -> Result<Summary, SummaryFailure> {
        aw_summary::summarize(&served(&self.datastore), params).map_err(|error| match error {
            SummaryError::Argument(error) => SummaryFailure::Argument(error),
            other => SummaryFailure::Other(CliError(format!("the summary failed: {other}"))),
        })
    }

    fn search(&self, params: &SearchParams) -> Result<SearchResult, CliError> {
        aw_summary::search(&served(&self.datastore), params)
            .map_err(|error| CliError(error.to_string()))
    }

    fn query(&self, request: &serde_json::Value) -> Result<serde_json::Value, CliError> {
        let request: QueryRequest = serde_json::from_value(request.clone())
            .map_err(|error| CliError(format!("timeperiods: {error}")))?;
        let periods: &[TimeInterval] = &request.timeperiods;
        let text = aw_query::query_json(&request.program(), periods, &self.datastore)
            .map_err(|error| CliError(error.to_string()))?;
        serde_json::from_str(&text).map_err(|error| CliError(error.to_string()))
    }

    fn add_token(
        &self,
        request: &NewToken,
        has_key: bool,
    ) -> Result<(Option<CreatedToken>, bool), CliError> {
        let first = !has_key && self.datastore.tokens().map_err(store_error)?.is_empty();
        let made =
            make_token(&self.datastore, request, has_key, Timestamp::now()).map_err(|error| {
                match error {
                    AddError::Store(error) => store_error(error),
                    error => CliError(error.to_string()),
                }
            })?;
        Ok((made, first))
    }

    fn tokens(&self) -> Result<Vec<TokenInfo>, CliError> {
        list_tokens(&self.datastore).map_err(store_error)
    }

    fn revoke_token(&self, name: &str) -> Result<bool, CliError> {
        self.datastore.remove_token(name).map_err(store_error)
    }

    fn delete_range(
        &self,
        bucket_id: &str,
        start: Timestamp,
        end: Timestamp,
        dry_run: bool,
    ) -> Result<RangeDeletion, CliError> {
        let failed = |error| CliError(format!("{bucket_id}: {error}"));
        let preview = self
            .datastore
            .preview_range_deletion(bucket_id, start, end)
            .map_err(failed)?;
        if dry_run {
            return Ok(preview);
        }
        let bar = progress::bar(
            Some(preview.deleted + preview.trimmed),
            Unit::Events,
            format!("Deleting from {bucket_id}"),
        );
        let done = self
            .datastore
            .delete_range(bucket_id, start, end, &mut |done| {
                bar.set_position(done.deleted + done.trimmed)
            })
            .map_err(failed)?;
        bar.finish_and_clear();
        Ok(done)
    }

    fn apply_privacy(&self, dry_run: bool) -> Result<Vec<RulesReport>, CliError> {
        let datastore = &self.datastore;
        let failed = |error| CliError(format!("applying the privacy filters failed: {error}"));
        // The bar counts the events of the buckets the rules apply to: the
        // stored rules that can be used, as the datastore applies them (it
        // logs those it leaves out when it opens).
        let rules = datastore
            .setting(PRIVACY_FILTERS_KEY)
            .wait()
            .map_err(failed)?
            .map(|value| PrivacyRules::compile_stored(&value).0)
            .unwrap_or_default();
        let mut total = 0;
        for bucket_id in datastore.buckets().wait().map_err(failed)?.into_keys() {
            if rules.applies_to(&bucket_id) {
                total += datastore
                    .count_events(&bucket_id, None, None)
                    .wait()
                    .map_err(failed)?;
            }
        }
        let bar = progress::bar(
            Some(total),
            Unit::Events,
            "Applying the privacy filters".to_string(),
        );
        let mut before = 0;
        let mut current = (String::new(), 0);
        let mut follow = |report: &RulesReport| {
            if report.bucket_id != current.0 {
                before += current.1;
                current.0.clone_from(&report.bucket_id);
            }
            current.1 = report.outcome.examined;
            bar.set_position(before + current.1);
        };
        let reports = if dry_run {
            datastore.preview_privacy_rules(&mut follow)
        } else {
            datastore.apply_privacy_rules(&mut follow)
        }
        .map_err(failed)?;
        bar.finish_and_clear();
        Ok(reports)
    }

    fn vacuum(&self) -> Result<(u64, u64), CliError> {
        let path = &self.path;
        let before = database_size(path);
        let free = free_space(path);
        eprintln!(
            "Vacuuming {}: it needs about {} of free disk space ({} free)",
            path.display(),
            progress::megabytes(before),
            free.map_or_else(|| "unknown".to_string(), progress::megabytes)
        );
        if free.is_some_and(|free| free < before) {
            return Err(CliError(format!(
                "not enough free disk space next to {} to vacuum it",
                path.display()
            )));
        }
        let bar = progress::bar(None, Unit::Bytes, "Vacuuming".to_string());
        self.datastore
            .vacuum()
            .map_err(|error| CliError(format!("vacuum failed: {error}")))?;
        bar.finish_and_clear();
        Ok((before, database_size(path)))
    }

    fn snapshot(&self, settings: BackupSettings) -> Result<Written, CliError> {
        let bar = progress::bar(None, Unit::Bytes, "Writing a snapshot".to_string());
        let taken = aw_jobs::backup::Backups::new(settings)
            .take(&self.datastore, false)
            .map_err(|error| CliError(format!("the snapshot failed: {error}")))?;
        bar.finish_and_clear();
        Ok(Written {
            path: taken.snapshot.path.display().to_string(),
            bytes: taken.snapshot.bytes,
            seconds: taken.snapshot.took.as_secs_f64(),
            removed: taken
                .removed
                .iter()
                .map(|path| path.display().to_string())
                .collect(),
        })
    }

    fn sync(&self, request: &SyncRequest) -> Result<PassReport, CliError> {
        let device_id = device_id(request.device_id.as_deref())?;
        let folder = aw_folder_sync::SyncFolder {
            folder: request.folder.clone(),
            device_id,
            hostname: crate::dirs::hostname(),
        };
        let filter = aw_folder_sync::SyncFilter {
            buckets: request
                .buckets
                .clone()
                .or(request.configured_buckets.clone()),
            start: request.start,
        };
        let mut bar: Option<(String, indicatif::ProgressBar)> = None;
        let result = aw_jobs::sync::run_pass(
            &self.datastore,
            &folder,
            request.mode,
            &filter,
            request.allow_plaintext_copy,
            &mut |step| {
                if bar.as_ref().is_none_or(|(stage, _)| *stage != step.stage) {
                    if let Some((_, old)) = bar.take() {
                        old.finish_and_clear();
                    }
                    bar = Some((
                        step.stage.clone(),
                        progress::bar(step.total, Unit::Events, step.stage.clone()),
                    ));
                }
                if let Some((_, current)) = &bar {
                    current.set_position(step.done);
                }
            },
        );
        if let Some((_, current)) = bar {
            current.finish_and_clear();
        }
        result.map_err(|error| CliError(format!("sync failed: {error}")))
    }

    fn hosts(&self) -> Result<Vec<HostInfo>, CliError> {
        aw_hosts::hosts(&self.datastore).map_err(hosts_error)
    }

    fn change_hosts(
        &self,
        change: &Change,
        dry_run: bool,
        settings: BackupSettings,
    ) -> Result<HostReport, CliError> {
        let backups = aw_jobs::backup::Backups::new(settings);
        let mut snapshot = || {
            backups
                .take(&self.datastore, false)
                .map(|taken| taken.snapshot.path.display().to_string())
                .map_err(|error| format!("no snapshot was written: {error}"))
        };
        let bar = progress::bar(None, Unit::Events, "Moving events".to_string());
        let report = aw_hosts::change(
            &self.datastore,
            change,
            dry_run,
            &mut snapshot,
            &mut |done, total| {
                bar.set_length(total);
                bar.set_position(done);
            },
        );
        bar.finish_and_clear();
        report.map_err(hosts_error)
    }

    fn set_host_alias(&self, alias: &str, host: &str) -> Result<(), CliError> {
        aw_hosts::set_alias(&self.datastore, alias, host).map_err(hosts_error)
    }

    fn unset_host_alias(&self, alias: &str) -> Result<(), CliError> {
        aw_hosts::unset_alias(&self.datastore, alias).map_err(hosts_error)
    }
}

fn hosts_error(error: aw_hosts::HostsError) -> CliError {
    CliError(error.to_string())
}

impl Backend for Server {
    fn describe(&self) -> String {
        format!("the server at {}", self.base())
    }

    fn buckets(&self) -> Result<BTreeMap<String, Bucket>, CliError> {
        Server::buckets(self)
    }

    fn count(&self, bucket_id: &str) -> Result<u64, CliError> {
        Server::count(self, bucket_id)
    }

    fn export_events(
        &self,
        bucket: &Bucket,
        each: &mut dyn FnMut(&Event) -> Result<(), CliError>,
    ) -> Result<(), CliError> {
        let reader = BufReader::with_capacity(256 * 1024, self.export(&bucket.id)?);
        let mut sink = Each { each, failed: None };
        let walked = aw_transfer::walk(reader, &mut sink);
        if let Some(error) = sink.failed {
            return Err(error);
        }
        walked.map_err(|error| {
            CliError(format!(
                "reading the export of bucket '{}' from {} failed: {error}",
                bucket.id,
                self.base()
            ))
        })
    }

    fn import_document(
        &self,
        document: &File,
        _buckets: &[Bucket],
        _events: u64,
        name: &str,
    ) -> Result<ImportSummary, CliError> {
        send_document(self, document, name)
    }

    fn import_legacy(&self, legacy: LegacyDatabase) -> Result<LegacyImport, CliError> {
        let name = legacy.path().display().to_string();
        let failed =
            |error: &dyn std::fmt::Display| CliError(format!("{name}: import failed: {error}"));
        let buckets = legacy.buckets().map_err(|error| failed(&error))?;
        let events = buckets.iter().map(|bucket| bucket.events).sum();
        let bar = progress::bar(Some(events), Unit::Events, format!("Reading {name}"));
        let mut document = tempfile::tempfile().map_err(|error| failed(&error))?;
        let (_, unreadable) =
            legacy::write_document(&legacy, BufWriter::new(&mut document), &mut |written| {
                bar.set_position(written)
            })
            .map_err(|error| failed(&error))?;
        bar.finish_and_clear();
        document.rewind().map_err(|error| failed(&error))?;
        let summary = send_document(self, &document, &name)?;
        Ok(LegacyImport {
            buckets: buckets.len() as u64,
            events,
            summary,
            unreadable,
        })
    }

    fn setting(&self, key: &str) -> Result<Option<SettingValue>, CliError> {
        Server::setting(self, key)
    }

    fn summary(&self, params: &Params) -> Result<Summary, SummaryFailure> {
        Ok(Server::summary(self, params)?)
    }

    fn search(&self, params: &SearchParams) -> Result<SearchResult, CliError> {
        Server::search(self, params)
    }

    fn query(&self, request: &serde_json::Value) -> Result<serde_json::Value, CliError> {
        Server::query(self, request)
    }

    fn add_token(
        &self,
        request: &NewToken,
        _has_key: bool,
    ) -> Result<(Option<CreatedToken>, bool), CliError> {
        let first = !self.access()?.authenticated;
        Ok((Server::add_token(self, request)?, first))
    }

    fn tokens(&self) -> Result<Vec<TokenInfo>, CliError> {
        Server::tokens(self)
    }

    fn revoke_token(&self, name: &str) -> Result<bool, CliError> {
        Server::revoke_token(self, name)
    }

    fn delete_range(
        &self,
        bucket_id: &str,
        start: Timestamp,
        end: Timestamp,
        dry_run: bool,
    ) -> Result<RangeDeletion, CliError> {
        let bar = progress::bar(None, Unit::Events, format!("Deleting from {bucket_id}"));
        let done = Server::delete_range(self, bucket_id, start, end, dry_run)?;
        bar.finish_and_clear();
        Ok(done)
    }

    fn apply_privacy(&self, dry_run: bool) -> Result<Vec<RulesReport>, CliError> {
        let bar = progress::bar(
            None,
            Unit::Events,
            "Applying the privacy filters".to_string(),
        );
        let reports = Server::apply_privacy(self, dry_run)?;
        bar.finish_and_clear();
        Ok(reports)
    }

    fn vacuum(&self) -> Result<(u64, u64), CliError> {
        eprintln!(
            "Vacuuming through the server at {}: it needs free disk space about the size of \
             the database file, and writes wait until it is done",
            self.base()
        );
        let bar = progress::bar(None, Unit::Bytes, "Vacuuming".to_string());
        let sizes = Server::vacuum(self)?;
        bar.finish_and_clear();
        Ok(sizes)
    }

    fn snapshot(&self, _settings: BackupSettings) -> Result<Written, CliError> {
        let bar = progress::bar(None, Unit::Bytes, "Writing a snapshot".to_string());
        let written = self.backup()?;
        bar.finish_and_clear();
        Ok(written)
    }

    fn sync(&self, request: &SyncRequest) -> Result<PassReport, CliError> {
        let status = self.sync_status()?;
        let Some(configured) = status.folder else {
            return Err(CliError(format!(
                "the server at {} has no [sync] section in its config file: add one with the \
                 folder, or stop the server and run this command again to sync the database file",
                self.base()
            )));
        };
        if request.folder_given && configured != request.folder {
            return Err(CliError(format!(
                "the server at {} syncs with {}, not {}: change its [sync] folder, or stop it \
                 and run this command again to sync the database file",
                self.base(),
                configured.display(),
                request.folder.display()
            )));
        }
        let bar = progress::bar(
            None,
            Unit::Events,
            format!("Syncing with {}", configured.display()),
        );
        let report = Server::sync(
            self,
            request.mode,
            request.buckets.as_deref(),
            request.start,
        );
        bar.finish_and_clear();
        report
    }

    fn hosts(&self) -> Result<Vec<HostInfo>, CliError> {
        Server::hosts(self)
    }

    fn change_hosts(
        &self,
        change: &Change,
        dry_run: bool,
        _settings: BackupSettings,
    ) -> Result<HostReport, CliError> {
        let bar = progress::bar(None, Unit::Events, "Moving events".to_string());
        let report = Server::change_hosts(self, change, dry_run);
        bar.finish_and_clear();
        report
    }

    fn set_host_alias(&self, alias: &str, host: &str) -> Result<(), CliError> {
        Server::set_host_alias(self, alias, host)
    }

    fn unset_host_alias(&self, alias: &str) -> Result<(), CliError> {
        Server::unset_host_alias(self, alias)
    }
}

/// Streams an export document file to the server's import.
fn send_document(server: &Server, document: &File, name: &str) -> Result<ImportSummary, CliError> {
    let size = document
        .metadata()
        .map_err(|error| CliError(format!("{name}: {error}")))?
        .len();
    let bar = progress::bar(Some(size), Unit::Bytes, format!("Sending {name}"));
    let mut reading = Counted {
        inner: BufReader::with_capacity(256 * 1024, document),
        bar: &bar,
    };
    let summary = server
        .import(&mut reading, size)
        .map_err(|error| CliError(format!("{name}: {error}")))?;
    bar.finish_and_clear();
    Ok(summary)
}

/// A reader that moves a byte-counting progress bar.
pub(super) struct Counted<'a, R> {
    /// What is read.
    pub inner: R,
    /// The bar it moves.
    pub bar: &'a indicatif::ProgressBar,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.bar.inc(read as u64);
        Ok(read)
    }
}

/// The events of an export document walked from the server, each to a
/// command's callback; the callback's own error is kept as it is.
struct Each<'a> {
    each: &'a mut dyn FnMut(&Event) -> Result<(), CliError>,
    failed: Option<CliError>,
}

impl Sink for Each<'_> {
    fn bucket_start(&mut self, _index: usize) -> Result<(), TransferError> {
        Ok(())
    }
    fn event(&mut self, _index: usize, event: Event) -> Result<(), TransferError> {
        (self.each)(&event).map_err(|error| {
            let message = error.0.clone();
            self.failed = Some(error);
            TransferError::Failed(message)
        })
    }
    fn bucket_end(&mut self, _index: usize, _bucket: Bucket) -> Result<(), TransferError> {
        Ok(())
    }
}

/// Bytes free on the file system of `path`, when the system says.
fn free_space(path: &Path) -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let folder = path
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())?;
        let stats = rustix::fs::statvfs(folder).ok()?;
        Some(stats.f_bavail.saturating_mul(stats.f_frsize))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        None
    }
}
