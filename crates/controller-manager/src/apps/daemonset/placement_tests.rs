use k8s_openapi::api::core::v1::{Node, Pod, PodSpec};
use serde_json::{Value, json};

use super::*;

fn node(name: &str, labels: Value, taints: Value) -> Node {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": labels},
        "spec": {"taints": taints}
    }))
    .unwrap()
}

fn daemon_spec(spec: Value) -> PodSpec {
    let mut spec: PodSpec = serde_json::from_value(spec).unwrap();
    add_daemon_tolerations(&mut spec);
    spec
}

fn fit_of(spec: Value, node: &Node) -> (bool, bool) {
    let f = fit(&daemon_spec(spec), node);
    (f.should_run, f.may_stay)
}

#[test]
fn every_daemon_pod_tolerates_node_trouble_and_host_network_pods_a_missing_network() {
    let keys = |spec: &PodSpec| -> Vec<(String, String)> {
        spec.tolerations
            .iter()
            .flatten()
            .map(|t| (t.key.clone().unwrap(), t.effect.clone().unwrap()))
            .collect()
    };
    let plain = daemon_spec(json!({"containers": []}));
    assert_eq!(keys(&plain).len(), 6);
    assert!(
        !keys(&plain)
            .iter()
            .any(|(k, _)| k.ends_with("network-unavailable"))
    );
    let host = daemon_spec(json!({"containers": [], "hostNetwork": true}));
    assert_eq!(
        keys(&host).last().unwrap(),
        &(
            "node.kubernetes.io/network-unavailable".into(),
            "NoSchedule".into()
        )
    );
}

#[test]
fn a_matching_toleration_is_replaced_and_others_kept() {
    let spec = daemon_spec(json!({"containers": [], "tolerations": [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        {"key": "dedicated", "operator": "Equal", "value": "agents", "effect": "NoSchedule"}
    ]}));
    let tolerations = spec.tolerations.unwrap();
    assert_eq!(tolerations.len(), 7);
    assert_eq!(tolerations[0].toleration_seconds, None, "seconds dropped");
    assert_eq!(tolerations[1].key.as_deref(), Some("dedicated"));
}

#[test]
fn node_selector_and_required_affinity_must_both_match() {
    let n = node("n1", json!({"role": "edge", "zone": "a"}), json!([]));
    assert_eq!(
        fit_of(
            json!({"containers": [], "nodeSelector": {"role": "edge"}}),
            &n
        ),
        (true, true)
    );
    assert_eq!(
        fit_of(
            json!({"containers": [], "nodeSelector": {"role": "core"}}),
            &n
        ),
        (false, false)
    );
    let affinity = |op: &str, values: Value| {
        json!({"containers": [], "affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": op, "values": values}]}
        ]}}}})
    };
    assert_eq!(fit_of(affinity("In", json!(["a", "b"])), &n), (true, true));
    assert_eq!(fit_of(affinity("NotIn", json!(["a"])), &n), (false, false));
    assert_eq!(
        fit_of(affinity("DoesNotExist", json!(null)), &n),
        (false, false)
    );
}

#[test]
fn match_fields_select_a_node_by_name() {
    let spec = |name: &str| {
        json!({"containers": [], "affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}
        ]}}}})
    };
    let n = node("n1", json!({}), json!([]));
    assert!(fit_of(spec("n1"), &n).0);
    assert!(!fit_of(spec("n2"), &n).0);
}

#[test]
fn a_template_naming_another_node_fits_nowhere_else() {
    let n = node("n1", json!({}), json!([]));
    assert_eq!(
        fit_of(json!({"containers": [], "nodeName": "n2"}), &n),
        (false, false)
    );
    assert_eq!(
        fit_of(json!({"containers": [], "nodeName": "n1"}), &n),
        (true, true)
    );
}

#[test]
fn untolerated_no_schedule_keeps_running_pods_and_no_execute_evicts_them() {
    let no_schedule = node(
        "n1",
        json!({}),
        json!([{"key": "gpu", "effect": "NoSchedule"}]),
    );
    assert_eq!(
        fit_of(json!({"containers": []}), &no_schedule),
        (false, true)
    );
    let no_execute = node(
        "n1",
        json!({}),
        json!([{"key": "gpu", "effect": "NoExecute"}]),
    );
    assert_eq!(
        fit_of(json!({"containers": []}), &no_execute),
        (false, false)
    );
    let tolerant = json!({"containers": [], "tolerations": [{"key": "gpu", "operator": "Exists"}]});
    assert_eq!(fit_of(tolerant, &no_execute), (true, true));
    let prefer = node(
        "n1",
        json!({}),
        json!([{"key": "gpu", "effect": "PreferNoSchedule"}]),
    );
    assert_eq!(fit_of(json!({"containers": []}), &prefer), (true, true));
}

#[test]
fn the_daemon_tolerations_cover_unschedulable_and_not_ready_nodes() {
    let cordoned = node(
        "n1",
        json!({}),
        json!([
            {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"},
            {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}
        ]),
    );
    assert_eq!(fit_of(json!({"containers": []}), &cordoned), (true, true));
    let not_ready = node(
        "n1",
        json!({}),
        json!([
            {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
        ]),
    );
    assert_eq!(
        fit_of(json!({"containers": []}), &not_ready),
        (false, true),
        "kubelet's own NoSchedule taint is not tolerated"
    );
}

#[test]
fn pinning_replaces_required_terms_and_keeps_the_rest() {
    let affinity: Affinity = serde_json::from_value(json!({"nodeAffinity": {
    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
    ]},
    "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": {"matchExpressions": [{"key": "ssd", "operator": "Exists"}]}}
    ]}}))
    .unwrap();
    let pinned = serde_json::to_value(pin_to_node(Some(affinity), "n7")).unwrap();
    assert_eq!(
        pinned["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"],
        json!({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n7"]}]}]})
    );
    assert_eq!(
        pinned["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]["weight"],
        1
    );
    let fresh = serde_json::to_value(pin_to_node(None, "n1")).unwrap();
    assert_eq!(
        fresh["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
            [0]["matchFields"][0]["values"],
        json!(["n1"])
    );
}

#[test]
fn the_target_node_is_the_bound_one_or_the_pinned_one() {
    let pod = |spec: Value| -> Pod { serde_json::from_value(json!({"spec": spec})).unwrap() };
    let pinned = pod(serde_json::to_value(PodSpec {
        affinity: Some(pin_to_node(None, "n3")),
        ..PodSpec::default()
    })
    .unwrap());
    assert_eq!(target_node(&pinned), Some("n3"));
    let bound = pod(json!({"containers": [], "nodeName": "n4"}));
    assert_eq!(target_node(&bound), Some("n4"));
    assert_eq!(target_node(&pod(json!({"containers": []}))), None);
}
