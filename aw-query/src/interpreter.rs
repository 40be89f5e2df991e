//! Runs a parsed program once per period (`docs/API.md` §6.5).
//!
//! The environment is one flat map of names to values, fresh for each
//! period, holding the built-ins and the period variables. Reads marked as
//! last uses by the parser move the value out of the map, so the
//! transforms usually own the only reference to an event list and work on
//! it in place. Recursion follows the syntax tree, whose depth the parser
//! bounds; operator chains are evaluated in a loop.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use aw_models::TimeInterval;

use crate::ast::{BinOp, Expr, ExprKind, Stmt};
use crate::builtins;
use crate::error::{ErrorKind, Failure, QueryError};
use crate::fork::{self, Plan, PlanCache};
use crate::functions::Context;
use crate::limits::{Budget, MAX_STRING_BYTES};
use crate::prefetch::Prefetch;
use crate::regex::RegexCache;
use crate::source::EventSource;
use crate::transforms::UrlSplitter;
use crate::value::Value;

type Env = HashMap<String, Value>;

/// Fewest events a group of statements must start from to be run on a
/// thread of its own (`fork.rs`): below, starting the thread costs about
/// what it saves.
const FORK_EVENTS: usize = 2_000;

/// A lock that a panic elsewhere did not spoil (the panic is re-raised).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A `split_url_events` memory holding this many objects (a month's or a
/// year's browser data) is freed on the freeing thread (`crate::dropper`).
/// A week's (~3.5k) was tried too: faster in one process, but through the
/// server the woken freeing thread took the query's CPU, and objects freed
/// later were not there for the next query to reuse
/// (`benches/runs/2026-11-25-floors.md`).
const SPLIT_OBJECTS_FREED_LATER: usize = 10_000;

/// A parsed program, with what the interpreter learns about it once.
#[derive(Debug)]
pub(crate) struct Program {
    pub stmts: Box<[Stmt]>,
    /// Where its statements may run at the same time (`fork.rs`).
    pub plans: PlanCache,
}

impl From<Vec<Stmt>> for Program {
    fn from(stmts: Vec<Stmt>) -> Program {
        Program {
            stmts: stmts.into(),
            plans: PlanCache::default(),
        }
    }
}

/// How a period's `RETURN` value becomes its JSON form.
pub(crate) type Output<T> = fn(Value) -> Result<T, Failure>;

/// Runs programs against one event source; regexes compiled by one run are
/// reused by the next.
pub(crate) struct Interpreter<'a> {
    source: &'a dyn EventSource,
    regexes: RegexCache,
    budget: Budget,
    /// Reads of the running period started ahead (see `prefetch.rs`).
    prefetch: Prefetch,
    /// `split_url_events`' memory, for one period.
    urls: UrlSplitter,
    /// Whether independent statements of a long period may run on a
    /// second thread (`fork.rs`).
    may_fork: bool,
    /// Whether the running period did, so that a failure is checked by
    /// running the period again in order.
    forked: bool,
    /// Whether the running period is two days or more (or forking is
    /// forced): only such periods fork and read only the keys they can
    /// observe (`keys.rs`); a day's reads have few objects in common.
    long_period: bool,
    /// While a read statement with kept keys runs: the keys.
    projection: Option<Arc<[String]>>,
    /// The classes of the last read of kept keys, until `flood` takes them.
    classes: Option<Vec<u32>>,
}

