//! Which data keys of a bucket's events a program can observe.
//!
//! A year of browser events holds ~78k distinct data objects, because each
//! records the tab count beside its URL and title; the dashboard looks at
//! three keys of them, which take ~5k distinct combinations. Every step
//! that works once per distinct object (the URL split, the filters, the
//! merges) works ~15 times less when the events carry only the keys the
//! program can see. [`mark_projections`] finds, for each top-level statement
//! that is a read (`x = query_bucket(..)` or `x = flood(query_bucket(..))`),
//! the keys of its events that any later statement can observe; the
//! interpreter then reads only those (`EventSource::query_bucket_projected`),
//! and `flood` compares each event's whole stored object through its class
//! (`transforms::flood_classes`), as it would have compared the objects.
//!
//! The answer never changes: it is a backwards pass from `RETURN`, which
//! observes everything, through each built-in with the keys it reads or
//! passes on. Whatever is not known exactly observes every key: a
//! built-in with a computed key argument, `flood` of a variable (it
//! compares whole objects), `categorize` and `tag` (they match every
//! value), operators, lists, dicts, printing, any call of a name the
//! program rebinds, and any program with an `if`.

use std::collections::{BTreeSet, HashMap};

use crate::ast::{rebound, Expr, ExprKind, Stmt};
use crate::builtins::{self, Observe, ReadAhead, Spec};

/// What a program can observe of a list's events' data.
#[derive(Debug, Clone, PartialEq)]
enum Seen {
    /// Every key.
    All,
    /// These keys only (none: only times and durations).
    Keys(BTreeSet<String>),
}

impl Seen {
    fn nothing() -> Seen {
        Seen::Keys(BTreeSet::new())
    }

    /// Both what `self` and what `other` observe.
    fn add(&mut self, other: &Seen) {
        match (&mut *self, other) {
            (Seen::All, _) => {}
            (_, Seen::All) => *self = Seen::All,
            (Seen::Keys(mine), Seen::Keys(theirs)) => mine.extend(theirs.iter().cloned()),
        }
    }

    /// `self` and the key `key`.
    fn with(&self, key: &str) -> Seen {
        let mut seen = self.clone();
        if let Seen::Keys(keys) = &mut seen {
            keys.insert(key.to_string());
        }
        seen
    }
}

/// Sets `projection` on each top-level assignment that reads a bucket and whose
/// value's other keys no later statement can observe.
pub(crate) fn mark_projections(program: &mut [Stmt]) {
    if program.iter().any(|stmt| matches!(stmt, Stmt::If { .. })) {
        return;
    }
    let rebound: Vec<String> = rebound(program).into_iter().map(str::to_string).collect();
    let mut seen: HashMap<String, Seen> = HashMap::new();
    seen.insert("RETURN".to_string(), Seen::All);
    for stmt in program.iter_mut().rev() {
        let Stmt::Simple {
            returns,
            target,
            expr,
            projection,
        } = stmt
        else {
            continue;
        };
        let mut value = Seen::nothing();
        if let Some(target) = target {
            value = seen.remove(target).unwrap_or_else(Seen::nothing);
            if *returns {
                // `return x = ...` binds RETURN to none.
                seen.remove("RETURN");
            }
        } else if *returns {
            value = seen.remove("RETURN").unwrap_or_else(Seen::nothing);
        }
        if let (Some(_), Seen::Keys(keys)) = (&target, &value) {
            if is_read(expr, &rebound) {
                *projection = Some(keys.iter().cloned().collect());
            }
        }
        observe(expr, &value, &mut seen, &rebound);
    }
}

/// Whether `expr` is a read of a bucket (`query_bucket(b)`), alone or
/// under a built-in that compares whole objects (`flood(query_bucket(b))`),
/// none of them rebound: a read whose events reach the statement's value
/// through nothing that compares or matches whole objects but what the
/// read's classes stand in for.
fn is_read(expr: &Expr, rebound: &[String]) -> bool {
    let read = |expr: &Expr| matches!(call(expr, rebound), Some((spec, [_])) if spec.read_ahead == ReadAhead::Bucket);
    match call(expr, rebound) {
        Some((spec, [inner])) if spec.compares_whole_objects => read(inner),
        _ => read(expr),
    }
}

/// The built-in `expr` calls by its name, not rebound, with the
/// arguments.
fn call<'a>(expr: &'a Expr, rebound: &[String]) -> Option<(&'static Spec, &'a [Expr])> {
    match &expr.kind {
        ExprKind::Call { name, args } if !rebound.iter().any(|target| target == name) => {
            Some((builtins::named(name)?, args))
        }
        _ => None,
    }
}

/// Records what the program observes of the variables `expr` reads, when
/// it observes `value` of `expr`'s value.
fn observe(expr: &Expr, value: &Seen, seen: &mut HashMap<String, Seen>, rebound: &[String]) {
    match &expr.kind {
        ExprKind::Literal(_) => {}
        ExprKind::Var { name, .. } => seen
            .entry(name.clone())
            .or_insert_with(Seen::nothing)
            .add(value),
        ExprKind::List(items) => items
            .iter()
            .for_each(|item| observe(item, &Seen::All, seen, rebound)),
        ExprKind::Dict(entries) => entries
            .iter()
            .for_each(|(_, item)| observe(item, &Seen::All, seen, rebound)),
        ExprKind::Chain { first, rest } => {
            observe(first, &Seen::All, seen, rebound);
            rest.iter()
                .for_each(|(_, _, operand)| observe(operand, &Seen::All, seen, rebound));
        }
        ExprKind::Call { args, .. } => {
            let spec = call(expr, rebound).map(|(spec, _)| spec);
            for (index, arg) in args.iter().enumerate() {
                let of_arg = match spec {
                    Some(spec) => argument(spec.observes(index), args, value),
                    None => Seen::All,
                };
                observe(arg, &of_arg, seen, rebound);
            }
        }
    }
}

