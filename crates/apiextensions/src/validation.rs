//! OpenAPI value validation of a custom resource: kube-openapi's `validate.SchemaValidator` as
//! apiextensions uses it (`pkg/apiserver/validation/validation.go`, whose
//! `kubeOpenAPIResultToFieldErrors` turns kube-openapi's errors into `field.Error`s: enum →
//! NotSupported, maxLength → TooLong, maxItems/maxProperties → TooMany, wrong type or format →
//! TypeInvalid, required → Required, the rest Invalid with kube-openapi's sentence).
//!
//! # Ratcheting
//! On update, a value equal to the old object's value at the same place is not validated again
//! (v1.36's `CRDValidationRatcheting`, GA): an object stored under an older schema can still be
//! updated elsewhere. Values are correlated through object fields, map keys and the elements of
//! `set` and `map` lists.
//!
//! # Differences from the real server
//! kube-openapi walks properties in Go map order, so the order of several errors varies there
//! from request to request; here properties are checked in name order.

use serde_json::{Number, Value};

use crate::field::{BadValue, ErrorType, FieldError, number, quote};
use crate::formats;
use crate::node::{Node, child, index};

/// Validates `value` at `path` against `schema`; `old` is the correlated old value on update.
pub(crate) fn validate(
    value: &Value,
    old: Option<&Value>,
    schema: Node<'_>,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    if old == Some(value) {
        return;
    }
    if value.is_null() && (schema.nullable() || schema.0.is_null()) {
        return;
    }
    if schema.int_or_string() {
        if !(value.is_string() || value.as_i64().is_some()) {
            int_or_string_type(value, path, errors);
            return;
        }
    } else if !type_matches(value, schema, path, errors) {
        return;
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        let supported: Vec<String> = allowed
            .iter()
            .map(|v| match v {
                Value::String(s) => quote(s),
                other => quote(&other.to_string()),
            })
            .collect();
        let detail = format!("supported values: {}", supported.join(", "));
        errors.push(FieldError::shown(
            ErrorType::NotSupported,
            path,
            value,
            detail,
        ));
    }
    match value {
        Value::Object(map) => object(map, old, schema, path, errors),
        Value::Array(items) => array(items, old, schema, path, errors),
        Value::String(s) => string(s, schema, path, errors),
        Value::Number(n) => numeric(n, value, schema, path, errors),
        _ => {}
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        combined(key, value, schema, path, errors);
    }
    negated(value, schema, path, errors);
}

/// The JSON type name kube-openapi reports.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_error(value: &Value, wanted: &str, path: &str) -> FieldError {
    let actual = Value::String(type_name(value).into());
    let detail = format!(
        "{path} in body must be of type {wanted}: {}",
        quote(type_name(value))
    );
    FieldError::shown(ErrorType::TypeInvalid, path, &actual, detail)
}

/// The three errors kube-openapi gives an int-or-string that is neither.
fn int_or_string_type(value: &Value, path: &str, errors: &mut Vec<FieldError>) {
    errors.push(type_error(value, "integer,string", path));
    errors.push(FieldError::shown(
        ErrorType::Invalid,
        "",
        &Value::String(String::new()),
        format!("{} must validate at least one schema (anyOf)", quote(path)),
    ));
    errors.push(type_error(value, "integer", path));
}

fn type_matches(value: &Value, schema: Node<'_>, path: &str, errors: &mut Vec<FieldError>) -> bool {
    let wanted = schema.kind();
    let ok = match (wanted, value) {
        ("", _) => true,
        ("object", Value::Object(_))
        | ("array", Value::Array(_))
        | ("string", Value::String(_))
        | ("boolean", Value::Bool(_)) => true,
        ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => !n.is_f64(),
        _ => false,
    };
    if ok {
        return true;
    }
    errors.push(type_error(value, wanted, path));
    if wanted == "integer" && value.is_f64() {
        let format = match schema.text("format") {
            Some(f @ ("int32" | "int64")) => format!("with format {f}"),
            _ => "(default format)".into(),
        };
        errors.push(FieldError::shown(
            ErrorType::Invalid,
            "",
            &Value::String(String::new()),
            format!("Checked value must be of type integer {format} in {path}"),
        ));
    }
    false
}

/// The size keywords of an object or an array, and what v1.36 calls their members.
struct Bounds {
    max: &'static str,
    min: &'static str,
    noun: &'static str,
}

