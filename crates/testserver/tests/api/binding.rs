//! The `pods/binding` subresource and the `/status` writes of Pods and Nodes, answers copied from a
//! real kube-apiserver v1.36.2.

use crate::common::*;
use serde_json::{Value, json};

const PODS: &str = "/api/v1/namespaces/default/pods";

fn pod(name: &str) -> Value {
    json!({"metadata": {"name": name, "annotations": {"x": "1"}},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
}

fn binding(name: &str, node: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
           "target": {"apiVersion": "v1", "kind": "Node", "name": node}})
}

#[tokio::test]
async fn binding_places_the_pod_and_answers_a_success_status() {
    let h = start_without_controllers().await;
    let created = h.http.post(PODS, pod("a")).await.body;
    let mut body = binding("a", "node-1");
    body["metadata"]["annotations"] = json!({"x": "3", "y": "2"});
    body["metadata"]["labels"] = json!({"l": "v"});
    let reply = h.http.post(&format!("{PODS}/a/binding"), body).await;
    assert_eq!(reply.code, 201, "{}", reply.body);
    assert_eq!(
        reply.body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
    );
    let bound = h.http.get(&format!("{PODS}/a")).await.body;
    assert_eq!(bound["spec"]["nodeName"], "node-1");
    assert_eq!(
        bound["metadata"]["annotations"],
        json!({"x": "3", "y": "2"})
    );
    assert_eq!(bound["metadata"]["labels"], json!({"l": "v"}));
    // No generation bump and no new managedFields entry, as the registry writes storage directly.
    assert_eq!(
        bound["metadata"]["generation"],
        created["metadata"]["generation"]
    );
    assert_eq!(
        bound["metadata"]["managedFields"],
        created["metadata"]["managedFields"]
    );
    let conditions = bound["status"]["conditions"].as_array().unwrap();
    assert_eq!(conditions.len(), 1);
    assert_eq!(conditions[0]["type"], "PodScheduled");
    assert_eq!(conditions[0]["status"], "True");
    assert_eq!(conditions[0]["lastProbeTime"], Value::Null);
    assert!(conditions[0]["lastTransitionTime"].is_string());
    assert_eq!(bound["status"]["phase"], "Pending");
}

#[tokio::test]
async fn binding_a_bound_pod_is_a_conflict_on_pods_binding() {
    let h = start_without_controllers().await;
    h.http.post(PODS, pod("a")).await;
    let path = format!("{PODS}/a/binding");
    assert_eq!(h.http.post(&path, binding("a", "n1")).await.code, 201);
    let reply = h.http.post(&path, binding("a", "n2")).await;
    assert_eq!(reply.code, 409);
    assert_eq!(
        reply.body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "Operation cannot be fulfilled on pods/binding \"a\": pod a is already assigned to node \"n1\"",
               "reason": "Conflict", "details": {"name": "a", "kind": "pods/binding"}, "code": 409})
    );
}

#[tokio::test]
async fn binding_a_deleting_pod_is_a_conflict() {
    let h = start_without_controllers().await;
    let mut p = pod("d");
    p["metadata"]["finalizers"] = json!(["example.com/x"]);
    h.http.post(PODS, p).await;
    assert_eq!(h.http.delete(&format!("{PODS}/d")).await.code, 200);
    let reply = h
        .http
        .post(&format!("{PODS}/d/binding"), binding("d", "n"))
        .await;
    assert_eq!(reply.code, 409);
    assert_eq!(
        reply.body["message"],
        "Operation cannot be fulfilled on pods/binding \"d\": pod d is being deleted, cannot be assigned to a host"
    );
}

#[tokio::test]
async fn binding_refusals_match_the_real_server() {
    let h = start_without_controllers().await;
    h.http.post(PODS, pod("b")).await;
    let missing = h
        .http
        .post(&format!("{PODS}/zz/binding"), binding("zz", "n"))
        .await;
    assert_eq!(missing.code, 404);
    assert_eq!(
        missing.body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "pods \"zz\" not found", "reason": "NotFound",
               "details": {"name": "zz", "kind": "pods"}, "code": 404})
    );
    let path = format!("{PODS}/b/binding");
    let renamed = h.http.post(&path, binding("c", "n")).await;
    assert_eq!(
        (renamed.code, renamed.body["reason"].clone()),
        (400, json!("BadRequest"))
    );
    assert_eq!(
        renamed.body["message"],
        "name in URL does not match name in Binding object"
    );
    let mut elsewhere = binding("b", "n");
    elsewhere["metadata"]["namespace"] = json!("other");
    let reply = h.http.post(&path, elsewhere).await;
    assert_eq!(reply.code, 400);
    assert_eq!(
        reply.body["message"],
        "the namespace of the provided object does not match the namespace sent on the request"
    );
    let no_node = h.http.post(&path, binding("b", "")).await;
    assert_eq!(
        no_node.body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "target.name: Required value", "code": 500})
    );
    let wrong_uid = {
        let mut body = binding("b", "n");
        body["metadata"]["uid"] = json!("nope");
        h.http.post(&path, body).await
    };
    assert_eq!(wrong_uid.code, 409);
    assert_eq!(wrong_uid.body["details"]["kind"], "pods");
    let get = h.http.get(&path).await;
    assert_eq!(get.code, 405);
    let still = h.http.get(&format!("{PODS}/b")).await.body;
    assert_eq!(still["spec"].get("nodeName"), None);
}

