//! Memos keyed by shared data object: [`DataMemo`] and [`Derived`].
//!
//! Events read from a source share their data (see
//! `aw_models::SharedEvent`), and a year of window events has ~17k distinct
//! objects for ~300k events. So whatever depends only on an event's data
//! is computed once per distinct object, found by address: a filter's
//! verdict, a regex match, a transform's new data (`categorize`'s
//! `$category`, `split_url_events`'s URL parts), and every event that
//! shared the input shares the output. Equal data in separate objects is
//! merely computed twice; results never depend on the sharing.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use aw_models::Data;

/// A hash map keyed by an address. Addresses are unique while their
/// objects live, so no flooding-resistant hash is needed: a multiply
/// spreads them (they are 16-byte aligned).
pub(crate) type AddressMap<V> = HashMap<usize, V, BuildHasherDefault<AddressHasher>>;

/// The address of a shared data object, as an [`AddressMap`] key.
pub(crate) fn address(data: &Arc<Data>) -> usize {
    Arc::as_ptr(data) as usize
}

/// Hasher of [`AddressMap`].
#[derive(Debug, Default)]
pub(crate) struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*byte)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_usize(&mut self, value: usize) {
        self.0 = (value as u64 ^ self.0).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 ^= self.0 >> 29;
    }
}

/// A value computed once per distinct data object.
#[derive(Debug)]
pub(crate) struct DataMemo<V> {
    /// Address of the input → (the input, kept alive so that its address
    /// is not reused while the memo lives, and the value).
    memo: AddressMap<(Arc<Data>, V)>,
}

impl<V> Default for DataMemo<V> {
    fn default() -> DataMemo<V> {
        DataMemo {
            memo: AddressMap::default(),
        }
    }
}

impl<V: Clone> DataMemo<V> {
    /// The value of `input`, computed by `compute` on first sight; a
    /// failure is not remembered.
    pub fn get<E>(
        &mut self,
        input: &Arc<Data>,
        compute: impl FnOnce(&Data) -> Result<V, E>,
    ) -> Result<V, E> {
        let key = address(input);
        if let Some((_, value)) = self.memo.get(&key) {
            return Ok(value.clone());
        }
        let value = compute(input)?;
        self.memo.insert(key, (Arc::clone(input), value.clone()));
        Ok(value)
    }
}

/// New data derived from data, once per distinct object; for an
/// idempotent derivation also remembers each output as its own result, so
/// deriving a list a second time costs one lookup per event.
#[derive(Debug, Default)]
pub(crate) struct Derived(DataMemo<Arc<Data>>, bool);

impl Derived {
    /// A memo for a derivation that gives its output back unchanged.
    pub fn idempotent() -> Derived {
        Derived(DataMemo::default(), true)
    }

    /// Forgets every input that is not also an output, releasing the
    /// inputs the memo kept alive; what remains still answers a second
    /// derivation of the outputs.
    pub fn keep_outputs(&mut self) {
        self.0
            .memo
            .retain(|_, (input, output)| Arc::ptr_eq(input, output));
    }

    /// The data derived from `input` by `derive`, computed on first sight;
    /// `derive` answers `None` when the input already is the result, which
    /// is then shared instead of copied.
    pub fn get<E>(
        &mut self,
        input: &Arc<Data>,
        derive: impl FnOnce(&Data) -> Result<Option<Data>, E>,
    ) -> Result<Arc<Data>, E> {
        let key = address(input);
        if let Some((_, output)) = self.0.memo.get(&key) {
            return Ok(Arc::clone(output));
        }
        let output = derive(input)?.map_or_else(|| Arc::clone(input), Arc::new);
        self.0
            .memo
            .insert(key, (Arc::clone(input), Arc::clone(&output)));
        if self.1 {
            // Deriving the output again gives the output itself.
            self.0
                .memo
                .entry(address(&output))
                .or_insert_with(|| (Arc::clone(&output), Arc::clone(&output)));
        }
        Ok(output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn derives_once_per_shared_object() {
        let shared = Arc::new(json!({"a": 1}).as_object().cloned().unwrap());
        let equal_copy = Arc::new((*shared).clone());
        let mut derived = Derived::default();
        let mut calls = 0;
        let mut add = |data: &Data| -> Result<Option<Data>, ()> {
            calls += 1;
            if data.contains_key("b") {
                return Ok(None);
            }
            let mut data = data.clone();
            data.insert("b".into(), json!(2));
            Ok(Some(data))
        };
        let first = derived.get(&shared, &mut add).unwrap();
        let again = derived.get(&Arc::clone(&shared), &mut add).unwrap();
        let other = derived.get(&equal_copy, &mut add).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(first, other);
        assert_eq!(first["b"], 2);
        let unchanged = derived.get(&first, &mut add).unwrap();
        assert!(Arc::ptr_eq(&unchanged, &first));
        assert_eq!(calls, 3);
    }

    #[test]
    fn an_idempotent_memo_knows_its_outputs() {
        let input = Arc::new(Data::new());
        let mut derived = Derived::idempotent();
        let mut calls = 0;
        let mut add = |data: &Data| -> Result<Option<Data>, ()> {
            calls += 1;
            let mut data = data.clone();
            data.insert("b".into(), json!(2));
            Ok(Some(data))
        };
        let output = derived.get(&input, &mut add).unwrap();
        derived.keep_outputs();
        assert_eq!(Arc::strong_count(&input), 1, "the input is released");
        let again = derived.get(&output, &mut add).unwrap();
        assert!(Arc::ptr_eq(&output, &again));
        assert_eq!(calls, 1);
    }

    #[test]
    fn failures_are_not_remembered() {
        let data = Arc::new(Data::new());
        let mut memo: DataMemo<bool> = DataMemo::default();
        assert_eq!(memo.get(&data, |_| Err::<bool, &str>("no")), Err("no"));
        assert_eq!(memo.get(&data, |_| Ok::<_, ()>(true)), Ok(true));
        assert_eq!(memo.get(&data, |_| Ok::<_, ()>(false)), Ok(true));
    }

    #[test]
    fn address_map_finds_every_key() {
        let objects: Vec<Arc<Data>> = (0..1000).map(|_| Arc::new(Data::new())).collect();
        let map: AddressMap<usize> = objects
            .iter()
            .enumerate()
            .map(|(index, data)| (address(data), index))
            .collect();
        for (index, data) in objects.iter().enumerate() {
            assert_eq!(map[&address(data)], index);
        }
    }
}
