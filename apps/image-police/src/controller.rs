//! image-police's controller, built with [`kubegen_runtime::Controller::builder`]: which
//! informer events enqueue which namespace. The counterpart of sample-controller's
//! `NewController`; the queue, workers, retries and shutdown are the runtime's.
//!
//! # Which events enqueue what
//! The key is a namespace ([`kubegen_runtime::Builder::group_by_namespace`]), because the policy unit is the
//! namespace (see [`crate::reconcile`]): many events of one namespace collapse into one reconcile.
//! - WhiteList added, deleted, or updated with a new `metadata.generation`: its namespace. Status
//!   writes (the controller's own included) keep the generation and enqueue nothing.
//! - Deployment added, updated with a new generation (its pod template changed) or deleted: its
//!   namespace, if the WhiteList cache holds a list there (namespace index, no scan); a namespace
//!   without lists has nothing to enforce, and a list added later enqueues the namespace itself.
//!   Deployment status churn (replica counts) enqueues nothing.
//!
//! # Differences from sample-controller
//! sample-controller keys its queue by `namespace/name` of the primary object. Here several
//! primaries (WhiteLists) jointly decide about the same secondaries (Deployments), so the key is
//! what they share. A deleted Deployment enqueues its namespace too (the runtime maps every
//! event of a watched kind): the reconcile that follows finds nothing new to judge.

use k8s_openapi::api::apps::v1::Deployment;
use kube_core::Selector;
use kubegen_api::police::v1beta1::WhiteList;
use kubegen_cache::{ObjectKey, SharedIndexInformer};
use kubegen_listers::police::v1beta1::WhiteListLister;
use kubegen_runtime::{Builder, Controller, Error};

/// The controller's name: its workqueue's `name` and its reconcile series' `controller` label.
pub const NAME: &str = "image-police";

/// The controller of WhiteLists, keyed by namespace, also watching Deployments, from `builder`
/// (a [`kubegen_runtime::Manager::controller`] builder for the WhiteList informer, or a bare
/// [`Controller::builder`] in tests).
///
/// # Errors
/// [`Error::HandlerRegistrationFailed`] if an informer was already shut down.
pub fn build(
    builder: Builder<WhiteList>,
    whitelists: &SharedIndexInformer<WhiteList>,
    deployments: &SharedIndexInformer<Deployment>,
) -> Result<Controller<WhiteList>, Error> {
    let lister = WhiteListLister::new(whitelists.lister());
    builder
        .group_by_namespace()
        .generation_changes_only()
        .watches(deployments, move |deployment: &Deployment| {
            policed_namespace(&lister, deployment)
        })
        .build()
}

/// The namespace of `deployment` if it has a WhiteList, looked up in the lister's namespace
/// index (the key a Deployment event enqueues; also what the fleet's controller maps a member's
/// Deployment to, over the hub's WhiteLists).
pub fn policed_namespace(lister: &WhiteListLister, deployment: &Deployment) -> Vec<ObjectKey> {
    let Some(namespace) = deployment.metadata.namespace.as_deref() else {
        return Vec::new();
    };
    let lists = lister.white_lists(namespace).list(&Selector::default());
    if lists.is_empty() {
        Vec::new()
    } else {
        vec![ObjectKey::new(None, namespace)]
    }
}

#[cfg(test)]
#[path = "controller_tests.rs"]
mod tests;
