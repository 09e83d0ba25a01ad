//! The informer's local cache: a thread-safe map from key to object, plus secondary indices.
//!
//! Mirrors client-go `tools/cache/thread_safe_store.go` and `index.go` (`Indexer`,
//! `ThreadSafeStore`, `Indexers`, `MetaNamespaceIndexFunc`).
//!
//! # Why indices?
//! Controllers constantly ask "which Pods belong to this ReplicaSet" or "what is in namespace
//! `x`". Scanning every cached object for each question is O(n); an index function maps an
//! object to some values once, when it is stored, and the question becomes a hash lookup.
//!
//! # Decoded or bytes
//! An informer's indexer stores objects as its [`StoreMode`](crate::StoreMode) says (see
//! `stored.rs` for what a byte-backed entry keeps). Both shapes answer the same reads with the
//! same `Arc<K>`s; a byte-backed one decodes them on read.

use std::{
    borrow::Borrow,
    collections::HashMap,
    panic::{AssertUnwindSafe, catch_unwind},
    sync::Arc,
};

use kube_core::Resource;
use parking_lot::RwLock;

use crate::{
    error::Error,
    health::{PanicCounters, panic_message},
    key::{KeyHasher, KeyMap, KeySet, ObjectKey},
    store_mode::WireBytes,
    stored::{Arrived, ByteStore, Pending, Stored, object_of},
};

/// One index: index value → the keys of the objects that have it.
type Index = HashMap<String, KeySet, KeyHasher>;

/// Name of the index that every [`Indexer`] has: object → its namespace.
pub const NAMESPACE_INDEX: &str = "namespace";

/// An index function: the values under which an object is filed in one named index.
/// Return an empty `Vec` to leave the object out of that index.
pub type IndexFn<K> = Arc<dyn Fn(&K) -> Vec<String> + Send + Sync>;

/// Named index functions, as passed to [`Indexer::add_indexers`].
pub type Indexers<K> = HashMap<String, IndexFn<K>>;

impl Borrow<str> for ObjectKey {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

/// A thread-safe store of objects by [`ObjectKey`] with named indices kept in step with it.
///
/// Cloning an `Indexer` clones a handle: all clones see the same data.
///
/// # Guarantees
/// - An object and all its index entries change under one write lock: a reader never sees an
///   object that its indices do not (yet) point to, or the reverse.
/// - `add_indexers` may be called at any time; existing objects are indexed immediately. It is
///   all or nothing: if one name is taken, it fails naming it, and neither the new indices nor
///   any registered before are touched.
/// - The built-in [`NAMESPACE_INDEX`] files namespaced objects under their namespace.
/// - An index function that panics is caught: the object is stored, but filed under no value
///   of that one index; the panic is logged with the object's key and index name, and counted
///   (`InformerStats::index_panics`). In a decoded store, index functions must be
///   deterministic (the old values are recomputed to unfile an object); a byte-backed store
///   runs them once per arriving object and keeps the values.
/// - In a byte-backed store, reads decode: an entry that does not decode is an
///   [`Error::Undecodable`] naming its key from [`try_get_by_key`](Self::try_get_by_key), and is
///   logged and left out by the infallible reads. Nothing panics.
pub struct Indexer<K> {
    inner: Arc<RwLock<Store<K>>>,
    /// Set in a byte-backed store: its codec and its recently decoded objects.
    bytes: Option<Arc<ByteStore<K>>>,
}

impl<K> Clone for Indexer<K> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
            bytes: self.bytes.clone(),
        }
    }
}

struct Store<K> {
    /// The cached objects. Invariant: each value's own key (`ObjectKey::of`) is its map key; an
    /// entry is `Encoded` only in a byte-backed store.
    items: KeyMap<Stored<K>>,
    /// Index functions by index name. Invariant: same names as `indices`.
    indexers: HashMap<String, IndexFn<K>>,
    /// Reads the namespace without allocating; set by `Indexer::new` for the built-in index.
    namespace_of: Option<fn(&K) -> Option<&str>>,
    /// index name → index value → keys. Invariants: a key is in bucket `v` of index `i` exactly
    /// when `indexers[i](items[key])` contains `v`; buckets are never empty.
    indices: HashMap<String, Index>,
    /// Where caught index-function panics are counted (shared with the informer).
    panics: Arc<PanicCounters>,
}

