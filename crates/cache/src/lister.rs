//! Read access to an informer's cache, the way a controller's workers use it.
//!
//! Mirrors client-go `tools/cache/listers.go` (`GenericLister`, `GenericNamespaceLister`); the
//! generated typed listers (`WhiteListLister`, ...) wrap this type.
//!
//! # Why read from a lister, not the API server?
//! The informer already holds the latest state it has seen of every object. Reading it costs a
//! hash lookup and no API server load, which matters when a controller reconciles thousands of
//! objects. The price: the cache may lag the server slightly. Controllers tolerate this because
//! any newer change will trigger another reconcile.

use std::{collections::BTreeMap, sync::Arc};

use kube_core::{Resource, Selector, SelectorExt};

use crate::indexer::{Indexer, NAMESPACE_INDEX};

/// Lists and gets cached objects of one type. Cheap to clone.
///
/// Objects are `Arc<K>`: shared with the cache and immutable. To modify one, `clone()` the `K`.
pub struct Lister<K> {
    indexer: Indexer<K>,
}

impl<K> Clone for Lister<K> {
    fn clone(&self) -> Self {
        Self {
            indexer: self.indexer.clone(),
        }
    }
}

fn labels_match<K: Resource>(selector: &Selector, obj: &K) -> bool {
    static NO_LABELS: BTreeMap<String, String> = BTreeMap::new();
    selector.matches(obj.meta().labels.as_ref().unwrap_or(&NO_LABELS))
}

impl<K: Resource> Lister<K> {
    /// A lister over `indexer`.
    pub fn new(indexer: Indexer<K>) -> Self {
        Self { indexer }
    }

    /// All cached objects whose labels match `selector` (`&Selector::default()` matches all).
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        self.indexer.with_items(|items| {
            items
                .values()
                .filter(|o| labels_match(selector, o.as_ref()))
                .cloned()
                .collect()
        })
    }

    /// The object `name` in `namespace` (`None` for cluster-scoped objects).
    pub fn get(&self, namespace: Option<&str>, name: &str) -> Option<Arc<K>> {
        self.indexer
            .get_by_key(crate::key::ObjectKey::new(namespace, name).as_str())
    }

    /// The object with cache key `key` (`namespace/name` or `name`), as found in a work queue.
    pub fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.indexer.get_by_key(key)
    }

    /// A lister restricted to `namespace`.
    pub fn namespaced(&self, namespace: &str) -> NamespaceLister<K> {
        NamespaceLister {
            indexer: self.indexer.clone(),
            namespace: namespace.to_owned(),
        }
    }

    /// The objects filed under `value` in the index `index`; empty if there is no such index
    /// (see [`Indexer::by_index`] for the checked variant).
    pub fn by_index(&self, index: &str, value: &str) -> Vec<Arc<K>> {
        self.indexer.by_index(index, value).unwrap_or_default()
    }
}

/// A [`Lister`] restricted to one namespace; uses the namespace index, so listing a namespace
/// costs in proportion to that namespace, not to the whole cache.
pub struct NamespaceLister<K> {
    indexer: Indexer<K>,
    namespace: String,
}

impl<K: Resource> NamespaceLister<K> {
    /// Objects in this namespace whose labels match `selector`.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        let in_namespace = self
            .indexer
            .by_index(NAMESPACE_INDEX, &self.namespace)
            .unwrap_or_default();
        in_namespace
            .into_iter()
            .filter(|o| labels_match(selector, o.as_ref()))
            .collect()
    }

    /// The object `name` in this namespace.
    pub fn get(&self, name: &str) -> Option<Arc<K>> {
        self.indexer
            .get_by_key(crate::key::ObjectKey::new(Some(&self.namespace), name).as_str())
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;
    use crate::{
        key::ObjectKey,
        test_util::{cm, labeled},
    };

    fn lister() -> Lister<ConfigMap> {
        let idx = Indexer::new();
        for o in [
            labeled(cm("a", "web", "1"), "app", "web"),
            labeled(cm("b", "web", "1"), "app", "web"),
            cm("a", "db", "1"),
        ] {
            let o = Arc::new(o);
            idx.insert(ObjectKey::of(o.as_ref()), o);
        }
        Lister::new(idx)
    }

    fn names(mut objs: Vec<Arc<ConfigMap>>) -> Vec<String> {
        objs.sort_by_key(|o| ObjectKey::of(o.as_ref()));
        objs.iter()
            .map(|o| ObjectKey::of(o.as_ref()).to_string())
            .collect()
    }

    #[test]
    fn list_filters_by_label_selector() {
        let l = lister();
        let web: Selector = [("app", "web")].into_iter().collect();
        assert_eq!(names(l.list(&web)), ["a/web", "b/web"]);
        assert_eq!(l.list(&Selector::default()).len(), 3);
    }

    #[test]
    fn namespaced_lister_sees_one_namespace() {
        let l = lister().namespaced("a");
        assert_eq!(names(l.list(&Selector::default())), ["a/db", "a/web"]);
        assert!(l.get("web").is_some());
        assert!(lister().namespaced("b").get("db").is_none());
    }

    #[test]
    fn get_and_by_index() {
        let l = lister();
        assert!(l.get(Some("b"), "web").is_some());
        assert!(l.get_by_key("a/db").is_some());
        assert_eq!(names(l.by_index(NAMESPACE_INDEX, "b")), ["b/web"]);
        assert!(l.by_index("no-such-index", "x").is_empty());
    }
}
