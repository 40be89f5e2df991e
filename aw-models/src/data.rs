//! [`EventData`]: an event's data object in the compact form the query
//! path reads and transforms.
//!
//! A `serde_json::Map` is a B-tree: one node of about 600 bytes per object
//! plus one heap string per key, and a lookup compares the wanted key with
//! several of those strings, each in its own allocation. A year of browser
//! data is ~78k distinct objects of five to nine keys, so decoding them,
//! looking keys up in them and freeing them was a large share of a long
//! query, most of it waiting for memory. `EventData` keeps the entries in
//! one vector sorted by key, with keys of up to 23 bytes stored inline, so
//! an object is one allocation (plus its string values) and a lookup reads
//! one contiguous block. It compares, serializes and iterates like the map
//! (keys in sorted order, a later duplicate key replacing an earlier one).
//!
//! A value may also be shared with other objects ([`EventData::insert_shared`]):
//! `categorize` gives thousands of objects one of a few category paths, and
//! `split_url_events` gives every object of a URL the same four parts.
//! Sharing makes adding such a value a reference count instead of a few
//! allocations, and a year of split browser data keeps one copy of each
//! URL's parts instead of one per object.
//!
//! A whole block of entries may be shared too ([`EventData::attach`]):
//! `split_url_events` gives each of a URL's objects a reference to one
//! block of its four parts, instead of a copy of the object's entries with
//! four more (those copies were a large part of a year query's peak
//! memory: `benches/runs/2026-11-23-shared-values.md`).

use std::borrow::Borrow;
use std::collections::HashSet;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value as Json;
use smol_str::SmolStr;

use crate::Data;

/// Entries past which lookups search by halving instead of in order.
const LINEAR_LOOKUP: usize = 12;

/// A JSON object: string keys, sorted and unique, with JSON values.
#[derive(Clone, Default)]
pub struct EventData {
    entries: Vec<(SmolStr, Value)>,
    /// Entries shared with other objects, under keys `entries` does not
    /// have; the object reads as both merged in key order.
    attached: Option<Arc<SharedEntries>>,
}

/// Entries that objects hold together ([`EventData::attach`]): keys sorted
/// and unique, as in an object.
#[derive(Clone, Default, PartialEq)]
pub struct SharedEntries {
    entries: Vec<(SmolStr, Value)>,
}

impl SharedEntries {
    /// A block of `entries`; of equal keys the last stays.
    pub fn new<K: AsRef<str>>(entries: impl IntoIterator<Item = (K, Json)>) -> SharedEntries {
        SharedEntries {
            entries: EventData::from_iter(entries).entries,
        }
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.entry(key).map(Value::get)
    }

    /// The entry of `key` (a block is a few entries: scanned in order).
    fn entry(&self, key: &str) -> Option<&Value> {
        self.entries
            .iter()
            .find(|(probe, _)| probe.as_str() == key)
            .map(|(_, value)| value)
    }
}

impl fmt::Debug for SharedEntries {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_map()
            .entries(self.entries.iter().map(|(key, value)| (key, value.get())))
            .finish()
    }
}

/// The entries of an object and of its attached block, merged in key
/// order (their keys never coincide).
#[derive(Clone)]
struct Merged<'a> {
    own: std::slice::Iter<'a, (SmolStr, Value)>,
    attached: std::slice::Iter<'a, (SmolStr, Value)>,
}

impl<'a> Iterator for Merged<'a> {
    type Item = &'a (SmolStr, Value);

    fn next(&mut self) -> Option<Self::Item> {
        match (
            self.own.as_slice().first(),
            self.attached.as_slice().first(),
        ) {
            (Some(own), Some(attached)) if attached.0 < own.0 => self.attached.next(),
            (Some(_), _) => self.own.next(),
            (None, _) => self.attached.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let len = self.own.len() + self.attached.len();
        (len, Some(len))
    }
}

impl ExactSizeIterator for Merged<'_> {}

/// An entry's value: its own, or shared with other objects. Either way it
/// reads as a `&Json`, and it takes no more room than a `Json`.
#[derive(Clone)]
enum Value {
    Own(Json),
    Shared(Arc<Json>),
}

impl Value {
    fn get(&self) -> &Json {
        match self {
            Value::Own(value) => value,
            Value::Shared(value) => value,
        }
    }

