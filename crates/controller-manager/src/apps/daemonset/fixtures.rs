//! Objects the unit tests of this controller build from JSON, as the API server would store
//! them.

use std::sync::Arc;

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{Node, Pod};
use serde_json::{Value, json};

/// A DaemonSet `agent` in `ns` with `spec` merged over a minimal one (template `app: agent`,
/// RollingUpdate with maxUnavailable 1), generation 1.
pub(crate) fn daemon_set(spec: Value) -> DaemonSet {
    let mut base = json!({
        "metadata": {"name": "agent", "namespace": "ns", "uid": "ds-uid", "generation": 1,
            "annotations": {"deprecated.daemonset.template.generation": "1"}},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "c", "image": "agent:1"}]}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
            "revisionHistoryLimit": 10
        }
    });
    merge(&mut base["spec"], spec);
    serde_json::from_value(base).unwrap()
}

fn merge(base: &mut Value, patch: Value) {
    match (base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                merge(b.entry(k).or_insert(Value::Null), v);
            }
        }
        (b, p) => *b = p,
    }
}

/// A Node `name` with `labels` and `taints`.
pub(crate) fn node(name: &str, labels: Value, taints: Value) -> Arc<Node> {
    Arc::new(
        serde_json::from_value(json!({
            "metadata": {"name": name, "labels": labels},
            "spec": {"taints": taints}
        }))
        .unwrap(),
    )
}

/// A daemon Pod `name` bound to `node`, created at `created` (seconds), of revision `hash`, in
/// `phase`, ready since `ready_since` if given.
pub(crate) fn pod(
    name: &str,
    node: &str,
    created: i64,
    hash: &str,
    phase: &str,
    ready_since: Option<i64>,
) -> Arc<Pod> {
    let stamp = |s: i64| {
        k8s_openapi::jiff::Timestamp::from_second(s)
            .unwrap()
            .to_string()
    };
    let conditions: Vec<Value> = ready_since
        .map(|t| json!({"type": "Ready", "status": "True", "lastTransitionTime": stamp(t)}))
        .into_iter()
        .collect();
    Arc::new(
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "ns", "creationTimestamp": stamp(created),
                "labels": {"app": "agent", "controller-revision-hash": hash}},
            "spec": {"nodeName": node, "containers": []},
            "status": {"phase": phase, "conditions": conditions}
        }))
        .unwrap(),
    )
}
