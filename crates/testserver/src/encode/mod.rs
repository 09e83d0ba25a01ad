//! Writing an answer in the format content negotiation chose: JSON, or for built-in kinds (and
//! `PartialObjectMetadata`) protobuf. Every response value of a resource request goes through here:
//! single objects and `Status` errors ([`in_format`], [`error_in_format`]), lists
//! ([`list_response`]) and watch events ([`watch_event`]). A conversion (such as
//! `PartialObjectMetadata`) produces its JSON value first and is encoded here like any object.
//!
//! Mirrors apiserver `endpoints/handlers/responsewriters` (`WriteObjectNegotiated`,
//! `ErrorNegotiated`) and the watch encoder of `endpoints/handlers/watch.go`; the protobuf itself is
//! kubegen-codec's.
//!
//! # Differences from kube-apiserver
//! - An object this server cannot write in protobuf (a field the schema lacks, which a real
//!   server would have dropped on the way in) is answered in JSON, which every client that asked
//!   for protobuf also accepts (kubectl and client-go always list JSON after it).
//! - Errors found before negotiation (unknown paths, authentication, a 406) are JSON.

use bytes::Bytes;
use http::{Response, StatusCode, header};
use http_body_util::BodyExt;
use kubegen_codec::{
    ListEncoder, PROTOBUF_MEDIA_TYPE, encode_object, encode_watch_frame, watch_frame_of,
};
use serde_json::{Map, Value};

use crate::body::json_response;
use crate::body::with_json_type;
use crate::body::{BoxBody, ListBody, full};
use crate::registry::ResourceDefinition;
use crate::request::negotiation::{WireFormat, speaks_protobuf};
use crate::status::ApiError;
use crate::storage::objects::Stored;

fn protobuf_response(code: StatusCode, content_type: &str, body: Vec<u8>) -> Response<BoxBody> {
    Response::builder()
        .status(code)
        .header(header::CONTENT_TYPE, content_type)
        .body(full(Bytes::from(body)))
        .unwrap_or_else(|_| Response::new(full(Bytes::new())))
}

/// A handler's whole JSON answer (one object or a `Status`) rewritten in `format`. Streams and
/// answers that are not JSON objects are returned unchanged.
pub(crate) async fn in_format(
    response: Response<BoxBody>,
    format: WireFormat,
) -> Response<BoxBody> {
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes() == b"application/json");
    if format == WireFormat::Json || !is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let bytes = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(never) => match never {},
    };
    let encoded = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .and_then(|value| encode_object(&value).ok());
    match encoded {
        Some(encoded) => {
            parts.headers.insert(
                header::CONTENT_TYPE,
                http::HeaderValue::from_static(PROTOBUF_MEDIA_TYPE),
            );
            parts.headers.remove(header::CONTENT_LENGTH);
            Response::from_parts(parts, full(Bytes::from(encoded)))
        }
        None => Response::from_parts(parts, full(bytes)),
    }
}

/// The `Status` of `error` in `format` (see [`crate::status::error_response`] for JSON).
pub(crate) fn error_in_format(error: &ApiError, format: WireFormat) -> Response<BoxBody> {
    let json = crate::status::error_response(error);
    if format == WireFormat::Json || error.plain_text {
        return json;
    }
    let encoded = serde_json::from_slice::<Value>(&error.to_json())
        .ok()
        .and_then(|value| encode_object(&value).ok());
    match encoded {
        Some(body) => {
            let (mut parts, _) = json.into_parts();
            parts.headers.insert(
                header::CONTENT_TYPE,
                http::HeaderValue::from_static(PROTOBUF_MEDIA_TYPE),
            );
            Response::from_parts(parts, full(Bytes::from(body)))
        }
        None => json,
    }
}

/// Whether a JSON list writes its items' `kind` and `apiVersion`, as v1.15 and v1.36 do: a
/// built-in kind is a Go struct whose list items go out without them (a `get` or a watch event
/// carries them); a custom resource is unstructured and keeps them, and so does a
/// `PartialObjectMetadata`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ItemTypes {
    Written,
    Dropped,
}

impl ItemTypes {
    /// How lists of `def`'s own objects write their items.
    pub(crate) fn of(def: &ResourceDefinition) -> ItemTypes {
        if speaks_protobuf(def) {
            ItemTypes::Dropped
        } else {
            ItemTypes::Written
        }
    }
}

/// A JSON list body: `head` (up to `"items":[`), the items as `types` says, then `]}`. The
/// stored bytes of each item are streamed, never copied or re-serialized first.
pub(crate) fn json_list_body(head: Bytes, items: Vec<Stored>, types: ItemTypes) -> BoxBody {
    let tail = Bytes::from_static(b"]}");
    match types {
        ItemTypes::Written => {
            ListBody::boxed(head, items.into_iter().map(|s| s.json).collect(), tail)
        }
        ItemTypes::Dropped => {
            let rests = items.iter().map(Stored::untyped_rest).collect();
            ListBody::boxed_untyped(head, rests, tail)
        }
    }
}

