//! Events reduced to the data keys a query can observe ([`Projector`],
//! [`ProjectedEvents`]).
//!
//! A year of browser events holds ~78k distinct data objects, because each
//! records the tab count beside its URL and title, but the dashboard looks
//! at three keys of them, which take ~5k distinct combinations. Read with
//! only those keys, equal reduced objects made one, every step that works
//! once per distinct object (the URL split, the filters, the merges) works
//! on the ~5k. A `flood` of such a read must still compare the whole
//! stored objects, so each event keeps the class of its whole object.

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hash, Hasher};
use std::sync::Arc;

use crate::{EventData, SharedEvent};

/// Events whose data holds only some keys, each with the class of its
/// whole data: two events have the same class exactly when their whole
/// data objects are equal.
#[derive(Debug, Clone, Default)]
pub struct ProjectedEvents {
    /// The events, newest first as a read gives them.
    pub events: Vec<SharedEvent>,
    /// The class of each event's whole data, in the same order; empty
    /// when the events' data are whole (not reduced), which then compare
    /// as themselves.
    pub classes: Vec<u32>,
}

/// Reduces data objects to some keys: equal reduced objects are one shared
/// object, and each object's class tells whole objects apart.
#[derive(Debug)]
pub struct Projector {
    keys: Vec<String>,
    kept: Interned,
    /// The entries of each object that are not kept, by content.
    rest: Interned,
    /// The class of each (kept, rest) pair seen.
    classes: HashMap<(u32, u32), u32, foldhash::fast::RandomState>,
}

impl Projector {
    /// A reducer to `keys` (in any order, repeats ignored).
    pub fn new(keys: &[String]) -> Projector {
        let mut keys = keys.to_vec();
        keys.sort();
        keys.dedup();
        Projector {
            keys,
            kept: Interned::default(),
            rest: Interned::default(),
            classes: HashMap::default(),
        }
    }

    /// The shared reduced object of `data` and the class of `data`. Two
    /// objects are equal exactly when their kept entries are equal and
    /// their other entries are too, so a class is a pair of those. Both
    /// parts are looked up in place; only a part not seen before is made
    /// into an object of its own.
    pub fn reduce(&mut self, data: EventData) -> (Arc<EventData>, u32) {
        let keys = &self.keys;
        let is_kept = |key: &str| keys.binary_search_by(|kept| kept.as_str().cmp(key)).is_ok();
        let mut kept_hash = self.kept.hasher.build_hasher();
        let mut rest_hash = self.rest.hasher.build_hasher();
        let mut counts = (0usize, 0usize);
        for (key, value) in data.iter() {
            let (state, count) = match is_kept(key) {
                true => (&mut kept_hash, &mut counts.0),
                false => (&mut rest_hash, &mut counts.1),
            };
            key.hash(state);
            crate::data::hash_json(value, state);
            *count += 1;
        }
        counts.0.hash(&mut kept_hash);
        counts.1.hash(&mut rest_hash);
        let (kept_hash, rest_hash) = (kept_hash.finish(), rest_hash.finish());
        let found = (
            self.kept
                .find(kept_hash, |known| same_part(known, &data, is_kept, true)),
            self.rest
                .find(rest_hash, |known| same_part(known, &data, is_kept, false)),
        );
        let (kept, rest) = match found {
            (Some(kept), Some(rest)) => (kept, rest),
            (kept, rest) => {
                let (kept_part, rest_part) = data.split_keys(&self.keys);
                (
                    kept.unwrap_or_else(|| self.kept.insert(kept_hash, kept_part)),
                    rest.unwrap_or_else(|| self.rest.insert(rest_hash, rest_part)),
                )
            }
        };
        let next = u32::try_from(self.classes.len()).unwrap_or(u32::MAX);
        let class = *self.classes.entry((kept, rest)).or_insert(next);
        let object = self.kept.objects.get(kept as usize).cloned();
        (object.unwrap_or_default(), class)
    }
}

/// Whether `known` equals the entries of `data` whose keys are kept
/// (`wanted`) or not.
fn same_part(
    known: &EventData,
    data: &EventData,
    is_kept: impl Fn(&str) -> bool,
    wanted: bool,
) -> bool {
    let mut part = data.iter().filter(|(key, _)| is_kept(key) == wanted);
    for (key, value) in known.iter() {
        match part.next() {
            Some((other_key, other)) if key == other_key => {
                if !(std::ptr::eq(value, other) || value == other) {
                    return false;
                }
            }
            _ => return false,
        }
    }
    part.next().is_none()
}

/// Objects kept once per content, numbered in order of first sight.
#[derive(Debug, Default)]
struct Interned {
    hasher: foldhash::fast::RandomState,
    /// The first object of each hash, and for each object the next one
    /// with the same hash (rare).
    first: HashMap<u64, u32, BuildHasherDefault<WordHasher>>,
    next: Vec<Option<u32>>,
    objects: Vec<Arc<EventData>>,
}

impl Interned {
    /// The number of the object of `hash` for which `same` holds.
    fn find(&self, hash: u64, same: impl Fn(&EventData) -> bool) -> Option<u32> {
        let mut at = self.first.get(&hash).copied();
        while let Some(index) = at {
            if same(self.objects.get(index as usize)?) {
                return Some(index);
            }
            at = self.next.get(index as usize).copied().flatten();
        }
        None
    }

    /// Keeps `data`, of `hash` and equal to no object kept; its number.
    fn insert(&mut self, hash: u64, data: EventData) -> u32 {
        let index = u32::try_from(self.objects.len()).unwrap_or(u32::MAX);
        let mut at = self.first.get(&hash).copied();
        let mut last = None;
        while let Some(known) = at {
            last = Some(known);
            at = self.next.get(known as usize).copied().flatten();
        }
        match last.and_then(|last| self.next.get_mut(last as usize)) {
            Some(next) => *next = Some(index),
            None => {
                self.first.insert(hash, index);
            }
        }
        self.next.push(None);
        self.objects.push(Arc::new(data));
        index
    }
}

/// Hasher of maps keyed by a hash already made: the word as it is.
#[derive(Debug, Default)]
struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*byte);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn data(value: serde_json::Value) -> EventData {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn equal_reduced_objects_are_one_and_classes_tell_whole_objects_apart() {
        let mut reducer = Projector::new(&["url".to_string(), "title".to_string()]);
        let (a, class_a) = reducer.reduce(data(json!({"url": "u", "title": "t", "tabs": 1})));
        let (b, class_b) = reducer.reduce(data(json!({"url": "u", "title": "t", "tabs": 2})));
        let (c, class_c) = reducer.reduce(data(json!({"tabs": 1, "title": "t", "url": "u"})));
        let (d, class_d) = reducer.reduce(data(json!({"url": "u", "title": "t"})));
        let (e, class_e) = reducer.reduce(data(json!({"tabs": 1})));
        assert!(Arc::ptr_eq(&a, &b) && Arc::ptr_eq(&a, &c) && Arc::ptr_eq(&a, &d));
        assert_eq!(*a, data(json!({"url": "u", "title": "t"})));
        assert_eq!(*e, data(json!({})));
        assert_eq!(class_a, class_c);
        let classes = [class_a, class_b, class_d, class_e];
        for (index, class) in classes.iter().enumerate() {
            assert!(!classes[..index].contains(class), "{classes:?}");
        }
    }
}
