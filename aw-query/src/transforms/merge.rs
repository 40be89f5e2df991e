//! `merge_events_by_keys`: sum durations per distinct key values
//! (`docs/API.md` §7.5, with the correction §12 B-10).

use foldhash::fast::RandomState;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};
use std::sync::Arc;

use aw_models::{hash_json, Duration, EventData, SharedEvent};

use crate::address::{address, address_map, AddressHasher, AddressMap};
use serde_json::Value as Json;

/// One event per distinct combination of the values of `keys` (events
/// lacking a key are left out): timestamp of the group's first event in
/// input order, summed duration, no id, and data holding only the keys.
/// Groups come out in order of first occurrence. Hashing keeps it linear;
/// the input is only read, so a list still used elsewhere is not copied.
///
/// ```
/// # use aw_query::transforms::merge_events_by_keys;
/// # use aw_models::{Duration, SharedEvent, Timestamp};
/// let at = |s: i64, app: &str, title: &str| SharedEvent::new(
///     Timestamp::from_nanos(s), Duration::from_secs(1),
///     serde_json::json!({"app": app, "title": title}).as_object().unwrap().clone());
/// let merged = merge_events_by_keys(
///     &[at(0, "vim", "a"), at(1, "firefox", "b"), at(2, "vim", "c")],
///     &["app".to_string()],
/// );
/// assert_eq!(merged.len(), 2);
/// assert_eq!(merged[0].duration, Duration::from_secs(2));
/// assert_eq!(serde_json::Value::Object(merged[0].data.to_map()), serde_json::json!({"app": "vim"}));
/// ```
pub fn merge_events_by_keys(events: &[SharedEvent], keys: &[String]) -> Vec<SharedEvent> {
    if keys.is_empty() {
        return Vec::new();
    }
    let hasher = RandomState::default();
    let mut groups: Vec<SharedEvent> = Vec::new();
    let mut index = GroupIndex::default();
    // The key values of each group, `keys.len()` per group, borrowed from
    // the data of its first event: a new object is compared with them
    // instead of looking each key up again in both objects, and equal
    // values that are one shared value compare by address.
    let mut group_values: Vec<&Json> = Vec::new();
    let mut values: Vec<&Json> = Vec::with_capacity(keys.len());
    // Events sharing a data object (by address; `events` is borrowed
    // throughout, so addresses stay unique) belong to the same group, or
    // none: look the values up and hash them once per distinct object.
    // The map and the durations are what every event touches, in no
    // order, so they are kept small (16 bytes a distinct object, 8 a
    // group): with optional group numbers (24 bytes) and whole groups (40)
    // a year of window titles outgrew the core's cache, and merging by
    // [app, title] took 1.5-2 times as long.
    let mut by_data: AddressMap<u32> = address_map(events.len());
    let mut durations: Vec<Duration> = Vec::new();
    for event in events {
        let group = match by_data.get(&address(&event.data)) {
            Some(&NO_GROUP) => None,
            Some(&group) => Some(group as usize),
            None => {
                let group = find_group(
                    &event.data,
                    keys,
                    &hasher,
                    &group_values,
                    &mut values,
                    &mut index,
                );
                // A group number too large to keep is looked up again
                // at the object's next event.
                let kept = group.map_or(Some(NO_GROUP), |group| {
                    u32::try_from(group).ok().filter(|&group| group != NO_GROUP)
                });
                if let Some(kept) = kept {
                    by_data.insert(address(&event.data), kept);
                }
                group
            }
        };
        match group {
            Some(group) if group < durations.len() => {
                let merged = &mut durations[group];
                *merged = merged.saturating_add(event.duration);
            }
            Some(_) => {
                // `find_group` has just looked this object's values up.
                group_values.append(&mut values);
                let mut data = EventData::new();
                data.reserve(keys.len());
                for key in keys {
                    // Shared values (a category path) stay shared.
                    data.copy_from(&event.data, key);
                }
                durations.push(event.duration);
                groups.push(SharedEvent {
                    id: None,
                    timestamp: event.timestamp,
                    duration: Duration::ZERO,
                    data: Arc::new(data),
                });
            }
            None => {}
        }
    }
    for (group, duration) in groups.iter_mut().zip(durations) {
        group.duration = duration;
    }
    groups
}

/// Marks, in the map of distinct objects, one that belongs to no group
/// (a key is missing).
const NO_GROUP: u32 = u32::MAX;

/// Groups by the hash of their key values: the first group of each hash,
/// and for each group the next one with the same hash (rare), so a new
/// group costs no allocation of its own.
#[derive(Default)]
struct GroupIndex {
    first: HashMap<u64, usize, BuildHasherDefault<AddressHasher>>,
    next: Vec<Option<usize>>,
}

/// The group of `data`'s values of `keys` (left in `values`): an existing
/// group, or the next group number (registered in `index`) for a new one;
/// `None` when a key is missing. `group_values` holds the key values of
/// the groups so far.
fn find_group<'a>(
    data: &'a EventData,
    keys: &[String],
    hasher: &RandomState,
    group_values: &[&Json],
    values: &mut Vec<&'a Json>,
    index: &mut GroupIndex,
) -> Option<usize> {
    values.clear();
    let mut state = hasher.build_hasher();
    for key in keys {
        let value = data.get(key)?;
        hash_json(value, &mut state);
        values.push(value);
    }
    let width = keys.len();
    Some(index.find_or_add(state.finish(), |group| {
        group_values[group * width..(group + 1) * width]
            .iter()
            .zip(values.iter())
            .all(|(known, value)| std::ptr::eq(*known, *value) || known == value)
    }))
}

impl GroupIndex {
    /// The group with this hash for which `same` holds, or the next group
    /// number (the count so far), registered under the hash.
    fn find_or_add(&mut self, hash: u64, same: impl Fn(usize) -> bool) -> usize {
        let new = self.next.len();
        let mut last = match self.first.entry(hash) {
            Entry::Vacant(vacant) => {
                vacant.insert(new);
                self.next.push(None);
                return new;
            }
            Entry::Occupied(occupied) => *occupied.get(),
        };
        loop {
            if same(last) {
                return last;
            }
            match self.next[last] {
                Some(next) => last = next,
                None => break,
            }
        }
        self.next[last] = Some(new);
        self.next.push(None);
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_with_equal_hashes_stay_apart() {
        let mut index = GroupIndex::default();
        // Groups 0, 1 and 2 share a hash; `same` tells them apart.
        let values = ["a", "b", "c", "d"];
        let find = |index: &mut GroupIndex, hash: u64, value: &str| {
            index.find_or_add(hash, |group| values[group] == value)
        };
        assert_eq!(find(&mut index, 7, "a"), 0);
        assert_eq!(find(&mut index, 7, "b"), 1);
        assert_eq!(find(&mut index, 7, "c"), 2);
        assert_eq!(find(&mut index, 9, "d"), 3);
        for (group, value) in values.iter().enumerate().take(3) {
            assert_eq!(find(&mut index, 7, value), group);
        }
        assert_eq!(find(&mut index, 9, "d"), 3);
    }
}
