//! Storage semantics through raw HTTP: create/get/update/patch/delete, resourceVersions,
//! generation, the status subresource, finalizers, namespaces.

use crate::common::*;
use kubegen_testserver::{ServerOptions, TestServer};
use serde_json::{Value, json};

const DEPLOY: &str = "/apis/apps/v1/namespaces/default/deployments";

fn deployment(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "main", "image": "nginx:1"}, {"name": "side", "image": "busybox:1"}]}}},
    })
}

#[tokio::test]
async fn create_fills_server_owned_metadata() {
    let h = start().await;
    let cm = h.http.post(CM, configmap("a", json!({}))).await.body;
    let meta = &cm["metadata"];
    assert_eq!(meta["namespace"], "default");
    assert_eq!(meta["uid"].as_str().unwrap().len(), 36);
    assert!(meta["creationTimestamp"].as_str().unwrap().ends_with('Z'));
    assert!(
        meta.get("generation").is_none(),
        "configmaps have no generation"
    );
    let d = h.http.post(DEPLOY, deployment("d")).await.body;
    assert_eq!(d["metadata"]["generation"], 1);
    assert!(rv(&d) > rv(&cm), "one global, increasing resourceVersion");
}

#[tokio::test]
async fn duplicate_create_is_already_exists_with_the_real_body() {
    let h = start().await;
    h.http.post(CM, configmap("a", json!({}))).await;
    let again = h.http.post(CM, configmap("a", json!({}))).await;
    assert_eq!(
        again.body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "configmaps \"a\" already exists", "reason": "AlreadyExists",
               "details": {"name": "a", "kind": "configmaps"}, "code": 409})
    );
}

