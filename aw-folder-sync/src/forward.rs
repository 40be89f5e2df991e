//! Forwarding to a hub: this device's own buckets into another server
//! over a transport ([`HubLink`]; the server's is HTTP), and the hub's
//! side ([`receive`]), both through the datastore's replication port, as
//! the folder's passes are.
//!
//! The hub keeps, per device and bucket, a [`ForwardState`] stored with
//! each chunk it applies (one writer job): the highest device id it has
//! (`high_water`), the newest events as forwarded (`tail`, which
//! heartbeats on the device keep extending) and the device's change
//! counter whose changes it has. A pass asks the hub for these, then per
//! bucket:
//!
//! 1. **Changes.** When the device's change counter moved past the
//!    state's, the spans of start times where history changed since
//!    (`Replica::changed_since`) are sent as windows: the hub's events
//!    starting in a window become the device's. Another bucket of the same
//!    id, a counter that went back (a restored file) or spans no longer
//!    known: the whole bucket is compared, and the cursor starts again.
//! 2. **New events** by id after the cursor, in chunks of [`CHUNK`], with
//!    the tail's events as they are now.
//!
//! Every chunk is idempotent on the hub: events at or below its cursor
//! are not added again, windows replace, the tail matches by the times the
//! hub stored. A kill of either side between chunks loses nothing: the
//! next pass starts from the hub's state.

use std::collections::HashMap;

use aw_datastore::format::StoredRow;
use aw_datastore::{BucketRename, HostChange, PreparedEvent, PulledChunk, Replacement, Replica};
use aw_models::{
    check_bucket_id, is_hostless, is_own_bucket, Bucket, ForwardChunk, ForwardState,
    ForwardedEvent, ForwardingDevice, StartSpan, TailEvent, Timestamp, MAX_FORWARD_EVENTS,
    SYNCED_FROM,
};

use crate::{FolderSyncError, Result, SyncFilter, SyncProgress};

pub use aw_models::{ForwardReport, SkippedBucket};

/// Events per chunk a device sends.
pub const CHUNK: usize = 2_000;
/// The replica state key of a forwarded bucket on the hub, then the
/// device and the bucket as a JSON pair.
const FORWARDED: &str = "forwarded.";

/// The way to the hub: what a forwarding pass needs of it.
pub trait HubLink {
    /// The states the hub keeps of this device's buckets.
    fn states(&self) -> Result<Vec<ForwardState>>;
    /// Applies one chunk; answers the bucket's state after it.
    fn send(&self, chunk: &ForwardChunk) -> Result<ForwardState>;
    /// Deletes the hub's copy of a bucket this device deleted.
    fn forget(&self, bucket_id: &str) -> Result<()>;
    /// Renames the hub's copy of bucket `from`, which this device renamed
    /// to `bucket` (its host too, maybe), in place; answers its state
    /// there. `None`: the hub cannot (it has no copy, the new host is
    /// another device's there, or it is older): the copy is then forgotten
    /// and the bucket sent whole.
    fn rename(&self, from: &str, bucket: &Bucket) -> Result<Option<ForwardState>> {
        let _ = (from, bucket);
        Ok(None)
    }
}

