//! What the alerts keep across restarts, as one JSON text in the
//! database (`Datastore::alerts_state`): the thresholds told in the
//! current day and week, the last digest sent, and the deliveries still
//! to make. It is written before a message is tried, so a crash after a
//! threshold fired neither fires it again nor forgets the message.

use std::collections::BTreeMap;

use aw_datastore::Datastore;
use aw_models::Timestamp;
use serde::{Deserialize, Serialize};

use crate::channels::{Channel, Message};

/// The saved state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Saved {
    /// The day `fired_day` is of (`2026-12-02`).
    #[serde(default)]
    pub day: Option<String>,
    /// Per goal key, the thresholds told that day.
    #[serde(default)]
    pub fired_day: BTreeMap<String, Vec<u64>>,
    /// The first day of the week `fired_week` is of.
    #[serde(default)]
    pub week: Option<String>,
    #[serde(default)]
    pub fired_week: BTreeMap<String, Vec<u64>>,
    /// The first day of the last period whose digest went out.
    #[serde(default)]
    pub digest_sent: Option<String>,
    /// Deliveries still to make.
    #[serde(default)]
    pub outbox: Vec<Pending>,
}

/// One message to one channel, waiting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Pending {
    pub channel: Channel,
    pub message: Message,
    pub attempts: u32,
    pub queued: Timestamp,
    pub next_try: Timestamp,
    #[serde(default)]
    pub last_error: Option<String>,
}

impl Saved {
    /// The state `datastore` holds; a text this version cannot read
    /// starts afresh (logged).
    pub fn load(datastore: &Datastore) -> Result<Saved, aw_datastore::DatastoreError> {
        let Some(text) = datastore.alerts_state()? else {
            return Ok(Saved::default());
        };
        Ok(serde_json::from_str(&text).unwrap_or_else(|error| {
            log::warn!("Alerts: the saved state is unreadable ({error}); starting afresh");
            Saved::default()
        }))
    }

    /// Stores it (durably, with the writer's next commit).
    pub fn store(&self, datastore: &Datastore) -> Result<(), aw_datastore::DatastoreError> {
        let text = serde_json::to_string(self).unwrap_or_default();
        datastore.set_alerts_state(text)
    }
}
