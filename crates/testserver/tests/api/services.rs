//! Services' cluster IPs and node ports, allocated, refused, kept and freed with the answers a
//! real kube-apiserver v1.36.2 gave to the same requests (its range was 10.0.0.0/24; here it is
//! 10.96.0.0/12, so the addresses in the messages differ).

use crate::common::*;
use serde_json::{Value, json};

const SERVICES: &str = "/api/v1/namespaces/default/services";
const MERGE: &str = "application/merge-patch+json";

fn service(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec})
}

#[tokio::test]
async fn cluster_ips_are_allocated_refused_when_taken_and_freed_by_a_delete() {
    let h = start_without_controllers().await;
    let web = h
        .http
        .post(SERVICES, service("web", json!({"ports": [{"port": 80}]})))
        .await;
    assert_eq!(web.code, 201, "{}", web.body);
    let ip = web.body["spec"]["clusterIP"].as_str().unwrap().to_owned();
    assert!(ip.starts_with("10."), "{ip}");
    assert_eq!(web.body["spec"]["clusterIPs"], json!([ip]));
    assert_eq!(web.body["spec"]["ipFamilyPolicy"], "SingleStack");

    let twin = service("twin", json!({"clusterIP": ip, "ports": [{"port": 80}]}));
    let refused = h.http.post(SERVICES, twin.clone()).await;
    assert_status(&refused, 422, "Invalid");
    assert_eq!(
        refused.body["message"],
        format!(
            "Service \"twin\" is invalid: spec.clusterIPs: Invalid value: [\"{ip}\"]: failed to allocate IP {ip}: provided IP is already allocated"
        )
    );
    let elsewhere = service(
        "far",
        json!({"clusterIP": "10.1.0.50", "ports": [{"port": 80}]}),
    );
    assert_eq!(
        h.http.post(SERVICES, elsewhere).await.body["message"],
        "Service \"far\" is invalid: spec.clusterIPs: Invalid value: [\"10.1.0.50\"]: failed to allocate IP 10.1.0.50: the provided network does not match the current range"
    );

    let moved = json!({"spec": {"clusterIP": "10.96.0.9", "clusterIPs": ["10.96.0.9"]}});
    let reply = h.http.patch(&format!("{SERVICES}/web"), MERGE, moved).await;
    assert_eq!(
        reply.body["message"],
        "Service \"web\" is invalid: spec.clusterIPs[0]: Invalid value: [\"10.96.0.9\"]: may not change once set"
    );

    assert_eq!(h.http.delete(&format!("{SERVICES}/web")).await.code, 200);
    let reply = h.http.post(SERVICES, twin).await;
    assert_eq!(reply.code, 201, "{}", reply.body);
    assert_eq!(reply.body["spec"]["clusterIP"], ip.as_str());
}

#[tokio::test]
async fn node_ports_follow_the_type_of_the_service() {
    let h = start_without_controllers().await;
    let spec = json!({"type": "LoadBalancer", "ports": [
        {"name": "a", "port": 80, "nodePort": 30081}, {"name": "b", "port": 81}]});
    let lb = h.http.post(SERVICES, service("lb", spec)).await;
    assert_eq!(lb.code, 201, "{}", lb.body);
    assert_eq!(lb.body["spec"]["allocateLoadBalancerNodePorts"], true);
    assert_eq!(lb.body["spec"]["ports"][0]["nodePort"], 30081);
    assert!(lb.body["spec"]["ports"][1]["nodePort"].as_u64().is_some());

    let taken = json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 30081}]});
    assert_eq!(
        h.http.post(SERVICES, service("np", taken)).await.body["message"],
        "Service \"np\" is invalid: spec.ports[0].nodePort: Invalid value: 30081: provided port is already allocated"
    );
    let low = json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 20080}]});
    assert_eq!(
        h.http.post(SERVICES, service("low", low)).await.body["message"],
        "Service \"low\" is invalid: spec.ports[0].nodePort: Invalid value: 20080: provided port is not in the valid range. The range of valid ports is 30000-32767"
    );
    let plain = json!({"type": "ClusterIP", "ports": [{"port": 80, "nodePort": 30082}]});
    assert_eq!(
        h.http.post(SERVICES, service("plain", plain)).await.body["message"],
        "Service \"plain\" is invalid: spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"
    );

    let np = json!({"type": "NodePort", "ports": [{"port": 80}]});
    let created = h.http.post(SERVICES, service("np", np)).await.body;
    let ip = created["spec"]["clusterIP"].clone();
    let reply = h
        .http
        .patch(
            &format!("{SERVICES}/np"),
            MERGE,
            json!({"spec": {"type": "ClusterIP"}}),
        )
        .await;
    assert_eq!(reply.code, 200, "{}", reply.body);
    assert_eq!(reply.body["spec"]["ports"][0].get("nodePort"), None);
    assert_eq!(reply.body["spec"]["clusterIP"], ip, "the address stays");
    let reply = h
        .http
        .patch(
            &format!("{SERVICES}/np"),
            MERGE,
            json!({"spec": {"type": "NodePort"}}),
        )
        .await;
    assert!(
        reply.body["spec"]["ports"][0]["nodePort"]
            .as_u64()
            .is_some()
    );

    let external = json!({"type": "ExternalName", "externalName": "example.com"});
    let created = h.http.post(SERVICES, service("en", external)).await.body;
    assert_eq!(created["spec"].get("clusterIP"), None);
    let to_cluster_ip =
        json!({"spec": {"type": "ClusterIP", "externalName": null, "ports": [{"port": 80}]}});
    let reply = h
        .http
        .patch(&format!("{SERVICES}/en"), MERGE, to_cluster_ip)
        .await;
    assert!(
        reply.body["spec"]["clusterIP"].as_str().is_some(),
        "{}",
        reply.body
    );
}
