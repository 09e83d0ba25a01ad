//! One object's bytes as the server sent them, for a cache that keeps bytes instead of objects.
//!
//! client-go's informers keep decoded Go objects (`tools/cache/thread_safe_store.go`), which are
//! compact; k8s-openapi's decoded objects are not, so `kubegen-cache`'s byte-backed store keeps
//! each object's own slice of the list response or watch event (see its `store_mode.rs`) and
//! decodes it on read. This module is the client's half: the bytes
//! ([`ResourceClient::list_each_with_bytes`](crate::ResourceClient::list_each_with_bytes),
//! [`WatchStream::next_with_bytes`](crate::WatchStream::next_with_bytes)) and the decoder that
//! turns them back into the object the list or watch decoded from them.

use kubegen_codec::{CodecError, ProtoKind};
use serde::de::DeserializeOwned;

use crate::error::{Error, Result, excerpt};

/// One object's bytes, copied out of a list response or a watch event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireObject {
    /// The object's JSON, as it appeared in the response.
    Json(Box<[u8]>),
    /// The object's protobuf message (a list's `items` element, or a watch event object's
    /// envelope `raw`), without the `k8s\0` envelope.
    Protobuf(Box<[u8]>),
}

impl WireObject {
    /// The bytes, whatever their encoding.
    pub fn bytes(&self) -> &[u8] {
        match self {
            Self::Json(bytes) | Self::Protobuf(bytes) => bytes,
        }
    }
}

/// Decodes a [`WireObject`] of one resource client into the object its list or watch decoded
/// from the same bytes. Obtained from
/// [`ResourceClient::wire_decoder`](crate::ResourceClient::wire_decoder).
#[derive(Clone, Copy, Debug)]
pub struct WireDecoder {
    /// The kind's protobuf messages, when its reads ask for protobuf.
    pub(crate) proto: Option<ProtoKind>,
}

impl WireDecoder {
    /// Decodes JSON bytes.
    ///
    /// # Errors
    /// [`Error::Decode`] when they do not decode as `K`.
    pub fn decode_json<K: DeserializeOwned>(bytes: &[u8]) -> Result<K> {
        serde_json::from_slice(bytes).map_err(|source| Error::Decode {
            what: "cached object".into(),
            excerpt: excerpt(bytes),
            source,
        })
    }

    /// Decodes protobuf message bytes as the kind's list items are decoded.
    ///
    /// # Errors
    /// [`Error::ProtobufDecode`] when they do not decode, or when this client's kind has no
    /// protobuf form (it never hands out such bytes).
    pub fn decode_protobuf<K: DeserializeOwned>(&self, bytes: &[u8]) -> Result<K> {
        let decoded = match self.proto {
            Some(proto) => proto.decode(bytes),
            None => Err(CodecError::InvalidField {
                path: String::new(),
                reason: "protobuf bytes for a kind read as JSON".into(),
            }),
        };
        decoded.map_err(|source| Error::ProtobufDecode {
            what: "cached object".into(),
            source,
        })
    }

    /// Decodes `object`.
    ///
    /// # Errors
    /// As [`decode_json`](Self::decode_json) and [`decode_protobuf`](Self::decode_protobuf).
    pub fn decode<K: DeserializeOwned>(&self, object: &WireObject) -> Result<K> {
        match object {
            WireObject::Json(bytes) => Self::decode_json(bytes),
            WireObject::Protobuf(bytes) => self.decode_protobuf(bytes),
        }
    }
}