impl<'a> Interpreter<'a> {
    /// An interpreter whose regexes draw on `regexes`' time budget.
    pub fn new(source: &'a dyn EventSource, regexes: RegexCache) -> Interpreter<'a> {
        Interpreter {
            source,
            regexes,
            budget: Budget::default(),
            prefetch: Prefetch::default(),
            urls: UrlSplitter::default(),
            may_fork: aw_threads::cores() > 1 || crate::forcing::always(),
            forked: false,
            long_period: false,
            projection: None,
            classes: None,
        }
    }

    /// Whether independent statements may run on a second thread: not
    /// when the request's periods already share the cores.
    pub fn allow_fork(&mut self, allow: bool) {
        self.may_fork = allow && (aw_threads::cores() > 1 || crate::forcing::always());
    }

    /// Runs `program` for `period` and returns `RETURN` in its JSON form
    /// made by `output` (text or `serde_json` values).
    pub fn run<T>(
        &mut self,
        program: &Program,
        period: &TimeInterval,
        output: Output<T>,
    ) -> Result<T, QueryError> {
        let source = self.source;
        std::thread::scope(|scope| {
            self.prefetch = Prefetch::start(scope, source, &program.stmts, period);
            let mut result = self.run_period(program, period, output);
            if result.is_err() && self.forked {
                // Which failure comes first is only sure in order: the
                // period runs again so, reading its buckets anew.
                self.prefetch = Prefetch::default();
                self.urls = UrlSplitter::default();
                let may_fork = std::mem::replace(&mut self.may_fork, false);
                result = self.run_period(program, period, output);
                self.may_fork = may_fork;
            }
            // Unused reads are dropped; the scope waits for their threads.
            self.prefetch = Prefetch::default();
            // The objects split in a long period (a year's browser data)
            // are freed on the freeing thread, not before the answer.
            let urls = std::mem::take(&mut self.urls);
            if urls.objects() >= SPLIT_OBJECTS_FREED_LATER {
                crate::dropper::later(urls);
            }
            result
        })
    }

    fn run_period<T>(
        &mut self,
        program: &Program,
        period: &TimeInterval,
        output: Output<T>,
    ) -> Result<T, QueryError> {
        self.budget = Budget::default();
        self.forked = false;
        let length = period.end.nanos().saturating_sub(period.start.nanos());
        self.long_period =
            length >= crate::prefetch::SHORTEST_PERIOD_NANOS || crate::forcing::always();
        let mut env = Env::with_capacity(builtins::TABLE.len() + 8);
        for (function, spec) in builtins::all() {
            env.insert(spec.name.to_string(), Value::Function(function));
        }
        let start = period.start.to_rfc3339_offset();
        let end = period.end.to_rfc3339_offset();
        env.insert(
            "TIMEINTERVAL".into(),
            Value::string(format!("{start}/{end}")),
        );
        env.insert("STARTTIME".into(), Value::string(start));
        env.insert("ENDTIME".into(), Value::string(end));
        env.insert("NAME".into(), Value::string(""));
        self.top_level(program, &mut env)?;
        let result = env.remove("RETURN").ok_or_else(|| {
            QueryError::whole(
                ErrorKind::NoReturn,
                "the query never sets RETURN (write e.g. RETURN = events;)",
            )
        })?;
        output(result).map_err(|failure| QueryError::whole(failure.kind, failure.message))
    }

    /// Runs the program's statements in order, except where `fork.rs`
    /// found groups that can run at once and they are worth a thread.
    fn top_level(&mut self, program: &Program, env: &mut Env) -> Result<(), QueryError> {
        let (program, plans) = (&program.stmts[..], &program.plans);
        if !self.may_fork || !self.long_period {
            return self.block(program, env);
        }
        let plans = plans.of(program);
        // Statements already run while a read was awaited.
        let mut ran: Vec<bool> = Vec::new();
        let mut at = 0;
        while let Some(stmt) = program.get(at) {
            if already_ran(&ran, at) {
                at += 1;
                continue;
            }
            if let Some(plan) = plans.get(&at) {
                if let Some(groups) = self.fork_groups(program, plan, env, &ran) {
                    self.fork(program, plan, groups, env, &ran)?;
                    at = plan.end;
                    continue;
                }
            }
            if self.prefetch.waits(at) {
                // While the read comes in, the statements that do not
                // need it run (`fork::ahead`); a failure among them runs
                // the period again in order, as a fork's does.
                let early = fork::ahead(program, at);
                if !early.is_empty() {
                    self.forked = true;
                    ran.resize(program.len(), false);
                }
                for index in early {
                    if let Some(early) = program.get(index) {
                        self.block(std::slice::from_ref(early), env)?;
                        if let Some(done) = ran.get_mut(index) {
                            *done = true;
                        }
                    }
                }
            }
            self.block(std::slice::from_ref(stmt), env)?;
            at += 1;
        }
        Ok(())
    }

    /// The environments of `plan`'s groups, taken from `env`, if at least
    /// two groups start from enough events to be worth a thread and no
    /// value read by several groups is moved by one of them (it would be
    /// copied to stay shared). `None` leaves `env` as it was.
    ///
    /// A statement of the span that already ran while a read was awaited
    /// (`ran`) is not run again: what it wrote goes to its group, which
    /// holds every statement of the span that reads or writes that name.
    fn fork_groups(
        &self,
        program: &[Stmt],
        plan: &Plan,
        env: &mut Env,
        ran: &[bool],
    ) -> Option<Vec<Env>> {
        let events = |name: &str| match env.get(name) {
            Some(Value::Events(events)) => events.len(),
            _ => 0,
        };
        let worth = plan
            .inputs
            .iter()
            .filter(|inputs| {
                inputs.iter().map(|(name, _)| events(name)).sum::<usize>() >= FORK_EVENTS
            })
            .count();
        if worth < 2 && !crate::forcing::always() {
            return None;
        }
        let readers = |name: &str| {
            plan.inputs
                .iter()
                .filter(|inputs| inputs.iter().any(|(read, _)| read == name))
                .count()
        };
        let shared_move = plan
            .inputs
            .iter()
            .flatten()
            .any(|(name, moves)| *moves && readers(name) > 1);
        if shared_move {
            return None;
        }
        let groups = plan
            .inputs
            .iter()
            .zip(&plan.groups)
            .map(|(inputs, group)| {
                let mut group_env: Env = inputs
                    .iter()
                    .filter_map(|(name, moves)| {
                        let value = if *moves {
                            env.remove(name)
                        } else {
                            env.get(name).cloned()
                        };
                        value.map(|value| (name.clone(), value))
                    })
                    .collect();
                for &index in group.iter().filter(|&&index| already_ran(ran, index)) {
                    if let Some(Stmt::Simple {
                        target: Some(target),
                        ..
                    }) = program.get(index)
                    {
                        if let Some(value) = env.remove(target) {
                            group_env.insert(target.clone(), value);
                        }
                    }
                }
                group_env
            })
            .collect();
        Some(groups)
    }

    /// Runs `plan`'s groups, each in its environment `groups`, on this
    /// thread and one other, and puts what they wrote into `env`.
    fn fork(
        &mut self,
        program: &[Stmt],
        plan: &Plan,
        groups: Vec<Env>,
        env: &mut Env,
        ran: &[bool],
    ) -> Result<(), QueryError> {
        self.forked = true;
        crate::forcing::count_fork();
        let base = self.budget.clone();
        let mut helper = Interpreter {
            source: self.source,
            regexes: self.regexes.sibling(),
            budget: base.clone(),
            prefetch: Prefetch::default(),
            urls: UrlSplitter::default(),
            may_fork: false,
            forked: false,
            long_period: false,
            projection: None,
            classes: None,
        };
        // The URL memory goes to the group that splits URLs, so a second
        // split of the same events stays a lookup.
        let memory = Mutex::new(Some(std::mem::take(&mut self.urls)));
        let slots: Vec<Mutex<Option<Env>>> = groups
            .into_iter()
            .map(|group| Mutex::new(Some(group)))
            .collect();
        let done: Vec<Mutex<Option<Result<Env, QueryError>>>> =
            plan.groups.iter().map(|_| Mutex::new(None)).collect();
        let next = AtomicUsize::new(0);
        let work = |interpreter: &mut Interpreter<'_>| loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let (Some(group), Some(slot), Some(out)) =
                (plan.groups.get(index), slots.get(index), done.get(index))
            else {
                break;
            };
            let mut group_env = lock(slot).take().unwrap_or_default();
            let memory_taken = if plan.period_state.get(index).copied().unwrap_or(false) {
                lock(&memory).take()
            } else {
                None
            };
            let had_memory = memory_taken.is_some();
            if let Some(urls) = memory_taken {
                interpreter.urls = urls;
            }
            let mut result = Ok(());
            for &at in group.iter().filter(|&&at| !already_ran(ran, at)) {
                if let Some(stmt) = program.get(at) {
                    result = interpreter.block(std::slice::from_ref(stmt), &mut group_env);
                    if result.is_err() {
                        break;
                    }
                }
            }
            if had_memory {
                *lock(&memory) = Some(std::mem::take(&mut interpreter.urls));
            }
            *lock(out) = Some(result.map(|()| group_env));
        };
        std::thread::scope(|scope| {
            let other = scope.spawn(|| work(&mut helper));
            work(self);
            if let Err(panic) = other.join() {
                std::panic::resume_unwind(panic);
            }
        });
        if let Some(urls) = lock(&memory).take() {
            self.urls = urls;
        }
        self.budget
            .join(&base, &helper.budget)
            .map_err(|failure| QueryError::whole(failure.kind, failure.message))?;
        for (out, names) in done.into_iter().zip(&plan.outputs) {
            let mut group_env = match out.into_inner().unwrap_or_else(PoisonError::into_inner) {
                Some(result) => result?,
                None => continue,
            };
            for name in names {
                match group_env.remove(name) {
                    Some(value) => env.insert(name.clone(), value),
                    // The group used it up, as a run in order would have.
                    None => env.remove(name),
                };
            }
        }
        Ok(())
    }

