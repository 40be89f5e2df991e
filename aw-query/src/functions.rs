//! The built-in functions (spec §7): argument checking and dispatch to the
//! transforms and the event source.
//!
//! Each function takes its arguments by value; event lists are moved into
//! the transforms without copying when nothing else holds them.

use std::sync::Arc;

use aw_models::{SharedEvent, TimeInterval};
use serde_json::Value as Json;

use crate::error::{ErrorKind, Failure};
use crate::limits::Budget;
use crate::prefetch::Prefetch;
use crate::regex::RegexCache;
use crate::rules::{Rule, RuleSet};
use crate::source::{EventSource, SourceError};
use crate::transforms::{self, DataMemo};
use crate::value::{EventList, Value};

macro_rules! builtins {
    ($($variant:ident => $name:literal,)*) => {
        /// A built-in function; built-ins are values bound to their names.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Builtin { $(#[doc = concat!("`", $name, "`")] $variant,)* }

        impl Builtin {
            /// Every built-in.
            pub const ALL: &'static [Builtin] = &[$(Builtin::$variant,)*];

            /// The name it is bound to.
            pub fn name(self) -> &'static str {
                match self { $(Builtin::$variant => $name,)* }
            }
        }
    };
}

builtins! {
    QueryBucket => "query_bucket",
    QueryBucketNames => "query_bucket_names",
    QueryBucketEventcount => "query_bucket_eventcount",
    FindBucket => "find_bucket",
    Flood => "flood",
    MergeEventsByKeys => "merge_events_by_keys",
    ChunkEventsByKey => "chunk_events_by_key",
    FilterKeyvals => "filter_keyvals",
    ExcludeKeyvals => "exclude_keyvals",
    FilterKeyvalsRegex => "filter_keyvals_regex",
    FilterPeriodIntersect => "filter_period_intersect",
    PeriodUnion => "period_union",
    UnionNoOverlap => "union_no_overlap",
    SplitUrlEvents => "split_url_events",
    SortByDuration => "sort_by_duration",
    SortByTimestamp => "sort_by_timestamp",
    SumDurations => "sum_durations",
    LimitEvents => "limit_events",
    Concat => "concat",
    Categorize => "categorize",
    Tag => "tag",
    Contains => "contains",
    Print => "print",
    Nop => "nop",
    SimplifyWindowTitles => "simplify_window_titles",
}

/// What a call may use besides its arguments.
pub(crate) struct Context<'a> {
    pub source: &'a dyn EventSource,
    pub regexes: &'a mut RegexCache,
    pub budget: &'a mut Budget,
    /// Reads started ahead of the program.
    pub prefetch: &'a mut Prefetch,
    /// `split_url_events`' results so far in this period.
    pub urls: &'a mut transforms::UrlSplitter,
    /// While a read statement runs whose events are observed only under
    /// these keys (`crate::keys`): what `query_bucket` reads.
    pub kept: Option<&'a [String]>,
    /// The classes of such a read's whole objects, for `flood`.
    pub classes: &'a mut Option<Vec<u32>>,
    /// The current binding of `TIMEINTERVAL`, if any.
    pub timeinterval: Option<&'a Value>,
    /// Whether a second core may help this call (no other thread of the
    /// query is meant to be busy).
    pub spare_core: bool,
}

