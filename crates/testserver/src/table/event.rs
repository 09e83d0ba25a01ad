//! The Event printer (`printEvent`) for both Event APIs: `events.k8s.io/v1` renamed the fields
//! (`regarding`, `note`, `deprecated*`) that the real server converts back before printing.

use serde_json::{Value, json};

use super::duration::age;
use super::fields::{int, text};

/// Where the fields the event printer reads live in each Event API.
pub(super) struct EventFields {
    first: &'static str,
    last: &'static str,
    count: &'static str,
    object: &'static str,
    message: &'static str,
    source: &'static str,
}

impl EventFields {
    pub(super) const V1: EventFields = EventFields {
        first: "/firstTimestamp",
        last: "/lastTimestamp",
        count: "/count",
        object: "/involvedObject",
        message: "/message",
        source: "/source",
    };
    pub(super) const EVENTS_V1: EventFields = EventFields {
        first: "/deprecatedFirstTimestamp",
        last: "/deprecatedLastTimestamp",
        count: "/deprecatedCount",
        object: "/regarding",
        message: "/note",
        source: "/deprecatedSource",
    };
}

pub(super) fn event(f: &EventFields, o: &Value, now: jiff::Timestamp) -> Vec<Value> {
    let stamp = |pointer: &str| o.pointer(pointer).and_then(Value::as_str);
    let first = match stamp(f.first) {
        Some(t) => age(Some(t), now),
        None => age(stamp("/eventTime"), now),
    };
    let mut last = match stamp(f.last) {
        Some(t) => age(Some(t), now),
        None => first.clone(),
    };
    let mut count = int(o, f.count);
    if let Some(series) = o.get("series").filter(|s| s.is_object()) {
        last = age(series.get("lastObservedTime").and_then(Value::as_str), now);
        count = int(series, "/count");
    } else if count == 0 {
        count = 1;
    }
    let involved = o.pointer(f.object).unwrap_or(&Value::Null);
    let kind = text(involved, "/kind").to_lowercase();
    let target = match text(involved, "/name") {
        "" => kind,
        name => format!("{kind}/{name}"),
    };
    let component = first_non_empty(
        text(o, &format!("{}/component", f.source)),
        text(o, "/reportingController"),
    );
    let instance = first_non_empty(
        text(o, &format!("{}/host", f.source)),
        text(o, "/reportingInstance"),
    );
    let source = if instance.is_empty() {
        component.to_string()
    } else {
        format!("{component}, {instance}")
    };
    vec![
        json!(last),
        json!(text(o, "/type")),
        json!(text(o, "/reason")),
        json!(target),
        json!(text(involved, "/fieldPath")),
        json!(source),
        json!(text(o, f.message).trim()),
        json!(first),
        json!(count),
        json!(text(o, "/metadata/name")),
    ]
}

fn first_non_empty<'a>(a: &'a str, b: &'a str) -> &'a str {
    if a.is_empty() { b } else { a }
}
