//! TaintNodesByCondition: what v1.36.2 answered to the same requests (checked with kubectl): a
//! created Node (dry run too) carries `node.kubernetes.io/not-ready:NoSchedule`, a Node created
//! with that key and effect keeps its own (value and all), and updates are not touched.

use serde_json::json;

use crate::common::start_without_controllers;

const NODES: &str = "/api/v1/nodes";

#[tokio::test]
async fn a_created_node_gets_the_not_ready_taint_even_on_a_dry_run() {
    let h = start_without_controllers().await;
    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}});
    let dry = h
        .http
        .post(&format!("{NODES}?dryRun=All"), node.clone())
        .await;
    assert_eq!(dry.code, 201, "{}", dry.body);
    let taint = json!([{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]);
    assert_eq!(dry.body["spec"]["taints"], taint);
    let created = h.http.post(NODES, node).await;
    assert_eq!(created.body["spec"]["taints"], taint);
    let stored = h.http.get(&format!("{NODES}/n1")).await.body;
    assert_eq!(stored["spec"]["taints"], taint);
}

#[tokio::test]
async fn a_node_keeps_its_own_not_ready_taint_and_updates_are_left_alone() {
    let h = start_without_controllers().await;
    let taints = json!([
        {"key": "node.kubernetes.io/not-ready", "value": "x", "effect": "NoSchedule"},
        {"key": "a", "effect": "NoExecute"}
    ]);
    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "spec": {"taints": taints}});
    let created = h.http.post(NODES, node).await;
    assert_eq!(created.body["spec"]["taints"], taints);
    let mut updated = created.body.clone();
    updated["spec"]["taints"] = json!(null);
    let reply = h.http.put(&format!("{NODES}/n1"), updated).await;
    assert_eq!(reply.code, 200, "{}", reply.body);
    // v1.36 drops the field; the test server answers it as `null` (a null written by PUT is
    // kept here, a difference of its own): either way no taint is added back.
    assert!(reply.body["spec"]["taints"].is_null(), "{}", reply.body);
    let stored = h.http.get(&format!("{NODES}/n1")).await.body;
    assert!(stored["spec"]["taints"].is_null(), "{stored}");
}
