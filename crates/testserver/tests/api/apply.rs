//! Server-side apply and managedFields over the wire. Every expected answer is what kube-apiserver
//! v1.36 answered to the same request.

use bytes::Bytes;
use serde_json::{Value, json};

use crate::common::{CM, Reply, assert_status, start};

const APPLY: &str = "application/apply-patch+yaml";
const DEPLOY: &str = "/apis/apps/v1/namespaces/default/deployments";

fn cm(name: &str, body: Value) -> Value {
    let mut object = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
    if let (Some(target), Some(extra)) = (object.as_object_mut(), body.as_object()) {
        for (k, v) in extra {
            if k == "metadata" {
                for (mk, mv) in v.as_object().unwrap() {
                    target["metadata"][mk] = mv.clone();
                }
            } else {
                target.insert(k.clone(), v.clone());
            }
        }
    }
    object
}

/// The managedFields as (manager, operation, fieldsV1), times left out.
fn managers(reply: &Reply) -> Vec<(String, String, Value)> {
    reply.body["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["manager"].as_str().unwrap().to_string(),
                e["operation"].as_str().unwrap().to_string(),
                e["fieldsV1"].clone(),
            )
        })
        .collect()
}

fn entry(manager: &str, operation: &str, fields: Value) -> (String, String, Value) {
    (manager.into(), operation.into(), fields)
}

