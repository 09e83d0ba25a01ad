//! One cached object as the [`Indexer`](crate::Indexer) holds it: decoded, or encoded with what
//! the cache reads without decoding it, and the bounded cache of recently decoded objects.
//!
//! client-go's `tools/cache/thread_safe_store.go` stores decoded objects only; the encoded form
//! is kubegen's [`StoreMode::Bytes`](crate::StoreMode) (see `store_mode.rs` for why).
//!
//! # What is kept beside the bytes
//! Only what the store reads on every change or every `list`, computed once when the object
//! arrives: its resourceVersion (a relist tells resyncs from updates by it), its labels (for
//! label selectors) and its values in each user index (to unfile it on the next change without
//! decoding the old state), laid out with the bytes in one allocation ([`Encoded`], see
//! `encoded.rs`). The key is the map key, and the namespace index reads the namespace from it.
//!
//! # The recently decoded objects
//! An `lru::LruCache` of `decoded_cache` (see `StoreMode::Bytes`) entries, keyed by object key
//! and holding the encoded entry it was decoded from, so a read validates it against the entry
//! now stored (pointer equality) and a decode that raced with an update can never serve the
//! older state. We use the `lru` crate (a small, widely used, maintained O(1) LRU) rather than
//! writing the linked hash map ourselves. Objects that arrive are put in it too: the worker that
//! a handler wakes reads the object it was notified about without decoding it.

use std::{
    borrow::Cow,
    collections::BTreeMap,
    num::NonZeroUsize,
    panic::{AssertUnwindSafe, catch_unwind},
    sync::Arc,
};

use kube_core::Resource;
use lru::LruCache;
use parking_lot::Mutex;

use crate::{
    encoded::{Encoded, Parts},
    error::Error,
    health::panic_message,
    key::ObjectKey,
    store_mode::{StoreMode, WireBytes, WireCodec, WireItem},
};

/// The recently decoded objects: key → (the entry decoded, the object).
type Recent<K> = LruCache<ObjectKey, (Encoded, Arc<K>)>;

/// A cached object.
pub(crate) enum Stored<K> {
    /// Kept decoded ([`StoreMode::Decoded`], or an object the codec could not encode).
    Decoded(Arc<K>),
    /// Kept as bytes ([`StoreMode::Bytes`]).
    Encoded(Encoded),
}

impl<K> Clone for Stored<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Decoded(obj) => Self::Decoded(Arc::clone(obj)),
            Self::Encoded(enc) => Self::Encoded(enc.clone()),
        }
    }
}

impl<K: Resource> Stored<K> {
    /// The object's `metadata.resourceVersion` (empty when unset), read without decoding.
    pub(crate) fn resource_version(&self) -> &str {
        match self {
            Self::Decoded(obj) => obj.meta().resource_version.as_deref().unwrap_or_default(),
            Self::Encoded(enc) => enc.resource_version(),
        }
    }

    /// The object's labels, borrowed when decoded, rebuilt from the kept pairs when encoded.
    pub(crate) fn labels(&self) -> Cow<'_, BTreeMap<String, String>> {
        static NO_LABELS: BTreeMap<String, String> = BTreeMap::new();
        match self {
            Self::Decoded(obj) => Cow::Borrowed(obj.meta().labels.as_ref().unwrap_or(&NO_LABELS)),
            Self::Encoded(enc) => {
                let mut labels = enc.labels().peekable();
                if labels.peek().is_none() {
                    return Cow::Borrowed(&NO_LABELS);
                }
                Cow::Owned(labels.map(|(k, v)| (k.to_owned(), v.to_owned())).collect())
            }
        }
    }
}

/// An object as it arrives from the list-watch, before the store makes it an entry.
pub(crate) enum Arrived<K> {
    /// Decoded (and transformed), with the bytes it was decoded from when the list-watch kept
    /// them.
    Object(Arc<K>, Option<WireBytes>),
    /// Its bytes and the metadata read from them, not decoded (see `store_mode.rs`).
    Wire(WireItem),
}

impl<K: Resource> Arrived<K> {
    /// The object's key.
    pub(crate) fn key(&self) -> ObjectKey {
        match self {
            Self::Object(obj, _) => ObjectKey::of(obj.as_ref()),
            Self::Wire(item) => ObjectKey::new(item.namespace.as_deref(), &item.name),
        }
    }
}

