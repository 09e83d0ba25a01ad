//! Writing protobuf lists and watch streams, as a real API server answers `list` and `watch` of a
//! built-in kind (or of `PartialObjectMetadata`) when the client accepts
//! `application/vnd.kubernetes.protobuf`.
//!
//! Mirrors apimachinery `runtime/serializer/protobuf` (`Serializer.Encode` for a list,
//! `RawSerializer` plus `LengthDelimitedFramer` for a watch stream) and apiserver
//! `endpoints/handlers/watch.go` (each event a `metav1.WatchEvent` whose object is a whole
//! `k8s\0` envelope).
//!
//! # Wire shapes (read off kube-apiserver 1.15 and 1.36; fixtures under `tests/fixtures/`)
//! - A list is one envelope (`typeMeta` = the list's `apiVersion` and `XxxList`) whose message is
//!   `metadata` (`ListMeta`, field 1) followed by one `items` field (2) per object. Items carry no
//!   `apiVersion`/`kind` of their own. [`ListEncoder`] writes it item by item, so a server can
//!   stream a long list without building the whole message.
//! - A watch stream (`Content-Type: application/vnd.kubernetes.protobuf;stream=watch`) is frames of
//!   a 4-byte big-endian length, then a `WatchEvent` message *without* magic or envelope:
//!   `type` (1) and `object` (2, a `RawExtension` whose `raw` is the object's whole `k8s\0` body).
//!
//! # Differences from kube-apiserver
//! Go's generated marshallers write every non-pointer field, zero or not (`generateName: ""` as
//! `1a 00`); this encoder writes what the JSON has. A Go decoder reads an absent non-pointer field
//! as its zero value, so both decode to the same object, but the bytes are not identical.

use prost::Message;
use prost::bytes::BufMut;
use prost::encoding::{WireType, encode_key, encode_varint};
use prost_reflect::{FieldDescriptor, MessageDescriptor};
use serde_json::Value;

use crate::descriptors::pool;
use crate::envelope::{Envelope, encode_object};
use crate::error::{CodecError, Result};
use crate::from_json;
use crate::schema::KindSchema;

/// The media type of a protobuf watch stream.
pub const PROTOBUF_WATCH_MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf;stream=watch";

const WATCH_EVENT: &str = "k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent";

/// Writes one `XxxList` body: [`ListEncoder::new`] with the list's metadata, then
/// [`ListEncoder::item`] per object, then [`ListEncoder::finish`].
#[derive(Debug)]
pub struct ListEncoder {
    api_version: String,
    list_kind: String,
    items: FieldDescriptor,
    item_message: MessageDescriptor,
    raw: Vec<u8>,
}

impl ListEncoder {
    /// Starts the list `list_kind` (e.g. `ConfigMapList`, `PartialObjectMetadataList`) of
    /// `api_version`, with `metadata` the JSON `ListMeta` (`resourceVersion`, `continue`,
    /// `remainingItemCount`).
    ///
    /// # Errors
    /// [`CodecError::UnknownKind`] when the list kind has no protobuf form,
    /// [`CodecError::InvalidField`] for metadata that does not fit `ListMeta`.
    pub fn new(api_version: &str, list_kind: &str, metadata: &Value) -> Result<ListEncoder> {
        let unknown = || CodecError::UnknownKind {
            api_version: api_version.to_string(),
            kind: list_kind.to_string(),
        };
        let schema = KindSchema::lookup(api_version, list_kind).ok_or_else(unknown)?;
        let descriptor = pool()
            .get_message_by_name(schema.message_name())
            .ok_or_else(unknown)?;
        let field = |name: &str| descriptor.get_field_by_name(name).ok_or_else(unknown);
        let (meta_field, items) = (field("metadata")?, field("items")?);
        let meta_message = meta_field
            .kind()
            .as_message()
            .cloned()
            .ok_or_else(unknown)?;
        let item_message = items.kind().as_message().cloned().ok_or_else(unknown)?;
        let mut raw = Vec::new();
        let meta = from_json::object(&meta_message, metadata)
            .map_err(|e| prefixed("metadata", e))?
            .encode_to_vec();
        put_bytes(&mut raw, meta_field.number(), &meta);
        Ok(ListEncoder {
            api_version: api_version.to_string(),
            list_kind: list_kind.to_string(),
            items,
            item_message,
            raw,
        })
    }

