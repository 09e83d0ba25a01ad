//! How an informer keeps its objects: decoded (the default) or as bytes, decoded on read.
//!
//! client-go has one store shape (`tools/cache/thread_safe_store.go` holds decoded Go objects),
//! but Go's decoded objects are compact: `managedFields[].fieldsV1` stays raw bytes and maps are
//! small. k8s-openapi's are not (a `serde_json::Value` tree per `fieldsV1`, a B-tree leaf per
//! label map), and its types are what every Rust operator reads, so kubegen keeps them and
//! instead stops keeping every object decoded: [`StoreMode::Bytes`] stores each object as bytes
//! plus what the cache itself reads (key, resourceVersion, labels, index values) and decodes an
//! object only when someone reads it.
//!
//! # Which bytes
//! The object's own bytes as the server sent them ([`WireBytes`]): its slice of the JSON list
//! response or watch event, or its protobuf message (built-in kinds read in protobuf, the
//! client's default), copied out of the response as it arrives, never re-encoded. Its
//! [`WireCodec`] decodes them. The queue holds the bytes with what the cache reads without
//! decoding them (key, resourceVersion, labels, index values), in one allocation per object
//! (`encoded.rs`), and each handler's task decodes the entry just before calling the handler. A
//! first list therefore waits in the queue, and in a lagging handler's buffer, as bytes.
//!
//! # One decode per object, not two
//! A list-watch that can ([`ListWatch::hands_out_wire_items`](crate::ListWatch::hands_out_wire_items),
//! as `ClientListWatch` does) hands each object over as a [`WireItem`]: its
//! bytes and the four metadata fields the cache needs on arrival (name, namespace,
//! resourceVersion, labels), read from the bytes with everything else skipped, not decoded
//! (`kubegen_client::ObjectHead`). The only full decode of an object is then the one in each
//! handler's task (none when the handler is past the recently decoded cache's reach: a read
//! decodes it later). Without that, the list-watch decodes each object in full
//! (`list_each_with_bytes`, `next_event_with_bytes`), the reflector takes those fields from it
//! and drops it, and the handlers decode it again.
//!
//! The object is still decoded once on arrival when the informer has indexers beyond the
//! namespace index: a custom index function needs the typed object, and its values are computed
//! on arrival so that the next change can unfile the object without decoding the old state.
//!
//! Two cases encode instead: an informer with a transform (e.g. `strip_managed_fields`) stores
//! the transformed object, encoded as JSON by the codec (decode, transform, re-encode); and a
//! list-watch that does not hand out bytes (the trait's default) gets its objects encoded.
//! Each copy is the item's own allocation: a `Bytes` slice of the response chunk would keep
//! the whole chunk alive as long as any one of its objects is unchanged.
//!
//! # When to pick which
//! - `Decoded`: reads cost a hash lookup and an `Arc` clone; memory is the decoded objects.
//! - `Bytes`: memory is the encoded objects (a JSON ConfigMap is a fraction of its decoded
//!   k8s-openapi form), every read of an object not in the small recently-decoded cache decodes
//!   it, and every update decodes the old state once for the handlers' `on_update`.

use std::{collections::BTreeMap, error::Error as StdError, fmt, sync::Arc};

use serde::{Serialize, de::DeserializeOwned};

/// How many recently decoded objects a byte-backed store keeps by default.
pub const DEFAULT_DECODED_CACHE: usize = 256;

/// How an informer stores its objects; see the module docs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StoreMode {
    /// Objects are kept decoded, shared as `Arc<K>` with every reader (client-go's shape).
    #[default]
    Decoded,
    /// Objects are kept encoded and decoded on read.
    Bytes {
        /// How many recently decoded (or arrived) objects are kept decoded, so that a
        /// reconcile that reads the same object twice decodes it once. `0`: none.
        decoded_cache: usize,
    },
}

impl StoreMode {
    /// [`StoreMode::Bytes`] with the default [`DEFAULT_DECODED_CACHE`].
    pub fn bytes() -> Self {
        Self::Bytes {
            decoded_cache: DEFAULT_DECODED_CACHE,
        }
    }
}

/// The error of an encode or a decode.
pub type CodecError = Box<dyn StdError + Send + Sync>;

