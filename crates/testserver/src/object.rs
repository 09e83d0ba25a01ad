//! Object helpers every layer uses: a request body as a JSON object, `metadata` fields,
//! finalizers, the server's timestamp format. The JSON counterpart of apimachinery's
//! `meta.Accessor` and `metav1.Now`; nothing here knows about requests or storage.

use bytes::Bytes;
use serde_json::{Map, Value, json};

use crate::status::ApiError;

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

/// A string field of `metadata`, or "".
pub(crate) fn meta_str<'a>(object: &'a Value, field: &str) -> &'a str {
    object
        .get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `now` in the RFC 3339 second-precision form the real server writes.
pub(crate) fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// `object` as `PartialObjectMetadata` of `meta.k8s.io/<version>`: its `metadata`, whole.
///
/// The one conversion of objects to their metadata: gets, list items, watch events and Table rows
/// (`includeObject=Metadata`) all use it.
pub(crate) fn partial_object_metadata(object: &Value, version: &str) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": object.get("metadata").cloned().unwrap_or_else(|| json!({})),
    })
}