    fn into_json(self) -> Json {
        match self {
            Value::Own(value) => value,
            Value::Shared(value) => Arc::unwrap_or_clone(value),
        }
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Shared(a), Value::Shared(b)) if Arc::ptr_eq(a, b) => true,
            _ => self.get() == other.get(),
        }
    }
}

impl EventData {
    /// An empty object.
    pub fn new() -> EventData {
        EventData::default()
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.entries.len()
            + self
                .attached
                .as_ref()
                .map_or(0, |block| block.entries.len())
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries, the attached ones merged in.
    fn merged(&self) -> Merged<'_> {
        let attached: &[(SmolStr, Value)] = match &self.attached {
            Some(block) => &block.entries,
            None => &[],
        };
        Merged {
            own: self.entries.iter(),
            attached: attached.iter(),
        }
    }

    /// The entry of `key`, own or attached.
    fn entry(&self, key: &str) -> Option<&Value> {
        match self.find(key) {
            Some(index) => self.entries.get(index).map(|(_, value)| value),
            None => self.attached.as_ref()?.entry(key),
        }
    }

    /// Adds the entries of `block`, shared with the other objects it is
    /// attached to: a reference count instead of a copy of each value and
    /// a longer vector. It replaces values under the same keys, as
    /// inserting each entry would, and reads like any other entries.
    pub fn attach(&mut self, block: &Arc<SharedEntries>) {
        let clashes = self.attached.is_some()
            || block
                .entries
                .iter()
                .any(|(key, _)| self.find(key).is_some());
        if !clashes {
            self.attached = Some(Arc::clone(block));
            return;
        }
        self.detach();
        self.entries.reserve_exact(block.entries.len());
        for (key, value) in &block.entries {
            self.put(key, value.clone());
        }
    }

    /// Moves the attached entries (copies of their values' references)
    /// into this object's own, before a change.
    fn detach(&mut self) {
        let Some(block) = self.attached.take() else {
            return;
        };
        let own = std::mem::take(&mut self.entries);
        let mut merged = Vec::with_capacity(own.len() + block.entries.len());
        let mut attached = block.entries.iter().cloned().peekable();
        for entry in own {
            while let Some(new) = attached.next_if(|(key, _)| *key < entry.0) {
                merged.push(new);
            }
            merged.push(entry);
        }
        merged.extend(attached);
        self.entries = merged;
    }

    /// Where `key` is (`Ok`) or would go (`Err`).
    fn position(&self, key: &str) -> Result<usize, usize> {
        if self.entries.len() > LINEAR_LOOKUP {
            return self
                .entries
                .binary_search_by(|(probe, _)| probe.as_str().cmp(key));
        }
        for (index, (probe, _)) in self.entries.iter().enumerate() {
            match probe.as_str().cmp(key) {
                std::cmp::Ordering::Less => {}
                std::cmp::Ordering::Equal => return Ok(index),
                std::cmp::Ordering::Greater => return Err(index),
            }
        }
        Err(self.entries.len())
    }

    /// Where `key` is, if present. Small objects are scanned for equality,
    /// which rejects most keys on their length alone; the ordered search
    /// of [`EventData::position`] called `memcmp` for every key it passed.
    fn find(&self, key: &str) -> Option<usize> {
        if self.entries.len() > LINEAR_LOOKUP {
            return self.position(key).ok();
        }
        self.entries
            .iter()
            .position(|(probe, _)| probe.as_str() == key)
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.entry(key).map(Value::get)
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.entry(key).is_some()
    }

    /// Sets `key` to `value`; answers the value it replaces.
    pub fn insert(&mut self, key: impl AsRef<str>, value: Json) -> Option<Json> {
        self.put(key.as_ref(), Value::Own(value))
    }

    /// Sets `key` to a value shared with other objects: no copy is made,
    /// now or when the object is cloned. It reads like any other value.
    pub fn insert_shared(&mut self, key: impl AsRef<str>, value: Arc<Json>) {
        self.put(key.as_ref(), Value::Shared(value));
    }

    /// Sets `key` to the value `other` has under it (shared if it is
    /// shared there); answers whether `other` has the key.
    pub fn copy_from(&mut self, other: &EventData, key: &str) -> bool {
        let Some(value) = other.entry(key) else {
            return false;
        };
        self.put(key, value.clone());
        true
    }

