//! Maps keyed by the address of a shared data object, for work done once
//! per distinct object (`crate::transforms::DataMemo`, the merges, the
//! rules' per-object answers).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use aw_models::EventData;

/// A hash map keyed by an address. Addresses are unique while their
/// objects live, so no flooding-resistant hash is needed: a multiply
/// spreads them (they are 16-byte aligned).
pub(crate) type AddressMap<V> = HashMap<usize, V, BuildHasherDefault<AddressHasher>>;

/// Most entries a per-list map is made room for up front: a day's or a
/// week's distinct objects, so short lists never rehash as they fill
/// (rehashing showed in a 1-day dashboard query's profile), while a year's list
/// does not reserve room for every event when it has far fewer distinct
/// objects.
const PRESIZED_ENTRIES: usize = 1 << 14;

/// An empty [`AddressMap`] with room for the distinct objects of `events`
/// events (up to [`PRESIZED_ENTRIES`]).
pub(crate) fn address_map<V>(events: usize) -> AddressMap<V> {
    AddressMap::with_capacity_and_hasher(events.min(PRESIZED_ENTRIES), Default::default())
}

/// The address of a shared data object, as an [`AddressMap`] key.
pub(crate) fn address(data: &Arc<EventData>) -> usize {
    Arc::as_ptr(data) as usize
}

/// Hasher of [`AddressMap`], and of maps keyed by a hash already made
/// (`u64`): one word, spread by a multiply.
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

    fn write_u64(&mut self, value: u64) {
        self.0 = (value ^ self.0).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 ^= self.0 >> 29;
    }

    fn write_usize(&mut self, value: usize) {
        self.write_u64(value as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_map_finds_every_key() {
        let objects: Vec<Arc<EventData>> = (0..1000).map(|_| Arc::new(EventData::new())).collect();
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