#[tokio::test]
async fn a_create_records_its_manager_and_an_apply_of_its_fields_conflicts() {
    let h = start().await;
    let created = cm(
        "c1",
        json!({"metadata": {"labels": {"app": "a"}}, "data": {"a": "1", "b": "2"}}),
    );
    let reply = h
        .http
        .post(&format!("{CM}?fieldManager=kubectl-create"), created)
        .await;
    assert_eq!(
        managers(&reply),
        [entry(
            "kubectl-create",
            "Update",
            json!({"f:data": {".": {}, "f:a": {}, "f:b": {}}, "f:metadata": {"f:labels": {".": {}, "f:app": {}}}})
        )]
    );
    assert_eq!(
        reply.body["metadata"]["managedFields"][0]["apiVersion"],
        "v1"
    );
    assert_eq!(
        reply.body["metadata"]["managedFields"][0]["fieldsType"],
        "FieldsV1"
    );
    let url = format!("{CM}/c1?fieldManager=m1");
    let reply = h
        .http
        .patch(&url, APPLY, cm("c1", json!({"data": {"a": "9"}})))
        .await;
    assert_status(&reply, 409, "Conflict");
    assert_eq!(
        reply.body["message"],
        "Apply failed with 1 conflict: conflict with \"kubectl-create\" using v1: .data.a"
    );
    assert_eq!(
        reply.body["details"],
        json!({"causes": [{"reason": "FieldManagerConflict", "message": "conflict with \"kubectl-create\" using v1", "field": ".data.a"}]})
    );
    let three = cm(
        "c1",
        json!({"metadata": {"labels": {"app": "z", "x": "y"}}, "data": {"a": "9", "b": "3"}}),
    );
    let reply = h.http.patch(&url, APPLY, three).await;
    assert_eq!(
        reply.body["message"],
        "Apply failed with 3 conflicts: conflicts with \"kubectl-create\" using v1:\n- .data.a\n- .data.b\n- .metadata.labels.app"
    );
    assert_eq!(reply.body["details"]["causes"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn force_shares_and_removal_follow_ownership() {
    let h = start().await;
    let created = cm(
        "c1",
        json!({"metadata": {"labels": {"app": "a"}}, "data": {"a": "1", "b": "2"}}),
    );
    h.http
        .post(&format!("{CM}?fieldManager=kubectl-create"), created)
        .await;
    let forced = cm(
        "c1",
        json!({"metadata": {"labels": {"x": "y"}}, "data": {"a": "9"}}),
    );
    let reply = h
        .http
        .patch(
            &format!("{CM}/c1?fieldManager=m1&force=true"),
            APPLY,
            forced,
        )
        .await;
    assert_eq!(reply.code, 200);
    assert_eq!(reply.body["data"], json!({"a": "9", "b": "2"}));
    assert_eq!(
        managers(&reply),
        [
            entry(
                "m1",
                "Apply",
                json!({"f:data": {"f:a": {}}, "f:metadata": {"f:labels": {"f:x": {}}}})
            ),
            entry(
                "kubectl-create",
                "Update",
                json!({"f:data": {".": {}, "f:b": {}}, "f:metadata": {"f:labels": {".": {}, "f:app": {}}}})
            ),
        ]
    );
    let shared = cm("c1", json!({"data": {"a": "9", "c": "3"}}));
    let reply = h
        .http
        .patch(&format!("{CM}/c1?fieldManager=m2"), APPLY, shared)
        .await;
    assert_eq!(reply.code, 200);
    // m1 stops applying data.a (m2 still owns it: it stays) and labels.x (nobody else: removed).
    let dropped = cm("c1", json!({"data": {"d": "4"}}));
    let reply = h
        .http
        .patch(&format!("{CM}/c1?fieldManager=m1"), APPLY, dropped)
        .await;
    assert_eq!(
        reply.body["data"],
        json!({"a": "9", "b": "2", "c": "3", "d": "4"})
    );
    assert_eq!(reply.body["metadata"]["labels"], json!({"app": "a"}));
    // Apply entries sort by time, then by manager: m1's last apply may fall in a later second
    // than m2's, so only the set of the two is fixed.
    let mut applied = managers(&reply)[..2].to_vec();
    applied.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        applied,
        [
            entry("m1", "Apply", json!({"f:data": {"f:d": {}}})),
            entry("m2", "Apply", json!({"f:data": {"f:a": {}, "f:c": {}}})),
        ]
    );
}

#[tokio::test]
async fn writers_without_field_manager_are_named_by_their_user_agent() {
    let h = start().await;
    h.http
        .patch(
            &format!("{CM}/c1?fieldManager=m1"),
            APPLY,
            cm("c1", json!({"data": {"d": "4"}})),
        )
        .await;
    let body = Bytes::from(json!({"data": {"d": "5", "e": "6"}}).to_string());
    let headers = [("user-agent", "curl/8.5.0")];
    let reply = h
        .http
        .send_with(
            "PATCH",
            &format!("{CM}/c1"),
            "application/merge-patch+json",
            body,
            &headers,
        )
        .await;
    // m1 lost its only field, so its entry is gone.
    assert_eq!(
        managers(&reply),
        [entry(
            "curl",
            "Update",
            json!({"f:data": {"f:d": {}, "f:e": {}}})
        )]
    );
}

#[tokio::test]
async fn force_is_only_for_apply_patches() {
    let h = start().await;
    h.http.post(CM, cm("c1", json!({}))).await;
    let url = format!("{CM}/c1?force=true");
    let reply = h
        .http
        .patch(&url, "application/merge-patch+json", json!({}))
        .await;
    assert_status(&reply, 422, "Invalid");
    assert_eq!(
        reply.body["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"
    );
}

#[tokio::test]
async fn an_unchanged_apply_writes_nothing() {
    let h = start().await;
    let url = format!("{CM}/c2?fieldManager=m1");
    let first = h
        .http
        .patch(&url, APPLY, cm("c2", json!({"data": {"a": "1"}})))
        .await;
    let again = h
        .http
        .patch(&url, APPLY, cm("c2", json!({"data": {"a": "1"}})))
        .await;
    assert_eq!(again.code, 200);
    assert_eq!(
        again.body["metadata"]["resourceVersion"],
        first.body["metadata"]["resourceVersion"]
    );
    assert_eq!(
        again.body["metadata"]["managedFields"],
        first.body["metadata"]["managedFields"]
    );
}

#[tokio::test]
async fn apply_creates_a_missing_object_from_yaml() {
    let h = start().await;
    let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c2\ndata:\n  a: \"1\"\n";
    let reply = h
        .http
        .send(
            "PATCH",
            &format!("{CM}/c2?fieldManager=m1"),
            APPLY,
            Bytes::from(yaml),
        )
        .await;
    assert_eq!(reply.code, 201);
    assert_eq!(reply.body["data"], json!({"a": "1"}));
    assert!(reply.body["metadata"]["uid"].is_string());
    assert_eq!(
        managers(&reply),
        [entry("m1", "Apply", json!({"f:data": {"f:a": {}}}))]
    );
    assert_eq!(h.http.get(&format!("{CM}/c2")).await.code, 200);
}

/// v1.36: a configuration without a name applies to the object the URL names (a `generateName`
/// it carries is applied too), but cannot create one.
#[tokio::test]
async fn a_nameless_configuration_applies_to_the_urls_object_and_creates_none() {
    let h = start().await;
    let nameless = || json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "g-"}, "data": {"a": "b"}});
    let reply = h
        .http
        .patch(&format!("{CM}/absent?fieldManager=m"), APPLY, nameless())
        .await;
    assert_eq!(
        (
            reply.code,
            reply.body["message"].as_str().unwrap_or_default()
        ),
        (
            400,
            "the name of the object (absent based on URL) was undeterminable: name must be provided"
        )
    );
    h.http.post(CM, cm("present", json!({}))).await;
    let reply = h
        .http
        .patch(&format!("{CM}/present?fieldManager=m"), APPLY, nameless())
        .await;
    assert_eq!(reply.code, 200, "{}", reply.body);
    assert_eq!(
        (
            &reply.body["metadata"]["name"],
            &reply.body["metadata"]["generateName"],
            &reply.body["data"]
        ),
        (&json!("present"), &json!("g-"), &json!({"a": "b"}))
    );
}