    fn put(&mut self, key: &str, value: Value) -> Option<Json> {
        self.detach();
        match self.position(key) {
            Ok(index) => self
                .entries
                .get_mut(index)
                .map(|(_, old)| std::mem::replace(old, value).into_json()),
            Err(index) => {
                if self.entries.len() == self.entries.capacity() {
                    // Grown by a quarter, not doubled: objects are many
                    // and mostly get one key more (`$category`), or a few
                    // announced with `reserve`.
                    self.entries.reserve_exact((self.entries.len() / 4).max(1));
                }
                self.entries.insert(index, (SmolStr::new(key), value));
                None
            }
        }
    }

    /// Makes room for `additional` more keys, exactly.
    pub fn reserve(&mut self, additional: usize) {
        self.entries.reserve_exact(additional);
    }

    /// Removes `key`; answers its value.
    pub fn remove(&mut self, key: &str) -> Option<Json> {
        self.entry(key)?;
        self.detach();
        let index = self.position(key).ok()?;
        Some(self.entries.remove(index).1.into_json())
    }

    /// The entries in key order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Json)> {
        self.merged()
            .map(|(key, value)| (key.as_str(), value.get()))
    }

    /// The keys in order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> {
        self.merged().map(|(key, _)| key.as_str())
    }

    /// The values in key order.
    pub fn values(&self) -> impl ExactSizeIterator<Item = &Json> {
        self.merged().map(|(_, value)| value.get())
    }

    /// The same object as a `serde_json` map.
    pub fn to_map(&self) -> Data {
        self.iter()
            .map(|(key, value)| (key.to_string(), value.clone()))
            .collect()
    }

    /// The object as a `serde_json` map, moving the values.
    pub fn into_map(mut self) -> Data {
        self.detach();
        self.entries
            .into_iter()
            .map(|(key, value)| (key.to_string(), value.into_json()))
            .collect()
    }

    /// Sorts entries gathered in any order; of equal keys the last stays.
    fn from_unsorted(mut entries: Vec<(SmolStr, Value)>) -> EventData {
        if !entries.windows(2).all(|pair| pair[0].0 < pair[1].0) {
            // Stable, so equal keys keep their order; then keep the last.
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            let mut kept: Vec<(SmolStr, Value)> = Vec::with_capacity(entries.len());
            for entry in entries {
                match kept.last_mut() {
                    Some(last) if last.0 == entry.0 => *last = entry,
                    _ => kept.push(entry),
                }
            }
            entries = kept;
        }
        EventData {
            entries,
            attached: None,
        }
    }
}

impl PartialEq for EventData {
    fn eq(&self, other: &EventData) -> bool {
        let same_block = match (&self.attached, &other.attached) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        if same_block {
            return self.entries == other.entries;
        }
        self.len() == other.len() && self.merged().eq(other.merged())
    }
}

impl EventData {
    /// Splits the object into the entries under `keys` (sorted, unique)
    /// and the others, both in key order.
    pub fn split_keys(mut self, keys: &[String]) -> (EventData, EventData) {
        self.detach();
        let (kept, rest) = self
            .entries
            .into_iter()
            .partition(|(key, _)| keys.binary_search_by(|kept| kept.as_str().cmp(key)).is_ok());
        let object = |entries| EventData {
            entries,
            attached: None,
        };
        (object(kept), object(rest))
    }

    /// Hashes the object so that equal objects (`==`) hash equally.
    pub fn hash_content(&self, state: &mut impl Hasher) {
        self.len().hash(state);
        for (key, value) in self.iter() {
            key.hash(state);
            hash_json(value, state);
        }
    }
}

/// Hashes a JSON value so that equal values hash equally (numbers by their
/// value as a float, so `1` and `1.0` only collide; object entries in any
/// order).
pub fn hash_json(value: &Json, state: &mut impl Hasher) {
    match value {
        Json::Null => 0u8.hash(state),
        Json::Bool(flag) => (1u8, flag).hash(state),
        Json::Number(number) => {
            let float = number.as_f64().unwrap_or(0.0);
            (2u8, if float == 0.0 { 0 } else { float.to_bits() }).hash(state)
        }
        Json::String(text) => (3u8, text).hash(state),
        Json::Array(items) => {
            (4u8, items.len()).hash(state);
            items.iter().for_each(|item| hash_json(item, state));
        }
        Json::Object(map) => {
            // Order-independent, so equal objects hash equally whatever
            // order the map keeps its keys in.
            let mut combined: u64 = 0;
            for (key, item) in map {
                let mut entry = std::hash::DefaultHasher::new();
                key.hash(&mut entry);
                hash_json(item, &mut entry);
                combined = combined.wrapping_add(entry.finish());
            }
            (5u8, map.len(), combined).hash(state);
        }
    }
}