/// Forwards this device's own buckets that `filter` takes to the hub.
/// A bucket without a host of its own is sent as `own_host`'s, this
/// device's host name: its watcher wrote to this device. A bucket the hub
/// refuses (a host the token does not cover) is skipped and reported;
/// only a refusal of the token itself ends the pass.
pub fn forward(
    store: &dyn Replica,
    hub: &dyn HubLink,
    filter: &SyncFilter,
    own_host: &str,
    progress: &mut dyn FnMut(&SyncProgress),
) -> Result<ForwardReport> {
    let mut states: HashMap<String, ForwardState> = hub
        .states()?
        .into_iter()
        .map(|state| (state.bucket.clone(), state))
        .collect();
    let buckets: Vec<Bucket> = store
        .buckets()?
        .into_iter()
        .filter(|bucket| is_own_bucket(&bucket.id) && filter.takes_bucket(&bucket.id))
        .collect();
    let mut report = ForwardReport::default();
    // Buckets renamed here since the hub saw them: renamed there in
    // place, their events not sent again.
    let gone: Vec<String> = states
        .keys()
        .filter(|id| !buckets.iter().any(|bucket| &&bucket.id == id))
        .cloned()
        .collect();
    for old in gone {
        let Some(new) = store.renamed(&old)? else {
            continue;
        };
        let Some(bucket) = buckets.iter().find(|bucket| bucket.id == new) else {
            continue;
        };
        if states.contains_key(&new) {
            continue;
        }
        let mut sent = bucket.clone();
        sent.events = None;
        if is_hostless(&sent.hostname) {
            sent.hostname = own_host.to_string();
        }
        match hub.rename(&old, &sent) {
            Ok(Some(state)) => {
                states.remove(&old);
                states.insert(new, state);
                report.renamed += 1;
            }
            // Forgotten and sent whole below.
            Ok(None) | Err(FolderSyncError::HubRefusedBucket { .. }) => {}
            Err(error) => return Err(error),
        }
    }
    let skip = |report: &mut ForwardReport, bucket: &str, host: &str, message: String| {
        report.skipped.push(SkippedBucket {
            bucket: bucket.to_string(),
            host: host.to_string(),
            reason: format!(
                "{}; it is skipped and every other bucket forwarded. Either give the hub \
                 token the host '{host}' too (on the hub: aw-server token add NAME --scope \
                 write --host {own_host} --host {host}, then put the new token in [hub] token), \
                 or leave the bucket out with [hub] buckets",
                message.trim_end_matches('.')
            ),
        });
    };
    for bucket in &buckets {
        let mut sent = bucket.clone();
        if is_hostless(&sent.hostname) {
            sent.hostname = own_host.to_string();
        }
        let mut state = states
            .get(&bucket.id)
            .cloned()
            .unwrap_or_else(|| ForwardState::new(&bucket.id, ""));
        // A hub that starts the bucket afresh (a new bucket for it there)
        // answers a new state once: the bucket is then sent again whole.
        let mut again = true;
        loop {
            match forward_bucket(store, hub, &sent, state, &mut report, progress) {
                Ok(Forwarded::Done) => report.buckets += 1,
                Ok(Forwarded::Restarted(fresh)) if again => {
                    again = false;
                    state = fresh;
                    continue;
                }
                Ok(Forwarded::Restarted(_)) => {
                    return Err(FolderSyncError::Refused(format!(
                        "the hub started bucket {} afresh twice in one pass",
                        bucket.id
                    )))
                }
                // Deleted while being forwarded: the next pass forgets it.
                Err(FolderSyncError::Store(aw_datastore::DatastoreError::NoSuchBucket(_))) => {}
                Err(FolderSyncError::HubRefusedBucket { message }) => {
                    skip(&mut report, &bucket.id, &sent.hostname, message);
                }
                Err(error) => return Err(error),
            }
            break;
        }
    }
    for gone in states.keys() {
        let here = buckets.iter().any(|bucket| &bucket.id == gone);
        if !here && filter.takes_bucket(gone) && store.bucket(gone)?.is_none() {
            match hub.forget(gone) {
                Ok(()) => report.forgotten += 1,
                Err(FolderSyncError::HubRefusedBucket { message }) => {
                    skip(&mut report, gone, "", message);
                }
                Err(error) => return Err(error),
            }
        }
    }
    Ok(report)
}

/// How forwarding one bucket ended.
enum Forwarded {
    /// Sent up to the hub's cursor.
    Done,
    /// The hub keeps the bucket in a new place from now on and answered
    /// its new, empty state: send it again from there.
    Restarted(ForwardState),
}

