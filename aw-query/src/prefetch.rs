//! Reading a period's buckets in parallel, ahead of the interpreter.
//!
//! The dashboard's programs start with `query_bucket("<id>")` of the
//! window, AFK and browser buckets. Run in order, each read waits for the
//! one before, so one datastore reader works while the other idles, and
//! the transforms of the window events wait for the browser read too.
//! Before a period runs, [`Prefetch::start`] asks the source for every
//! bucket named by a literal in a top-level `query_bucket` call, directly
//! or through `find_bucket` with literal arguments (as scripts and the
//! dashboard write for ids ending in `_`), each on a thread of its own,
//! except the first, which the interpreter reads itself as it gets there;
//! when the interpreter reaches such a call for the same bucket and
//! interval it takes the read already made (or waits for it to finish)
//! instead of reading again.
//!
//! This changes no result: a read gives what the bucket holds when it is
//! made, and a prefetched read is made while the query runs, as the one it
//! replaces would have been. A read the program does not reach (it failed
//! earlier, or rebound `TIMEINTERVAL`) is dropped unused; reads inside `if`
//! blocks are left to the interpreter, since they may not run. A bucket
//! whose every read is a read of the same observed keys (`crate::keys`) is
//! read ahead of those keys only.

use std::collections::HashMap;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::sync::Arc;
use std::thread::Scope;

use aw_models::{ProjectedEvents, SharedEvent, TimeInterval};

use crate::ast::{rebound, Expr, ExprKind, Stmt};
use crate::builtins::{self, ReadAhead};
use crate::source::{pick_bucket, EventSource, ReadsAhead, SourceError};
use crate::value::Value;

/// Most buckets read ahead for one period.
const MAX_PREFETCHED: usize = 8;

/// A finished or running read: of every key (no classes), or of the observed
/// keys of its statements (`crate::keys`).
type Read = Result<ProjectedEvents, SourceError>;

/// Periods shorter than this (two days) are read as the program asks:
/// a day's reads take a fraction of a millisecond, less than starting
/// threads for them and freeing their allocations from another thread
/// cost. Measured A/B: a 1-day query 0.96x, seven 1-day periods 0.90x,
/// 8 clients of 1-day queries 0.82x p50 without read-ahead; a week
/// 0.99x, so longer periods keep it.
pub(crate) const SHORTEST_PERIOD_NANOS: i64 = 2 * 86_400 * 1_000_000_000;

/// Reads started for one period, by bucket id.
#[derive(Debug, Default)]
pub(crate) struct Prefetch {
    interval: Option<TimeInterval>,
    reads: HashMap<String, Receiver<Read>>,
    /// Reads that came in when [`Prefetch::waits`] looked, until taken.
    arrived: HashMap<String, Read>,
    /// The buckets each top-level statement reads, by its index.
    reads_of: Vec<Vec<String>>,
    /// The keys each read started is of, by bucket (`None`: every key).
    projection_of: HashMap<String, Option<Arc<[String]>>>,
}

