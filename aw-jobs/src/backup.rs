//! Snapshots of the database into the backup folder: the names, the
//! schedule, the rotation and the status. The copy itself is the
//! datastore's (`Datastore::snapshot`: consistent while the server writes,
//! checked, complete under its name or not there).
//!
//! `POST /api/0/backup`, the `backup` command and the `[backup]` schedule
//! all write into the configured folder (the API takes no path, so a
//! request can only ever write there), one snapshot at a time
//! ([`Backups::take`]). Snapshots asked for are named apart from the
//! schedule's (`aw-server-manual-<time>.db`) and each kind is rotated
//! among its own only: after a good scheduled snapshot with the schedule
//! on ([`to_remove`]), the newest of each of the last `keep_daily` days
//! and of each of the last `keep_weekly` weeks stay; after a good one
//! asked for, the newest `keep_manual` ([`manual_to_remove`]). The one
//! just written always stays. A failed snapshot (a full disk) leaves no
//! file and removes none, so the last good one is never lost. Only files
//! with a snapshot's name are ever removed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration as StdDuration, Instant};

use aw_datastore::{Datastore, DatastoreError, Snapshot};
use aw_models::Timestamp;
use aw_threads::Next;
use chrono::{Datelike, NaiveDateTime};
use serde::Serialize;

use crate::schedule::{self, as_duration, in_a_while, lock};

/// The `[backup]` section as resolved (`config.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupSettings {
    /// Whether snapshots are taken on a schedule.
    pub enabled: bool,
    /// The folder snapshots are written into.
    pub dir: PathBuf,
    /// Time between scheduled snapshots.
    pub interval: StdDuration,
    /// Days whose newest snapshot is kept.
    pub keep_daily: u32,
    /// Weeks whose newest snapshot is kept.
    pub keep_weekly: u32,
    /// Snapshots asked for (not scheduled) that are kept.
    pub keep_manual: u32,
}

impl Default for BackupSettings {
    fn default() -> BackupSettings {
        BackupSettings {
            enabled: false,
            dir: PathBuf::new(),
            interval: StdDuration::from_secs(24 * 60 * 60),
            keep_daily: 7,
            keep_weekly: 4,
            keep_manual: 10,
        }
    }
}

/// What the name of a snapshot asked for has after `aw-server-`.
const MANUAL: &str = "manual-";

/// A snapshot's file name for `now`: `aw-server-2026-11-28T05-12-00Z.db`
/// for the schedule's, `aw-server-manual-2026-11-28T05-12-00Z.db` for one
/// asked for (no `:`, which some file systems refuse), so names sort by
/// time.
pub fn snapshot_name(now: Timestamp, manual: bool) -> String {
    format!(
        "aw-server-{}{}.db",
        if manual { MANUAL } else { "" },
        now.to_datetime().format("%Y-%m-%dT%H-%M-%SZ")
    )
}

/// The time in a snapshot's name (`aw-server-[manual-]<time>.db`, or
/// `…<time>-<n>.db` for a second one in the same second); `None` for any
/// other name.
pub fn time_of_name(name: &str) -> Option<Timestamp> {
    order_of_name(name).map(|(time, _, _)| time)
}

/// The time in a snapshot's name, its number within that second (1 for
/// none, then 2, 3...): the order snapshots were taken in, and whether it
/// was asked for.
fn order_of_name(name: &str) -> Option<(Timestamp, u32, bool)> {
    let stem = name.strip_prefix("aw-server-")?.strip_suffix(".db")?;
    let (manual, stem) = match stem.strip_prefix(MANUAL) {
        Some(rest) => (true, rest),
        None => (false, stem),
    };
    let (time, rest) = stem.split_at_checked(20)?;
    let number = match rest {
        "" => 1,
        rest => rest.strip_prefix('-')?.parse::<u32>().ok()?,
    };
    let parsed = NaiveDateTime::parse_from_str(time, "%Y-%m-%dT%H-%M-%SZ").ok()?;
    Some((
        Timestamp::from_datetime(parsed.and_utc()).ok()?,
        number,
        manual,
    ))
}