fn forward_bucket(
    store: &dyn Replica,
    hub: &dyn HubLink,
    bucket: &Bucket,
    mut state: ForwardState,
    report: &mut ForwardReport,
    progress: &mut dyn FnMut(&SyncProgress),
) -> Result<Forwarded> {
    let mut meta = bucket.clone();
    meta.events = None;
    let counter = store.change_count(&bucket.id)?;
    let fresh = state.high_water == 0 && state.tail.is_empty() && state.created.is_none();
    let mut stage = SyncProgress {
        stage: format!("Forwarding {}", bucket.id),
        done: 0,
        total: None,
    };
    if !fresh && counter != state.changes {
        let recreated = state.created.is_some() && state.created != bucket.created;
        let spans = if recreated || counter < state.changes {
            None
        } else {
            store.changed_since(&bucket.id, state.changes)?
        };
        let whole = spans.is_none();
        let spans = spans.unwrap_or_else(|| vec![(i64::MIN, i64::MAX)]);
        // After a whole comparison the cursor is the highest id read
        // before it: later events are sent as new.
        let high_water = if whole {
            Some(store.highest_id(&bucket.id)?)
        } else {
            None
        };
        let count = spans.len();
        for (at, &(low, high)) in spans.iter().enumerate() {
            let last_span = at + 1 == count;
            let mut from = low;
            let mut after = None;
            loop {
                // Each page replaces its own part of the span only.
                let page_start = from;
                let mut rows = store.rows_by_start(&bucket.id, from, high, after, CHUNK)?;
                let mut last_page = rows.len() < CHUNK;
                let mut window_end = high;
                if !last_page {
                    let last_start = rows.last().map_or(high, |row| row.start);
                    if rows.first().map(|row| row.start) == Some(last_start) {
                        // One start time fills the page: take all of it.
                        rows.extend(store.rows_by_start(
                            &bucket.id,
                            last_start,
                            last_start,
                            rows.last().map(|row| (row.start, row.id)),
                            usize::MAX,
                        )?);
                        window_end = last_start;
                        after = None;
                        from = last_start.saturating_add(1);
                        last_page = last_start == high;
                    } else {
                        // The events of the last start go with the next page.
                        rows.retain(|row| row.start < last_start);
                        window_end = last_start - 1;
                        from = last_start;
                    }
                }
                let finishing = last_page && last_span;
                let chunk = ForwardChunk {
                    bucket: meta.clone(),
                    after: state.high_water,
                    events: rows.iter().map(wire).collect::<Result<_>>()?,
                    tail: if finishing && whole {
                        newest(store, &bucket.id)?
                    } else {
                        Vec::new()
                    },
                    window: Some(StartSpan {
                        first: Timestamp::from_nanos(page_start.max(MIN_TIME)),
                        last: Timestamp::from_nanos(window_end.min(MAX_TIME)),
                    }),
                    changes: finishing.then_some(counter),
                    high_water: if finishing { high_water } else { None },
                    count: None,
                };
                report.compared += chunk.events.len() as u64;
                stage.done += rows.len() as u64;
                state = hub.send(&chunk)?;
                if restarted(&state) {
                    return Ok(Forwarded::Restarted(state));
                }
                report.chunks += 1;
                progress(&stage);
                if last_page {
                    break;
                }
            }
        }
    }
    // New events after the cursor, with the tail as it is now.
    // Read before the events: one added meanwhile makes the next pass
    // look. Only adding events changes the count without moving the change
    // counter, so the count the hub recorded with the cursor, unchanged,
    // means nothing was added: the walk by id, which passes over every
    // later event of the other buckets, is skipped (as a folder push does).
    let count = store.count_events(&bucket.id)?;
    let nothing_added = state.count == Some(count) && state.changes == counter;
    let mut first = true;
    let mut rounds = 0;
    loop {
        let rows = if first && nothing_added {
            Vec::new()
        } else {
            store.rows_after(&bucket.id, state.high_water, CHUNK)?
        };
        let tail = if first {
            current_tail(store, &bucket.id, &state)?
        } else {
            Vec::new()
        };
        let tail_moved = tail.iter().any(|event| {
            !state
                .tail
                .iter()
                .any(|old| old.id == event.id && old.start == event.start && old.end == event.end)
        });
        let needs_state = (fresh && (state.changes != counter || state.created.is_none()))
            || state.count != Some(count)
            || state
                .host
                .as_ref()
                .is_some_and(|host| host != &meta.hostname);
        if rows.is_empty() && !tail_moved && !(first && needs_state) {
            return Ok(Forwarded::Done);
        }
        let last = rows.len() < CHUNK;
        let read_to = rows.last().map(|row| row.id);
        let chunk = ForwardChunk {
            bucket: meta.clone(),
            after: state.high_water,
            events: rows.iter().map(wire).collect::<Result<_>>()?,
            tail,
            window: None,
            changes: (fresh && first).then_some(counter),
            high_water: read_to,
            // Only with the last chunk: the cursor then covers the count.
            count: last.then_some(count),
        };
        let expected = read_to.unwrap_or(state.high_water);
        report.sent += chunk.events.len() as u64;
        stage.done += rows.len() as u64;
        state = hub.send(&chunk)?;
        if restarted(&state) && !fresh {
            return Ok(Forwarded::Restarted(state));
        }
        report.chunks += 1;
        progress(&stage);
        first = false;
        rounds += 1;
        if state.high_water < expected && rounds > 3 {
            return Err(FolderSyncError::Refused(format!(
                "the hub does not take bucket {}'s events after id {}",
                bucket.id, state.high_water
            )));
        }
        if last && state.high_water >= expected {
            return Ok(Forwarded::Done);
        }
    }
}

