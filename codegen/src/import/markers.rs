//! The named markers of one schema node (bounds, lengths, `pattern`, string `enum` and `format`,
//! scalar `default`s, list types and map keys, CEL rules), and the JSON merge patch that carries
//! whatever they do not. Part of `shape.rs`'s step; see its module docs for why the split.
//!
//! A named marker is written only where the generator gives the same JSON back: an `f64` bound on
//! an integer field beyond 2^53, an integer bound on a `number` field (written `1.0`), a fractional
//! default on a `number` field (a `serde_json::Number` has no const fraction), list map
//! keys that are not required fields of the item, a `,` inside an enum value... each stays in
//! the patch instead, exact.

use serde_json::{Map, Value};

use super::ir::{StructIr, Ty, text};

/// Named markers for the keywords they exist for; each one used is removed from `actual`.
pub(super) fn named_markers(
    structs: &[StructIr],
    ty: &Ty,
    node: &Value,
    markers: &mut Vec<String>,
    actual: &mut Value,
) {
    let Some(object) = actual.as_object_mut() else {
        return;
    };
    object.remove("description");
    let scalar = |key: &str| {
        node.get(key)
            .filter(|v| v.is_number() || v.is_string())
            .cloned()
    };
    let string = matches!(ty, Ty::String);
    let list = matches!(ty, Ty::Vec(_));
    let mut take = |key: &str, marker: &str, applies: bool, object: &mut Map<String, Value>| {
        if !applies {
            return;
        }
        if let Some(value) = scalar(key) {
            let shown = match &value {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            markers.push(format!("+kubegen:validation:{marker}={shown}"));
            object.remove(key);
        }
    };
    take(
        "minimum",
        "Minimum",
        bound_fits(ty, node.get("minimum")),
        object,
    );
    take(
        "maximum",
        "Maximum",
        bound_fits(ty, node.get("maximum")),
        object,
    );
    take("minLength", "MinLength", string, object);
    take("maxLength", "MaxLength", string, object);
    take(
        "pattern",
        "Pattern",
        string && !text(node, "pattern").contains('\n'),
        object,
    );
    take("minItems", "MinItems", list, object);
    take("maxItems", "MaxItems", list, object);
    for (key, marker) in [
        ("exclusiveMinimum", "ExclusiveMinimum"),
        ("exclusiveMaximum", "ExclusiveMaximum"),
    ] {
        let bound = if key == "exclusiveMinimum" {
            "minimum"
        } else {
            "maximum"
        };
        if node.get(key) == Some(&Value::Bool(true)) && bound_fits(ty, node.get(bound)) {
            markers.push(format!("+kubegen:validation:{marker}=true"));
            object.remove(key);
        }
    }
    if string {
        string_markers(node, markers, object);
    }
    if let Some(default) = node.get("default")
        && default_fits(ty, default)
    {
        markers.push(format!("+kubegen:default={default}"));
        object.remove("default");
    }
    list_markers(structs, ty, node, markers, object);
    rules(node, "", markers, actual);
}

/// `Format` for the formats the marker knows, `Enum` for plain string values (the marker splits
/// at `,` and `;`, so a value holding one stays in the patch).
fn string_markers(node: &Value, markers: &mut Vec<String>, object: &mut Map<String, Value>) {
    {
        let format = text(node, "format");
        if crate::validation::is_known_format(&format) {
            markers.push(format!("+kubegen:validation:Format={format}"));
            object.remove("format");
        }
        if let Some(values) = node.get("enum").and_then(Value::as_array) {
            let texts: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
            let plain = texts.len() == values.len()
                && texts
                    .iter()
                    .all(|v| !v.is_empty() && !v.contains([',', ';']) && v.trim() == *v);
            if plain {
                markers.push(format!("+kubegen:validation:Enum={}", texts.join(";")));
                object.remove("enum");
            }
        }
    }
}

/// `Minimum`/`Maximum` hold an `f64` that the generator writes as an integer on integer fields:
/// a named marker only where that gives the same JSON number back (an integer within 2^53 on an
/// integer field, a fractional number on a `number` field); others stay in the patch, exact.
fn bound_fits(ty: &Ty, value: Option<&Value>) -> bool {
    const EXACT: i64 = 1 << 53;
    match (ty, value) {
        (Ty::I32 | Ty::I64, Some(value)) => value.as_i64().is_some_and(|v| v.abs() <= EXACT),
        (Ty::Number, Some(value)) => value.as_f64().is_some_and(|v| v.fract() != 0.0),
        _ => false,
    }
}

/// `default` as a named marker only where the generator's Rust `Default` can hold it.
fn default_fits(ty: &Ty, value: &Value) -> bool {
    match ty {
        Ty::String => value.is_string(),
        Ty::Bool => value.is_boolean(),
        Ty::I32 => value.as_i64().is_some_and(|v| i32::try_from(v).is_ok()),
        Ty::I64 => value.is_i64(),
        Ty::Number => value.is_i64(),
        _ => false,
    }
}

/// `x-kubernetes-list-type` and `-list-map-keys`, when the generator's checker accepts them:
/// map keys must be required fields of the item struct.
fn list_markers(
    structs: &[StructIr],
    ty: &Ty,
    node: &Value,
    markers: &mut Vec<String>,
    object: &mut Map<String, Value>,
) {
    let Ty::Vec(inner) = ty else {
        return;
    };
    let list_type = text(node, "x-kubernetes-list-type");
    let keys: Vec<&str> = node
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .map(|keys| keys.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let keys_ok = match inner.as_ref() {
        Ty::Struct(index) => keys.iter().all(|key| {
            structs[*index].fields.iter().any(|f| {
                f.json == *key
                    && (f.required || f.markers.iter().any(|m| m.starts_with("+kubegen:default=")))
            })
        }),
        _ => keys.is_empty(),
    };
    let scalar_items = !matches!(
        inner.as_ref(),
        Ty::Struct(_) | Ty::Vec(_) | Ty::Map(_) | Ty::Json
    );
    let fits = match list_type.as_str() {
        "atomic" => keys.is_empty(),
        "set" => scalar_items && keys.is_empty(),
        "map" => !keys.is_empty() && keys_ok,
        _ => false,
    };
    if fits {
        markers.push(format!("+kubegen:listType={list_type}"));
        object.remove("x-kubernetes-list-type");
        if !keys.is_empty() {
            markers.push(format!("+kubegen:listMapKeys={}", keys.join(",")));
            object.remove("x-kubernetes-list-map-keys");
        }
    }
}

/// `x-kubernetes-validations` as `XValidation` markers, when every entry has only keys the
/// marker knows (else the whole list stays in the patch, order kept).
pub(super) fn rules(node: &Value, prefix: &str, markers: &mut Vec<String>, actual: &mut Value) {
    let Some(list) = node
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
    else {
        return;
    };
    const KEYS: [&str; 6] = [
        "rule",
        "message",
        "messageExpression",
        "reason",
        "fieldPath",
        "optionalOldSelf",
    ];
    let plain = list.iter().all(|rule| {
        rule.as_object().is_some_and(|entry| {
            entry.get("rule").is_some_and(Value::is_string)
                && entry.iter().all(|(key, value)| {
                    KEYS.contains(&key.as_str())
                        && (value.is_string() || (key == "optionalOldSelf" && value.is_boolean()))
                })
        })
    });
    if !plain {
        return;
    }
    for rule in list {
        let mut parts = Vec::new();
        for key in KEYS {
            match rule.get(key) {
                Some(Value::String(value)) => {
                    parts.push(format!("{key}={}", Value::from(value.as_str())))
                }
                Some(Value::Bool(flag)) => parts.push(format!("{key}={flag}")),
                _ => {}
            }
        }
        markers.push(format!(
            "+kubegen:{prefix}validation:XValidation:{}",
            parts.join(",")
        ));
    }
    if let Some(object) = actual.as_object_mut() {
        object.remove("x-kubernetes-validations");
    }
}

/// The JSON merge patch (RFC 7386) that turns `expected` into `actual`; `None` when equal.
pub(crate) fn merge_diff(expected: &Value, actual: &Value) -> Option<Value> {
    if expected == actual {
        return None;
    }
    let (Value::Object(old), Value::Object(new)) = (expected, actual) else {
        return Some(actual.clone());
    };
    let mut patch = Map::new();
    for (key, value) in new {
        match old.get(key) {
            Some(previous) => {
                if let Some(inner) = merge_diff(previous, value) {
                    patch.insert(key.clone(), inner);
                }
            }
            None => {
                patch.insert(key.clone(), value.clone());
            }
        }
    }
    for key in old.keys() {
        if !new.contains_key(key) {
            patch.insert(key.clone(), Value::Null);
        }
    }
    Some(Value::Object(patch))
}
