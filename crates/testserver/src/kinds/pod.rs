//! The Pod strategy (`pkg/registry/core/pod/strategy.go`): a created Pod starts with
//! `status: {phase: Pending, qosClass}` whatever the request said, as `PrepareForCreate` writes
//! it; without a scheduler or kubelet it stays so (the controller-manager's ReplicaSets create
//! such Pods). Pods also serve the `binding` subresource (`crate::handlers::binding`), through
//! which a scheduler places them on a Node, and a bound Pod is deleted gracefully: it stays,
//! marked, until its kubelet deletes it with a grace period of 0.
//!
//! # Differences from the real server
//! The QoS class follows `pkg/apis/core/helper/qos` (`ComputePodQOS`) with quantities compared
//! as written: a request equal to its limit in another spelling (`1` and `1000m`) makes the Pod
//! Burstable here, Guaranteed there; and requests are not defaulted from limits first, so a
//! container with limits only counts as having equal requests, as the defaulted object would.

use serde_json::{Map, Value, json};

use crate::kinds::builtin_defaults;
use crate::kinds::strategy::Strategy;
use crate::status::ApiError;
use crate::verb::Verb;

/// `DefaultTerminationGracePeriodSeconds`.
const DEFAULT_GRACE_PERIOD: i64 = 30;

/// The strategy of `pods`.
pub(crate) struct Pods;

impl Strategy for Pods {
    fn subresources(&self) -> &'static [(&'static str, Verb)] {
        &[
            ("binding", Verb::Create),
            ("log", Verb::Get),
            ("exec", Verb::Get),
            ("exec", Verb::Create),
            ("attach", Verb::Get),
            ("attach", Verb::Create),
            ("portforward", Verb::Get),
            ("portforward", Verb::Create),
        ]
    }

    fn binds(&self, subresource: &str) -> bool {
        subresource == "binding"
    }

    fn connects(&self, subresource: &str) -> bool {
        matches!(subresource, "log" | "exec" | "attach" | "portforward")
    }

    /// A Pod bound to a Node and not finished is deleted gracefully: the request's
    /// `gracePeriodSeconds`, else its `terminationGracePeriodSeconds`, else 30 (a negative
    /// request counts as 1), for the kubelet to stop it and delete it with 0. An unbound or
    /// finished Pod goes at once (`CheckGracefulDelete` in `strategy.go`; checked on v1.36).
    fn grace_period(&self, pod: &Value, requested: Option<i64>) -> i64 {
        let bound = pod
            .pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty());
        let phase = pod.pointer("/status/phase").and_then(Value::as_str);
        if !bound || matches!(phase, Some("Succeeded" | "Failed")) {
            return 0;
        }
        let spec = pod
            .pointer("/spec/terminationGracePeriodSeconds")
            .and_then(Value::as_i64);
        let period = requested.or(spec).unwrap_or(DEFAULT_GRACE_PERIOD);
        if period < 0 { 1 } else { period }
    }

    /// `podStatusStrategy.PrepareForUpdate`: a `/status` write may change labels and
    /// annotations (checked on v1.36), never `spec` or `ownerReferences`.
    fn status_update_metadata(&self) -> Option<&'static [&'static str]> {
        Some(&["ownerReferences"])
    }

    fn prepare_for_create(&self, object: &mut Map<String, Value>) -> Result<(), ApiError> {
        builtin_defaults::pod_admission(object);
        let qos = qos_class(object.get("spec").unwrap_or(&Value::Null));
        object.insert(
            "status".into(),
            json!({"phase": "Pending", "qosClass": qos}),
        );
        Ok(())
    }
}

/// `BestEffort` without any CPU or memory request or limit; `Guaranteed` when every container
/// limits both and requests (if given) equal the limits; `Burstable` otherwise.
fn qos_class(spec: &Value) -> &'static str {
    let containers: Vec<&Value> = ["containers", "initContainers"]
        .iter()
        .filter_map(|field| spec.get(*field).and_then(Value::as_array))
        .flatten()
        .collect();
    let compute = |resources: Option<&Value>, name: &str| {
        resources
            .and_then(|r| r.get(name))
            .and_then(Value::as_str)
            .filter(|q| !is_zero(q))
            .map(str::to_string)
    };
    let mut any = false;
    let mut guaranteed = true;
    for container in containers {
        let requests = container.pointer("/resources/requests");
        let limits = container.pointer("/resources/limits");
        for name in ["cpu", "memory"] {
            let (request, limit) = (compute(requests, name), compute(limits, name));
            any |= request.is_some() || limit.is_some();
            match (request, limit) {
                (Some(r), Some(l)) if r == l => {}
                (None, Some(_)) => {}
                _ => guaranteed = false,
            }
        }
    }
    match (any, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}

/// Whether a quantity is zero (`0`, `0m`, `0Mi`, `0.0`).
fn is_zero(quantity: &str) -> bool {
    quantity
        .trim_end_matches(|c: char| c.is_ascii_alphabetic())
        .chars()
        .all(|c| c == '0' || c == '.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qos_class_follows_requests_and_limits() {
        let pod = |resources: Value| json!({"containers": [{"name": "a", "resources": resources}]});
        assert_eq!(qos_class(&pod(json!({}))), "BestEffort");
        assert_eq!(
            qos_class(&pod(json!({"requests": {"cpu": "0"}}))),
            "BestEffort"
        );
        assert_eq!(
            qos_class(&pod(json!({"requests": {"cpu": "100m"}}))),
            "Burstable"
        );
        assert_eq!(
            qos_class(&pod(json!({"limits": {"cpu": "1", "memory": "1Gi"}}))),
            "Guaranteed"
        );
        assert_eq!(
            qos_class(&pod(
                json!({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "512Mi"}})
            )),
            "Burstable"
        );
        assert_eq!(
            qos_class(&pod(json!({"limits": {"cpu": "1"}}))),
            "Burstable"
        );
    }
}
