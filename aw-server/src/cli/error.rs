//! [`CliError`], what every command returns when it fails.

/// A failed command, as a message for the terminal: `main` prints it and
/// exits with status 1.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CliError(pub String);