impl Bounds {
    /// `max*` is TooMany ("must have at most N items", for properties too, as v1.36 words it);
    /// `min*` is Invalid ("… should have at least N <noun>").
    fn check(&self, schema: Node<'_>, len: usize, path: &str, errors: &mut Vec<FieldError>) {
        let count = len as u64;
        if let Some(max) = schema.get(self.max).and_then(Value::as_u64)
            && count > max
        {
            let detail = format!("must have at most {max} items");
            errors.push(FieldError::shown(
                ErrorType::TooMany,
                path,
                &count.into(),
                detail,
            ));
        }
        if let Some(min) = schema.get(self.min).and_then(Value::as_u64)
            && count < min
        {
            let noun = self.noun;
            let detail = format!("{path} in body should have at least {min} {noun}");
            errors.push(FieldError::shown(
                ErrorType::Invalid,
                path,
                &count.into(),
                detail,
            ));
        }
    }
}

fn object(
    map: &serde_json::Map<String, Value>,
    old: Option<&Value>,
    schema: Node<'_>,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let bounds = Bounds {
        max: "maxProperties",
        min: "minProperties",
        noun: "properties",
    };
    bounds.check(schema, map.len(), path, errors);
    for key in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !map.contains_key(key) {
            let field = child(path, key);
            errors.push(FieldError::new(
                ErrorType::Required,
                &field,
                BadValue::Omitted,
                String::new(),
            ));
        }
    }
    for (key, v) in map {
        let field = child(path, key);
        let old_field = old.and_then(|o| o.get(key));
        match schema.field(key) {
            Some(node) => validate(v, old_field, node, &field, errors),
            None if schema.forbids_additional() => {
                let detail = format!("{field} in body is a forbidden property");
                errors.push(FieldError::shown(ErrorType::Invalid, &field, v, detail));
            }
            None => {}
        }
    }
}

fn array(
    items: &[Value],
    old: Option<&Value>,
    schema: Node<'_>,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let bounds = Bounds {
        max: "maxItems",
        min: "minItems",
        noun: "items",
    };
    bounds.check(schema, items.len(), path, errors);
    if schema.get("uniqueItems").and_then(Value::as_bool) == Some(true)
        && items
            .iter()
            .enumerate()
            .any(|(i, v)| items[..i].contains(v))
    {
        let detail = format!("{path} in body shouldn't contain duplicates");
        errors.push(FieldError::shown(
            ErrorType::Invalid,
            path,
            &Value::Array(items.to_vec()),
            detail,
        ));
    }
    let Some(item) = schema.items() else {
        return;
    };
    let old_items = old.and_then(Value::as_array);
    for (i, v) in items.iter().enumerate() {
        let old_item = old_items.and_then(|o| crate::listtype::correlate(schema, o, v));
        validate(v, old_item, item, &index(path, i), errors);
    }
}

/// maxLength, minLength, pattern: the first that fails (kube-openapi's string validator stops
/// there), then the format.
fn string(s: &str, schema: Node<'_>, path: &str, errors: &mut Vec<FieldError>) {
    let value = Value::String(s.to_string());
    let chars = s.chars().count() as u64;
    let bound = |key: &str| schema.get(key).and_then(Value::as_u64);
    if let Some(max) = bound("maxLength").filter(|max| chars > *max) {
        let detail = format!("may not be more than {max} bytes");
        errors.push(FieldError::new(
            ErrorType::TooLong,
            path,
            BadValue::Omitted,
            detail,
        ));
    } else if let Some(min) = bound("minLength").filter(|min| chars < *min) {
        let detail = format!("{path} in body should be at least {min} chars long");
        errors.push(FieldError::shown(ErrorType::Invalid, path, &value, detail));
    } else if let Some(pattern) = schema.text("pattern")
        && regex::Regex::new(pattern).is_ok_and(|re| !re.is_match(s))
    {
        let detail = format!("{path} in body should match '{pattern}'");
        errors.push(FieldError::shown(ErrorType::Invalid, path, &value, detail));
    }
    if let Some(format) = schema.text("format")
        && !formats::valid(format, s)
    {
        let detail = format!("{path} in body must be of type {format}: {}", quote(s));
        errors.push(FieldError::shown(
            ErrorType::TypeInvalid,
            path,
            &value,
            detail,
        ));
    }
}

