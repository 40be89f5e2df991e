//! Runs a parsed program once per period (spec §6.5).
//!
//! The environment is one flat map of names to values, fresh for each
//! period, holding the built-ins and the period variables. Reads marked as
//! last uses by the parser move the value out of the map, so the
//! transforms usually own the only reference to an event list and work on
//! it in place. Recursion follows the syntax tree, whose depth the parser
//! bounds; operator chains are evaluated in a loop.

use std::collections::HashMap;

use aw_models::TimeInterval;

use crate::ast::{BinOp, Expr, ExprKind, Stmt};
use crate::error::{ErrorKind, Failure, QueryError};
use crate::functions::{self, Builtin, Context};
use crate::limits::{Budget, MAX_STRING_BYTES};
use crate::prefetch::Prefetch;
use crate::regex::RegexCache;
use crate::source::EventSource;
use crate::transforms::UrlSplitter;
use crate::value::Value;

type Env = HashMap<String, Value>;

/// A `split_url_events` memory holding this many objects is freed on the
/// freeing thread (`crate::dropper`).
const SPLIT_OBJECTS_FREED_LATER: usize = 10_000;

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
        }
    }

    /// Runs `program` for `period` and returns `RETURN` in its JSON form
    /// made by `output` (text or `serde_json` values).
    pub fn run<T>(
        &mut self,
        program: &[Stmt],
        period: &TimeInterval,
        output: Output<T>,
    ) -> Result<T, QueryError> {
        let source = self.source;
        std::thread::scope(|scope| {
            self.prefetch = Prefetch::start(scope, source, program, period);
            let result = self.run_period(program, period, output);
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
        program: &[Stmt],
        period: &TimeInterval,
        output: Output<T>,
    ) -> Result<T, QueryError> {
        self.budget = Budget::default();
        let mut env = Env::with_capacity(Builtin::ALL.len() + 8);
        for builtin in Builtin::ALL {
            env.insert(builtin.name().to_string(), Value::Function(*builtin));
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
        self.block(program, &mut env)?;
        let result = env.remove("RETURN").ok_or_else(|| {
            QueryError::whole(
                ErrorKind::NoReturn,
                "the query never sets RETURN (write e.g. RETURN = events;)",
            )
        })?;
        output(result).map_err(|failure| QueryError::whole(failure.kind, failure.message))
    }

    fn block(&mut self, block: &[Stmt], env: &mut Env) -> Result<(), QueryError> {
        for stmt in block {
            match stmt {
                Stmt::Simple {
                    returns,
                    target,
                    expr,
                } => {
                    let value = self.eval(expr, env)?;
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
                    budget: &mut self.budget,
                    prefetch: &mut self.prefetch,
                    urls: &mut self.urls,
                    timeinterval: env.get("TIMEINTERVAL"),
                };
                functions::call(builtin, values, &mut context)
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
            items.extend(std::rc::Rc::unwrap_or_clone(a).into_items());
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