/// The byte-backed half of an indexer: its codec and its recently decoded objects.
pub(crate) struct ByteStore<K> {
    codec: WireCodec<K>,
    /// `None` when the capacity is 0.
    recent: Option<Mutex<Recent<K>>>,
}

impl<K> ByteStore<K> {
    /// The byte-backed store of `mode` with `codec`; `None` for [`StoreMode::Decoded`].
    pub(crate) fn for_mode(mode: StoreMode, codec: WireCodec<K>) -> Option<Self> {
        match mode {
            StoreMode::Decoded => None,
            StoreMode::Bytes { decoded_cache } => Some(Self {
                codec,
                recent: NonZeroUsize::new(decoded_cache).map(|n| Mutex::new(LruCache::new(n))),
            }),
        }
    }

    /// How many decoded objects are kept at most.
    pub(crate) fn capacity(&self) -> usize {
        self.recent
            .as_ref()
            .map_or(0, |recent| recent.lock().cap().get())
    }

    /// Keeps `obj` (which arrived under `key`) as `wire`, the bytes it was decoded from, or
    /// encoded when there are none, with its index values `filed`, and remembers it as recently
    /// decoded. An object the codec cannot encode is kept decoded (logged): the cache never
    /// drops what the server sent.
    pub(crate) fn encode(
        &self,
        key: &ObjectKey,
        obj: Arc<K>,
        filed: Vec<(String, Vec<String>)>,
        wire: Option<WireBytes>,
    ) -> Stored<K>
    where
        K: Resource,
    {
        let encoded = match wire {
            Some(WireBytes::Json(bytes)) => self.entry(key, &obj, &bytes, false, &filed),
            Some(WireBytes::Protobuf(bytes)) => self.entry(key, &obj, &bytes, true, &filed),
            None => match catch_unwind(AssertUnwindSafe(|| self.codec.encode(&obj))) {
                Ok(Ok(bytes)) => self.entry(key, &obj, &bytes, false, &filed),
                Ok(Err(err)) => {
                    tracing::error!(%key, error = %err, "object does not encode; kept decoded");
                    None
                }
                Err(panic) => {
                    let panic = panic_message(panic.as_ref());
                    tracing::error!(%key, panic, "encoder panicked; object kept decoded");
                    None
                }
            },
        };
        let Some(encoded) = encoded else {
            return Stored::Decoded(obj);
        };
        self.remember(key, &encoded, &obj);
        Stored::Encoded(encoded)
    }

    /// Keeps `item` (which arrived under `key`) as its bytes, with the metadata read from them
    /// and no index values (the indexer files an entry in its user indexes when it stores it,
    /// see `Store::complete`). An entry too large to lay out is kept decoded; `None` (logged)
    /// when it does not decode either.
    pub(crate) fn wire_entry(&self, key: &ObjectKey, item: WireItem) -> Option<Stored<K>> {
        let (bytes, protobuf) = match &item.bytes {
            WireBytes::Json(bytes) => (bytes, false),
            WireBytes::Protobuf(bytes) => (bytes, true),
        };
        let parts = Parts {
            resource_version: &item.resource_version,
            labels: item.labels.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            filed: &[],
        };
        let err = match Encoded::new(bytes, protobuf, parts) {
            Ok(encoded) => return Some(Stored::Encoded(encoded)),
            Err(err) => err,
        };
        tracing::error!(%key, error = %err, "object kept decoded");
        match self.codec.decode(bytes, protobuf) {
            Ok(obj) => Some(Stored::Decoded(Arc::new(obj))),
            Err(err) => {
                tracing::error!(%key, error = %err, "object does not decode; skipped");
                None
            }
        }
    }

    /// The entry of `obj` (under `key`) as `bytes`, with its index values `filed`; `None`
    /// (logged) when a part is too large to lay out.
    fn entry(
        &self,
        key: &ObjectKey,
        obj: &K,
        bytes: &[u8],
        protobuf: bool,
        filed: &[(String, Vec<String>)],
    ) -> Option<Encoded>
    where
        K: Resource,
    {
        let meta = obj.meta();
        let parts = Parts {
            resource_version: meta.resource_version.as_deref().unwrap_or_default(),
            labels: meta
                .labels
                .iter()
                .flatten()
                .map(|(k, v)| (k.as_str(), v.as_str())),
            filed,
        };
        Encoded::new(bytes, protobuf, parts)
            .map_err(|err| tracing::error!(%key, error = %err, "object kept decoded"))
            .ok()
    }