impl EventData {
    /// Decodes a JSON object text as `serde_json::from_str` does, but with
    /// its string values (at the top level) taken from `pool`: the objects
    /// decoded with one pool share each distinct string. A read's objects
    /// repeat the same apps, URLs and page titles in many combinations, and
    /// a shared string is neither allocated again when decoded nor when a
    /// merge copies it into a group.
    pub fn from_json_pooled(
        text: &str,
        pool: &mut StringPool,
    ) -> Result<EventData, serde_json::Error> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let data = deserializer.deserialize_map(ObjectVisitor { pool: Some(pool) })?;
        deserializer.end()?;
        Ok(data)
    }
}

/// Strings shared among the data objects decoded with it
/// ([`EventData::from_json_pooled`]), by content.
#[derive(Debug, Default)]
pub struct StringPool {
    strings: HashSet<PooledString, foldhash::fast::RandomState>,
}

impl StringPool {
    /// An empty pool.
    pub fn new() -> StringPool {
        StringPool::default()
    }

    /// The pool's JSON string of `text`, made on first sight.
    fn string(&mut self, text: &str) -> Arc<Json> {
        if let Some(found) = self.strings.get(text) {
            return Arc::clone(&found.0);
        }
        let shared = Arc::new(Json::String(text.to_owned()));
        self.strings.insert(PooledString(Arc::clone(&shared)));
        shared
    }
}

/// A JSON string of a [`StringPool`], hashed and compared as its text.
#[derive(Debug)]
struct PooledString(Arc<Json>);

impl PooledString {
    fn text(&self) -> &str {
        self.0.as_str().unwrap_or_default()
    }
}

impl Hash for PooledString {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.text().hash(state);
    }
}

impl PartialEq for PooledString {
    fn eq(&self, other: &PooledString) -> bool {
        self.text() == other.text()
    }
}

impl Eq for PooledString {}

impl Borrow<str> for PooledString {
    fn borrow(&self) -> &str {
        self.text()
    }
}

impl From<Data> for EventData {
    fn from(map: Data) -> EventData {
        EventData::from_unsorted(
            map.into_iter()
                .map(|(key, value)| (SmolStr::from(key), Value::Own(value)))
                .collect(),
        )
    }
}

impl From<&Data> for EventData {
    fn from(map: &Data) -> EventData {
        EventData::from_unsorted(
            map.iter()
                .map(|(key, value)| (SmolStr::new(key), Value::Own(value.clone())))
                .collect(),
        )
    }
}

impl From<EventData> for Data {
    fn from(data: EventData) -> Data {
        data.into_map()
    }
}

impl<K: AsRef<str>> FromIterator<(K, Json)> for EventData {
    fn from_iter<I: IntoIterator<Item = (K, Json)>>(entries: I) -> EventData {
        EventData::from_unsorted(
            entries
                .into_iter()
                .map(|(key, value)| (SmolStr::new(key), Value::Own(value)))
                .collect(),
        )
    }
}

impl PartialEq<Data> for EventData {
    fn eq(&self, map: &Data) -> bool {
        self.len() == map.len()
            && self
                .iter()
                .all(|(key, value)| map.get(key).is_some_and(|other| other == value))
    }
}

impl std::ops::Index<&str> for EventData {
    type Output = Json;

    /// The value of `key`, `null` when absent (like `serde_json::Value`).
    fn index(&self, key: &str) -> &Json {
        static NULL: Json = Json::Null;
        self.get(key).unwrap_or(&NULL)
    }
}

