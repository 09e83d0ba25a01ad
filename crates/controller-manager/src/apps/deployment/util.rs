//! The pure rules of the deployment controller: names, surge and
//! unavailability arithmetic, revisions and annotations, which ReplicaSet is new, and
//! proportional scaling.
//!
//! Mirrors `pkg/controller/deployment/util/deployment_util.go` and
//! `intstr.GetScaledValueFromIntOrPercent`. The template hash itself is shared with the
//! daemonset controller (`crate::workload::hash`).

use std::{cmp::Ordering, collections::BTreeMap, sync::Arc};

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::workload::intstr::scaled;
use crate::workload::versioned::Field;

/// `deployment.kubernetes.io/revision`.
pub(crate) const REVISION: &str = "deployment.kubernetes.io/revision";
/// `deployment.kubernetes.io/revision-history`: earlier revisions of a rolled-back-to RS.
pub(crate) const REVISION_HISTORY: &str = "deployment.kubernetes.io/revision-history";
/// `deployment.kubernetes.io/desired-replicas`.
pub(crate) const DESIRED_REPLICAS: &str = "deployment.kubernetes.io/desired-replicas";
/// `deployment.kubernetes.io/max-replicas`.
pub(crate) const MAX_REPLICAS: &str = "deployment.kubernetes.io/max-replicas";
/// The label that tells the ReplicaSets of one Deployment apart.
pub(crate) const POD_TEMPLATE_HASH: &str = "pod-template-hash";
/// Longest `revision-history` value (`--deployment-controller-max-rev-history-length`... fixed
/// upstream at 2000 characters).
const MAX_REV_HISTORY_CHARS: usize = 2000;

/// Deployment annotations never copied to its ReplicaSets (`annotationsToSkip`).
const SKIPPED_ANNOTATIONS: [&str; 6] = [
    "kubectl.kubernetes.io/last-applied-configuration",
    REVISION,
    REVISION_HISTORY,
    DESIRED_REPLICAS,
    MAX_REPLICAS,
    "deprecated.deployment.rollback.to",
];

/// The spec fields the controller reads, with the API server's defaults filled in for absent
/// ones (`SetDefaults_Deployment`), so a Deployment stored without defaulting behaves the same.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Spec {
    pub(crate) replicas: i32,
    pub(crate) recreate: bool,
    pub(crate) max_surge: IntOrString,
    pub(crate) max_unavailable: IntOrString,
    pub(crate) revision_history_limit: Option<i32>,
    /// `None` when absent or `i32::MAX` (no deadline).
    pub(crate) progress_deadline_seconds: Option<i32>,
    pub(crate) min_ready_seconds: i32,
    pub(crate) paused: bool,
}

impl Spec {
    pub(crate) fn of(d: &Deployment) -> Spec {
        let spec = d.spec.value().cloned().unwrap_or_default();
        let strategy = spec.strategy.unwrap_or_default();
        let rolling = strategy.rolling_update.unwrap_or_default();
        let quarter = || IntOrString::String("25%".into());
        Spec {
            replicas: spec.replicas.unwrap_or(1),
            recreate: strategy.type_.as_deref() == Some("Recreate"),
            max_surge: rolling.max_surge.unwrap_or_else(quarter),
            max_unavailable: rolling.max_unavailable.unwrap_or_else(quarter),
            revision_history_limit: Some(spec.revision_history_limit.unwrap_or(10)),
            progress_deadline_seconds: Some(spec.progress_deadline_seconds.unwrap_or(600))
                .filter(|s| *s != i32::MAX),
            min_ready_seconds: spec.min_ready_seconds.unwrap_or(0),
            paused: spec.paused.unwrap_or(false),
        }
    }

    /// `(maxSurge, maxUnavailable)` resolved against `replicas` (`ResolveFenceposts`): surge
    /// rounds up, unavailability down; both zero makes unavailability 1.
    pub(crate) fn fenceposts(&self) -> (i32, i32) {
        let surge = scaled(&self.max_surge, self.replicas, true);
        let unavailable = scaled(&self.max_unavailable, self.replicas, false);
        match (surge, unavailable) {
            (0, 0) => (0, 1),
            other => other,
        }
    }