/// Whether the hub answered a state it has applied nothing to: it keeps
/// the bucket in a new place from now on (a chunk it applies records the
/// bucket's creation time).
fn restarted(state: &ForwardState) -> bool {
    state.created.is_none() && state.high_water == 0 && state.tail.is_empty()
}

/// Bounds of the times a forwarded span may name.
const MIN_TIME: i64 = -(1 << 62);
const MAX_TIME: i64 = 1 << 62;

fn wire(row: &StoredRow) -> Result<ForwardedEvent> {
    Ok(ForwardedEvent {
        id: row.id,
        start: Timestamp::from_nanos(row.start),
        end: Timestamp::from_nanos(row.end.max(row.start)),
        data: serde_json::value::RawValue::from_string(row.data.clone())
            .map_err(|error| FolderSyncError::Refused(format!("event {}: {error}", row.id)))?,
    })
}

/// The bucket's events at its newest start.
fn newest(store: &dyn Replica, bucket_id: &str) -> Result<Vec<ForwardedEvent>> {
    let Some(newest) = store.newest_start(bucket_id)? else {
        return Ok(Vec::new());
    };
    store
        .rows_by_start(bucket_id, newest, i64::MAX, None, usize::MAX)?
        .iter()
        .map(wire)
        .collect()
}

/// The events of the state's tail as they are here now.
fn current_tail(
    store: &dyn Replica,
    bucket_id: &str,
    state: &ForwardState,
) -> Result<Vec<ForwardedEvent>> {
    let Some(first) = state.tail.iter().map(|event| event.start.nanos()).min() else {
        return Ok(Vec::new());
    };
    store
        .rows_from(bucket_id, first, state.high_water)?
        .iter()
        .filter(|row| state.tail.iter().any(|event| event.id == row.id))
        .map(wire)
        .collect()
}

/// The hub's side: the state key of a device's bucket.
fn state_key(device: &str, bucket_id: &str) -> String {
    format!(
        "{FORWARDED}{}",
        serde_json::to_string(&(device, bucket_id)).unwrap_or_default()
    )
}

/// The hub's states of `device`'s buckets.
pub fn states(store: &dyn Replica, device: &str) -> Result<Vec<ForwardState>> {
    let prefix = format!(
        "{FORWARDED}[{},",
        serde_json::to_string(device).unwrap_or_default()
    );
    let mut states: Vec<ForwardState> = store
        .states_under(&prefix)?
        .into_iter()
        .filter_map(|(_, text)| serde_json::from_str(&text).ok())
        .collect();
    for state in &mut states {
        state.host = store.bucket(&state.target)?.map(|bucket| bucket.hostname);
    }
    Ok(states)
}

/// The hub's side: every device that forwards to it, with its buckets'
/// states, by device id.
pub fn devices(store: &dyn Replica) -> Result<Vec<ForwardingDevice>> {
    let mut devices: Vec<ForwardingDevice> = Vec::new();
    for (key, text) in store.states_under(FORWARDED)? {
        let Some(pair) = key.strip_prefix(FORWARDED) else {
            continue;
        };
        let (Ok((device, _)), Ok(mut state)) = (
            serde_json::from_str::<(String, String)>(pair),
            serde_json::from_str::<ForwardState>(&text),
        ) else {
            continue;
        };
        state.host = store.bucket(&state.target)?.map(|bucket| bucket.hostname);
        let index = match devices.iter().position(|known| known.device == device) {
            Some(index) => index,
            None => {
                devices.push(ForwardingDevice {
                    device,
                    hosts: Vec::new(),
                    received: None,
                    buckets: Vec::new(),
                });
                devices.len() - 1
            }
        };
        let entry = &mut devices[index];
        if let Some(host) = &state.host {
            if !entry.hosts.contains(host) {
                entry.hosts.push(host.clone());
            }
        }
        entry.received = entry.received.max(state.received);
        entry.buckets.push(state);
    }
    for device in &mut devices {
        device.hosts.sort();
        device.buckets.sort_by(|a, b| a.bucket.cmp(&b.bucket));
    }
    devices.sort_by(|a, b| a.device.cmp(&b.device));
    Ok(devices)
}

