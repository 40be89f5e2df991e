//! What the cache computes again after a start: the programs that asked
//! for finished periods lately, with the periods they asked for, kept in
//! memory as requests come and stored in the database now and then
//! (`aw_datastore::Datastore::set_cache_hints`) for the next start's
//! pre-warm (`prewarm.rs`). Only texts and periods: never an answer.

use std::sync::{Mutex, MutexGuard, PoisonError};

use serde::{Deserialize, Serialize};

use crate::Period;

/// Programs remembered, the most recently used first.
pub const MAX_PROGRAMS: usize = 8;

/// Periods remembered per program, the most recently asked for: a Year
/// view's days and a few weeks more.
pub const MAX_PERIODS: usize = 400;

/// The longest program remembered, in bytes: a dashboard's is 20-40 KB.
const MAX_PROGRAM_BYTES: usize = 256 * 1024;

/// The stored form's version: a start that finds another ignores it.
const VERSION: u32 = 1;

#[derive(Debug, Default, Serialize, Deserialize)]
struct Stored {
    version: u32,
    programs: Vec<Asked>,
}

/// A program and the finished periods it asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Asked {
    /// The program's text.
    pub program: String,
    /// Its periods, `(start, end)` in nanoseconds, the most recently
    /// asked for first, each once.
    periods: Vec<(i64, i64)>,
}

impl Asked {
    /// Its periods, the most recently asked for first.
    pub fn most_recent_first(&self) -> impl Iterator<Item = Period> + '_ {
        self.periods
            .iter()
            .map(|&(start, end)| Period { start, end })
    }

    /// How many periods it holds.
    pub fn len(&self) -> usize {
        self.periods.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.periods.is_empty()
    }
}

#[derive(Debug, Default)]
struct State {
    programs: Vec<Asked>,
    /// Changed since last taken for storing.
    changed: bool,
}

/// The programs and periods worth computing after the next start.
#[derive(Debug, Default)]
pub struct Hints {
    state: Mutex<State>,
}

impl Hints {
    /// The hints a start found stored: none when absent, of another
    /// version or unreadable (they are only a hint).
    pub fn from_stored(text: Option<&str>) -> Hints {
        let hints = Hints::default();
        hints.load(text);
        hints
    }

    /// Puts the stored hints in place of these (see [`Hints::from_stored`]).
    pub fn load(&self, text: Option<&str>) {
        let programs = text
            .and_then(|text| serde_json::from_str::<Stored>(text).ok())
            .filter(|stored| stored.version == VERSION)
            .map(|stored| stored.programs)
            .unwrap_or_default();
        *self.lock() = State {
            programs: programs.into_iter().take(MAX_PROGRAMS).collect(),
            changed: false,
        };
    }

    /// Notes that `program` asked for the finished `periods`.
    pub fn note(&self, program: &str, periods: &[Period]) {
        if periods.is_empty() || program.len() > MAX_PROGRAM_BYTES {
            return;
        }
        let mut state = self.lock();
        let index = match state
            .programs
            .iter()
            .position(|asked| asked.program == program)
        {
            Some(index) => index,
            None => {
                state.programs.insert(
                    0,
                    Asked {
                        program: program.to_string(),
                        periods: Vec::new(),
                    },
                );
                state.programs.truncate(MAX_PROGRAMS);
                state.changed = true;
                0
            }
        };
        if index != 0 {
            let asked = state.programs.remove(index);
            state.programs.insert(0, asked);
            state.changed = true;
        }
        let asked = &mut state.programs[0];
        let before = asked.periods.clone();
        // In the order asked, so the request's last period ends up first.
        for period in periods {
            let key = (period.start, period.end);
            if let Some(at) = asked.periods.iter().position(|&p| p == key) {
                asked.periods.remove(at);
            }
            asked.periods.insert(0, key);
        }
        asked.periods.truncate(MAX_PERIODS);
        let changed = asked.periods != before;
        state.changed |= changed;
    }

    /// The programs remembered, the most recently used first.
    pub fn programs(&self) -> Vec<Asked> {
        self.lock().programs.clone()
    }

    /// The stored form, if anything changed since it was last taken.
    pub fn take_changed(&self) -> Option<String> {
        let mut state = self.lock();
        if !state.changed {
            return None;
        }
        state.changed = false;
        let stored = Stored {
            version: VERSION,
            programs: state.programs.clone(),
        };
        serde_json::to_string(&stored).ok()
    }

    /// Marks them changed again (storing what was taken failed).
    pub fn still_changed(&self) {
        self.lock().changed = true;
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Plain data: a panic leaves at worst a hint too many.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(n: i64) -> Period {
        Period {
            start: n * 100,
            end: n * 100 + 99,
        }
    }

    #[test]
    fn programs_are_kept_most_recent_first_and_bounded() {
        let hints = Hints::default();
        let names: Vec<String> = (0..=MAX_PROGRAMS).map(|n| n.to_string()).collect();
        for name in &names {
            hints.note(name, &[day(1)]);
        }
        hints.note("3", &[day(2)]);
        let kept: Vec<String> = hints.programs().into_iter().map(|a| a.program).collect();
        assert_eq!(kept.len(), MAX_PROGRAMS);
        assert_eq!(kept[0], "3");
        assert_eq!(kept[1], MAX_PROGRAMS.to_string());
        assert!(
            !kept.contains(&"0".to_string()),
            "the least recently used went"
        );
        assert_eq!(hints.programs()[0].len(), 2);
    }

    #[test]
    fn the_most_recently_asked_periods_are_kept() {
        let hints = Hints::default();
        let days: Vec<Period> = (0..(MAX_PERIODS as i64 + 50)).map(day).collect();
        hints.note("a", &days);
        // Asked again: it comes first, once.
        hints.note("a", &[day(60)]);
        let asked = &hints.programs()[0];
        assert_eq!(asked.len(), MAX_PERIODS);
        let first: Vec<Period> = asked.most_recent_first().take(3).collect();
        let last = MAX_PERIODS as i64 + 49;
        assert_eq!(first, [day(60), day(last), day(last - 1)]);
        assert_eq!(asked.most_recent_first().last(), Some(day(50)));
        assert_eq!(
            asked.most_recent_first().filter(|&p| p == day(60)).count(),
            1
        );
    }

    #[test]
    fn stored_hints_come_back_and_bad_ones_are_none() {
        let hints = Hints::default();
        assert_eq!(hints.take_changed(), None);
        hints.note("a", &[day(1), day(2)]);
        let text = hints.take_changed().unwrap();
        assert_eq!(hints.take_changed(), None, "taken once");
        hints.note("a", &[day(2)]);
        assert_eq!(hints.take_changed(), None, "nothing new");
        let back = Hints::from_stored(Some(&text));
        assert_eq!(back.programs(), hints.programs());
        for bad in ["", "{", "[]", r#"{"version": 99, "programs": []}"#] {
            assert!(Hints::from_stored(Some(bad)).programs().is_empty(), "{bad}");
        }
        assert!(Hints::from_stored(None).programs().is_empty());
    }
}