    /// `MaxSurge`: 0 for Recreate.
    pub(crate) fn max_surge(&self) -> i32 {
        if self.recreate {
            0
        } else {
            self.fenceposts().0
        }
    }

    /// `MaxUnavailable`: 0 for Recreate or no replicas, at most `replicas`.
    pub(crate) fn max_unavailable(&self) -> i32 {
        if self.recreate || self.replicas == 0 {
            return 0;
        }
        self.fenceposts().1.min(self.replicas)
    }
}

pub(crate) fn replicas_of(rs: &ReplicaSet) -> i32 {
    rs.spec.value().and_then(|s| s.replicas).unwrap_or(1)
}

fn status_of(rs: &ReplicaSet) -> (i32, i32, i32, Option<i32>) {
    let s = rs.status.clone().unwrap_or_default();
    (
        s.replicas,
        s.ready_replicas.unwrap_or(0),
        s.available_replicas.unwrap_or(0),
        s.terminating_replicas,
    )
}

/// Σ `spec.replicas` (`GetReplicaCountForReplicaSets`).
pub(crate) fn spec_replicas(rss: &[Arc<ReplicaSet>]) -> i32 {
    rss.iter().map(|rs| replicas_of(rs)).sum()
}

/// Σ `status.replicas` (`GetActualReplicaCountForReplicaSets`).
pub(crate) fn actual_replicas(rss: &[Arc<ReplicaSet>]) -> i32 {
    rss.iter().map(|rs| status_of(rs).0).sum()
}

/// Σ `status.readyReplicas`.
pub(crate) fn ready_replicas(rss: &[Arc<ReplicaSet>]) -> i32 {
    rss.iter().map(|rs| status_of(rs).1).sum()
}

/// Σ `status.availableReplicas`.
pub(crate) fn available_replicas(rss: &[Arc<ReplicaSet>]) -> i32 {
    rss.iter().map(|rs| status_of(rs).2).sum()
}

/// Σ `status.terminatingReplicas`, `None` when no ReplicaSet reports it.
pub(crate) fn terminating_replicas(rss: &[Arc<ReplicaSet>]) -> Option<i32> {
    rss.iter()
        .filter_map(|rs| status_of(rs).3)
        .fold(None, |sum, n| Some(sum.unwrap_or(0) + n))
}

/// ReplicaSets with `spec.replicas > 0` (`FilterActiveReplicaSets`).
pub(crate) fn active(rss: &[Arc<ReplicaSet>]) -> Vec<Arc<ReplicaSet>> {
    rss.iter()
        .filter(|rs| replicas_of(rs) > 0)
        .cloned()
        .collect()
}

/// Oldest first; equal times by name (`ReplicaSetsByCreationTimestamp`).
pub(crate) fn by_creation(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    let t = |rs: &ReplicaSet| rs.metadata.creation_timestamp.as_ref().map(|t| t.0);
    t(a).cmp(&t(b))
        .then_with(|| a.metadata.name.cmp(&b.metadata.name))
}

/// Larger first; equal sizes newer first (`ReplicaSetsBySizeNewer`, scaling up).
pub(crate) fn by_size_newer(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    replicas_of(b)
        .cmp(&replicas_of(a))
        .then_with(|| by_creation(b, a))
}

/// Larger first; equal sizes older first (`ReplicaSetsBySizeOlder`, scaling down).
pub(crate) fn by_size_older(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    replicas_of(b)
        .cmp(&replicas_of(a))
        .then_with(|| by_creation(a, b))
}

