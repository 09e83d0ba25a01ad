//! The indexes of the shared Pod informer through which the controllers find Pods:
//! - by controller: each Pod is filed under its controller (`namespace/Kind/name/uid`), or, when
//!   no controller owns it, under its bare namespace, as an orphan some controller may adopt;
//! - by Node: each bound Pod is filed under its `spec.nodeName`.
//!
//! Mirrors `pkg/controller/controller_utils.go` (`PodControllerIndex`, `PodControllerIndexKey`,
//! `AddPodControllerIndexer`, `FilterPodsByOwner`, `PodNodeNameKeyIndex`,
//! `AddPodNodeNameIndexer`), which the v1.36 replicaset, deployment, statefulset, job and
//! daemonset controllers read their Pods through; the daemonset, node lifecycle and taint
//! eviction controllers find a Node's Pods through the second.
//!
//! # Why
//! Listing the owner's namespace instead costs every Pod of the namespace on every sync, and a
//! sync follows nearly every Pod event: with 30 ReplicaSets of 1,000 Pods in one namespace, each
//! of the 30,000 Pods' events made a sync read all 30,000. Likewise, finding a Node's Pods by
//! listing the cluster's costs every Pod for each Node looked at.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use kube_core::Resource;
use kubegen_cache::{IndexFn, Indexers, Lister, SharedIndexInformer};

use super::meta::controller_of;
use crate::{Error, Result};

/// The index's name (`controller.PodControllerIndex`).
const POD_CONTROLLER_INDEX: &str = "podController";

/// Where the Pods in `namespace` controlled by the `kind` named `name` with `uid` are filed
/// (`PodControllerIndexKey` with a reference).
fn owned_key(namespace: &str, kind: &str, name: &str, uid: &str) -> String {
    format!("{namespace}/{kind}/{name}/{uid}")
}

/// The one value `pod` is filed under: its controller's key, or its namespace for an orphan.
fn index_value(pod: &Pod) -> String {
    let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
    match controller_of(pod) {
        Some(r) => owned_key(namespace, &r.kind, &r.name, &r.uid),
        None => namespace.to_owned(),
    }
}

/// The index, by its name.
fn indexers() -> Indexers<Pod> {
    let index: IndexFn<Pod> = Arc::new(|pod: &Pod| vec![index_value(pod)]);
    Indexers::from([(POD_CONTROLLER_INDEX.to_owned(), index)])
}

/// Adds the index to the shared Pod informer, unless another controller already did
/// (`AddPodControllerIndexer`).
///
/// # Errors
/// [`Error::CacheSyncFailed`] when the informer refuses the index for another reason.
pub(crate) fn add_to(pods: &SharedIndexInformer<Pod>) -> Result<()> {
    match pods.add_indexers(indexers()) {
        Ok(()) | Err(kubegen_cache::Error::IndexerConflict { .. }) => Ok(()),
        Err(e) => Err(Error::CacheSyncFailed(e)),
    }
}

/// The Node index's name (`controller.PodNodeNameKeyIndex`).
const POD_NODE_NAME_INDEX: &str = "spec.nodeName";

/// The Node index: a bound Pod under its Node's name, an unbound one nowhere.
fn node_name_indexers() -> Indexers<Pod> {
    let index: IndexFn<Pod> = Arc::new(|pod: &Pod| {
        let node = pod.spec.as_ref().and_then(|s| s.node_name.as_deref());
        node.filter(|n| !n.is_empty())
            .map(|n| vec![n.to_owned()])
            .unwrap_or_default()
    });
    Indexers::from([(POD_NODE_NAME_INDEX.to_owned(), index)])
}

/// Adds the Node index to the shared Pod informer, unless another controller already did
/// (`AddPodNodeNameIndexer`).
///
/// # Errors
/// [`Error::CacheSyncFailed`] when the informer refuses the index for another reason.
pub(crate) fn add_node_name_to(pods: &SharedIndexInformer<Pod>) -> Result<()> {
    match pods.add_indexers(node_name_indexers()) {
        Ok(()) | Err(kubegen_cache::Error::IndexerConflict { .. }) => Ok(()),
        Err(e) => Err(Error::CacheSyncFailed(e)),
    }
}

/// The cached Pods bound to the Node `node` (`ByIndex(PodNodeNameKeyIndex, nodeName)`).
pub(crate) fn pods_on(pods: &Lister<Pod>, node: &str) -> Vec<Arc<Pod>> {
    pods.by_index(POD_NODE_NAME_INDEX, node)
}

/// Which Pods [`pods_of`] returns besides those `owner` controls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Orphans {
    /// Also the namespace's Pods without a controller, which `owner` may adopt.
    Included,
    /// Only the Pods `owner` controls.
    Excluded,
}

/// The cached Pods `owner` controls, and with [`Orphans::Included`] the Pods of its namespace
/// that no controller controls (`FilterPodsByOwner`). Pods controlled by another object are never
/// returned: no owner can adopt them.
pub(crate) fn pods_of<K>(pods: &Lister<Pod>, owner: &K, orphans: Orphans) -> Vec<Arc<Pod>>
where
    K: Resource<DynamicType = ()>,
{
    let meta = owner.meta();
    let namespace = meta.namespace.as_deref().unwrap_or_default();
    let owned = owned_key(
        namespace,
        &K::kind(&()),
        meta.name.as_deref().unwrap_or_default(),
        meta.uid.as_deref().unwrap_or_default(),
    );
    let mut found = pods.by_index(POD_CONTROLLER_INDEX, &owned);
    if orphans == Orphans::Included {
        found.extend(pods.by_index(POD_CONTROLLER_INDEX, namespace));
    }
    found
}

#[cfg(test)]
#[path = "pod_index_tests.rs"]
mod tests;
