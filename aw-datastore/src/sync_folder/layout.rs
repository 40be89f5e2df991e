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

/// Something in the folder that is not read, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Skipped {
    /// Its path inside the folder.
    pub name: String,
    /// Why it is skipped.
    pub reason: String,
}

/// The other devices' `.db` files in `folder`, in both layouts, sorted by
/// name; files of `own_device` are left out. A folder that cannot be read
/// is reported in the second list, and the rest still found.
pub fn find_sources(folder: &Path, own_device: &str) -> (Vec<Source>, Vec<Skipped>) {
    let mut sources = Vec::new();
    let mut skipped = Vec::new();
    for (top, top_path) in subfolders(folder, "", &mut skipped) {
        if top == own_device {
            continue;
        }
        // Daemon layout: the folder is a device's.
        for (file, path) in db_files(&top_path, &top, &mut skipped) {
            sources.push(Source {
                path,
                name: format!("{top}/{file}"),
                device: top.clone(),
            });
        }
        // `sync` layout: the folder is a host's, its folders devices'.
        for (device, device_path) in subfolders(&top_path, &top, &mut skipped) {
            if device == own_device {
                continue;
            }
            let prefix = format!("{top}/{device}");
            for (file, path) in db_files(&device_path, &prefix, &mut skipped) {
                sources.push(Source {
                    path,
                    name: format!("{prefix}/{file}"),
                    device: device.clone(),
                });
            }
        }
    }
    sources.sort_by(|a, b| a.name.cmp(&b.name));
    (sources, skipped)
}

/// The visible folders in `folder` (names and paths), sorted.
fn subfolders(folder: &Path, name: &str, skipped: &mut Vec<Skipped>) -> Vec<(String, PathBuf)> {
    entries(folder, name, skipped)
        .into_iter()
        .filter(|(_, path)| path.is_dir())
        .collect()
}

/// The visible `*.db` files in `folder` (names and paths), sorted.
fn db_files(folder: &Path, name: &str, skipped: &mut Vec<Skipped>) -> Vec<(String, PathBuf)> {
    entries(folder, name, skipped)
        .into_iter()
        .filter(|(file, path)| file.ends_with(".db") && path.is_file())
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

    #[test]
    fn both_layouts_are_found_and_own_files_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for file in [
            "dev-a/test.db",
            "me/test.db",
            "host-b/dev-b/test.db",
            "host-b/me/test.db",
            "dev-c/notes.txt",
            ".stversions/dev-d/test.db",
            "dev-e/.syncthing.test.db.tmp",
        ] {
            let path = root.join(file);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, b"").unwrap();
        }
        let (sources, skipped) = find_sources(root, "me");
        let names: Vec<_> = sources
            .iter()
            .map(|s| (s.name.as_str(), s.device.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("dev-a/test.db", "dev-a"),
                ("host-b/dev-b/test.db", "dev-b")
            ]
        );
        assert!(skipped.is_empty());
        let folder = SyncFolder {
            folder: root.to_path_buf(),
            device_id: "me".to_string(),
            hostname: "h".to_string(),
        };
        assert_eq!(folder.own_file(), root.join("me").join("test.db"));
    }

    #[test]
    fn a_missing_folder_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let (sources, skipped) = find_sources(&dir.path().join("nope"), "me");
        assert!(sources.is_empty());
        assert_eq!(skipped.len(), 1);
    }
}
