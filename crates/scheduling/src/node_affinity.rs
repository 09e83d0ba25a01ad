//! Whether a Node satisfies what a Pod requires of it: `nodeaffinity.GetRequiredNodeAffinity`
//! and its `Match` (`component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go`), which
//! kube-scheduler's NodeAffinity filter and the DaemonSet controller both call.
//!
//! # Rules
//! - Every `nodeSelector` label must be on the Node with that value.
//! - The required node affinity's terms are ORed; a term with no requirement at all is skipped
//!   (it selects nothing); a term's requirements are ANDed.
//! - `matchExpressions` read the Node's labels: `In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`,
//!   `Lt`, each with the values `labels.NewRequirement` accepts (`In`/`NotIn` at least one,
//!   `Exists`/`DoesNotExist` none, `Gt`/`Lt` one integer). A requirement that breaks those rules
//!   makes its whole term match nothing, as a term that fails to parse does there.
//! - `matchFields` read the Node's fields, of which there is one, [`NODE_NAME_FIELD`]: `In` and
//!   `NotIn` with exactly one value; any other operator or count makes the term match nothing.
//!   A Node without a name has no fields, and then `matchFields` are not checked.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Node, NodeSelectorRequirement, NodeSelectorTerm, PodSpec};

/// The one field of a Node that `matchFields` can name (`metav1.ObjectNameField`).
pub const NODE_NAME_FIELD: &str = "metadata.name";

/// What a Pod requires of its Node: its `nodeSelector` and its required node affinity.
#[derive(Clone, Copy, Debug)]
pub struct RequiredNodeAffinity<'a> {
    selector: Option<&'a BTreeMap<String, String>>,
    terms: Option<&'a [NodeSelectorTerm]>,
}

impl<'a> RequiredNodeAffinity<'a> {
    /// What `spec` requires (`GetRequiredNodeAffinity`).
    pub fn of(spec: &'a PodSpec) -> Self {
        let terms = spec
            .affinity
            .as_ref()
            .and_then(|a| a.node_affinity.as_ref())
            .and_then(|a| {
                a.required_during_scheduling_ignored_during_execution
                    .as_ref()
            })
            .map(|selector| selector.node_selector_terms.as_slice());
        RequiredNodeAffinity {
            selector: spec.node_selector.as_ref().filter(|s| !s.is_empty()),
            terms,
        }
    }

    /// Whether `node` satisfies it (`RequiredNodeAffinity.Match`).
    pub fn matches(&self, node: &Node) -> bool {
        let empty = BTreeMap::new();
        let labels = node.metadata.labels.as_ref().unwrap_or(&empty);
        let selected = self
            .selector
            .is_none_or(|s| s.iter().all(|(k, v)| labels.get(k) == Some(v)));
        selected
            && self.terms.is_none_or(|terms| {
                let name = node.metadata.name.as_deref().filter(|n| !n.is_empty());
                terms.iter().any(|term| term_matches(term, labels, name))
            })
    }
}

/// One term against a Node's labels and name; `false` for an empty term or one that does not
/// parse.
fn term_matches(
    term: &NodeSelectorTerm,
    labels: &BTreeMap<String, String>,
    name: Option<&str>,
) -> bool {
    let expressions = term.match_expressions.as_deref().unwrap_or_default();
    let fields = term.match_fields.as_deref().unwrap_or_default();
    if expressions.is_empty() && fields.is_empty() {
        return false;
    }
    let labels_ok = expressions.iter().try_fold(true, |all, e| {
        label_requirement(e, labels.get(&e.key).map(String::as_str)).map(|m| all && m)
    });
    let fields_ok = fields.iter().try_fold(true, |all, f| {
        // A field selector reads an absent field as "".
        let value = if f.key == NODE_NAME_FIELD {
            name.unwrap_or_default()
        } else {
            ""
        };
        field_requirement(f).map(|m| all && (name.is_none() || m(value)))
    });
    matches!((labels_ok, fields_ok), (Some(true), Some(true)))
}

/// One `matchExpressions` requirement against the label's `value`; `None` when it does not
/// parse.
fn label_requirement(requirement: &NodeSelectorRequirement, value: Option<&str>) -> Option<bool> {
    let values = requirement.values.as_deref().unwrap_or_default();
    let contains = |v: &str| values.iter().any(|w| w == v);
    match requirement.operator.as_str() {
        "In" | "NotIn" if values.is_empty() => None,
        "In" => Some(value.is_some_and(contains)),
        "NotIn" => Some(!value.is_some_and(contains)),
        "Exists" | "DoesNotExist" if !values.is_empty() => None,
        "Exists" => Some(value.is_some()),
        "DoesNotExist" => Some(value.is_none()),
        "Gt" | "Lt" => {
            let [bound] = values else { return None };
            let bound: i64 = bound.parse().ok()?;
            let have = value.and_then(|v| v.parse::<i64>().ok());
            Some(have.is_some_and(|have| {
                if requirement.operator == "Gt" {
                    have > bound
                } else {
                    have < bound
                }
            }))
        }
        _ => None,
    }
}

/// One `matchFields` requirement as a test of the field's value; `None` when it does not parse.
fn field_requirement(requirement: &NodeSelectorRequirement) -> Option<impl Fn(&str) -> bool + '_> {
    let [only] = requirement.values.as_deref().unwrap_or_default() else {
        return None;
    };
    let wanted = match requirement.operator.as_str() {
        "In" => true,
        "NotIn" => false,
        _ => return None,
    };
    Some(move |value: &str| (value == only) == wanted)
}

#[cfg(test)]
#[path = "node_affinity_tests.rs"]
mod tests;
