//! Run-time values of the language (`docs/API.md` §6.4) and their JSON form.
//!
//! Lists, dicts and event lists are reference counted so that a variable
//! read shares the value instead of copying it; a transform that owns the
//! only reference takes the vector out without copying (see
//! [`EventList`]). Lists and dicts remember their weight and depth
//! so the limits of [`crate::limits`] are checked in constant time per
//! element.

use std::collections::BTreeMap;
use std::sync::Arc;

use aw_models::SharedEvent;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value as Json;

use crate::error::{ErrorKind, Failure};
use crate::limits::{Budget, MAX_DEPTH, MAX_WEIGHT};

/// A value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `none`, the value of `print` and of an assignment.
    None,
    /// `true` / `false`.
    Bool(bool),
    /// Every number is a 64-bit float.
    Number(f64),
    /// A string.
    String(Arc<str>),
    /// A list of values (`[]` is also an empty list of events).
    List(Arc<List>),
    /// A dict with string keys.
    Dict(Arc<Dict>),
    /// A list of events, as returned by `query_bucket` and transforms.
    Events(Arc<Vec<SharedEvent>>),
    /// A built-in function.
    Function(Function),
}

/// A built-in function as a value: its place in the table of built-ins
/// (`crate::builtins`) and its name.
#[derive(Clone, Copy)]
pub struct Function {
    index: u16,
    name: &'static str,
}

impl Function {
    /// The function at `index` of the table, bound to `name`.
    pub(crate) fn new(index: u16, name: &'static str) -> Function {
        Function { index, name }
    }

    /// Its place in the table.
    pub(crate) fn index(self) -> u16 {
        self.index
    }

    /// The name it is bound to before a program rebinds anything.
    pub fn name(self) -> &'static str {
        self.name
    }
}

impl PartialEq for Function {
    fn eq(&self, other: &Function) -> bool {
        self.index == other.index
    }
}

impl std::fmt::Debug for Function {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.name)
    }
}

/// The items of a list value with their size.
#[derive(Debug, Clone, PartialEq)]
pub struct List {
    items: Vec<Value>,
    size: Size,
}

/// The entries of a dict value with their size.
#[derive(Debug, Clone, PartialEq)]
pub struct Dict {
    entries: BTreeMap<String, Value>,
    size: Size,
}

/// Weight (see [`crate::limits`]) and nesting depth of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Size {
    weight: u64,
    depth: usize,
}

impl List {
    /// The items.
    pub fn items(&self) -> &[Value] {
        &self.items
    }

    /// The items, by value.
    pub fn into_items(self) -> Vec<Value> {
        self.items
    }
}

impl Dict {
    /// The entries, sorted by key.
    pub fn entries(&self) -> &BTreeMap<String, Value> {
        &self.entries
    }
}

impl Value {
    /// A string value.
    pub fn string(text: impl Into<Arc<str>>) -> Value {
        Value::String(text.into())
    }

    /// A list of events (not limited: see [`crate::limits`]).
    pub fn events(events: Vec<SharedEvent>) -> Value {
        Value::Events(Arc::new(events))
    }

    /// A list built by the program; fails past the limits.
    pub(crate) fn list(items: Vec<Value>) -> Result<Value, Failure> {
        let size = combine(items.iter().map(Value::size))?;
        Ok(Value::List(Arc::new(List { items, size })))
    }

    /// A dict built by the program; fails past the limits.
    pub(crate) fn dict(entries: BTreeMap<String, Value>) -> Result<Value, Failure> {
        let size = combine(entries.iter().map(|(key, value)| {
            let size = value.size();
            Size {
                weight: size.weight.saturating_add(string_weight(key)),
                depth: size.depth,
            }
        }))?;
        Ok(Value::Dict(Arc::new(Dict { entries, size })))
    }

    fn size(&self) -> Size {
        match self {
            Value::None | Value::Bool(_) | Value::Number(_) | Value::Function(_) => Size {
                weight: 1,
                depth: 0,
            },
            Value::String(text) => Size {
                weight: string_weight(text),
                depth: 0,
            },
            Value::List(list) => list.size,
            Value::Dict(dict) => dict.size,
            Value::Events(events) => Size {
                weight: events.len() as u64 + 1,
                depth: 1,
            },
        }
    }

