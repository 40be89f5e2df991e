//! Work once per shared data object: [`DataMemo`] and [`edit_data`].
//!
//! Events read from a source share their data (see
//! `aw_models::SharedEvent`), and a year of window events has ~17k distinct
//! objects for ~300k events. So whatever depends only on an event's data
//! is computed once per distinct object, found by address: a filter's
//! verdict, a regex match, a transform's new data (`categorize`'s
//! `$category`, `split_url_events`'s URL parts), and every event that
//! shared the input shares the output. Equal data in separate objects is
//! merely computed twice; results never depend on the sharing.

use std::sync::{Arc, Mutex, PoisonError};

use aw_models::{empty_data, EventData, SharedEvent};

use crate::address::{address, address_map, AddressMap};

/// A value computed once per distinct data object, for one pass over one
/// list of events.
///
/// It is keyed by address and does not hold the objects: every event the
/// pass looks at holds its object from before the pass began, when all of
/// them were alive at once and so at distinct addresses, and an object
/// made during the pass is never one of them. So an address that is known
/// means the same object, even if an event dropped along the way freed
/// another. Holding a reference to each object as well made each entry
/// three times as large and touched every object's count twice.
#[derive(Debug)]
pub(crate) struct DataMemo<V> {
    memo: AddressMap<V>,
}

impl<V: Copy> DataMemo<V> {
    /// A memo with room for the distinct objects of `events` events.
    pub fn for_events(events: usize) -> DataMemo<V> {
        DataMemo {
            memo: address_map(events),
        }
    }

    /// The value of `input`, computed by `compute` on first sight; a
    /// failure is not remembered.
    pub fn get<E>(
        &mut self,
        input: &Arc<EventData>,
        compute: impl FnOnce(&EventData) -> Result<V, E>,
    ) -> Result<V, E> {
        let key = address(input);
        if let Some(value) = self.memo.get(&key) {
            return Ok(*value);
        }
        let value = compute(input)?;
        self.memo.insert(key, value);
        Ok(value)
    }
}

/// Edits the data of `events` once per distinct object: `decide` looks at
/// an object (with the index of its first event) and answers the change to
/// make, `None` to leave it as it is; `apply` makes it. An object that only
/// these events hold is edited where it is, not copied: a year of browser
/// data is ~78k objects, and copying each to add four keys was most of
/// `split_url_events`' time and memory. An object held elsewhere too
/// (another list, a memo) is copied first, so no other holder sees the
/// change. Answers the distinct objects the events hold afterwards.
pub(crate) fn edit_data<T>(
    events: &mut [SharedEvent],
    mut decide: impl FnMut(usize, &Arc<EventData>) -> Option<T>,
    mut apply: impl FnMut(&mut EventData, T),
) -> Vec<Arc<EventData>> {
    // At most one per event; pages of the unused room are never touched.
    let mut changes: Vec<Option<T>> = Vec::with_capacity(events.len());
    let distinct = Distinct::of(events, |index, data| changes.push(decide(index, data)));
    distinct.edit(events, changes, |objects, changes| {
        edit_each(objects, changes, &mut apply);
    })
}