/// v1.36 validates before it looks for a duplicate: a second `c1` over the 1 MiB limit gets
/// `ConfigMap "c1" is invalid: []: Too long: may not be more than 1048576 bytes` (422), where an
/// update with a stale resourceVersion and the same data gets 409 Conflict (the precondition is
/// checked before validation), and so does an apply naming a stale one.
#[tokio::test]
async fn invalid_duplicate_create_is_invalid_but_stale_invalid_update_conflicts() {
    let h = start().await;
    let first = h.http.post(CM, configmap("c1", json!({}))).await.body;
    let stale = first["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let mut invalid = configmap("c1", json!({}));
    invalid["data"] = json!({"big": "x".repeat(1_048_577)});
    let again = h.http.post(CM, invalid.clone()).await;
    assert_status(&again, 422, "Invalid");
    assert_eq!(
        again.body["message"],
        "ConfigMap \"c1\" is invalid: []: Too long: may not be more than 1048576 bytes"
    );
    h.http
        .patch(
            &format!("{CM}/c1"),
            "application/merge-patch+json",
            json!({"metadata": {"labels": {"a": "b"}}}),
        )
        .await;
    invalid["metadata"]["resourceVersion"] = json!(stale);
    let update = h.http.put(&format!("{CM}/c1"), invalid.clone()).await;
    assert_status(&update, 409, "Conflict");
    let apply = h
        .http
        .patch(
            &format!("{CM}/c1?fieldManager=x"),
            "application/apply-patch+yaml",
            invalid,
        )
        .await;
    assert_status(&apply, 409, "Conflict");
}

#[tokio::test]
async fn get_of_a_missing_object_is_not_found_naming_group_and_resource() {
    let h = start().await;
    let reply = h.http.get(&format!("{DEPLOY}/nope")).await;
    assert_status(&reply, 404, "NotFound");
    assert_eq!(reply.body["message"], "deployments.apps \"nope\" not found");
    assert_eq!(
        reply.body["details"],
        json!({"name": "nope", "group": "apps", "kind": "deployments"})
    );
}

#[tokio::test]
async fn generate_name_appends_five_random_characters() {
    let h = start().await;
    let body = json!({"metadata": {"generateName": "job-"}, "data": {}});
    let created = h.http.post(CM, body).await;
    assert_eq!(created.code, 201);
    let name = created.body["metadata"]["name"].as_str().unwrap();
    assert!(name.starts_with("job-") && name.len() == 9, "{name}");
}

#[tokio::test]
async fn update_with_a_stale_resource_version_conflicts() {
    let h = start().await;
    let v1 = h.http.post(CM, configmap("a", json!({}))).await.body;
    let mut v2 = v1.clone();
    v2["data"]["k"] = json!("v2");
    assert_eq!(h.http.put(&format!("{CM}/a"), v2).await.code, 200);
    let mut stale = v1.clone();
    stale["data"]["k"] = json!("v3");
    let reply = h.http.put(&format!("{CM}/a"), stale).await;
    assert_status(&reply, 409, "Conflict");
    assert_eq!(
        reply.body["message"],
        "Operation cannot be fulfilled on configmaps \"a\": the object has been modified; please apply your changes to the latest version and try again"
    );
}

#[tokio::test]
async fn update_without_resource_version_is_unconditional_and_no_op_keeps_the_version() {
    let h = start().await;
    let v1 = h.http.post(CM, configmap("a", json!({}))).await.body;
    let same = h.http.put(&format!("{CM}/a"), v1.clone()).await.body;
    assert_eq!(rv(&same), rv(&v1), "a no-op update writes nothing");
    let mut body = configmap("a", json!({}));
    body["data"]["k"] = json!("new");
    let updated = h.http.put(&format!("{CM}/a"), body).await;
    assert_eq!(updated.code, 200);
    assert!(rv(&updated.body) > rv(&v1));
    assert_eq!(
        updated.body["metadata"]["uid"], v1["metadata"]["uid"],
        "uid survives updates"
    );
}

#[tokio::test]
async fn generation_bumps_on_spec_changes_only() {
    let h = start().await;
    let d = h.http.post(DEPLOY, deployment("d")).await.body;
    let mut labelled = d.clone();
    labelled["metadata"]["labels"] = json!({"x": "y"});
    let labelled = h.http.put(&format!("{DEPLOY}/d"), labelled).await.body;
    assert_eq!(labelled["metadata"]["generation"], 1);
    let mut scaled = labelled.clone();
    scaled["spec"]["replicas"] = json!(3);
    let scaled = h.http.put(&format!("{DEPLOY}/d"), scaled).await.body;
    assert_eq!(scaled["metadata"]["generation"], 2);
}

#[tokio::test]
async fn status_subresource_splits_status_from_the_rest() {
    let h = start().await;
    let d = h.http.post(DEPLOY, deployment("d")).await.body;
    // The main endpoint ignores status.
    let mut with_status = d.clone();
    with_status["status"] = json!({"replicas": 5});
    let main = h.http.put(&format!("{DEPLOY}/d"), with_status).await.body;
    assert!(main.get("status").is_none(), "{main}");
    // /status changes status only, without a generation bump.
    let mut status_write = main.clone();
    status_write["status"] = json!({"observedGeneration": 1});
    status_write["spec"]["replicas"] = json!(9);
    let status = h
        .http
        .put(&format!("{DEPLOY}/d/status"), status_write)
        .await
        .body;
    assert_eq!(status["status"], json!({"observedGeneration": 1}));
    assert_eq!(status["spec"]["replicas"], 1);
    assert_eq!(status["metadata"]["generation"], 1);
    let patched = h
        .http
        .patch(
            &format!("{DEPLOY}/d/status"),
            "application/merge-patch+json",
            json!({"status": {"readyReplicas": 1}}),
        )
        .await
        .body;
    assert_eq!(
        patched["status"],
        json!({"observedGeneration": 1, "readyReplicas": 1})
    );
}

#[tokio::test]
async fn merge_and_json_patches_apply() {
    let h = start().await;
    h.http.post(CM, configmap("a", json!({"x": "1"}))).await;
    let merged = h
        .http
        .patch(
            &format!("{CM}/a"),
            "application/merge-patch+json",
            json!({"metadata": {"labels": {"x": null, "y": "2"}}}),
        )
        .await;
    assert_eq!(merged.body["metadata"]["labels"], json!({"y": "2"}));
    let ops = json!([{"op": "add", "path": "/data/n", "value": "v"}, {"op": "remove", "path": "/data/k"}]);
    let patched = h
        .http
        .patch(&format!("{CM}/a"), "application/json-patch+json", ops)
        .await;
    assert_eq!(patched.body["data"], json!({"n": "v"}));
    let failing = json!([{"op": "test", "path": "/data/n", "value": "other"}]);
    let reply = h
        .http
        .patch(&format!("{CM}/a"), "application/json-patch+json", failing)
        .await;
    assert_status(&reply, 422, "Invalid");
}

#[tokio::test]
async fn patch_with_a_stale_resource_version_conflicts() {
    let h = start().await;
    h.http.post(CM, configmap("a", json!({}))).await;
    let body = json!({"metadata": {"resourceVersion": "1"}, "data": {"k": "x"}});
    let reply = h
        .http
        .patch(&format!("{CM}/a"), "application/merge-patch+json", body)
        .await;
    assert_status(&reply, 409, "Conflict");
}

#[tokio::test]
async fn strategic_merge_merges_containers_by_name() {
    let h = start().await;
    h.http.post(DEPLOY, deployment("d")).await;
    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "side", "image": "busybox:2"}]}}}});
    let reply = h
        .http
        .patch(
            &format!("{DEPLOY}/d"),
            "application/strategic-merge-patch+json",
            patch,
        )
        .await;
    assert_eq!(reply.code, 200, "{}", reply.body);
    let containers = &reply.body["spec"]["template"]["spec"]["containers"];
    // Each with v1.36's container defaults, the patched-in one too.
    let defaulted = |name: &str, image: &str| {
        json!({"name": name, "image": image, "imagePullPolicy": "IfNotPresent", "resources": {},
               "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"})
    };
    assert_eq!(
        containers,
        &json!([defaulted("main", "nginx:1"), defaulted("side", "busybox:2")])
    );
    assert_eq!(reply.body["metadata"]["generation"], 2);
    let delete = json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "$patch": "delete"}]}}}});
    let reply = h
        .http
        .patch(
            &format!("{DEPLOY}/d"),
            "application/strategic-merge-patch+json",
            delete,
        )
        .await;
    assert_eq!(
        reply.body["spec"]["template"]["spec"]["containers"],
        json!([defaulted("side", "busybox:2")])
    );
}

