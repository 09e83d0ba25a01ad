//! The index of the shared Pod informer through which the workload controllers find their Pods:
//! each Pod is filed under its controller (`namespace/Kind/name/uid`), or, when no controller
//! owns it, under its bare namespace, as an orphan some controller may adopt.
//!
//! Mirrors `pkg/controller/controller_utils.go` (`PodControllerIndex`, `PodControllerIndexKey`,
//! `AddPodControllerIndexer`, `FilterPodsByOwner`), which the v1.36 replicaset, deployment,
//! statefulset, job and daemonset controllers read their Pods through.
//!
//! # Why
//! Listing the owner's namespace instead costs every Pod of the namespace on every sync, and a
//! sync follows nearly every Pod event: with 30 ReplicaSets of 1,000 Pods in one namespace, each
//! of the 30,000 Pods' events made a sync read all 30,000.

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
