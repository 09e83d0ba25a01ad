//! image-police as a validating admission webhook: a Deployment (or ReplicaSet, StatefulSet,
//! DaemonSet, Job, CronJob, bare Pod) whose images the namespace's WhiteLists do not allow is
//! refused when it is created or updated, so its Pods never start. The controller stays as the
//! safety net for objects admitted while the webhook was down (`failurePolicy: Ignore`, see the
//! README) or before a WhiteList tightened.
//!
//! # One judgement, two enforcers
//! The webhook asks exactly what a reconcile asks (`crate::reconcile::judge` over the same
//! WhiteList cache, then [`crate::policy::Policy::violations`]), so both agree:
//! - no WhiteList in the namespace, or a protected namespace: allowed;
//! - an invalid WhiteList pauses enforcement in the namespace: allowed, with a warning naming
//!   the invalid lists (the controller would not delete either);
//! - otherwise every container and init container image must be allowed by the union of the
//!   lists; the denial names each offending image, its container, why, and the lists.
//!
//! Until the WhiteList cache has synced the webhook cannot judge: it fails the call (HTTP 503),
//! and the configuration's `failurePolicy` decides.

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::Pod;
use kube_core::Selector;
use kubegen_api::police::v1beta1::WhiteList;
use kubegen_cache::SharedIndexInformer;
use kubegen_listers::police::v1beta1::WhiteListLister;
use kubegen_runtime::pod_template::PodTemplate;
use kubegen_runtime::webhook::{
    Admissible, Admission, Denial, Operation, Validator, Warnings, WebhookServer,
};

use crate::namespaces::ProtectedNamespaces;
use crate::reconcile::{Verdict, judge};

/// The path of each kind's validating webhook, as `deploy/webhook.yaml` names them
/// (kubebuilder's `/validate-<group>-<version>-<kind>` spelling).
pub const PATHS: [(&str, &str); 7] = [
    ("Deployment", "/validate-apps-v1-deployment"),
    ("ReplicaSet", "/validate-apps-v1-replicaset"),
    ("StatefulSet", "/validate-apps-v1-statefulset"),
    ("DaemonSet", "/validate-apps-v1-daemonset"),
    ("Job", "/validate-batch-v1-job"),
    ("CronJob", "/validate-batch-v1-cronjob"),
    ("Pod", "/validate-v1-pod"),
];

/// The validating webhook of every pod-template kind: WhiteLists from the manager's cache.
#[derive(Clone)]
pub struct ImagePolicyWebhook {
    /// The WhiteList informer's cache.
    pub(crate) whitelists: WhiteListLister,
    /// The informer, to know whether the cache is complete.
    pub(crate) informer: SharedIndexInformer<WhiteList>,
    /// Namespaces not judged.
    pub(crate) protected: ProtectedNamespaces,
}

impl ImagePolicyWebhook {
    /// Serves this webhook at every path of [`PATHS`].
    pub fn register(self, server: &mut WebhookServer) {
        let path = |kind: &str| {
            PATHS
                .iter()
                .find(|(k, _)| *k == kind)
                .map_or("", |(_, p)| *p)
        };
        server
            .add_validator::<Deployment>(path("Deployment"), self.clone())
            .add_validator::<ReplicaSet>(path("ReplicaSet"), self.clone())
            .add_validator::<StatefulSet>(path("StatefulSet"), self.clone())
            .add_validator::<DaemonSet>(path("DaemonSet"), self.clone())
            .add_validator::<Job>(path("Job"), self.clone())
            .add_validator::<CronJob>(path("CronJob"), self.clone())
            .add_validator::<Pod>(path("Pod"), self);
    }

    /// The answer for `object`, a `kind` in `namespace`.
    pub fn check(
        &self,
        kind: &str,
        namespace: &str,
        object: &impl PodTemplate,
    ) -> Result<Warnings, Denial> {
        if !self.informer.has_synced() {
            return Err(Denial::unavailable(
                "image-police: the WhiteList cache has not synced yet",
            ));
        }
        let mut lists = self
            .whitelists
            .white_lists(namespace)
            .list(&Selector::default());
        if lists.is_empty() {
            return Ok(Vec::new());
        }
        lists.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        match judge(&self.protected, namespace, &lists) {
            Verdict::Protected => Ok(Vec::new()),
            Verdict::Paused(invalid) => {
                let names: Vec<&str> = invalid.iter().map(|(name, _)| name.as_str()).collect();
                Ok(vec![format!(
                    "image-police: enforcement paused in namespace {namespace}: invalid WhiteLists {names:?}"
                )])
            }
            Verdict::Enforce(policy) => {
                let found = policy.violations(object);
                if found.is_empty() {
                    return Ok(Vec::new());
                }
                let names: Vec<&str> = lists
                    .iter()
                    .filter_map(|list| list.metadata.name.as_deref())
                    .collect();
                Err(
                    Denial::forbidden(denial_message(kind, namespace, &names, &found))
                        .reason("ForbiddenImage"),
                )
            }
        }
    }
}

/// `image "redis:7" of container "c0" is not allowed in namespace "team" by WhiteLists
/// [allowed-images] (TagNotAllowed: ...); ...`, one clause per offending container.
fn denial_message(
    kind: &str,
    namespace: &str,
    lists: &[&str],
    found: &[crate::policy::ContainerViolation],
) -> String {
    let clauses: Vec<String> = found
        .iter()
        .map(|v| {
            let which = if v.init {
                "init container"
            } else {
                "container"
            };
            format!(
                "image {:?} of {which} {:?} ({}: {})",
                v.image,
                v.container,
                v.denial.reason(),
                v.denial
            )
        })
        .collect();
    format!(
        "image-police: {kind} runs images not allowed in namespace {namespace:?} by WhiteLists {lists:?}: {}",
        clauses.join("; ")
    )
}

impl<K: Admissible + PodTemplate> Validator<K> for ImagePolicyWebhook {
    async fn validate(&self, request: &Admission<'_, K>) -> Result<Warnings, Denial> {
        // Removing an offender is always welcome, whatever the configuration routes here.
        if !matches!(request.operation, Operation::Create | Operation::Update) {
            return Ok(Vec::new());
        }
        let namespace = request.namespace.unwrap_or_default();
        self.check(&K::kind(&()), namespace, request.object)
    }
}

#[cfg(test)]
#[path = "webhook_tests.rs"]
mod tests;
