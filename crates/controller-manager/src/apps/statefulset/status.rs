//! The Pod states a StatefulSet waits on, and the status it reports for its Pods: how many
//! exist, are ready, available, of the current revision and of the update revision.
//!
//! Mirrors the predicates of `pkg/controller/statefulset/stateful_set_utils.go` (`isCreated`,
//! `isRunningAndReady`, `isUnavailable`, `completeRollingUpdate`, `inconsistentStatus`) and
//! `computeReplicaStatus` of `stateful_set_control.go`.

use std::sync::Arc;

use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetStatus};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;

use super::identity::{pod_revision, replicas, spec};
use crate::workload::pods;

fn phase(pod: &Pod) -> &str {
    pod.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or_default()
}

/// The API server has stored the Pod (it has a phase) (`isCreated`).
pub(crate) fn is_created(pod: &Pod) -> bool {
    !phase(pod).is_empty()
}

/// `Pending` (`isPending`): its claims may still be missing.
pub(crate) fn is_pending(pod: &Pod) -> bool {
    phase(pod) == "Pending"
}

/// `Failed` or `Succeeded`: the Pod is done and must be replaced.
pub(crate) fn is_finished(pod: &Pod) -> bool {
    matches!(phase(pod), "Failed" | "Succeeded")
}

/// Being deleted (`isTerminating`).
pub(crate) fn is_terminating(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_some()
}

/// `Running` with a true `Ready` condition (`isRunningAndReady`).
pub(crate) fn is_running_and_ready(pod: &Pod) -> bool {
    phase(pod) == "Running" && pods::is_ready(pod)
}

/// Not available for `min_ready` seconds, or being deleted (`isUnavailable`).
pub(crate) fn is_unavailable(pod: &Pod, min_ready: i32, now: Timestamp) -> bool {
    !pods::is_available(pod, min_ready, now) || is_terminating(pod)
}

fn count(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

fn nonzero(n: usize) -> Option<i32> {
    (n != 0).then(|| count(n))
}

/// The counts of the status for these Pods (`updateStatus` over `computeReplicaStatus`); the
/// revisions, generation and collision count are left as they are in `status`.
pub(crate) fn count_pods<'a>(
    status: &mut StatefulSetStatus,
    pods: impl IntoIterator<Item = &'a Arc<Pod>>,
    min_ready: i32,
    now: Timestamp,
) {
    let current = status.current_revision.clone().unwrap_or_default();
    let update = status.update_revision.clone().unwrap_or_default();
    let (mut created, mut ready, mut available, mut on_current, mut on_update) = (0, 0, 0, 0, 0);
    for pod in pods {
        if is_created(pod) {
            created += 1;
        }
        if is_running_and_ready(pod) {
            ready += 1;
            if pods::is_available(pod, min_ready, now) {
                available += 1;
            }
        }
        if is_created(pod) && !is_terminating(pod) {
            let revision = pod_revision(pod);
            on_current += usize::from(revision == current);
            on_update += usize::from(revision == update);
        }
    }
    status.replicas = count(created);
    status.ready_replicas = nonzero(ready);
    status.available_replicas = Some(count(available));
    status.current_replicas = nonzero(on_current);
    status.updated_replicas = nonzero(on_update);
}

/// Once every replica runs the update revision and is ready, the update revision becomes the
/// current one (`completeRollingUpdate`).
pub(crate) fn complete_rolling_update(set: &StatefulSet, status: &mut StatefulSetStatus) {
    let spec = spec(set);
    let rolling = spec
        .update_strategy
        .as_ref()
        .and_then(|s| s.type_.as_deref())
        == Some("RollingUpdate");
    let want = replicas(&spec);
    if rolling
        && status.updated_replicas.unwrap_or(0) == want
        && status.ready_replicas.unwrap_or(0) == want
        && status.replicas == want
    {
        status.current_replicas = status.updated_replicas;
        status.current_revision = status.update_revision.clone();
    }
}

/// Whether `status` differs from what the set reports, so it must be written
/// (`inconsistentStatus`).
pub(crate) fn differs(set: &StatefulSet, status: &StatefulSetStatus) -> bool {
    let old = set.status.clone().unwrap_or_default();
    status.observed_generation.unwrap_or(0) > old.observed_generation.unwrap_or(0)
        || status.replicas != old.replicas
        || status.current_replicas.unwrap_or(0) != old.current_replicas.unwrap_or(0)
        || status.ready_replicas.unwrap_or(0) != old.ready_replicas.unwrap_or(0)
        || status.updated_replicas.unwrap_or(0) != old.updated_replicas.unwrap_or(0)
        || status.current_revision != old.current_revision
        || status.available_replicas.unwrap_or(0) != old.available_replicas.unwrap_or(0)
        || status.update_revision != old.update_revision
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