/// Calls `builtin` with `args`.
pub(crate) fn call(
    builtin: Builtin,
    args: Vec<Value>,
    context: &mut Context<'_>,
) -> Result<Value, Failure> {
    use Builtin::*;
    let count = args.len();
    let (min, max) = match builtin {
        QueryBucketNames | Nop => (0, 0),
        QueryBucket
        | QueryBucketEventcount
        | Flood
        | SplitUrlEvents
        | SortByDuration
        | SortByTimestamp
        | SumDurations => (1, 1),
        FindBucket => (1, 2),
        MergeEventsByKeys
        | ChunkEventsByKey
        | FilterPeriodIntersect
        | PeriodUnion
        | UnionNoOverlap
        | LimitEvents
        | Categorize
        | Tag
        | Contains
        | SimplifyWindowTitles => (2, 2),
        FilterKeyvals | ExcludeKeyvals | FilterKeyvalsRegex => (3, 3),
        Concat | Print => (0, usize::MAX),
    };
    if count < min || count > max {
        let expected = if min == max {
            format!("{min}")
        } else {
            format!("{min} to {max}")
        };
        return Err(Failure::new(
            ErrorKind::ArgumentCount,
            format!(
                "{} expects {expected} argument{}, got {count}",
                builtin.name(),
                if max == 1 { "" } else { "s" }
            ),
        ));
    }
    let mut args = Args {
        function: builtin.name(),
        items: args.into_iter(),
        position: 0,
        budget: &mut *context.budget,
    };
    let events = Value::events;
    Ok(match builtin {
        QueryBucket => {
            let bucket = args.string()?;
            let interval = timeinterval(context.timeinterval)?;
            let read = match context.kept {
                Some(keys) => {
                    let read = match context.prefetch.take_kept(&bucket, &interval, keys) {
                        Some(read) => read,
                        None => context.source.query_bucket_kept(&bucket, &interval, keys),
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
            context.budget.read(read.len());
            events(read)
        }
        QueryBucketNames => {
            let names = context
                .source
                .buckets()
                .map_err(|e| bucket_error(e, "query_bucket_names"))?;
            args.budget.charge(names.len())?;
            Value::list(names.into_iter().map(|(id, _)| Value::string(id)).collect())?
        }
        QueryBucketEventcount => {
            let bucket = args.string()?;
            let interval = timeinterval(context.timeinterval)?;
            let count = context
                .source
                .count_events(&bucket, &interval)
                .map_err(|e| bucket_error(e, "query_bucket_eventcount"))?;
            Value::Number(count as f64)
        }
        FindBucket => {
            let filter = args.string()?;
            let hostname = if count == 2 {
                Some(args.string()?)
            } else {
                None
            };
            find_bucket(context.source, &filter, hostname.as_deref())?
        }
        Flood => {
            let list = args.events()?;
            events(match context.classes.take() {
                Some(classes) => {
                    transforms::flood_classes(list, classes, transforms::FLOOD_PULSETIME)
                }
                None => transforms::flood(list, transforms::FLOOD_PULSETIME),
            })
        }
        MergeEventsByKeys => {
            let list = args.event_list()?;
            let keys = args.strings()?;
            let merged = transforms::merge_events_by_keys(list.as_slice(), &keys);
            list.release();
            events(merged)
        }
        ChunkEventsByKey => {
            let list = args.event_list()?;
            events(transforms::chunk_events_by_key(
                list.as_slice(),
                &args.string()?,
            ))
        }
        FilterKeyvals | ExcludeKeyvals => {
            let list = args.event_list()?;
            let key = args.string()?;
            let values = args.json_values()?;
            let wanted = builtin == FilterKeyvals;
            // The verdict depends on the data only: once per object.
            let mut memo = DataMemo::for_events(list.as_slice().len());
            events(list.keep(args.budget, |event| {
                memo.get(&event.data, |_| {
                    Ok(transforms::has_keyval(event, &key, &values) == wanted)
                })
            })?)
        }
        FilterKeyvalsRegex => {
            let list = args.event_list()?;
            let key = args.string()?;
            let matcher = context.regexes.get(&args.string()?, false)?;
            let mut memo = DataMemo::for_events(list.as_slice().len());
            events(list.keep(args.budget, |event| {
                memo.get(&event.data, |_| {
                    transforms::matches_regex(event, &key, &matcher)
                })
            })?)
        }
        FilterPeriodIntersect => {
            let list = args.events()?;
            let filter = args.event_list()?;
            events(transforms::filter_period_intersect(list, filter.as_slice()))
        }
        PeriodUnion => {
            let first = args.event_list()?;
            let second = args.event_list()?;
            events(transforms::period_union(
                first.as_slice(),
                second.as_slice(),
            ))
        }
        UnionNoOverlap => {
            let list = args.events()?;
            events(transforms::union_no_overlap(list, args.events()?))
        }
        SplitUrlEvents => events(context.urls.split_on(args.events()?, context.spare_core)),
        SortByDuration => events(transforms::sort_by_duration(args.events()?)),
        SortByTimestamp => events(transforms::sort_by_timestamp(args.events()?)),
        SumDurations => {
            let list = args.event_list()?;
            let sum = transforms::sum_durations(list.as_slice());
            list.release();
            Value::Number(sum.as_secs_f64())
        }
        LimitEvents => {
            let list = args.events()?;
            let limit = args.number()?;
            // NaN and negatives count as 0; `as` saturates large values.
            let limit = if limit > 0.0 { limit as usize } else { 0 };
            events(transforms::limit_events(list, limit))
        }
        Concat => {
            let mut all: Vec<SharedEvent> = Vec::new();
            for _ in 0..count {
                let list = args.events()?;
                args.budget.charge(list.len())?;
                if all.is_empty() {
                    all = list;
                } else {
                    all.extend(list);
                }
            }
            events(all)
        }
        Categorize => {
            let list = args.events()?;
            let (paths, rules) = args.rules("categorize", context.regexes)?;
            let paths: Vec<Json> = paths
                .into_iter()
                .map(|path| path.into_json())
                .collect::<Result<_, _>>()?;
            events(transforms::categorize(
                list,
                &paths,
                &mut RuleSet::new(rules),
            )?)
        }
        Tag => {
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
            events(transforms::tag(list, &names, &mut RuleSet::new(rules))?)
        }
        Contains => {
            let container = args.next();
            let value = args.next();
            match container {
                Value::List(list) => {
                    Value::Bool(list.items().iter().any(|item| item.equals(&value)))
                }
                Value::Events(_) => Value::Bool(false),
                Value::Dict(dict) => match value {
                    Value::String(key) => Value::Bool(dict.entries().contains_key(&*key)),
                    other => {
                        return Err(Failure::new(
                            ErrorKind::Type,
                            format!(
                                "contains on a dict needs a string key, got {}",
                                other.type_name()
                            ),
                        ))
                    }
                },
                other => {
                    return Err(Failure::new(
                        ErrorKind::Type,
                        format!("contains needs a list or dict, got {}", other.type_name()),
                    ))
                }
            }
        }
        Print => {
            for value in args.items.by_ref() {
                log::info!("query print: {}", preview(&value));
            }
            Value::None
        }
        Nop => Value::Number(1.0),
        SimplifyWindowTitles => {
            let list = args.events()?;
            let key = args.string()?;
            events(
                transforms::simplify_window_titles(list, &key)
                    .map_err(|message| Failure::new(ErrorKind::Type, message))?,
            )
        }
    })
}

/// The arguments of one call, taken in order.
struct Args<'a> {
    function: &'static str,
    items: std::vec::IntoIter<Value>,
    position: usize,
    /// Copies of shared event lists are charged to the run's budget, so a
    /// program cannot keep arbitrarily many copies of a large bucket.
    budget: &'a mut Budget,
}

impl Args<'_> {
    fn next(&mut self) -> Value {
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

/// Among buckets whose id starts with `filter` (and on `hostname` if
/// given), the one named exactly `filter`, else the first by id.
/// The bucket `find_bucket(filter[, hostname])` picks from `buckets`
/// (`(id, hostname)` pairs): the one named `filter` exactly, else the
/// first id starting with it, on `hostname` if given.
pub(crate) fn pick_bucket(
    buckets: &[(String, String)],
    filter: &str,
    hostname: Option<&str>,
) -> Option<String> {
    let candidates = buckets
        .iter()
        .filter(|(id, host)| id.starts_with(filter) && hostname.is_none_or(|h| h == host))
        .map(|(id, _)| id);
    if candidates.clone().any(|id| id == filter) {
        return Some(filter.to_string());
    }
    candidates.min().cloned()
}

fn find_bucket(
    source: &dyn EventSource,
    filter: &str,
    hostname: Option<&str>,
) -> Result<Value, Failure> {
    let buckets = source
        .buckets()
        .map_err(|e| bucket_error(e, "find_bucket"))?;
    let found = pick_bucket(&buckets, filter, hostname).ok_or_else(|| {
        Failure::new(
            ErrorKind::NoSuchBucket,
            match hostname {
                Some(host) => {
                    format!("find_bucket: no bucket matches filter '{filter}' on host '{host}'")
                }
                None => format!("find_bucket: no bucket matches filter '{filter}'"),
            },
        )
    })?;
    Ok(Value::string(found.as_str()))
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
