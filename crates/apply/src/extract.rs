//! [`extract`]: the apply configuration holding exactly the fields one field manager owns through
//! apply, read from the object's `metadata.managedFields`. Mirrors client-go's
//! `managedfields.ExtractInto` (behind the generated `Extract<Kind>` / `Extract<Kind>Status`);
//! the typed wrapper is `kubegen_client::extract`.
//!
//! # Why
//! A controller that applies part of an object (say `spec.replicas`) must send, on every apply,
//! *all* the fields it wants to keep owning: a field it leaves out is released (and removed when
//! nobody else owns it). `extract` gives it back what it applied last time, to modify and apply
//! again, instead of a full object whose other fields would be taken over.
//!
//! # Guarantees
//! - Only the entries of the manager with operation `Apply` (and the given subresource) count,
//!   as in client-go: fields the manager wrote with `Update` are not part of its apply intent.
//!   Other entries are not read, so one malformed entry of another manager does not fail it.
//! - `apiVersion`, `kind`, `metadata.name` and `metadata.namespace` are copied from the object,
//!   so the result can be applied as is; applying it again with the same manager changes nothing.

use serde_json::{Map, Value};

use crate::error::Error;
use kubegen_fieldpath::FieldSet;

/// The fields of `object` (a whole object's JSON) that `field_manager` owns through apply on
/// `subresource` (`Some("status")`, or the main resource with `None`), with the object's identity.
///
/// # Errors
/// [`Error::InvalidManagedFields`] when one of the manager's `Apply` entries has a malformed
/// `fieldsV1` (the message is the field set's: `unknown path element "x:data"`).
pub fn extract(
    object: &Value,
    field_manager: &str,
    subresource: Option<&str>,
) -> Result<Value, Error> {
    let owned = owned_fields(object, field_manager, subresource)?;
    let mut config = match owned.extract(object) {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    for key in ["apiVersion", "kind"] {
        if let Some(value) = object.get(key) {
            config.insert(key.into(), value.clone());
        }
    }
    let identity = config
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(identity) = identity {
        for key in ["name", "namespace"] {
            if let Some(value) = object.get("metadata").and_then(|m| m.get(key)) {
                identity.insert(key.into(), value.clone());
            }
        }
    }
    Ok(Value::Object(config))
}

/// The union of the `Apply` entries of `manager` on `subresource` (the server keeps one).
fn owned_fields(
    object: &Value,
    manager: &str,
    subresource: Option<&str>,
) -> Result<FieldSet, Error> {
    let entries = object
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|entry| {
            text(entry, "manager") == Some(manager)
                && text(entry, "operation") == Some("Apply")
                && text(entry, "subresource").filter(|s| !s.is_empty()) == subresource
        });
    let mut owned = FieldSet::default();
    let sets = entries.filter_map(|entry| entry.get("fieldsV1").filter(|f| !f.is_null()));
    for fields in sets {
        let set = FieldSet::from_fields_v1(fields)
            .map_err(|e| Error::InvalidManagedFields(e.to_string()))?;
        owned = owned.union(&set);
    }
    Ok(owned)
}

fn text<'v>(entry: &'v Value, key: &str) -> Option<&'v str> {
    entry.get(key).and_then(Value::as_str)
}

#[cfg(test)]
#[path = "extract_tests.rs"]
mod tests;
