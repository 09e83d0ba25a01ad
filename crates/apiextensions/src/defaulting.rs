//! Structural defaulting (apiextensions `pkg/apiserver/schema/defaulting/algorithm.go` and
//! `prunenulls.go`): a property the object leaves out, or sets to `null` without being
//! `nullable`, takes the schema's `default`; a non-nullable `null` without a default is dropped.
//! Defaults are applied top-down, so a defaulted object gets the defaults of its own fields.
//!
//! The real server defaults when it decodes a request body and when it reads from etcd, so an
//! object stored before a default was added shows it when read.

use serde_json::Value;

use crate::node::Node;

/// Fills in the defaults `schema` declares under `value`, and drops non-nullable nulls that have
/// none.
pub(crate) fn apply(value: &mut Value, schema: Node<'_>) {
    match value {
        Value::Object(object) => {
            for (key, property) in schema.properties() {
                let Some(default) = property.default() else {
                    continue;
                };
                let missing = object
                    .get(key)
                    .is_none_or(|v| v.is_null() && !property.nullable());
                if missing {
                    object.insert(key.clone(), default.clone());
                }
            }
            object.retain(|key, v| {
                !(v.is_null()
                    && schema
                        .field(key)
                        .is_some_and(|s| !s.nullable() && s.default().is_none()))
            });
            for (key, v) in object.iter_mut() {
                if let Some(field) = schema.field(key) {
                    apply(v, field);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.items() {
                for v in items {
                    apply(v, item);
                }
            }
        }
        _ => {}
    }
}
