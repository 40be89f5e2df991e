//! Which files of a folder make up a web UI: shared by the build script,
//! which embeds them, and by [`crate::assets::AssetSet::load_dir`], which
//! reads them at run time, so both see exactly the same set.
//!
//! This file is compiled twice (here and by `build.rs` through `#[path]`),
//! so it uses nothing but `std`.

use std::io;
use std::path::{Path, PathBuf};

/// The regular files under `root`, as (`/`-separated path relative to
/// `root`, full path), sorted by path. Names starting with `.` are left
/// out (editor and VCS files), and so is anything behind a symlink:
/// what is embedded or served must be a file of the folder itself.
pub fn list_files(root: &Path) -> io::Result<Vec<(String, PathBuf)>> {
    let mut files = Vec::new();
    walk(root, "", &mut files)?;
    files.sort();
    Ok(files)
}

fn walk(folder: &Path, prefix: &str, files: &mut Vec<(String, PathBuf)>) -> io::Result<()> {
    for entry in std::fs::read_dir(folder)? {
        let entry = entry?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue; // not UTF-8: no URL names it
        };
        if name.starts_with('.') {
            continue;
        }
        let kind = entry.file_type()?;
        let relative = format!("{prefix}{name}");
        if kind.is_dir() {
            walk(&entry.path(), &format!("{relative}/"), files)?;
        } else if kind.is_file() {
            files.push((relative, entry.path()));
        }
    }
    Ok(())
}