impl<K: Resource + Send + Sync + 'static> Default for Indexer<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Resource + Send + Sync + 'static> Indexer<K> {
    /// An empty store with only the built-in namespace index.
    pub fn new() -> Self {
        Self::with_panic_counters(Arc::default())
    }

    /// [`new`](Self::new), counting caught index-function panics in `panics`.
    pub(crate) fn with_panic_counters(panics: Arc<PanicCounters>) -> Self {
        Self::with_store(panics, None)
    }

    /// An empty store, byte-backed when `bytes` is set, counting index panics in `panics`.
    pub(crate) fn with_store(panics: Arc<PanicCounters>, bytes: Option<ByteStore<K>>) -> Self {
        let namespace: IndexFn<K> =
            Arc::new(|obj: &K| obj.meta().namespace.iter().cloned().collect());
        let store = Store {
            items: KeyMap::default(),
            indexers: HashMap::from([(NAMESPACE_INDEX.to_owned(), namespace)]),
            namespace_of: Some(|obj: &K| obj.meta().namespace.as_deref()),
            indices: HashMap::from([(NAMESPACE_INDEX.to_owned(), Index::default())]),
            panics,
        };
        Self {
            inner: Arc::new(RwLock::new(store)),
            bytes: bytes.map(Arc::new),
        }
    }
}

impl<K> Indexer<K> {
    /// Adds named index functions and indexes every object already stored (a byte-backed
    /// store decodes each once for this).
    ///
    /// # Errors
    /// [`Error::IndexerConflict`] naming the first taken name (in sorted order); then nothing
    /// is added and every index registered before stays as it was.
    pub fn add_indexers(&self, indexers: Indexers<K>) -> Result<(), Error> {
        let mut store = self.inner.write();
        // Validate every name before registering any: all or nothing.
        if let Some(name) = indexers
            .keys()
            .filter(|name| store.indexers.contains_key(*name))
            .min()
        {
            return Err(Error::IndexerConflict { name: name.clone() });
        }
        for (name, index_fn) in indexers {
            let mut index = Index::default();
            let mut refiled = Vec::new();
            for (key, stored) in &store.items {
                let values = match stored {
                    Stored::Decoded(obj) => index_values(&store.panics, &name, &index_fn, key, obj),
                    Stored::Encoded(encoded) => {
                        let values = match self.object(key, stored) {
                            Ok(obj) => index_values(&store.panics, &name, &index_fn, key, &obj),
                            Err(err) => {
                                log_undecodable(&err);
                                Vec::new()
                            }
                        };
                        match encoded.with_filed(&name, values.clone()) {
                            Ok(entry) => refiled.push((key.clone(), Stored::Encoded(entry))),
                            Err(err) => {
                                tracing::error!(%key, error = %err, index = %name, "object not filed in the new index")
                            }
                        }
                        values
                    }
                };
                for value in values {
                    index.entry(value).or_default().insert(key.clone());
                }
            }
            store.items.extend(refiled);
            store.indices.insert(name.clone(), index);
            store.indexers.insert(name, index_fn);
        }
        Ok(())
    }

    /// Stores `obj` under `key`, updating all indices; returns the previous object (decoded
    /// from a byte-backed store; `None` if that fails, which is logged).
    pub fn insert(&self, key: ObjectKey, obj: Arc<K>) -> Option<Arc<K>>
    where
        K: Resource,
    {
        let (_, old) = self.insert_stored(key.clone(), Stored::Decoded(obj));
        old.and_then(|old| {
            self.object(&key, &old)
                .map_err(|e| log_undecodable(&e))
                .ok()
        })
    }