/// A snapshot in the folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Listed {
    /// Its file.
    pub path: PathBuf,
    /// The time in its name (when it was taken).
    pub time: Timestamp,
    /// Its size in bytes.
    pub bytes: u64,
    /// Whether it was asked for (else the schedule took it).
    pub manual: bool,
    /// Its number within the second of its name (1, 2...).
    #[serde(skip)]
    pub number: u32,
}

impl Listed {
    /// The order snapshots were taken in.
    fn order(&self) -> (Timestamp, u32) {
        (self.time, self.number)
    }
}

/// The snapshots in `folder`, oldest first; none when the folder does not
/// exist. Files without a snapshot's name (and `.partial` ones) are left
/// out.
pub fn list(folder: &Path) -> std::io::Result<Vec<Listed>> {
    let entries = match std::fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error),
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry?;
        let Some((time, number, manual)) = entry.file_name().to_str().and_then(order_of_name)
        else {
            continue;
        };
        let metadata = entry.metadata()?;
        if metadata.is_file() {
            found.push(Listed {
                path: entry.path(),
                time,
                bytes: metadata.len(),
                manual,
                number,
            });
        }
    }
    found.sort_by_key(Listed::order);
    Ok(found)
}

/// Which of `snapshots` (any order) the rotation removes: all but the
/// newest of each of the `keep_daily` most recent days that have one, the
/// newest of each of the `keep_weekly` most recent ISO weeks, and the
/// newest of all. Days and weeks are UTC.
pub fn to_remove(snapshots: &[Listed], keep_daily: u32, keep_weekly: u32) -> Vec<PathBuf> {
    let mut newest_first: Vec<&Listed> = snapshots.iter().collect();
    newest_first.sort_by_key(|snapshot| std::cmp::Reverse(snapshot.order()));
    let mut kept: BTreeSet<&Path> = BTreeSet::new();
    if let Some(newest) = newest_first.first() {
        kept.insert(&newest.path);
    }
    let mut days = BTreeSet::new();
    let mut weeks = BTreeSet::new();
    for snapshot in &newest_first {
        let date = snapshot.time.to_datetime().date_naive();
        if days.len() < keep_daily as usize && days.insert(date) {
            kept.insert(&snapshot.path);
        }
        let week = date.iso_week();
        if weeks.len() < keep_weekly as usize && weeks.insert((week.year(), week.week())) {
            kept.insert(&snapshot.path);
        }
    }
    newest_first
        .iter()
        .filter(|snapshot| !kept.contains(snapshot.path.as_path()))
        .map(|snapshot| snapshot.path.clone())
        .collect()
}

/// Which of the snapshots asked for (any order) the rotation removes: all
/// but the newest `keep`, and the newest of all.
pub fn manual_to_remove(snapshots: &[Listed], keep: u32) -> Vec<PathBuf> {
    let mut newest_first: Vec<&Listed> = snapshots.iter().collect();
    newest_first.sort_by_key(|snapshot| std::cmp::Reverse(snapshot.order()));
    newest_first
        .iter()
        .skip((keep as usize).max(1))
        .map(|snapshot| snapshot.path.clone())
        .collect()
}

/// What the last snapshot did.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// When it started.
    pub time: Timestamp,
    /// `ok` or `failed`.
    pub outcome: &'static str,
    /// The file written (when it succeeded).
    pub path: Option<PathBuf>,
    /// Its size in bytes (when it succeeded).
    pub bytes: Option<u64>,
    /// How long it took, in milliseconds.
    pub duration_ms: f64,
    /// Why it failed.
    pub error: Option<String>,
    /// Whether the schedule took it (else a request or the command did).
    pub scheduled: bool,
    /// Old snapshots the rotation removed after it.
    pub removed: Vec<PathBuf>,
}

