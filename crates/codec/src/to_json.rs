//! Protobuf message → JSON, with Kubernetes' (Go's) JSON conventions. The inverse of `from_json`.
//!
//! Mirrors what a real API server does when it decodes a protobuf body into its Go types and writes
//! them as JSON: the same names, the same special forms (`special`), the same omitted zeros
//! (`go_fields`).

use base64::Engine;
use prost_reflect::{
    DynamicMessage, FieldDescriptor, Kind, MapKey, ReflectMessage, Value as Proto,
};
use serde_json::{Map, Number, Value};

// A `RawExtension` may embed a whole object with its own envelope, which decodes through its kind's
// schema back into this encoder: objects nest.
use crate::envelope; // import-cycle: an embedded object is decoded like the outer one
use crate::error::{CodecError, Result};
use crate::special::Special;
use crate::{go_duration, go_fields};

/// The JSON form of `message`; `path` is the JSON path of the message, for errors.
/// `depth` counts the envelopes this message is embedded in (see [`MAX_EMBEDDED`]).
pub(crate) fn message(message: &DynamicMessage, path: &str, depth: u32) -> Result<Value> {
    if let Some(special) = Special::of(&message.descriptor()) {
        return special_json(special, message, path, depth);
    }
    let mut object = Map::new();
    for (field, value) in message.fields() {
        let name = go_fields::json_name(&field);
        if go_fields::is_inline(&field)
            && let Proto::Message(embedded) = value
        {
            if let Value::Object(members) = self::message(embedded, path, depth)? {
                object.extend(members);
            }
            continue;
        }
        let field_path = join(path, name);
        if let Some(json) = field_json(&field, value, &field_path, depth)? {
            object.insert(name.to_string(), json);
        }
    }
    let descriptor = message.descriptor();
    for name in go_fields::always_written(descriptor.full_name()) {
        if let Some(field) = descriptor.get_field_by_name(name)
            && !message.has_field(&field)
        {
            object.insert(
                go_fields::json_name(&field).to_string(),
                zero(&field.kind()),
            );
        }
    }
    Ok(Value::Object(object))
}