    /// What an object arriving under `key` is queued and stored as: itself in a decoded store;
    /// in a byte-backed one its bytes (those it was decoded from, or encoded when there are
    /// none), its labels, resourceVersion and its values in every user index, computed now, so
    /// a decoded object can be dropped once the caller is done with it. `None` (logged) for an
    /// object that cannot be kept: a wire item whose bytes a decoded store cannot decode.
    pub(crate) fn arriving(&self, key: &ObjectKey, arrived: Arrived<K>) -> Option<Stored<K>>
    where
        K: Resource,
    {
        self.inner
            .read()
            .stored(self.bytes.as_deref(), key, arrived)
    }

    /// Whether an arriving object must be decoded to be filed: the store has an index beyond
    /// the namespace index (a custom index function reads the typed object).
    pub(crate) fn has_user_indexers(&self) -> bool {
        let store = self.inner.read();
        store
            .indexers
            .keys()
            .any(|name| !store.is_namespace_index(name))
    }

    /// Whether this store keeps bytes (its arriving objects' [`WireBytes`] are worth having).
    pub(crate) fn keeps_bytes(&self) -> bool {
        self.bytes.is_some()
    }

    /// Stores `entry` under `key`, updating all indices. Returns the entry as stored (a decoded
    /// object in a byte-backed store is encoded first, see [`arriving`](Self::arriving)) and the
    /// entry it replaced, neither decoded.
    pub(crate) fn insert_stored(
        &self,
        key: ObjectKey,
        entry: Stored<K>,
    ) -> (Stored<K>, Option<Stored<K>>)
    where
        K: Resource,
    {
        let mut store = self.inner.write();
        let entry = store.complete(self.bytes.as_deref(), &key, entry);
        let old = store.insert(key, entry.clone());
        (entry, old)
    }

    /// `entry` (stored under `key`) as a handler will receive it: decoded on delivery.
    pub(crate) fn pending(&self, key: &ObjectKey, entry: Stored<K>) -> Pending<K> {
        match entry {
            Stored::Decoded(obj) => Pending::Decoded(obj),
            entry => Pending::Entry {
                key: key.clone(),
                entry,
                bytes: self.bytes.clone(),
            },
        }
    }

    /// The object `entry` (stored under `key`) holds: decoded from a byte-backed entry.
    ///
    /// # Errors
    /// [`Error::Undecodable`] naming the key when a byte-backed entry does not decode.
    pub(crate) fn decode(&self, key: &ObjectKey, entry: &Stored<K>) -> Result<Arc<K>, Error> {
        self.object(key, entry)
    }

    /// Removes the object at `key` and its index entries; returns it if it was there.
    pub fn remove(&self, key: &str) -> Option<Arc<K>> {
        let (key, old) = self.inner.write().remove(key)?;
        self.object(&key, &old)
            .map_err(|e| log_undecodable(&e))
            .ok()
    }

    /// Removes the object at `key` and its index entries without decoding it; returns whether
    /// it was there.
    pub(crate) fn discard(&self, key: &str) -> bool {
        self.inner.write().remove(key).is_some()
    }

    /// Replaces the whole content with `items` and rebuilds every index.
    pub fn replace(&self, items: impl IntoIterator<Item = (ObjectKey, Arc<K>)>)
    where
        K: Resource,
    {
        let mut store = self.inner.write();
        let bytes = self.bytes.as_deref();
        let items: KeyMap<Stored<K>> = items
            .into_iter()
            .map(|(key, obj)| {
                let stored = store.stored_object(bytes, &key, obj, None);
                (key, stored)
            })
            .collect();
        let mut indices = HashMap::with_capacity(store.indexers.len());
        for (name, index_fn) in &store.indexers {
            let mut index = Index::default();
            for (key, stored) in &items {
                for value in store.values_of(name, index_fn, key, stored) {
                    index.entry(value).or_default().insert(key.clone());
                }
            }
            indices.insert(name.clone(), index);
        }
        store.items = items;
        store.indices = indices;
    }