    fn block(&mut self, block: &[Stmt], env: &mut Env) -> Result<(), QueryError> {
        for stmt in block {
            match stmt {
                Stmt::Simple {
                    returns,
                    target,
                    expr,
                    projection,
                } => {
                    // A read of the keys the program can observe: the
                    // read gives the classes of the whole objects, and
                    // `flood` compares those.
                    self.projection = projection.clone().filter(|_| self.long_period);
                    let value = self.eval(expr, env);
                    self.projection = None;
                    self.classes = None;
                    let value = value?;
                    let result = match target {
                        Some(name) => {
                            env.insert(name.clone(), value);
                            Value::None
                        }
                        None => value,
                    };
                    if *returns {
                        env.insert("RETURN".into(), result);
                    }
                }
                Stmt::If {
                    branches,
                    otherwise,
                } => {
                    let mut chosen = otherwise;
                    for (condition, block) in branches {
                        match self.eval(condition, env)? {
                            Value::Bool(true) => {
                                chosen = block;
                                break;
                            }
                            Value::Bool(false) => {}
                            other => {
                                return Err(QueryError::at(
                                    ErrorKind::Type,
                                    condition.pos,
                                    format!(
                                        "an if condition must be a bool, got {}",
                                        other.type_name()
                                    ),
                                ))
                            }
                        }
                    }
                    self.block(chosen, env)?;
                }
            }
        }
        Ok(())
    }

