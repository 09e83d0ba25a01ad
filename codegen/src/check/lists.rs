//! List-type markers (`+kubegen:listType=`, `+kubegen:listMapKeys=`): the rules the API server
//! applies to `x-kubernetes-list-type` and `x-kubernetes-list-map-keys` when it accepts a CRD,
//! checked here so the problem points at the field instead of surfacing as a rejected manifest.
//!
//! A `map` list needs keys, its items must be objects, and every key must be a property of the
//! item that is required or has a default; a `set` (and `UniqueItems`, emitted as a set) holds
//! scalars; keys need `listType=map`.

use super::lookup::{find, find_enum};
use crate::diag::Diagnostics;
use crate::model::{Field, FieldType, Package};

/// Checks the list-type markers of one field.
pub(super) fn check(package: &Package, field: &Field, diags: &mut Diagnostics) {
    let markers = &field.markers;
    let mut error = |message: String, hint: &str| diags.error(&field.location, message, hint);
    // `UniqueItems` is emitted as `x-kubernetes-list-type: set`, so it needs scalar items too.
    if markers.unique_items
        && let FieldType::Vec(item) = field.ty.without_option()
        && !is_scalar(package, item)
    {
        error(
            format!(
                "`+kubegen:validation:UniqueItems` on `{}`, whose items are not scalars",
                field.name
            ),
            "the API server checks uniqueness of strings, numbers, booleans or enums only; \
             use `listType=map` for objects",
        );
    }
    if markers.list_type.is_none() && markers.list_map_keys.is_empty() {
        return;
    }
    let FieldType::Vec(item) = field.ty.without_option() else {
        error(
            format!(
                "`+kubegen:listType`/`listMapKeys` on field `{}`, which is not a list",
                field.name
            ),
            "list types only apply to `Vec<T>` fields",
        );
        return;
    };
    match (
        markers.list_type.as_deref(),
        markers.list_map_keys.is_empty(),
    ) {
        (Some("map"), true) => error(
            format!("`+kubegen:listType=map` on `{}` without keys", field.name),
            "add `+kubegen:listMapKeys=<field>` naming the item fields that identify an item",
        ),
        (Some("map"), false) => {
            for key in &markers.list_map_keys {
                if let Some(problem) = key_problem(package, item, key) {
                    error(
                        format!("list map key `{key}` of `{}` {problem}", field.name),
                        "a key is a required (or defaulted) field of the list's item type",
                    );
                }
            }
        }
        (_, false) => error(
            format!(
                "`+kubegen:listMapKeys` on `{}` needs `+kubegen:listType=map`",
                field.name
            ),
            "add `+kubegen:listType=map`",
        ),
        (Some("set"), true) if !is_scalar(package, item) => error(
            format!(
                "`+kubegen:listType=set` on `{}`, whose items are not scalars",
                field.name
            ),
            "a set holds strings, numbers, booleans or enums; use `listType=map` for objects",
        ),
        _ => {}
    }
}

fn is_scalar(package: &Package, item: &FieldType) -> bool {
    match item {
        FieldType::String
        | FieldType::Bool
        | FieldType::I32
        | FieldType::I64
        | FieldType::F64
        | FieldType::Number => true,
        FieldType::Named(name) => find_enum(package, name).is_some(),
        _ => false,
    }
}

/// Why `key` cannot identify items of type `item`, if it cannot.
fn key_problem(package: &Package, item: &FieldType, key: &str) -> Option<&'static str> {
    match item {
        FieldType::Named(name) => {
            let Some(def) = find(package, name) else {
                return Some("is not usable: the items are not objects");
            };
            match def.fields.iter().find(|field| field.json_name == key) {
                None => Some("is not a field of the item type"),
                Some(field) if !field.is_required() && field.markers.default.is_none() => {
                    Some("is optional and has no default")
                }
                Some(_) => None,
            }
        }
        FieldType::WellKnown(well_known) => {
            let schema = well_known.schema();
            let property = &schema["properties"][key];
            let required = schema["required"]
                .as_sequence()
                .is_some_and(|required| required.iter().any(|name| name.as_str() == Some(key)));
            if property.is_null() {
                Some("is not a field of the item type")
            } else if !required && property["default"].is_null() {
                Some("is optional and has no default")
            } else {
                None
            }
        }
        _ => Some("is not usable: the items are not objects"),
    }
}

#[cfg(test)]
#[path = "lists_tests.rs"]
mod tests;