/// [`edit_data`] with the decisions and the edits shared by this thread
/// and a second one, each taking half of the distinct objects: the first
/// of `deciders` decides on this thread, the second on the other, so each
/// keeps its own memory. The changes made, the copies and the answer are
/// [`edit_data`]'s; only which thread does the work differs. Objects are
/// split, not events: an object that recurs all year is decided and
/// edited once, on one thread (halves of the list each copied such
/// objects and each decided them, and took longer than one thread).
pub(crate) fn edit_data_on_two<T: Send>(
    events: &mut [SharedEvent],
    deciders: [&mut Decider<'_, T>; 2],
    apply: impl Fn(&mut EventData, T) + Sync,
) -> Vec<Arc<EventData>> {
    let distinct = Distinct::of(events, |_, _| {});
    let [first, second] = deciders;
    let (mine, theirs) = distinct.objects.split_at(distinct.objects.len() / 2);
    let changes = on_two(
        || mine.iter().map(&mut *first).collect::<Vec<_>>(),
        || theirs.iter().map(&mut *second).collect::<Vec<_>>(),
    );
    let changes = changes.0.into_iter().chain(changes.1).collect();
    distinct.edit(events, changes, |objects, changes| {
        let half = objects.len() / 2;
        let (mine, theirs) = objects.split_at_mut(half);
        let (my_changes, their_changes) = changes.split_at_mut(half);
        on_two(
            || edit_each(mine, my_changes, &apply),
            || edit_each(theirs, their_changes, &apply),
        );
    })
}

/// What decides on an object's change for [`edit_data_on_two`].
pub(crate) type Decider<'a, T> = dyn FnMut(&Arc<EventData>) -> Option<T> + Send + 'a;

/// Runs `first` on this thread and `second` on a scoped thread of its own
/// (at this thread's priority), and answers both results; when no thread
/// can be made, `second` runs here after `first`. A panic in either is
/// resumed here.
fn on_two<A, B: Send>(first: impl FnOnce() -> A, second: impl FnOnce() -> B + Send) -> (A, B) {
    // Taken by whichever thread runs it: a failed spawn drops the closure
    // it was given, so the work itself must stay reachable from here.
    let second = Mutex::new(Some(second));
    let run_second = || {
        let work = second.lock().unwrap_or_else(PoisonError::into_inner).take();
        work.map(|work| work())
    };
    std::thread::scope(|scope| {
        let other = std::thread::Builder::new().spawn_scoped(scope, run_second);
        let mine = first();
        let theirs = match other {
            Ok(other) => other
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => None,
        };
        match theirs.or_else(run_second) {
            Some(theirs) => (mine, theirs),
            None => unreachable!("the second half runs on one of the threads"),
        }
    })
}

/// Makes each change of `changes` on the object beside it, in place when
/// nothing else holds it.
fn edit_each<T>(
    objects: &mut [Arc<EventData>],
    changes: &mut [Option<T>],
    mut apply: impl FnMut(&mut EventData, T),
) {
    for (data, change) in objects.iter_mut().zip(changes) {
        if let Some(change) = change.take() {
            // Copies only when another holder remains.
            apply(Arc::make_mut(data), change);
        }
    }
}

/// The distinct data objects of a list of events, in order of first
/// sight, and each event's object by its index there.
struct Distinct {
    objects: Vec<Arc<EventData>>,
    of_event: Vec<u32>,
}

impl Distinct {
    /// The distinct objects of `events`; `first_sight` is called with each
    /// object (and the index of its first event) as it is found.
    fn of(events: &[SharedEvent], mut first_sight: impl FnMut(usize, &Arc<EventData>)) -> Distinct {
        let mut slot_of: AddressMap<u32> = address_map(events.len());
        // At most one per event; pages of the unused room are never touched.
        let mut objects: Vec<Arc<EventData>> = Vec::with_capacity(events.len());
        let mut of_event: Vec<u32> = Vec::with_capacity(events.len());
        for (index, event) in events.iter().enumerate() {
            let slot = *slot_of.entry(address(&event.data)).or_insert_with(|| {
                first_sight(index, &event.data);
                objects.push(Arc::clone(&event.data));
                u32::try_from(objects.len() - 1).unwrap_or(u32::MAX)
            });
            of_event.push(slot);
        }
        Distinct { objects, of_event }
    }

    /// Makes `changes` (one per object, in order) with `edit`, with the
    /// events letting go of the objects that change meanwhile, so that
    /// `self` holds the only reference to those nothing else holds; then
    /// gives each event its object back. Answers the objects.
    fn edit<T>(
        mut self,
        events: &mut [SharedEvent],
        mut changes: Vec<Option<T>>,
        edit: impl FnOnce(&mut [Arc<EventData>], &mut [Option<T>]),
    ) -> Vec<Arc<EventData>> {
        let changed: Vec<bool> = changes.iter().map(Option::is_some).collect();
        let changes_at = |slot: u32| changed.get(slot as usize).copied().unwrap_or(false);
        let placeholder = empty_data();
        for (event, &slot) in events.iter_mut().zip(&self.of_event) {
            if changes_at(slot) {
                event.data = Arc::clone(&placeholder);
            }
        }
        edit(&mut self.objects, &mut changes);
        for (event, &slot) in events.iter_mut().zip(&self.of_event) {
            if changes_at(slot) {
                if let Some(data) = self.objects.get(slot as usize) {
                    event.data = Arc::clone(data);
                }
            }
        }
        self.objects
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn edits_objects_held_only_by_the_list_in_place() {
        use aw_models::{Duration, Timestamp};
        let event = |data: &Arc<EventData>| SharedEvent {
            id: None,
            timestamp: Timestamp::from_nanos(0),
            duration: Duration::ZERO,
            data: Arc::clone(data),
        };
        let own = Arc::new(json!({"a": 1}).as_object().cloned().unwrap().into());
        let held = Arc::new(json!({"a": 2}).as_object().cloned().unwrap().into());
        let kept = Arc::new(json!({"a": 3}).as_object().cloned().unwrap().into());
        let own_address = address(&own);
        let mut events = vec![event(&own), event(&held), event(&own), event(&kept)];
        drop(own);
        let mut seen = Vec::new();
        let distinct = edit_data(
            &mut events,
            |index, data| {
                seen.push(index);
                (data["a"] != 3).then_some(10)
            },
            |data, add| {
                let a = data["a"].as_i64().unwrap();
                data.insert("a", json!(a + add));
            },
        );
        assert_eq!(seen, [0, 1, 3]);
        assert_eq!(distinct.len(), 3);
        // Only the list held the first object: edited where it was.
        assert_eq!(address(&events[0].data), own_address);
        assert!(Arc::ptr_eq(&events[0].data, &events[2].data));
        assert_eq!(events[0].data["a"], 11);
        // Another holder keeps its object as it was; the list gets a copy.
        assert_eq!(held["a"], 2);
        assert_eq!(events[1].data["a"], 12);
        assert!(!Arc::ptr_eq(&events[1].data, &held));
        // Left alone: the very same object.
        assert!(Arc::ptr_eq(&events[3].data, &kept));
    }

    #[test]
    fn failures_are_not_remembered() {
        let data = Arc::new(EventData::new());
        let mut memo: DataMemo<bool> = DataMemo::for_events(1);
        assert_eq!(memo.get(&data, |_| Err::<bool, &str>("no")), Err("no"));
        assert_eq!(memo.get(&data, |_| Ok::<_, ()>(true)), Ok(true));
        assert_eq!(memo.get(&data, |_| Ok::<_, ()>(false)), Ok(true));
    }
}
