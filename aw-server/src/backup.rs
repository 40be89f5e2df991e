//! Snapshots of the database into the backup folder: the name and the
//! folder are decided here, the copy is the datastore's
//! (`Datastore::snapshot`: consistent while the server writes, checked,
//! complete under its name or not there). `POST /api/0/backup` and the
//! `backup` command without `--to` write here; the API takes no path, so a
//! request can only ever write into the configured `[backup] dir`.

use std::path::Path;

use aw_datastore::{Datastore, DatastoreError, Snapshot};
use aw_models::Timestamp;

/// A snapshot's file name for `now`: `aw-server-2026-11-28T05-12-00Z.db`
/// (no `:`, which some file systems refuse), so names sort by time.
pub fn snapshot_name(now: Timestamp) -> String {
    format!(
        "aw-server-{}.db",
        now.to_datetime().format("%Y-%m-%dT%H-%M-%SZ")
    )
}

/// Writes a snapshot into `folder` (created if missing) under a name of
/// the current time, never replacing one: a second snapshot in the same
/// second gets `-2`, `-3`... before `.db`.
pub fn take(datastore: &Datastore, folder: &Path) -> Result<Snapshot, DatastoreError> {
    if folder.as_os_str().is_empty() {
        return Err(DatastoreError::InvalidInput(
            "no backup folder is configured".to_string(),
        ));
    }
    std::fs::create_dir_all(folder)?;
    let name = snapshot_name(Timestamp::now());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_by_time_and_have_no_colon() {
        let name = snapshot_name(Timestamp::parse("2026-11-28T05:12:09.5Z").unwrap());
        assert_eq!(name, "aw-server-2026-11-28T05-12-09Z.db");
    }
}
