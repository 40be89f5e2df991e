//! Goals that speak up (`docs/API.md` §3.16): the goals and limits of the
//! `aw-notify` setting ([`goals`]) evaluated on the server over the time
//! of every device it counts, each threshold told once a day when crossed
//! (`check.rs`), and a daily or weekly report ([`digest`]), delivered to
//! the channels of `[alerts]` ([`channels`]: webhook, ntfy, e-mail) from
//! an outbox that retries with backoff (`outbox.rs`). What fired and what
//! waits to be delivered is kept in the database (`saved.rs`), so a
//! restart neither repeats a message nor loses one.
//!
//! The job runs on its own schedule thread: heartbeats never wait for a
//! delivery. A server with no channel starts no job; with channels and no
//! goals, a check reads one setting.
//!
//! This crate knows neither HTTP serving nor the config file: the server
//! parses `[alerts]` into [`AlertSettings`] and answers [`AlertStatus`].

pub mod channels;
mod check;
pub mod digest;
pub mod goals;
mod outbox;
mod saved;

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use aw_datastore::Datastore;
use aw_models::Timestamp;
use aw_summary::Served;
use aw_threads::{Next, Schedule};
use serde::Serialize;

pub use channels::{Channel, Channels, Email, Kind, Message, Webhook};
pub use digest::DigestPeriod;
pub use goals::{parse as parse_goals, Goal, GoalError, SETTING_KEY};

/// Each channel's outcome of a delivery: delivered, or why not (then it
/// is retried).
pub type Outcomes = Vec<(Channel, Result<(), String>)>;

/// Default seconds between checks of the goals.
pub const DEFAULT_CHECK_INTERVAL: u64 = 60;

/// The first wait before a failed delivery is tried again; it doubles up
/// to [`MAX_RETRY_WAIT`].
pub const FIRST_RETRY: Duration = Duration::from_secs(30);
/// The longest wait between tries of one delivery.
pub const MAX_RETRY_WAIT: Duration = Duration::from_secs(30 * 60);
/// How long a message is tried before it is given up (and said so).
pub const GIVE_UP_AFTER: Duration = Duration::from_secs(24 * 3600);

/// Whose time the goals count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HostScope {
    /// This machine's own host only.
    Own,
    /// Every host in the database (a hub: all of its devices).
    All,
}

/// `[alerts]` as resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertSettings {
    pub channels: Channels,
    /// Time between checks of the goals.
    pub check_interval: Duration,
    /// The IANA zone of "today"; `None`: the server's.
    pub tz: Option<String>,
    /// Whether messages may name window titles (never by default).
    pub include_titles: bool,
    /// A report every day or week, if any.
    pub digest: Option<DigestPeriod>,
    /// When it goes out, local hours and minutes.
    pub digest_time: (u8, u8),
    /// Whose time counts; `None`: all hosts on a hub (a server devices
    /// forward to), this machine's elsewhere.
    pub hosts: Option<HostScope>,
    /// The first retry wait (tests shorten it).
    pub first_retry: Duration,
}

impl Default for AlertSettings {
    fn default() -> AlertSettings {
        AlertSettings {
            channels: Channels::default(),
            check_interval: Duration::from_secs(DEFAULT_CHECK_INTERVAL),
            tz: None,
            include_titles: false,
            digest: None,
            digest_time: (8, 0),
            hosts: None,
            first_retry: FIRST_RETRY,
        }
    }
}

/// What `GET /api/0/alerts/status` answers.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AlertStatus {
    /// Whether `[alerts]` has a channel (else nothing runs).
    pub enabled: bool,
    pub channels: Vec<Channel>,
    /// Seconds between checks.
    pub check_interval: u64,
    /// The zone of the days.
    pub tz: Option<String>,
    /// Whose time counted at the last check (`own` or `all`).
    pub scope: Option<HostScope>,
    /// The hosts it counted.
    pub hosts: Vec<String>,
    /// The day the goals were last counted for.
    pub day: Option<String>,
    pub last_check: Option<Timestamp>,
    pub next_check: Option<Timestamp>,
    /// Each goal as the last check found it.
    pub goals: Vec<GoalStatus>,
    /// What is wrong with the setting (then ignored) or its goals.
    pub problems: Vec<String>,
    /// The latest deliveries, newest first.
    pub sent: Vec<Sent>,
    /// Deliveries waiting for a retry.
    pub pending: Vec<PendingView>,
    /// The latest failed tries, newest first.
    pub failures: Vec<FailureView>,
    /// The digest, if one is set.
    pub digest: Option<DigestStatus>,
}