    /// The type as named in error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::None => "none",
            Value::Bool(_) => "bool",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::List(_) => "list",
            Value::Dict(_) => "dict",
            Value::Events(_) => "list of events",
            Value::Function(_) => "function",
        }
    }

    /// Whether `==` may compare the two (same type; every list kind is a list).
    pub(crate) fn same_type(&self, other: &Value) -> bool {
        let is_list = |value: &Value| matches!(value, Value::List(_) | Value::Events(_));
        std::mem::discriminant(self) == std::mem::discriminant(other)
            || (is_list(self) && is_list(other))
    }

    /// Structural equality; lists of events equal lists only when both are
    /// empty (a list literal can never hold an event).
    pub(crate) fn equals(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::List(a), Value::List(b)) => {
                Arc::ptr_eq(a, b)
                    || (a.items.len() == b.items.len()
                        && a.items.iter().zip(&b.items).all(|(x, y)| x.equals(y)))
            }
            (Value::Dict(a), Value::Dict(b)) => {
                Arc::ptr_eq(a, b)
                    || (a.entries.len() == b.entries.len()
                        && a.entries
                            .iter()
                            .zip(&b.entries)
                            .all(|((ka, va), (kb, vb))| ka == kb && va.equals(vb)))
            }
            (Value::Events(a), Value::Events(b)) => a == b,
            (Value::Events(events), Value::List(list))
            | (Value::List(list), Value::Events(events)) => {
                events.is_empty() && list.items.is_empty()
            }
            _ => self == other,
        }
    }

    /// The events of an events argument: a list of events or an empty list,
    /// owned when this is the only reference and shared otherwise.
    pub(crate) fn into_event_list(self) -> Result<EventList, Value> {
        match self {
            Value::Events(events) => Ok(match Arc::try_unwrap(events) {
                Ok(events) => EventList::Owned(events),
                Err(shared) => EventList::Shared(shared),
            }),
            Value::List(list) if list.items.is_empty() => Ok(EventList::Owned(Vec::new())),
            other => Err(other),
        }
    }

    /// The events of an events argument, copied only if shared.
    pub(crate) fn into_events(self) -> Result<Vec<SharedEvent>, Value> {
        self.into_event_list().map(EventList::into_owned)
    }

    /// The JSON text of a result (`docs/API.md` §6.4), written straight from the
    /// values: building it as a `serde_json::Value` first cost a 1-day
    /// dashboard query a map per event and per data object, and as many
    /// frees. The text is what [`Value::into_json`] serializes to.
    pub(crate) fn to_json_text(&self) -> Result<String, Failure> {
        if let Some(function) = self.function_inside() {
            return Err(returned_function(function));
        }
        // Every key is a string and nothing fails to serialize.
        serde_json::to_string(&Output(self))
            .map_err(|error| Failure::new(ErrorKind::Type, error.to_string()))
    }

    /// The first function (in JSON order) the value holds; it has no JSON
    /// form.
    fn function_inside(&self) -> Option<Function> {
        match self {
            Value::Function(function) => Some(*function),
            Value::List(list) => list.items.iter().find_map(Value::function_inside),
            Value::Dict(dict) => dict.entries.values().find_map(Value::function_inside),
            _ => None,
        }
    }

    /// The JSON form of a result (`docs/API.md` §6.4): none is `null`, numbers are
    /// floats (NaN and infinities `null`), events are objects. Functions
    /// have no JSON form.
    pub(crate) fn into_json(self) -> Result<Json, Failure> {
        Ok(match self {
            Value::None => Json::Null,
            Value::Bool(value) => Json::Bool(value),
            Value::Number(number) => number_json(number),
            Value::String(text) => Json::String(text.to_string()),
            Value::List(list) => {
                let items = Arc::try_unwrap(list)
                    .map(|list| list.items)
                    .unwrap_or_else(|rc| rc.items.clone());
                Json::Array(
                    items
                        .into_iter()
                        .map(Value::into_json)
                        .collect::<Result<_, _>>()?,
                )
            }
            Value::Dict(dict) => {
                let entries = Arc::try_unwrap(dict)
                    .map(|dict| dict.entries)
                    .unwrap_or_else(|rc| rc.entries.clone());
                let mut map = serde_json::Map::new();
                for (key, value) in entries {
                    map.insert(key, value.into_json()?);
                }
                Json::Object(map)
            }
            Value::Events(events) => {
                let events = Arc::try_unwrap(events).unwrap_or_else(|rc| (*rc).clone());
                Json::Array(events.into_iter().map(event_json).collect())
            }
            Value::Function(function) => return Err(returned_function(function)),
        })
    }
}

fn returned_function(function: Function) -> Failure {
    Failure::new(
        ErrorKind::ReturnedFunction,
        format!(
            "the result contains the function '{}', which cannot be returned; call it instead",
            function.name()
        ),
    )
}

/// A value as the JSON text of [`Value::into_json`]; a function (checked
/// for before) would be `null`.
struct Output<'a>(&'a Value);