    /// The object `encoded` (stored under `key`) holds: the recently decoded one when it was
    /// decoded from this very entry, else decoded now.
    ///
    /// # Errors
    /// [`Error::Undecodable`] naming the key, when the bytes do not decode.
    pub(crate) fn decode(&self, key: &ObjectKey, encoded: &Encoded) -> Result<Arc<K>, Error> {
        if let Some(recent) = &self.recent
            && let Some((from, obj)) = recent.lock().get(key)
            && from.same(encoded)
        {
            return Ok(Arc::clone(obj));
        }
        let obj = self
            .codec
            .decode(encoded.bytes(), encoded.is_protobuf())
            .map_err(|source| Error::Undecodable {
                key: key.to_string(),
                source,
            })?;
        let obj = Arc::new(obj);
        self.remember(key, encoded, &obj);
        Ok(obj)
    }

    fn remember(&self, key: &ObjectKey, encoded: &Encoded, obj: &Arc<K>) {
        if let Some(recent) = &self.recent {
            recent
                .lock()
                .put(key.clone(), (encoded.clone(), Arc::clone(obj)));
        }
    }
}

/// An object on its way to an event handler: decoded, or a cached entry that the handler's own
/// task decodes just before calling it. A handler's buffer then holds what the cache holds (an
/// `Arc` of the same entry), not a decoded copy: a first list of 60,000 objects that outruns a
/// handler would otherwise wait in its buffer decoded.
pub(crate) enum Pending<K> {
    /// Decoded already (a decoded store, or the initial adds of a new handler).
    Decoded(Arc<K>),
    /// `entry`, stored under `key`, decoded by `bytes` on delivery.
    Entry {
        /// The object's key.
        key: ObjectKey,
        /// The entry as the indexer stored it.
        entry: Stored<K>,
        /// The store's codec and recently decoded objects.
        bytes: Option<Arc<ByteStore<K>>>,
    },
}

impl<K> Clone for Pending<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Decoded(obj) => Self::Decoded(Arc::clone(obj)),
            Self::Entry { key, entry, bytes } => Self::Entry {
                key: key.clone(),
                entry: entry.clone(),
                bytes: bytes.clone(),
            },
        }
    }
}

impl<K> From<Arc<K>> for Pending<K> {
    fn from(obj: Arc<K>) -> Self {
        Self::Decoded(obj)
    }
}

impl<K: Resource> Pending<K> {
    /// The object's key, for logs.
    pub(crate) fn key(&self) -> ObjectKey {
        match self {
            Self::Decoded(obj) => ObjectKey::of(obj.as_ref()),
            Self::Entry { key, .. } => key.clone(),
        }
    }

    /// The object, decoded now when it is an encoded entry.
    ///
    /// # Errors
    /// [`Error::Undecodable`] naming the key.
    pub(crate) fn object(&self) -> Result<Arc<K>, Error> {
        match self {
            Self::Decoded(obj) => Ok(Arc::clone(obj)),
            Self::Entry { key, entry, bytes } => object_of(bytes.as_deref(), key, entry),
        }
    }
}

/// `stored`'s object, decoding it with `bytes` when it is encoded.
///
/// # Errors
/// [`Error::Undecodable`] naming the key; also when an encoded entry meets an indexer without a
/// codec, which the indexer's construction rules out.
pub(crate) fn object_of<K>(
    bytes: Option<&ByteStore<K>>,
    key: &ObjectKey,
    stored: &Stored<K>,
) -> Result<Arc<K>, Error> {
    match (stored, bytes) {
        (Stored::Decoded(obj), _) => Ok(Arc::clone(obj)),
        (Stored::Encoded(encoded), Some(bytes)) => bytes.decode(key, encoded),
        (Stored::Encoded(_), None) => Err(Error::Undecodable {
            key: key.to_string(),
            source: "an encoded entry in a store without a codec".into(),
        }),
    }
}

#[cfg(test)]
#[path = "stored_tests.rs"]
mod tests;