/// What `GET /api/0/backup/status` answers.
#[derive(Debug, Clone, Serialize)]
pub struct BackupStatus {
    /// Whether the schedule runs (`[backup] enabled = true`).
    pub enabled: bool,
    /// The backup folder.
    pub dir: PathBuf,
    /// Seconds between scheduled snapshots.
    pub interval_seconds: u64,
    /// Days whose newest snapshot the rotation keeps.
    pub keep_daily: u32,
    /// Weeks whose newest snapshot the rotation keeps.
    pub keep_weekly: u32,
    /// Snapshots asked for that the rotation keeps.
    pub keep_manual: u32,
    /// Whether a snapshot is being written now.
    pub running: bool,
    /// The last snapshot since the server started, good or not.
    pub last: Option<Outcome>,
    /// When the schedule takes the next one.
    pub next: Option<Timestamp>,
    /// The snapshots in the folder, oldest first.
    pub snapshots: Vec<Listed>,
}

/// The server's snapshots: the settings, the status, and a lock that
/// keeps two snapshots from being written at once.
#[derive(Debug)]
pub struct Backups {
    /// `[backup]`.
    pub settings: BackupSettings,
    last: Mutex<Option<Outcome>>,
    next: Mutex<Option<Timestamp>>,
    running: Mutex<()>,
}

impl Backups {
    /// The snapshots of a server with these settings.
    pub fn new(settings: BackupSettings) -> Backups {
        Backups {
            settings,
            last: Mutex::new(None),
            next: Mutex::new(None),
            running: Mutex::new(()),
        }
    }

    /// Writes a snapshot into the folder after any being written, records
    /// and logs it, and rotates the snapshots of its kind: the
    /// schedule's when the schedule is on, those asked for always.
    pub fn take(&self, datastore: &Datastore, scheduled: bool) -> Result<Taken, DatastoreError> {
        let _running = lock(&self.running);
        let time = Timestamp::now();
        let clock = Instant::now();
        let result = take(datastore, &self.settings.dir, !scheduled);
        let mut outcome = Outcome {
            time,
            outcome: "ok",
            path: None,
            bytes: None,
            duration_ms: clock.elapsed().as_secs_f64() * 1000.0,
            error: None,
            scheduled,
            removed: Vec::new(),
        };
        let result = match result {
            Ok(snapshot) => {
                outcome.path = Some(snapshot.path.clone());
                outcome.bytes = Some(snapshot.bytes);
                if self.settings.enabled || !scheduled {
                    outcome.removed = self.rotate(&snapshot.path, !scheduled);
                }
                Ok(Taken {
                    snapshot,
                    removed: outcome.removed.clone(),
                })
            }
            Err(error) => {
                log::error!(
                    "Snapshot into {} failed, older snapshots kept: {error}",
                    self.settings.dir.display()
                );
                outcome.outcome = "failed";
                outcome.error = Some(error.to_string());
                Err(error)
            }
        };
        *lock(&self.last) = Some(outcome);
        result
    }

    /// Removes the snapshots of the kind of `written` (`manual`: asked
    /// for) that the rotation does not keep, never `written`; returns
    /// what it removed.
    fn rotate(&self, written: &Path, manual: bool) -> Vec<PathBuf> {
        let snapshots: Vec<Listed> = match list(&self.settings.dir) {
            Ok(snapshots) => snapshots
                .into_iter()
                .filter(|snapshot| snapshot.manual == manual)
                .collect(),
            Err(error) => {
                log::warn!("Cannot list the backup folder to rotate it: {error}");
                return Vec::new();
            }
        };
        let doomed = if manual {
            manual_to_remove(&snapshots, self.settings.keep_manual)
        } else {
            to_remove(
                &snapshots,
                self.settings.keep_daily,
                self.settings.keep_weekly,
            )
        };
        let mut removed = Vec::new();
        for path in doomed.into_iter().filter(|path| path != written) {
            match std::fs::remove_file(&path) {
                Ok(()) => {
                    log::info!("Rotation removed the old snapshot {}", path.display());
                    removed.push(path);
                }
                Err(error) => log::warn!("Cannot remove {}: {error}", path.display()),
            }
        }
        removed
    }

