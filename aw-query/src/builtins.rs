//! The table of built-in functions: one declaration per built-in.
//!
//! Each entry of [`TABLE`] says everything the rest of the crate knows
//! about a built-in: its name, how many arguments it takes, the function
//! that runs it (`crate::functions`), whether it reads the store or has
//! effects, which data keys of its event arguments it observes, and
//! whether a read it names may start ahead of the program. The
//! interpreter binds and calls built-ins from it, and the three analyses
//! derive from it:
//!
//! - the fork planner (`crate::fork`) moves and runs at once only calls of
//!   pure entries ([`Spec::pure`]);
//! - the key analysis (`crate::keys`) asks each entry what it observes of
//!   each argument ([`Spec::observes`]);
//! - the read-ahead (`crate::prefetch`) starts reads only for entries
//!   declared [`ReadAhead::Bucket`], resolved through entries declared
//!   [`ReadAhead::PicksBucket`].
//!
//! An entry made with [`Spec::new`] and nothing else gets the safe
//! defaults: it may read the store and have effects (so it is never
//! reordered or run beside another statement), it observes every key of
//! every argument, and it starts no read ahead. Adding a built-in is one
//! entry here plus the function that runs it.

use std::fmt;

use crate::error::{ErrorKind, Failure};
use crate::functions::{self as run, Args, Context};
use crate::limits::Budget;
use crate::value::{Function, Value};

/// What runs a built-in: its arguments, already counted, and the context
/// of the call.
pub(crate) type Run = fn(&mut Args<'_>, &mut Context<'_>) -> Result<Value, Failure>;

/// The declaration of one built-in.
pub(crate) struct Spec {
    /// The name it is bound to.
    pub name: &'static str,
    /// The fewest and most arguments it takes.
    pub arguments: (usize, usize),
    /// What runs it.
    pub run: Run,
    /// Whether its result may depend on the store, `TIMEINTERVAL` or the
    /// time of the call, not on its arguments only.
    pub reads_store: bool,
    /// Whether a call does something besides returning a value (a log
    /// line).
    pub effects: bool,
    /// What it observes of the data of each argument's events, when what
    /// a caller observes of its result is known: by position, then
    /// `rest` for every later argument.
    pub observes: &'static [Observe],
    /// What it observes of arguments past `observes`.
    pub rest: Observe,
    /// Whether its calls name a read that may start ahead.
    pub read_ahead: ReadAhead,
    /// Whether it compares its events' whole data objects, for which a
    /// read of only some keys hands it the objects' classes instead
    /// (`flood`, see `crate::keys`).
    pub compares_whole_objects: bool,
    /// Whether it keeps state from call to call within a period, which a
    /// fork hands to the one group that calls it (`split_url_events`'
    /// memory of URLs split so far).
    pub period_state: bool,
}

/// What a built-in observes of one argument's events' data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Observe {
    /// Every key: the safe default.
    Everything,
    /// Nothing of the data: only times and durations count.
    Nothing,
    /// What the caller observes of the result: the events pass through.
    Result,
    /// What the caller observes of the result, and this key.
    ResultAnd(&'static str),
    /// What the caller observes of the result, and the key named by the
    /// string literal at this argument position (every key if it is not
    /// a literal).
    ResultAndKeyAt(usize),
    /// The keys listed by the list of string literals at this argument
    /// position (every key if it is not such a list).
    KeysListedAt(usize),
}

/// Whether a call's read may start before the interpreter gets to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadAhead {
    /// Never: the safe default.
    Never,
    /// It reads the bucket its single argument names (a string literal,
    /// or a [`ReadAhead::PicksBucket`] call with literal arguments) for
    /// the period, and nothing else.
    Bucket,
    /// From literal arguments (an id prefix and an optional hostname) it
    /// picks a bucket as `crate::source::pick_bucket` does, so the read
    /// of its result can start ahead.
    PicksBucket,
}

impl Spec {
    /// A built-in with the safe defaults: it may read the store and have
    /// effects, observes every key, starts no read ahead.
    pub const fn new(name: &'static str, fewest: usize, most: usize, run: Run) -> Spec {
        Spec {
            name,
            arguments: (fewest, most),
            run,
            reads_store: true,
            effects: true,
            observes: &[],
            rest: Observe::Everything,
            read_ahead: ReadAhead::Never,
            compares_whole_objects: false,
            period_state: false,
        }
    }

    /// Declares that it computes from its arguments only, with no effect.
    pub const fn computes(mut self) -> Spec {
        self.reads_store = false;
        self.effects = false;
        self
    }

    /// Declares that it reads the store but has no effect.
    pub const fn reads(mut self) -> Spec {
        self.reads_store = true;
        self.effects = false;
        self
    }

