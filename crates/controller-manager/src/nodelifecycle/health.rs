//! Whether a Node is alive: its Ready heartbeat and its Lease's `renewTime` as last seen, and
//! the conditions that turn `Unknown` once both have been silent longer than the grace period.
//! Mirrors `tryUpdateNodeHealth` of `pkg/controller/nodelifecycle/node_lifecycle_controller.go`
//! (the `nodeHealthData` kept per Node, and its cases), without the write, which the caller does.

use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, NodeCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

/// What the controller last saw of a Node (`nodeHealthData`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Health {
    /// The Ready condition of the status last seen (`None`: the kubelet had not posted one).
    pub(crate) ready: Option<NodeCondition>,
    /// When the Node last gave a sign of life, by this controller's clock.
    pub(crate) probe: Timestamp,
    /// When its Ready condition last changed, by this controller's clock.
    pub(crate) ready_transition: Timestamp,
    /// The Lease's `renewTime` last seen.
    pub(crate) lease_renewed: Option<Timestamp>,
}

/// The grace periods: for a Node that posted a Ready condition, and for one that never did.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Grace {
    pub(crate) monitor: Duration,
    pub(crate) startup: Duration,
}

/// What one look at a Node concluded.
#[derive(Debug)]
pub(crate) struct Verdict {
    /// What to remember of it.
    pub(crate) health: Health,
    /// Its Ready condition as read (a made-up `Unknown` one stamped with its creation when it
    /// had none).
    pub(crate) observed: NodeCondition,
    /// Its Ready condition now, after any marking as `Unknown`.
    pub(crate) current: Option<NodeCondition>,
    /// The conditions to write to its status, when the Ready condition changed.
    pub(crate) write: Option<Vec<NodeCondition>>,
}

/// The conditions a silent Node's are set `Unknown` on (NetworkUnavailable is the control
/// plane's, not the kubelet's, and is left alone).
const KUBELET_CONDITIONS: [&str; 4] = ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"];

/// The condition of `type_` among `conditions`.
pub(crate) fn condition<'a>(
    conditions: Option<&'a [NodeCondition]>,
    type_: &str,
) -> Option<&'a NodeCondition> {
    conditions
        .unwrap_or_default()
        .iter()
        .find(|c| c.type_ == type_)
}

/// The Node's conditions.
pub(crate) fn conditions_of(node: &Node) -> Option<&[NodeCondition]> {
    node.status.as_ref().and_then(|s| s.conditions.as_deref())
}

/// Looks at `node` with what was `saved` of it and its Lease's `renewTime`, at `now`.
pub(crate) fn judge(
    node: &Node,
    saved: Option<&Health>,
    lease_renewed: Option<Timestamp>,
    now: Timestamp,
    grace: Grace,
) -> Verdict {
    let created = node
        .metadata
        .creation_timestamp
        .as_ref()
        .map_or(now, |t| t.0);
    let current = condition(conditions_of(node), "Ready").cloned();
    let (observed, period) = match &current {
        Some(ready) => (ready.clone(), grace.monitor),
        None => (
            NodeCondition {
                type_: "Ready".into(),
                status: "Unknown".into(),
                last_heartbeat_time: Some(Time(created)),
                last_transition_time: Some(Time(created)),
                ..NodeCondition::default()
            },
            grace.startup,
        ),
    };
    // A fresh record forgets the Lease, so that the next look counts it as renewed (as the
    // real controller's new `nodeHealthData` does); this look compares with the saved one.
    let saved_lease = saved.and_then(|s| s.lease_renewed);
    let fresh = |ready_transition| Health {
        ready: current.clone(),
        probe: now,
        ready_transition,
        lease_renewed: None,
    };
    let mut health = match (saved, saved.and_then(|s| s.ready.as_ref()), &current) {
        // Never posted: remembered from its creation on.
        (None, _, None) => Health {
            ready: None,
            probe: created,
            ready_transition: created,
            lease_renewed: None,
        },
        (Some(saved), None, None) => saved.clone(),
        (None, _, Some(_)) | (Some(_), None, Some(_)) | (Some(_), Some(_), None) => fresh(now),
        (Some(saved), Some(before), Some(ready)) => {
            if before.last_heartbeat_time == ready.last_heartbeat_time {
                saved.clone()
            } else if before.last_transition_time != ready.last_transition_time {
                fresh(now)
            } else {
                fresh(saved.ready_transition)
            }
        }
    };
    if let Some(renewed) = lease_renewed
        && saved_lease.is_none_or(|seen| seen < renewed)
    {
        health.lease_renewed = Some(renewed);
        health.probe = now;
    }
    let silent = now.as_nanosecond() - health.probe.as_nanosecond() > period.as_nanos() as i128;
    let mut write = None;
    let mut current = current;
    if silent {
        let conditions = marked_unknown(conditions_of(node), created, now);
        let ready = condition(Some(&conditions), "Ready").cloned();
        if ready.as_ref() != Some(&observed) {
            current = ready;
            write = Some(conditions);
        }
    }
    Verdict {
        health,
        observed,
        current,
        write,
    }
}

/// What to remember once the conditions `verdict` asked for are written: the new Ready
/// condition, transitioned now.
pub(crate) fn written(
    verdict: &Verdict,
    lease_renewed: Option<Timestamp>,
    now: Timestamp,
) -> Health {
    Health {
        ready: verdict.current.clone(),
        probe: verdict.health.probe,
        ready_transition: now,
        lease_renewed,
    }
}

/// `conditions` with each of the kubelet's set `Unknown` (`NodeStatusUnknown`, transition now)
/// or, when the kubelet never posted it, added as `Unknown` (`NodeStatusNeverUpdated`).
fn marked_unknown(
    conditions: Option<&[NodeCondition]>,
    created: Timestamp,
    now: Timestamp,
) -> Vec<NodeCondition> {
    let mut next = conditions.unwrap_or_default().to_vec();
    for type_ in KUBELET_CONDITIONS {
        match next.iter_mut().find(|c| c.type_ == type_) {
            None => next.push(NodeCondition {
                type_: type_.into(),
                status: "Unknown".into(),
                reason: Some("NodeStatusNeverUpdated".into()),
                message: Some("Kubelet never posted node status.".into()),
                last_heartbeat_time: Some(Time(created)),
                last_transition_time: Some(Time(now)),
            }),
            Some(c) if c.status != "Unknown" => {
                c.status = "Unknown".into();
                c.reason = Some("NodeStatusUnknown".into());
                c.message = Some("Kubelet stopped posting node status.".into());
                c.last_transition_time = Some(Time(now));
            }
            Some(_) => {}
        }
    }
    next
}

#[cfg(test)]
#[path = "health_tests.rs"]
mod tests;
