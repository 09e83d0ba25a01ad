//! [`FieldSet::extract`]: the part of an object a field set covers (structured-merge-diff
//! `typed/remove.go`, `ExtractItems`), the core of client-go's `Extract<Kind>`: an apply
//! configuration holding exactly the fields one manager owns.
//!
//! # How elements select
//! - `f:<name>` selects the field (or map entry) `name` of an object.
//! - `k:{"name":"a"}` selects the items of a list whose fields equal every key given (the list's
//!   merge keys, as `x-kubernetes-list-map-keys` names them).
//! - `v:<json>` selects the items of a set list equal to the value; `i:<n>` the item at index n.
//!
//! A leaf member (an owned field without owned children) keeps its whole value: the manager owns
//! it atomically. A member with children is rebuilt from the children it owns, so a manager that
//! owns `spec.replicas` only gets `{"spec": {"replicas": 3}}`, never the rest of `spec`. Paths the
//! object no longer has are skipped; list items stay in the object's order.

use serde_json::{Map, Value};

use crate::FieldSet;

impl FieldSet {
    /// The part of `value` (an object's JSON) that this set covers, `Value::Object` of nothing when
    /// it covers nothing.
    pub fn extract(&self, value: &Value) -> Value {
        self.extract_node(value)
            .unwrap_or_else(|| Value::Object(Map::new()))
    }

    /// The covered part of `value`, `None` when nothing under it is covered.
    fn extract_node(&self, value: &Value) -> Option<Value> {
        if self.is_member() && self.children().next().is_none() {
            return Some(value.clone());
        }
        let extracted = match value {
            Value::Object(fields) => self.extract_fields(fields),
            Value::Array(items) => self.extract_items(items),
            _ => None,
        };
        match extracted {
            Some(value) => Some(value),
            None if self.is_member() => Some(empty_like(value)),
            None => None,
        }
    }

    fn extract_fields(&self, fields: &Map<String, Value>) -> Option<Value> {
        let mut out = Map::new();
        for (element, child) in self.children() {
            let Some(name) = element.strip_prefix("f:") else {
                continue;
            };
            if let Some(value) = fields.get(name).and_then(|v| child.extract_node(v)) {
                out.insert(name.to_owned(), value);
            }
        }
        (!out.is_empty()).then_some(Value::Object(out))
    }

    fn extract_items(&self, items: &[Value]) -> Option<Value> {
        let selectors: Vec<(Selector, &FieldSet)> = self
            .children()
            .filter_map(|(element, child)| Selector::parse(element).map(|s| (s, child)))
            .collect();
        let out: Vec<Value> = items
            .iter()
            .enumerate()
            .filter_map(|(index, item)| {
                let (_, child) = selectors.iter().find(|(s, _)| s.selects(index, item))?;
                child.extract_node(item)
            })
            .collect();
        (!out.is_empty()).then_some(Value::Array(out))
    }
}

/// An empty object or list where `value` is one; the value itself otherwise.
fn empty_like(value: &Value) -> Value {
    match value {
        Value::Object(_) => Value::Object(Map::new()),
        Value::Array(_) => Value::Array(Vec::new()),
        other => other.clone(),
    }
}

/// A decoded list element of a path.
enum Selector {
    /// `k:{...}`: the key fields and their values.
    Keys(Map<String, Value>),
    /// `v:<json>`.
    Value(Value),
    /// `i:<n>`.
    Index(usize),
}

impl Selector {
    /// `None` for `f:` elements and undecodable ones (which then select nothing).
    fn parse(element: &str) -> Option<Selector> {
        let (kind, body) = element.split_at_checked(2)?;
        match kind {
            "k:" => serde_json::from_str(body).ok().map(Selector::Keys),
            "v:" => serde_json::from_str(body).ok().map(Selector::Value),
            "i:" => body.parse().ok().map(Selector::Index),
            _ => None,
        }
    }

    fn selects(&self, index: usize, item: &Value) -> bool {
        match self {
            Selector::Keys(keys) => keys.iter().all(|(key, want)| item.get(key) == Some(want)),
            Selector::Value(want) => item == want,
            Selector::Index(want) => *want == index,
        }
    }
}

#[cfg(test)]
#[path = "extract_tests.rs"]
mod tests;