    /// Declares what it observes of each argument, by position, and of
    /// every argument after those.
    pub const fn observing(mut self, observes: &'static [Observe], rest: Observe) -> Spec {
        self.observes = observes;
        self.rest = rest;
        self
    }

    /// Declares how its reads may start ahead.
    pub const fn ahead(mut self, read_ahead: ReadAhead) -> Spec {
        self.read_ahead = read_ahead;
        self
    }

    /// Declares that it compares whole data objects.
    pub const fn comparing_whole_objects(mut self) -> Spec {
        self.compares_whole_objects = true;
        self
    }

    /// Declares that it keeps state from call to call within a period.
    pub const fn with_period_state(mut self) -> Spec {
        self.period_state = true;
        self
    }

    /// Whether calls may be reordered, run ahead or run beside other
    /// statements: no read of the store, no effect.
    pub fn pure(&self) -> bool {
        !self.reads_store && !self.effects
    }

    /// What it observes of argument `index`.
    pub fn observes(&self, index: usize) -> Observe {
        self.observes.get(index).copied().unwrap_or(self.rest)
    }
}

impl fmt::Debug for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Spec").field("name", &self.name).finish()
    }
}

use Observe::{Everything, KeysListedAt, Nothing, Result as Passed, ResultAnd, ResultAndKeyAt};

/// Every built-in.
pub(crate) static TABLE: &[Spec] = &[
    Spec::new("query_bucket", 1, 1, run::query_bucket)
        .reads()
        .ahead(ReadAhead::Bucket),
    Spec::new("query_bucket_names", 0, 0, run::query_bucket_names).reads(),
    Spec::new(
        "query_bucket_eventcount",
        1,
        1,
        run::query_bucket_eventcount,
    )
    .reads(),
    Spec::new("find_bucket", 1, 2, run::find_bucket)
        .reads()
        .ahead(ReadAhead::PicksBucket),
    // Compares whole objects: `Everything`, unless a read's classes
    // stand in for them.
    Spec::new("flood", 1, 1, run::flood)
        .computes()
        .comparing_whole_objects(),
    Spec::new("merge_events_by_keys", 2, 2, run::merge_events_by_keys)
        .computes()
        .observing(&[KeysListedAt(1)], Everything),
    // The key's value decides; the events keep their data.
    Spec::new("chunk_events_by_key", 2, 2, run::chunk_events_by_key)
        .computes()
        .observing(&[ResultAndKeyAt(1)], Everything),
    Spec::new("filter_keyvals", 3, 3, run::filter_keyvals)
        .computes()
        .observing(&[ResultAndKeyAt(1)], Everything),
    Spec::new("exclude_keyvals", 3, 3, run::exclude_keyvals)
        .computes()
        .observing(&[ResultAndKeyAt(1)], Everything),
    Spec::new("filter_keyvals_regex", 3, 3, run::filter_keyvals_regex)
        .computes()
        .observing(&[ResultAndKeyAt(1)], Everything),
    // Only the periods of the second list count.
    Spec::new(
        "filter_period_intersect",
        2,
        2,
        run::filter_period_intersect,
    )
    .computes()
    .observing(&[Passed, Nothing], Everything),
    Spec::new("period_union", 2, 2, run::period_union)
        .computes()
        .observing(&[], Nothing),
    Spec::new("union_no_overlap", 2, 2, run::union_no_overlap)
        .computes()
        .observing(&[], Passed),
    Spec::new("split_url_events", 1, 1, run::split_url_events)
        .computes()
        .observing(&[ResultAnd("url")], Everything)
        .with_period_state(),
    Spec::new("sort_by_duration", 1, 1, run::sort_by_duration)
        .computes()
        .observing(&[Passed], Everything),
    Spec::new("sort_by_timestamp", 1, 1, run::sort_by_timestamp)
        .computes()
        .observing(&[Passed], Everything),
    Spec::new("sum_durations", 1, 1, run::sum_durations)
        .computes()
        .observing(&[Nothing], Everything),
    Spec::new("limit_events", 2, 2, run::limit_events)
        .computes()
        .observing(&[Passed], Everything),
    Spec::new("concat", 0, usize::MAX, run::concat)
        .computes()
        .observing(&[], Passed),
    // Rules match every value: `Everything`.
    Spec::new("categorize", 2, 2, run::categorize).computes(),
    Spec::new("tag", 2, 2, run::tag).computes(),
    Spec::new("contains", 2, 2, run::contains).computes(),
    // Writes to the log: the defaults (an effect).
    Spec::new("print", 0, usize::MAX, run::print),
    Spec::new("nop", 0, 0, run::nop).computes(),
    Spec::new("simplify_window_titles", 2, 2, run::simplify_window_titles).computes(),
];

