//! `x-kubernetes-list-type` invariants (apiextensions `pkg/apiserver/schema/listtype/validation.go`):
//! a `set` holds each value once, a `map` each combination of its `x-kubernetes-list-map-keys`
//! once; every later duplicate is a `Duplicate value` at its index. The same identities
//! correlate an element with its old version (for ratcheting and `oldSelf`).

use serde_json::{Map, Value};

use crate::field::{ErrorType, FieldError};
use crate::node::{Node, child, index};

/// Checks every set and map list under `value`.
pub(crate) fn validate(value: &Value, schema: Node<'_>, path: &str, errors: &mut Vec<FieldError>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                if let Some(field) = schema.field(key) {
                    validate(v, field, &child(path, key), errors);
                }
            }
        }
        Value::Array(items) => {
            duplicates(items, schema, path, errors);
            if let Some(item) = schema.items() {
                for (i, v) in items.iter().enumerate() {
                    validate(v, item, &index(path, i), errors);
                }
            }
        }
        _ => {}
    }
}

fn duplicates(items: &[Value], schema: Node<'_>, path: &str, errors: &mut Vec<FieldError>) {
    let identity: fn(Node<'_>, &Value) -> Option<Value> = match schema.list_type() {
        Some("set") => |_, v| Some(v.clone()),
        Some("map") => map_key,
        _ => return,
    };
    let mut seen: Vec<Value> = Vec::new();
    for (i, v) in items.iter().enumerate() {
        let Some(id) = identity(schema, v) else {
            continue;
        };
        if seen.contains(&id) {
            errors.push(FieldError::shown(
                ErrorType::Duplicate,
                &index(path, i),
                &id,
                String::new(),
            ));
        } else {
            seen.push(id);
        }
    }
}

/// The key fields of a `map` list element (defaults filling in missing ones).
fn map_key(schema: Node<'_>, element: &Value) -> Option<Value> {
    let object = element.as_object()?;
    let item = schema.items();
    let mut key = Map::new();
    for name in schema.map_keys() {
        let value = object
            .get(name)
            .or_else(|| item.and_then(|i| i.property(name)).and_then(Node::default))?;
        key.insert(name.to_string(), value.clone());
    }
    Some(Value::Object(key))
}

/// The element of `old` (a list under `schema`) that `element` is a new version of: the same
/// value in a `set`, the same keys in a `map`; none for other lists.
pub(crate) fn correlate<'o>(
    schema: Node<'_>,
    old: &'o [Value],
    element: &Value,
) -> Option<&'o Value> {
    match schema.list_type() {
        Some("set") => old.iter().find(|o| *o == element),
        Some("map") => {
            let key = map_key(schema, element)?;
            old.iter()
                .find(|o| map_key(schema, o).as_ref() == Some(&key))
        }
        _ => None,
    }
}
