//! `GET /api/0/info` (`docs/API.md` §2.5).

use serde::{Deserialize, Serialize};

/// What the server says about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerInfo {
    /// Host name of the machine.
    pub hostname: String,
    /// Version string, e.g. `v0.1.0 (rust)`.
    pub version: String,
    /// Whether the server runs in testing mode.
    pub testing: bool,
    /// Persisted UUID of this installation.
    pub device_id: String,
}
