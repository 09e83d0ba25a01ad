//! The informer's local cache: a thread-safe map from key to object, plus secondary indices.
//!
//! Mirrors client-go `tools/cache/thread_safe_store.go` and `index.go` (`Indexer`,
//! `ThreadSafeStore`, `Indexers`, `MetaNamespaceIndexFunc`).
//!
//! # Why indices?
//! Controllers constantly ask "which Pods belong to this ReplicaSet" or "what is in namespace
//! `x`". Scanning every cached object for each question is O(n); an index function maps an
//! object to some values once, when it is stored, and the question becomes a hash lookup.

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

/// A thread-safe store of `Arc<K>` by [`ObjectKey`] with named indices kept in step with it.
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
///   (`InformerStats::index_panics`). Index functions must be deterministic (the old values
///   are recomputed to unfile an object).
pub struct Indexer<K> {
    inner: Arc<RwLock<Store<K>>>,
}

impl<K> Clone for Indexer<K> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

struct Store<K> {
    /// The cached objects. Invariant: each value's own key (`ObjectKey::of`) is its map key.
    items: KeyMap<Arc<K>>,
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
        }
    }
}

impl<K> Indexer<K> {
    /// Adds named index functions and indexes every object already stored.
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
            for (key, obj) in &store.items {
                for value in index_values(&store.panics, &name, &index_fn, key, obj) {
                    index.entry(value).or_default().insert(key.clone());
                }
            }
            store.indices.insert(name.clone(), index);
            store.indexers.insert(name, index_fn);
        }
        Ok(())
    }

    /// Stores `obj` under `key`, updating all indices; returns the previous object.
    pub fn insert(&self, key: ObjectKey, obj: Arc<K>) -> Option<Arc<K>> {
        self.inner.write().insert(key, obj)
    }

    /// Removes the object at `key` and its index entries; returns it if it was there.
    pub fn remove(&self, key: &str) -> Option<Arc<K>> {
        self.inner.write().remove(key)
    }

    /// Replaces the whole content with `items` and rebuilds every index.
    pub fn replace(&self, items: impl IntoIterator<Item = (ObjectKey, Arc<K>)>) {
        let mut store = self.inner.write();
        store.items = items.into_iter().collect();
        let Store {
            items,
            indexers,
            indices,
            panics,
            ..
        } = &mut *store;
        for (name, index_fn) in indexers.iter() {
            let index = indices.entry(name.clone()).or_default();
            index.clear();
            for (key, obj) in items.iter() {
                for value in index_values(panics, name, index_fn, key, obj) {
                    index.entry(value).or_default().insert(key.clone());
                }
            }
        }
    }

    /// The object stored at `key` (`namespace/name` or `name`).
    pub fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.inner.read().items.get(key).cloned()
    }

    /// Whether `key` is stored.
    pub fn contains_key(&self, key: &str) -> bool {
        self.inner.read().items.contains_key(key)
    }

    /// Every stored object, in no particular order.
    pub fn list(&self) -> Vec<Arc<K>> {
        self.inner.read().items.values().cloned().collect()
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
        let store = self.inner.read();
        let bucket = store.bucket(index, value)?;
        Ok(bucket
            .iter()
            .filter_map(|key| store.items.get(key).cloned())
            .collect())
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

    /// Runs `f` with the objects under a read lock, without copying them out.
    pub(crate) fn with_items<R>(&self, f: impl FnOnce(&KeyMap<Arc<K>>) -> R) -> R {
        f(&self.inner.read().items)
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
        for (key, obj) in &store.items {
            assert_eq!(
                &ObjectKey::of(obj.as_ref()),
                key,
                "item stored under a foreign key"
            );
        }
        for (name, index) in &store.indices {
            let index_fn = &store.indexers[name];
            for (value, keys) in index {
                assert!(!keys.is_empty(), "empty bucket {name}={value}");
                for key in keys {
                    let obj = store.items.get(key).expect("indexed key not stored");
                    assert!(
                        index_values(&scratch, name, index_fn, key, obj).contains(value),
                        "stale index entry {name}={value}: {key}"
                    );
                }
            }
            for (key, obj) in &store.items {
                for value in index_values(&scratch, name, index_fn, key, obj) {
                    assert!(
                        index.get(&value).is_some_and(|b| b.contains(key)),
                        "missing entry {key}"
                    );
                }
            }
        }
    }
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

    fn insert(&mut self, key: ObjectKey, obj: Arc<K>) -> Option<Arc<K>> {
        let old = self.items.insert(key.clone(), Arc::clone(&obj));
        self.update_indices(&key, old.as_deref(), Some(&obj));
        old
    }

    fn remove(&mut self, key: &str) -> Option<Arc<K>> {
        let (key, old) = self.items.remove_entry(key)?;
        self.update_indices(&key, Some(&old), None);
        Some(old)
    }

    /// Moves `key` from the buckets of `old` to those of `new`, touching only what changed.
    fn update_indices(&mut self, key: &ObjectKey, old: Option<&K>, new: Option<&K>) {
        for (name, index_fn) in &self.indexers {
            if name == NAMESPACE_INDEX
                && let (Some(namespace_of), Some(index)) =
                    (self.namespace_of, self.indices.get_mut(name))
            {
                update_namespace_index(index, key, old.map(namespace_of), new.map(namespace_of));
                continue;
            }
            let values = |obj: &K| index_values(&self.panics, name, index_fn, key, obj);
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
mod tests {
    use super::*;
    use crate::test_util::cm;

    fn by_label(label: &'static str) -> Indexers<k8s_openapi::api::core::v1::ConfigMap> {
        let f: IndexFn<_> = Arc::new(move |o: &k8s_openapi::api::core::v1::ConfigMap| {
            o.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(label))
                .cloned()
                .into_iter()
                .collect()
        });
        HashMap::from([(label.to_owned(), f)])
    }

    fn insert(
        idx: &Indexer<k8s_openapi::api::core::v1::ConfigMap>,
        obj: k8s_openapi::api::core::v1::ConfigMap,
    ) {
        let obj = Arc::new(obj);
        idx.insert(ObjectKey::of(obj.as_ref()), obj);
        idx.check_invariants();
    }

    #[test]
    fn namespace_index_is_built_in() {
        let idx = Indexer::new();
        insert(&idx, cm("a", "one", "1"));
        insert(&idx, cm("b", "two", "1"));
        insert(&idx, cm("a", "three", "1"));
        let mut names: Vec<_> = idx
            .index_keys(NAMESPACE_INDEX, "a")
            .unwrap()
            .iter()
            .map(|k| k.to_string())
            .collect();
        names.sort();
        assert_eq!(names, ["a/one", "a/three"]);
        assert_eq!(idx.by_index(NAMESPACE_INDEX, "b").unwrap().len(), 1);
    }

    #[test]
    fn cluster_scoped_objects_stay_out_of_namespace_index() {
        let idx = Indexer::new();
        insert(&idx, cm("", "node-config", "1"));
        insert(&idx, cm("", "node-config", "2"));
        assert!(idx.index_values(NAMESPACE_INDEX).is_empty());
        assert!(idx.remove("node-config").is_some());
        idx.check_invariants();
    }

    #[test]
    fn update_moves_object_between_buckets() {
        let idx = Indexer::new();
        idx.add_indexers(by_label("app")).unwrap();
        insert(
            &idx,
            crate::test_util::labeled(cm("ns", "x", "1"), "app", "web"),
        );
        insert(
            &idx,
            crate::test_util::labeled(cm("ns", "x", "2"), "app", "db"),
        );
        assert!(idx.index_keys("app", "web").unwrap().is_empty());
        assert_eq!(
            idx.index_keys("app", "db").unwrap(),
            [ObjectKey::from("ns/x")]
        );
        assert_eq!(idx.index_values("app"), ["db"]);
    }

    #[test]
    fn remove_drops_index_entries() {
        let idx = Indexer::new();
        idx.add_indexers(by_label("app")).unwrap();
        insert(
            &idx,
            crate::test_util::labeled(cm("ns", "x", "1"), "app", "web"),
        );
        assert!(idx.remove("ns/x").is_some());
        idx.check_invariants();
        assert!(idx.index_values("app").is_empty());
        assert!(idx.index_values(NAMESPACE_INDEX).is_empty());
        assert!(idx.remove("ns/x").is_none());
    }

    #[test]
    fn add_indexers_after_start_indexes_existing_items() {
        let idx = Indexer::new();
        insert(
            &idx,
            crate::test_util::labeled(cm("ns", "x", "1"), "app", "web"),
        );
        insert(&idx, cm("ns", "y", "1"));
        idx.add_indexers(by_label("app")).unwrap();
        idx.check_invariants();
        assert_eq!(
            idx.index_keys("app", "web").unwrap(),
            [ObjectKey::from("ns/x")]
        );
    }

    #[test]
    fn add_indexers_rejects_taken_name() {
        let idx: Indexer<k8s_openapi::api::core::v1::ConfigMap> = Indexer::new();
        idx.add_indexers(by_label("app")).unwrap();
        assert!(
            matches!(idx.add_indexers(by_label("app")), Err(Error::IndexerConflict { name }) if name == "app")
        );
    }

    #[test]
    fn add_indexers_with_a_taken_name_adds_none_of_them() {
        let idx = Indexer::new();
        idx.add_indexers(by_label("app")).unwrap();
        insert(
            &idx,
            crate::test_util::labeled(cm("ns", "x", "1"), "tier", "web"),
        );
        let mut both = by_label("tier");
        both.extend(by_label("app"));
        assert!(
            matches!(idx.add_indexers(both), Err(Error::IndexerConflict { name }) if name == "app")
        );
        assert!(matches!(
            idx.by_index("tier", "web"),
            Err(Error::IndexNotFound { .. })
        ));
        idx.check_invariants();
        assert!(
            idx.index_keys("app", "web").unwrap().is_empty(),
            "still there"
        );
    }

    #[test]
    fn panicking_index_fn_leaves_the_object_out_of_that_index_only() {
        let panics = Arc::new(PanicCounters::default());
        let idx = Indexer::with_panic_counters(Arc::clone(&panics));
        let picky: IndexFn<k8s_openapi::api::core::v1::ConfigMap> = Arc::new(|o| {
            let name = o.metadata.name.clone().unwrap_or_default();
            assert_ne!(name, "bad", "index bug");
            vec![name]
        });
        idx.add_indexers(HashMap::from([("name".to_owned(), picky)]))
            .unwrap();
        insert(&idx, cm("ns", "good", "1"));
        insert(&idx, cm("ns", "bad", "1"));
        assert_eq!(panics.snapshot().index_panics, 1);
        assert!(idx.get_by_key("ns/bad").is_some(), "stored");
        assert_eq!(idx.index_keys(NAMESPACE_INDEX, "ns").unwrap().len(), 2);
        assert_eq!(idx.index_values("name"), ["good"]);
        assert!(idx.remove("ns/bad").is_some());
        idx.check_invariants();
        assert_eq!(panics.snapshot().index_panics, 2, "unfiling recomputes");
    }

    #[test]
    fn unknown_index_is_an_error() {
        let idx: Indexer<k8s_openapi::api::core::v1::ConfigMap> = Indexer::new();
        assert!(matches!(
            idx.by_index("nope", "x"),
            Err(Error::IndexNotFound { .. })
        ));
    }

    #[test]
    fn replace_rebuilds_content_and_indices() {
        let idx = Indexer::new();
        idx.add_indexers(by_label("app")).unwrap();
        insert(
            &idx,
            crate::test_util::labeled(cm("ns", "old", "1"), "app", "web"),
        );
        let fresh = Arc::new(crate::test_util::labeled(cm("ns", "new", "2"), "app", "db"));
        idx.replace([(ObjectKey::of(fresh.as_ref()), fresh)]);
        idx.check_invariants();
        assert_eq!(idx.list_keys(), [ObjectKey::from("ns/new")]);
        assert!(idx.index_keys("app", "web").unwrap().is_empty());
    }
}
