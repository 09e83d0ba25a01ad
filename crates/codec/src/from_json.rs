//! JSON → protobuf message, with Kubernetes' (Go's) JSON conventions. The inverse of `to_json`.

use base64::Engine;
use prost_reflect::{
    DynamicMessage, FieldDescriptor, Kind, MapKey, MessageDescriptor, ReflectMessage,
    Value as Proto,
};
use serde_json::{Map, Value};

use crate::error::{CodecError, Result};
use crate::go_duration;
use crate::plan::{self, MessagePlan, Shape, ValueKind};
use crate::special::Special;

/// The message of a top-level object: its fields, without the envelope's `apiVersion` and `kind`.
pub(crate) fn object(descriptor: &MessageDescriptor, json: &Value) -> Result<DynamicMessage> {
    let fields = json
        .as_object()
        .ok_or_else(|| CodecError::field("", "the object is not a JSON object"))?;
    let mut body = fields.clone();
    body.remove("apiVersion");
    body.remove("kind");
    plain(descriptor, &body, "")
}

fn message(descriptor: &MessageDescriptor, json: &Value, path: &str) -> Result<DynamicMessage> {
    if let Some(special) = Special::of(descriptor) {
        return special_message(special, descriptor, json, path);
    }
    let fields = json
        .as_object()
        .ok_or_else(|| CodecError::field(path, "expected a JSON object"))?;
    plain(descriptor, fields, path)
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// An ordinary message: each JSON member is the field with that Go JSON name, or belongs to an
/// embedded (`inline`) struct that has it; `null` is unset.
fn plain(
    descriptor: &MessageDescriptor,
    fields: &Map<String, Value>,
    path: &str,
) -> Result<DynamicMessage> {
    let mut message = DynamicMessage::new(descriptor.clone());
    // The fields' Go facts come from the message's plan, computed once per process: looking
    // them up per member and field made encoding an object cost hundreds of hash lookups.
    let plan = plan_of(descriptor, path)?;
    let mut embedded: Vec<(FieldDescriptor, Map<String, Value>)> = plan
        .fields
        .iter()
        .filter(|f| f.shape == Shape::Inline)
        .filter_map(|f| descriptor.get_field(f.number))
        .map(|field| (field, Map::new()))
        .collect();
    for (name, json) in fields {
        let field_path = join(path, name);
        let direct = plan
            .fields
            .iter()
            .find(|f| f.shape != Shape::Inline && f.json_name == *name)
            .and_then(|f| descriptor.get_field(f.number));
        if let Some(field) = direct {
            if !json.is_null() {
                let value = field_value(&field, json, &field_path)?;
                message.set_field(&field, value);
            }
            continue;
        }
        let owner = embedded.iter_mut().find(|(field, _)| {
            field
                .kind()
                .as_message()
                .and_then(|m| plan::by_name(m.full_name()))
                .is_some_and(|m| has_member(m, name))
        });
        let Some((_, members)) = owner else {
            if is_type_meta(descriptor, name) {
                continue;
            }
            let reason = format!("unknown field of {}", descriptor.name());
            return Err(CodecError::field(&field_path, reason));
        };
        members.insert(name.clone(), json.clone());
    }
    for (field, members) in embedded {
        if let (false, Some(inner)) = (members.is_empty(), field.kind().as_message()) {
            let value = plain(inner, &members, path)?;
            message.set_field(&field, Proto::Message(value));
        }
    }
    Ok(message)
}

/// Whether `name` is the `apiVersion` or `kind` of an object embedded in another (a
/// StatefulSet's `volumeClaimTemplates`): Go's types carry them in an inline `TypeMeta`, which has
/// no protobuf fields, so the real server's protobuf leaves them out, as here.
fn is_type_meta(descriptor: &MessageDescriptor, name: &str) -> bool {
    matches!(name, "apiVersion" | "kind") && descriptor.get_field_by_name("metadata").is_some()
}

/// The plan of `descriptor`, a message of the schema.
fn plan_of(descriptor: &MessageDescriptor, path: &str) -> Result<&'static MessagePlan> {
    plan::by_name(descriptor.full_name()).ok_or_else(|| {
        CodecError::field(
            path,
            format!("{} is not in the schema", descriptor.full_name()),
        )
    })
}

