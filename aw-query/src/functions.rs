//! What runs each built-in function (`docs/API.md`, "Built-in functions"):
//! taking the arguments and handing them to the transforms and the event
//! source. What the rest of the crate knows of a built-in is declared in
//! its entry of the table (`crate::builtins`).
//!
//! Each function takes its arguments by value; event lists are moved into
//! the transforms without copying when nothing else holds them.

use std::sync::Arc;

use aw_models::{SharedEvent, TimeInterval};
use serde_json::Value as Json;

use crate::error::{ErrorKind, Failure};
use crate::limits::Budget;
use crate::regex::RegexCache;
use crate::rules::{Rule, RuleSet};
use crate::source::{pick_bucket, EventSource, ReadsAhead, SourceError};
use crate::transforms::{self, DataMemo};
use crate::value::{EventList, Value};

/// What a call may use besides its arguments.
pub(crate) struct Context<'a> {
    pub source: &'a dyn EventSource,
    pub regexes: &'a mut RegexCache,
    /// Reads started ahead of the program.
    pub prefetch: &'a mut dyn ReadsAhead,
    /// `split_url_events`' results so far in this period.
    pub urls: &'a mut transforms::UrlSplitter,
    /// While a read statement runs whose events are observed only under
    /// these keys (`crate::keys`): the keys `query_bucket` reads.
    pub projection: Option<&'a [String]>,
    /// The classes of such a read's whole objects, for `flood`.
    pub classes: &'a mut Option<Vec<u32>>,
    /// The current binding of `TIMEINTERVAL`, if any.
    pub timeinterval: Option<&'a Value>,
    /// Whether a second core may help this call (no other thread of the
    /// query is meant to be busy).
    pub spare_core: bool,
}

// The built-ins, in the order of the table (`crate::builtins`). Each
// takes its arguments in order from `args`, whose count the table's
// entry has checked.

pub(crate) fn query_bucket(
    args: &mut Args<'_>,
    context: &mut Context<'_>,
) -> Result<Value, Failure> {
    let bucket = args.string()?;
    let interval = timeinterval(context.timeinterval)?;
    let read = match context.projection {
        Some(keys) => {
            let read = match context.prefetch.take_projected(&bucket, &interval, keys) {
                Some(read) => read,
                None => context
                    .source
                    .query_bucket_projected(&bucket, &interval, keys),
            }
            .map_err(|e| bucket_error(e, "query_bucket"))?;
            *context.classes = Some(read.classes);
            read.events
        }
        None => match context.prefetch.take(&bucket, &interval) {
            Some(read) => read,
            None => context.source.query_bucket(&bucket, &interval),
        }
        .map_err(|e| bucket_error(e, "query_bucket"))?,
    };
    args.budget.read(read.len());
    Ok(Value::events(read))
}

pub(crate) fn query_bucket_names(
    args: &mut Args<'_>,
    context: &mut Context<'_>,
) -> Result<Value, Failure> {
    let names = context
        .source
        .buckets()
        .map_err(|e| bucket_error(e, "query_bucket_names"))?;
    args.budget.charge(names.len())?;
    Value::list(names.into_iter().map(|(id, _)| Value::string(id)).collect())
}

pub(crate) fn query_bucket_eventcount(
    args: &mut Args<'_>,
    context: &mut Context<'_>,
) -> Result<Value, Failure> {
    let bucket = args.string()?;
    let interval = timeinterval(context.timeinterval)?;
    let count = context
        .source
        .count_events(&bucket, &interval)
        .map_err(|e| bucket_error(e, "query_bucket_eventcount"))?;
    Ok(Value::Number(count as f64))
}

