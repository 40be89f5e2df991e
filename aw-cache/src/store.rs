//! The entries, their order of use, the index by period and the log of
//! recent invalidations: the state behind [`crate::Cache`]'s one lock.

use std::any::Any;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

use crate::Period;

/// What an entry costs beside its value and key text: the maps' nodes.
pub(crate) const ENTRY_OVERHEAD: usize = 160;

/// Invalidations remembered one by one; older ones are folded into one
/// covering span, which can only refuse more stores than it had to.
const RECENT: usize = 64;

pub(crate) type Value = Arc<dyn Any + Send + Sync>;

/// Which text and period an entry answers: the text interned as an id.
type EntryKey = (u64, i64, i64);

struct Entry {
    value: Value,
    bytes: usize,
    used: u64,
}

/// A text (a program, a summary's parameters) and how many entries use it.
struct Text {
    id: u64,
    entries: usize,
}

/// The counters the cache reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Lookups of finished periods that were not there.
    pub misses: u64,
    /// Entries now.
    pub entries: u64,
    /// Bytes the entries take now, their keys included.
    pub bytes: u64,
    /// Entries dropped to stay under the limit, least recently used first.
    pub evictions: u64,
    /// Entries dropped because a write touched their period.
    pub invalidated: u64,
    /// Answers not kept because a write touched their period while they
    /// were computed, or because they were too large.
    pub refused: u64,
}

#[derive(Default)]
pub(crate) struct Store {
    /// Invalidations so far; a ticket is this number when it was taken.
    seq: u64,
    recent: VecDeque<(u64, Period)>,
    /// The invalidations folded out of `recent`: the newest one's number
    /// and a span covering them all.
    folded: Option<(u64, Period)>,
    /// The texts are programs of 20-40 KB, hashed on every lookup and
    /// store: foldhash reads long keys several times faster than SipHash.
    texts: HashMap<Arc<str>, Text, foldhash::fast::RandomState>,
    by_id: HashMap<u64, Arc<str>, foldhash::fast::RandomState>,
    entries: HashMap<EntryKey, Entry, foldhash::fast::RandomState>,
    /// Entries by last use, oldest first.
    by_use: BTreeMap<u64, EntryKey>,
    /// Entries by period end, for invalidations.
    by_end: BTreeSet<(i64, i64, u64)>,
    used: u64,
    next_id: u64,
    bytes: usize,
    stats: CacheStats,
}

impl Store {
    /// The number a ticket taken now carries.
    pub(crate) fn seq(&self) -> u64 {
        self.seq
    }

    /// The id of `text` if some entry uses it.
    pub(crate) fn text_id(&self, text: &str) -> Option<u64> {
        self.texts.get(text).map(|t| t.id)
    }

    pub(crate) fn has(&self, id: u64, period: Period) -> bool {
        self.entries.contains_key(&(id, period.start, period.end))
    }

    pub(crate) fn get(&mut self, id: Option<u64>, period: Period) -> Option<Value> {
        let found = id.and_then(|id| {
            let key = (id, period.start, period.end);
            let entry = self.entries.get_mut(&key)?;
            self.by_use.remove(&entry.used);
            self.used += 1;
            entry.used = self.used;
            self.by_use.insert(self.used, key);
            Some(Arc::clone(&entry.value))
        });
        match found {
            Some(_) => self.stats.hits += 1,
            None => self.stats.misses += 1,
        }
        found
    }