#[tokio::test]
async fn a_dry_run_binding_changes_nothing() {
    let h = start_without_controllers().await;
    h.http.post(PODS, pod("h")).await;
    let reply = h
        .http
        .post(&format!("{PODS}/h/binding?dryRun=All"), binding("h", "n"))
        .await;
    assert_eq!(reply.code, 201);
    let still = h.http.get(&format!("{PODS}/h")).await.body;
    assert_eq!(still["spec"].get("nodeName"), None);
}

#[tokio::test]
async fn pod_status_writes_change_labels_and_annotations_but_not_spec_or_owners() {
    let h = start_without_controllers().await;
    let mut p = pod("s");
    p["metadata"]["ownerReferences"] =
        json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u1"}]);
    h.http.post(PODS, p).await;
    let reply = h
        .http
        .patch(
            &format!("{PODS}/s/status"),
            "application/merge-patch+json",
            json!({"metadata": {"labels": {"new": "x"}, "annotations": {"a": "b"}, "ownerReferences": null},
                   "spec": {"nodeName": "zz"},
                   "status": {"phase": "Running", "podIP": "10.1.1.1"}}),
        )
        .await;
    assert_eq!(reply.code, 200, "{}", reply.body);
    assert_eq!(reply.body["metadata"]["labels"], json!({"new": "x"}));
    assert_eq!(
        reply.body["metadata"]["annotations"],
        json!({"x": "1", "a": "b"})
    );
    assert_eq!(reply.body["metadata"]["ownerReferences"][0]["uid"], "u1");
    assert_eq!(reply.body["spec"].get("nodeName"), None);
    assert_eq!(reply.body["status"]["phase"], "Running");
    assert_eq!(reply.body["metadata"]["generation"], 1);
}

#[tokio::test]
async fn node_status_writes_change_labels_but_not_spec() {
    let h = start_without_controllers().await;
    h.http
        .post("/api/v1/nodes", json!({"metadata": {"name": "n"}}))
        .await;
    let reply = h
        .http
        .patch(
            "/api/v1/nodes/n/status",
            "application/merge-patch+json",
            json!({"metadata": {"labels": {"new": "x"}}, "spec": {"unschedulable": true},
                   "status": {"capacity": {"cpu": "2"}}}),
        )
        .await;
    assert_eq!(reply.code, 200, "{}", reply.body);
    assert_eq!(reply.body["metadata"]["labels"], json!({"new": "x"}));
    assert_eq!(reply.body["spec"].get("unschedulable"), None);
    assert_eq!(reply.body["status"]["capacity"]["cpu"], "2");
}

fn seconds(timestamp: &Value) -> i64 {
    let text = timestamp.as_str().unwrap();
    text.parse::<jiff::Timestamp>().unwrap().as_second()
}

#[tokio::test]
async fn a_bound_pod_is_deleted_gracefully_until_a_zero_grace_delete() {
    let h = start_without_controllers().await;
    h.http.post(PODS, pod("a")).await;
    h.http
        .post(&format!("{PODS}/a/binding"), binding("a", "n"))
        .await;
    let path = format!("{PODS}/a");
    let marked = h.http.delete(&path).await;
    assert_eq!(marked.code, 200);
    let meta = &marked.body["metadata"];
    assert_eq!(meta["deletionGracePeriodSeconds"], 30);
    assert_eq!(meta["generation"], 2);
    let deadline = seconds(&meta["deletionTimestamp"]);
    assert!(
        deadline - jiff::Timestamp::now().as_second() >= 28,
        "{meta}"
    );
    assert_eq!(
        h.http.get(&path).await.code,
        200,
        "still there for its kubelet"
    );
    let sooner = h
        .http
        .delete_with(&path, json!({"gracePeriodSeconds": 10}))
        .await;
    assert_eq!(sooner.body["metadata"]["deletionGracePeriodSeconds"], 10);
    assert_eq!(
        seconds(&sooner.body["metadata"]["deletionTimestamp"]),
        deadline - 20
    );
    assert_eq!(sooner.body["metadata"]["generation"], 2);
    let later = h
        .http
        .delete_with(&path, json!({"gracePeriodSeconds": 20}))
        .await;
    assert_eq!(
        later.body["metadata"]["deletionGracePeriodSeconds"], 10,
        "only shortened"
    );
    let gone = h
        .http
        .delete_with(&path, json!({"gracePeriodSeconds": 0}))
        .await;
    assert_eq!(gone.code, 200);
    assert_eq!(h.http.get(&path).await.code, 404);
}

#[tokio::test]
async fn unbound_and_finished_pods_are_deleted_at_once() {
    let h = start_without_controllers().await;
    h.http.post(PODS, pod("c")).await;
    h.http.delete(&format!("{PODS}/c")).await;
    assert_eq!(h.http.get(&format!("{PODS}/c")).await.code, 404);
    h.http.post(PODS, pod("done")).await;
    h.http
        .post(&format!("{PODS}/done/binding"), binding("done", "n"))
        .await;
    h.http
        .patch(
            &format!("{PODS}/done/status"),
            "application/merge-patch+json",
            json!({"status": {"phase": "Succeeded"}}),
        )
        .await;
    h.http.delete(&format!("{PODS}/done")).await;
    assert_eq!(h.http.get(&format!("{PODS}/done")).await.code, 404);
}