pub(crate) fn find_bucket(
    args: &mut Args<'_>,
    context: &mut Context<'_>,
) -> Result<Value, Failure> {
    let filter = args.string()?;
    let hostname = if args.remaining() > 0 {
        Some(args.string()?)
    } else {
        None
    };
    let buckets = context
        .source
        .buckets()
        .map_err(|e| bucket_error(e, "find_bucket"))?;
    let found = pick_bucket(&buckets, &filter, hostname.as_deref()).ok_or_else(|| {
        Failure::new(
            ErrorKind::NoSuchBucket,
            match &hostname {
                Some(host) => {
                    format!("find_bucket: no bucket matches filter '{filter}' on host '{host}'")
                }
                None => format!("find_bucket: no bucket matches filter '{filter}'"),
            },
        )
    })?;
    Ok(Value::string(found.as_str()))
}

pub(crate) fn flood(args: &mut Args<'_>, context: &mut Context<'_>) -> Result<Value, Failure> {
    let list = args.events()?;
    Ok(Value::events(match context.classes.take() {
        Some(classes) => transforms::flood_classes(list, classes, transforms::FLOOD_PULSETIME),
        None => transforms::flood(list, transforms::FLOOD_PULSETIME),
    }))
}

pub(crate) fn merge_events_by_keys(
    args: &mut Args<'_>,
    _: &mut Context<'_>,
) -> Result<Value, Failure> {
    let list = args.event_list()?;
    let keys = args.strings()?;
    let merged = transforms::merge_events_by_keys(list.as_slice(), &keys);
    list.release();
    Ok(Value::events(merged))
}

pub(crate) fn chunk_events_by_key(
    args: &mut Args<'_>,
    _: &mut Context<'_>,
) -> Result<Value, Failure> {
    let list = args.event_list()?;
    Ok(Value::events(transforms::chunk_events_by_key(
        list.as_slice(),
        &args.string()?,
    )))
}

pub(crate) fn filter_keyvals(args: &mut Args<'_>, _: &mut Context<'_>) -> Result<Value, Failure> {
    keyvals(args, true)
}

pub(crate) fn exclude_keyvals(args: &mut Args<'_>, _: &mut Context<'_>) -> Result<Value, Failure> {
    keyvals(args, false)
}

/// `filter_keyvals` (`wanted`) or `exclude_keyvals`.
fn keyvals(args: &mut Args<'_>, wanted: bool) -> Result<Value, Failure> {
    let list = args.event_list()?;
    let key = args.string()?;
    let values = args.json_values()?;
    // The verdict depends on the data only: once per object.
    let mut memo = DataMemo::for_events(list.as_slice().len());
    Ok(Value::events(list.keep(args.budget, |event| {
        memo.get(&event.data, |_| {
            Ok(transforms::has_keyval(event, &key, &values) == wanted)
        })
    })?))
}

pub(crate) fn filter_keyvals_regex(
    args: &mut Args<'_>,
    context: &mut Context<'_>,
) -> Result<Value, Failure> {
    let list = args.event_list()?;
    let key = args.string()?;
    let matcher = context.regexes.get(&args.string()?, false)?;
    let mut memo = DataMemo::for_events(list.as_slice().len());
    Ok(Value::events(list.keep(args.budget, |event| {
        memo.get(&event.data, |_| {
            transforms::matches_regex(event, &key, &matcher)
        })
    })?))
}

pub(crate) fn filter_period_intersect(
    args: &mut Args<'_>,
    _: &mut Context<'_>,
) -> Result<Value, Failure> {
    let list = args.events()?;
    let filter = args.event_list()?;
    Ok(Value::events(transforms::filter_period_intersect(
        list,
        filter.as_slice(),
    )))
}

pub(crate) fn period_union(args: &mut Args<'_>, _: &mut Context<'_>) -> Result<Value, Failure> {
    let first = args.event_list()?;
    let second = args.event_list()?;
    Ok(Value::events(transforms::period_union(
        first.as_slice(),
        second.as_slice(),
    )))
}

pub(crate) fn union_no_overlap(args: &mut Args<'_>, _: &mut Context<'_>) -> Result<Value, Failure> {
    let list = args.events()?;
    Ok(Value::events(transforms::union_no_overlap(
        list,
        args.events()?,
    )))
}