/// The revision annotation, 0 when absent or malformed (`Revision`).
pub(crate) fn revision(rs: &ReplicaSet) -> i64 {
    annotation(rs, REVISION)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Lowest revision first; equal revisions by creation (`ReplicaSetsByRevision`).
pub(crate) fn by_revision(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    revision(a)
        .cmp(&revision(b))
        .then_with(|| by_creation(a, b))
}

/// The highest revision (`MaxRevision`).
pub(crate) fn max_revision(rss: &[Arc<ReplicaSet>]) -> i64 {
    rss.iter().map(|rs| revision(rs)).max().unwrap_or(0)
}

fn annotation<'a>(rs: &'a ReplicaSet, key: &str) -> Option<&'a str> {
    rs.metadata
        .annotations
        .as_ref()?
        .get(key)
        .map(String::as_str)
}

/// An integer annotation (`getIntFromAnnotation`).
pub(crate) fn int_annotation(rs: &ReplicaSet, key: &str) -> Option<i32> {
    annotation(rs, key)?.parse().ok()
}

/// Whether two templates are equal once `pod-template-hash` is ignored (`EqualIgnoreHash`).
pub(crate) fn equal_ignore_hash(a: &PodTemplateSpec, b: &PodTemplateSpec) -> bool {
    let strip = |t: &PodTemplateSpec| {
        let mut t = t.clone();
        if let Some(labels) = t.metadata.as_mut().and_then(|m| m.labels.as_mut()) {
            labels.remove(POD_TEMPLATE_HASH);
        }
        t
    };
    strip(a) == strip(b)
}

/// The Deployment's new ReplicaSet: the oldest one whose template equals the Deployment's
/// (`FindNewReplicaSet`), and all the others, old (`FindOldReplicaSets`'s second list).
pub(crate) fn split_new_old(
    d: &Deployment,
    mut rss: Vec<Arc<ReplicaSet>>,
) -> (Option<Arc<ReplicaSet>>, Vec<Arc<ReplicaSet>>) {
    let template = d
        .spec
        .value()
        .map(|s| s.template.clone())
        .unwrap_or_default();
    rss.sort_by(|a, b| by_creation(a, b));
    let position = rss.iter().position(|rs| {
        let t = rs
            .spec
            .value()
            .and_then(|s| s.template.clone())
            .unwrap_or_default();
        equal_ignore_hash(&template, &t)
    });
    let new = position.map(|i| rss.remove(i));
    (new, rss)
}

/// Copies the Deployment's annotations (except the skipped ones) onto `rs`; true if any changed
/// (`copyDeploymentAnnotationsToReplicaSet`).
fn copy_annotations(d: &Deployment, rs: &mut BTreeMap<String, String>) -> bool {
    let mut changed = false;
    for (k, v) in d.metadata.annotations.iter().flatten() {
        if SKIPPED_ANNOTATIONS.contains(&k.as_str()) || rs.get(k) == Some(v) {
            continue;
        }
        rs.insert(k.clone(), v.clone());
        changed = true;
    }
    changed
}

/// Sets `desired-replicas` and `max-replicas`; true if either changed (`SetReplicasAnnotations`).
pub(crate) fn set_replicas_annotations(rs: &mut ReplicaSet, desired: i32, max: i32) -> bool {
    let annotations = rs.metadata.annotations.get_or_insert_with(BTreeMap::new);
    let mut changed = false;
    for (key, value) in [(DESIRED_REPLICAS, desired), (MAX_REPLICAS, max)] {
        let value = value.to_string();
        if annotations.get(key) != Some(&value) {
            annotations.insert(key.to_owned(), value);
            changed = true;
        }
    }
    changed
}

/// Whether [`set_replicas_annotations`] would change anything (`ReplicasAnnotationsNeedUpdate`).
pub(crate) fn replicas_annotations_differ(rs: &ReplicaSet, desired: i32, max: i32) -> bool {
    let mut copy = rs.clone();
    set_replicas_annotations(&mut copy, desired, max)
}

