//! What one sync knows of a DaemonSet: its spec, the Pod spec its Pods get, the hash of its
//! current revision, and the arithmetic of its update strategy.
//!
//! Mirrors `GetTemplateGeneration`, `CreatePodTemplate`, `IsPodUpdated`, `AllowsSurge`,
//! `SurgeCount` and `UnavailableCount` of `pkg/controller/daemon/util/daemonset_util.go`, and
//! the Pod ordering `podByCreationTimestampAndPhase` of `daemon_controller.go`.

use std::{cmp::Ordering, collections::BTreeMap, sync::Arc};

use k8s_openapi::api::apps::v1::{DaemonSet, DaemonSetSpec};
use k8s_openapi::api::core::v1::{Node, Pod, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::placement::{Fit, add_daemon_tolerations, fit};
use crate::workload::intstr::scaled;
use crate::workload::versioned::Field;
use crate::{Error, Result};

/// The label naming the revision a Pod (or ControllerRevision) was made from
/// (`DefaultDaemonSetUniqueLabelKey`).
pub(crate) const REVISION_LABEL: &str = "controller-revision-hash";
/// The label carrying the template generation a Pod was made from
/// (`DaemonSetTemplateGenerationKey`).
pub(crate) const GENERATION_LABEL: &str = "pod-template-generation";
/// The annotation the API server keeps a DaemonSet's template generation in
/// (`DeprecatedTemplateGeneration`).
pub(crate) const GENERATION_ANNOTATION: &str = "deprecated.daemonset.template.generation";

/// A Node's daemon Pods, by Node name.
pub(crate) type NodePods = BTreeMap<String, Vec<Arc<Pod>>>;

/// A DaemonSet as one sync sees it.
pub(crate) struct Daemon<'a> {
    /// The object.
    pub(crate) ds: &'a DaemonSet,
    /// Its spec.
    pub(crate) spec: &'a DaemonSetSpec,
    /// The template's Pod spec with the daemon tolerations added: what decides where Pods run.
    pub(crate) pod_spec: PodSpec,
    /// The `controller-revision-hash` of the current revision.
    pub(crate) hash: String,
    /// The template generation from the API server's annotation, if readable.
    pub(crate) template_generation: Option<i64>,
}

impl<'a> Daemon<'a> {
    /// The view of `ds` whose current revision has `hash`.
    ///
    /// # Errors
    /// The DaemonSet has no spec (never for one the API server stored).
    pub(crate) fn new(ds: &'a DaemonSet, hash: String) -> Result<Self> {
        let spec = ds.spec.value().ok_or_else(|| Error::InvalidObject {
            object: crate::workload::meta::describe(ds),
            reason: "has no spec".into(),
        })?;
        let mut pod_spec = spec.template.spec.clone().unwrap_or_default();
        add_daemon_tolerations(&mut pod_spec);
        let template_generation = ds
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(GENERATION_ANNOTATION))
            .and_then(|g| g.parse().ok());
        Ok(Daemon {
            ds,
            spec,
            pod_spec,
            hash,
            template_generation,
        })
    }

    /// Whether a Pod belongs on `node` (`nodeShouldRunDaemonPod`).
    pub(crate) fn fit(&self, node: &Node) -> Fit {
        fit(&self.pod_spec, node)
    }

    /// `spec.minReadySeconds`.
    pub(crate) fn min_ready_seconds(&self) -> i32 {
        self.spec.min_ready_seconds.unwrap_or(0)
    }

    /// The template Pods are created from (`CreatePodTemplate`): the daemon tolerations, the
    /// template generation and revision hash labels.
    pub(crate) fn pod_template(&self) -> PodTemplateSpec {
        let mut template = self.spec.template.clone();
        template.spec = Some(self.pod_spec.clone());
        let labels = template
            .metadata
            .get_or_insert_with(Default::default)
            .labels
            .get_or_insert_with(BTreeMap::new);
        if let Some(generation) = self.template_generation {
            labels.insert(GENERATION_LABEL.into(), generation.to_string());
        }
        if !self.hash.is_empty() {
            labels.insert(REVISION_LABEL.into(), self.hash.clone());
        }
        template
    }

    /// Whether `pod` was made from the current template (`IsPodUpdated`): its revision hash or
    /// its template generation label is the current one.
    pub(crate) fn is_updated(&self, pod: &Pod) -> bool {
        let label = |k: &str| pod.metadata.labels.as_ref().and_then(|l| l.get(k));
        let generation_matches = self
            .template_generation
            .is_some_and(|g| label(GENERATION_LABEL).is_some_and(|l| *l == g.to_string()));
        let hash_matches =
            !self.hash.is_empty() && label(REVISION_LABEL).is_some_and(|h| *h == self.hash);
        hash_matches || generation_matches
    }

    fn rolling(&self) -> Option<&k8s_openapi::api::apps::v1::RollingUpdateDaemonSet> {
        let strategy = self.spec.update_strategy.as_ref()?;
        if strategy.type_.as_deref() != Some("RollingUpdate") {
            return None;
        }
        strategy.rolling_update.as_ref()
    }

    /// Whether the strategy is RollingUpdate (`OnDelete` leaves old Pods until deleted).
    pub(crate) fn rolls(&self) -> bool {
        self.spec
            .update_strategy
            .as_ref()
            .is_some_and(|s| s.type_.as_deref() == Some("RollingUpdate"))
    }

    /// `maxSurge` of `desired` Nodes (`SurgeCount`); 0 unless rolling with a surge.
    pub(crate) fn surge_count(&self, desired: i32) -> i32 {
        self.rolling()
            .and_then(|r| r.max_surge.as_ref())
            .map_or(0, |s| scaled(s, desired, true))
    }

    /// `maxUnavailable` of `desired` Nodes (`UnavailableCount`); 0 unless rolling. An absent
    /// value (which defaulting fills) scales as 0.
    pub(crate) fn unavailable_count(&self, desired: i32) -> i32 {
        self.rolling().map_or(0, |r| {
            let zero = IntOrString::Int(0);
            scaled(r.max_unavailable.as_ref().unwrap_or(&zero), desired, true)
        })
    }

    /// Whether old Pods are replaced by surging new ones first (`AllowsSurge`).
    pub(crate) fn allows_surge(&self) -> bool {
        self.surge_count(1) > 0
    }
}

fn node_name(pod: &Pod) -> &str {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or_default()
}

/// `podByCreationTimestampAndPhase`: bound Pods first, then oldest first, then by name.
pub(crate) fn oldest_bound_first(a: &Arc<Pod>, b: &Arc<Pod>) -> Ordering {
    let unbound = |p: &Pod| node_name(p).is_empty();
    unbound(a)
        .cmp(&unbound(b))
        .then_with(|| {
            let created = |p: &Pod| p.metadata.creation_timestamp.as_ref().map(|t| t.0);
            created(a).cmp(&created(b))
        })
        .then_with(|| a.metadata.name.cmp(&b.metadata.name))
}

#[cfg(test)]
#[path = "daemon_tests.rs"]
mod tests;
