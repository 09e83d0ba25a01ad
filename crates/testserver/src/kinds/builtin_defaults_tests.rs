use serde_json::{Value, json};

use super::*;

/// What v1.36.2 stored for minimal objects of each kind (see the file's `_comment`).
const CASES: &str = include_str!("builtin_defaults_v1_36.json");

fn defaulted(group: &str, plural: &str, object: Value) -> Value {
    let Value::Object(mut object) = object else {
        panic!("test objects are objects")
    };
    fill(group, plural, &mut object);
    Value::Object(object)
}

#[test]
fn minimal_objects_get_what_v1_36_stores() {
    let cases: Value = serde_json::from_str(CASES).expect("the cases parse");
    let cases = cases["cases"].as_array().expect("a list of cases");
    assert_eq!(cases.len(), 8);
    for case in cases {
        let (group, plural) = (
            case["group"].as_str().unwrap_or_default(),
            case["plural"].as_str().unwrap_or_default(),
        );
        let object = defaulted(group, plural, json!({"spec": case["spec"]}));
        assert_eq!(object["spec"], case["v1.36"], "{}", case["kind"]);
    }
}

#[test]
fn defaulting_twice_changes_nothing_more() {
    let cases: Value = serde_json::from_str(CASES).expect("the cases parse");
    for case in cases["cases"].as_array().into_iter().flatten() {
        let (group, plural) = (
            case["group"].as_str().unwrap_or_default(),
            case["plural"].as_str().unwrap_or_default(),
        );
        let once = defaulted(group, plural, json!({"spec": case["spec"]}));
        assert_eq!(
            defaulted(group, plural, once.clone()),
            once,
            "{}",
            case["kind"]
        );
    }
}

#[test]
fn values_given_are_kept_and_only_the_missing_ones_filled() {
    let object = defaulted(
        "apps",
        "deployments",
        json!({"spec": {"replicas": 0, "strategy": {"type": "Recreate"}, "template": {"spec": {
            "restartPolicy": "Always", "dnsPolicy": "", "containers": [{"name": "c", "image": "x", "imagePullPolicy": "Never"}]
        }}}}),
    );
    assert_eq!(object["spec"]["replicas"], 0);
    assert_eq!(
        object["spec"]["strategy"],
        json!({"type": "Recreate"}),
        "no rollingUpdate for Recreate"
    );
    let pod = &object["spec"]["template"]["spec"];
    assert_eq!(
        pod["dnsPolicy"], "ClusterFirst",
        "an empty string is unset, as in Go"
    );
    assert_eq!(pod["containers"][0]["imagePullPolicy"], "Never");
}

#[test]
fn image_pull_policy_follows_the_tag() {
    for (image, policy) in [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("nginx:1.27", "IfNotPresent"),
        ("registry:5000/team/app", "Always"),
        ("registry:5000/team/app:v2", "IfNotPresent"),
        ("app@sha256:0123", "IfNotPresent"),
    ] {
        assert_eq!(pull_policy(image), policy, "{image}");
    }
}

#[test]
fn a_job_with_parallelism_only_keeps_completions_unset() {
    let object = defaulted(
        "batch",
        "jobs",
        json!({"spec": {"parallelism": 3, "template": {"spec": {}}}}),
    );
    assert_eq!(object["spec"]["parallelism"], 3);
    assert_eq!(object["spec"].get("completions"), None);
    let with_policy = defaulted(
        "batch",
        "jobs",
        json!({"spec": {"podFailurePolicy": {"rules": []}, "backoffLimitPerIndex": 1, "template": {"spec": {}}}}),
    );
    assert_eq!(with_policy["spec"]["podReplacementPolicy"], "Failed");
    assert_eq!(with_policy["spec"]["backoffLimit"], i32::MAX);
}

#[test]
fn a_volume_without_a_source_is_an_empty_dir_and_service_ports_target_themselves() {
    let pod = defaulted(
        "",
        "pods",
        json!({"spec": {"volumes": [{"name": "v"}], "containers": []}}),
    );
    assert_eq!(
        pod["spec"]["volumes"][0],
        json!({"name": "v", "emptyDir": {}})
    );
    let service = defaulted(
        "",
        "services",
        json!({"spec": {"type": "NodePort", "ports": [{"port": 80}, {"port": 81, "targetPort": "http"}]}}),
    );
    assert_eq!(service["spec"]["ports"][0]["targetPort"], 80);
    assert_eq!(service["spec"]["ports"][1]["targetPort"], "http");
    assert_eq!(service["spec"]["externalTrafficPolicy"], "Cluster");
}

#[test]
fn parts_that_are_not_objects_are_left_for_validation() {
    let object = defaulted("apps", "deployments", json!({"spec": "nonsense"}));
    assert_eq!(object, json!({"spec": "nonsense"}));
    let object = defaulted(
        "apps",
        "statefulsets",
        json!({"spec": {"updateStrategy": 3}}),
    );
    assert_eq!(object["spec"]["updateStrategy"], 3);
    assert_eq!(object["spec"]["podManagementPolicy"], "OrderedReady");
}

#[test]
fn created_pods_tolerate_unready_nodes_for_five_minutes_unless_they_say_otherwise() {
    let mut pod = serde_json::Map::new();
    pod.insert(
        "spec".into(),
        json!({"tolerations": [{"key": "node.kubernetes.io/unreachable", "operator": "Exists"}]}),
    );
    pod_admission(&mut pod);
    assert_eq!(
        pod["spec"]["tolerations"],
        json!([
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists"},
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        ])
    );
    assert_eq!(pod["spec"]["priority"], 0);
    assert_eq!(pod["spec"]["preemptionPolicy"], "PreemptLowerPriority");
    let mut tolerating_all = serde_json::Map::new();
    tolerating_all.insert(
        "spec".into(),
        json!({"tolerations": [{"operator": "Exists"}]}),
    );
    pod_admission(&mut tolerating_all);
    assert_eq!(
        tolerating_all["spec"]["tolerations"],
        json!([{"operator": "Exists"}])
    );
}

#[test]
fn a_claim_is_a_pending_filesystem_volume_as_v1_36_stores_it() {
    // `kubectl get pvc data-db-0 -o json` on v1.36.2 for a claim a StatefulSet created from a
    // template giving only accessModes and a storage request.
    let spec =
        json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}});
    let object = defaulted("", "persistentvolumeclaims", json!({"spec": spec}));
    assert_eq!(
        object,
        json!({
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
                "volumeMode": "Filesystem"
            },
            "status": {"phase": "Pending"}
        })
    );
}