/// Brings the new ReplicaSet's annotations up to date (`SetNewReplicaSetAnnotations`): the
/// Deployment's annotations, `revision` raised to `new_revision` (recording the previous one
/// in `revision-history` on a rollback), and on creation the replica annotations.
pub(crate) fn set_new_rs_annotations(
    d: &Deployment,
    rs: &mut ReplicaSet,
    new_revision: i64,
    exists: bool,
) -> bool {
    let annotations = rs.metadata.annotations.get_or_insert_with(BTreeMap::new);
    let mut changed = copy_annotations(d, annotations);
    let old = annotations.get(REVISION).cloned();
    let old_revision = match old.as_deref().map(str::parse::<i64>) {
        None => 0,
        Some(Ok(n)) => n,
        Some(Err(_)) => return false,
    };
    if old_revision < new_revision {
        annotations.insert(REVISION.into(), new_revision.to_string());
        changed = true;
        if let Some(old) = old {
            append_history(annotations, old);
        }
    }
    if !exists {
        let spec = Spec::of(d);
        changed |= set_replicas_annotations(rs, spec.replicas, spec.replicas + spec.max_surge());
    }
    changed
}

/// Appends `old` to `revision-history`, dropping the oldest entries beyond 2000 characters.
fn append_history(annotations: &mut BTreeMap<String, String>, old: String) {
    let history = annotations
        .get(REVISION_HISTORY)
        .cloned()
        .unwrap_or_default();
    if history.is_empty() {
        annotations.insert(REVISION_HISTORY.into(), old);
        return;
    }
    let mut entries: Vec<&str> = history.split(',').collect();
    let mut total = history.len() + old.len() + 1;
    let mut start = 0;
    while total > MAX_REV_HISTORY_CHARS && start < entries.len() {
        total -= entries[start].len() + 1;
        start += 1;
    }
    if total <= MAX_REV_HISTORY_CHARS {
        entries.drain(..start);
        entries.push(&old);
        annotations.insert(REVISION_HISTORY.into(), entries.join(","));
    }
}

/// The size of a new ReplicaSet this sync (`NewRSNewReplicas`): RollingUpdate grows it
/// within `replicas + maxSurge` in total, Recreate straight to `replicas`.
pub(crate) fn new_rs_replicas(spec: &Spec, all: &[Arc<ReplicaSet>], new_replicas: i32) -> i32 {
    if spec.recreate {
        return spec.replicas;
    }
    let max_total = spec.replicas + scaled(&spec.max_surge, spec.replicas, true);
    let current = spec_replicas(all);
    if current >= max_total {
        return new_replicas;
    }
    new_replicas + (max_total - current).min(spec.replicas - new_replicas)
}

/// Whether the new ReplicaSet holds all replicas, all available (`IsSaturated`).
pub(crate) fn is_saturated(spec: &Spec, rs: Option<&ReplicaSet>) -> bool {
    let Some(rs) = rs else { return false };
    let Some(desired) = int_annotation(rs, DESIRED_REPLICAS) else {
        return false;
    };
    replicas_of(rs) == spec.replicas && desired == spec.replicas && status_of(rs).2 == spec.replicas
}

/// How many replicas `rs` gains (or loses) when `to_add` replicas are spread over the
/// Deployment's ReplicaSets and `added` already were (`GetReplicaSetProportion`).
pub(crate) fn proportion(
    rs: &ReplicaSet,
    spec: &Spec,
    status_replicas: i32,
    to_add: i32,
    added: i32,
) -> i32 {
    let replicas = replicas_of(rs);
    if replicas == 0 || to_add == 0 || to_add == added {
        return 0;
    }
    let fraction = if spec.replicas == 0 {
        -replicas
    } else {
        let target = spec.replicas + spec.max_surge();
        let before = int_annotation(rs, MAX_REPLICAS).unwrap_or(status_replicas);
        // Go's integer.RoundToInt32: round half away from zero.
        let size = (f64::from(replicas) * f64::from(target) / f64::from(before)).round();
        size as i32 - replicas
    };
    let allowed = to_add - added;
    if to_add > 0 {
        fraction.min(allowed)
    } else {
        fraction.max(allowed)
    }
}

#[cfg(test)]
#[path = "util_tests.rs"]
mod tests;