impl fmt::Debug for EventData {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for EventData {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (key, value) in self.iter() {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for EventData {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<EventData, D::Error> {
        deserializer.deserialize_map(ObjectVisitor { pool: None })
    }
}

/// Decodes an object; with a pool, its string values come from there.
struct ObjectVisitor<'p> {
    pool: Option<&'p mut StringPool>,
}

impl<'de> Visitor<'de> for ObjectVisitor<'_> {
    type Value = EventData;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut access: A) -> Result<EventData, A::Error> {
        // Entries are gathered in a reused buffer and then copied into a
        // vector of their exact size: JSON gives no count up front, and a
        // growing vector would leave a year of browser data with much
        // unused capacity (`benches/runs/2026-11-23-compact-data.md`).
        thread_local! {
            static SCRATCH: std::cell::Cell<Vec<(SmolStr, Value)>> =
                const { std::cell::Cell::new(Vec::new()) };
        }
        let mut scratch = SCRATCH.take();
        scratch.clear();
        let gathered = (|| {
            while let Some(key) = access.next_key_seed(KeySeed)? {
                let value = match self.pool.as_deref_mut() {
                    Some(pool) => access.next_value_seed(PooledValue(pool))?,
                    None => Value::Own(access.next_value()?),
                };
                scratch.push((key, value));
            }
            Ok(())
        })();
        let mut entries = Vec::with_capacity(scratch.len());
        entries.append(&mut scratch);
        SCRATCH.set(scratch);
        gathered.map(|()| EventData::from_unsorted(entries))
    }
}

/// Decodes a value as `serde_json::Value` does, with a string taken from
/// the pool.
struct PooledValue<'p>(&'p mut StringPool);

impl<'de> DeserializeSeed<'de> for PooledValue<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for PooledValue<'_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Own(Json::Bool(value)))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Own(Json::from(value)))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Own(Json::from(value)))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
        Ok(Value::Own(Json::from(value)))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Value, E> {
        Ok(Value::Shared(self.0.string(value)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Own(Json::Null))
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Own(Json::Null))
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        Json::deserialize(deserializer).map(Value::Own)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, items: A) -> Result<Value, A::Error> {
        Json::deserialize(SeqAccessDeserializer::new(items)).map(Value::Own)
    }

    fn visit_map<A: MapAccess<'de>>(self, entries: A) -> Result<Value, A::Error> {
        Json::deserialize(MapAccessDeserializer::new(entries)).map(Value::Own)
    }
}

