//! TaintNodesByCondition (`plugin/pkg/admission/nodetaint/admission.go`), a mutating plugin: a
//! Node is created with the `node.kubernetes.io/not-ready:NoSchedule` taint, so that no Pod is
//! scheduled onto it before it reports Ready; the node-lifecycle controller lifts the taint once
//! it does. Only creates of `nodes` themselves (no subresource) are touched, and a Node that
//! already carries the taint (same key and effect) keeps it as it is.

use serde_json::{Map, Value, json};

use crate::admission::plugin::{Attributes, Operation, Plugin};
use crate::status::ApiError;

/// The taint key a not-ready Node carries (`v1.TaintNodeNotReady`).
const NOT_READY: &str = "node.kubernetes.io/not-ready";

/// The TaintNodesByCondition plugin.
pub(crate) struct TaintNodesByCondition;

impl Plugin for TaintNodesByCondition {
    fn admit(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&mut Map<String, Value>>,
    ) -> Result<(), ApiError> {
        let scope = attributes.scope;
        let is_node = scope.def.group.is_empty() && scope.def.plural == "nodes";
        if attributes.operation != Operation::Create || !is_node || scope.subresource.is_some() {
            return Ok(());
        }
        if let Some(node) = object {
            add_not_ready_taint(node);
        }
        Ok(())
    }
}

/// Appends the not-ready NoSchedule taint to `node.spec.taints` unless a taint with that key and
/// effect is there (`Taint.MatchTaint` compares key and effect only).
pub(crate) fn add_not_ready_taint(node: &mut Map<String, Value>) {
    let spec = node
        .entry("spec")
        .or_insert_with(|| Value::Object(Map::new()));
    if !spec.is_object() {
        // Not a Node the decoder accepted; validation answers for it.
        return;
    }
    let taints = &mut spec["taints"];
    if !taints.is_array() {
        *taints = Value::Array(Vec::new());
    }
    let Some(taints) = taints.as_array_mut() else {
        return;
    };
    let present = taints.iter().any(|t| {
        t["key"].as_str() == Some(NOT_READY) && t["effect"].as_str() == Some("NoSchedule")
    });
    if !present {
        taints.push(json!({"key": NOT_READY, "effect": "NoSchedule"}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!("test objects are maps"),
        }
    }

    #[test]
    fn a_node_without_taints_gets_the_not_ready_one() {
        let mut n = node(json!({"metadata": {"name": "a"}}));
        add_not_ready_taint(&mut n);
        assert_eq!(
            n["spec"]["taints"],
            json!([{"key": NOT_READY, "effect": "NoSchedule"}])
        );
    }

    #[test]
    fn existing_taints_are_kept_and_the_new_one_appended() {
        let mut n =
            node(json!({"spec": {"taints": [{"key": "k", "value": "v", "effect": "NoExecute"}]}}));
        add_not_ready_taint(&mut n);
        assert_eq!(
            n["spec"]["taints"],
            json!([
                {"key": "k", "value": "v", "effect": "NoExecute"},
                {"key": NOT_READY, "effect": "NoSchedule"}
            ])
        );
    }

    #[test]
    fn a_matching_taint_is_left_as_it_is_whatever_its_value() {
        let taints = json!([{"key": NOT_READY, "value": "x", "effect": "NoSchedule"}]);
        let mut n = node(json!({"spec": {"taints": taints.clone()}}));
        add_not_ready_taint(&mut n);
        assert_eq!(n["spec"]["taints"], taints);
    }

    #[test]
    fn the_same_key_with_another_effect_does_not_count() {
        let mut n = node(json!({"spec": {"taints": [{"key": NOT_READY, "effect": "NoExecute"}]}}));
        add_not_ready_taint(&mut n);
        assert_eq!(n["spec"]["taints"].as_array().map(Vec::len), Some(2));
    }
}