/// A goal at the last check.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct GoalStatus {
    pub category: String,
    pub label: String,
    pub positive: bool,
    pub period: &'static str,
    pub thresholds_minutes: Vec<u64>,
    /// Active minutes in the period so far.
    pub minutes: f64,
    /// The thresholds told this period.
    pub fired: Vec<u64>,
    /// Whether the category is one of the user's (or `All`).
    pub known_category: bool,
}

/// A delivery that succeeded.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Sent {
    pub at: Timestamp,
    pub channel: Channel,
    pub kind: Kind,
    pub title: String,
    /// Tries it took.
    pub attempts: u32,
}

/// A delivery waiting.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PendingView {
    pub channel: Channel,
    pub kind: Kind,
    pub title: String,
    pub attempts: u32,
    pub next_try: Timestamp,
    pub last_error: Option<String>,
}

/// A failed try.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FailureView {
    pub at: Timestamp,
    pub channel: Channel,
    pub title: String,
    pub error: String,
    /// Whether it was given up (else it is tried again).
    pub given_up: bool,
}

/// The digest's schedule.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DigestStatus {
    pub period: DigestPeriod,
    /// `HH:MM`, local.
    pub time: String,
    pub next: Option<Timestamp>,
    /// The first day of the last period sent.
    pub last_sent: Option<String>,
}

/// The alerts of one server: settings, status, and the state the job and
/// the endpoints share.
#[derive(Debug)]
pub struct Alerts {
    settings: Option<AlertSettings>,
    status: Mutex<AlertStatus>,
    /// Held by a check, a delivery round or a digest: one at a time.
    turn: Mutex<()>,
}

impl Alerts {
    /// The alerts of `settings` (`None`: no `[alerts]`; settings without a
    /// channel are as none).
    pub fn new(settings: Option<AlertSettings>) -> Alerts {
        let settings = settings.filter(|settings| !settings.channels.is_empty());
        let status = AlertStatus {
            enabled: settings.is_some(),
            channels: settings
                .as_ref()
                .map(|settings| settings.channels.names())
                .unwrap_or_default(),
            check_interval: settings
                .as_ref()
                .map_or(DEFAULT_CHECK_INTERVAL, |s| s.check_interval.as_secs()),
            tz: settings.as_ref().and_then(|s| s.tz.clone()),
            ..AlertStatus::default()
        };
        Alerts {
            settings,
            status: Mutex::new(status),
            turn: Mutex::new(()),
        }
    }

    /// The settings, if alerts are on.
    pub fn settings(&self) -> Option<&AlertSettings> {
        self.settings.as_ref()
    }

    /// The status as the last round left it.
    pub fn status(&self) -> AlertStatus {
        lock(&self.status).clone()
    }

