//! Readiness and stop notifications to a service manager: systemd's
//! `sd_notify` protocol, one datagram to the socket named by
//! `$NOTIFY_SOCKET`, which systemd sets for `Type=notify` units (see
//! `aw-server.service` at the repository's root). Without that variable,
//! and on systems other than Unix, these are no-ops.

/// Tells the service manager that the server accepts connections: called
/// once Rocket listens, after the database is open (and any first-start
/// import done), so units ordered after this one find the API answering.
pub fn ready() {
    #[cfg(unix)]
    notify(&[
        sd_notify::NotifyState::Ready,
        sd_notify::NotifyState::Status("Accepting connections"),
    ]);
}

/// Tells the service manager that the server is stopping (closing the
/// database may take a moment to make every write durable).
pub fn stopping() {
    #[cfg(unix)]
    notify(&[sd_notify::NotifyState::Stopping]);
}

#[cfg(unix)]
fn notify(states: &[sd_notify::NotifyState<'_>]) {
    if std::env::var_os("NOTIFY_SOCKET").is_none() {
        return;
    }
    match sd_notify::notify(states) {
        Ok(()) => log::info!("Told the service manager: {}", describe(states)),
        // The server works the same; only the manager waits in vain.
        Err(error) => log::warn!("Could not notify the service manager: {error}"),
    }
}

#[cfg(unix)]
fn describe(states: &[sd_notify::NotifyState<'_>]) -> String {
    states
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