    /// Appends one object (its `apiVersion` and `kind`, if any, are left out, as in Go's lists).
    ///
    /// # Errors
    /// [`CodecError::InvalidField`] for a field of the object that does not fit its schema; the
    /// list is unchanged then.
    pub fn item(&mut self, object: &Value) -> Result<()> {
        let message = from_json::object(&self.item_message, object)?.encode_to_vec();
        put_bytes(&mut self.raw, self.items.number(), &message);
        Ok(())
    }

    /// The whole body: magic, envelope, list message.
    pub fn finish(self) -> Vec<u8> {
        Envelope {
            api_version: self.api_version,
            kind: self.list_kind,
            raw: self.raw,
            content_encoding: String::new(),
            content_type: String::new(),
        }
        .encode()
    }
}

/// One watch frame: the 4-byte big-endian length, then the `WatchEvent` of `event_type`
/// (`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, `ERROR`) carrying `object`, a JSON object of a
/// built-in kind (or a `Status`, or `PartialObjectMetadata`) with its `apiVersion` and `kind`.
///
/// # Errors
/// As [`encode_object`] for the object.
pub fn encode_watch_frame(event_type: &str, object: &Value) -> Result<Vec<u8>> {
    watch_frame_of(event_type, &encode_object(object)?)
}

/// [`encode_watch_frame`] of an object already encoded by [`encode_object`]: a server that
/// sends one object version to many watchers encodes it once.
///
/// # Errors
/// Only for a frame over 4 GiB.
pub fn watch_frame_of(event_type: &str, body: &[u8]) -> Result<Vec<u8>> {
    let event = watch_event(event_type, body)?;
    let length = u32::try_from(event.len())
        .map_err(|_| CodecError::field("", "a watch event is larger than 4 GiB"))?;
    let mut frame = Vec::with_capacity(event.len() + 4);
    frame.put_u32(length);
    frame.extend_from_slice(&event);
    Ok(frame)
}

/// The `WatchEvent` message bytes for an already encoded object body.
fn watch_event(event_type: &str, body: &[u8]) -> Result<Vec<u8>> {
    let descriptor = pool()
        .get_message_by_name(WATCH_EVENT)
        .ok_or_else(|| CodecError::field("", format!("{WATCH_EVENT} is not in the schema")))?;
    let number = |name: &str| {
        descriptor
            .get_field_by_name(name)
            .map(|f| f.number())
            .ok_or_else(|| CodecError::field(name, "not a field of WatchEvent"))
    };
    let (type_field, object_field) = (number("type")?, number("object")?);
    // RawExtension has one field, `raw` (1).
    let mut extension = Vec::with_capacity(body.len() + 8);
    put_bytes(&mut extension, 1, body);
    let mut event = Vec::with_capacity(extension.len() + event_type.len() + 8);
    put_bytes(&mut event, type_field, event_type.as_bytes());
    put_bytes(&mut event, object_field, &extension);
    Ok(event)
}

/// Appends a length-delimited field.
fn put_bytes(out: &mut Vec<u8>, number: u32, bytes: &[u8]) {
    encode_key(number, WireType::LengthDelimited, out);
    encode_varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}

fn prefixed(prefix: &str, error: CodecError) -> CodecError {
    match error {
        CodecError::InvalidField { path, reason } if path.is_empty() => {
            CodecError::field(prefix, reason)
        }
        CodecError::InvalidField { path, reason } => {
            CodecError::field(&format!("{prefix}.{path}"), reason)
        }
        other => other,
    }
}

#[cfg(test)]
#[path = "stream_encode_tests.rs"]
mod tests;