pub(crate) fn split_url_events(
    args: &mut Args<'_>,
    context: &mut Context<'_>,
) -> Result<Value, Failure> {
    Ok(Value::events(
        context.urls.split_on(args.events()?, context.spare_core),
    ))
}

pub(crate) fn sort_by_duration(args: &mut Args<'_>, _: &mut Context<'_>) -> Result<Value, Failure> {
    Ok(Value::events(transforms::sort_by_duration(args.events()?)))
}

pub(crate) fn sort_by_timestamp(
    args: &mut Args<'_>,
    _: &mut Context<'_>,
) -> Result<Value, Failure> {
    Ok(Value::events(transforms::sort_by_timestamp(args.events()?)))
}

pub(crate) fn sum_durations(args: &mut Args<'_>, _: &mut Context<'_>) -> Result<Value, Failure> {
    let list = args.event_list()?;
    let sum = transforms::sum_durations(list.as_slice());
    list.release();
    Ok(Value::Number(sum.as_secs_f64()))
}

pub(crate) fn limit_events(args: &mut Args<'_>, _: &mut Context<'_>) -> Result<Value, Failure> {
    let list = args.events()?;
    let limit = args.number()?;
    // NaN and negatives count as 0; `as` saturates large values.
    let limit = if limit > 0.0 { limit as usize } else { 0 };
    Ok(Value::events(transforms::limit_events(list, limit)))
}

pub(crate) fn concat(args: &mut Args<'_>, _: &mut Context<'_>) -> Result<Value, Failure> {
    let mut all: Vec<SharedEvent> = Vec::new();
    while args.remaining() > 0 {
        let list = args.events()?;
        args.budget.charge(list.len())?;
        if all.is_empty() {
            all = list;
        } else {
            all.extend(list);
        }
    }
    Ok(Value::events(all))
}

pub(crate) fn categorize(args: &mut Args<'_>, context: &mut Context<'_>) -> Result<Value, Failure> {
    let list = args.events()?;
    let (paths, rules) = args.rules("categorize", context.regexes)?;
    let paths: Vec<Json> = paths
        .into_iter()
        .map(|path| path.into_json())
        .collect::<Result<_, _>>()?;
    Ok(Value::events(transforms::categorize(
        list,
        &paths,
        &mut RuleSet::new(rules),
    )?))
}

pub(crate) fn tag(args: &mut Args<'_>, context: &mut Context<'_>) -> Result<Value, Failure> {
    let list = args.events()?;
    let (names, rules) = args.rules("tag", context.regexes)?;
    let names: Vec<String> = names
        .into_iter()
        .map(|name| match name {
            Value::String(name) => Ok(name.to_string()),
            other => Err(Failure::new(
                ErrorKind::Rule,
                format!("a tag must be a string, got {}", other.type_name()),
            )),
        })
        .collect::<Result<_, _>>()?;
    Ok(Value::events(transforms::tag(
        list,
        &names,
        &mut RuleSet::new(rules),
    )?))
}

pub(crate) fn contains(args: &mut Args<'_>, _: &mut Context<'_>) -> Result<Value, Failure> {
    let container = args.next();
    let value = args.next();
    match container {
        Value::List(list) => Ok(Value::Bool(
            list.items().iter().any(|item| item.equals(&value)),
        )),
        Value::Events(_) => Ok(Value::Bool(false)),
        Value::Dict(dict) => match value {
            Value::String(key) => Ok(Value::Bool(dict.entries().contains_key(&*key))),
            other => Err(Failure::new(
                ErrorKind::Type,
                format!(
                    "contains on a dict needs a string key, got {}",
                    other.type_name()
                ),
            )),
        },
        other => Err(Failure::new(
            ErrorKind::Type,
            format!("contains needs a list or dict, got {}", other.type_name()),
        )),
    }
}