/// The hub's state of one of `device`'s buckets.
pub fn state(store: &dyn Replica, device: &str, bucket_id: &str) -> Result<Option<ForwardState>> {
    Ok(store
        .state(&state_key(device, bucket_id))?
        .and_then(|text| serde_json::from_str(&text).ok()))
}

/// The state a chunk from `device` applies to, and the bucket the hub kept
/// it in before when that is a new place: the state the hub keeps;
/// for a bucket it has nothing of, a new one in the bucket's id (or
/// `<id>-synced-from-<host>` when another device's bucket has that id);
/// and a new one the same way when the device now names a host for a
/// bucket the hub keeps without one (several devices' hostless buckets
/// may share that one: each device's goes apart from now on).
pub fn state_for(
    store: &dyn Replica,
    device: &str,
    bucket: &Bucket,
) -> Result<(ForwardState, Option<String>)> {
    let origin = if bucket.hostname.is_empty() {
        device
    } else {
        &bucket.hostname
    };
    let elsewhere = || format!("{}{SYNCED_FROM}{origin}", bucket.id);
    match state(store, device, &bucket.id)? {
        Some(known) => {
            let kept = store.bucket(&known.target)?;
            let named_now = kept
                .as_ref()
                .is_some_and(|kept| is_hostless(&kept.hostname) && !is_hostless(&bucket.hostname));
            if named_now && known.target != elsewhere() {
                let fresh = ForwardState::new(&bucket.id, &elsewhere());
                Ok((fresh, Some(known.target)))
            } else {
                Ok((known, None))
            }
        }
        None => {
            let free = store.bucket(&bucket.id)?.is_none();
            let target = if free { bucket.id.clone() } else { elsewhere() };
            Ok((ForwardState::new(&bucket.id, &target), None))
        }
    }
}

/// Checks a chunk before anything of it is applied.
pub fn check_chunk(chunk: &ForwardChunk) -> Result<()> {
    let refuse = |message: String| Err(FolderSyncError::Refused(message));
    check_bucket_id(&chunk.bucket.id)
        .map_err(|error| FolderSyncError::Refused(error.to_string()))?;
    if !is_own_bucket(&chunk.bucket.id) {
        return refuse(format!(
            "bucket {} is a copy of another device's ({SYNCED_FROM}): only a device's own \
             buckets are forwarded",
            chunk.bucket.id
        ));
    }
    if chunk.events.len() + chunk.tail.len() > MAX_FORWARD_EVENTS {
        return refuse(format!(
            "a chunk carries at most {MAX_FORWARD_EVENTS} events"
        ));
    }
    for event in chunk.events.iter().chain(&chunk.tail) {
        if event.end < event.start {
            return refuse(format!("event {} ends before it starts", event.id));
        }
        if !event.data.get().trim_start().starts_with('{') {
            return refuse(format!("event {}'s data is not a JSON object", event.id));
        }
    }
    match chunk.window {
        Some(window) => {
            if window.last < window.first {
                return refuse("the window ends before it starts".to_string());
            }
            if let Some(event) = chunk
                .events
                .iter()
                .find(|event| event.start < window.first || event.start > window.last)
            {
                return refuse(format!("event {} starts outside the window", event.id));
            }
        }
        None => {
            if chunk.events.windows(2).any(|pair| pair[0].id >= pair[1].id) {
                return refuse("new events must come in rising id order".to_string());
            }
            if let (Some(last), Some(high_water)) = (chunk.events.last(), chunk.high_water) {
                if high_water < last.id {
                    return refuse("high_water is below the chunk's last event".to_string());
                }
            }
        }
    }
    Ok(())
}