impl Serialize for Output<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::None | Value::Function(_) => serializer.serialize_unit(),
            Value::Bool(value) => serializer.serialize_bool(*value),
            // serde_json writes NaN and infinities as `null`, like
            // `number_json`.
            Value::Number(number) => serializer.serialize_f64(*number),
            Value::String(text) => serializer.serialize_str(text),
            Value::List(list) => serializer.collect_seq(list.items.iter().map(Output)),
            Value::Dict(dict) => serializer.collect_map(
                dict.entries
                    .iter()
                    .map(|(key, value)| (key.as_str(), Output(value))),
            ),
            Value::Events(events) => serializer.collect_seq(events.iter().map(EventOutput)),
        }
    }
}

/// An event as the JSON text of [`event_json`]: its keys in the sorted
/// order a `serde_json::Map` writes them in.
struct EventOutput<'a>(&'a SharedEvent);

impl Serialize for EventOutput<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let event = self.0;
        let mut map = serializer.serialize_map(Some(4))?;
        // `EventData` keeps its entries sorted by key, as the map does.
        map.serialize_entry("data", &*event.data)?;
        // Seconds as a float and RFC 3339 text, as `event_json` writes
        // them (aw-models' own `Serialize`).
        map.serialize_entry("duration", &event.duration)?;
        map.serialize_entry("id", &event.id)?;
        map.serialize_entry("timestamp", &event.timestamp)?;
        map.end()
    }
}

/// Lists at least this long are freed on the freeing thread: handing one
/// over costs a few microseconds, freeing it milliseconds.
const LONG_LIST: usize = 20_000;

/// An events argument: the vector itself when nothing else holds it, so a
/// transform can work in place, or a shared reference when a variable
/// still holds it, so transforms that only read or keep a subset copy no
/// more than they return.
#[derive(Debug)]
pub(crate) enum EventList {
    Owned(Vec<SharedEvent>),
    Shared(Arc<Vec<SharedEvent>>),
}

impl EventList {
    /// The events, to read.
    pub fn as_slice(&self) -> &[SharedEvent] {
        match self {
            EventList::Owned(events) => events,
            EventList::Shared(events) => events,
        }
    }

    /// The events, to own (copied if shared).
    pub fn into_owned(self) -> Vec<SharedEvent> {
        match self {
            EventList::Owned(events) => events,
            EventList::Shared(events) => Arc::unwrap_or_clone(events),
        }
    }

    /// Lets go of the events, freeing a long list of them on the freeing
    /// thread (`crate::dropper`) when this was its last holder.
    pub fn release(self) {
        let events = match self {
            EventList::Owned(events) => events,
            EventList::Shared(events) => match Arc::try_unwrap(events) {
                Ok(events) => events,
                Err(_) => return,
            },
        };
        if events.len() >= LONG_LIST {
            crate::dropper::later(events);
        }
    }

    /// The events `keep` accepts, in order; only those are copied (and
    /// charged to `budget`) when the list is shared.
    pub fn keep(
        self,
        budget: &mut Budget,
        mut keep: impl FnMut(&SharedEvent) -> Result<bool, Failure>,
    ) -> Result<Vec<SharedEvent>, Failure> {
        match self {
            EventList::Owned(mut events) => {
                let mut failure = None;
                events.retain(|event| {
                    if failure.is_some() {
                        return false;
                    }
                    keep(event).unwrap_or_else(|error| {
                        failure = Some(error);
                        false
                    })
                });
                failure.map_or(Ok(events), Err)
            }
            EventList::Shared(events) => {
                let mut kept = Vec::new();
                for event in events.iter() {
                    if keep(event)? {
                        kept.push(event.clone());
                    }
                }
                budget.charge(kept.len())?;
                Ok(kept)
            }
        }
    }
}

/// A number as JSON: always a float; NaN and infinities become `null`.
pub(crate) fn number_json(number: f64) -> Json {
    serde_json::Number::from_f64(number).map_or(Json::Null, Json::Number)
}

/// `{"id", "timestamp", "duration", "data"}` as aw-models writes an event.
/// Only what `RETURN` holds is turned into JSON, and the data is copied
/// only if other events still share it.
pub(crate) fn event_json(event: SharedEvent) -> Json {
    let mut map = serde_json::Map::new();
    map.insert("id".into(), event.id.map_or(Json::Null, Json::from));
    map.insert(
        "timestamp".into(),
        Json::String(event.timestamp.to_string()),
    );
    map.insert("duration".into(), number_json(event.duration.as_secs_f64()));
    map.insert(
        "data".into(),
        Json::Object(std::sync::Arc::unwrap_or_clone(event.data).into_map()),
    );
    Json::Object(map)
}

fn string_weight(text: &str) -> u64 {
    1 + text.len() as u64 / 8
}

