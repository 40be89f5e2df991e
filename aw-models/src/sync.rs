//! What folder sync and forwarding to a hub report: each pass's report
//! and the body of `GET /api/0/sync/status` (`docs/API.md` §3.9, §3.12),
//! which the server answers and the commands read.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::{PullCounts, Timestamp};

/// Which way a pass goes: `push`, `pull` or `both`, read in any letter
/// case and with spaces around (the config file, the API's `mode`,
/// reports read back).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncMode {
    /// Only write this device's copy.
    Push,
    /// Only read the other devices' copies.
    Pull,
    /// Pull, then push (as aw-sync does).
    Both,
}

impl SyncMode {
    /// Every mode with its name.
    pub const ALL: [(&'static str, SyncMode); 3] = [
        ("push", SyncMode::Push),
        ("pull", SyncMode::Pull),
        ("both", SyncMode::Both),
    ];

    /// Parses `push`, `pull` or `both`, trimmed, in any case.
    pub fn parse(text: &str) -> Option<SyncMode> {
        let text = text.trim();
        SyncMode::ALL
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(text))
            .map(|(_, mode)| *mode)
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        SyncMode::ALL
            .iter()
            .find(|(_, mode)| *mode == self)
            .map_or("both", |(name, _)| name)
    }
}

impl<'de> Deserialize<'de> for SyncMode {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<SyncMode, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        SyncMode::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "mode must be \"push\", \"pull\" or \"both\", not '{text}'"
            ))
        })
    }
}

impl std::fmt::Display for SyncMode {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.name())
    }
}

/// What one pass did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PassReport {
    /// `push`, `pull` or `both`.
    pub mode: SyncMode,
    /// The folder.
    pub folder: PathBuf,
    /// When it started and ended.
    pub started: Timestamp,
    /// When it ended.
    pub finished: Timestamp,
    /// How long it took, in milliseconds.
    pub duration_ms: f64,
    /// The buckets it was limited to (`None`: all).
    #[serde(default)]
    pub buckets: Option<Vec<String>>,
    /// Events ending before this were left out (`None`: none).
    #[serde(default)]
    pub start: Option<Timestamp>,
    /// The pull's report (modes `pull` and `both`).
    pub pull: Option<PullReport>,
    /// The push's report (modes `push` and `both`).
    pub push: Option<PushReport>,
}

impl PassReport {
    /// One line for logs and the terminal.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if let Some(pull) = &self.pull {
            let mut counts = PullCounts::default();
            for source in &pull.sources {
                counts += source.counts;
            }
            parts.push(format!(
                "pulled from {} file{}: {} new, {} updated, {} deleted, {} already here, {} dropped by privacy filters",
                pull.sources.len(),
                if pull.sources.len() == 1 { "" } else { "s" },
                counts.inserted,
                counts.updated,
                counts.deleted,
                counts.skipped,
                counts.dropped
            ));
            if !pull.skipped.is_empty() {
                parts.push(format!(
                    "{} file{} skipped",
                    pull.skipped.len(),
                    if pull.skipped.len() == 1 { "" } else { "s" }
                ));
            }
        }
        if let Some(push) = &self.push {
            parts.push(format!(
                "pushed {} bucket{} to {}: {} events written, {} deleted",
                push.buckets,
                if push.buckets == 1 { "" } else { "s" },
                push.file.display(),
                push.written,
                push.deleted
            ));
        }
        format!(
            "Sync ({}) with {} in {:.0} ms: {}",
            self.mode,
            self.folder.display(),
            self.duration_ms,
            parts.join("; ")
        )
    }
}

