use serde_json::json;

use super::*;

fn service(spec: Value) -> Service {
    serde_json::from_value(json!({"metadata": {"name": "web", "namespace": "ns", "labels": {"team": "a"}}, "spec": spec}))
        .unwrap()
}

fn pod(name: &str, ip: Option<&str>, ready: bool, extra: Value) -> Pod {
    let mut pod = json!({
        "metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}")},
        "spec": {"nodeName": "node-0", "containers": [{"name": "c", "image": "i",
            "ports": [{"name": "http", "containerPort": 8080}, {"name": "dns", "containerPort": 53, "protocol": "UDP"}]}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]}
    });
    if let Some(ip) = ip {
        pod["status"]["podIP"] = json!(ip);
    }
    merge(&mut pod, extra);
    serde_json::from_value(pod).unwrap()
}

fn merge(into: &mut Value, patch: Value) {
    if let (Some(into), Value::Object(patch)) = (into.as_object_mut(), patch) {
        for (key, value) in patch {
            match into.get_mut(&key) {
                Some(existing) if existing.is_object() && value.is_object() => {
                    merge(existing, value)
                }
                _ => {
                    into.insert(key, value);
                }
            }
        }
    }
}

/// The slice v1.36.2's controller wrote for two ready Pods behind a Service with a named and a
/// numbered target port (recorded with kubegen's simulated nodes against it).
#[test]
fn ready_pods_become_endpoints_with_their_ports_resolved_as_v1_36_writes_them() {
    let svc = service(json!({"selector": {"app": "web"}, "ports": [
        {"name": "h", "port": 80, "targetPort": "http", "protocol": "TCP"},
        {"name": "raw", "port": 81, "targetPort": 9090, "protocol": "UDP"}]}));
    let (a, b) = (
        pod("a", Some("10.64.0.12"), true, json!({})),
        pod("b", Some("10.64.0.13"), true, json!({})),
    );
    let slices = slices(&svc, &[&a, &b]);
    assert_eq!(slices.len(), 1);
    assert_eq!(
        slices[0].ports,
        json!([{"name": "h", "port": 8080, "protocol": "TCP"}, {"name": "raw", "port": 9090, "protocol": "UDP"}])
    );
    assert_eq!(
        slices[0].endpoints[0],
        json!({"addresses": ["10.64.0.12"], "conditions": {"ready": true, "serving": true, "terminating": false},
               "nodeName": "node-0", "targetRef": {"kind": "Pod", "name": "a", "namespace": "ns", "uid": "uid-a"}})
    );
    assert_eq!(slices[0].endpoints.len(), 2);
}

#[test]
fn pods_without_an_address_or_finished_are_left_out_and_none_left_is_a_placeholder() {
    let svc = service(json!({"selector": {"app": "web"}, "ports": [{"port": 80}]}));
    let pending = pod("p", None, false, json!({}));
    let done = pod(
        "d",
        Some("10.0.0.9"),
        false,
        json!({"status": {"phase": "Succeeded"}}),
    );
    assert_eq!(
        slices(&svc, &[&pending, &done]),
        [Slice {
            ports: Value::Null,
            endpoints: vec![]
        }]
    );
}

#[test]
fn readiness_terminating_and_publish_not_ready_set_the_conditions() {
    let plain = service(json!({"selector": {"app": "web"}, "ports": [{"port": 80}]}));
    let not_ready = pod("n", Some("10.0.0.1"), false, json!({}));
    let leaving = pod(
        "t",
        Some("10.0.0.2"),
        true,
        json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}}),
    );
    let found = slices(&plain, &[&not_ready, &leaving]);
    let conditions: Vec<&Value> = found[0]
        .endpoints
        .iter()
        .map(|e| &e["conditions"])
        .collect();
    assert_eq!(
        conditions,
        [
            &json!({"ready": false, "serving": false, "terminating": false}),
            &json!({"ready": false, "serving": true, "terminating": true}),
        ]
    );
    let publish = service(
        json!({"selector": {"app": "web"}, "publishNotReadyAddresses": true, "ports": [{"port": 80}]}),
    );
    let found = slices(&publish, &[&not_ready]);
    assert_eq!(
        found[0].endpoints[0]["conditions"],
        json!({"ready": true, "serving": true, "terminating": false})
    );
}

#[test]
fn pods_resolving_ports_differently_get_separate_slices_of_at_most_a_hundred() {
    let svc = service(
        json!({"selector": {"app": "web"}, "ports": [{"name": "h", "port": 80, "targetPort": "http"}]}),
    );
    let other = pod(
        "o",
        Some("10.0.1.1"),
        true,
        json!({"spec": {"containers": [{"name": "c", "image": "i", "ports": [{"name": "http", "containerPort": 9000}]}]}}),
    );
    let many: Vec<Pod> = (0..101)
        .map(|i| {
            pod(
                &format!("p{i}"),
                Some(&format!("10.0.0.{}", i % 250)),
                true,
                json!({}),
            )
        })
        .collect();
    let mut all: Vec<&Pod> = many.iter().collect();
    all.push(&other);
    let found = slices(&svc, &all);
    let sizes: Vec<(i64, usize)> = found
        .iter()
        .map(|s| (s.ports[0]["port"].as_i64().unwrap(), s.endpoints.len()))
        .collect();
    assert_eq!(sizes, [(8080, 100), (8080, 1), (9000, 1)]);
    let unnamed = service(
        json!({"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "missing"}]}),
    );
    assert_eq!(slices(&unnamed, &[&other])[0].ports, json!([]));
}

#[test]
fn a_hostname_needs_the_service_as_subdomain_and_labels_add_the_controllers_own() {
    let svc =
        service(json!({"selector": {"app": "web"}, "clusterIP": "None", "ports": [{"port": 80}]}));
    let named = pod(
        "h",
        Some("10.0.0.3"),
        true,
        json!({"spec": {"hostname": "db-0", "subdomain": "web"}}),
    );
    let elsewhere = pod(
        "e",
        Some("10.0.0.4"),
        true,
        json!({"spec": {"hostname": "db-1", "subdomain": "other"}}),
    );
    let found = slices(&svc, &[&named, &elsewhere]);
    assert_eq!(found[0].endpoints[0]["hostname"], "db-0");
    assert_eq!(found[0].endpoints[1].get("hostname"), None);
    assert_eq!(
        labels(&svc),
        BTreeMap::from([
            (
                "endpointslice.kubernetes.io/managed-by".to_owned(),
                "endpointslice-controller.k8s.io".to_owned()
            ),
            ("kubernetes.io/service-name".to_owned(), "web".to_owned()),
            ("service.kubernetes.io/headless".to_owned(), String::new()),
            ("team".to_owned(), "a".to_owned()),
        ])
    );
}