/// The hub's side: applies one chunk from `device` in one writer job and
/// answers the bucket's state after it. A chunk that starts above the
/// hub's cursor (`after`) adds no events: the state answered says where
/// to resume.
pub fn receive(store: &dyn Replica, device: &str, chunk: ForwardChunk) -> Result<ForwardState> {
    check_chunk(&chunk)?;
    let key = state_key(device, &chunk.bucket.id);
    let (mut state, moved) = state_for(store, device, &chunk.bucket)?;
    let mut target = chunk.bucket.clone();
    target.id.clone_from(&state.target);
    target.events = None;
    target.metadata = Default::default();
    // The device that forwards a bucket made it: its id tells two devices
    // of one host name apart, unless the bucket names one itself.
    target
        .data
        .entry("device_id")
        .or_insert_with(|| device.into());
    if let Some(before) = moved {
        // Nothing of the chunk is applied: the device sends the bucket
        // again, whole, into its new place.
        state.received = Some(Timestamp::now());
        log::info!(
            "Device {device} names host '{}' for bucket {}, kept without a host in {before}: \
             it goes into {} from now on",
            chunk.bucket.hostname,
            chunk.bucket.id,
            state.target
        );
        let value = serde_json::to_string(&state).unwrap_or_default();
        store.apply_pulled(PulledChunk {
            target,
            replacements: Vec::new(),
            events: Vec::new(),
            window: None,
            state: Some((key, value)),
        })?;
        return Ok(state);
    }
    store.follow_metadata(&target)?;
    if state.created.is_none() {
        state.created = chunk.bucket.created;
    }
    let prepared = |event: &ForwardedEvent| {
        PreparedEvent::stored(
            event.start.nanos(),
            event.end.nanos(),
            event.data.get().to_string(),
        )
    };
    let (replacements, events, window) = match chunk.window {
        Some(window) => {
            let events = chunk.events.iter().map(prepared).collect();
            if let Some(high_water) = chunk.high_water {
                state.high_water = high_water;
                state.tail = tail_of(chunk.tail.iter());
                state.created = chunk.bucket.created;
            }
            // The count changed with the history: the next pass walks.
            state.count = None;
            (
                Vec::new(),
                events,
                Some((window.first.nanos(), window.last.nanos())),
            )
        }
        None if chunk.after > state.high_water => {
            // A gap: the device missed the hub's state (restored here).
            return Ok(state);
        }
        None => {
            let mut replacements = Vec::new();
            let mut tail: Vec<TailEvent> = Vec::new();
            for old in &state.tail {
                match chunk.tail.iter().find(|event| event.id == old.id) {
                    Some(now) if (now.start, now.end) != (old.start, old.end) => {
                        replacements.push(Replacement {
                            start: old.start.nanos(),
                            end: old.end.nanos(),
                            old_data: None,
                            new: Some(prepared(now)),
                        });
                        tail.push(TailEvent {
                            id: now.id,
                            start: now.start,
                            end: now.end,
                        });
                    }
                    _ => tail.push(old.clone()),
                }
            }
            let fresh: Vec<&ForwardedEvent> = chunk
                .events
                .iter()
                .filter(|event| event.id > state.high_water)
                .collect();
            let events = fresh.iter().map(|event| prepared(event)).collect();
            let high_water = chunk
                .high_water
                .unwrap_or(0)
                .max(fresh.last().map_or(0, |event| event.id));
            state.high_water = state.high_water.max(high_water);
            if let Some(count) = chunk.count {
                state.count = Some(count);
            }
            let candidates: Vec<TailEvent> = tail
                .into_iter()
                .chain(fresh.iter().map(|event| TailEvent {
                    id: event.id,
                    start: event.start,
                    end: event.end,
                }))
                .collect();
            let newest = candidates.iter().map(|event| event.start).max();
            state.tail = candidates
                .into_iter()
                .filter(|event| Some(event.start) == newest)
                .collect();
            (replacements, events, None)
        }
    };
    if let Some(changes) = chunk.changes {
        state.changes = changes;
    }
    state.host = None;
    state.received = Some(Timestamp::now());
    let value = serde_json::to_string(&state).unwrap_or_default();
    store.apply_pulled(PulledChunk {
        target,
        replacements,
        events,
        window,
        state: Some((key, value)),
    })?;
    Ok(state)
}

