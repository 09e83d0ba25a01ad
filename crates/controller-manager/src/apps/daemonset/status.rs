//! The counts of a DaemonSet's status, as `kubectl rollout status daemonset/x` reads them: the
//! rollout is done when `updatedNumberScheduled` and `numberAvailable` reach
//! `desiredNumberScheduled` at the observed generation.
//!
//! Mirrors the counting half of `updateDaemonSetStatus` and the skip test of
//! `storeDaemonSetStatus` (`pkg/controller/daemon/daemon_controller.go`).

use std::sync::Arc;

use k8s_openapi::api::apps::v1::DaemonSetStatus;
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::jiff::Timestamp;

use super::daemon::{Daemon, NodePods, oldest_bound_first};
use crate::workload::pods::{is_available, is_ready};

/// The counts of a DaemonSet's status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Qualifying Nodes.
    pub(crate) desired: i32,
    /// Qualifying Nodes with a daemon Pod.
    pub(crate) current: i32,
    /// Nodes with a daemon Pod that do not qualify.
    pub(crate) misscheduled: i32,
    /// Qualifying Nodes whose oldest daemon Pod is ready.
    pub(crate) ready: i32,
    /// ... and has been for `minReadySeconds`.
    pub(crate) available: i32,
    /// Qualifying Nodes whose oldest daemon Pod is of the current template.
    pub(crate) updated: i32,
}

impl Counts {
    /// Counts `pods` over `nodes` at `now`.
    pub(crate) fn of(
        daemon: &Daemon<'_>,
        nodes: &[Arc<Node>],
        pods: &NodePods,
        now: Timestamp,
    ) -> Counts {
        let mut c = Counts::default();
        for node in nodes {
            let name = node.metadata.name.as_deref().unwrap_or_default();
            let on_node = pods.get(name).filter(|p| !p.is_empty());
            if !daemon.fit(node).should_run {
                c.misscheduled += i32::from(on_node.is_some());
                continue;
            }
            c.desired += 1;
            let Some(on_node) = on_node else {
                continue;
            };
            c.current += 1;
            let mut sorted = on_node.clone();
            sorted.sort_by(oldest_bound_first);
            let pod = &sorted[0];
            if is_ready(pod) {
                c.ready += 1;
                if is_available(pod, daemon.min_ready_seconds(), now) {
                    c.available += 1;
                }
            }
            if daemon.is_updated(pod) {
                c.updated += 1;
            }
        }
        c
    }

    /// Qualifying Nodes without an available daemon Pod.
    pub(crate) fn unavailable(&self) -> i32 {
        self.desired - self.available
    }

    /// Whether `status` already holds these counts at `generation` (no write needed).
    pub(crate) fn written(&self, status: &DaemonSetStatus, generation: Option<i64>) -> bool {
        status.desired_number_scheduled == self.desired
            && status.current_number_scheduled == self.current
            && status.number_misscheduled == self.misscheduled
            && status.number_ready == self.ready
            && status.updated_number_scheduled.unwrap_or(0) == self.updated
            && status.number_available.unwrap_or(0) == self.available
            && status.number_unavailable.unwrap_or(0) == self.unavailable()
            && status.observed_generation.unwrap_or(0) >= generation.unwrap_or(0)
    }

    /// Writes these counts into `status`, and `generation` as observed when `observe`.
    pub(crate) fn apply(
        &self,
        status: &mut DaemonSetStatus,
        generation: Option<i64>,
        observe: bool,
    ) {
        if observe {
            status.observed_generation = generation;
        }
        status.desired_number_scheduled = self.desired;
        status.current_number_scheduled = self.current;
        status.number_misscheduled = self.misscheduled;
        status.number_ready = self.ready;
        // Go leaves these out of the JSON when 0 (`omitempty`); so do we.
        let nonzero = |n: i32| (n != 0).then_some(n);
        status.updated_number_scheduled = nonzero(self.updated);
        status.number_available = nonzero(self.available);
        status.number_unavailable = nonzero(self.unavailable());
    }
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