    /// The object stored at `key` (`namespace/name` or `name`); `None` also when a
    /// byte-backed entry does not decode (logged; see [`try_get_by_key`](Self::try_get_by_key)).
    pub fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.try_get_by_key(key).unwrap_or_else(|err| {
            log_undecodable(&err);
            None
        })
    }

    /// The object stored at `key`, or `None` when there is none.
    ///
    /// # Errors
    /// [`Error::Undecodable`] naming the key when a byte-backed entry does not decode.
    pub fn try_get_by_key(&self, key: &str) -> Result<Option<Arc<K>>, Error> {
        let entry = {
            let store = self.inner.read();
            store
                .items
                .get_key_value(key)
                .map(|(key, stored)| (key.clone(), stored.clone()))
        };
        entry
            .map(|(key, stored)| self.object(&key, &stored))
            .transpose()
    }

    /// Whether `key` is stored.
    pub fn contains_key(&self, key: &str) -> bool {
        self.inner.read().items.contains_key(key)
    }

    /// Every stored object, in no particular order.
    pub fn list(&self) -> Vec<Arc<K>> {
        self.objects_where(|_, _| true)
    }

    /// Every stored key, in no particular order.
    pub fn list_keys(&self) -> Vec<ObjectKey> {
        self.inner.read().items.keys().cloned().collect()
    }

    /// Number of stored objects.
    pub fn len(&self) -> usize {
        self.inner.read().items.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.inner.read().items.is_empty()
    }

    /// The objects filed under `value` in the index `index`.
    ///
    /// # Errors
    /// [`Error::IndexNotFound`] if no index has that name.
    pub fn by_index(&self, index: &str, value: &str) -> Result<Vec<Arc<K>>, Error> {
        self.objects_by_index_where(index, value, |_| true)
    }

    /// The keys filed under `value` in the index `index`.
    ///
    /// # Errors
    /// [`Error::IndexNotFound`] if no index has that name.
    pub fn index_keys(&self, index: &str, value: &str) -> Result<Vec<ObjectKey>, Error> {
        let store = self.inner.read();
        Ok(store.bucket(index, value)?.iter().cloned().collect())
    }

    /// Every value that currently has objects in the index `index` (empty for an unknown index).
    pub fn index_values(&self, index: &str) -> Vec<String> {
        let store = self.inner.read();
        store
            .indices
            .get(index)
            .map(|i| i.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// How many decoded objects a byte-backed store keeps at most (`None`: a decoded store).
    pub fn decoded_cache_capacity(&self) -> Option<usize> {
        self.bytes.as_deref().map(ByteStore::capacity)
    }

    /// The entries `keep` accepts, copied out under the read lock (cheap: `Arc`s).
    pub(crate) fn entries_where(
        &self,
        mut keep: impl FnMut(&ObjectKey, &Stored<K>) -> bool,
    ) -> Vec<(ObjectKey, Stored<K>)> {
        let store = self.inner.read();
        store
            .items
            .iter()
            .filter(|(key, stored)| keep(key, stored))
            .map(|(key, stored)| (key.clone(), stored.clone()))
            .collect()
    }

    /// The objects `keep` accepts (decoded outside the lock; see [`Copied`]).
    pub(crate) fn objects_where(
        &self,
        mut keep: impl FnMut(&ObjectKey, &Stored<K>) -> bool,
    ) -> Vec<Arc<K>> {
        let copied: Vec<Copied<K>> = {
            let store = self.inner.read();
            store
                .items
                .iter()
                .filter(|(key, stored)| keep(key, stored))
                .map(Copied::out)
                .collect()
        };
        self.resolve(copied)
    }

    /// The objects under `value` in `index` that `keep` accepts.
    ///
    /// # Errors
    /// [`Error::IndexNotFound`] if no index has that name.
    pub(crate) fn objects_by_index_where(
        &self,
        index: &str,
        value: &str,
        mut keep: impl FnMut(&Stored<K>) -> bool,
    ) -> Result<Vec<Arc<K>>, Error> {
        let copied: Vec<Copied<K>> = {
            let store = self.inner.read();
            let bucket = store.bucket(index, value)?;
            bucket
                .iter()
                .filter_map(|key| store.items.get_key_value(key))
                .filter(|(_, stored)| keep(stored))
                .map(Copied::out)
                .collect()
        };
        Ok(self.resolve(copied))
    }

    /// Each copied entry's object, decoding the encoded ones; those that do not decode are
    /// logged and left out.
    fn resolve(&self, copied: Vec<Copied<K>>) -> Vec<Arc<K>> {
        copied
            .into_iter()
            .filter_map(|entry| match entry {
                Copied::Ready(obj) => Some(obj),
                Copied::Pending(key, stored) => match self.object(&key, &stored) {
                    Ok(obj) => Some(obj),
                    Err(err) => {
                        log_undecodable(&err);
                        None
                    }
                },
            })
            .collect()
    }

    fn object(&self, key: &ObjectKey, stored: &Stored<K>) -> Result<Arc<K>, Error> {
        object_of(self.bytes.as_deref(), key, stored)
    }

    #[cfg(test)]
    pub(crate) fn check_invariants(&self)
    where
        K: Resource,
    {
        let store = self.inner.read();
        // Recomputing must not count as the informer's panics.
        let scratch = PanicCounters::default();
        assert_eq!(
            store
                .indexers
                .keys()
                .collect::<std::collections::HashSet<_>>(),
            store
                .indices
                .keys()
                .collect::<std::collections::HashSet<_>>()
        );
        let objects: Vec<(ObjectKey, Arc<K>)> = store
            .items
            .iter()
            .map(|(key, stored)| (key.clone(), self.object(key, stored).expect("decodes")))
            .collect();
        for (key, obj) in &objects {
            assert_eq!(
                &ObjectKey::of(obj.as_ref()),
                key,
                "item stored under a foreign key"
            );
            if self.bytes.is_none() {
                assert!(
                    matches!(store.items[key], Stored::Decoded(_)),
                    "encoded in a decoded store"
                );
            }
        }
        for (name, index) in &store.indices {
            let index_fn = &store.indexers[name];
            let expected =
                |key: &ObjectKey, obj: &K| index_values(&scratch, name, index_fn, key, obj);
            for (value, keys) in index {
                assert!(!keys.is_empty(), "empty bucket {name}={value}");
                for key in keys {
                    let (_, obj) = objects
                        .iter()
                        .find(|(k, _)| k == key)
                        .expect("indexed key not stored");
                    assert!(
                        expected(key, obj).contains(value),
                        "stale index entry {name}={value}: {key}"
                    );
                }
            }
            for (key, obj) in &objects {
                for value in expected(key, obj) {
                    assert!(
                        index.get(&value).is_some_and(|b| b.contains(key)),
                        "missing entry {key}"
                    );
                }
            }
        }
    }
}

/// Logs a read that skipped an undecodable entry, with the decoder's reason.
/// An entry copied out under the read lock for a reader. A decoded object is ready as it is;
/// any other keeps its key for the decode that follows once the lock is released. Only that
/// case copies the key: a decoded store's `by_index` of a ReplicaSet's 1,000 Pods is 1,000
/// `Arc` clones, not also 1,000 key strings allocated and dropped (about 8 % of the
/// `nodes-scale` profile with 30,000 Pods, docs/performance.md).
enum Copied<K> {
    Ready(Arc<K>),
    Pending(ObjectKey, Stored<K>),
}

impl<K> Copied<K> {
    fn out((key, stored): (&ObjectKey, &Stored<K>)) -> Self {
        match stored {
            Stored::Decoded(obj) => Copied::Ready(Arc::clone(obj)),
            Stored::Encoded(_) => Copied::Pending(key.clone(), stored.clone()),
        }
    }
}

fn log_undecodable(err: &Error) {
    let source = std::error::Error::source(err).map(ToString::to_string);
    tracing::error!(error = %err, source, "cached object left out of a read");
}

/// The built-in namespace index, without allocating: every object passes here on every
/// change, so this is the hot path of the indexer. `old`/`new` are `None` when there is no old
/// or new object, `Some(None)` for a cluster-scoped one.
fn update_namespace_index(
    index: &mut Index,
    key: &ObjectKey,
    old: Option<Option<&str>>,
    new: Option<Option<&str>>,
) {
    if old.is_some() && old == new {
        return; // an update within the same namespace
    }
    if let Some(Some(ns)) = old
        && let Some(bucket) = index.get_mut(ns)
    {
        bucket.remove(key);
        if bucket.is_empty() {
            index.remove(ns);
        }
    }
    if let Some(Some(ns)) = new {
        match index.get_mut(ns) {
            Some(bucket) => drop(bucket.insert(key.clone())),
            None => drop(index.insert(ns.to_owned(), KeySet::from_iter([key.clone()]))),
        }
    }
}

/// `index_fn(obj)`, or no values if it panics (logged with `key` and `index`, counted).
fn index_values<K>(
    panics: &PanicCounters,
    index: &str,
    index_fn: &IndexFn<K>,
    key: &ObjectKey,
    obj: &K,
) -> Vec<String> {
    match catch_unwind(AssertUnwindSafe(|| index_fn(obj))) {
        Ok(values) => values,
        Err(panic) => {
            panics.index.inc();
            tracing::error!(index, %key, panic = panic_message(panic.as_ref()), "index function panicked; object left out of this index");
            Vec::new()
        }
    }
}

/// The namespace `stored` (under `key`) is filed under: from the object when decoded, from the
/// key when encoded (the same, by the store's invariant).
fn namespace_in<'a, K>(
    namespace_of: fn(&K) -> Option<&str>,
    key: &'a ObjectKey,
    stored: &'a Stored<K>,
) -> Option<&'a str> {
    match stored {
        Stored::Decoded(obj) => namespace_of(obj),
        Stored::Encoded(_) => key.namespace(),
    }
}

