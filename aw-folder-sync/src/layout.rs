//! Where the files of a sync folder are, in aw-sync's two layouts.
//!
//! aw-sync's daemon writes `<folder>/<device id>/test.db`; its `sync`
//! command writes `<folder>/<host name>/<device id>/test.db`. Every device
//! writes only the files under its own device id, so a file is the copy of
//! one device's buckets. This device pushes in the daemon layout
//! ([`SyncFolder::own_file`]) and pulls from both ([`find_sources`]).
//!
//! Folders and files whose names start with a dot are left alone: they are
//! the folder-sync tools' own (`.stfolder`, `.stversions`, Syncthing's
//! temporary `.syncthing.*.tmp` files), never a device's copy.

use std::fs;
use std::path::{Path, PathBuf};

use aw_models::Skipped;

/// A sync folder as seen by this device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncFolder {
    /// The folder that a folder-sync tool keeps equal on every device.
    pub folder: PathBuf,
    /// This device's id: its own files are under a folder of this name.
    pub device_id: String,
    /// This device's host name, recorded as the origin of its buckets.
    pub hostname: String,
}

/// The name of the file every device pushes to, as aw-sync names it.
pub const FILE_NAME: &str = "test.db";

impl SyncFolder {
    /// The file this device pushes to: `<folder>/<device id>/test.db`.
    pub fn own_file(&self) -> PathBuf {
        self.folder.join(&self.device_id).join(FILE_NAME)
    }
}

/// Another device's file found in the folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// The file.
    pub path: PathBuf,
    /// Its path inside the folder with `/` between parts (`dev/test.db`,
    /// `host/dev/test.db`): what the pull's progress is kept under.
    pub name: String,
    /// The device id: the name of the folder holding the file.
    pub device: String,
}

/// The other devices' files in `folder`, in both layouts, sorted by
/// name; the files of `own_device` are left out. What is not read is
/// reported in the second list, and the rest still found:
///
/// - a folder that cannot be listed;
/// - a conflict copy a folder-sync tool made beside a device's `test.db`
///   (Syncthing's `test.sync-conflict-<date>-<time>-<id>.db`, Dropbox's
///   and Nextcloud's `test (conflicted copy ...)`): two versions of one
///   device's history, of which only the device's own `test.db` counts;
/// - another `.db` file in a device's folder (aw-sync writes `test.db`);
/// - this device's id in a host's folder (`<host>/<own id>/test.db`, an
///   aw-sync copy of this device): never pulled back into itself;
/// - a device id claimed by more than one folder (two host folders, or
///   both layouts; aw-server-rust#683, where aw-sync read the largest file
///   and left the other device's history short): none of the claims is
///   read, since which one is the device's cannot be told from here and
///   reading both would store two versions of its newest events. The
///   report names them all, so the stale one can be deleted; the next
///   pass then reads the one left.
pub fn find_sources(folder: &Path, own_device: &str) -> (Vec<Source>, Vec<Skipped>) {
    let mut sources = Vec::new();
    let mut skipped = Vec::new();
    for (top, top_path) in subfolders(folder, "", &mut skipped) {
        if top == own_device {
            continue;
        }
        // Daemon layout: the folder is a device's.
        device_files(&top_path, &top, &top, &mut sources, &mut skipped);
        // `sync` layout: the folder is a host's, its folders devices'.
        for (device, device_path) in subfolders(&top_path, &top, &mut skipped) {
            let prefix = format!("{top}/{device}");
            if device == own_device {
                if device_path.join(FILE_NAME).is_file() {
                    skipped.push(Skipped {
                        name: format!("{prefix}/{FILE_NAME}"),
                        reason: "this device's own id (a copy aw-sync made of this device): \
                                 never pulled back into it"
                            .to_string(),
                    });
                }
                continue;
            }
            device_files(&device_path, &prefix, &device, &mut sources, &mut skipped);
        }
    }
    sources.sort_by(|a, b| a.name.cmp(&b.name));
    let mut claims: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for source in &sources {
        claims
            .entry(source.device.as_str())
            .or_default()
            .push(source.name.as_str());
    }
    let contested: Vec<(String, Vec<String>)> = claims
        .into_iter()
        .filter(|(_, names)| names.len() > 1)
        .map(|(device, names)| {
            (
                device.to_string(),
                names.into_iter().map(str::to_string).collect(),
            )
        })
        .collect();
    for (device, names) in &contested {
        for name in names {
            skipped.push(Skipped {
                name: name.clone(),
                reason: format!(
                    "device {device} is claimed by {} files ({}): none is read until only one \
                     is left; delete the stale one",
                    names.len(),
                    names.join(", ")
                ),
            });
        }
    }
    sources.retain(|source| !contested.iter().any(|(device, _)| *device == source.device));
    skipped.sort_by(|a, b| a.name.cmp(&b.name));
    (sources, skipped)
}

/// Whether a file name is a folder-sync tool's conflict copy: Syncthing's
/// `.sync-conflict-`, Dropbox's and Nextcloud's `(conflicted copy`,
/// ownCloud's and Nextcloud's `_conflict-`.
pub fn is_conflict_copy(file_name: &str) -> bool {
    let lower = file_name.to_ascii_lowercase();
    lower.contains("sync-conflict")
        || lower.contains("conflicted copy")
        || lower.contains("_conflict-")
}