/// A list of `kind` (the item kind) in `format`: JSON streams the stored bytes of each item; protobuf
/// encodes them one at a time into the `<kind>List` message.
pub(crate) fn list_response(
    format: WireFormat,
    (api_version, kind): (&str, &str),
    metadata: Map<String, Value>,
    items: Vec<Stored>,
    types: ItemTypes,
) -> Response<BoxBody> {
    if format == WireFormat::Protobuf
        && let Some(body) = protobuf_list(api_version, kind, &metadata, &items)
    {
        return protobuf_response(StatusCode::OK, PROTOBUF_MEDIA_TYPE, body);
    }
    let head = list_head(kind, api_version, metadata);
    with_json_type(
        Response::builder().status(StatusCode::OK),
        json_list_body(head, items, types),
    )
}

fn protobuf_list(
    api_version: &str,
    kind: &str,
    metadata: &Map<String, Value>,
    items: &[Stored],
) -> Option<Vec<u8>> {
    let metadata = Value::Object(metadata.clone());
    let mut encoder = ListEncoder::new(api_version, &format!("{kind}List"), &metadata).ok()?;
    for item in items {
        encoder.item(&item.value).ok()?;
    }
    Some(encoder.finish())
}

/// The `Content-Type` of a watch stream in `format`.
pub(crate) fn watch_content_type(format: WireFormat) -> &'static str {
    match format {
        WireFormat::Json => "application/json",
        WireFormat::Protobuf => kubegen_codec::PROTOBUF_WATCH_MEDIA_TYPE,
    }
}

/// One watch event in `format`: a JSON line `{"type":..,"object":..}` built from the object's
/// serialized `json`, or a length-prefixed protobuf `WatchEvent` frame of `object`. An object
/// without a protobuf form (a Table) goes as a JSON line.
pub(crate) fn watch_event(format: WireFormat, kind: &str, object: &Value, json: &[u8]) -> Bytes {
    if format == WireFormat::Protobuf
        && let Ok(frame) = encode_watch_frame(kind, object)
    {
        return Bytes::from(frame);
    }
    json_watch_event(kind, json)
}

/// [`watch_event`] of a stored object version, whose protobuf form is encoded once for all
/// the watchers that send it (see [`Stored::protobuf`]).
pub(crate) fn stored_watch_event(format: WireFormat, kind: &str, stored: &Stored) -> Bytes {
    if format == WireFormat::Protobuf
        && let Some(body) = stored.protobuf(|value| encode_object(value).ok().map(Bytes::from))
        && let Ok(frame) = watch_frame_of(kind, &body)
    {
        return Bytes::from(frame);
    }
    json_watch_event(kind, &stored.json)
}

/// The JSON line `{"type":..,"object":..}` of an object serialized as `json`.
fn json_watch_event(kind: &str, json: &[u8]) -> Bytes {
    let mut out = bytes::BytesMut::with_capacity(json.len() + 32);
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    out.extend_from_slice(json);
    out.extend_from_slice(b"}\n");
    out.freeze()
}

/// A response carrying one stored object.
pub(crate) fn object_response(code: StatusCode, stored: &Stored) -> http::Response<BoxBody> {
    json_response(code, stored.json.clone())
}

/// A list's `metadata`: `resourceVersion`, then `continue` and `remainingItemCount` when set.
pub(crate) fn list_meta(
    rv: u64,
    next: Option<&str>,
    remaining: Option<usize>,
) -> serde_json::Map<String, serde_json::Value> {
    let mut metadata = serde_json::Map::new();
    metadata.insert("resourceVersion".into(), rv.to_string().into());
    if let Some(next) = next {
        metadata.insert("continue".into(), next.into());
    }
    if let Some(remaining) = remaining {
        metadata.insert("remainingItemCount".into(), remaining.into());
    }
    metadata
}

/// `{"kind":"<Kind>List","apiVersion":..,"metadata":{..},"items":[`
pub(crate) fn list_head(
    kind: &str,
    api_version: &str,
    metadata: serde_json::Map<String, serde_json::Value>,
) -> Bytes {
    let head = format!(
        "{{\"kind\":{},\"apiVersion\":{},\"metadata\":{},\"items\":[",
        serde_json::Value::from(format!("{kind}List")),
        serde_json::Value::from(api_version),
        serde_json::Value::Object(metadata)
    );
    Bytes::from(head)
}

pub(crate) mod conversion;

#[cfg(test)]
#[path = "encoding_tests.rs"]
mod tests;
