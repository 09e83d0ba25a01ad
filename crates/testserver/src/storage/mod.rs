//! [`State`]: everything the server keeps behind its one lock, the objects with their history
//! ([`Store`]) and the resource table ([`Registry`]). Mirrors what etcd plus the apiserver's
//! registered REST storage hold for a real server; here they change together, under one lock.

pub(crate) mod objects;
pub(crate) mod tokens;

use crate::registry::Registry;
use crate::storage::objects::Store;

/// Everything behind the lock: objects, history and the resource table change together (a CRD
/// create registers its resource atomically with storing the CRD).
#[derive(Debug)]
pub(crate) struct State {
    pub(crate) store: Store,
    pub(crate) registry: Registry,
}

impl State {
    pub(crate) fn new(history_size: usize) -> State {
        State {
            store: Store::new(history_size),
            registry: Registry::with_builtins(),
        }
    }

    /// Store and registry invariants, plus: every namespaced object lives in an existing namespace.
    #[cfg(test)]
    pub(crate) fn check_invariants(&self) {
        self.store.check_invariants();
        self.registry.check_invariants();
        let namespaces = crate::registry::ResourceKey::new("", "v1", "namespaces");
        for def in self.registry.all().filter(|d| d.namespaced) {
            for (ns, name) in self
                .store
                .collection(&def.key())
                .into_iter()
                .flat_map(|c| c.keys())
            {
                let ns_key = (String::new(), ns.clone());
                assert!(
                    self.store.get(&namespaces, &ns_key).is_some(),
                    "{}/{ns}/{name} without namespace",
                    def.plural
                );
            }
        }
    }
}