impl Prefetch {
    /// Starts a read of every bucket `program` names in a top-level
    /// `query_bucket("<literal>")` call but the first, for `interval`, on
    /// threads of `scope`. With at most one such bucket nothing is started: the
    /// interpreter's own read would not wait for anything else.
    pub fn start<'scope, 'env>(
        scope: &'scope Scope<'scope, 'env>,
        source: &'env dyn EventSource,
        program: &[Stmt],
        interval: &TimeInterval,
    ) -> Prefetch {
        let length = interval.end.nanos().saturating_sub(interval.start.nanos());
        // Tests that force forking read ahead in short periods too, so
        // that statements run while a read is awaited (`fork::ahead`).
        if length < SHORTEST_PERIOD_NANOS && !crate::forcing::always() {
            return Prefetch::default();
        }
        let mut targets = Vec::new();
        let mut targets_of = Vec::with_capacity(program.len());
        // The observed keys of each statement's reads (`None`: every key).
        let mut keys_of = Vec::with_capacity(program.len());
        let rebound = rebound(program);
        for stmt in program {
            let mut own = Vec::new();
            if let Stmt::Simple {
                expr, projection, ..
            } = stmt
            {
                literal_reads(expr, &rebound, &mut own);
                keys_of.push(projection.clone());
            } else {
                keys_of.push(None);
            }
            for target in &own {
                if targets.len() < MAX_PREFETCHED && !targets.contains(target) {
                    targets.push(target.clone());
                }
            }
            targets_of.push(own);
        }
        if targets.len() < 2 {
            return Prefetch::default();
        }
        // `find_bucket` targets are resolved as the function will resolve
        // them; one that matches nothing is left to fail in its place.
        let known = if targets.iter().any(|t| matches!(t, Target::Find(..))) {
            source.buckets().unwrap_or_default()
        } else {
            Vec::new()
        };
        let mut buckets: Vec<String> = Vec::new();
        let mut resolved = Vec::new();
        for target in targets {
            let bucket = match &target {
                Target::Id(id) => Some(id.clone()),
                Target::Find(filter, hostname) => pick_bucket(&known, filter, hostname.as_deref()),
            };
            if let Some(bucket) = bucket {
                if !buckets.contains(&bucket) {
                    buckets.push(bucket.clone());
                }
                resolved.push((target, bucket));
            }
        }
        if buckets.len() < 2 {
            return Prefetch::default();
        }
        // A bucket is read of its observed keys when every statement that reads
        // it is a read of the same observed keys, of every key otherwise.
        let mut projection_of: HashMap<String, Option<Arc<[String]>>> = HashMap::new();
        for (own, keys) in targets_of.iter().zip(&keys_of) {
            for target in own {
                let Some((_, bucket)) = resolved.iter().find(|(known, _)| known == target) else {
                    continue;
                };
                projection_of
                    .entry(bucket.clone())
                    .and_modify(|projection| {
                        if projection != keys {
                            *projection = None;
                        }
                    })
                    .or_insert_with(|| keys.clone());
            }
        }
        let mut reads = HashMap::new();
        // The first bucket the program reads is left to the interpreter:
        // its thread would only wait for that read anyway, and what a
        // thread allocates it frees faster itself than another thread can.
        for bucket in buckets.into_iter().skip(1) {
            let (sender, receiver) = mpsc::channel();
            let period = *interval;
            let id = bucket.clone();
            let keys = projection_of.get(&bucket).cloned().flatten();
            scope.spawn(move || {
                let read = match keys {
                    Some(keys) => source.query_bucket_projected(&id, &period, &keys),
                    None => source
                        .query_bucket(&id, &period)
                        .map(|events| ProjectedEvents {
                            events,
                            classes: Vec::new(),
                        }),
                };
                // The receiver is gone when the program ended without
                // taking this read; the result is then simply dropped.
                let _ = sender.send(read);
            });
            reads.insert(bucket, receiver);
        }
        let reads_of = targets_of
            .iter()
            .map(|own| {
                own.iter()
                    .filter_map(|target| {
                        let (_, bucket) = resolved.iter().find(|(known, _)| known == target)?;
                        Some(bucket.clone())
                    })
                    .collect()
            })
            .collect();
        Prefetch {
            interval: Some(*interval),
            reads,
            arrived: HashMap::new(),
            reads_of,
            projection_of,
        }
    }

    fn take_read(&mut self, bucket: &str, interval: &TimeInterval) -> Option<Read> {
        if self.interval.as_ref() != Some(interval) {
            return None;
        }
        if let Some(read) = self.arrived.remove(bucket) {
            return Some(read);
        }
        // A sender dropped without sending (the reading thread panicked)
        // leaves the read to the interpreter.
        self.reads.remove(bucket)?.recv().ok()
    }

    /// Whether top-level statement `at` reads a bucket whose read started
    /// ahead and has not come in yet: running it now would wait. (Tests
    /// that force forking count every read started ahead as not in yet.)
    pub fn waits(&mut self, at: usize) -> bool {
        let Some(buckets) = self.reads_of.get(at) else {
            return false;
        };
        let mut waits = false;
        for bucket in buckets {
            let Some(receiver) = self.reads.get(bucket) else {
                continue;
            };
            waits |= match receiver.try_recv() {
                Ok(read) => {
                    self.reads.remove(bucket);
                    self.arrived.insert(bucket.clone(), read);
                    crate::forcing::always()
                }
                Err(TryRecvError::Empty) => true,
                Err(TryRecvError::Disconnected) => false,
            };
        }
        waits
    }
}

impl ReadsAhead for Prefetch {
    /// The read of every key of `bucket` for `interval` started ahead, if
    /// there is one (each is handed out once).
    fn take(
        &mut self,
        bucket: &str,
        interval: &TimeInterval,
    ) -> Option<Result<Vec<SharedEvent>, SourceError>> {
        if self.projection_of.get(bucket).is_some_and(Option::is_some) {
            return None;
        }
        Some(self.take_read(bucket, interval)?.map(|read| read.events))
    }

