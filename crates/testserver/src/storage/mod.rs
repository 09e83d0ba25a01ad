//! The bottom of the write path: [`State`], everything the server keeps behind its one lock (the
//! objects with their history, `objects.rs`, and the resource table, `crate::registry`), and
//! [`Storage`], the narrow handle handlers work through (the lock plus the wake-up of watches).
//! Mirrors what etcd plus the apiserver's registered REST storage hold for a real server; here
//! they change together, under one lock (a CRD create registers its resource atomically with
//! storing the CRD). `tokens.rs` keeps the tokens the TokenRequest API issued; `persist.rs` saves
//! both into a data directory and restores them.

pub(crate) mod objects;
pub(crate) mod persist;
pub(crate) mod tokens;

use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};
use tokio::sync::watch;

use crate::registry::{Registry, ResourceDefinition};
use crate::status::{ApiError, Qualified};
use crate::storage::objects::{ObjectKey, Store, Stored};

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

    /// The object stored under `key` in `def`'s collection, with its key, or the 404 naming it
    /// (the store's `Get` as every verb on one object starts).
    ///
    /// # Errors
    /// 404 NotFound when no such object is stored.
    pub(crate) fn existing(
        &self,
        def: &ResourceDefinition,
        key: ObjectKey,
    ) -> Result<(&Stored, ObjectKey), ApiError> {
        match self.store.get(&def.key(), &key) {
            Some(stored) => Ok((stored, key)),
            None => {
                let resource = Qualified {
                    group: &def.group,
                    resource: &def.plural,
                };
                Err(ApiError::not_found(resource, &key.1))
            }
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

/// The narrow handle handlers work through: the state behind its lock, and the wake-up of watch
/// tasks after a write. Cheap to clone; clones share the state.
#[derive(Clone, Debug)]
pub(crate) struct Storage {
    state: Arc<Mutex<State>>,
    /// Latest resourceVersion; watch tasks wait on it for new events.
    changes: watch::Sender<u64>,
}

impl Storage {
    pub(crate) fn new(history_size: usize) -> Storage {
        Storage {
            state: Arc::new(Mutex::new(State::new(history_size))),
            changes: watch::Sender::new(0),
        }
    }

    /// The state, locked.
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }

    /// The shared state itself, for the parts that keep their own handle (RBAC, faults).
    pub(crate) fn shared(&self) -> Arc<Mutex<State>> {
        self.state.clone()
    }

    /// Wakes watch tasks after a write that reached resourceVersion `rv`.
    pub(crate) fn notify(&self, rv: u64) {
        self.changes.send_replace(rv);
    }

    /// The newest resourceVersion.
    pub(crate) fn resource_version(&self) -> u64 {
        self.lock().store.current_rv()
    }

    /// A receiver woken on every write.
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }
}
