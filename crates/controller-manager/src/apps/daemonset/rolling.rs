//! A RollingUpdate step: which old daemon Pods to delete and on which Nodes to start updated
//! ones, within `maxUnavailable` (old Pod deleted first) or `maxSurge` (updated Pod started
//! first).
//!
//! Mirrors `rollingUpdate`, `findUpdatedPodsOnNode` and `updatedDesiredNodeCounts` of
//! `pkg/controller/daemon/update.go`.
//!
//! # Rules
//! - Unavailable Pods do not wait: an old Pod that is not available is replaced at once.
//! - Without surge, at most `maxUnavailable` qualifying Nodes are without an available Pod; with
//!   surge, at most `maxSurge` Nodes run an extra updated Pod, and the old one is deleted once
//!   the updated one is available.
//! - Neither set (both 0) means `maxUnavailable` 1.
//! - A Node with more than one old or more than one updated Pod is left to `manage`.
//!
//! # Differences from v1.36
//! v1.36 walks Nodes in Go's random map order, so which Nodes go first differs from run to run;
//! here Nodes go in name order.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::jiff::Timestamp;

use super::daemon::{Daemon, NodePods};
use crate::workload::pods::is_available;

/// What a rolling update step does.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Step {
    /// Names of old Pods to delete.
    pub(crate) delete: Vec<String>,
    /// Nodes on which to start an updated Pod.
    pub(crate) create_on: Vec<String>,
}

/// A Node's updated Pod and its old one, each if any.
type NewAndOld<'p> = (Option<&'p Arc<Pod>>, Option<&'p Arc<Pod>>);

/// The updated and the old Pod of a Node, or `None` when it has two of either
/// (`findUpdatedPodsOnNode`). Pods being deleted do not count.
fn updated_and_old<'p>(daemon: &Daemon<'_>, pods: &'p [Arc<Pod>]) -> Option<NewAndOld<'p>> {
    let (mut new, mut old) = (None, None);
    for pod in pods
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
    {
        let slot = if daemon.is_updated(pod) {
            &mut new
        } else {
            &mut old
        };
        if slot.replace(pod).is_some() {
            return None;
        }
    }
    Some((new, old))
}

/// One rolling update step over `nodes` whose daemon Pods are `pods`.
pub(crate) fn step(
    daemon: &Daemon<'_>,
    nodes: &[Arc<Node>],
    pods: &NodePods,
    now: Timestamp,
) -> Step {
    let mut pods = pods.clone();
    let mut desired = 0;
    for node in nodes {
        if daemon.fit(node).should_run {
            desired += 1;
            let name = node.metadata.name.clone().unwrap_or_default();
            pods.entry(name).or_default();
        }
    }
    let mut max_unavailable = daemon.unavailable_count(desired);
    let max_surge = daemon.surge_count(desired);
    if desired > 0 && max_unavailable == 0 && max_surge == 0 {
        max_unavailable = 1;
    }
    let available = |p: &Pod| is_available(p, daemon.min_ready_seconds(), now);
    if max_surge == 0 {
        return without_surge(daemon, &pods, max_unavailable, &available);
    }
    with_surge(daemon, nodes, &pods, (max_surge, desired), &available)
}

fn name(pod: &Pod) -> String {
    pod.metadata.name.clone().unwrap_or_default()
}

fn without_surge(
    daemon: &Daemon<'_>,
    pods: &NodePods,
    max_unavailable: i32,
    available: &dyn Fn(&Pod) -> bool,
) -> Step {
    let mut unavailable = 0;
    let (mut replace_now, mut candidates) = (Vec::new(), Vec::new());
    for node_pods in pods.values() {
        let Some((new, old)) = updated_and_old(daemon, node_pods) else {
            unavailable += 1;
            continue;
        };
        match (new, old) {
            (None, None) | (Some(_), Some(_)) => unavailable += 1,
            (Some(new), None) => {
                if !available(new) {
                    unavailable += 1;
                }
            }
            (None, Some(old)) if !available(old) => {
                replace_now.push(name(old));
                unavailable += 1;
            }
            (None, Some(_)) if unavailable >= max_unavailable => {}
            (None, Some(old)) => candidates.push(name(old)),
        }
    }
    let remaining = usize::try_from(max_unavailable - unavailable)
        .unwrap_or(0)
        .min(candidates.len());
    replace_now.extend(candidates.into_iter().take(remaining));
    Step {
        delete: replace_now,
        create_on: Vec::new(),
    }
}

fn with_surge(
    daemon: &Daemon<'_>,
    nodes: &[Arc<Node>],
    pods: &NodePods,
    (max_surge, desired): (i32, i32),
    available: &dyn Fn(&Pod) -> bool,
) -> Step {
    let should_run = |node_name: &str| {
        nodes
            .iter()
            .find(|n| n.metadata.name.as_deref() == Some(node_name))
            .is_some_and(|n| daemon.fit(n).should_run)
    };
    let (mut surge, mut available_count) = (0, 0);
    let mut step = Step::default();
    let (mut should_not_run, mut candidates) = (Vec::new(), Vec::new());
    for (node_name, node_pods) in pods {
        let Some((new, old)) = updated_and_old(daemon, node_pods) else {
            surge += 1;
            continue;
        };
        if old.or(new).is_some_and(|p| available(p)) {
            available_count += 1;
        }
        match (new, old) {
            (_, None) => {}
            (None, Some(old)) if !available(old) => {
                if should_run(node_name) {
                    step.create_on.push(node_name.clone());
                } else {
                    step.delete.push(name(old));
                }
            }
            (None, Some(old)) => {
                if !should_run(node_name) {
                    should_not_run.push(name(old));
                } else if surge < max_surge {
                    candidates.push(node_name.clone());
                }
            }
            (Some(new), Some(_)) if !available(new) => surge += 1,
            (Some(_), Some(old)) => step.delete.push(name(old)),
        }
    }
    let deletable = usize::try_from(available_count - desired).unwrap_or(0);
    step.delete
        .extend(should_not_run.into_iter().take(deletable));
    let remaining = usize::try_from(max_surge - surge)
        .unwrap_or(0)
        .min(candidates.len());
    step.create_on
        .extend(candidates.into_iter().take(remaining));
    step
}

#[cfg(test)]
#[path = "rolling_tests.rs"]
mod tests;