impl<K> Store<K> {
    fn bucket(&self, index: &str, value: &str) -> Result<&KeySet, Error> {
        static EMPTY: std::sync::OnceLock<KeySet> = std::sync::OnceLock::new();
        let index = self
            .indices
            .get(index)
            .ok_or_else(|| Error::IndexNotFound {
                name: index.to_owned(),
            })?;
        Ok(index
            .get(value)
            .unwrap_or_else(|| EMPTY.get_or_init(KeySet::default)))
    }

    /// What an object arriving under `key` is stored as: see
    /// [`stored_object`](Self::stored_object); a wire item is kept as its bytes and filed in the
    /// user indexes when it is stored ([`complete`](Self::complete)). `None` (logged) for a
    /// wire item that cannot be kept.
    fn stored(
        &self,
        bytes: Option<&ByteStore<K>>,
        key: &ObjectKey,
        arrived: Arrived<K>,
    ) -> Option<Stored<K>>
    where
        K: Resource,
    {
        match (arrived, bytes) {
            (Arrived::Object(obj, wire), _) => Some(self.stored_object(bytes, key, obj, wire)),
            (Arrived::Wire(item), Some(bytes)) => bytes.wire_entry(key, item),
            (Arrived::Wire(_), None) => {
                tracing::error!(%key, "object handed over as bytes to a decoded store; skipped");
                None
            }
        }
    }