fn combine(sizes: impl Iterator<Item = Size>) -> Result<Size, Failure> {
    let mut total = Size {
        weight: 1,
        depth: 1,
    };
    for size in sizes {
        total.weight = total.weight.saturating_add(size.weight);
        total.depth = total.depth.max(size.depth + 1);
    }
    if total.depth > MAX_DEPTH {
        return Err(Failure::new(
            ErrorKind::TooDeep,
            format!("value nested deeper than {MAX_DEPTH} levels"),
        ));
    }
    if total.weight > MAX_WEIGHT {
        return Err(too_large());
    }
    Ok(total)
}

pub(crate) fn too_large() -> Failure {
    Failure::new(
        ErrorKind::TooLarge,
        format!("value too large (limit {MAX_WEIGHT} units in all; see the query limits)"),
    )
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use aw_models::{Duration, Timestamp};
    use serde_json::json;

    use super::*;

    fn event(id: Option<i64>, nanos: i64, seconds: f64, data: Json) -> SharedEvent {
        let Json::Object(map) = data else {
            panic!("event data is an object")
        };
        let mut event = SharedEvent::new(
            Timestamp::from_nanos(nanos),
            Duration::from_secs_f64(seconds).unwrap(),
            map,
        );
        event.id = id;
        event
    }

    #[test]
    fn a_released_long_list_is_freed_unless_still_held() {
        let first = event(Some(1), 0, 1.0, json!({"app": "a"}));
        let data = std::sync::Arc::clone(&first.data);
        let long = vec![first; LONG_LIST];
        // Still held by a variable: releasing one reference frees nothing.
        let held = Arc::new(long);
        EventList::Shared(Arc::clone(&held)).release();
        assert_eq!(std::sync::Arc::strong_count(&data), LONG_LIST + 1);
        // The last holder: the list is freed, here or on the freeing thread.
        EventList::Shared(held).release();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::sync::Arc::strong_count(&data) > 1 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(std::sync::Arc::strong_count(&data), 1);
    }

    #[test]
    fn json_text_is_what_the_json_values_serialize_to() {
        let events = Value::events(vec![
            event(
                Some(7),
                1_622_505_600_123_456_789,
                12.5,
                json!({"title": "a \"quoted\" \\ title\n", "app": "ä", "$category": ["Work", "Rust"],
                       "nested": {"z": 1, "a": [1.5, null, true]}, "n": -3, "big": 1e300}),
            ),
            event(None, -86_400_000_000_000, 0.0, json!({})),
            event(Some(-1), 0, 1e-9, json!({"k": false})),
        ]);
        let mut dict = BTreeMap::new();
        dict.insert("events".to_string(), events);
        dict.insert("none".to_string(), Value::None);
        dict.insert("b".to_string(), Value::Bool(true));
        dict.insert("text".to_string(), Value::string("tab\t\u{1}é"));
        let numbers = [
            0.0,
            -0.0,
            3.0,
            -2.5,
            1e21,
            123_456_789.123,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ]
        .map(Value::Number);
        dict.insert(
            "numbers".to_string(),
            Value::list(numbers.to_vec()).unwrap(),
        );
        dict.insert("empty".to_string(), Value::list(Vec::new()).unwrap());
        dict.insert("no events".to_string(), Value::events(Vec::new()));
        let inner = Value::dict(BTreeMap::from([("x".to_string(), Value::Number(1.0))])).unwrap();
        dict.insert("Ünïcode key".to_string(), Value::list(vec![inner]).unwrap());
        let value = Value::dict(dict).unwrap();
        let expected = serde_json::to_string(&value.clone().into_json().unwrap()).unwrap();
        assert_eq!(value.to_json_text().unwrap(), expected);
        for scalar in [
            Value::None,
            Value::Bool(false),
            Value::Number(0.1),
            Value::string(""),
        ] {
            let expected = serde_json::to_string(&scalar.clone().into_json().unwrap()).unwrap();
            assert_eq!(scalar.to_json_text().unwrap(), expected);
        }
    }

    #[test]
    fn a_function_anywhere_in_the_result_is_the_same_error_as_before() {
        let function = Value::Function(crate::builtins::all().next().unwrap().0);
        let list = Value::list(vec![Value::Number(1.0), function]).unwrap();
        let value = Value::dict(BTreeMap::from([
            ("a".to_string(), Value::None),
            ("b".to_string(), list),
        ]))
        .unwrap();
        let text = value.to_json_text().unwrap_err();
        let json = value.into_json().unwrap_err();
        assert_eq!(text.kind, ErrorKind::ReturnedFunction);
        assert_eq!(text.message, json.message);
    }
}