#[tokio::test]
async fn unknown_patch_types_are_unsupported_media_type() {
    let h = start().await;
    h.http.post(CM, configmap("a", json!({}))).await;
    let reply = h
        .http
        .patch(&format!("{CM}/a"), "application/yaml", json!({}))
        .await;
    assert_status(&reply, 415, "UnsupportedMediaType");
    assert_eq!(
        reply.body["message"],
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json"
    );
}

#[tokio::test]
async fn delete_returns_a_success_status_for_configmaps_and_the_object_for_pods() {
    let h = start().await;
    let cm = h.http.post(CM, configmap("a", json!({}))).await.body;
    let reply = h.http.delete(&format!("{CM}/a")).await;
    assert_eq!(
        reply.body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
               "details": {"name": "a", "kind": "configmaps", "uid": cm["metadata"]["uid"]}})
    );
    assert_eq!(h.http.get(&format!("{CM}/a")).await.code, 404);
    let pod =
        json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}});
    h.http.post("/api/v1/namespaces/default/pods", pod).await;
    let reply = h.http.delete("/api/v1/namespaces/default/pods/p").await;
    assert_eq!((reply.code, &reply.body["kind"]), (200, &json!("Pod")));
    assert_status(&h.http.delete(&format!("{CM}/a")).await, 404, "NotFound");
}

