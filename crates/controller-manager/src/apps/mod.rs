//! The `deployment` and `replicaset` controllers of kube-controller-manager
//! (`pkg/controller/deployment`, `pkg/controller/replicaset`): Deployment → ReplicaSet → Pod.
//!
//! # Why both live together
//! They share three informers (Deployments, ReplicaSets, Pods) and the same helpers
//! (ControllerRef adoption, expectations, pod ranking), and neither is useful without the other:
//! the deployment controller only writes ReplicaSets, the replicaset controller turns them into
//! Pods. Without a scheduler and kubelet the Pods stay `Pending`, never ready, so rollouts stall
//! exactly where they stall on a real cluster with no nodes.
//!
//! # Entry point
//! [`start`] registers both controllers on the manager's shared informers (the Pods and
//! ReplicaSets the garbage collector and others may read too: one watch per kind); its runner
//! works both queues until the manager stops.

mod controller_ref;
mod deployment;
mod events;
mod expectations;
mod pods;
mod replicaset;
mod versioned;

use k8s_openapi::api::{
    apps::v1::{Deployment, ReplicaSet},
    core::v1::Pod,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, OwnerReference};
use kube_core::{Resource, Selector};

use crate::manager::{Context, Runner, stopped};
use crate::worker::{self, Next, Retries};
use crate::{Error, Result};

/// The field manager of every write, as the real controller-manager's user agent yields it.
pub(crate) const FIELD_MANAGER: &str = "kube-controller-manager";

/// Workers per controller (kube-controller-manager's `--concurrent-deployment-syncs` and
/// `--concurrent-replicaset-syncs`, both 5 by default, or the manager's
/// [`workers`](crate::ControllerManagerOptions::workers)).
#[derive(Clone, Debug)]
pub(crate) struct AppsOptions {
    pub(crate) deployment_workers: usize,
    pub(crate) replicaset_workers: usize,
}

/// Registers the deployment and replicaset controllers' handlers on the manager's shared
/// informers (Deployments, ReplicaSets, Pods); the runner works both queues until the manager
/// stops. Sync errors are logged and their keys retried with backoff, as the real controllers do.
pub(crate) fn start(context: &Context, options: AppsOptions) -> Runner {
    let informers = Informers {
        deployments: context.factory.informer::<Deployment>(),
        replica_sets: context.factory.informer::<ReplicaSet>(),
        pods: context.factory.informer::<Pod>(),
    };
    let client = context.client.clone();
    let controllers =
        replicaset::ReplicaSetController::new(client.clone(), &informers).and_then(|rs| {
            Ok((
                rs,
                deployment::DeploymentController::new(client, &informers)?,
            ))
        });
    let stop = context.stop.clone();
    Box::pin(async move {
        let (rs_controller, d_controller) = match controllers {
            Ok(controllers) => controllers,
            Err(e) => {
                tracing::warn!(error = %e, "the deployment and replicaset controllers cannot start");
                return;
            }
        };
        // The replicaset controller retries a failing key until it syncs; the deployment
        // controller gives up after 15 retries (its `maxRetries`) until the key's next event.
        let rs_workers = worker::spawn(
            rs_controller.queue(),
            options.replicaset_workers,
            Retries::Forever,
            move |key: String| {
                let c = rs_controller.clone();
                async move { c.sync(&key).await.map(|()| Next::Done) }
            },
        );
        let d_workers = worker::spawn(
            d_controller.queue(),
            options.deployment_workers,
            Retries::AtMost(15),
            move |key: String| {
                let c = d_controller.clone();
                async move { c.sync(&key).await.map(|()| Next::Done) }
            },
        );
        stopped(stop).await;
        rs_workers.stop().await;
        d_workers.stop().await;
    })
}

/// An error as Go's `%v` prints it in Events and conditions: the API server's message for a
/// refused request, the bare reason for an object that cannot be acted on.
pub(crate) fn go_message(error: &Error) -> String {
    match error {
        Error::RequestFailed { source, .. } => api_message(source),
        Error::InvalidObject { reason, .. } => reason.clone(),
        Error::CacheSyncFailed(_) => error.to_string(),
    }
}

/// A client error as Go's `%v` of the API error prints it: the `Status` message.
pub(crate) fn api_message(error: &kubegen_client::Error) -> String {
    error
        .status()
        .map_or_else(|| error.to_string(), |s| s.message.clone())
}

/// Whether a write failed because its namespace is being deleted (a `NamespaceTerminating`
/// cause): the controllers then record no Event, as every further write would fail the same way.
pub(crate) fn namespace_terminating(error: &kubegen_client::Error) -> bool {
    error
        .status()
        .and_then(|s| s.details.as_ref())
        .is_some_and(|d| d.causes.iter().any(|c| c.reason == "NamespaceTerminating"))
}

/// The three shared informers both controllers read.
pub(crate) struct Informers {
    pub(crate) deployments: kubegen_cache::SharedIndexInformer<Deployment>,
    pub(crate) replica_sets: kubegen_cache::SharedIndexInformer<ReplicaSet>,
    pub(crate) pods: kubegen_cache::SharedIndexInformer<Pod>,
}

/// `kind namespace/name` of an object, for messages.
pub(crate) fn describe<K: Resource<DynamicType = ()>>(obj: &K) -> String {
    let meta = obj.meta();
    format!(
        "{} {}/{}",
        K::kind(&()),
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    )
}

/// The workqueue key of an object: `namespace/name`.
pub(crate) fn key_of<K: Resource>(obj: &K) -> String {
    let meta = obj.meta();
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    )
}

/// Splits a `namespace/name` key.
pub(crate) fn split_key(key: &str) -> (&str, &str) {
    key.split_once('/').unwrap_or(("", key))
}

/// `metav1.LabelSelectorAsSelector`: an absent selector selects nothing (`None`), an empty one
/// everything.
pub(crate) fn selector_of<K: Resource<DynamicType = ()>>(
    obj: &K,
    selector: Option<&LabelSelector>,
) -> Result<Option<Selector>> {
    let Some(selector) = selector else {
        return Ok(None);
    };
    Selector::try_from(selector.clone())
        .map(Some)
        .map_err(|e| Error::InvalidObject {
            object: describe(obj),
            reason: format!("invalid label selector: {e}"),
        })
}

/// Whether `selector` (from [`selector_of`]) selects an object with `labels`.
pub(crate) fn selects(
    selector: Option<&Selector>,
    labels: Option<&std::collections::BTreeMap<String, String>>,
) -> bool {
    use kube_core::SelectorExt;
    static EMPTY: std::collections::BTreeMap<String, String> = std::collections::BTreeMap::new();
    selector.is_some_and(|s| s.matches(labels.unwrap_or(&EMPTY)))
}

/// The controller reference of an object (`metav1.GetControllerOf`).
pub(crate) fn controller_of<K: Resource>(obj: &K) -> Option<&OwnerReference> {
    obj.meta()
        .owner_references
        .as_deref()
        .unwrap_or_default()
        .iter()
        .find(|r| r.controller == Some(true))
}

/// A controller reference to `owner` (`metav1.NewControllerRef`).
pub(crate) fn controller_ref<K: Resource<DynamicType = ()>>(owner: &K) -> OwnerReference {
    OwnerReference {
        api_version: K::api_version(&()).into_owned(),
        kind: K::kind(&()).into_owned(),
        name: owner.meta().name.clone().unwrap_or_default(),
        uid: owner.meta().uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}