/// What Go's JSON writes for a zero field of protobuf type `kind` (a zero `Time` is `null`).
fn zero(kind: &Kind) -> Value {
    match kind {
        Kind::String | Kind::Bytes => Value::String(String::new()),
        Kind::Bool => Value::Bool(false),
        Kind::Message(_) => Value::Null,
        _ => Value::from(0),
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// The JSON of one field that is present on the wire, or `None` where Go's JSON omits it.
fn field_json(
    field: &FieldDescriptor,
    value: &Proto,
    path: &str,
    depth: u32,
) -> Result<Option<Value>> {
    match value {
        Proto::List(items) if items.is_empty() => Ok(None),
        Proto::List(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| element(item, &format!("{path}[{i}]"), depth))
            .collect::<Result<Vec<_>>>()
            .map(|items| Some(Value::Array(items))),
        Proto::Map(entries) if entries.is_empty() => Ok(None),
        Proto::Map(entries) => {
            let mut object = Map::new();
            for (key, value) in entries {
                let key = map_key(key);
                let json = element(value, &format!("{path}[{key}]"), depth)?;
                object.insert(key, json);
            }
            Ok(Some(Value::Object(object)))
        }
        // A zero `Time` (`null`) is dropped unless Go writes it (a non-pointer without `omitzero`).
        Proto::Message(nested) => match message(nested, path, depth)? {
            Value::Null if !go_fields::keeps_zero(field) => Ok(None),
            json => Ok(Some(json)),
        },
        scalar if is_zero(scalar) && !go_fields::keeps_zero(field) => Ok(None),
        scalar => scalar_json(scalar, path).map(Some),
    }
}

/// A list element or map value: always written, zero or not.
fn element(value: &Proto, path: &str, depth: u32) -> Result<Value> {
    match value {
        Proto::Message(nested) => message(nested, path, depth),
        scalar => scalar_json(scalar, path),
    }
}

fn map_key(key: &MapKey) -> String {
    match key {
        MapKey::String(s) => s.clone(),
        MapKey::Bool(b) => b.to_string(),
        MapKey::I32(n) => n.to_string(),
        MapKey::I64(n) => n.to_string(),
        MapKey::U32(n) => n.to_string(),
        MapKey::U64(n) => n.to_string(),
    }
}

fn is_zero(value: &Proto) -> bool {
    match value {
        Proto::Bool(b) => !b,
        Proto::I32(n) => *n == 0,
        Proto::I64(n) => *n == 0,
        Proto::U32(n) => *n == 0,
        Proto::U64(n) => *n == 0,
        Proto::F32(n) => *n == 0.0,
        Proto::F64(n) => *n == 0.0,
        Proto::String(s) => s.is_empty(),
        Proto::Bytes(b) => b.is_empty(),
        Proto::EnumNumber(n) => *n == 0,
        Proto::Message(_) | Proto::List(_) | Proto::Map(_) => false,
    }
}

fn scalar_json(value: &Proto, path: &str) -> Result<Value> {
    let json = match value {
        Proto::Bool(b) => Value::Bool(*b),
        Proto::I32(n) | Proto::EnumNumber(n) => Value::from(*n),
        Proto::I64(n) => Value::from(*n),
        Proto::U32(n) => Value::from(*n),
        Proto::U64(n) => Value::from(*n),
        Proto::F32(n) => float(f64::from(*n), path)?,
        Proto::F64(n) => float(*n, path)?,
        Proto::String(s) => Value::String(s.clone()),
        Proto::Bytes(b) => Value::String(base64::engine::general_purpose::STANDARD.encode(b)),
        Proto::Message(_) | Proto::List(_) | Proto::Map(_) => {
            return Err(CodecError::field(path, "expected a scalar"));
        }
    };
    Ok(json)
}

/// Go writes a float with no fraction as an integer (`0`, not `0.0`).
fn float(n: f64, path: &str) -> Result<Value> {
    const EXACT_INTEGERS: f64 = 9_007_199_254_740_992.0; // 2^53
    if n.fract() == 0.0 && n.abs() < EXACT_INTEGERS {
        return Ok(Value::from(n as i64));
    }
    Number::from_f64(n)
        .map(Value::Number)
        .ok_or_else(|| CodecError::field(path, format!("{n} has no JSON form")))
}

/// A field of a special message by name; `None` when absent on the wire.
fn get<'a>(message: &'a DynamicMessage, name: &str) -> Option<std::borrow::Cow<'a, Proto>> {
    let field = message.descriptor().get_field_by_name(name)?;
    message.has_field(&field).then(|| message.get_field(&field))
}

fn special_json(
    special: Special,
    message: &DynamicMessage,
    path: &str,
    depth: u32,
) -> Result<Value> {
    match special {
        Special::Time => timestamp(message, path, false),
        Special::MicroTime => timestamp(message, path, true),
        Special::Duration => {
            let nanos = get(message, "duration")
                .and_then(|v| v.as_i64())
                .unwrap_or(0);
            Ok(Value::String(go_duration::format(nanos)))
        }
        Special::IntOrString => int_or_string(message, path),
        Special::Quantity => Ok(Value::String(
            get(message, "string")
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_else(|| "0".into()),
        )),
        Special::RawJson => raw_json(message, path, depth),
        Special::Items => match get(message, "items") {
            Some(items) => element_list(&items, path, depth),
            None => Ok(Value::Array(Vec::new())),
        },
        Special::SchemaOrArray => match get(message, "jSONSchemas") {
            Some(schemas) => element_list(&schemas, path, depth),
            None => schema_or(message, path, depth, Value::Null),
        },
        Special::SchemaOrBool => {
            let allows = get(message, "allows")
                .and_then(|v| v.as_bool())
                .unwrap_or(false);
            schema_or(message, path, depth, Value::Bool(allows))
        }
        Special::SchemaOrStringArray => match get(message, "property") {
            Some(property) => element_list(&property, path, depth),
            None => schema_or(message, path, depth, Value::Null),
        },
    }
}