/// The device's `test.db` in `folder`, if there is one; its conflict
/// copies and other `.db` files are reported.
fn device_files(
    folder: &Path,
    prefix: &str,
    device: &str,
    sources: &mut Vec<Source>,
    skipped: &mut Vec<Skipped>,
) {
    for (file, path) in entries(folder, prefix, skipped) {
        if !path.is_file() {
            continue;
        }
        let name = format!("{prefix}/{file}");
        if file == FILE_NAME {
            sources.push(Source {
                path,
                name,
                device: device.to_string(),
            });
        } else if is_conflict_copy(&file) {
            skipped.push(Skipped {
                name,
                reason: format!(
                    "a conflict copy made by the folder-sync tool: only {prefix}/{FILE_NAME} is \
                     read; delete this file"
                ),
            });
        } else if file.ends_with(".db") {
            skipped.push(Skipped {
                name,
                reason: format!("not {FILE_NAME}, the file every device writes"),
            });
        }
    }
}

/// The visible folders in `folder` (names and paths), sorted.
fn subfolders(folder: &Path, name: &str, skipped: &mut Vec<Skipped>) -> Vec<(String, PathBuf)> {
    entries(folder, name, skipped)
        .into_iter()
        .filter(|(_, path)| path.is_dir())
        .collect()
}

fn entries(folder: &Path, name: &str, skipped: &mut Vec<Skipped>) -> Vec<(String, PathBuf)> {
    let read = match fs::read_dir(folder) {
        Ok(read) => read,
        Err(error) => {
            skipped.push(Skipped {
                name: if name.is_empty() {
                    ".".to_string()
                } else {
                    name.to_string()
                },
                reason: format!("cannot read the folder: {error}"),
            });
            return Vec::new();
        }
    };
    let mut found: Vec<(String, PathBuf)> = read
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| {
            let file_name = entry.file_name().to_str()?.to_string();
            (!file_name.starts_with('.')).then(|| (file_name, entry.path()))
        })
        .collect();
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in files {
            let path = dir.path().join(file);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, b"").unwrap();
        }
        dir
    }

    fn names(skipped: &[Skipped]) -> Vec<&str> {
        skipped.iter().map(|s| s.name.as_str()).collect()
    }

    #[test]
    fn both_layouts_are_found_and_own_files_are_not() {
        let dir = tree(&[
            "dev-a/test.db",
            "me/test.db",
            "host-b/dev-b/test.db",
            "host-b/me/test.db",
            "dev-c/notes.txt",
            "dev-c/test.db-journal",
            ".stversions/dev-d/test.db",
            "dev-e/.syncthing.test.db.tmp",
        ]);
        let root = dir.path();
        let (sources, skipped) = find_sources(root, "me");
        let found: Vec<_> = sources
            .iter()
            .map(|s| (s.name.as_str(), s.device.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                ("dev-a/test.db", "dev-a"),
                ("host-b/dev-b/test.db", "dev-b")
            ]
        );
        assert_eq!(names(&skipped), ["host-b/me/test.db"]);
        assert!(skipped[0].reason.contains("own id"));
        let folder = SyncFolder {
            folder: root.to_path_buf(),
            device_id: "me".to_string(),
            hostname: "h".to_string(),
        };
        assert_eq!(folder.own_file(), root.join("me").join("test.db"));
    }

    #[test]
    fn conflict_copies_and_other_files_are_reported_not_read() {
        let dir = tree(&[
            "dev-a/test.db",
            "dev-a/test.sync-conflict-20261127-010203-ABCDEFG.db",
            "dev-a/test (conflicted copy 2026-11-27).db",
            "dev-a/test (conflicted copy 2026-11-27 010203)",
            "dev-a/test_conflict-20261127-010203.db",
            "dev-a/old.db",
        ]);
        let (sources, skipped) = find_sources(dir.path(), "me");
        assert_eq!(sources.len(), 1);
        assert_eq!(sources[0].name, "dev-a/test.db");
        assert_eq!(
            names(&skipped),
            [
                "dev-a/old.db",
                "dev-a/test (conflicted copy 2026-11-27 010203)",
                "dev-a/test (conflicted copy 2026-11-27).db",
                "dev-a/test.sync-conflict-20261127-010203-ABCDEFG.db",
                "dev-a/test_conflict-20261127-010203.db",
            ]
        );
        assert!(skipped[1..]
            .iter()
            .all(|s| s.reason.contains("conflict copy")));
    }

    #[test]
    fn a_device_claimed_twice_is_read_from_neither_folder() {
        // aw-server-rust#683: a host renamed, or aw-sync's two layouts.
        let dir = tree(&[
            "old-host/dev-x/test.db",
            "new-host/dev-x/test.db",
            "dev-y/test.db",
            "host/dev-y/test.db",
            "dev-z/test.db",
        ]);
        let (sources, skipped) = find_sources(dir.path(), "me");
        assert_eq!(sources.len(), 1);
        assert_eq!(sources[0].name, "dev-z/test.db");
        assert_eq!(
            names(&skipped),
            [
                "dev-y/test.db",
                "host/dev-y/test.db",
                "new-host/dev-x/test.db",
                "old-host/dev-x/test.db",
            ]
        );
        assert!(
            skipped[2]
                .reason
                .contains("new-host/dev-x/test.db, old-host/dev-x/test.db"),
            "{:?}",
            skipped[2]
        );
    }

    #[test]
    fn a_missing_folder_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let (sources, skipped) = find_sources(&dir.path().join("nope"), "me");
        assert!(sources.is_empty());
        assert_eq!(skipped.len(), 1);
    }
}