/// Whether `message`'s JSON object has a member `name`, directly or through an embedded struct.
fn has_member(message: &MessagePlan, name: &str) -> bool {
    message.fields.iter().any(|f| match (f.shape, f.kind) {
        (Shape::Inline, ValueKind::Message(index)) => plan::plans()
            .get(index)
            .is_some_and(|inner| has_member(inner, name)),
        (Shape::Inline, _) => false,
        _ => f.json_name == name,
    })
}

fn field_value(field: &FieldDescriptor, json: &Value, path: &str) -> Result<Proto> {
    if field.is_map() {
        let entries = json
            .as_object()
            .ok_or_else(|| CodecError::field(path, "expected a JSON object"))?;
        let value_kind = field
            .kind()
            .as_message()
            .map(|entry| entry.map_entry_value_field().kind())
            .ok_or_else(|| CodecError::field(path, "map without an entry message"))?;
        let mut map = std::collections::HashMap::new();
        for (key, value) in entries {
            // Older Go writes an empty byte string in a map as `null`.
            let value = match value {
                Value::Null => Proto::default_value(&value_kind),
                value => single(&value_kind, value, &format!("{path}[{key}]"))?,
            };
            map.insert(MapKey::String(key.clone()), value);
        }
        return Ok(Proto::Map(map));
    }
    if field.is_list() {
        let items = json
            .as_array()
            .ok_or_else(|| CodecError::field(path, "expected a JSON array"))?;
        return items
            .iter()
            .enumerate()
            .map(|(i, item)| single(&field.kind(), item, &format!("{path}[{i}]")))
            .collect::<Result<Vec<_>>>()
            .map(Proto::List);
    }
    single(&field.kind(), json, path)
}

/// One value of protobuf type `kind` from JSON.
fn single(kind: &Kind, json: &Value, path: &str) -> Result<Proto> {
    let wrong = || CodecError::field(path, format!("{json} does not fit a {kind:?} field"));
    let value = match kind {
        Kind::Message(descriptor) => Proto::Message(message(descriptor, json, path)?),
        Kind::String => Proto::String(json.as_str().ok_or_else(wrong)?.to_string()),
        Kind::Bool => Proto::Bool(json.as_bool().ok_or_else(wrong)?),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => Proto::I32(
            json.as_i64()
                .and_then(|n| i32::try_from(n).ok())
                .ok_or_else(wrong)?,
        ),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => Proto::I64(json.as_i64().ok_or_else(wrong)?),
        Kind::Uint32 | Kind::Fixed32 => Proto::U32(
            json.as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(wrong)?,
        ),
        Kind::Uint64 | Kind::Fixed64 => Proto::U64(json.as_u64().ok_or_else(wrong)?),
        Kind::Double => Proto::F64(json.as_f64().ok_or_else(wrong)?),
        Kind::Float => Proto::F32(json.as_f64().ok_or_else(wrong)? as f32),
        Kind::Bytes => {
            let text = json.as_str().ok_or_else(wrong)?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|e| CodecError::field(path, format!("not base64: {e}")))?;
            Proto::Bytes(bytes.into())
        }
        Kind::Enum(_) => Proto::EnumNumber(
            json.as_i64()
                .and_then(|n| i32::try_from(n).ok())
                .ok_or_else(wrong)?,
        ),
    };
    Ok(value)
}

fn special_message(
    special: Special,
    descriptor: &MessageDescriptor,
    json: &Value,
    path: &str,
) -> Result<DynamicMessage> {
    let mut message = DynamicMessage::new(descriptor.clone());
    match special {
        Special::SchemaOrArray | Special::SchemaOrBool | Special::SchemaOrStringArray => {
            schema_union(&mut message, special, json, path)?;
        }
        _ => value_like(&mut message, special, json, path)?,
    }
    Ok(message)
}

fn expected(path: &str, what: &str, json: &Value) -> CodecError {
    CodecError::field(path, format!("expected {what}, got {json}"))
}