fn numeric(n: &Number, value: &Value, schema: Node<'_>, path: &str, errors: &mut Vec<FieldError>) {
    let x = n.as_f64().unwrap_or_default();
    let bound = |key: &str| schema.get(key).and_then(Value::as_number);
    let exclusive = |key: &str| schema.get(key).and_then(Value::as_bool) == Some(true);
    if let Some(m) = bound("multipleOf").and_then(Number::as_f64)
        && m != 0.0
        && ((x / m) - (x / m).round()).abs() > 1e-9
    {
        let detail = format!(
            "{path} in body should be a multiple of {}",
            number(bound("multipleOf").unwrap_or(n))
        );
        errors.push(FieldError::shown(ErrorType::Invalid, path, value, detail));
    }
    if let Some(max) = bound("maximum") {
        let (limit, strict) = (
            max.as_f64().unwrap_or_default(),
            exclusive("exclusiveMaximum"),
        );
        if x > limit || (strict && x == limit) {
            let relation = if strict {
                "less than"
            } else {
                "less than or equal to"
            };
            let detail = format!("{path} in body should be {relation} {}", number(max));
            errors.push(FieldError::shown(ErrorType::Invalid, path, value, detail));
        }
    }
    if let Some(min) = bound("minimum") {
        let (limit, strict) = (
            min.as_f64().unwrap_or_default(),
            exclusive("exclusiveMinimum"),
        );
        if x < limit || (strict && x == limit) {
            let relation = if strict {
                "greater than"
            } else {
                "greater than or equal to"
            };
            let detail = format!("{path} in body should be {relation} {}", number(min));
            errors.push(FieldError::shown(ErrorType::Invalid, path, value, detail));
        }
    }
    if let (Some(i), Some("int32")) = (n.as_i64(), schema.text("format"))
        && i32::try_from(i).is_err()
    {
        errors.push(FieldError::shown(
            ErrorType::Invalid,
            "",
            &Value::String(String::new()),
            format!("Checked value must be of type integer with format int32 in {path}"),
        ));
    }
}

/// `allOf`, `anyOf`, `oneOf` of value validations (structural schemas allow no types there).
fn combined(key: &str, value: &Value, schema: Node<'_>, path: &str, errors: &mut Vec<FieldError>) {
    let Some(branches) = schema.get(key).and_then(Value::as_array) else {
        return;
    };
    let results: Vec<Vec<FieldError>> = branches
        .iter()
        .map(|branch| {
            let mut found = Vec::new();
            validate(value, None, Node(branch), path, &mut found);
            found
        })
        .collect();
    let passed = results.iter().filter(|r| r.is_empty()).count();
    let failed = match key {
        "allOf" => passed < results.len(),
        "anyOf" => passed == 0,
        _ => passed != 1,
    };
    if !failed || schema.int_or_string() {
        return;
    }
    // kube-openapi says how many `oneOf` branches matched: none, or too many.
    let word = match (key, passed) {
        ("allOf", _) => "all of the schemas (allOf)".to_string(),
        ("anyOf", _) => "at least one schema (anyOf)".to_string(),
        (_, 0) => "one and only one schema (oneOf). Found none valid".to_string(),
        (_, n) => format!("one and only one schema (oneOf). Found {n} valid alternatives"),
    };
    errors.push(FieldError::shown(
        ErrorType::Invalid,
        "",
        &Value::String(String::new()),
        format!("{} must validate {word}", quote(path)),
    ));
    errors.extend(results.into_iter().flatten());
}

/// `not` of a value validation: the value must fail it. Without this, a `oneOf` whose second
/// branch is `not: {enum: [X]}` (Gateway API's addresses) sees both branches pass and refuses
/// every value. kube-openapi reports only the one error, never the branch's own.
fn negated(value: &Value, schema: Node<'_>, path: &str, errors: &mut Vec<FieldError>) {
    let Some(branch) = schema.get("not") else {
        return;
    };
    let mut found = Vec::new();
    validate(value, None, Node(branch), path, &mut found);
    if found.is_empty() {
        errors.push(FieldError::shown(
            ErrorType::Invalid,
            "",
            &Value::String(String::new()),
            format!("{} must not validate the schema (not)", quote(path)),
        ));
    }
}

/// Every `x-kubernetes-embedded-resource` object names its `apiVersion` and `kind`
/// (apiextensions `pkg/apiserver/schema/objectmeta/validation.go`).
pub(crate) fn embedded_resources(
    value: &Value,
    schema: Node<'_>,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    match value {
        Value::Object(map) => {
            if !path.is_empty() && schema.embedded() {
                for key in ["apiVersion", "kind"] {
                    if map
                        .get(key)
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty)
                    {
                        let field = child(path, key);
                        errors.push(FieldError::new(
                            ErrorType::Required,
                            &field,
                            BadValue::Omitted,
                            String::new(),
                        ));
                    }
                }
            }
            for (key, v) in map {
                if let Some(field) = schema.field(key) {
                    embedded_resources(v, field, &child(path, key), errors);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.items() {
                for (i, v) in items.iter().enumerate() {
                    embedded_resources(v, item, &index(path, i), errors);
                }
            }
        }
        _ => {}
    }
}