pub(crate) fn print(args: &mut Args<'_>, _: &mut Context<'_>) -> Result<Value, Failure> {
    for value in args.items.by_ref() {
        log::info!("query print: {}", preview(&value));
    }
    Ok(Value::None)
}

pub(crate) fn nop(_: &mut Args<'_>, _: &mut Context<'_>) -> Result<Value, Failure> {
    Ok(Value::Number(1.0))
}

pub(crate) fn simplify_window_titles(
    args: &mut Args<'_>,
    _: &mut Context<'_>,
) -> Result<Value, Failure> {
    let list = args.events()?;
    let key = args.string()?;
    Ok(Value::events(
        transforms::simplify_window_titles(list, &key)
            .map_err(|message| Failure::new(ErrorKind::Type, message))?,
    ))
}

/// The arguments of one call, taken in order.
pub(crate) struct Args<'a> {
    function: &'static str,
    items: std::vec::IntoIter<Value>,
    position: usize,
    /// Copies of shared event lists are charged to the run's budget, so a
    /// program cannot keep arbitrarily many copies of a large bucket.
    budget: &'a mut Budget,
}

impl<'a> Args<'a> {
    /// The arguments `items` of a call of `function`.
    pub(crate) fn new(
        function: &'static str,
        items: Vec<Value>,
        budget: &'a mut Budget,
    ) -> Args<'a> {
        Args {
            function,
            items: items.into_iter(),
            position: 0,
            budget,
        }
    }

    /// How many arguments are left.
    fn remaining(&self) -> usize {
        self.items.len()
    }

    /// The next argument as it is.
    pub(crate) fn next(&mut self) -> Value {
        self.position += 1;
        // The count was checked before any argument is taken.
        self.items.next().unwrap_or(Value::None)
    }

    fn wrong(&self, wanted: &str, got: &Value) -> Failure {
        Failure::new(
            ErrorKind::Type,
            format!(
                "argument {} of {} must be {wanted}, got {}",
                self.position,
                self.function,
                got.type_name()
            ),
        )
    }

    /// An events argument, to own (a shared list is copied and charged).
    fn events(&mut self) -> Result<Vec<SharedEvent>, Failure> {
        let list = self.event_list()?;
        if let EventList::Shared(shared) = &list {
            self.budget.charge(shared.len())?;
        }
        Ok(list.into_owned())
    }

    /// An events argument, owned or shared.
    fn event_list(&mut self) -> Result<EventList, Failure> {
        let value = self.next();
        value
            .into_event_list()
            .map_err(|value| self.wrong("a list of events", &value))
    }

    fn string(&mut self) -> Result<Arc<str>, Failure> {
        match self.next() {
            Value::String(text) => Ok(text),
            other => Err(self.wrong("a string", &other)),
        }
    }

    fn number(&mut self) -> Result<f64, Failure> {
        match self.next() {
            Value::Number(number) => Ok(number),
            other => Err(self.wrong("a number", &other)),
        }
    }

    /// A list argument's items (`[]` may arrive as an empty list of events).
    fn list(&mut self) -> Result<Vec<Value>, Failure> {
        match self.next() {
            Value::List(list) => Ok(Arc::unwrap_or_clone(list).into_items()),
            Value::Events(events) if events.is_empty() => Ok(Vec::new()),
            other => Err(self.wrong("a list", &other)),
        }
    }

    fn strings(&mut self) -> Result<Vec<String>, Failure> {
        let list = self.list()?;
        list.iter()
            .map(|item| match item {
                Value::String(text) => Ok(text.to_string()),
                other => Err(self.wrong("a list of strings", other)),
            })
            .collect()
    }

    /// A list of values to compare with JSON data; dicts are refused.
    fn json_values(&mut self) -> Result<Vec<Json>, Failure> {
        let list = self.list()?;
        list.iter()
            .map(|item| {
                if contains_dict(item) {
                    return Err(self.wrong("a list of strings, numbers, bools or lists", item));
                }
                item.clone().into_json()
            })
            .collect()
    }

    /// `[[key, rule], ...]`: the keys (category paths or tags) and the
    /// compiled rules.
    fn rules(
        &mut self,
        function: &str,
        regexes: &mut RegexCache,
    ) -> Result<(Vec<Value>, Vec<Rule>), Failure> {
        let list = self.list()?;
        let mut keys = Vec::with_capacity(list.len());
        let mut rules = Vec::with_capacity(list.len());
        for (index, pair) in list.iter().enumerate() {
            let bad = || {
                Failure::new(
                    ErrorKind::Rule,
                    format!(
                        "rule {} of {function} must be a list [name, rule dict]",
                        index + 1
                    ),
                )
            };
            let Value::List(pair) = pair else {
                return Err(bad());
            };
            let [key, rule] = pair.items() else {
                return Err(bad());
            };
            if function == "categorize" {
                let valid = matches!(key, Value::List(path)
                    if path.items().iter().all(|part| matches!(part, Value::String(_))));
                if !valid {
                    return Err(Failure::new(
                        ErrorKind::Rule,
                        format!("rule {}: a category must be a list of strings", index + 1),
                    ));
                }
            }
            keys.push(key.clone());
            rules.push(Rule::parse(rule, regexes).map_err(|failure| {
                Failure::new(
                    failure.kind,
                    format!("rule {}: {}", index + 1, failure.message),
                )
            })?);
        }
        Ok((keys, rules))
    }
}