    /// Keeps `value` unless an invalidation since the ticket numbered `ticket` touched
    /// `period`; then drops the least recently used entries beyond
    /// `max_bytes`. Says whether it was kept.
    pub(crate) fn put(
        &mut self,
        ticket: u64,
        text: &str,
        period: Period,
        value: Value,
        value_bytes: usize,
        max_bytes: usize,
    ) -> bool {
        let new_text = !self.texts.contains_key(text);
        let bytes = value_bytes + ENTRY_OVERHEAD;
        let added = bytes + if new_text { text.len() } else { 0 };
        if self.touched_since(ticket, period) || added > max_bytes / 8 {
            self.stats.refused += 1;
            return false;
        }
        if new_text {
            self.bytes += text.len();
            let text: Arc<str> = Arc::from(text);
            self.next_id += 1;
            self.by_id.insert(self.next_id, Arc::clone(&text));
            self.texts.insert(
                text,
                Text {
                    id: self.next_id,
                    entries: 0,
                },
            );
        }
        let slot = self.texts.get_mut(text).expect("interned above");
        let key = (slot.id, period.start, period.end);
        if self.entries.contains_key(&key) {
            // Computed twice at once: the first one is as good.
            return true;
        }
        slot.entries += 1;
        self.used += 1;
        self.entries.insert(
            key,
            Entry {
                value,
                bytes,
                used: self.used,
            },
        );
        self.by_use.insert(self.used, key);
        self.by_end.insert((period.end, period.start, key.0));
        self.bytes += bytes;
        while self.bytes > max_bytes {
            let Some((_, oldest)) = self.by_use.pop_first() else {
                break;
            };
            self.remove(oldest);
            self.stats.evictions += 1;
        }
        true
    }

    /// Drops every entry whose period meets one of `spans`, and
    /// remembers them for the stores in flight.
    pub(crate) fn invalidate(&mut self, spans: impl Iterator<Item = Period>) {
        self.seq += 1;
        for span in spans {
            self.remember(span);
            let mut met = self
                .by_end
                .range((span.start, i64::MIN, 0)..)
                .filter(|&&(_, start, _)| start <= span.end)
                .map(|&(end, start, id)| (id, start, end))
                .peekable();
            // The usual case, a heartbeat's span past every kept period:
            // nothing met, nothing allocated.
            if met.peek().is_none() {
                continue;
            }
            let met: Vec<EntryKey> = met.collect();
            for key in met {
                if let Some(entry) = self.entries.get(&key) {
                    self.by_use.remove(&entry.used);
                }
                self.remove(key);
                self.stats.invalidated += 1;
            }
        }
    }

    /// Forgets every entry and refuses every store in flight, keeping the
    /// counters.
    pub(crate) fn reset(&mut self) {
        let stats = self.stats;
        let seq = self.seq + 1;
        *self = Store {
            seq,
            folded: Some((seq, Period::ALL)),
            stats,
            ..Store::default()
        };
    }

    pub(crate) fn stats(&self) -> CacheStats {
        CacheStats {
            entries: self.entries.len() as u64,
            bytes: self.bytes as u64,
            ..self.stats
        }
    }

    fn remember(&mut self, span: Period) {
        self.recent.push_back((self.seq, span));
        if self.recent.len() > RECENT {
            let (seq, old) = self.recent.pop_front().expect("over the limit");
            let covering = match self.folded {
                Some((_, folded)) => Period {
                    start: folded.start.min(old.start),
                    end: folded.end.max(old.end),
                },
                None => old,
            };
            self.folded = Some((seq, covering));
        }
    }

    fn touched_since(&self, taken: u64, period: Period) -> bool {
        self.folded
            .iter()
            .chain(self.recent.iter())
            .any(|&(seq, span)| seq > taken && span.meets(period))
    }

    /// Removes an entry whose place in `by_use` is already gone.
    fn remove(&mut self, key: EntryKey) {
        let Some(entry) = self.entries.remove(&key) else {
            return;
        };
        let (id, start, end) = key;
        self.by_end.remove(&(end, start, id));
        self.bytes -= entry.bytes;
        let Some(text) = self.by_id.get(&id).cloned() else {
            return;
        };
        let slot = self.texts.get_mut(&*text).expect("interned with its id");
        slot.entries -= 1;
        if slot.entries == 0 {
            self.texts.remove(&*text);
            self.by_id.remove(&id);
            self.bytes -= text.len();
        }
    }
}