    /// What `obj`, arriving under `key` (decoded from `wire`, when set), is stored as: itself in
    /// a decoded store; in a byte-backed one its bytes, with its values in every user index
    /// computed now.
    fn stored_object(
        &self,
        bytes: Option<&ByteStore<K>>,
        key: &ObjectKey,
        obj: Arc<K>,
        wire: Option<WireBytes>,
    ) -> Stored<K>
    where
        K: Resource,
    {
        let Some(bytes) = bytes else {
            return Stored::Decoded(obj);
        };
        let filed = self
            .indexers
            .iter()
            .filter(|(name, _)| !self.is_namespace_index(name))
            .map(|(name, index_fn)| {
                let values = index_values(&self.panics, name, index_fn, key, &obj);
                (name.clone(), values)
            })
            .collect();
        bytes.encode(key, obj, filed, wire)
    }

    /// `entry` ready to be stored under `key`: a decoded object in a byte-backed store is
    /// encoded ([`stored`](Self::stored)); an encoded one that arrived before an index was added
    /// is filed in it now (decoding it once).
    fn complete(&self, bytes: Option<&ByteStore<K>>, key: &ObjectKey, entry: Stored<K>) -> Stored<K>
    where
        K: Resource,
    {
        let (encoded, bytes) = match (entry, bytes) {
            (Stored::Decoded(obj), Some(_)) => return self.stored_object(bytes, key, obj, None),
            (Stored::Encoded(encoded), Some(bytes)) => (encoded, bytes),
            (entry, _) => return entry,
        };
        let missing: Vec<&String> = self
            .indexers
            .keys()
            .filter(|name| !self.is_namespace_index(name) && !encoded.is_filed(name))
            .collect();
        if missing.is_empty() {
            return Stored::Encoded(encoded);
        }
        let obj = match bytes.decode(key, &encoded) {
            Ok(obj) => obj,
            Err(err) => {
                log_undecodable(&err);
                return Stored::Encoded(encoded);
            }
        };
        let mut refiled = encoded;
        for name in missing {
            let values = index_values(&self.panics, name, &self.indexers[name], key, &obj);
            match refiled.with_filed(name, values) {
                Ok(entry) => refiled = entry,
                Err(err) => {
                    tracing::error!(%key, error = %err, index = %name, "object not filed in the index")
                }
            }
        }
        Stored::Encoded(refiled)
    }

