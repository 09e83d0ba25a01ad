//! The `scale` subresource, answers copied from a real kube-apiserver.

use crate::common::*;
use serde_json::{Value, json};

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

fn deployment(name: &str, replicas: i64) -> Value {
    json!({"metadata": {"name": name},
           "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                    "template": {"metadata": {"labels": {"app": name}},
                                 "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
}

#[tokio::test]
async fn get_scale_mirrors_the_deployment() {
    let h = start_without_controllers().await;
    let created = h.http.post(DEPLOYMENTS, deployment("web", 2)).await.body;
    let scale = h.http.get(&format!("{DEPLOYMENTS}/web/scale")).await;
    assert_eq!(scale.code, 200);
    assert_eq!(
        scale.body,
        json!({"kind": "Scale", "apiVersion": "autoscaling/v1",
               "metadata": {"name": "web", "namespace": "default",
                            "uid": created["metadata"]["uid"],
                            "resourceVersion": created["metadata"]["resourceVersion"],
                            "creationTimestamp": created["metadata"]["creationTimestamp"]},
               "spec": {"replicas": 2},
               "status": {"replicas": 0, "selector": "app=web"}})
    );
}

#[tokio::test]
async fn patching_scale_updates_the_parent_and_its_watchers() {
    let h = start_without_controllers().await;
    h.http.post(DEPLOYMENTS, deployment("web", 2)).await;
    let from = h.server.api().resource_version();
    let mut watch = h
        .http
        .watch(&format!("{DEPLOYMENTS}?watch=1&resourceVersion={from}"))
        .await;
    let reply = h
        .http
        .patch(
            &format!("{DEPLOYMENTS}/web/scale"),
            "application/merge-patch+json",
            json!({"spec": {"replicas": 5}}),
        )
        .await;
    assert_eq!(reply.code, 200, "{}", reply.body);
    assert_eq!(reply.body["spec"]["replicas"], 5);
    let event = watch.next().await.unwrap();
    assert_eq!(summary(&event), ("MODIFIED".into(), "web".into()));
    assert_eq!(event["object"]["spec"]["replicas"], 5);
    assert_eq!(event["object"]["metadata"]["generation"], 2);
    assert_eq!(rv(&event["object"]), rv(&reply.body));
}

#[tokio::test]
async fn put_scale_checks_resource_version_namespace_and_replicas() {
    let h = start_without_controllers().await;
    let created = h.http.post(DEPLOYMENTS, deployment("web", 2)).await.body;
    let path = format!("{DEPLOYMENTS}/web/scale");
    let scale = |meta: Value, replicas: i64| {
        json!({"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": meta,
               "spec": {"replicas": replicas}})
    };
    let stale = h
        .http
        .put(
            &path,
            scale(
                json!({"name": "web", "namespace": "default", "resourceVersion": "1"}),
                3,
            ),
        )
        .await;
    assert_status(&stale, 409, "Conflict");
    assert_eq!(
        stale.body["message"],
        "Operation cannot be fulfilled on deployments.apps \"web\": the object has been modified; please apply your changes to the latest version and try again"
    );
    assert_eq!(
        stale.body["details"],
        json!({"name": "web", "group": "apps", "kind": "deployments"})
    );
    let no_namespace = h.http.put(&path, scale(json!({"name": "web"}), 3)).await;
    assert_status(&no_namespace, 422, "Invalid");
    assert_eq!(
        no_namespace.body["message"],
        "Scale.autoscaling \"web\" is invalid: metadata.namespace: Required value"
    );
    let negative = h
        .http
        .put(
            &path,
            scale(json!({"name": "web", "namespace": "default"}), -1),
        )
        .await;
    assert_status(&negative, 422, "Invalid");
    assert_eq!(
        negative.body["message"],
        "Scale.autoscaling \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"
    );
    let wrong_name = h
        .http
        .put(
            &path,
            scale(json!({"name": "other", "namespace": "default"}), 3),
        )
        .await;
    assert_eq!(
        wrong_name.body["message"],
        "the name of the object (other) does not match the name on the URL (web)"
    );
    let current = created["metadata"]["resourceVersion"].clone();
    let ok = h
        .http
        .put(
            &path,
            scale(
                json!({"name": "web", "namespace": "default", "resourceVersion": current}),
                3,
            ),
        )
        .await;
    assert_eq!(ok.code, 200, "{}", ok.body);
    assert_eq!(
        h.http.get(&format!("{DEPLOYMENTS}/web")).await.body["spec"]["replicas"],
        3
    );
}

#[tokio::test]
async fn scale_of_a_missing_deployment_is_not_found_on_the_subresource() {
    let h = start_without_controllers().await;
    let reply = h.http.get(&format!("{DEPLOYMENTS}/nope/scale")).await;
    assert_status(&reply, 404, "NotFound");
    assert_eq!(
        reply.body["message"],
        "deployments/scale.apps \"nope\" not found"
    );
    assert_eq!(reply.body["details"]["kind"], "deployments/scale");
}

#[tokio::test]
async fn scale_is_in_discovery_for_workloads_and_scalable_crds() {
    let h = start_without_controllers().await;
    let apps = h.http.get("/apis/apps/v1").await.body;
    let entry = apps["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "deployments/scale")
        .cloned()
        .unwrap();
    assert_eq!(
        entry,
        json!({"name": "deployments/scale", "singularName": "", "namespaced": true,
               "group": "autoscaling", "version": "v1", "kind": "Scale",
               "verbs": ["get", "patch", "update"]})
    );
    for plural in ["replicasets/scale", "statefulsets/scale"] {
        assert!(
            apps["resources"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["name"] == plural)
        );
    }
    let reply = h
        .http
        .get("/api/v1/namespaces/default/configmaps/x/scale")
        .await;
    assert_status(&reply, 404, "NotFound");
}

#[tokio::test]
async fn custom_resources_scale_through_their_declared_paths() {
    let h = start_without_controllers().await;
    let crd = json!({
        "metadata": {"name": "pools.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "pools", "kind": "Pool"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                    "subresources": {"status": {}, "scale": {
                        "specReplicasPath": ".spec.size", "statusReplicasPath": ".status.size",
                        "labelSelectorPath": ".status.selector"}}}]},
    });
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    assert_eq!(h.http.post(crds, crd).await.code, 201);
    let pools = "/apis/example.com/v1/namespaces/default/pools";
    h.http
        .post(
            pools,
            json!({"metadata": {"name": "p"}, "spec": {"size": 1}}),
        )
        .await;
    h.http
        .patch(
            &format!("{pools}/p/status"),
            "application/merge-patch+json",
            json!({"status": {"size": 1, "selector": "app=p"}}),
        )
        .await;
    let scale = h.http.get(&format!("{pools}/p/scale")).await.body;
    assert_eq!(scale["spec"], json!({"replicas": 1}));
    assert_eq!(scale["status"], json!({"replicas": 1, "selector": "app=p"}));
    let reply = h
        .http
        .patch(
            &format!("{pools}/p/scale"),
            "application/merge-patch+json",
            json!({"spec": {"replicas": 4}}),
        )
        .await;
    assert_eq!(reply.body["spec"]["replicas"], 4);
    assert_eq!(
        h.http.get(&format!("{pools}/p")).await.body["spec"]["size"],
        4
    );
    let discovery = h.http.get("/apis/example.com/v1").await.body;
    assert!(
        discovery["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["name"] == "pools/scale")
    );
    // Without its spec replicas field the Scale cannot be built: 500, as the real server.
    h.http
        .post(pools, json!({"metadata": {"name": "empty"}, "spec": {}}))
        .await;
    let reply = h.http.get(&format!("{pools}/empty/scale")).await;
    assert_status(&reply, 500, "InternalError");
    assert_eq!(
        reply.body["message"],
        "Internal error occurred: the spec replicas field \".spec.size\" does not exist"
    );
    assert_eq!(
        reply.body["details"],
        json!({"causes": [{"message": "the spec replicas field \".spec.size\" does not exist"}]})
    );
}