/// One object's bytes as the server sent them (see the module docs): a byte-backed informer
/// stores these, unless a transform changed the object (then it encodes the transformed one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireBytes {
    /// The object's JSON, which [`WireCodec::json`]'s decoder decodes.
    Json(Box<[u8]>),
    /// The object's protobuf message, which the codec's
    /// [`with_protobuf`](WireCodec::with_protobuf) decoder decodes.
    Protobuf(Box<[u8]>),
}

/// An arriving object as its bytes and the metadata a byte-backed store reads on arrival, read
/// from the bytes without decoding the rest (see the module docs). A list-watch that hands these
/// out ([`ListWatch::list_each_wire`](crate::ListWatch::list_each_wire)) spares the informer a
/// full decode of every object it receives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireItem {
    /// `metadata.namespace` (`None` or empty for a cluster-scoped object).
    pub namespace: Option<String>,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.resourceVersion` (empty when unset).
    pub resource_version: String,
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// The object's bytes, which the list-watch's [`WireCodec`] decodes into the whole object.
    pub bytes: WireBytes,
}

/// A decoder of protobuf bytes.
type ProtobufDecode<K> = Arc<dyn Fn(&[u8]) -> Result<K, CodecError> + Send + Sync>;

/// Turns objects into the bytes a byte-backed store keeps, and those bytes back into objects.
pub struct WireCodec<K> {
    encode: fn(&K) -> Result<Vec<u8>, CodecError>,
    decode: fn(&[u8]) -> Result<K, CodecError>,
    /// Decodes [`WireBytes::Protobuf`]; `None`: the list-watch never hands out protobuf.
    protobuf: Option<ProtobufDecode<K>>,
}

impl<K> Clone for WireCodec<K> {
    fn clone(&self) -> Self {
        Self {
            encode: self.encode,
            decode: self.decode,
            protobuf: self.protobuf.clone(),
        }
    }
}

impl<K> fmt::Debug for WireCodec<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WireCodec")
            .field("protobuf", &self.protobuf.is_some())
            .finish_non_exhaustive()
    }
}

impl<K: Serialize + DeserializeOwned> WireCodec<K> {
    /// JSON, through the object's serde implementation: what a GET in JSON returns decodes to
    /// the same value, so a round trip keeps every field (managedFields included).
    pub fn json() -> Self {
        Self {
            encode: |obj| serde_json::to_vec(obj).map_err(Into::into),
            decode: |bytes| serde_json::from_slice(bytes).map_err(Into::into),
            protobuf: None,
        }
    }
}

impl<K> WireCodec<K> {
    /// A codec of two functions; `decode(encode(obj))` must equal `obj`.
    pub fn new(
        encode: fn(&K) -> Result<Vec<u8>, CodecError>,
        decode: fn(&[u8]) -> Result<K, CodecError>,
    ) -> Self {
        Self {
            encode,
            decode,
            protobuf: None,
        }
    }

    /// The same codec, decoding [`WireBytes::Protobuf`] with `decode`, which must give the
    /// object the list-watch decoded from the same bytes.
    pub fn with_protobuf(
        mut self,
        decode: impl Fn(&[u8]) -> Result<K, CodecError> + Send + Sync + 'static,
    ) -> Self {
        self.protobuf = Some(Arc::new(decode));
        self
    }

    /// The bytes of `obj`.
    ///
    /// # Errors
    /// Whatever the codec's encoder reports.
    pub fn encode(&self, obj: &K) -> Result<Vec<u8>, CodecError> {
        (self.encode)(obj)
    }

    /// The object `bytes` encode: protobuf when `protobuf`, else what [`encode`](Self::encode)
    /// writes (JSON for [`json`](Self::json)).
    ///
    /// # Errors
    /// Whatever the decoder reports; protobuf bytes to a codec without a protobuf decoder.
    pub fn decode(&self, bytes: &[u8], protobuf: bool) -> Result<K, CodecError> {
        match (protobuf, &self.protobuf) {
            (false, _) => (self.decode)(bytes),
            (true, Some(decode)) => decode(bytes),
            (true, None) => Err("protobuf bytes, and no protobuf decoder".into()),
        }
    }
}
