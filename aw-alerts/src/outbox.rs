//! Delivery: each message goes to each channel as a [`Pending`] entry of
//! the saved outbox, tried now and, after a failure, again after a wait
//! that doubles from `first_retry` up to [`MAX_RETRY_WAIT`]; given up
//! after [`GIVE_UP_AFTER`]. The status lists the latest deliveries and
//! failures.

use aw_models::Timestamp;
use aw_threads::backoff;

use crate::channels::{self, Channel, Message};
use crate::saved::{Pending, Saved};
use crate::{
    to_duration, AlertSettings, Alerts, AlertsError, FailureView, Outcomes, PendingView, Sent,
    Source, GIVE_UP_AFTER, MAX_RETRY_WAIT,
};

/// How many deliveries and failures the status lists.
const KEPT: usize = 50;

/// Queues `message` to the channels it is for (digests: e-mail and the
/// webhook; the rest: all) in `saved`.
pub(crate) fn queue(settings: &AlertSettings, saved: &mut Saved, message: &Message) {
    let now = Timestamp::now();
    for channel in settings.channels.names() {
        if message.kind == channels::Kind::Digest && channel == Channel::Ntfy {
            continue;
        }
        saved.outbox.push(Pending {
            channel,
            message: message.clone(),
            attempts: 0,
            queued: now,
            next_try: now,
            last_error: None,
        });
    }
}

/// Queues `message`, stores the outbox and delivers it at once; each
/// channel's outcome (a failed one stays queued for the retries).
pub(crate) fn send_now(
    alerts: &Alerts,
    settings: &AlertSettings,
    source: &Source,
    message: Message,
) -> Result<Outcomes, AlertsError> {
    let mut saved = Saved::load(source.datastore())?;
    let before = saved.outbox.len();
    queue(settings, &mut saved, &message);
    saved.store(source.datastore())?;
    let mine: Vec<usize> = (before..saved.outbox.len()).collect();
    let outcomes = mine
        .into_iter()
        .rev()
        .map(|index| {
            let channel = saved.outbox[index].channel;
            (channel, try_one(alerts, settings, &mut saved, index))
        })
        .collect::<Vec<_>>();
    saved.store(source.datastore())?;
    show_pending(alerts, &saved);
    let mut outcomes = outcomes;
    outcomes.reverse();
    Ok(outcomes)
}

/// Tries every delivery that is due; the time of the next one waiting.
pub(crate) fn deliver_due(
    alerts: &Alerts,
    settings: &AlertSettings,
    source: &Source,
) -> Option<Timestamp> {
    let mut saved = match Saved::load(source.datastore()) {
        Ok(saved) => saved,
        Err(error) => {
            log::warn!("Alerts: the outbox could not be read: {error}");
            return None;
        }
    };
    if saved.outbox.is_empty() {
        show_pending(alerts, &saved);
        return None;
    }
    let now = Timestamp::now();
    let due: Vec<usize> = (0..saved.outbox.len())
        .filter(|&index| saved.outbox[index].next_try <= now)
        .collect();
    if !due.is_empty() {
        // From the last, so removing one keeps the earlier indexes.
        for index in due.into_iter().rev() {
            let _ = try_one(alerts, settings, &mut saved, index);
        }
        if let Err(error) = saved.store(source.datastore()) {
            log::warn!("Alerts: the outbox could not be saved: {error}");
        }
    }
    show_pending(alerts, &saved);
    saved.outbox.iter().map(|pending| pending.next_try).min()
}

/// Tries the entry at `index`: removed when delivered or given up, else
/// its next try set.
fn try_one(
    alerts: &Alerts,
    settings: &AlertSettings,
    saved: &mut Saved,
    index: usize,
) -> Result<(), String> {
    let pending = &mut saved.outbox[index];
    pending.attempts += 1;
    let outcome = channels::deliver(&settings.channels, pending.channel, &pending.message);
    let now = Timestamp::now();
    match outcome {
        Ok(()) => {
            let pending = saved.outbox.remove(index);
            log::info!(
                "Alerts: sent '{}' by {} (try {})",
                pending.message.title,
                pending.channel.name(),
                pending.attempts
            );
            record(
                &mut alerts.status_mut().sent,
                Sent {
                    at: now,
                    channel: pending.channel,
                    kind: pending.message.kind,
                    title: pending.message.title,
                    attempts: pending.attempts,
                },
            );
            Ok(())
        }
        Err(failure) => {
            let given_up =
                now.duration_since(pending.queued).as_secs_f64() >= GIVE_UP_AFTER.as_secs_f64();
            log::warn!(
                "Alerts: '{}' by {} failed (try {}): {}{}",
                pending.message.title,
                pending.channel.name(),
                pending.attempts,
                failure.message,
                if given_up { "; given up" } else { "" }
            );
            record(
                &mut alerts.status_mut().failures,
                FailureView {
                    at: now,
                    channel: pending.channel,
                    title: pending.message.title.clone(),
                    error: failure.message.clone(),
                    given_up,
                },
            );
            if given_up {
                saved.outbox.remove(index);
            } else {
                let wait = backoff(pending.attempts, settings.first_retry, MAX_RETRY_WAIT);
                pending.next_try = now.saturating_add(to_duration(wait));
                pending.last_error = Some(failure.message.clone());
            }
            Err(failure.message)
        }
    }
}

fn record<T>(list: &mut Vec<T>, item: T) {
    list.insert(0, item);
    list.truncate(KEPT);
}

fn show_pending(alerts: &Alerts, saved: &Saved) {
    alerts.status_mut().pending = saved
        .outbox
        .iter()
        .map(|pending| PendingView {
            channel: pending.channel,
            kind: pending.message.kind,
            title: pending.message.title.clone(),
            attempts: pending.attempts,
            next_try: pending.next_try,
            last_error: pending.last_error.clone(),
        })
        .collect();
}
