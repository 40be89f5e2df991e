//! Which statements of a program may run at the same time.
//!
//! A long period spends most of its time in transforms after its reads,
//! on one core while the other waits: the dashboard's program summarises
//! the window events (categorize, three merges) and then the browser
//! events (a second URL split, three merges), and neither summary reads
//! what the other makes. [`plans`] finds such places: a statement `start`
//! from which the statements up to `end` fall into groups that share no
//! variable the span writes. The interpreter (`Interpreter::fork`) then
//! runs the groups on two threads, each group's statements in program
//! order, each with its own copy of the variables the group reads from
//! before the span, and puts back what each group wrote.
//!
//! Only statements whose calls are pure transforms take part: a
//! statement that reads a bucket, prints, sets `RETURN` or is an `if` ends
//! a span. The result is the same as running in order: a group sees the
//! values it would have seen, since every variable the span writes is
//! written and read within one group, and a group that reads a value from
//! before the span sees that value even if another group rebinds the
//! name. A failure anywhere is not trusted to be the one running in
//! order would give: the interpreter runs the period again in order.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::ast::{rebound, Expr, ExprKind, Stmt};
use crate::builtins::{self, Spec};

/// Statements `start..end` of a program, in groups that can run at once.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    pub start: usize,
    pub end: usize,
    /// Statement indices of each group, ascending; groups ordered by their
    /// first statement.
    pub groups: Vec<Vec<usize>>,
    /// The variables each group reads from before the span, with whether
    /// the group's last read of it moves it (its last use).
    pub inputs: Vec<Vec<(String, bool)>>,
    /// The variables each group writes.
    pub outputs: Vec<Vec<String>>,
    /// Whether each group calls a built-in with state kept through the
    /// period (`split_url_events`): that group gets the state.
    pub period_state: Vec<bool>,
}

/// A variable read: the name and whether it is marked as its last use.
type Read = (String, bool);

/// The reads of `expr` in evaluation order (function names included, as
/// the call looks them up), and whether every call is to a pure built-in.
fn reads(expr: &Expr, out: &mut Vec<Read>, pure_calls: &mut bool) {
    match &expr.kind {
        ExprKind::Literal(_) => {}
        ExprKind::Var { name, last_use } => out.push((name.clone(), *last_use)),
        ExprKind::List(items) => items.iter().for_each(|item| reads(item, out, pure_calls)),
        ExprKind::Dict(entries) => entries
            .iter()
            .for_each(|(_, item)| reads(item, out, pure_calls)),
        ExprKind::Call { name, args } => {
            // Only calls the table declares pure may move.
            if !builtins::named(name).is_some_and(Spec::pure) {
                *pure_calls = false;
            }
            out.push((name.clone(), false));
            args.iter().for_each(|arg| reads(arg, out, pure_calls));
        }
        ExprKind::Chain { first, rest } => {
            reads(first, out, pure_calls);
            rest.iter()
                .for_each(|(_, _, operand)| reads(operand, out, pure_calls));
        }
    }
}

/// What one top-level statement reads and writes, if it may take part.
struct Step {
    reads: Vec<Read>,
    target: String,
}

/// A statement that may take part in a span: a plain assignment whose
/// calls are pure built-ins no statement of the program rebinds.
fn step(stmt: &Stmt, rebound: &[&str]) -> Option<Step> {
    let Stmt::Simple {
        returns: false,
        target: Some(target),
        expr,
        ..
    } = stmt
    else {
        return None;
    };
    if target == "RETURN" {
        return None;
    }
    let mut found = Vec::new();
    let mut pure_calls = true;
    reads(expr, &mut found, &mut pure_calls);
    let calls_rebound = found
        .iter()
        .any(|(name, _)| rebound.contains(&name.as_str()) && builtins::named(name).is_some());
    (pure_calls && !calls_rebound).then(|| Step {
        reads: found,
        target: target.clone(),
    })
}

/// Longest run of statements searched for groups.
const LONGEST_RUN: usize = 256;

/// A program's [`plans`], found on first need and cached with the parsed
/// program, so a cached program (the dashboard's) is not searched again
/// for every long period it runs for.
#[derive(Debug, Default)]
pub(crate) struct PlanCache(OnceLock<HashMap<usize, Plan>>);

impl PlanCache {
    /// The plans of `program`, which must be the program this cache is
    /// stored with.
    pub fn of(&self, program: &[Stmt]) -> &HashMap<usize, Plan> {
        self.0.get_or_init(|| plans(program))
    }
}