fn element_list(value: &Proto, path: &str, depth: u32) -> Result<Value> {
    let items = value.as_list().unwrap_or_default();
    items
        .iter()
        .enumerate()
        .map(|(i, item)| element(item, &format!("{path}[{i}]"), depth))
        .collect::<Result<Vec<_>>>()
        .map(Value::Array)
}

/// The `schema` field's JSON, or `otherwise` when it is absent.
fn schema_or(message: &DynamicMessage, path: &str, depth: u32, otherwise: Value) -> Result<Value> {
    match get(message, "schema") {
        Some(schema) => element(&schema, path, depth),
        None => Ok(otherwise),
    }
}

/// `Time` / `MicroTime`: Go writes a zero time as an empty message and as `null` in JSON; others
/// as RFC 3339 in UTC, truncated to seconds (`Time`) or microseconds (`MicroTime`).
fn timestamp(message: &DynamicMessage, path: &str, micros: bool) -> Result<Value> {
    let seconds = get(message, "seconds").and_then(|v| v.as_i64());
    let nanos = get(message, "nanos").and_then(|v| v.as_i32());
    if seconds.is_none() && nanos.is_none() {
        return Ok(Value::Null);
    }
    let time = jiff::Timestamp::new(seconds.unwrap_or(0), nanos.unwrap_or(0))
        .map_err(|e| CodecError::field(path, format!("invalid timestamp: {e}")))?;
    let civil = jiff::tz::TimeZone::UTC.to_datetime(time);
    let whole = civil.strftime("%Y-%m-%dT%H:%M:%S");
    Ok(Value::String(if micros {
        format!("{whole}.{:06}Z", civil.subsec_nanosecond() / 1_000)
    } else {
        format!("{whole}Z")
    }))
}

/// `IntOrString`: `type` 0 is the integer `intVal`, 1 the string `strVal` (apimachinery `intstr`).
fn int_or_string(message: &DynamicMessage, path: &str) -> Result<Value> {
    match get(message, "type").and_then(|v| v.as_i64()).unwrap_or(0) {
        0 => Ok(Value::from(
            get(message, "intVal").and_then(|v| v.as_i32()).unwrap_or(0),
        )),
        1 => Ok(Value::String(
            get(message, "strVal")
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
        )),
        other => Err(CodecError::field(
            path,
            format!("IntOrString has unknown type {other}"),
        )),
    }
}

/// How many envelopes deep objects may be embedded in `RawExtension`s: bounds the recursion a
/// crafted body could cause (real objects embed at most one level, e.g. a watch event's object).
const MAX_EMBEDDED: u32 = 4;

/// `RawExtension` / `FieldsV1` / `JSON`: the bytes are JSON, or (for an object embedded by a
/// protobuf encoder) another `k8s\0` envelope.
fn raw_json(message: &DynamicMessage, path: &str, depth: u32) -> Result<Value> {
    let Some(field) = message.descriptor().fields().next() else {
        return Ok(Value::Null);
    };
    let raw = message.get_field(&field);
    let bytes = raw.as_bytes().map(|b| b.as_ref()).unwrap_or_default();
    if bytes.is_empty() {
        return Ok(Value::Null);
    }
    if bytes.starts_with(&envelope::MAGIC) {
        if depth >= MAX_EMBEDDED {
            return Err(CodecError::field(
                path,
                format!("objects embedded more than {MAX_EMBEDDED} deep"),
            ));
        }
        return envelope::decode_object_at(bytes, depth + 1)
            .map_err(|e| CodecError::field(path, format!("embedded object: {e}")));
    }
    serde_json::from_slice(bytes)
        .map_err(|e| CodecError::field(path, format!("embedded JSON does not parse: {e}")))
}