fn contains_dict(value: &Value) -> bool {
    match value {
        Value::Dict(_) | Value::Function(_) => true,
        Value::List(list) => list.items().iter().any(contains_dict),
        _ => false,
    }
}

/// The period `TIMEINTERVAL` currently names.
fn timeinterval(binding: Option<&Value>) -> Result<TimeInterval, Failure> {
    match binding {
        Some(Value::String(text)) => text.parse().map_err(|_| {
            Failure::new(
                ErrorKind::Type,
                format!("TIMEINTERVAL {text:?} is not \"<start>/<end>\" in RFC 3339"),
            )
        }),
        Some(other) => Err(Failure::new(
            ErrorKind::Type,
            format!("TIMEINTERVAL must be a string, got {}", other.type_name()),
        )),
        None => Err(Failure::new(
            ErrorKind::UnknownVariable,
            "TIMEINTERVAL is not bound",
        )),
    }
}

fn bucket_error(error: SourceError, function: &str) -> Failure {
    match error {
        SourceError::NoSuchBucket(bucket) => Failure::new(
            ErrorKind::NoSuchBucket,
            format!("{function}: there is no bucket '{bucket}'"),
        ),
        SourceError::Failed(message) => {
            Failure::new(ErrorKind::Source, format!("{function}: {message}"))
        }
    }
}

/// The debug form of `value`, cut after 500 bytes without formatting the
/// rest: a whole bucket in the log helps no one.
fn preview(value: &Value) -> String {
    struct Bounded(String);
    impl std::fmt::Write for Bounded {
        fn write_str(&mut self, text: &str) -> std::fmt::Result {
            let room = 500usize.saturating_sub(self.0.len());
            if text.len() <= room {
                self.0.push_str(text);
                return Ok(());
            }
            let cut = (0..=room)
                .rev()
                .find(|at| text.is_char_boundary(*at))
                .unwrap_or(0);
            self.0.push_str(&text[..cut]);
            self.0.push('…');
            // Stops the formatting of the rest of the value.
            Err(std::fmt::Error)
        }
    }
    let mut out = Bounded(String::new());
    let _ = std::fmt::Write::write_fmt(&mut out, format_args!("{value:?}"));
    out.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn print_previews_are_bounded() {
        assert_eq!(preview(&Value::Number(1.5)), "Number(1.5)");
        let long = Value::string("é".repeat(10_000));
        let text = preview(&long);
        assert!(text.len() <= 504 && text.ends_with('…'), "{}", text.len());
    }
}