    /// Whether `name` is the built-in namespace index, which reads no index function.
    fn is_namespace_index(&self, name: &str) -> bool {
        name == NAMESPACE_INDEX && self.namespace_of.is_some()
    }

    /// The values of `stored` (under `key`) in the index `name`: computed for a decoded entry,
    /// kept for an encoded one.
    fn values_of(
        &self,
        name: &str,
        index_fn: &IndexFn<K>,
        key: &ObjectKey,
        stored: &Stored<K>,
    ) -> Vec<String> {
        match (stored, self.namespace_of) {
            (_, Some(namespace_of)) if name == NAMESPACE_INDEX => {
                namespace_in(namespace_of, key, stored)
                    .map(str::to_owned)
                    .into_iter()
                    .collect()
            }
            (Stored::Decoded(obj), _) => index_values(&self.panics, name, index_fn, key, obj),
            (Stored::Encoded(encoded), _) => encoded.filed(name),
        }
    }

    fn insert(&mut self, key: ObjectKey, stored: Stored<K>) -> Option<Stored<K>> {
        let old = self.items.insert(key.clone(), stored.clone());
        self.update_indices(&key, old.as_ref(), Some(&stored));
        old
    }

    fn remove(&mut self, key: &str) -> Option<(ObjectKey, Stored<K>)> {
        let (key, old) = self.items.remove_entry(key)?;
        self.update_indices(&key, Some(&old), None);
        Some((key, old))
    }

    /// Moves `key` from the buckets of `old` to those of `new`, touching only what changed.
    fn update_indices(
        &mut self,
        key: &ObjectKey,
        old: Option<&Stored<K>>,
        new: Option<&Stored<K>>,
    ) {
        for (name, index_fn) in &self.indexers {
            if name == NAMESPACE_INDEX
                && let (Some(namespace_of), Some(index)) =
                    (self.namespace_of, self.indices.get_mut(name))
            {
                let old = old.map(|stored| namespace_in(namespace_of, key, stored));
                let new = new.map(|stored| namespace_in(namespace_of, key, stored));
                update_namespace_index(index, key, old, new);
                continue;
            }
            let values = |stored: &Stored<K>| match stored {
                Stored::Decoded(obj) => index_values(&self.panics, name, index_fn, key, obj),
                Stored::Encoded(encoded) => encoded.filed(name),
            };
            let old_values = old.map(values).unwrap_or_default();
            let new_values = new.map(values).unwrap_or_default();
            if old.is_some() && new.is_some() && old_values == new_values {
                continue; // the common update: nothing indexed changed
            }
            let Some(index) = self.indices.get_mut(name) else {
                continue;
            };
            for value in old_values.iter().filter(|v| !new_values.contains(v)) {
                if let Some(bucket) = index.get_mut(value) {
                    bucket.remove(key);
                    if bucket.is_empty() {
                        index.remove(value);
                    }
                }
            }
            for value in new_values {
                index.entry(value).or_default().insert(key.clone());
            }
        }
    }
}

#[cfg(test)]
#[path = "indexer_tests.rs"]
mod tests;
