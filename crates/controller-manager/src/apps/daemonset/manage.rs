//! Which daemon Pods to create and which to delete so that each qualifying Node runs exactly
//! one: the pure half of the daemonset controller's `manage`.
//!
//! Mirrors `getNodesToDaemonPods`, `podsShouldBeOnNode` and `getUnscheduledPodsWithoutNode` of
//! `pkg/controller/daemon/daemon_controller.go`.
//!
//! # Rules, per Node
//! - Qualifies and has no daemon Pod: one is created.
//! - May keep its Pods: a `Failed` Pod is deleted (Warning `FailedDaemonPod`), at most once per
//!   back-off delay per Node, and a `Succeeded` one too (`SucceededDaemonPod`); of the running
//!   ones only the oldest stays, except during a surging rolling update, where the oldest
//!   updated and the oldest old Pod stay until the updated one is available (or the old one is
//!   not ready).
//! - No longer qualifies: its daemon Pods are deleted.
//!
//! Pods pinned to a Node that no longer exists and never bound are deleted. Pods bound to a
//! deleted Node are left to the Pod garbage collector, as v1.36 does.

use std::{sync::Arc, time::Duration};

use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::jiff::Timestamp;
use kubegen_runtime::EventType;
use tokio::time::Instant;

use super::backoff::Backoff;
use super::daemon::{Daemon, NodePods, REVISION_LABEL, oldest_bound_first};
use super::placement::target_node;
use crate::workload::pods::{is_available, is_ready};

/// What `manage` will do.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Plan {
    /// Nodes that need a daemon Pod.
    pub(crate) create_on: Vec<String>,
    /// Names of Pods to delete.
    pub(crate) delete: Vec<String>,
    /// Events to record on the DaemonSet: `(type, reason, message)`.
    pub(crate) events: Vec<(EventType, &'static str, String)>,
    /// When to look again at a Node whose failed Pod waits out its back-off.
    pub(crate) retry_after: Option<Duration>,
}

fn phase(pod: &Pod) -> &str {
    pod.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or_default()
}

fn name(pod: &Pod) -> String {
    pod.metadata.name.clone().unwrap_or_default()
}

/// The claimed Pods by the Node they are on or pinned to (`getNodesToDaemonPods`); Pods pinned
/// nowhere are left out, and so are finished Pods being deleted unless
/// `include_deleted_terminal`.
pub(crate) fn by_node(pods: &[Arc<Pod>], include_deleted_terminal: bool) -> NodePods {
    let mut out = NodePods::new();
    for pod in pods {
        let terminal = matches!(phase(pod), "Succeeded" | "Failed");
        if !include_deleted_terminal && terminal && pod.metadata.deletion_timestamp.is_some() {
            continue;
        }
        if let Some(node) = target_node(pod) {
            out.entry(node.to_owned()).or_default().push(pod.clone());
        }
    }
    out
}

/// Everything `manage` creates and deletes across `nodes`.
pub(crate) fn plan(
    daemon: &Daemon<'_>,
    nodes: &[Arc<Node>],
    pods: &NodePods,
    backoff: &mut Backoff,
    now: (Instant, Timestamp),
) -> Plan {
    let mut plan = Plan::default();
    for node in nodes {
        on_node(daemon, node, pods, backoff, now, &mut plan);
    }
    plan.delete.extend(unbound_on_missing_nodes(nodes, pods));
    plan
}

/// `podsShouldBeOnNode` for one Node.
fn on_node(
    daemon: &Daemon<'_>,
    node: &Node,
    pods: &NodePods,
    backoff: &mut Backoff,
    (now, wall): (Instant, Timestamp),
    plan: &mut Plan,
) {
    let node_name = node.metadata.name.clone().unwrap_or_default();
    let fit = daemon.fit(node);
    let daemon_pods = pods.get(&node_name);
    if fit.should_run && daemon_pods.is_none() {
        plan.create_on.push(node_name);
        return;
    }
    let Some(daemon_pods) = daemon_pods else {
        return;
    };
    if !fit.may_stay {
        let live = daemon_pods
            .iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none());
        plan.delete.extend(live.map(|p| name(p)));
        return;
    }
    let mut running = Vec::new();
    for pod in daemon_pods
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
    {
        let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
        match phase(pod) {
            "Failed" => {
                let uid = daemon.ds.metadata.uid.as_deref().unwrap_or_default();
                let observed = daemon
                    .ds
                    .status
                    .as_ref()
                    .and_then(|s| s.observed_generation)
                    .unwrap_or(0);
                let key = Backoff::key(uid, observed, &node_name);
                if backoff.in_backoff(&key, now) {
                    let delay = backoff.delay(&key);
                    plan.retry_after = Some(plan.retry_after.map_or(delay, |d| d.min(delay)));
                    continue;
                }
                backoff.next(&key, now);
                plan.events.push((
                    EventType::Warning,
                    "FailedDaemonPod",
                    format!(
                        "Found failed daemon pod {namespace}/{} on node {node_name}, will try to kill it",
                        name(pod)
                    ),
                ));
                plan.delete.push(name(pod));
            }
            "Succeeded" => {
                plan.events.push((
                    EventType::Normal,
                    "SucceededDaemonPod",
                    format!(
                        "Found succeeded daemon pod {namespace}/{} on node {node_name}, will try to delete it",
                        name(pod)
                    ),
                ));
                plan.delete.push(name(pod));
            }
            _ => running.push(pod.clone()),
        }
    }
    running.sort_by(oldest_bound_first);
    if !daemon.allows_surge() {
        plan.delete.extend(running.iter().skip(1).map(|p| name(p)));
        return;
    }
    if running.is_empty() && fit.should_run {
        plan.create_on.push(node_name);
    }
    if running.len() <= 1 {
        return;
    }
    surge_survivors(daemon, &running, wall, plan);
}

/// During a surge: keeps the oldest updated and the oldest old Pod; the old one goes once the
/// updated one is available or the old one is not ready.
fn surge_survivors(daemon: &Daemon<'_>, running: &[Arc<Pod>], wall: Timestamp, plan: &mut Plan) {
    let (mut oldest_new, mut oldest_old) = (None, None);
    for pod in running {
        let updated = pod
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(REVISION_LABEL))
            .is_some_and(|h| *h == daemon.hash);
        let slot = if updated {
            &mut oldest_new
        } else {
            &mut oldest_old
        };
        if slot.is_none() {
            *slot = Some(pod);
        } else {
            plan.delete.push(name(pod));
        }
    }
    if let (Some(new), Some(old)) = (oldest_new, oldest_old)
        && (!is_ready(old) || is_available(new, daemon.min_ready_seconds(), wall))
    {
        plan.delete.push(name(old));
    }
}

/// Pods pinned to Nodes that are gone and never bound (`getUnscheduledPodsWithoutNode`).
fn unbound_on_missing_nodes(nodes: &[Arc<Node>], pods: &NodePods) -> Vec<String> {
    let known: std::collections::HashSet<&str> = nodes
        .iter()
        .filter_map(|n| n.metadata.name.as_deref())
        .collect();
    pods.iter()
        .filter(|(node, _)| !known.contains(node.as_str()))
        .flat_map(|(_, pods)| pods)
        .filter(|p| {
            p.spec
                .as_ref()
                .and_then(|s| s.node_name.as_deref())
                .is_none_or(str::is_empty)
        })
        .map(|p| name(p))
        .collect()
}

#[cfg(test)]
#[path = "manage_tests.rs"]
mod tests;