/// The specials whose JSON is one value: times, durations, IntOrString, Quantity, raw JSON, arrays.
fn value_like(
    message: &mut DynamicMessage,
    special: Special,
    json: &Value,
    path: &str,
) -> Result<()> {
    match (special, json) {
        (Special::Time | Special::MicroTime, Value::String(text)) => {
            let time: jiff::Timestamp = text
                .parse()
                .map_err(|e| CodecError::field(path, format!("not an RFC 3339 time: {e}")))?;
            // Go's Unix seconds round down; the nanoseconds are never negative.
            let (seconds, nanos) = match time.subsec_nanosecond() {
                n if n < 0 => (time.as_second() - 1, n + 1_000_000_000),
                n => (time.as_second(), n),
            };
            put(message, "seconds", Proto::I64(seconds), path)?;
            put(message, "nanos", Proto::I32(nanos), path)
        }
        (Special::Duration, Value::String(text)) => {
            let nanos = go_duration::parse(text).map_err(|e| CodecError::field(path, e))?;
            put(message, "duration", Proto::I64(nanos), path)
        }
        (Special::IntOrString, Value::Number(n)) => {
            let n = n
                .as_i64()
                .and_then(|n| i32::try_from(n).ok())
                .ok_or_else(|| expected(path, "a 32-bit integer", json))?;
            put(message, "type", Proto::I64(0), path)?;
            put(message, "intVal", Proto::I32(n), path)
        }
        (Special::IntOrString, Value::String(text)) => {
            put(message, "type", Proto::I64(1), path)?;
            put(message, "strVal", Proto::String(text.clone()), path)
        }
        (Special::Quantity, Value::String(_) | Value::Number(_)) => {
            let text = json
                .as_str()
                .map_or_else(|| json.to_string(), str::to_string);
            put(message, "string", Proto::String(text), path)
        }
        (Special::RawJson, json) => {
            let bytes =
                serde_json::to_vec(json).map_err(|e| CodecError::field(path, e.to_string()))?;
            let field = message.descriptor().fields().next();
            let field = field.ok_or_else(|| expected(path, "raw JSON", json))?;
            message.set_field(&field, Proto::Bytes(bytes.into()));
            Ok(())
        }
        (Special::Items, Value::Array(_)) => put_json(message, "items", json, path),
        (Special::Time | Special::MicroTime, _) => Err(expected(path, "an RFC 3339 time", json)),
        (Special::Duration, _) => Err(expected(path, "a duration such as \"1m30s\"", json)),
        (Special::IntOrString, _) => Err(expected(path, "an integer or a string", json)),
        (Special::Quantity, _) => Err(expected(path, "a quantity", json)),
        _ => Err(expected(path, "an array", json)),
    }
}

/// apiextensions' `JSONSchemaPropsOr{Array,Bool,StringArray}`: a schema object or the alternative.
fn schema_union(
    message: &mut DynamicMessage,
    special: Special,
    json: &Value,
    path: &str,
) -> Result<()> {
    match (special, json) {
        (Special::SchemaOrArray, Value::Array(_)) => put_json(message, "jSONSchemas", json, path),
        (Special::SchemaOrStringArray, Value::Array(_)) => {
            put_json(message, "property", json, path)
        }
        (Special::SchemaOrBool, Value::Bool(allows)) => {
            put(message, "allows", Proto::Bool(*allows), path)
        }
        (Special::SchemaOrBool, Value::Object(_)) => {
            put(message, "allows", Proto::Bool(true), path)?;
            put_json(message, "schema", json, path)
        }
        (_, Value::Object(_)) => put_json(message, "schema", json, path),
        _ => Err(expected(path, "a schema", json)),
    }
}

/// Sets the field `name` of a special message.
fn put(message: &mut DynamicMessage, name: &str, value: Proto, path: &str) -> Result<()> {
    message
        .try_set_field_by_name(name, value)
        .map_err(|e| CodecError::field(path, e.to_string()))
}

/// Sets the field `name` of a special message from JSON.
fn put_json(message: &mut DynamicMessage, name: &str, json: &Value, path: &str) -> Result<()> {
    let field = message
        .descriptor()
        .get_field_by_name(name)
        .ok_or_else(|| {
            CodecError::field(
                path,
                format!("{} has no field {name}", message.descriptor().name()),
            )
        })?;
    let value = field_value(&field, json, path)?;
    message.set_field(&field, value);
    Ok(())
}
