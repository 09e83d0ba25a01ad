//! One module per verb family, mirroring apiserver `endpoints/handlers/{get,create,update,patch,
//! delete}.go` plus the kind-specific strategies the real registry applies (namespaces, CRDs).

pub(crate) mod crd;
pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod delete_options;
pub(crate) mod namespace;
pub(crate) mod read;
pub(crate) mod review;
pub(crate) mod scale;
pub(crate) mod update;

use bytes::Bytes;
use http::StatusCode;
use serde_json::{Map, Value};

use crate::body::BoxBody;
use crate::route::Target;
use crate::shared::json_response;
use crate::state::State;
use crate::status::ApiError;
use crate::store::{ObjectKey, Stored};

/// A JSON object from a request body.
///
/// # Errors
/// 400 BadRequest for anything that is not a JSON object, with the decoder's message.
pub(crate) fn parse_object(body: &Bytes) -> Result<Map<String, Value>, ApiError> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(ApiError::bad_request(format!(
            "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}",
            json_type(&other)
        ))),
        Err(e) => Err(ApiError::bad_request(format!(
            "couldn't get version/kind; json parse error: {e}"
        ))),
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        _ => "null",
    }
}

/// `metadata` of an object as a map, created when absent.
///
/// # Errors
/// 400 when `metadata` is present but not an object.
pub(crate) fn metadata_mut(
    object: &mut Map<String, Value>,
) -> Result<&mut Map<String, Value>, ApiError> {
    object
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| ApiError::bad_request("metadata must be an object"))
}

/// A string field of `metadata`, or "".
/// The strings of the array at JSON `pointer` in `value` (non-strings skipped; none if absent).
pub(crate) fn strings_at(value: &Value, pointer: &str) -> Vec<String> {
    value
        .pointer(pointer)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// An object's `metadata.finalizers`.
pub(crate) fn finalizers_of(object: &Value) -> Vec<String> {
    strings_at(object, "/metadata/finalizers")
}

pub(crate) fn meta_str<'a>(object: &'a Value, field: &str) -> &'a str {
    object
        .get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The storage key of `name` under `target`'s namespace.
pub(crate) fn key_of(target: &Target, name: &str) -> ObjectKey {
    (
        target.namespace.clone().unwrap_or_default(),
        name.to_string(),
    )
}

/// `now` in the RFC 3339 second-precision form the real server writes.
pub(crate) fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// A response carrying one stored object.
pub(crate) fn object_response(code: StatusCode, stored: &Stored) -> http::Response<BoxBody> {
    json_response(code, stored.json.clone())
}

/// The object `target` names, or 404.
pub(crate) fn existing<'a>(
    state: &'a State,
    target: &Target,
) -> Result<(&'a Stored, ObjectKey), ApiError> {
    let name = target.name.as_deref().unwrap_or_default();
    let key = key_of(target, name);
    match state.store.get(&target.def.key(), &key) {
        Some(stored) => Ok((stored, key)),
        None => Err(ApiError::not_found(target.qualified(), name)),
    }
}