/// Reads a key straight into a [`SmolStr`], without an owned `String`
/// for the short keys events have.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = SmolStr;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<SmolStr, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for KeySeed {
    type Value = SmolStr;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a string key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<SmolStr, E> {
        Ok(SmolStr::new(key))
    }

    fn visit_string<E: de::Error>(self, key: String) -> Result<SmolStr, E> {
        Ok(SmolStr::from(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(value: Json) -> Data {
        value.as_object().cloned().unwrap_or_default()
    }

    /// Everything an object answers, to compare an object with attached
    /// entries with one holding them all itself.
    fn observed(data: &EventData) -> (usize, Vec<(String, Json)>, String, Data, String) {
        let entries: Vec<(String, Json)> = data
            .iter()
            .map(|(key, value)| (key.to_string(), value.clone()))
            .collect();
        assert_eq!(data.keys().len(), entries.len());
        assert!(data.keys().eq(entries.iter().map(|(key, _)| key.as_str())));
        assert!(data.values().eq(entries.iter().map(|(_, value)| value)));
        for (key, value) in &entries {
            assert_eq!(data.get(key), Some(value));
            assert!(data.contains_key(key));
        }
        assert_eq!(data.get("missing"), None);
        assert_eq!(data.is_empty(), entries.is_empty());
        (
            data.len(),
            entries,
            serde_json::to_string(data).unwrap(),
            data.to_map(),
            format!("{data:?}"),
        )
    }

    #[test]
    fn attached_entries_read_and_change_like_inserted_ones() {
        let starts = [
            json!({}),
            json!({"url": "u", "title": "t", "audible": false}),
            json!({"url": "u", "title": "t", "$domain": "old"}),
            json!({"a": 1, "zz": 2, "$path": [1]}),
        ];
        let blocks = [
            json!({}),
            json!({"$domain": "d", "$params": "q", "$path": "x", "$protocol": "p"}),
            json!({"a": "first", "m": "mid", "zzz": "last"}),
            json!({"$category": ["Work"]}),
        ];
        for start in &starts {
            for block in &blocks {
                let shared = Arc::new(SharedEntries::new(map(block.clone())));
                let mut attached = EventData::from(map(start.clone()));
                attached.attach(&shared);
                let mut flat = EventData::from(map(start.clone()));
                for (key, value) in map(block.clone()) {
                    flat.insert(key, value);
                }
                let context = format!("{start} + {block}");
                assert_eq!(observed(&attached), observed(&flat), "{context}");
                assert_eq!(attached, flat, "{context}");
                assert_eq!(flat, attached, "{context}");
                assert_eq!(attached.clone().into_map(), flat.clone().into_map());
                assert_eq!(attached, flat.to_map(), "{context}");
                // Two objects sharing the block, and one with an equal copy.
                let mut twin = EventData::from(map(start.clone()));
                twin.attach(&shared);
                assert_eq!(attached, twin);
                let mut copy = EventData::from(map(start.clone()));
                copy.attach(&Arc::new(SharedEntries::new(map(block.clone()))));
                assert_eq!(attached, copy);
                // Changes after attaching, including of attached keys.
                let other = EventData::from(map(json!({"$path": "/o", "b": true})));
                for change in 0..7 {
                    let (mut a, mut f) = (attached.clone(), flat.clone());
                    for data in [&mut a, &mut f] {
                        match change {
                            0 => assert_eq!(
                                data.clone().insert("$path", json!("new")),
                                data.insert("$path", json!("new"))
                            ),
                            1 => drop(data.insert("b", json!(2))),
                            2 => drop(data.remove("$domain")),
                            3 => drop(data.remove("url")),
                            4 => assert!(data.copy_from(&other, "$path")),
                            5 => data.attach(&Arc::new(SharedEntries::new([
                                ("$path", json!(9)),
                                ("n", json!(null)),
                            ]))),
                            _ => data.insert_shared("$category", Arc::new(json!("c"))),
                        }
                    }
                    assert_eq!(observed(&a), observed(&f), "{context}, change {change}");
                    assert_eq!(a, f, "{context}, change {change}");
                }
            }
        }
        // A block differing from the own entries is unequal.
        let mut a = EventData::from(map(json!({"url": "u"})));
        a.attach(&Arc::new(SharedEntries::new([("$domain", json!("x"))])));
        let mut b = EventData::from(map(json!({"url": "u"})));
        b.attach(&Arc::new(SharedEntries::new([("$domain", json!("y"))])));
        assert_ne!(a, b);
        assert_ne!(a, EventData::from(map(json!({"url": "u"}))));
    }

    #[test]
    fn behaves_like_the_map_it_came_from() {
        let source = map(
            json!({"url": "https://a.b/", "title": "A", "audible": false,
                                "a-key-longer-than-twenty-three-bytes": [1, {"x": null}]}),
        );
        let data = EventData::from(source.clone());
        assert_eq!(data.len(), 4);
        assert_eq!(data, source);
        assert_eq!(data.to_map(), source);
        assert_eq!(data["title"], "A");
        assert_eq!(data["missing"], Json::Null);
        assert!(data.contains_key("a-key-longer-than-twenty-three-bytes"));
        assert!(data.get("tit").is_none());
        let keys: Vec<&str> = data.keys().collect();
        let expected: Vec<&str> = source.keys().map(String::as_str).collect();
        assert_eq!(keys, expected);
        assert_eq!(
            serde_json::to_string(&data).unwrap(),
            serde_json::to_string(&source).unwrap()
        );
        assert_eq!(format!("{data:?}"), format!("{source:?}"));
    }

    #[test]
    fn decodes_like_serde_json_including_duplicate_keys() {
        for text in [
            r#"{"b": 1, "a": 2, "b": 3}"#,
            r#"{"z": "\u00e9", "y\"q": [1, 2], "x": {"n": true}}"#,
            r#"{}"#,
        ] {
            let ours: EventData = serde_json::from_str(text).unwrap();
            let theirs: Data = serde_json::from_str(text).unwrap();
            assert_eq!(ours, theirs, "{text}");
            assert_eq!(ours.into_map(), theirs, "{text}");
        }
        assert!(serde_json::from_str::<EventData>("[1]").is_err());
        assert!(serde_json::from_str::<EventData>(r#"{"a": }"#).is_err());
    }

    #[test]
    fn pooled_decoding_matches_serde_json_and_shares_strings() {
        let texts = [
            r#"{"app": "vim", "title": "a\"b\u00e9\n", "n": 3}"#,
            r#"{"title": "vim", "app": "vim", "b": true, "z": null}"#,
            r#"{"u": 18446744073709551615, "i": -9223372036854775808, "f": 1.5e300, "g": -0.0}"#,
            r#"{"nested": {"app": "vim", "x": [1, "vim", {"y": "z"}]}, "list": ["vim"]}"#,
            r#"{"b": "1", "a": "2", "b": "3"}"#,
            r#"{}"#,
        ];
        let mut pool = StringPool::new();
        for text in texts {
            let pooled = EventData::from_json_pooled(text, &mut pool).unwrap();
            let plain: EventData = serde_json::from_str(text).unwrap();
            let map: Data = serde_json::from_str(text).unwrap();
            assert_eq!(pooled, plain, "{text}");
            assert_eq!(pooled.to_map(), map, "{text}");
            assert_eq!(
                serde_json::to_string(&pooled).unwrap(),
                serde_json::to_string(&map).unwrap(),
                "{text}"
            );
        }
        // Equal top-level strings of all objects are one string.
        let first = EventData::from_json_pooled(texts[0], &mut pool).unwrap();
        let second = EventData::from_json_pooled(texts[1], &mut pool).unwrap();
        let Some(Value::Shared(app)) = first.entries.iter().find(|e| e.0 == "app").map(|e| &e.1)
        else {
            panic!("a pooled string is shared");
        };
        for key in ["app", "title"] {
            let (_, value) = second.entries.iter().find(|e| e.0 == key).unwrap();
            assert!(
                matches!(value, Value::Shared(other) if Arc::ptr_eq(app, other)),
                "{key}"
            );
        }
        for bad in ["[1]", r#"{"a": }"#, r#"{"a": 1} x"#, r#"{"a": "b""#, ""] {
            assert!(
                EventData::from_json_pooled(bad, &mut pool).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn decoded_objects_hold_no_spare_room() {
        let data: EventData =
            serde_json::from_str(r#"{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}"#).unwrap();
        assert_eq!(data.entries.capacity(), 5);
        let mut data = data;
        data.reserve(4);
        for key in ["$1", "$2", "$3", "$4"] {
            data.insert(key, Json::Null);
        }
        assert_eq!(data.entries.capacity(), 9);
    }

    #[test]
    fn shared_values_read_compare_and_serialize_like_own_ones() {
        // A shared value takes no more room than an owned one.
        assert_eq!(std::mem::size_of::<Value>(), std::mem::size_of::<Json>());
        let path = Arc::new(json!(["Work", "Programming"]));
        let mut shared = EventData::from(map(json!({"app": "vim"})));
        shared.insert_shared("$category", Arc::clone(&path));
        let own = EventData::from(map(
            json!({"app": "vim", "$category": ["Work", "Programming"]}),
        ));
        assert_eq!(shared, own);
        assert_eq!(own, shared);
        assert_eq!(shared["$category"], *path);
        assert_eq!(
            serde_json::to_string(&shared).unwrap(),
            serde_json::to_string(&own).unwrap()
        );
        assert_eq!(format!("{shared:?}"), format!("{own:?}"));
        assert_eq!(shared.to_map(), own.to_map());
        // Clones and copies share it rather than copy it.
        let copy = shared.clone();
        let mut merged = EventData::new();
        assert!(merged.copy_from(&shared, "$category"));
        assert!(!merged.copy_from(&shared, "title"));
        assert_eq!(Arc::strong_count(&path), 4);
        assert_eq!(merged.len(), 1);
        assert_eq!(merged["$category"], *path);
        // Taking it out gives the value; replacing it answers the old one.
        let mut edited = copy;
        assert_eq!(
            edited.insert("$category", json!("x")),
            Some((*path).clone())
        );
        assert_eq!(edited.remove("$category"), Some(json!("x")));
        assert_eq!(shared.into_map(), own.into_map());
        assert_eq!(Arc::strong_count(&path), 2);
    }

    #[test]
    fn insert_keeps_keys_sorted_and_unique() {
        let mut data = EventData::new();
        for (index, key) in [
            "m", "c", "x", "a", "c", "b", "n", "o", "p", "q", "r", "s", "t", "u",
        ]
        .iter()
        .enumerate()
        {
            data.insert(key, json!(index));
        }
        let keys: Vec<&str> = data.keys().collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(keys, sorted);
        assert_eq!(data["c"], json!(4));
        // Past the linear threshold lookups search by halving.
        assert!(data.len() > LINEAR_LOOKUP);
        for key in &keys {
            assert!(data.contains_key(key), "{key}");
        }
        assert_eq!(data.remove("c"), Some(json!(4)));
        assert!(!data.contains_key("c"));
        assert_eq!(data.insert("a", json!("new")), Some(json!(3)));
    }
}
