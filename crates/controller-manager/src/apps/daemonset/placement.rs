//! Which Nodes a DaemonSet's Pod belongs on, and how its Pods are pinned to them.
//!
//! Mirrors `NodeShouldRunDaemonPod`, `predicates` and `NewPod` of
//! `pkg/controller/daemon/daemon_controller.go`, and `AddOrUpdateDaemonPodTolerations`,
//! `ReplaceDaemonSetPodNodeNameNodeAffinity` and `GetTargetNodeName` of
//! `pkg/controller/daemon/util/daemonset_util.go`, with the required-affinity matching of
//! `k8s.io/component-helpers/scheduling/corev1/nodeaffinity` and `Toleration.ToleratesTaint`.
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

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, Node, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod,
    PodSpec, Taint, Toleration,
};

/// The field a daemon Pod's node affinity names its Node by (`metav1.ObjectNameField`).
const NAME_FIELD: &str = "metadata.name";

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
    if !matches_node(spec, node) {
        return NEITHER;
    }
    let taints = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_deref())
        .unwrap_or_default();
    let tolerations = spec.tolerations.as_deref().unwrap_or_default();
    let untolerated = |effects: &[&str]| {
        taints
            .iter()
            .filter(|t| effects.contains(&t.effect.as_str()))
            .any(|taint| !tolerations.iter().any(|t| tolerates(t, taint)))
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

/// `Toleration.ToleratesTaint`: an empty effect matches every effect, an empty key with
/// `Exists` every key; `Exists` matches any value, `Equal` (the default) only its own.
fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    let effect = toleration.effect.as_deref().unwrap_or_default();
    if !effect.is_empty() && effect != taint.effect {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or_default();
    if !key.is_empty() && key != taint.key {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or("Equal") {
        "Exists" => true,
        "" | "Equal" => {
            toleration.value.as_deref().unwrap_or_default()
                == taint.value.as_deref().unwrap_or_default()
        }
        _ => false,
    }
}

/// `nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)`: every `nodeSelector` label, and
/// any one term of the required node affinity (a term with no requirement matches nothing).
fn matches_node(spec: &PodSpec, node: &Node) -> bool {
    let empty = BTreeMap::new();
    let labels = node.metadata.labels.as_ref().unwrap_or(&empty);
    let selector_ok = spec
        .node_selector
        .iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    let required = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|a| {
            a.required_during_scheduling_ignored_during_execution
                .as_ref()
        });
    selector_ok
        && required.is_none_or(|selector| {
            selector
                .node_selector_terms
                .iter()
                .any(|term| term_matches(term, labels, node.metadata.name.as_ref()))
        })
}

fn term_matches(
    term: &NodeSelectorTerm,
    labels: &BTreeMap<String, String>,
    name: Option<&String>,
) -> bool {
    let expressions = term.match_expressions.as_deref().unwrap_or_default();
    let fields = term.match_fields.as_deref().unwrap_or_default();
    (!expressions.is_empty() || !fields.is_empty())
        && expressions
            .iter()
            .all(|e| requirement(e, labels.get(&e.key)))
        && fields.iter().all(|f| {
            f.key == NAME_FIELD
                && matches!(f.operator.as_str(), "In" | "NotIn")
                && f.values.as_ref().is_some_and(|v| v.len() == 1)
                && requirement(f, name)
        })
}

/// One node selector requirement against the label (or field) `value`.
fn requirement(requirement: &NodeSelectorRequirement, value: Option<&String>) -> bool {
    let values = requirement.values.as_deref().unwrap_or_default();
    let number = |s: &str| s.parse::<i64>().ok();
    match requirement.operator.as_str() {
        "In" => value.is_some_and(|v| values.contains(v)),
        "NotIn" => value.is_none_or(|v| !values.contains(v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" | "Lt" if values.len() == 1 => {
            let (Some(have), Some(bound)) = (value.and_then(|v| number(v)), number(&values[0]))
            else {
                return false;
            };
            if requirement.operator == "Gt" {
                have > bound
            } else {
                have < bound
            }
        }
        _ => false,
    }
}

/// `affinity` with its required node affinity replaced by the one term that pins a Pod to
/// `node` (`ReplaceDaemonSetPodNodeNameNodeAffinity`); preferred terms and Pod (anti-)affinity
/// are kept.
pub(crate) fn pin_to_node(affinity: Option<Affinity>, node: &str) -> Affinity {
    let term = NodeSelectorTerm {
        match_fields: Some(vec![NodeSelectorRequirement {
            key: NAME_FIELD.into(),
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
        .find(|e| e.key == NAME_FIELD && e.operator == "In")?;
    match pinned.values.as_deref() {
        Some([only]) => Some(only.as_str()),
        _ => None,
    }
}

#[cfg(test)]
#[path = "placement_tests.rs"]
mod tests;