#[tokio::test]
async fn apply_without_field_manager_is_invalid_and_dry_run_stores_nothing() {
    let h = start().await;
    let reply = h
        .http
        .patch(&format!("{CM}/c1"), APPLY, cm("c1", json!({})))
        .await;
    assert_status(&reply, 422, "Invalid");
    assert_eq!(
        reply.body["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
    let url = format!("{CM}/c1?fieldManager=m1&dryRun=All");
    let reply = h
        .http
        .patch(&url, APPLY, cm("c1", json!({"data": {"a": "1"}})))
        .await;
    assert_eq!(reply.code, 201);
    assert_eq!(h.http.get(&format!("{CM}/c1")).await.code, 404);
}

fn deployment(spec: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d1"}, "spec": spec})
}

#[tokio::test]
async fn containers_merge_by_name_and_ports_by_port_and_protocol() {
    let h = start().await;
    let first = deployment(json!({"selector": {"matchLabels": {"app": "d"}},
        "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [
            {"name": "a", "image": "a:1", "ports": [{"containerPort": 80}]},
            {"name": "b", "image": "b:1"}]}}}));
    let reply = h
        .http
        .patch(&format!("{DEPLOY}/d1?fieldManager=m1"), APPLY, first)
        .await;
    assert_eq!(reply.code, 201);
    assert_eq!(
        managers(&reply),
        [entry(
            "m1",
            "Apply",
            json!({"f:spec": {"f:selector": {}, "f:template": {
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {"f:containers": {
                "k:{\"name\":\"a\"}": {".": {}, "f:image": {}, "f:name": {}, "f:ports": {
                    "k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}}},
                "k:{\"name\":\"b\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}})
        )]
    );
    let url = format!("{DEPLOY}/d1?fieldManager=m2");
    let clash = deployment(json!({"template": {"spec": {"containers": [
        {"name": "c", "image": "c:1"}, {"name": "a", "image": "a:2", "args": ["x"]}]}}}));
    let reply = h.http.patch(&url, APPLY, clash).await;
    assert_eq!(
        reply.body["message"],
        "Apply failed with 1 conflict: conflict with \"m1\": .spec.template.spec.containers[name=\"a\"].image"
    );
    let add = deployment(json!({"template": {"spec": {"containers": [
        {"name": "c", "image": "c:1"}, {"name": "a", "args": ["x"]}]}}}));
    let reply = h.http.patch(&url, APPLY, add).await;
    let names: Vec<&str> = reply.body["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["c", "a", "b"]);
    assert_eq!(
        reply.body["spec"]["template"]["spec"]["containers"][1]["image"],
        "a:1"
    );
}

#[tokio::test]
async fn status_writers_are_managers_of_the_status_subresource() {
    let h = start().await;
    let spec = json!({"selector": {"matchLabels": {"app": "d"}},
        "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "a", "image": "a"}]}}});
    h.http
        .patch(
            &format!("{DEPLOY}/d1?fieldManager=m1"),
            APPLY,
            deployment(spec),
        )
        .await;
    let body = Bytes::from(json!({"status": {"replicas": 5}}).to_string());
    let reply = h
        .http
        .send_with(
            "PATCH",
            &format!("{DEPLOY}/d1/status"),
            "application/merge-patch+json",
            body,
            &[("user-agent", "ctrl/1.0 (linux)")],
        )
        .await;
    let ctrl = reply.body["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "ctrl")
        .unwrap()
        .clone();
    assert_eq!(ctrl["subresource"], "status");
    assert_eq!(ctrl["operation"], "Update");
    assert_eq!(ctrl["fieldsV1"], json!({"f:status": {"f:replicas": {}}}));
    let status = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d1"}, "status": {"replicas": 3}});
    let reply = h
        .http
        .patch(
            &format!("{DEPLOY}/d1/status?fieldManager=m3"),
            APPLY,
            status,
        )
        .await;
    assert_status(&reply, 409, "Conflict");
    assert_eq!(
        reply.body["message"],
        "Apply failed with 1 conflict: conflict with \"ctrl\" with subresource \"status\" using apps/v1: .status.replicas"
    );
    let status = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d1"}, "status": {"replicas": 3}});
    let reply = h
        .http
        .patch(
            &format!("{DEPLOY}/d1/status?fieldManager=m3&force=true"),
            APPLY,
            status,
        )
        .await;
    let managers: Vec<Value> = reply.body["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            json!([
                e["manager"],
                e["operation"],
                e["subresource"],
                e["fieldsV1"]
            ])
        })
        .collect();
    assert_eq!(
        managers,
        [
            json!(["m1", "Apply", null, {"f:spec": {"f:selector": {}, "f:template": {"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {"f:containers": {"k:{\"name\":\"a\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}}]),
            json!(["m3", "Apply", "status", {"f:status": {"f:replicas": {}}}]),
        ],
        "a forced status apply takes the field from the status writer"
    );
}

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const WIDGETS: &str = "/apis/ssa.example.com/v1/namespaces/default/widgets";

async fn widget_crd(h: &crate::common::Harness) {
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.ssa.example.com"},
        "spec": {"group": "ssa.example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "items": {"type": "array", "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["name"],
                            "items": {"type": "object", "required": ["name"], "properties": {
                                "name": {"type": "string"}, "size": {"type": "integer"}}}},
                        "tags": {"type": "array", "items": {"type": "string"}},
                        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}});
    assert_eq!(h.http.post(CRDS, crd).await.code, 201);
}

fn widget(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "ssa.example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec})
}

#[tokio::test]
async fn custom_resources_apply_by_their_structural_schema() {
    let h = start().await;
    widget_crd(&h).await;
    let first = widget(
        "w1",
        json!({"items": [{"name": "a", "size": 1}], "tags": ["x"],
                                    "free": {"k": {"n": 1}, "l": [1]}}),
    );
    let reply = h
        .http
        .patch(&format!("{WIDGETS}/w1?fieldManager=m1"), APPLY, first)
        .await;
    assert_eq!(reply.code, 201);
    assert_eq!(
        managers(&reply),
        [entry(
            "m1",
            "Apply",
            json!({"f:spec": {
            "f:free": {"f:k": {".": {}, "f:n": {}}, "f:l": {}},
            "f:items": {"k:{\"name\":\"a\"}": {".": {}, "f:name": {}, "f:size": {}}},
            "f:tags": {}}})
        )]
    );
    let url = format!("{WIDGETS}/w1?fieldManager=m2");
    let atomic = widget(
        "w1",
        json!({"items": [{"name": "b", "size": 2}], "tags": ["y"]}),
    );
    let reply = h.http.patch(&url, APPLY, atomic).await;
    assert_eq!(
        reply.body["message"],
        "Apply failed with 1 conflict: conflict with \"m1\": .spec.tags"
    );
    let reply = h
        .http
        .patch(
            &url,
            APPLY,
            widget("w1", json!({"items": [{"name": "b", "size": 2}]})),
        )
        .await;
    assert_eq!(
        reply.body["spec"]["items"],
        json!([{"name": "a", "size": 1}, {"name": "b", "size": 2}])
    );
    let keyless = widget("w1", json!({"items": [{"name": "q"}, {"size": 2}]}));
    let reply = h.http.patch(&url, APPLY, keyless).await;
    assert_eq!(reply.code, 500);
    assert_eq!(
        reply.body["message"],
        "failed to create typed patch object (/w1; ssa.example.com/v1, Kind=Widget): .spec.items: element 1: associative list with keys has an element that omits all key fields [\"name\"] (and doesn't have default values for any key fields)"
    );
}

#[tokio::test]
async fn custom_resources_created_by_post_own_their_spec_with_a_dot() {
    let h = start().await;
    widget_crd(&h).await;
    let mut body = widget("w2", json!({"tags": ["x"]}));
    body["metadata"]["labels"] = json!({"a": "b"});
    let reply = h
        .http
        .post(&format!("{WIDGETS}?fieldManager=poster"), body)
        .await;
    assert_eq!(
        managers(&reply),
        [entry(
            "poster",
            "Update",
            json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}}}, "f:spec": {".": {}, "f:tags": {}}})
        )]
    );
    let wrong =
        json!({"apiVersion": "ssa.example.com/v1", "kind": "Gadget", "metadata": {"name": "w2"}});
    let reply = h
        .http
        .patch(&format!("{WIDGETS}/w2?fieldManager=m9"), APPLY, wrong)
        .await;
    assert_status(&reply, 400, "BadRequest");
    assert_eq!(
        reply.body["message"],
        "invalid object type: ssa.example.com/v1, Kind=Gadget"
    );
}
