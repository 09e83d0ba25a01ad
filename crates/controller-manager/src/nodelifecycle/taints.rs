//! Which taints a Node's conditions call for, and taint lists edited as `pkg/util/taints`
//! (`TaintExists`, `TaintSetDiff`, `AddOrUpdateTaint`, `RemoveTaint`) edits them: two taints are
//! the same taint when key and effect match (`Taint.MatchTaint`), whatever their value.
//!
//! Mirrors `nodeConditionToTaintKeyStatusMap`, `taintKeyToNodeConditionMap` and
//! `doNoScheduleTaintingPass` of `pkg/controller/nodelifecycle/node_lifecycle_controller.go`.

use k8s_openapi::api::core::v1::{Node, Taint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

/// `node.kubernetes.io/not-ready`: Ready is False.
pub(crate) const NOT_READY: &str = "node.kubernetes.io/not-ready";
/// `node.kubernetes.io/unreachable`: Ready is Unknown.
pub(crate) const UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// `node.kubernetes.io/unschedulable`: `spec.unschedulable`.
const UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";

/// `NoSchedule`.
pub(crate) const NO_SCHEDULE: &str = "NoSchedule";
/// `NoExecute`.
pub(crate) const NO_EXECUTE: &str = "NoExecute";

/// (condition type, condition status, taint key): which condition in which state calls for
/// which taint.
const CONDITION_TAINTS: [(&str, &str, &str); 6] = [
    ("Ready", "False", NOT_READY),
    ("Ready", "Unknown", UNREACHABLE),
    (
        "MemoryPressure",
        "True",
        "node.kubernetes.io/memory-pressure",
    ),
    ("DiskPressure", "True", "node.kubernetes.io/disk-pressure"),
    (
        "NetworkUnavailable",
        "True",
        "node.kubernetes.io/network-unavailable",
    ),
    ("PIDPressure", "True", "node.kubernetes.io/pid-pressure"),
];

/// A taint with `key` and `effect` and nothing else (the controller's templates).
pub(crate) fn template(key: &str, effect: &str) -> Taint {
    Taint {
        key: key.into(),
        effect: effect.into(),
        ..Taint::default()
    }
}

/// `Taint.MatchTaint`: same key and effect.
pub(crate) fn matches(a: &Taint, b: &Taint) -> bool {
    a.key == b.key && a.effect == b.effect
}

/// `TaintExists`.
pub(crate) fn exists(taints: &[Taint], taint: &Taint) -> bool {
    taints.iter().any(|t| matches(t, taint))
}

/// The Node's taints (none when it has no spec).
pub(crate) fn of(node: &Node) -> &[Taint] {
    node.spec
        .as_ref()
        .and_then(|s| s.taints.as_deref())
        .unwrap_or_default()
}

/// The `NoSchedule` taints a Node should carry: one per condition in a tainting state, in the
/// order of its conditions, then the unschedulable one.
pub(crate) fn wanted_no_schedule(node: &Node) -> Vec<Taint> {
    let conditions = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    let mut taints: Vec<Taint> = conditions
        .iter()
        .filter_map(|c| {
            CONDITION_TAINTS
                .iter()
                .find(|(type_, status, _)| *type_ == c.type_ && *status == c.status)
                .map(|(_, _, key)| template(key, NO_SCHEDULE))
        })
        .collect();
    let unschedulable = node.spec.as_ref().and_then(|s| s.unschedulable);
    if unschedulable == Some(true) {
        taints.push(template(UNSCHEDULABLE, NO_SCHEDULE));
    }
    taints
}

/// The Node's `NoSchedule` taints this controller owns: the unschedulable one and those of
/// conditions.
pub(crate) fn owned_no_schedule(node: &Node) -> Vec<Taint> {
    of(node)
        .iter()
        .filter(|t| t.effect == NO_SCHEDULE)
        .filter(|t| t.key == UNSCHEDULABLE || CONDITION_TAINTS.iter().any(|c| c.2 == t.key))
        .cloned()
        .collect()
}

/// `TaintSetDiff`: the taints of `wanted` missing from `current`, and those of `current`
/// missing from `wanted`.
pub(crate) fn diff(wanted: &[Taint], current: &[Taint]) -> (Vec<Taint>, Vec<Taint>) {
    let add = wanted
        .iter()
        .filter(|t| !exists(current, t))
        .cloned()
        .collect();
    let remove = current
        .iter()
        .filter(|t| !exists(wanted, t))
        .cloned()
        .collect();
    (add, remove)
}

/// `taints` with each of `add` (stamped `timeAdded: now`, as `SwapNodeControllerTaint` does)
/// put in place of a matching taint or appended (`AddOrUpdateTaint`); `None` when nothing
/// changes.
pub(crate) fn added(taints: &[Taint], add: &[Taint], now: Timestamp) -> Option<Vec<Taint>> {
    let mut next = taints.to_vec();
    let mut changed = false;
    for taint in add {
        let stamped = Taint {
            time_added: Some(Time(now)),
            ..taint.clone()
        };
        match next.iter_mut().find(|t| matches(t, &stamped)) {
            Some(existing) if *existing == stamped => {}
            Some(existing) => {
                *existing = stamped;
                changed = true;
            }
            None => {
                next.push(stamped);
                changed = true;
            }
        }
    }
    changed.then_some(next)
}

/// `taints` without those matching any of `remove` (`RemoveTaint`); `None` when none matched.
pub(crate) fn removed(taints: &[Taint], remove: &[Taint]) -> Option<Vec<Taint>> {
    let next: Vec<Taint> = taints
        .iter()
        .filter(|t| !exists(remove, t))
        .cloned()
        .collect();
    (next.len() != taints.len()).then_some(next)
}

#[cfg(test)]
#[path = "taints_tests.rs"]
mod tests;
