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
//! The bytes are the object encoded by the informer's [`WireCodec`], which its
//! [`ListWatch`](crate::ListWatch) supplies. The one codec today is JSON: the object is encoded
//! once on arrival, after its transform, so the stored bytes are always of the transformed
//! object (a `strip_managed_fields` informer stores no managedFields).
//!
//! Keeping the bytes the server sent instead (protobuf for built-in kinds, about a third of the
//! JSON), with no encode where no transform is set, is the next step and not done: the store
//! takes any bytes its codec decodes, but they do not reach it yet. Where they are: a JSON list
//! item is `bytes[..byte_offset]` of the chunk in `kubegen_client`'s `list_decoder.rs` fast path
//! (or its `capture` buffer); a protobuf list item is the bare message `value` in
//! `kubegen_codec`'s `ListDecoder::list_step` (decoded with `ProtoKind::decode`); a protobuf watch
//! event's object is `WatchFrame::object`, a whole `k8s\0` envelope (`from_body`); a JSON watch
//! event is its whole line. They would then travel with the object through the `DeltaFifo`, whose
//! `Delta`s carry only the `Arc<K>` today. Copying each item's own bytes out of the chunk is
//! better for a long-lived cache than a `Bytes` slice of it, which would keep the whole chunk
//! alive as long as any one of its objects is unchanged.
//!
//! # When to pick which
//! - `Decoded`: reads cost a hash lookup and an `Arc` clone; memory is the decoded objects.
//! - `Bytes`: memory is the encoded objects (a JSON ConfigMap is a fraction of its decoded
//!   k8s-openapi form), every read of an object not in the small recently-decoded cache decodes
//!   it, and every update decodes the old state once for the handlers' `on_update`.

use std::{error::Error as StdError, fmt};

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

/// Turns objects into the bytes a byte-backed store keeps, and those bytes back into objects.
pub struct WireCodec<K> {
    encode: fn(&K) -> Result<Vec<u8>, CodecError>,
    decode: fn(&[u8]) -> Result<K, CodecError>,
}

impl<K> Clone for WireCodec<K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K> Copy for WireCodec<K> {}

impl<K> fmt::Debug for WireCodec<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WireCodec")
    }
}

impl<K: Serialize + DeserializeOwned> WireCodec<K> {
    /// JSON, through the object's serde implementation: what a GET in JSON returns decodes to
    /// the same value, so a round trip keeps every field (managedFields included).
    pub fn json() -> Self {
        Self {
            encode: |obj| serde_json::to_vec(obj).map_err(Into::into),
            decode: |bytes| serde_json::from_slice(bytes).map_err(Into::into),
        }
    }
}

impl<K> WireCodec<K> {
    /// A codec of two functions; `decode(encode(obj))` must equal `obj`.
    pub fn new(
        encode: fn(&K) -> Result<Vec<u8>, CodecError>,
        decode: fn(&[u8]) -> Result<K, CodecError>,
    ) -> Self {
        Self { encode, decode }
    }

    /// The bytes of `obj`.
    ///
    /// # Errors
    /// Whatever the codec's encoder reports.
    pub fn encode(&self, obj: &K) -> Result<Vec<u8>, CodecError> {
        (self.encode)(obj)
    }

    /// The object `bytes` encode.
    ///
    /// # Errors
    /// Whatever the codec's decoder reports.
    pub fn decode(&self, bytes: &[u8]) -> Result<K, CodecError> {
        (self.decode)(bytes)
    }
}