/// The statements after `at` that may run before it while it waits for a
/// read started ahead: the browser read of a week or a year comes in
/// after the window read, and the window filters that follow it in the
/// dashboard's program do not need it. Taken in order up to the first
/// statement that may not take part in a span (a read, a `print`,
/// `RETURN`, an `if`): each plain assignment of pure built-ins that shares
/// no name with statement `at` nor with any statement before it that
/// stays in its place. Such a statement sees the values it would see in
/// order, and its writes are read by none of the statements it jumps
/// over. A failure is not trusted to be the one running in order would
/// give: the interpreter runs the period again in order.
pub(crate) fn ahead(program: &[Stmt], at: usize) -> Vec<usize> {
    let Some(Stmt::Simple {
        returns: false,
        target,
        expr,
        ..
    }) = program.get(at)
    else {
        return Vec::new();
    };
    let mut found = Vec::new();
    reads(expr, &mut found, &mut true);
    let mut held: Vec<String> = found.into_iter().map(|(name, _)| name).collect();
    held.extend(target.iter().cloned());
    let rebound = rebound(program);
    let mut early = Vec::new();
    for (index, stmt) in program.iter().enumerate().skip(at + 1) {
        let Some(step) = step(stmt, &rebound) else {
            break;
        };
        let names = step
            .reads
            .iter()
            .map(|(name, _)| name)
            .chain([&step.target]);
        if names.clone().all(|name| !held.contains(name)) {
            early.push(index);
        } else {
            held.extend(names.cloned());
        }
    }
    early
}

/// Every place in `program` where two or more groups of statements can
/// run at once, by their first statement. Spans are runs of statements
/// that may take part; each start in a run that splits is listed, so the
/// interpreter can pick the first one whose inputs are worth a thread.
pub(crate) fn plans(program: &[Stmt]) -> HashMap<usize, Plan> {
    let rebound = rebound(program);
    let steps: Vec<Option<Step>> = program.iter().map(|stmt| step(stmt, &rebound)).collect();
    let mut plans = HashMap::new();
    let mut index = 0;
    while index < steps.len() {
        if steps[index].is_none() {
            index += 1;
            continue;
        }
        let mut end = index;
        while end < steps.len() && steps[end].is_some() {
            end += 1;
        }
        let run: Vec<&Step> = steps[index..end].iter().flatten().collect();
        // Each start costs a pass over the rest of the run: long runs
        // (generated programs, not dashboards) are left in order.
        if run.len() > LONGEST_RUN {
            index = end;
            continue;
        }
        for start in index..end {
            if let Some(plan) = plan(&run[start - index..], start) {
                plans.insert(start, plan);
            }
        }
        index = end;
    }
    plans
}