#[tokio::test]
async fn finalizers_hold_a_deleted_object_until_removed() {
    let h = start().await;
    let mut body = configmap("a", json!({}));
    body["metadata"]["finalizers"] = json!(["example.com/hold"]);
    h.http.post(CM, body).await;
    let mut watch = h
        .http
        .watch(&format!(
            "{CM}?watch=1&resourceVersion={}",
            h.server.api().resource_version()
        ))
        .await;
    // Real servers answer 200 with the object; 202 only for `orphanDependents: false`.
    let reply = h.http.delete(&format!("{CM}/a")).await;
    assert_eq!(reply.code, 200);
    assert!(reply.body["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(
        summary(&watch.next().await.unwrap()),
        ("MODIFIED".into(), "a".into())
    );
    let still = h.http.get(&format!("{CM}/a")).await;
    assert_eq!(still.code, 200);
    // No new finalizers on a terminating object.
    let add = json!({"metadata": {"finalizers": ["example.com/hold", "example.com/more"]}});
    let reply = h
        .http
        .patch(&format!("{CM}/a"), "application/merge-patch+json", add)
        .await;
    assert_status(&reply, 422, "Invalid");
    let clear = json!({"metadata": {"finalizers": null}});
    let reply = h
        .http
        .patch(&format!("{CM}/a"), "application/merge-patch+json", clear)
        .await;
    assert_eq!(reply.code, 200);
    // As on real servers: no MODIFIED for the finalizer removal, and the DELETED object still
    // carries the finalizer (the update is never written).
    let deleted = watch.next().await.unwrap();
    assert_eq!(summary(&deleted), ("DELETED".into(), "a".into()));
    assert_eq!(
        deleted["object"]["metadata"]["finalizers"],
        json!(["example.com/hold"])
    );
    assert_eq!(rv(&deleted["object"]), rv(&reply.body));
    assert_eq!(h.http.get(&format!("{CM}/a")).await.code, 404);
}

/// The last finalizer removed, by either patch type, leaves no `finalizers` key (as v1.36: Go's
/// `omitempty`), which is how the job controller releases its Pods.
#[tokio::test]
async fn removing_the_last_finalizer_leaves_no_empty_list() {
    let h = start().await;
    let mut body = configmap("a", json!({}));
    body["metadata"]["finalizers"] = json!(["x.io/a"]);
    h.http.post(CM, body).await;
    let strategic = json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["x.io/a"]}});
    let reply = h
        .http
        .patch(
            &format!("{CM}/a"),
            "application/strategic-merge-patch+json",
            strategic,
        )
        .await;
    assert_eq!(reply.code, 200);
    assert!(
        reply.body["metadata"].get("finalizers").is_none(),
        "{}",
        reply.body
    );
    let merge = json!({"metadata": {"finalizers": []}});
    let add = json!({"metadata": {"finalizers": ["x.io/b"]}});
    h.http
        .patch(&format!("{CM}/a"), "application/merge-patch+json", add)
        .await;
    let reply = h
        .http
        .patch(&format!("{CM}/a"), "application/merge-patch+json", merge)
        .await;
    assert!(
        reply.body["metadata"].get("finalizers").is_none(),
        "{}",
        reply.body
    );
    let stored = h.http.get(&format!("{CM}/a")).await.body;
    assert!(stored["metadata"].get("finalizers").is_none());
}

#[tokio::test]
async fn delete_preconditions_are_checked() {
    let h = start().await;
    h.http.post(CM, configmap("a", json!({}))).await;
    let options =
        json!({"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": "other"}});
    let reply = h
        .http
        .send(
            "DELETE",
            &format!("{CM}/a"),
            "application/json",
            options.to_string().into(),
        )
        .await;
    assert_status(&reply, 409, "Conflict");
    assert!(
        reply.body["message"]
            .as_str()
            .unwrap()
            .contains("the UID in the precondition (other) does not match the UID in record")
    );
}

#[tokio::test]
async fn delete_collection_removes_only_selected_objects() {
    let h = start().await;
    h.http.post(CM, configmap("a", json!({"app": "x"}))).await;
    h.http.post(CM, configmap("b", json!({"app": "y"}))).await;
    let reply = h.http.delete(&format!("{CM}?labelSelector=app%3Dx")).await;
    assert_eq!(reply.code, 200);
    assert_eq!(names(&reply.body), vec!["a"]);
    assert_eq!(names(&h.http.get(CM).await.body), vec!["b"]);
}

#[tokio::test]
async fn namespaced_writes_need_an_existing_namespace() {
    let h = start().await;
    let reply = h
        .http
        .post(
            "/api/v1/namespaces/nope/configmaps",
            configmap("a", json!({})),
        )
        .await;
    assert_status(&reply, 404, "NotFound");
    assert_eq!(reply.body["message"], "namespaces \"nope\" not found");
}