/// What a call observes of an argument its table entry declares as
/// `observe`, with `args`, when `value` of its result is observed.
fn argument(observe: Observe, args: &[Expr], value: &Seen) -> Seen {
    match observe {
        Observe::Everything => Seen::All,
        Observe::Nothing => Seen::nothing(),
        Observe::Result => value.clone(),
        Observe::ResultAnd(key) => value.with(key),
        Observe::ResultAndKeyAt(at) => args
            .get(at)
            .and_then(literal_string)
            .map_or(Seen::All, |key| value.with(&key)),
        Observe::KeysListedAt(at) => match args.get(at).map(|keys| &keys.kind) {
            Some(ExprKind::List(keys)) => {
                let keys: Option<BTreeSet<String>> = keys.iter().map(literal_string).collect();
                keys.map_or(Seen::All, Seen::Keys)
            }
            _ => Seen::All,
        },
    }
}

/// The text of a string literal.
fn literal_string(expr: &Expr) -> Option<String> {
    match &expr.kind {
        ExprKind::Literal(crate::value::Value::String(text)) => Some(text.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::parse;

    /// The projection of each statement of `program`.
    fn projections(program: &str) -> Vec<Option<Vec<String>>> {
        parse(program)
            .unwrap()
            .into_iter()
            .map(|stmt| match stmt {
                Stmt::Simple { projection, .. } => projection.map(|keys| keys.to_vec()),
                Stmt::If { .. } => None,
            })
            .collect()
    }

    fn keys(keys: &[&str]) -> Option<Vec<String>> {
        Some(keys.iter().map(|key| key.to_string()).collect())
    }

    #[test]
    fn a_browser_read_keeps_what_the_summary_looks_at() {
        let program = r#"
            web = flood(query_bucket("web"));
            window = query_bucket(find_bucket("window"));
            web = filter_period_intersect(web, filter_keyvals(window, "app", ["Firefox"]));
            web = split_url_events(web);
            audible = filter_keyvals(web, "audible", [true]);
            active = period_union(audible, window);
            urls = limit_events(sort_by_duration(merge_events_by_keys(web, ["url", "$domain"])), 10);
            RETURN = {"urls": urls, "duration": sum_durations(web), "active": active};
        "#;
        let kept = projections(program);
        assert_eq!(kept[0], keys(&["$domain", "audible", "url"]));
        // Only its periods reach the answer, through `period_union`.
        assert_eq!(kept[1], keys(&["app"]));
        assert!(kept[2..].iter().all(Option::is_none));
    }

    #[test]
    fn whatever_is_not_known_observes_every_key() {
        for program in [
            // Returned as they are.
            r#"a = query_bucket("b"); RETURN = a;"#,
            r#"a = query_bucket("b"); return a;"#,
            // Compared whole, or matched on every value.
            r#"a = query_bucket("b"); RETURN = merge_events_by_keys(flood(a), ["k"]);"#,
            r#"a = query_bucket("b"); RETURN = merge_events_by_keys(categorize(a, []), ["k"]);"#,
            // A key not known before the program runs.
            r#"k = "x"; a = query_bucket("b"); RETURN = merge_events_by_keys(a, [k]);"#,
            r#"k = "x"; a = query_bucket("b"); RETURN = sum_durations(filter_keyvals(a, k, [1]));"#,
            // A rebound built-in.
            r#"a = query_bucket("b"); sum_durations = flood; RETURN = sum_durations(a);"#,
            // Operators and lists.
            r#"a = query_bucket("b"); RETURN = a == a;"#,
            r#"a = query_bucket("b"); RETURN = sum_durations(concat([a]));"#,
            // Printed.
            r#"a = query_bucket("b"); print(a); RETURN = 1;"#,
            // An `if` anywhere.
            r#"a = query_bucket("b"); if true { x = 1; } RETURN = sum_durations(a);"#,
        ] {
            assert!(
                projections(program).iter().all(Option::is_none),
                "{program}"
            );
        }
    }

    #[test]
    fn only_plain_reads_are_projected() {
        for program in [
            r#"a = sort_by_timestamp(query_bucket("b")); RETURN = sum_durations(a);"#,
            r#"a = flood(sort_by_timestamp(query_bucket("b"))); RETURN = sum_durations(a);"#,
            r#"a = flood(query_bucket("b"), 1); RETURN = sum_durations(a);"#,
            r#"a = concat(query_bucket("b"), query_bucket("c")); RETURN = sum_durations(a);"#,
            r#"query_bucket = flood; a = query_bucket("b"); RETURN = sum_durations(a);"#,
            r#"flood = sort_by_timestamp; a = flood(query_bucket("b")); RETURN = sum_durations(a);"#,
        ] {
            assert!(
                projections(program).iter().all(Option::is_none),
                "{program}"
            );
        }
    }

    #[test]
    fn a_read_only_timed_keeps_no_key() {
        let program = r#"
            a = flood(query_bucket("b"));
            a = limit_events(sort_by_timestamp(a), 5);
            RETURN = sum_durations(a);
        "#;
        assert_eq!(projections(program)[0], keys(&[]));
    }

    #[test]
    fn keys_of_every_later_use_are_projected() {
        let program = r#"
            a = query_bucket("b");
            x = merge_events_by_keys(a, ["app"]);
            y = chunk_events_by_key(exclude_keyvals(a, "status", ["afk"]), "title");
            RETURN = {"x": x, "y": merge_events_by_keys(y, ["app"])};
        "#;
        assert_eq!(projections(program)[0], keys(&["app", "status", "title"]));
    }
}