    fn eval(&mut self, expr: &Expr, env: &mut Env) -> Result<Value, QueryError> {
        match &expr.kind {
            ExprKind::Literal(value) => Ok(value.clone()),
            ExprKind::Var { name, last_use } => {
                let value = if *last_use {
                    env.remove(name)
                } else {
                    env.get(name).cloned()
                };
                value.ok_or_else(|| {
                    QueryError::at(
                        ErrorKind::UnknownVariable,
                        expr.pos,
                        format!("unknown variable '{name}'"),
                    )
                })
            }
            ExprKind::List(items) => {
                self.budget
                    .charge(items.len())
                    .map_err(|failure| failure.at(expr.pos))?;
                let values = items
                    .iter()
                    .map(|item| self.eval(item, env))
                    .collect::<Result<Vec<_>, _>>()?;
                Value::list(values).map_err(|failure| failure.at(expr.pos))
            }
            ExprKind::Dict(entries) => {
                self.budget
                    .charge(entries.len())
                    .map_err(|failure| failure.at(expr.pos))?;
                let mut map = std::collections::BTreeMap::new();
                for (key, item) in entries {
                    let value = self.eval(item, env)?;
                    map.insert(key.clone(), value);
                }
                Value::dict(map).map_err(|failure| failure.at(expr.pos))
            }
            ExprKind::Call { name, args } => {
                let builtin = match env.get(name) {
                    Some(Value::Function(builtin)) => *builtin,
                    Some(other) => {
                        return Err(QueryError::at(
                            ErrorKind::NotAFunction,
                            expr.pos,
                            format!("'{name}' is a {}, not a function", other.type_name()),
                        ))
                    }
                    None => {
                        return Err(QueryError::at(
                            ErrorKind::UnknownFunction,
                            expr.pos,
                            format!("unknown function '{name}'"),
                        ))
                    }
                };
                let values = args
                    .iter()
                    .map(|arg| self.eval(arg, env))
                    .collect::<Result<Vec<_>, _>>()?;
                let mut context = Context {
                    source: self.source,
                    regexes: &mut self.regexes,
                    prefetch: &mut self.prefetch,
                    urls: &mut self.urls,
                    projection: self.projection.as_deref(),
                    classes: &mut self.classes,
                    timeinterval: env.get("TIMEINTERVAL"),
                    // Only a period that may fork has a core to spare:
                    // a fork's threads and periods run side by side may not.
                    spare_core: self.may_fork,
                };
                builtins::call(builtin, values, &mut self.budget, &mut context)
                    .map_err(|failure| failure.at(expr.pos))
            }
            ExprKind::Chain { first, rest } => {
                let mut value = self.eval(first, env)?;
                for (op, pos, operand) in rest {
                    let right = self.eval(operand, env)?;
                    value = apply(*op, value, right, &mut self.budget)
                        .map_err(|failure| failure.at(*pos))?;
                }
                Ok(value)
            }
        }
    }
}