    /// The read of `keys` of `bucket` for `interval` started ahead, if
    /// there is one (each is handed out once).
    fn take_projected(
        &mut self,
        bucket: &str,
        interval: &TimeInterval,
        keys: &[String],
    ) -> Option<Read> {
        match self.projection_of.get(bucket) {
            Some(Some(projection)) if **projection == *keys => self.take_read(bucket, interval),
            _ => None,
        }
    }
}

/// A bucket a `query_bucket` call reads: an id, or what `find_bucket`
/// picks for a filter and an optional hostname.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    Id(String),
    Find(String, Option<String>),
}

/// A string literal's text.
fn literal(expr: &Expr) -> Option<&str> {
    match &expr.kind {
        ExprKind::Literal(Value::String(text)) => Some(text),
        _ => None,
    }
}

/// The target of a reading call's single argument, if it is a literal or
/// a bucket-picking call (`find_bucket`) with literal arguments.
fn target(arg: &Expr, rebound: &[&str]) -> Option<Target> {
    if let Some(id) = literal(arg) {
        return Some(Target::Id(id.to_string()));
    }
    match &arg.kind {
        ExprKind::Call { name, args } if declared(name, rebound, ReadAhead::PicksBucket) => {
            match args.as_slice() {
                [filter] => Some(Target::Find(literal(filter)?.to_string(), None)),
                [filter, host] => Some(Target::Find(
                    literal(filter)?.to_string(),
                    Some(literal(host)?.to_string()),
                )),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether `name` is the built-in the table declares reading ahead as
/// `how`, not rebound by the program.
fn declared(name: &str, rebound: &[&str], how: ReadAhead) -> bool {
    !rebound.contains(&name) && builtins::named(name).is_some_and(|spec| spec.read_ahead == how)
}

/// The buckets `program`'s top-level statements would read ahead.
#[cfg(test)]
pub(crate) fn targets_of(program: &[Stmt]) -> Vec<Target> {
    let rebound = rebound(program);
    let mut buckets = Vec::new();
    for stmt in program {
        if let Stmt::Simple { expr, .. } = stmt {
            literal_reads(expr, &rebound, &mut buckets);
        }
    }
    buckets
}

/// Collects the distinct targets of `query_bucket` calls in `expr`, in
/// evaluation order, up to [`MAX_PREFETCHED`].
fn literal_reads(expr: &Expr, rebound: &[&str], buckets: &mut Vec<Target>) {
    // An explicit stack: the parser bounds nesting, but a wide program
    // should not cost recursion either.
    let mut stack = vec![expr];
    while let Some(expr) = stack.pop() {
        match &expr.kind {
            ExprKind::Literal(_) | ExprKind::Var { .. } => {}
            ExprKind::List(items) => stack.extend(items.iter().rev()),
            ExprKind::Dict(entries) => stack.extend(entries.iter().rev().map(|(_, e)| e)),
            ExprKind::Call { name, args } => {
                let reads = declared(name, rebound, ReadAhead::Bucket);
                if let (true, [arg]) = (reads, args.as_slice()) {
                    if let Some(target) = target(arg, rebound) {
                        if buckets.len() < MAX_PREFETCHED && !buckets.contains(&target) {
                            buckets.push(target);
                        }
                    }
                }
                stack.extend(args.iter().rev());
            }
            ExprKind::Chain { first, rest } => {
                stack.extend(rest.iter().rev().map(|(_, _, e)| e));
                stack.push(first);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::parse;

    fn reads(program: &str) -> Vec<Target> {
        targets_of(&parse(program).unwrap())
    }

    #[test]
    fn finds_literal_top_level_reads_once_each() {
        let program = r#"
            a = flood(query_bucket("w"));
            b = filter_period_intersect(query_bucket("afk"), [query_bucket("w")]);
            name = "x";
            c = query_bucket(name);
            if true { d = query_bucket("only-maybe"); }
            RETURN = concat(a, b, query_bucket("web"));
        "#;
        let id = |id: &str| Target::Id(id.to_string());
        assert_eq!(reads(program), [id("w"), id("afk"), id("web")]);
    }

    #[test]
    fn finds_find_bucket_reads_with_literal_arguments() {
        let program = r#"
            w = query_bucket(find_bucket("aw-watcher-window_"));
            a = query_bucket(find_bucket("aw-watcher-afk_", "laptop"));
            prefix = "aw-";
            x = query_bucket(find_bucket(prefix));
            RETURN = 0;
        "#;
        assert_eq!(
            reads(program),
            [
                Target::Find("aw-watcher-window_".into(), None),
                Target::Find("aw-watcher-afk_".into(), Some("laptop".into())),
            ]
        );
    }
}