    /// The last snapshot since the server started, good or not; `None`
    /// before one. Unlike [`Backups::status`], it does not list the folder.
    pub fn last(&self) -> Option<Outcome> {
        lock(&self.last).clone()
    }

    /// Its settings.
    pub fn settings(&self) -> &BackupSettings {
        &self.settings
    }

    /// The status, with the folder listed now.
    pub fn status(&self) -> BackupStatus {
        let snapshots = list(&self.settings.dir).unwrap_or_else(|error| {
            log::warn!("Cannot list the backup folder: {error}");
            Vec::new()
        });
        BackupStatus {
            enabled: self.settings.enabled,
            dir: self.settings.dir.clone(),
            interval_seconds: self.settings.interval.as_secs(),
            keep_daily: self.settings.keep_daily,
            keep_weekly: self.settings.keep_weekly,
            keep_manual: self.settings.keep_manual,
            running: self.running.try_lock().is_err(),
            last: lock(&self.last).clone(),
            next: *lock(&self.next),
            snapshots,
        }
    }

    /// When the schedule's next snapshot is due at `now`: an interval
    /// after the newest of the schedule's in the folder, or now when there
    /// is none or it is due already.
    pub fn due(&self, now: Timestamp) -> Timestamp {
        let newest = list(&self.settings.dir).ok().and_then(|snapshots| {
            snapshots
                .iter()
                .rev()
                .find(|snapshot| !snapshot.manual)
                .map(|snapshot| snapshot.time)
        });
        match newest {
            Some(newest) => newest.saturating_add(as_duration(self.settings.interval)),
            None => now,
        }
    }
}

/// What a snapshot wrote, as a command reports it (from the server's
/// answer or from [`Taken`]), and the older snapshots rotation removed.
#[derive(Debug)]
pub struct Written {
    /// The snapshot's file.
    pub path: String,
    /// Its size.
    pub bytes: u64,
    /// How long it took.
    pub seconds: f64,
    /// The files rotation removed after it.
    pub removed: Vec<String>,
}

/// A snapshot written, and the old ones its rotation removed.
#[derive(Debug)]
pub struct Taken {
    /// The snapshot.
    pub snapshot: Snapshot,
    /// What the rotation removed after it.
    pub removed: Vec<PathBuf>,
}

/// Writes a snapshot into `folder` (created if missing) under a name of
/// the current time (`manual`: the name of one asked for), never
/// replacing one: a second snapshot in the same second gets `-2`, `-3`...
/// before `.db`.
pub fn take(
    datastore: &Datastore,
    folder: &Path,
    manual: bool,
) -> Result<Snapshot, DatastoreError> {
    if folder.as_os_str().is_empty() {
        return Err(DatastoreError::InvalidInput(
            "no backup folder is configured".to_string(),
        ));
    }
    std::fs::create_dir_all(folder)?;
    remove_stale_partials(folder);
    let name = snapshot_name(Timestamp::now(), manual);
    let stem = name.trim_end_matches(".db");
    let free = (1..100)
        .map(|n| match n {
            1 => folder.join(&name),
            n => folder.join(format!("{stem}-{n}.db")),
        })
        .find(|path| path.symlink_metadata().is_err())
        .ok_or_else(|| {
            DatastoreError::InvalidInput(format!(
                "too many snapshots named {stem} in {}",
                folder.display()
            ))
        })?;
    let snapshot = datastore.snapshot(&free)?;
    log::info!(
        "Snapshot of the database written: {} ({} bytes in {:.2} s)",
        snapshot.path.display(),
        snapshot.bytes,
        snapshot.took.as_secs_f64()
    );
    Ok(snapshot)
}

