//! The dependency graph: who owns whom, by uid, as the monitors last saw it, and which objects a
//! change makes worth a look. Mirrors `pkg/controller/garbagecollector/graph.go` and the
//! decisions of `graph_builder.go`'s `processGraphChanges`.
//!
//! # Invariants
//! - `dependents[owner]` holds exactly the uids of nodes whose `owners` name `owner`.
//! - A uid is in `nodes` iff a monitor's last event for it was an add or update.

use std::collections::{BTreeSet, HashMap};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube_core::discovery::ApiResource;

/// The finalizer of a foreground deletion (`metav1.FinalizerDeleteDependents`).
pub(crate) const FOREGROUND: &str = "foregroundDeletion";
/// The finalizer of an orphaning deletion (`metav1.FinalizerOrphanDependents`).
pub(crate) const ORPHAN: &str = "orphan";

/// One object as the graph knows it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Node {
    pub(crate) resource: ApiResource,
    /// `None` for a cluster-scoped object.
    pub(crate) namespace: Option<String>,
    pub(crate) name: String,
    pub(crate) uid: String,
    pub(crate) owners: Vec<OwnerReference>,
    pub(crate) finalizers: Vec<String>,
    /// Has a `deletionTimestamp`.
    pub(crate) deleting: bool,
}

impl Node {
    /// The node of an object of `resource` with `meta`; None without a uid.
    pub(crate) fn of(resource: &ApiResource, meta: &ObjectMeta) -> Option<Node> {
        Some(Node {
            resource: resource.clone(),
            namespace: meta.namespace.clone().filter(|ns| !ns.is_empty()),
            name: meta.name.clone().unwrap_or_default(),
            uid: meta.uid.clone()?,
            owners: meta.owner_references.clone().unwrap_or_default(),
            finalizers: meta.finalizers.clone().unwrap_or_default(),
            deleting: meta.deletion_timestamp.is_some(),
        })
    }

    fn has_finalizer(&self, finalizer: &str) -> bool {
        self.finalizers.iter().any(|f| f == finalizer)
    }

    /// Being deleted in the foreground: its dependents go first.
    pub(crate) fn deleting_dependents(&self) -> bool {
        self.deleting && self.has_finalizer(FOREGROUND)
    }

    /// Being deleted with its dependents orphaned.
    pub(crate) fn orphaning(&self) -> bool {
        self.deleting && self.has_finalizer(ORPHAN)
    }

    /// Whether `reference` points at this node as seen from a dependent in `namespace`: same
    /// uid, kind and name, and the dependent's namespace for a namespaced owner.
    fn is(&self, reference: &OwnerReference, namespace: Option<&str>) -> bool {
        self.uid == reference.uid
            && self.resource.kind == reference.kind
            && self.name == reference.name
            && (self.namespace.is_none() || self.namespace.as_deref() == namespace)
    }
}

/// What a change asks the workers to look at.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Work {
    /// uids for `attemptToDelete`.
    pub(crate) delete: BTreeSet<String>,
    /// uids for `attemptToOrphan`.
    pub(crate) orphan: BTreeSet<String>,
}

/// The graph of every monitored object.
#[derive(Debug, Default)]
pub(crate) struct Graph {
    nodes: HashMap<String, Node>,
    dependents: HashMap<String, BTreeSet<String>>,
}

impl Graph {
    pub(crate) fn get(&self, uid: &str) -> Option<&Node> {
        self.nodes.get(uid)
    }

    /// The nodes that name `owner` among their owners.
    pub(crate) fn dependents(&self, owner: &str) -> Vec<&Node> {
        let uids = self.dependents.get(owner).into_iter().flatten();
        uids.filter_map(|uid| self.nodes.get(uid)).collect()
    }

    /// Records an added or updated object and says what to look at.
    pub(crate) fn upsert(&mut self, node: Node) -> Work {
        let mut work = Work::default();
        let old = self.nodes.get(&node.uid).cloned();
        // A dependent whose owner the graph does not hold as named (absent, other uid, other
        // namespace) may be garbage: verify it (the real graph's "virtual" owner nodes).
        let unresolved = node.owners.iter().any(|reference| {
            let owner = self.nodes.get(&reference.uid);
            !owner.is_some_and(|o| o.is(reference, node.namespace.as_deref()))
        });
        let owners_changed = old.as_ref().is_none_or(|o| o.owners != node.owners);
        if unresolved && owners_changed {
            work.delete.insert(node.uid.clone());
        }
        if node.deleting_dependents() {
            work.delete.insert(node.uid.clone());
            work.delete.extend(
                self.dependents
                    .get(&node.uid)
                    .into_iter()
                    .flatten()
                    .cloned(),
            );
        }
        if node.orphaning() {
            work.orphan.insert(node.uid.clone());
        }
        if let Some(old) = &old {
            self.unlink(old);
            self.wake_owners(old, &mut work);
        }
        for reference in &node.owners {
            let dependents = self.dependents.entry(reference.uid.clone()).or_default();
            dependents.insert(node.uid.clone());
        }
        self.wake_owners(&node, &mut work);
        self.nodes.insert(node.uid.clone(), node);
        work
    }

    /// Records a deleted object: its dependents may now be garbage, and owners waiting for it
    /// may be done.
    pub(crate) fn remove(&mut self, uid: &str) -> Work {
        let mut work = Work::default();
        let Some(node) = self.nodes.remove(uid) else {
            return work;
        };
        self.unlink(&node);
        self.wake_owners(&node, &mut work);
        work.delete
            .extend(self.dependents.get(uid).into_iter().flatten().cloned());
        work
    }

    fn unlink(&mut self, node: &Node) {
        for reference in &node.owners {
            if let Some(dependents) = self.dependents.get_mut(&reference.uid) {
                dependents.remove(&node.uid);
                if dependents.is_empty() {
                    self.dependents.remove(&reference.uid);
                }
            }
        }
    }

    /// Owners of `node` that wait for their dependents look again.
    fn wake_owners(&self, node: &Node, work: &mut Work) {
        for reference in &node.owners {
            if self
                .nodes
                .get(&reference.uid)
                .is_some_and(Node::deleting_dependents)
            {
                work.delete.insert(reference.uid.clone());
            }
        }
    }

    #[cfg(test)]
    fn check_invariants(&self) {
        for (owner, dependents) in &self.dependents {
            for uid in dependents {
                let node = &self.nodes[uid];
                assert!(
                    node.owners.iter().any(|r| &r.uid == owner),
                    "{uid} does not name {owner}"
                );
            }
        }
        for node in self.nodes.values() {
            for reference in &node.owners {
                assert!(self.dependents[&reference.uid].contains(&node.uid));
            }
        }
    }
}

/// Dependents of `owner` that block its foreground deletion (`blockOwnerDeletion: true` on
/// their reference to it).
pub(crate) fn blocking<'a>(graph: &'a Graph, owner: &str) -> Vec<&'a Node> {
    let blocks = |node: &&Node| {
        node.owners
            .iter()
            .any(|r| r.uid == owner && r.block_owner_deletion == Some(true))
    };
    graph.dependents(owner).into_iter().filter(blocks).collect()
}

#[cfg(test)]
#[path = "graph_tests.rs"]
mod tests;