/// The apiserver alone (no controller-manager, as `kube-apiserver` without
/// `kube-controller-manager`): deleting a namespace marks it Terminating, refuses new content and
/// deletes nothing; the namespace controller (`kubegen-controller-manager`, on by default) does the
/// rest, tested there.
#[tokio::test]
async fn without_a_controller_manager_a_deleted_namespace_only_terminates() {
    let mut options = ServerOptions::default();
    options.controller_manager = false;
    let h = start_with(options).await;
    h.http
        .post("/api/v1/namespaces", json!({"metadata": {"name": "team"}}))
        .await;
    let path = "/api/v1/namespaces/team/configmaps";
    h.http.post(path, configmap("plain", json!({}))).await;
    let reply = h.http.delete("/api/v1/namespaces/team").await;
    assert_eq!(reply.code, 200);
    assert_eq!(reply.body["status"]["phase"], "Terminating");
    assert_eq!(reply.body["spec"]["finalizers"], json!(["kubernetes"]));
    let reply = h.http.post(path, configmap("new", json!({}))).await;
    assert_status(&reply, 403, "Forbidden");
    assert!(
        reply.body["message"]
            .as_str()
            .unwrap()
            .contains("because it is being terminated")
    );
    assert_eq!(names(&h.http.get(path).await.body), vec!["plain"]);
    let reply = h.http.get("/api/v1/namespaces/team").await;
    assert_eq!(reply.body["status"]["phase"], "Terminating");
}

#[tokio::test]
async fn resource_version_on_create_is_rejected() {
    let h = start().await;
    let mut body = configmap("a", json!({}));
    body["metadata"]["resourceVersion"] = json!("5");
    let reply = h.http.post(CM, body).await;
    assert_status(&reply, 500, "");
    assert_eq!(
        reply.body["message"],
        "resourceVersion should not be set on objects to be created"
    );
}

#[tokio::test]
async fn cluster_scoped_objects_have_no_namespace() {
    let h = start().await;
    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "namespace": "ignored"}});
    let reply = h.http.post("/api/v1/nodes", node).await;
    assert_eq!(reply.code, 201);
    assert!(reply.body["metadata"].get("namespace").is_none());
    assert_eq!(h.http.get("/api/v1/nodes/n1").await.code, 200);
}

#[tokio::test]
async fn dry_run_writes_answer_but_store_nothing() {
    // No controller-manager: its writes (the default ServiceAccount) would count.
    let mut options = ServerOptions::default();
    options.controller_manager = false;
    let h = start_with(options).await;
    let before = h.server.api().resource_version();
    let reply = h
        .http
        .post(&format!("{CM}?dryRun=All"), configmap("a", json!({})))
        .await;
    assert_eq!(reply.code, 201);
    assert!(reply.body["metadata"]["uid"].is_string());
    assert!(reply.body["metadata"].get("resourceVersion").is_none());
    assert_eq!(h.http.get(&format!("{CM}/a")).await.code, 404);
    let created = h.http.post(CM, configmap("a", json!({}))).await.body;
    let patch = json!({"data": {"k": "dry"}});
    let reply = h
        .http
        .patch(
            &format!("{CM}/a?dryRun=All"),
            "application/merge-patch+json",
            patch,
        )
        .await;
    assert_eq!(reply.body["data"]["k"], "dry");
    assert_eq!(h.http.get(&format!("{CM}/a")).await.body, created);
    assert_eq!(h.http.delete(&format!("{CM}/a?dryRun=All")).await.code, 200);
    assert_eq!(h.http.delete(&format!("{CM}?dryRun=All")).await.code, 200);
    assert_eq!(h.http.get(&format!("{CM}/a")).await.body, created);
    assert_eq!(
        h.server.api().resource_version(),
        before + 1,
        "only the real create was written"
    );
    assert_status(
        &h.http
            .post(&format!("{CM}?dryRun=Some"), configmap("b", json!({})))
            .await,
        400,
        "BadRequest",
    );
}

