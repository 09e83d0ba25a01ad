//! The status a ReplicaSet should have for the Pods it claims: counts of labelled, ready and
//! available Pods, and the `ReplicaFailure` condition after a failed create or delete.
//!
//! Mirrors `pkg/controller/replicaset/replica_set_utils.go` (`calculateStatus`).

use std::sync::Arc;

use k8s_openapi::api::{
    apps::v1::{ReplicaSet, ReplicaSetCondition, ReplicaSetStatus},
    core::v1::Pod,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use crate::Error;
use crate::workload::shared::go_message;
use crate::workload::{
    pods,
    versioned::{Field, string, text},
};

/// Whether the counts of two statuses are equal.
pub(super) fn same_counts(a: &ReplicaSetStatus, b: &ReplicaSetStatus) -> bool {
    a.replicas == b.replicas
        && a.fully_labeled_replicas == b.fully_labeled_replicas
        && a.ready_replicas == b.ready_replicas
        && a.available_replicas == b.available_replicas
        && a.terminating_replicas == b.terminating_replicas
}

/// `Some(n)` unless `n` is 0: the counts Go serializes with `omitempty`.
fn nonzero(n: usize) -> Option<i32> {
    let n = i32::try_from(n).unwrap_or(i32::MAX);
    (n != 0).then_some(n)
}

/// The status `rs` should have with these claimed `active` Pods (`calculateStatus`).
pub(super) fn calculate_status(
    rs: &ReplicaSet,
    active: &[Arc<Pod>],
    terminating: usize,
    manage_error: Option<&Error>,
    now: Timestamp,
) -> ReplicaSetStatus {
    let mut status = rs.status.clone().unwrap_or_default();
    let spec = rs.spec.value().cloned().unwrap_or_default();
    let template_labels = spec
        .template
        .as_ref()
        .and_then(|t| t.metadata.as_ref())
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    let fully_labeled = active
        .iter()
        .filter(|p| {
            let labels = p.metadata.labels.as_ref();
            template_labels
                .iter()
                .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
        })
        .count();
    let ready: Vec<_> = active.iter().filter(|p| pods::is_ready(p)).collect();
    let min_ready = spec.min_ready_seconds.unwrap_or(0);
    let available = ready
        .iter()
        .filter(|p| pods::is_available(p, min_ready, now))
        .count();
    let has_failure = status
        .conditions
        .as_ref()
        .is_some_and(|c| c.iter().any(|c| text(&c.type_) == "ReplicaFailure"));
    match manage_error {
        Some(e) if !has_failure => {
            let want = usize::try_from(spec.replicas.unwrap_or(1)).unwrap_or(0);
            let reason = match active.len().cmp(&want) {
                std::cmp::Ordering::Less => "FailedCreate",
                std::cmp::Ordering::Greater => "FailedDelete",
                std::cmp::Ordering::Equal => "",
            };
            status
                .conditions
                .get_or_insert_with(Vec::new)
                .push(ReplicaSetCondition {
                    type_: string("ReplicaFailure"),
                    status: string("True"),
                    reason: Some(reason.into()),
                    message: Some(go_message(e)),
                    last_transition_time: Some(Time(
                        Timestamp::from_second(now.as_second()).unwrap_or(now),
                    )),
                });
        }
        None if has_failure => {
            if let Some(c) = status.conditions.as_mut() {
                c.retain(|c| text(&c.type_) != "ReplicaFailure");
            }
            status.conditions = status.conditions.take().filter(|c| !c.is_empty());
        }
        _ => {}
    }
    status.replicas = i32::try_from(active.len()).unwrap_or(i32::MAX);
    status.fully_labeled_replicas = nonzero(fully_labeled);
    status.ready_replicas = nonzero(ready.len());
    status.available_replicas = nonzero(available);
    status.terminating_replicas = Some(i32::try_from(terminating).unwrap_or(i32::MAX));
    status
}
