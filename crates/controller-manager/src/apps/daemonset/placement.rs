//! Which Nodes a DaemonSet's Pod belongs on, and how its Pods are pinned to them.
//!
//! Mirrors `NodeShouldRunDaemonPod`, `predicates` and `NewPod` of
//! `pkg/controller/daemon/daemon_controller.go`, and `AddOrUpdateDaemonPodTolerations`,
//! `ReplaceDaemonSetPodNodeNameNodeAffinity` and `GetTargetNodeName` of
//! `pkg/controller/daemon/util/daemonset_util.go`; the required-affinity and taint matching are
//! `kubegen-scheduling`'s, as the kube-scheduler's are.
//!
//! # Rules
//! - A Node qualifies when the template names no other `nodeName`, its labels satisfy the
//!   template's `nodeSelector` and required node affinity, and the Pod (with the tolerations
//!   the controller adds, below) tolerates every `NoSchedule` and `NoExecute` taint.
//! - A Pod already on a Node that no longer qualifies only because of a `NoSchedule` taint may
//!   keep running (`shouldContinueRunning`); an untolerated `NoExecute` taint, a selector or an
//!   affinity that no longer matches, removes it.
//! - Every daemon Pod tolerates `not-ready` and `unreachable` (`NoExecute`, forever),
//!   `disk-pressure`, `memory-pressure`, `pid-pressure` and `unschedulable` (`NoSchedule`), and,
//!   with `hostNetwork`, `network-unavailable` (`NoSchedule`), so a Node's trouble does not evict
//!   the agents that may fix it.
//! - The controller does not set `nodeName`: each Pod gets a required node affinity whose only
//!   term is `matchFields: metadata.name In [<node>]`, and the scheduler binds it.
//!
//! # Differences from v1.36
//! The `Gt`/`Lt` toleration operators (`TaintTolerationComparisonOperators`, alpha, off) are
//! not known: such a toleration tolerates nothing.

use k8s_openapi::api::core::v1::{
    Affinity, Node, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod,
    PodSpec, Toleration,
};
use kubegen_scheduling::{NODE_NAME_FIELD, RequiredNodeAffinity, untolerated_taint};

/// Whether a daemon Pod should run on a Node, and whether one already there may stay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fit {
    /// The Node qualifies: a Pod is wanted there (`shouldRun`).
    pub(crate) should_run: bool,
    /// A Pod already there may stay (`shouldContinueRunning`).
    pub(crate) may_stay: bool,
}

/// The `(key, effect)` of each toleration every daemon Pod gets, and of the one a
/// `hostNetwork` Pod gets besides.
const DAEMON_TOLERATIONS: [(&str, &str); 6] = [
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
];
const HOST_NETWORK_TOLERATION: (&str, &str) =
    ("node.kubernetes.io/network-unavailable", "NoSchedule");

/// Adds the daemon tolerations to `spec` (`AddOrUpdateDaemonPodTolerations`): one with the same
/// key, operator, value and effect is replaced (dropping its `tolerationSeconds`), any other
/// kept.
pub(crate) fn add_daemon_tolerations(spec: &mut PodSpec) {
    let host_network = spec.host_network.unwrap_or(false);
    let extra = host_network.then_some(HOST_NETWORK_TOLERATION);
    let tolerations = spec.tolerations.get_or_insert_with(Vec::new);
    for (key, effect) in DAEMON_TOLERATIONS.into_iter().chain(extra) {
        let wanted = Toleration {
            key: Some(key.into()),
            operator: Some("Exists".into()),
            effect: Some(effect.into()),
            ..Toleration::default()
        };
        let same = |t: &Toleration| {
            t.key == wanted.key
                && t.operator == wanted.operator
                && t.value.as_deref().unwrap_or_default() == ""
                && t.effect == wanted.effect
        };
        match tolerations.iter_mut().find(|t| same(t)) {
            Some(existing) => *existing = wanted,
            None => tolerations.push(wanted),
        }
    }
}

/// Whether a Pod with `spec` (the template's, with the daemon tolerations added) belongs on
/// `node` (`NodeShouldRunDaemonPod`).
pub(crate) fn fit(spec: &PodSpec, node: &Node) -> Fit {
    const NEITHER: Fit = Fit {
        should_run: false,
        may_stay: false,
    };
    let node_name = node.metadata.name.as_deref().unwrap_or_default();
    if spec
        .node_name
        .as_deref()
        .is_some_and(|n| !n.is_empty() && n != node_name)
    {
        return NEITHER;
    }
    if !RequiredNodeAffinity::of(spec).matches(node) {
        return NEITHER;
    }
    let taints = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_deref())
        .unwrap_or_default();
    let tolerations = spec.tolerations.as_deref().unwrap_or_default();
    let untolerated = |effects: &[&str]| {
        untolerated_taint(taints, tolerations, |t| {
            effects.contains(&t.effect.as_str())
        })
        .is_some()
    };
    if untolerated(&["NoSchedule", "NoExecute"]) {
        return Fit {
            should_run: false,
            may_stay: !untolerated(&["NoExecute"]),
        };
    }
    Fit {
        should_run: true,
        may_stay: true,
    }
}

/// `affinity` with its required node affinity replaced by the one term that pins a Pod to
/// `node` (`ReplaceDaemonSetPodNodeNameNodeAffinity`); preferred terms and Pod (anti-)affinity
/// are kept.
pub(crate) fn pin_to_node(affinity: Option<Affinity>, node: &str) -> Affinity {
    let term = NodeSelectorTerm {
        match_fields: Some(vec![NodeSelectorRequirement {
            key: NODE_NAME_FIELD.into(),
            operator: "In".into(),
            values: Some(vec![node.to_owned()]),
        }]),
        ..NodeSelectorTerm::default()
    };
    let mut affinity = affinity.unwrap_or_default();
    let node_affinity = affinity
        .node_affinity
        .get_or_insert_with(NodeAffinity::default);
    let required = node_affinity
        .required_during_scheduling_ignored_during_execution
        .get_or_insert_with(NodeSelector::default);
    required.node_selector_terms = vec![term];
    affinity
}

/// The Node a daemon Pod is on or is pinned to (`GetTargetNodeName`): its `nodeName`, else the
/// single value of the first `metadata.name In` field requirement of its required affinity.
pub(crate) fn target_node(pod: &Pod) -> Option<&str> {
    let spec = pod.spec.as_ref()?;
    if let Some(name) = spec.node_name.as_deref().filter(|n| !n.is_empty()) {
        return Some(name);
    }
    let terms = &spec
        .affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()?
        .node_selector_terms;
    let pinned = terms
        .iter()
        .flat_map(|t| t.match_fields.as_deref().unwrap_or_default())
        .find(|e| e.key == NODE_NAME_FIELD && e.operator == "In")?;
    match pinned.values.as_deref() {
        Some([only]) => Some(only.as_str()),
        _ => None,
    }
}

#[cfg(test)]
#[path = "placement_tests.rs"]
mod tests;