/// What `GET /api/0/sync/status` answers.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SyncStatus {
    /// Whether the schedule runs (`[sync] enabled = true`).
    pub enabled: bool,
    /// Whether `[sync]` is configured (passes can be asked for).
    #[serde(default)]
    pub configured: bool,
    /// The configured folder.
    pub folder: Option<PathBuf>,
    /// The configured mode.
    pub mode: Option<SyncMode>,
    /// The configured buckets (`None`: all).
    #[serde(default)]
    pub buckets: Option<Vec<String>>,
    /// Seconds between scheduled passes.
    pub interval_seconds: Option<u64>,
    /// Whether a pass runs now.
    pub running: bool,
    /// Passes finished since the server started (scheduled or asked for).
    pub passes: u64,
    /// Passes that failed since the server started.
    pub failures: u64,
    /// The last finished pass.
    pub last_pass: Option<PassReport>,
    /// The last failure's message and time, if the last pass failed.
    pub last_error: Option<String>,
    /// When the last pass failed.
    pub last_error_at: Option<Timestamp>,
    /// When the schedule runs the next pass.
    pub next_pass: Option<Timestamp>,
    /// Forwarding to a hub (`[hub]`, `hub.rs`), if configured.
    #[serde(default)]
    pub hub: Option<HubStatus>,
}

/// What a push did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushReport {
    /// The copy written.
    pub file: PathBuf,
    /// Own buckets pushed.
    pub buckets: u64,
    /// Events added to or changed in the copy.
    pub written: u64,
    /// Events deleted from the copy (and logged for the pullers).
    pub deleted: u64,
}

/// What a pull did, per file read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullReport {
    /// The files read.
    pub sources: Vec<SourceReport>,
    /// Files and folders not read, and why: unreadable, incomplete,
    /// locked, conflict copies, devices claimed by more than one folder.
    /// A skipped file is tried again on the next pass.
    pub skipped: Vec<Skipped>,
}

/// What was pulled from one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceReport {
    /// The file, inside the folder.
    pub file: String,
    /// The device whose copy it is.
    pub device: String,
    /// The buckets of this database it went into.
    pub buckets: Vec<String>,
    /// What was stored.
    #[serde(flatten)]
    pub counts: PullCounts,
}

/// Something in the folder that is not read, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Its path inside the folder.
    pub name: String,
    /// Why it is skipped.
    pub reason: String,
}

/// A bucket a pass did not forward because the hub refused it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedBucket {
    /// The bucket's id here.
    pub bucket: String,
    /// The host it was sent as.
    pub host: String,
    /// The hub's refusal and the ways out.
    pub reason: String,
}

/// What a forwarding pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForwardReport {
    /// Own buckets forwarded.
    pub buckets: u64,
    /// New events sent.
    pub sent: u64,
    /// Events sent in windows of changed history.
    pub compared: u64,
    /// Chunks the hub applied.
    pub chunks: u64,
    /// Buckets deleted here whose copies the hub dropped.
    pub forgotten: u64,
    /// Buckets renamed here that the hub renamed in place.
    #[serde(default)]
    pub renamed: u64,
    /// Buckets the hub refused (another host's than the token's); every
    /// other bucket was forwarded.
    #[serde(default)]
    pub skipped: Vec<SkippedBucket>,
}

/// What one forwarding pass did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HubPass {
    /// When it started.
    pub started: Timestamp,
    /// When it ended.
    pub finished: Timestamp,
    /// How long it took, in milliseconds.
    pub duration_ms: f64,
    /// What was sent.
    #[serde(flatten)]
    pub report: ForwardReport,
}

/// The hub's part of `GET /api/0/sync/status`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct HubStatus {
    /// The hub's address.
    pub url: String,
    /// Seconds between passes.
    pub interval_seconds: u64,
    /// Whether a pass runs now.
    pub running: bool,
    /// Passes finished since the server started.
    pub passes: u64,
    /// Passes that failed since the server started.
    pub failures: u64,
    /// The last finished pass.
    pub last_pass: Option<HubPass>,
    /// The last failure's message, if the last pass failed.
    pub last_error: Option<String>,
    /// When the last pass failed.
    pub last_error_at: Option<Timestamp>,
    /// When the schedule runs the next pass (after a failure: the retry).
    pub next_pass: Option<Timestamp>,
    /// Why the schedule stopped (the hub refused the token), if it did.
    pub stopped: Option<String>,
}
