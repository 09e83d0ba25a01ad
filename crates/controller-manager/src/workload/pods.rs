//! Pod rules shared by the controllers: which Pods count, which are ready, which to delete first,
//! and the Pod a template stamps out.
//!
//! Mirrors `pkg/controller/controller_utils.go` (`IsPodActive`, `IsPodTerminating`,
//! `ActivePodsWithRanks`, `GetPodFromTemplate`) and `podutil.IsPodReady`.

use std::{cmp::Ordering, collections::HashMap, sync::Arc};

use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_openapi::jiff::Timestamp;

/// The annotation that orders Pods of equal health for deletion (`PodDeletionCost`, on by default).
const DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";

fn phase(pod: &Pod) -> &str {
    pod.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or_default()
}

fn node_name(pod: &Pod) -> &str {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or_default()
}

/// Counts toward replicas: not finished and not being deleted (`IsPodActive`).
pub(crate) fn is_active(pod: &Pod) -> bool {
    !matches!(phase(pod), "Succeeded" | "Failed") && pod.metadata.deletion_timestamp.is_none()
}

/// Being deleted but not finished (`IsPodTerminating`), counted in `terminatingReplicas`.
pub(crate) fn is_terminating(pod: &Pod) -> bool {
    !matches!(phase(pod), "Succeeded" | "Failed") && pod.metadata.deletion_timestamp.is_some()
}

/// The time the `Ready` condition turned true, if it is true (`podutil.IsPodReady`).
pub(crate) fn ready_since(pod: &Pod) -> Option<Option<Timestamp>> {
    pod.status
        .as_ref()?
        .conditions
        .as_deref()?
        .iter()
        .find(|c| c.type_ == "Ready" && c.status == "True")
        .map(|c| c.last_transition_time.as_ref().map(|t| t.0))
}

/// Whether the Pod is ready.
pub(crate) fn is_ready(pod: &Pod) -> bool {
    ready_since(pod).is_some()
}

/// Whether the Pod has been ready for `min_ready_seconds` at `now` (`podutil.IsPodAvailable`).
pub(crate) fn is_available(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> bool {
    match ready_since(pod) {
        None => false,
        Some(_) if min_ready_seconds <= 0 => true,
        Some(None) => false,
        Some(Some(since)) => since.as_second() + i64::from(min_ready_seconds) <= now.as_second(),
    }
}

fn phase_ordinal(pod: &Pod) -> u8 {
    match phase(pod) {
        "Unknown" => 1,
        "Running" => 2,
        _ => 0,
    }
}

fn deletion_cost(pod: &Pod) -> i32 {
    pod.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(DELETION_COST))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn max_restarts(pod: &Pod) -> i32 {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_deref())
        .unwrap_or_default()
        .iter()
        .map(|c| c.restart_count)
        .max()
        .unwrap_or(0)
}

/// `floor(log2(now - t))` in nanoseconds, -1 when `t` is not in the past
/// (`logarithmicRankDiff`'s buckets, feature `LogarithmicScaleDown`, on by default).
fn age_bucket(t: Timestamp, now: Timestamp) -> i64 {
    let nanos = now.as_nanosecond() - t.as_nanosecond();
    if nanos > 0 {
        i64::from(127 - nanos.leading_zeros()) // exact floor(log2) of a positive i128
    } else {
        -1
    }
}

/// Newer first, by logarithmic age bucket, then by UID; a missing time sorts first.
fn newer_first(
    a: Option<Timestamp>,
    b: Option<Timestamp>,
    uids: (&str, &str),
    now: Timestamp,
) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(a), Some(b)) if a == b => Ordering::Equal,
        (Some(a), Some(b)) => age_bucket(a, now)
            .cmp(&age_bucket(b, now))
            .then_with(|| uids.0.cmp(uids.1)),
    }
}

/// The deletion order of `ActivePodsWithRanks.Less`: the Pod to delete first sorts first.
/// `rank` is the number of related active Pods on the same node.
fn deletion_order(a: (&Pod, usize), b: (&Pod, usize), now: Timestamp) -> Ordering {
    let ((pa, ra), (pb, rb)) = (a, b);
    let uid = |p: &Pod| p.metadata.uid.clone().unwrap_or_default();
    let (ua, ub) = (uid(pa), uid(pb));
    let (na, nb) = (node_name(pa), node_name(pb));
    if na != nb && (na.is_empty() || nb.is_empty()) {
        return if na.is_empty() {
            Ordering::Less
        } else {
            Ordering::Greater
        };
    }
    phase_ordinal(pa)
        .cmp(&phase_ordinal(pb))
        .then_with(|| is_ready(pa).cmp(&is_ready(pb)))
        .then_with(|| deletion_cost(pa).cmp(&deletion_cost(pb)))
        .then_with(|| rb.cmp(&ra))
        .then_with(|| match (ready_since(pa), ready_since(pb)) {
            (Some(a), Some(b)) => newer_first(a, b, (&ua, &ub), now),
            _ => Ordering::Equal,
        })
        .then_with(|| max_restarts(pb).cmp(&max_restarts(pa)))
        .then_with(|| {
            let created = |p: &Pod| p.metadata.creation_timestamp.as_ref().map(|t| t.0);
            newer_first(created(pa), created(pb), (&ua, &ub), now)
        })
}

/// The `diff` Pods to delete out of `pods` (`getPodsToDelete`): all of them when `diff` covers
/// them, otherwise the first `diff` in deletion order, ranked by how many of `related` share
/// their node.
pub(crate) fn pods_to_delete(
    mut pods: Vec<Arc<Pod>>,
    related: &[Arc<Pod>],
    diff: usize,
    now: Timestamp,
) -> Vec<Arc<Pod>> {
    if diff < pods.len() {
        let mut on_node: HashMap<&str, usize> = HashMap::new();
        for pod in related.iter().filter(|p| is_active(p)) {
            *on_node.entry(node_name(pod)).or_default() += 1;
        }
        let rank = |p: &Pod| on_node.get(node_name(p)).copied().unwrap_or(0);
        pods.sort_by(|a, b| deletion_order((a, rank(a)), (b, rank(b)), now));
    }
    pods.truncate(diff);
    pods
}

/// The Pod `template` stamps out for `owner_name` (`GetPodFromTemplate`): the template's labels,
/// annotations, finalizers and spec, `generateName: <owner>-` and the controller reference.
pub(crate) fn pod_from_template(
    template: &PodTemplateSpec,
    owner_name: &str,
    controller: OwnerReference,
) -> Pod {
    let meta = template.metadata.clone().unwrap_or_default();
    Pod {
        metadata: ObjectMeta {
            labels: meta.labels,
            annotations: meta.annotations,
            finalizers: meta.finalizers,
            generate_name: Some(format!("{owner_name}-")),
            owner_references: Some(vec![controller]),
            ..ObjectMeta::default()
        },
        spec: template.spec.clone(),
        status: None,
    }
}

#[cfg(test)]
#[path = "pods_tests.rs"]
mod tests;