/// One binary operation.
fn apply(op: BinOp, left: Value, right: Value, budget: &mut Budget) -> Result<Value, Failure> {
    let mismatch = |left: &Value, right: &Value| {
        Failure::new(
            ErrorKind::Type,
            format!(
                "cannot apply '{}' to {} and {}",
                op.symbol(),
                left.type_name(),
                right.type_name()
            ),
        )
    };
    match (op, left, right) {
        (BinOp::Equal, left, right) => {
            if left.same_type(&right) {
                Ok(Value::Bool(left.equals(&right)))
            } else {
                Err(Failure::new(
                    ErrorKind::Type,
                    format!(
                        "cannot compare {} with {}",
                        left.type_name(),
                        right.type_name()
                    ),
                ))
            }
        }
        (op, Value::Number(a), Value::Number(b)) => Ok(Value::Number(match op {
            BinOp::Add => a + b,
            BinOp::Sub => a - b,
            BinOp::Mul => a * b,
            BinOp::Div if b == 0.0 => {
                return Err(Failure::new(ErrorKind::DivisionByZero, "division by zero"))
            }
            BinOp::Div => a / b,
            BinOp::Rem => a % b,
            BinOp::Equal => unreachable!("handled above"),
        })),
        (BinOp::Add, Value::String(a), Value::String(b)) => {
            budget.charge((a.len() + b.len()) / 8)?;
            if a.len() + b.len() > MAX_STRING_BYTES {
                return Err(Failure::new(
                    ErrorKind::TooLarge,
                    format!("string too long (limit {MAX_STRING_BYTES} bytes)"),
                ));
            }
            Ok(Value::string(format!("{a}{b}")))
        }
        (BinOp::Add, Value::List(a), Value::List(b)) => {
            budget.charge(a.items().len() + b.items().len())?;
            let mut items = Vec::with_capacity(a.items().len() + b.items().len());
            items.extend(std::sync::Arc::unwrap_or_clone(a).into_items());
            items.extend(b.items().iter().cloned());
            Value::list(items)
        }
        (
            BinOp::Add,
            left @ (Value::List(_) | Value::Events(_)),
            right @ (Value::List(_) | Value::Events(_)),
        ) => {
            budget.charge(list_len(&left) + list_len(&right))?;
            let (mut a, b) = match (left.into_events(), right.into_events()) {
                (Ok(a), Ok(b)) => (a, b),
                (Err(left), Ok(_)) => return Err(mismatch(&left, &Value::events(Vec::new()))),
                (_, Err(right)) => return Err(mismatch(&Value::events(Vec::new()), &right)),
            };
            a.extend(b);
            Ok(Value::events(a))
        }
        (_, left, right) => Err(mismatch(&left, &right)),
    }
}

fn list_len(value: &Value) -> usize {
    match value {
        Value::List(list) => list.items().len(),
        Value::Events(events) => events.len(),
        _ => 0,
    }
}

/// Whether statement `at` already ran while a read was awaited.
fn already_ran(ran: &[bool], at: usize) -> bool {
    ran.get(at).copied().unwrap_or(false)
}