/// Built-ins that exist in unit tests only, to check the defaults.
#[cfg(test)]
pub(crate) static TEST_ONLY: &[Spec] = &[
    // The toy built-in of `tests::a_toy_builtin_gets_the_safe_defaults`:
    // one entry, nothing declared.
    Spec::new("toy_identity", 1, 1, |args, _| Ok(args.next())),
];
#[cfg(not(test))]
pub(crate) static TEST_ONLY: &[Spec] = &[];

/// Every built-in with its place, the table's entries first.
pub(crate) fn all() -> impl Iterator<Item = (Function, &'static Spec)> {
    TABLE.iter().chain(TEST_ONLY).enumerate().map(|(at, spec)| {
        let index = u16::try_from(at).expect("the table has fewer than 65536 entries");
        (Function::new(index, spec.name), spec)
    })
}

/// The built-in bound to `name` before a program rebinds anything.
pub(crate) fn named(name: &str) -> Option<&'static Spec> {
    TABLE.iter().chain(TEST_ONLY).find(|spec| spec.name == name)
}

/// The declaration of `function`.
pub(crate) fn spec(function: Function) -> &'static Spec {
    let at = usize::from(function.index());
    TABLE
        .get(at)
        .or_else(|| TEST_ONLY.get(at - TABLE.len()))
        .expect("a function value is made from the table only")
}

/// Calls `function` with `values`, after checking their count.
pub(crate) fn call(
    function: Function,
    values: Vec<Value>,
    budget: &mut Budget,
    context: &mut Context<'_>,
) -> Result<Value, Failure> {
    let spec = spec(function);
    let count = values.len();
    let (fewest, most) = spec.arguments;
    if count < fewest || count > most {
        let expected = if fewest == most {
            format!("{fewest}")
        } else if most == usize::MAX {
            format!("at least {fewest}")
        } else {
            format!("{fewest} to {most}")
        };
        return Err(Failure::new(
            ErrorKind::ArgumentCount,
            format!(
                "{} expects {expected} argument{}, got {count}",
                spec.name,
                if most == 1 { "" } else { "s" }
            ),
        ));
    }
    let mut args = Args::new(spec.name, values, budget);
    (spec.run)(&mut args, context)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::Stmt;

    #[test]
    fn names_are_unique() {
        let mut names: Vec<&str> = all().map(|(_, spec)| spec.name).collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count);
        for (function, spec) in all() {
            assert_eq!(spec.name, function.name());
            assert!(std::ptr::eq(self::spec(function), spec));
        }
    }

    /// The toy built-in declares nothing: the fork planner leaves it in
    /// place, the read-ahead starts nothing for it, and the key analysis
    /// counts every key of its argument as observed.
    #[test]
    fn a_toy_builtin_gets_the_safe_defaults() {
        let toy = named("toy_identity").expect("the toy is in the test table");
        assert!(!toy.pure());
        assert_eq!(toy.read_ahead, ReadAhead::Never);
        assert_eq!(toy.observes(0), Observe::Everything);

        // Two independent summaries fork; with the toy in one of them the
        // toy's statement ends the span.
        let plain = crate::parser::parse(
            r#"a = query_bucket("a"); b = query_bucket("b");
               x = sort_by_duration(a); y = sort_by_duration(b); RETURN = [x, y];"#,
        )
        .unwrap();
        assert!(crate::fork::plans(&plain).contains_key(&2));
        let with_toy = crate::parser::parse(
            r#"a = query_bucket("a"); b = query_bucket("b");
               x = toy_identity(a); y = sort_by_duration(b); RETURN = [x, y];"#,
        )
        .unwrap();
        assert!(crate::fork::plans(&with_toy).is_empty());
        // Nor does it run ahead of an awaited read.
        let ahead = crate::parser::parse(
            r#"a = query_bucket("a"); b = query_bucket("b");
               x = toy_identity(a); RETURN = [x, b];"#,
        )
        .unwrap();
        assert!(crate::fork::ahead(&ahead, 1).is_empty());

        // No read ahead of a bucket named through the toy.
        let program = crate::parser::parse(
            r#"a = query_bucket(toy_identity("a")); b = toy_identity("b"); RETURN = [a, b];"#,
        )
        .unwrap();
        assert!(crate::prefetch::targets_of(&program).is_empty());

        // Every key of what it is given is observed: the read keeps all.
        let program = crate::parser::parse(
            r#"a = query_bucket("a"); RETURN = sum_durations(toy_identity(a));"#,
        )
        .unwrap();
        let Stmt::Simple { projection, .. } = &program[0] else {
            panic!("a simple statement")
        };
        assert_eq!(*projection, None);
        // ... where a declared pass-through keeps only what is looked at.
        let program = crate::parser::parse(
            r#"a = query_bucket("a"); RETURN = sum_durations(sort_by_duration(a));"#,
        )
        .unwrap();
        let Stmt::Simple { projection, .. } = &program[0] else {
            panic!("a simple statement")
        };
        assert_eq!(projection.as_deref(), Some(&[][..]));
    }
}
