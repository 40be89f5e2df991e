//! The syntax tree the parser builds and the interpreter walks.
//!
//! Besides the shape of the program, the tree records for every variable
//! read whether it is the last use of that variable (see
//! [`mark_last_uses`]): the interpreter then moves the value out of the
//! environment instead of sharing it, so transforms can work on event lists
//! in place.

use std::collections::HashSet;
use std::sync::Arc;

use crate::error::Pos;
use crate::value::Value;

/// A statement.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Stmt {
    /// `[return] [name =] expr ;`
    Simple {
        /// Also binds `RETURN` (to the value, or to none after an assignment).
        returns: bool,
        /// The variable assigned, if any.
        target: Option<String>,
        /// The right-hand side.
        expr: Expr,
        /// For a read (`flood(query_bucket(..))` or `query_bucket(..)`),
        /// the only data keys of its events that any later statement can
        /// observe, when known (`crate::keys`).
        projection: Option<Arc<[String]>>,
    },
    /// `if c {..} elif d {..} else {..}`
    If {
        /// Conditions with their blocks, in order.
        branches: Vec<(Expr, Vec<Stmt>)>,
        /// The `else` block (empty if absent).
        otherwise: Vec<Stmt>,
    },
}

/// An expression with the position of its first token.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Expr {
    pub kind: ExprKind,
    pub pos: Pos,
}

/// The kinds of expressions.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ExprKind {
    /// A number, string, bool or none literal.
    Literal(Value),
    /// A variable read; `last_use` when no later statement can read it.
    Var { name: String, last_use: bool },
    /// `[a, b]`
    List(Vec<Expr>),
    /// `{"k": v}`; keys in source order (a repeated key keeps the last value).
    Dict(Vec<(String, Expr)>),
    /// `name(args)`
    Call { name: String, args: Vec<Expr> },
    /// `a op b op c ...`: one precedence level, left-associative. Kept flat
    /// so long chains need no recursion to evaluate or drop.
    Chain {
        first: Box<Expr>,
        rest: Vec<(BinOp, Pos, Expr)>,
    },
}

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Equal,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Equal => "==",
        }
    }
}

/// Marks every variable read that no later evaluation can follow with a
/// read of the same variable (a backwards liveness pass).
///
/// Evaluation order is statements in order, and inside an expression left
/// to right with a call's name looked up before its arguments (and
/// `TIMEINTERVAL` read by the call itself); an `if`
/// evaluates its conditions in order and runs at most one block.
pub(crate) fn mark_last_uses(program: &mut [Stmt]) {
    let mut live = HashSet::new();
    mark_block(program, &mut live);
}

fn mark_block(block: &mut [Stmt], live: &mut HashSet<String>) {
    for stmt in block.iter_mut().rev() {
        match stmt {
            Stmt::Simple { target, expr, .. } => {
                if let Some(target) = target {
                    live.remove(target.as_str());
                }
                mark_expr(expr, live);
            }
            Stmt::If {
                branches,
                otherwise,
            } => {
                let after = live.clone();
                let mut next = after.clone();
                mark_block(otherwise, &mut next);
                for (condition, block) in branches.iter_mut().rev() {
                    let mut before = after.clone();
                    mark_block(block, &mut before);
                    before.extend(next);
                    mark_expr(condition, &mut before);
                    next = before;
                }
                *live = next;
            }
        }
    }
}

fn mark_expr(expr: &mut Expr, live: &mut HashSet<String>) {
    match &mut expr.kind {
        ExprKind::Literal(_) => {}
        ExprKind::Var { name, last_use } => {
            *last_use = !live.contains(name.as_str());
            live.insert(name.clone());
        }
        ExprKind::List(items) => items.iter_mut().rev().for_each(|e| mark_expr(e, live)),
        ExprKind::Dict(entries) => entries
            .iter_mut()
            .rev()
            .for_each(|(_, e)| mark_expr(e, live)),
        ExprKind::Call { name, args } => {
            // Any call may be `query_bucket` (under any name), which reads
            // `TIMEINTERVAL` after its arguments are evaluated.
            live.insert("TIMEINTERVAL".to_string());
            args.iter_mut().rev().for_each(|e| mark_expr(e, live));
            live.insert(name.clone());
        }
        ExprKind::Chain { first, rest } => {
            rest.iter_mut()
                .rev()
                .for_each(|(_, _, e)| mark_expr(e, live));
            mark_expr(first, live);
        }
    }
}

/// Every name a statement of `program` assigns to at its top level.
pub(crate) fn rebound(program: &[Stmt]) -> Vec<&str> {
    program
        .iter()
        .filter_map(|stmt| match stmt {
            Stmt::Simple {
                target: Some(target),
                ..
            } => Some(target.as_str()),
            _ => None,
        })
        .collect()
}
