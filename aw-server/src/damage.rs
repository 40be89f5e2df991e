//! A damaged database at start: salvaged and said loudly, or,
//! for a file that is no database at all (a zeroed header, another key, a
//! stub shorter than a page), one exit with [`EXIT_UNREADABLE`] and a
//! message that names the file and what to run, never a restart loop (the
//! shipped systemd unit lists the status in `RestartPreventExitStatus=`).
//! The file is then left exactly as it is.
//!
//! The datastore checks the whole file after anything but its own clean
//! close (`Datastore::open`); the salvage is `aw_datastore::salvage`'s.

use std::path::Path;

use aw_datastore::salvage::{self, Health, SalvageReport};
use aw_datastore::{DatabaseKey, Datastore, DatastoreError};

/// The exit status of a start on a file that is not a database (`EX_DATAERR`).
pub const EXIT_UNREADABLE: i32 = 65;

/// What opening the database at start gave.
#[derive(Debug)]
#[allow(
    clippy::large_enum_variant,
    reason = "one value per start, unpacked at once: boxing the datastore saves nothing"
)]
pub enum Opened {
    /// Ready to serve; with the salvage's report if the file was damaged.
    Ready(Datastore, Option<SalvageReport>),
    /// The file is not a database this server can read, and why.
    Unreadable(String),
}

/// Opens the database at `path`, salvaging it first when it is damaged.
pub fn open(path: &Path, key: Option<&DatabaseKey>) -> Result<Opened, DatastoreError> {
    match Datastore::open_with_key(path, key) {
        Ok(datastore) => Ok(Opened::Ready(datastore, None)),
        Err(DatastoreError::Encryption(why)) => Ok(Opened::Unreadable(why)),
        Err(DatastoreError::Damaged { detail, .. }) => {
            log::error!("The database {} is damaged: {detail}", path.display());
            match salvage::check(path, key)? {
                Health::Unreadable(why) => return Ok(Opened::Unreadable(why)),
                Health::Healthy | Health::Damaged(_) => {}
            }
            log::error!("Salvaging every row that can still be read...");
            let report = salvage::salvage(path, key)?;
            for line in describe(&report) {
                log::error!("{line}");
            }
            let datastore = Datastore::open_with_key(path, key)?;
            Ok(Opened::Ready(datastore, Some(report)))
        }
        Err(error) => Err(error),
    }
}

/// What a salvage did, in lines for the log and the terminal.
pub fn describe(report: &SalvageReport) -> Vec<String> {
    let mut lines = vec![format!(
        "Salvaged {} events and {} other rows (settings, privacy rules, sync state) in {:.1} s; \
         the damaged file is kept at {}",
        report.events,
        report.key_values,
        report.took.as_secs_f64(),
        report.damaged.display()
    )];
    for bucket in &report.buckets {
        lines.push(match bucket.claimed {
            Some(claimed) => format!(
                "  {}: {} events recovered of the {} its index listed",
                bucket.id, bucket.recovered, claimed
            ),
            None => format!("  {}: {} events recovered", bucket.id, bucket.recovered),
        });
    }
    if !report.lost_event_ids.is_empty() {
        let lost: i64 = report
            .lost_event_ids
            .iter()
            .map(|(from, to)| to - from)
            .sum();
        lines.push(format!(
            "Event ids that could not be read: {} in {} range{} (new events get ids above {})",
            lost,
            report.lost_event_ids.len(),
            if report.lost_event_ids.len() == 1 {
                ""
            } else {
                "s"
            },
            report.highest_event_id
        ));
    }
    lines.push(
        "A snapshot may hold more: `aw-server backup --list`, then stop the server and \
         `aw-server restore FILE`"
            .to_string(),
    );
    lines
}

/// The message of a start refused on a file that cannot be read as a
/// database with the key given (`keyed`), or without one.
pub fn unreadable_message(path: &Path, why: &str, keyed: bool) -> String {
    let condition = if keyed {
        "If the password is right and the file is damaged beyond salvage"
    } else {
        "If it is damaged beyond salvage"
    };
    format!(
        "cannot start: {why}. The file {} was left as it is. {condition}, restore a snapshot \
         (`aw-server backup --list`, then `aw-server restore FILE --dbpath {}`), or move the \
         file away to start with an empty database.",
        path.display(),
        path.display()
    )
}