    fn status_mut(&self) -> MutexGuard<'_, AlertStatus> {
        lock(&self.status)
    }

    /// Queues a test message to every channel and delivers it now; the
    /// answer is each channel's outcome (a failed one is retried).
    pub fn test(&self, source: &Source) -> Result<Outcomes, AlertsError> {
        let settings = self.settings.as_ref().ok_or(AlertsError::Off)?;
        let _turn = lock(&self.turn);
        let message = check::test_message(&source.own_host);
        outbox::send_now(self, settings, source, message)
    }

    /// Builds the digest of the period before the current one (`week`:
    /// the last week, else yesterday) and delivers it now, to e-mail and
    /// the webhook; what it said and each channel's outcome.
    pub fn send_digest(
        &self,
        source: &Source,
        week: bool,
    ) -> Result<(Message, Outcomes), AlertsError> {
        let settings = self.settings.as_ref().ok_or(AlertsError::Off)?;
        let _turn = lock(&self.turn);
        let period = if week {
            DigestPeriod::Weekly
        } else {
            DigestPeriod::Daily
        };
        let message = digest::build(settings, source, period, None)?;
        let outcomes = outbox::send_now(self, settings, source, message.clone())?;
        Ok((message, outcomes))
    }

    /// The digest `send_digest` would send, made and not sent; also when
    /// alerts are off (then in the server's zone, counting its own host).
    pub fn make_digest(&self, source: &Source, week: bool) -> Result<Message, AlertsError> {
        let defaults = AlertSettings::default();
        let settings = self.settings.as_ref().unwrap_or(&defaults);
        let period = if week {
            DigestPeriod::Weekly
        } else {
            DigestPeriod::Daily
        };
        digest::build(settings, source, period, None)
    }

    /// One round of the job: deliveries due, the goals if a check is due,
    /// the digest if due; the wait until the next thing to do.
    fn round(&self, source: &Source, next_check: &mut Timestamp) -> Duration {
        let Some(settings) = &self.settings else {
            return Duration::from_secs(3600);
        };
        let _turn = lock(&self.turn);
        let now = Timestamp::now();
        if now >= *next_check {
            if let Err(error) = check::check(self, settings, source) {
                log::warn!("Alerts: the goals could not be checked: {error}");
                self.status_mut().problems = vec![format!("the last check failed: {error}")];
            }
            *next_check = Timestamp::now().saturating_add(to_duration(settings.check_interval));
            self.status_mut().next_check = Some(*next_check);
        }
        if let Err(error) = digest::when_due(self, settings, source) {
            log::warn!("Alerts: the digest could not be made: {error}");
        }
        let next_retry = outbox::deliver_due(self, settings, source);
        let until = |at: Timestamp| {
            Duration::from_nanos(
                u64::try_from(at.nanos().saturating_sub(Timestamp::now().nanos())).unwrap_or(0),
            )
        };
        let mut wait = until(*next_check);
        if let Some(at) = next_retry {
            wait = wait.min(until(at));
        }
        if let Some(at) = lock(&self.status).digest.as_ref().and_then(|d| d.next) {
            wait = wait.min(until(at));
        }
        wait.max(Duration::from_millis(500))
    }
}

/// What the alerts read: the served store (and its cache) and whether it
/// is a hub.
#[derive(Debug, Clone)]
pub struct Source {
    pub served: Served,
    /// This machine's host name.
    pub own_host: String,
    /// Whether devices forward to this server (then the goals count all
    /// hosts unless `[alerts] hosts` says otherwise).
    pub is_hub: fn(&Datastore) -> bool,
}

impl Source {
    fn datastore(&self) -> &Datastore {
        &self.served.datastore
    }
}

/// Why an alert operation failed.
#[derive(Debug, thiserror::Error)]
pub enum AlertsError {
    /// No `[alerts]` channel is configured.
    #[error("alerts are off: set webhook_url, ntfy_url or smtp_url under [alerts] in the config")]
    Off,
    #[error(transparent)]
    Datastore(#[from] aw_datastore::DatastoreError),
    #[error(transparent)]
    Summary(#[from] aw_summary::SummaryError),
    #[error("{0}")]
    Other(String),
}

/// Starts the job of `alerts` while `source`'s store is open; none when
/// alerts are off.
pub fn start(alerts: &Arc<Alerts>, source: Source) {
    if alerts.settings.is_none() {
        return;
    }
    let alerts = Arc::clone(alerts);
    let open = source.datastore().clone();
    let mut next_check = Timestamp::now();
    // `is_open` reads a flag: the waits never wake the writer.
    Schedule::new("aw-alerts", Duration::from_secs(1)).start(
        move || open.is_open(),
        move || {
            if !source.datastore().is_open() {
                return Next::Stop;
            }
            Next::After(alerts.round(&source, &mut next_check))
        },
    );
}

fn to_duration(wait: Duration) -> aw_models::Duration {
    aw_models::Duration::from_millis(i64::try_from(wait.as_millis()).unwrap_or(i64::MAX))
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
