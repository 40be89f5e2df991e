//! A small tmpfs mounted for a test, to fill a file system for real;
//! shared by the datastore's full-disk tests and the server's snapshot
//! tests. Mounting needs root, as in CI.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Unmounts on drop, also when an assertion fails.
pub struct Mount(PathBuf);

impl Mount {
    /// Mounts a tmpfs of `size` (`4m`) on `dir`; `None` when not allowed.
    pub fn tmpfs(dir: &Path, size: &str) -> Option<Mount> {
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .ok()?;
        status.success().then(|| Mount(dir.to_path_buf()))
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        // Threads of a closed store may still hold files for a moment:
        // then detach it now and let the kernel finish when they let go.
        let quiet = |args: &[&str]| {
            Command::new("umount")
                .args(args)
                .arg(&self.0)
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|status| status.success())
        };
        if !quiet(&[]) {
            quiet(&["-l"]);
        }
    }
}

/// Writes a file until the file system is full; returns its path.
pub fn fill(dir: &Path) -> PathBuf {
    let path = dir.join("filler");
    let mut file = std::fs::File::create(&path).unwrap();
    let chunk = vec![0u8; 4096];
    while file.write_all(&chunk).is_ok() {}
    let _ = file.sync_all();
    path
}

/// Mounts a tmpfs of `size` on `dir`, or says loudly that `test` did not
/// run and what covers it (`fallback`); under CI, which runs as root and
/// has always mounted, not mounting fails the test instead.
pub fn mounted(dir: &Path, size: &str, test: &str, fallback: &str) -> Option<Mount> {
    let mount = Mount::tmpfs(dir, size);
    if mount.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{test} could not mount a tmpfs under CI, where it must run"
        );
        eprintln!("NOT RUN: {test} needs to mount a tmpfs (root); {fallback}");
    }
    mount
}