#[tokio::test]
async fn namespaces_cannot_be_deleted_as_a_collection() {
    let h = start().await;
    let reply = h.http.delete("/api/v1/namespaces").await;
    assert_status(&reply, 405, "MethodNotAllowed");
    assert_eq!(h.http.get("/api/v1/namespaces/default").await.code, 200);
}

#[tokio::test]
async fn system_namespaces_may_not_be_deleted() {
    let h = start().await;
    let reply = h.http.delete("/api/v1/namespaces/default").await;
    assert_status(&reply, 403, "Forbidden");
    assert_eq!(
        reply.body["message"],
        "namespaces \"default\" is forbidden: this namespace may not be deleted"
    );
}

/// v1.36's apps status strategies reset only `spec` (and a Deployment's labels): the deployment
/// controller writes its revision annotation through `/status`. A custom resource's status
/// write keeps the old metadata.
#[tokio::test]
async fn a_deployment_status_write_keeps_annotations_but_not_labels() {
    let h = start().await;
    let path = "/apis/apps/v1/namespaces/default/deployments";
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "web", "image": "nginx"}]}}},
    });
    let mut created = h.http.post(path, deployment).await.body;
    created["metadata"]["annotations"] = json!({"deployment.kubernetes.io/revision": "1"});
    created["metadata"]["labels"] = json!({"app": "changed"});
    created["spec"]["replicas"] = json!(7);
    created["status"] = json!({"observedGeneration": 1});
    let reply = h.http.put(&format!("{path}/web/status"), created).await;
    assert_eq!(reply.code, 200, "{}", reply.body);
    assert_eq!(
        reply.body["metadata"]["annotations"],
        json!({"deployment.kubernetes.io/revision": "1"})
    );
    assert_eq!(reply.body["metadata"]["labels"], json!({"app": "web"}));
    assert_eq!(
        reply.body["spec"]["replicas"], 1,
        "the defaulted spec, not the status write's"
    );
    assert_eq!(reply.body["status"], json!({"observedGeneration": 1}));
}

/// A created Pod starts Pending with its QoS class, whatever status the request carried.
#[tokio::test]
async fn a_created_pod_is_pending_with_its_qos_class() {
    let h = start().await;
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "a", "image": "nginx"}]},
        "status": {"phase": "Running"},
    });
    let reply = h.http.post("/api/v1/namespaces/default/pods", pod).await;
    assert_eq!(reply.code, 201, "{}", reply.body);
    assert_eq!(
        reply.body["status"],
        json!({"phase": "Pending", "qosClass": "BestEffort"})
    );
}

/// `ServerOptions::data_dir`: objects, their uids and resourceVersions and custom resources
/// survive a restart; a watch from before it gets 410, as after an etcd compaction.
#[tokio::test]
async fn objects_survive_a_restart_with_a_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    let options = || {
        let mut options = ServerOptions::default();
        options.data_dir = Some(dir.path().to_path_buf());
        options.controller_manager = false;
        options
    };
    let first = TestServer::start_with(options()).await;
    let http = Http::new(&first.url());
    let created = http.post(CM, configmap("kept", json!({}))).await.body;
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "things", "kind": "Thing"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]},
    });
    assert_eq!(
        http.post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            crd
        )
        .await
        .code,
        201
    );
    let things = "/apis/example.com/v1/namespaces/default/things";
    let thing = json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}});
    assert_eq!(http.post(things, thing).await.code, 201);
    let rv_before = first.api().resource_version();
    drop(first);

    let second = TestServer::start_with(options()).await;
    let http = Http::new(&second.url());
    assert_eq!(http.get(&format!("{CM}/kept")).await.body, created);
    assert_eq!(http.get(&format!("{things}/t")).await.code, 200);
    assert_eq!(second.api().resource_version(), rv_before);
    let mut stale = http
        .watch(&format!("{CM}?watch=1&resourceVersion={}", rv(&created)))
        .await;
    let event = stale.next().await.unwrap();
    assert_eq!(event["type"], "ERROR");
    assert_eq!(event["object"]["code"], 410, "{event}");
}