/// Age past which a snapshot's `.partial` file is a killed run's: a
/// snapshot writes its partial file from start to end within seconds (the
/// year's in under one), then only reads it for the check.
const STALE_PARTIAL: StdDuration = StdDuration::from_secs(60 * 60);

/// Removes the `.partial` files that killed snapshots left in `folder`
/// (each run names its own after the second it started, so none is
/// reused); recent ones may be another process's snapshot in progress.
fn remove_stale_partials(folder: &Path) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let is_partial = name
            .to_str()
            .and_then(|name| name.strip_suffix(".partial"))
            .and_then(time_of_name)
            .is_some();
        let stale = entry
            .metadata()
            .and_then(|metadata| metadata.modified())
            .is_ok_and(|modified| modified.elapsed().is_ok_and(|age| age > STALE_PARTIAL));
        if is_partial && stale {
            match std::fs::remove_file(entry.path()) {
                Ok(()) => log::info!(
                    "Removed {}, left by a snapshot that did not finish",
                    entry.path().display()
                ),
                Err(error) => log::warn!("Cannot remove {}: {error}", entry.path().display()),
            }
        }
    }
}

/// How often the sleeping schedule wakes to check whether the datastore
/// closed (it runs all day: rarely).
const CHECK: StdDuration = StdDuration::from_secs(5);
/// Time before a failed scheduled snapshot is tried again, at most.
const RETRY: StdDuration = StdDuration::from_secs(15 * 60);
/// Starts the `[backup]` schedule when it is enabled, until the datastore
/// closes: a snapshot when one is due (an interval after the newest of the
/// schedule's in the folder, so a restart does not take an extra one),
/// then one per interval; a failed one is tried again sooner.
pub fn start(datastore: &Datastore, backups: &std::sync::Arc<Backups>) {
    if !backups.settings.enabled {
        return;
    }
    let (datastore, backups) = (datastore.clone(), std::sync::Arc::clone(backups));
    schedule::start("aw-server-backup", CHECK, &datastore.clone(), move || {
        let now = Timestamp::now();
        let due = backups.due(now);
        if due > now {
            *lock(&backups.next) = Some(due);
            return Next::After(StdDuration::from_nanos(
                due.duration_since(now).nanos().max(0) as u64,
            ));
        }
        *lock(&backups.next) = Some(now);
        match backups.take(&datastore, true) {
            // The next is due an interval after this one.
            Ok(_) => Next::After(StdDuration::ZERO),
            Err(DatastoreError::Closed) => Next::Stop,
            Err(_) => {
                let wait = backups.settings.interval.min(RETRY);
                *lock(&backups.next) = Some(in_a_while(wait));
                Next::After(wait)
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_by_time_and_have_no_colon() {
        let time = Timestamp::parse("2026-11-28T05:12:09.5Z").unwrap();
        assert_eq!(
            snapshot_name(time, false),
            "aw-server-2026-11-28T05-12-09Z.db"
        );
        assert_eq!(
            snapshot_name(time, true),
            "aw-server-manual-2026-11-28T05-12-09Z.db"
        );
    }

    #[test]
    fn names_give_back_their_time() {
        let time = Timestamp::parse("2026-11-28T05:12:09Z").unwrap();
        assert_eq!(time_of_name(&snapshot_name(time, false)), Some(time));
        assert_eq!(
            order_of_name(&snapshot_name(time, true)),
            Some((time, 1, true))
        );
        assert_eq!(
            order_of_name("aw-server-manual-2026-11-28T05-12-09Z-3.db"),
            Some((time, 3, true))
        );
        assert_eq!(
            time_of_name("aw-server-2026-11-28T05-12-09Z-2.db"),
            Some(time)
        );
        for other in [
            "aw-server-2026-11-28T05-12-09Z.db.partial",
            "aw-server-2026-11-28T05-12-09Z-x.db",
            "sqlite.db",
            "aw-server-2026-13-28T05-12-09Z.db",
            "aw-server-.db",
        ] {
            assert_eq!(time_of_name(other), None, "{other}");
        }
    }

    fn at(text: &str) -> Listed {
        let time = Timestamp::parse(text).unwrap();
        Listed {
            path: PathBuf::from(snapshot_name(time, false)),
            time,
            bytes: 1,
            manual: false,
            number: 1,
        }
    }

    fn names(paths: &[PathBuf]) -> Vec<String> {
        let mut names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        names.sort();
        names
    }

    #[test]
    fn rotation_keeps_the_newest_of_each_recent_day_and_week() {
        // Two a day over 40 days, 2026-10-01 to 2026-11-09.
        let mut snapshots = Vec::new();
        for day in 0..40 {
            let date =
                chrono::NaiveDate::from_ymd_opt(2026, 10, 1).unwrap() + chrono::Days::new(day);
            for hour in ["06", "18"] {
                snapshots.push(at(&format!("{date}T{hour}:00:00Z")));
            }
        }
        let removed = to_remove(&snapshots, 7, 4);
        let kept: Vec<&Listed> = snapshots
            .iter()
            .filter(|s| !removed.contains(&s.path))
            .collect();
        let kept_names = names(&kept.iter().map(|s| s.path.clone()).collect::<Vec<_>>());
        // The evening one of each of the last 7 days (Nov 3..9), and the
        // newest of each of the 4 newest ISO weeks (Monday to Sunday): Nov 9
        // (a Monday, alone in its week), Nov 8, Nov 1 and Oct 25.
        let mut wanted: Vec<String> = (3..=9)
            .map(|day| format!("aw-server-2026-11-{day:02}T18-00-00Z.db"))
            .collect();
        for day in ["2026-11-01", "2026-10-25"] {
            wanted.push(format!("aw-server-{day}T18-00-00Z.db"));
        }
        wanted.sort();
        assert_eq!(kept_names, wanted);
        assert_eq!(removed.len(), 80 - 9);
    }

    #[test]
    fn rotation_always_keeps_the_newest() {
        let snapshots = vec![at("2026-11-01T00:00:00Z"), at("2026-11-02T00:00:00Z")];
        assert_eq!(
            names(&to_remove(&snapshots, 0, 0)),
            vec!["aw-server-2026-11-01T00-00-00Z.db".to_string()]
        );
        assert!(to_remove(&[], 7, 4).is_empty());
        // Two in the same second: the second (`-2`) is the newer, though
        // its name sorts first.
        let mut second = at("2026-11-02T00:00:00Z");
        second.path = PathBuf::from("aw-server-2026-11-02T00-00-00Z-2.db");
        second.number = 2;
        let snapshots = vec![at("2026-11-02T00:00:00Z"), second];
        assert_eq!(
            names(&to_remove(&snapshots, 1, 0)),
            vec!["aw-server-2026-11-02T00-00-00Z.db".to_string()]
        );
    }

    #[test]
    fn the_rotation_of_snapshots_asked_for_keeps_the_newest() {
        let snapshots: Vec<Listed> = (1..=5)
            .map(|day| at(&format!("2026-11-0{day}T10:00:00Z")))
            .collect();
        let removed = names(&manual_to_remove(&snapshots, 3));
        assert_eq!(
            removed,
            [
                "aw-server-2026-11-01T10-00-00Z.db",
                "aw-server-2026-11-02T10-00-00Z.db"
            ]
        );
        assert_eq!(manual_to_remove(&snapshots, 0).len(), 4, "the newest stays");
        assert!(manual_to_remove(&snapshots, 10).is_empty());
    }
}