/// The groups of `span` (statements `start..`), if there are two or more.
fn plan(span: &[&Step], start: usize) -> Option<Plan> {
    // Union-find over the span's statements.
    let mut parent: Vec<usize> = (0..span.len()).collect();
    fn root(parent: &mut [usize], mut at: usize) -> usize {
        while parent[at] != at {
            parent[at] = parent[parent[at]];
            at = parent[at];
        }
        at
    }
    fn join(parent: &mut [usize], a: usize, b: usize) {
        let (a, b) = (root(parent, a), root(parent, b));
        parent[a] = b;
    }
    // The statement that last wrote each name within the span. A
    // statement joins the group of each name it reads or writes there.
    let mut writer: HashMap<&str, usize> = HashMap::new();
    for (at, step) in span.iter().enumerate() {
        let names = step
            .reads
            .iter()
            .map(|(name, _)| name)
            .chain([&step.target]);
        for name in names {
            if let Some(&wrote) = writer.get(name.as_str()) {
                join(&mut parent, at, wrote);
            }
        }
        writer.insert(&step.target, at);
    }
    let mut group_of: HashMap<usize, usize> = HashMap::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for at in 0..span.len() {
        let top = root(&mut parent, at);
        let group = *group_of.entry(top).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[group].push(at);
    }
    if groups.len() < 2 {
        return None;
    }
    // A group's inputs: names it reads before the span writes them.
    let mut inputs = Vec::with_capacity(groups.len());
    let mut outputs = Vec::with_capacity(groups.len());
    let mut period_state = Vec::with_capacity(groups.len());
    for group in &groups {
        // Function names are among the reads, as the calls look them up.
        period_state.push(group.iter().any(|&at| {
            span[at]
                .reads
                .iter()
                .any(|(name, _)| builtins::named(name).is_some_and(|spec| spec.period_state))
        }));
        let mut written: Vec<&str> = Vec::new();
        let mut read: Vec<(String, bool)> = Vec::new();
        for &at in group {
            for (name, last_use) in &span[at].reads {
                if written.contains(&name.as_str()) {
                    continue;
                }
                match read.iter_mut().find(|(known, _)| known == name) {
                    // The group's later reads decide whether it moves it.
                    Some(entry) => entry.1 = *last_use,
                    None => read.push((name.clone(), *last_use)),
                }
            }
            written.push(&span[at].target);
        }
        let mut written: Vec<String> = written.into_iter().map(String::from).collect();
        written.sort();
        written.dedup();
        inputs.push(read);
        outputs.push(written);
    }
    Some(Plan {
        start,
        end: start + span.len(),
        groups: groups
            .into_iter()
            .map(|group| group.into_iter().map(|at| start + at).collect())
            .collect(),
        inputs,
        outputs,
        period_state,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Vec<Stmt> {
        crate::parser::parse(text).expect("the test program parses")
    }

    #[test]
    fn statements_that_do_not_need_an_awaited_read_run_before_it() {
        let program = parse(
            r#"
            events = flood(query_bucket("window"));
            web = flood(query_bucket("web"));
            chrome = filter_keyvals(events, "app", ["Chrome"]);
            chrome_re = filter_keyvals_regex(events, "app", "(?i)^chrom");
            chrome = sort_by_timestamp(concat(chrome, chrome_re));
            web = filter_period_intersect(web, chrome);
            web_flooded = flood(web);
            titles = merge_events_by_keys(events, ["title"]);
            apps = merge_events_by_keys(chrome, ["app"]);
            print(apps);
            later = flood(events);
            RETURN = [web, titles];
            "#,
        );
        // The three window filters and `titles`; `web = ...` needs the
        // read, and keeps `chrome` in place for `apps`; `web_flooded`
        // calls `flood` as the awaited statement does (a name it reads);
        // `print` ends the search.
        assert_eq!(ahead(&program, 1), vec![2, 3, 4, 7]);
        // A statement that rebinds a name the awaited one reads, or reads
        // what it writes, stays in place.
        let program = parse(
            r#"
            a = query_bucket("a");
            b = query_bucket(name);
            name = "c";
            c = flood(b);
            d = flood(a);
            RETURN = [c, d];
            "#,
        );
        assert_eq!(ahead(&program, 1), Vec::<usize>::new());
        // A statement without a target waits like any other; `RETURN`
        // ends the search.
        let program = parse(r#"print(query_bucket("a")); x = 1; RETURN = x; y = 2;"#);
        assert_eq!(ahead(&program, 0), vec![1]);
    }

    #[test]
    fn independent_summaries_form_groups() {
        let program = parse(
            r#"
            a = query_bucket("a");
            b = query_bucket("b");
            a = flood(a);
            x = merge_events_by_keys(a, ["k"]);
            y = merge_events_by_keys(b, ["k"]);
            y = sort_by_duration(y);
            RETURN = [x, y];
            "#,
        );
        let plans = plans(&program);
        let plan = &plans[&2];
        assert_eq!(plan.end, 6);
        assert_eq!(plan.groups, vec![vec![2, 3], vec![4, 5]]);
        assert_eq!(
            plan.inputs[0],
            vec![
                ("flood".into(), false),
                ("a".into(), true),
                ("merge_events_by_keys".into(), false)
            ]
        );
        assert_eq!(plan.outputs[1], vec!["y".to_string()]);
        // Reads and RETURN end spans.
        assert!(!plans.contains_key(&0) && !plans.contains_key(&6));
    }

    #[test]
    fn a_name_rebound_in_one_group_and_read_in_another_joins_them() {
        let program = parse(
            r#"
            a = query_bucket("a");
            b = flood(a);
            a = sort_by_duration(a);
            c = merge_events_by_keys(a, ["k"]);
            RETURN = [b, c];
            "#,
        );
        // `b` reads the `a` from before the span, `c` the one the span
        // writes: two groups, {b} and {a, c}.
        let plan = &plans(&program)[&1];
        assert_eq!(plan.groups, vec![vec![1], vec![2, 3]]);
        // From the third statement on there is one group only.
        assert!(!plans(&program).contains_key(&2));
    }

    #[test]
    fn impure_or_rebound_calls_end_spans() {
        let program = parse(
            r#"
            a = query_bucket("a");
            b = flood(a);
            c = print(a);
            d = flood(a);
            e = flood(a);
            RETURN = [b, c, d, e];
            "#,
        );
        let plans_found = plans(&program);
        assert!(!plans_found.contains_key(&1), "a span of one statement");
        assert!(plans_found.contains_key(&3));
        let rebound = parse(
            r#"
            a = query_bucket("a");
            b = flood(a);
            d = flood(a);
            flood = 1;
            RETURN = [b, d];
            "#,
        );
        assert!(plans(&rebound).is_empty());
    }
}
