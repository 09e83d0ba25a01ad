//! The protobuf envelope: the 4-byte magic `k8s\0`, then a `runtime.Unknown` message holding the
//! object's `apiVersion` and `kind` and its message bytes. Mirrors apimachinery
//! `runtime/serializer/protobuf/protobuf.go` (`Serializer.Decode` / `Encode`).

use prost_reflect::{DynamicMessage, ReflectMessage, Value as Proto};
use serde_json::Value;

use crate::descriptors::pool;
use crate::error::{CodecError, Result};
use crate::schema::KindSchema;

/// The media type of Kubernetes protobuf bodies.
pub const PROTOBUF_MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The 4 bytes every protobuf body starts with.
pub const MAGIC: [u8; 4] = *b"k8s\0";

const UNKNOWN: &str = "k8s.io.apimachinery.pkg.runtime.Unknown";

/// One `runtime.Unknown`: what the bytes after the magic say.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Envelope {
    /// `typeMeta.apiVersion`, e.g. `apps/v1`.
    pub api_version: String,
    /// `typeMeta.kind`, e.g. `Deployment`.
    pub kind: String,
    /// The object's message bytes.
    pub raw: Vec<u8>,
    /// Compression of `raw`; empty in everything Kubernetes writes.
    pub content_encoding: String,
    /// Media type of `raw`; empty means protobuf.
    pub content_type: String,
}

impl Envelope {
    /// Reads a whole protobuf body.
    ///
    /// # Errors
    /// [`CodecError::MissingMagic`] when the body lacks the prefix,
    /// [`CodecError::EnvelopeDecodeFailed`] when what follows is not a `runtime.Unknown`.
    pub fn decode(body: &[u8]) -> Result<Envelope> {
        let rest = body.strip_prefix(&MAGIC).ok_or(CodecError::MissingMagic)?;
        let descriptor = unknown_descriptor()?;
        let message = DynamicMessage::decode(descriptor, rest)
            .map_err(|e| CodecError::EnvelopeDecodeFailed(e.to_string()))?;
        let text = |name: &str| {
            message
                .get_field_by_name(name)
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        };
        let type_meta = message
            .get_field_by_name("typeMeta")
            .and_then(|v| v.as_message().cloned());
        let type_text = |name: &str| {
            type_meta
                .as_ref()
                .and_then(|m| m.get_field_by_name(name))
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        };
        Ok(Envelope {
            api_version: type_text("apiVersion"),
            kind: type_text("kind"),
            raw: message
                .get_field_by_name("raw")
                .and_then(|v| v.as_bytes().map(|b| b.to_vec()))
                .unwrap_or_default(),
            content_encoding: text("contentEncoding"),
            content_type: text("contentType"),
        })
    }

    /// Writes the magic and the envelope.
    pub fn encode(&self) -> Vec<u8> {
        let mut body = MAGIC.to_vec();
        let Ok(descriptor) = unknown_descriptor() else {
            return body;
        };
        let mut message = DynamicMessage::new(descriptor);
        if let Some(type_meta) = message.descriptor().get_field_by_name("typeMeta")
            && let Some(type_desc) = type_meta.kind().as_message().cloned()
        {
            let mut meta = DynamicMessage::new(type_desc);
            meta.set_field_by_name("apiVersion", Proto::String(self.api_version.clone()));
            meta.set_field_by_name("kind", Proto::String(self.kind.clone()));
            message.set_field(&type_meta, Proto::Message(meta));
        }
        message.set_field_by_name("raw", Proto::Bytes(self.raw.clone().into()));
        message.set_field_by_name(
            "contentEncoding",
            Proto::String(self.content_encoding.clone()),
        );
        message.set_field_by_name("contentType", Proto::String(self.content_type.clone()));
        body.extend(prost::Message::encode_to_vec(&message));
        body
    }
}

fn unknown_descriptor() -> Result<prost_reflect::MessageDescriptor> {
    pool()
        .get_message_by_name(UNKNOWN)
        .ok_or_else(|| CodecError::EnvelopeDecodeFailed(format!("{UNKNOWN} is not in the schema")))
}

/// Decodes a protobuf body of a built-in kind into its JSON object (with `apiVersion` and `kind`),
/// as a real API server reads a protobuf request body.
///
/// # Errors
/// Any [`CodecError`]; [`CodecError::UnknownKind`] (see [`CodecError::is_unknown_kind`]) when the
/// envelope names a kind without a protobuf form here, e.g. a custom resource.
pub fn decode_object(body: &[u8]) -> Result<Value> {
    decode_object_at(body, 0)
}

/// [`decode_object`] for an object embedded `depth` envelopes deep.
pub(crate) fn decode_object_at(body: &[u8], depth: u32) -> Result<Value> {
    let envelope = Envelope::decode(body)?;
    if !envelope.content_encoding.is_empty() {
        return Err(CodecError::UnsupportedEncoding(envelope.content_encoding));
    }
    let schema = KindSchema::lookup(&envelope.api_version, &envelope.kind).ok_or_else(|| {
        CodecError::UnknownKind {
            api_version: envelope.api_version.clone(),
            kind: envelope.kind.clone(),
        }
    })?;
    schema.decode_json_at(&envelope.raw, depth)
}

/// Encodes a JSON object of a built-in kind (its `apiVersion` and `kind` say which) as a protobuf
/// body, as client-go's protobuf serializer does.
///
/// # Errors
/// [`CodecError::UnknownKind`] for a kind without a protobuf form, [`CodecError::InvalidField`] for
/// a field that does not fit the schema.
pub fn encode_object(object: &Value) -> Result<Vec<u8>> {
    let text = |name: &str| object.get(name).and_then(Value::as_str).unwrap_or("");
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    let schema = KindSchema::lookup(api_version, kind).ok_or_else(|| CodecError::UnknownKind {
        api_version: api_version.to_string(),
        kind: kind.to_string(),
    })?;
    let envelope = Envelope {
        api_version: api_version.to_string(),
        kind: kind.to_string(),
        raw: schema.encode_json(object)?,
        content_encoding: String::new(),
        content_type: String::new(),
    };
    Ok(envelope.encode())
}

#[cfg(test)]
#[path = "envelope_tests.rs"]
mod tests;
