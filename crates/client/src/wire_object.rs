//! One object's bytes as the server sent them, for a cache that keeps bytes instead of objects.
//!
//! client-go's informers keep decoded Go objects (`tools/cache/thread_safe_store.go`), which are
//! compact; k8s-openapi's decoded objects are not, so `kubegen-cache`'s byte-backed store keeps
//! each object's own slice of the list response or watch event (see its `store_mode.rs`) and
//! decodes it on read. This module is the client's half: the bytes
//! ([`ResourceClient::list_each_with_bytes`](crate::ResourceClient::list_each_with_bytes),
//! [`WatchStream::next_with_bytes`](crate::WatchStream::next_with_bytes)) and the decoder that
//! turns them back into the object the list or watch decoded from them.
//!
//! # Reading only the head
//! A byte-backed cache needs, of each arriving object, only its key, resourceVersion and labels;
//! the rest it keeps as bytes and decodes when someone reads it. [`ObjectHead`] is an object seen
//! as only those fields: the lists and watches that hand out bytes decode each item as an
//! `ObjectHead` ([`ResourceClient::list_each_head_with_bytes`](crate::ResourceClient::list_each_head_with_bytes),
//! [`WatchStream::next_head_with_bytes`](crate::WatchStream::next_head_with_bytes)) instead of as
//! the k8s-openapi type, so an object is not decoded in full on arrival. Both decoders skip what
//! the type does not declare without decoding it: serde_json parses past an unknown JSON field,
//! and the protobuf walker (`kubegen_codec`) steps over an unknown field's record by its length
//! (a `managedFields` entry, a ConfigMap's `data`, a Deployment's `spec`). ObjectMeta is field 1
//! of every top-level kind in `k8s.io/api`'s `generated.proto`, with `name` 1, `namespace` 3,
//! `resourceVersion` 6 and `labels` 11; the walker finds them by the same schema the full decode
//! uses, so the head and the full object can never disagree.

use std::collections::BTreeMap;

use kubegen_codec::{CodecError, ProtoKind};
use serde::Deserialize;
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

/// An object seen as only the metadata fields a byte-backed cache reads on arrival (see the
/// module docs): everything else in the object is skipped, not decoded.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct ObjectHead {
    /// The object's `metadata`, as far as it is read.
    #[serde(default)]
    pub metadata: HeadMeta,
}

/// The fields of `ObjectMeta` an [`ObjectHead`] reads; the others are skipped.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct HeadMeta {
    /// `metadata.name`.
    #[serde(default)]
    pub name: Option<String>,
    /// `metadata.namespace` (`None` for a cluster-scoped object).
    #[serde(default)]
    pub namespace: Option<String>,
    /// `metadata.resourceVersion`.
    #[serde(default)]
    pub resource_version: Option<String>,
    /// `metadata.labels`.
    #[serde(default)]
    pub labels: Option<BTreeMap<String, String>>,
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

#[cfg(test)]
#[path = "wire_object_tests.rs"]
mod tests;