fn tail_of<'e>(events: impl Iterator<Item = &'e ForwardedEvent>) -> Vec<TailEvent> {
    let events: Vec<TailEvent> = events
        .map(|event| TailEvent {
            id: event.id,
            start: event.start,
            end: event.end,
        })
        .collect();
    let newest = events.iter().map(|event| event.start).max();
    events
        .into_iter()
        .filter(|event| Some(event.start) == newest)
        .collect()
}

/// The hub's side of a rename on `device`: its copy of bucket `from`
/// renamed in place to `bucket` (the new id, or `<id>-synced-from-<host>`
/// where the copy was kept apart or the id is taken), its state moved
/// with it, and the copy's old host made an alias of the new one, in one
/// transaction. `None` when the hub has no copy of `from`. Refused when
/// the hub has `bucket` from this device already, or when its new host
/// names buckets of another device here (a rename takes a free name:
/// the device's token would otherwise come to cover another's buckets).
pub fn rename(
    store: &dyn Replica,
    device: &str,
    from: &str,
    bucket: &Bucket,
) -> Result<Option<ForwardState>> {
    check_bucket_id(&bucket.id).map_err(|error| FolderSyncError::Refused(error.to_string()))?;
    if !is_own_bucket(&bucket.id) || !is_own_bucket(from) {
        return Err(FolderSyncError::Refused(format!(
            "only a device's own buckets are forwarded, not copies ({SYNCED_FROM})"
        )));
    }
    let Some(mut known) = state(store, device, from)? else {
        return Ok(None);
    };
    let Some(kept) = store.bucket(&known.target)? else {
        return Ok(None);
    };
    if state(store, device, &bucket.id)?.is_some() {
        return Err(FolderSyncError::Refused(format!(
            "bucket {} of device {device} is here already",
            bucket.id
        )));
    }
    let own: Vec<String> = states(store, device)?
        .into_iter()
        .map(|state| state.target)
        .collect();
    let taken_by_another = store.buckets()?.iter().any(|other| {
        other.hostname == bucket.hostname
            && !own.contains(&other.id)
            && !is_hostless(&other.hostname)
    });
    if taken_by_another {
        return Err(FolderSyncError::Refused(format!(
            "host '{}' names another device's buckets here",
            bucket.hostname
        )));
    }
    let origin = if bucket.hostname.is_empty() {
        device
    } else {
        &bucket.hostname
    };
    let apart = format!("{}{SYNCED_FROM}{origin}", bucket.id);
    let target = if known.target == from && store.bucket(&bucket.id)?.is_none() {
        bucket.id.clone()
    } else {
        apart
    };
    if target != kept.id && store.bucket(&target)?.is_some() {
        return Err(FolderSyncError::Refused(format!(
            "the hub has a bucket {target} already"
        )));
    }
    known.bucket.clone_from(&bucket.id);
    known.target.clone_from(&target);
    known.received = Some(Timestamp::now());
    let alias = (kept.hostname != bucket.hostname
        && !is_hostless(&kept.hostname)
        && !is_hostless(&bucket.hostname))
    .then(|| (kept.hostname.clone(), bucket.hostname.clone()));
    store.rename_copy(HostChange {
        renames: vec![BucketRename {
            from: kept.id.clone(),
            to: target,
            hostname: bucket.hostname.clone(),
        }],
        alias,
        states: vec![
            (state_key(device, from), None),
            (
                state_key(device, &bucket.id),
                Some(serde_json::to_string(&known).unwrap_or_default()),
            ),
        ],
        ..HostChange::default()
    })?;
    Ok(Some(known))
}

/// The hub's side: forgets one of `device`'s buckets and deletes its copy.
/// Answers whether there was one.
pub fn forget(store: &dyn Replica, device: &str, bucket_id: &str) -> Result<Option<String>> {
    let Some(state) = state(store, device, bucket_id)? else {
        return Ok(None);
    };
    store.delete_bucket(&state.target)?;
    store.forget_state(&state_key(device, bucket_id))?;
    Ok(Some(state.target))
}
