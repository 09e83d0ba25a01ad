//! Answers where the test server once differed from real kube-apiservers (v1.15 and v1.36
//! agree on each); the expected codes, reasons and messages are copied from them.

use crate::common::*;
use kubegen_testserver::ServerOptions;
use serde_json::json;

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

async fn delete_with(h: &Harness, path: &str, body: serde_json::Value) -> Reply {
    h.http
        .send(
            "DELETE",
            path,
            "application/json",
            bytes::Bytes::from(body.to_string()),
        )
        .await
}

#[tokio::test]
async fn delete_preconditions_that_fail_name_the_kind() {
    let h = start().await;
    let created = h.http.post(CM, configmap("a", json!({}))).await.body;
    let uid = created["metadata"]["uid"].as_str().unwrap().to_string();
    let reply = delete_with(
        &h,
        &format!("{CM}/a"),
        json!({"preconditions": {"uid": "x"}}),
    )
    .await;
    assert_status(&reply, 409, "Conflict");
    assert_eq!(
        reply.body["message"],
        format!(
            "Operation cannot be fulfilled on ConfigMap \"a\": the UID in the precondition (x) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
        )
    );
    assert_eq!(
        reply.body["details"],
        json!({"name": "a", "kind": "ConfigMap"})
    );
    let rv = created["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let reply = delete_with(
        &h,
        &format!("{CM}/a"),
        json!({"preconditions": {"resourceVersion": "1"}}),
    )
    .await;
    assert_eq!(
        reply.body["message"],
        format!(
            "Operation cannot be fulfilled on ConfigMap \"a\": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record ({rv}). The object might have been modified"
        )
    );
    let deployment = json!({"metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"a": "b"}},
        "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}});
    h.http.post(DEPLOYMENTS, deployment).await;
    let reply = delete_with(
        &h,
        &format!("{DEPLOYMENTS}/d"),
        json!({"preconditions": {"uid": "x"}}),
    )
    .await;
    assert!(reply.body["message"].as_str().unwrap().starts_with(
        "Operation cannot be fulfilled on Deployment.apps \"d\": the UID in the precondition (x)"
    ));
    assert_eq!(
        reply.body["details"],
        json!({"name": "d", "group": "apps", "kind": "Deployment"})
    );
}

#[tokio::test]
async fn foreground_and_orphan_deletes_keep_the_object_with_their_finalizer() {
    // The apiserver's part alone: with a controller-manager, the garbage collector would remove
    // the finalizer of an object without dependents (and, with aggregated discovery, it is
    // watching ConfigMaps within milliseconds of start-up).
    let mut options = ServerOptions::default();
    options.controller_manager = false;
    let h = start_with(options).await;
    for (name, policy, finalizer) in [
        ("f", "Foreground", "foregroundDeletion"),
        ("o", "Orphan", "orphan"),
    ] {
        h.http.post(CM, configmap(name, json!({}))).await;
        let reply = h
            .http
            .delete(&format!("{CM}/{name}?propagationPolicy={policy}"))
            .await;
        assert_eq!(reply.code, 200, "{}", reply.body);
        assert_eq!(reply.body["kind"], "ConfigMap");
        assert_eq!(reply.body["metadata"]["finalizers"], json!([finalizer]));
        assert_eq!(reply.body["metadata"]["deletionGracePeriodSeconds"], 0);
        assert!(reply.body["metadata"]["deletionTimestamp"].is_string());
        // Nothing collects it: it stays until the finalizer goes.
        assert_eq!(h.http.get(&format!("{CM}/{name}")).await.code, 200);
    }
    // A Background delete drops the GC finalizers, so nothing holds the object any more.
    let reply = delete_with(
        &h,
        &format!("{CM}/o"),
        json!({"propagationPolicy": "Background"}),
    )
    .await;
    assert_eq!(reply.code, 200);
    assert_eq!(h.http.get(&format!("{CM}/o")).await.code, 404);
    let bogus = h
        .http
        .delete(&format!("{CM}/f?propagationPolicy=Bogus"))
        .await;
    assert_status(&bogus, 422, "Invalid");
    assert_eq!(
        bogus.body["message"],
        "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"Bogus\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
    );
}

#[tokio::test]
async fn an_unknown_api_group_is_the_plain_text_404() {
    let h = start().await;
    for path in [
        "/apis/nope.example.com",
        "/apis/nope.example.com/v1",
        "/apis/nope.example.com/v1/namespaces/x/things",
    ] {
        let reply = h.http.get(path).await;
        assert_eq!(reply.code, 404, "{path}");
        assert_eq!(reply.headers["content-type"], "text/plain; charset=utf-8");
        assert_eq!(reply.text, "404 page not found\n");
    }
    // A served group with an unknown version or resource keeps the JSON NotFound.
    let reply = h.http.get("/apis/apps/v2/deployments").await;
    assert_status(&reply, 404, "NotFound");
}

#[tokio::test]
async fn unsupported_field_selectors_get_each_kinds_message() {
    let h = start().await;
    for (path, field, message) in [
        (
            CM,
            "data.x",
            "\"data.x\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
        ),
        (
            DEPLOYMENTS,
            "spec.foo",
            "\"spec.foo\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
        ),
        (
            "/api/v1/namespaces/default/secrets",
            "data.x",
            "field label not supported: data.x",
        ),
        (
            "/api/v1/pods",
            "spec.foo",
            "field label not supported: spec.foo",
        ),
        (
            "/apis/batch/v1/jobs",
            "spec.foo",
            "field label \"spec.foo\" not supported for Job",
        ),
    ] {
        let reply = h
            .http
            .get(&format!("{path}?fieldSelector={field}%3D1"))
            .await;
        assert_status(&reply, 400, "BadRequest");
        assert_eq!(reply.body["message"], message, "{path}");
    }
    for (path, field) in [
        ("/api/v1/pods", "status.podIPs"),
        ("/api/v1/namespaces/default/secrets", "type"),
        ("/api/v1/services", "spec.type"),
        ("/apis/batch/v1/jobs", "status.successful"),
        ("/apis/batch/v1/jobs", "metadata.name"),
    ] {
        let reply = h
            .http
            .get(&format!("{path}?fieldSelector={field}%3D1"))
            .await;
        assert_eq!(reply.code, 200, "{path} {field}: {}", reply.body);
    }
}

#[tokio::test]
async fn configmaps_and_secrets_over_one_mebibyte_are_invalid() {
    let h = start().await;
    let half = "x".repeat(512 * 1024);
    let big = json!({"metadata": {"name": "big"}, "data": {"a": half, "b": format!("{half}y")}});
    let reply = h.http.post(CM, big).await;
    assert_status(&reply, 422, "Invalid");
    assert_eq!(
        reply.body["message"],
        "ConfigMap \"big\" is invalid: []: Too long: may not be more than 1048576 bytes"
    );
    assert_eq!(
        reply.body["details"]["causes"],
        json!([{"reason": "FieldValueTooLong", "message": "Too long: may not be more than 1048576 bytes", "field": "[]"}])
    );
    let exactly = json!({"metadata": {"name": "ok"}, "data": {"a": half, "b": half}});
    assert_eq!(h.http.post(CM, exactly).await.code, 201);
    let grow = json!({"metadata": {"name": "ok"}, "data": {"a": half, "b": format!("{half}y")}});
    assert_status(&h.http.put(&format!("{CM}/ok"), grow).await, 422, "Invalid");
    let secret =
        json!({"metadata": {"name": "s"}, "stringData": {"a": "x".repeat(1024 * 1024 + 1)}});
    let reply = h
        .http
        .post("/api/v1/namespaces/default/secrets", secret)
        .await;
    assert_status(&reply, 422, "Invalid");
    assert_eq!(
        reply.body["message"],
        "Secret \"s\" is invalid: data: Too long: may not be more than 1048576 bytes"
    );
}

#[tokio::test]
async fn paged_lists_report_the_remaining_item_count() {
    let h = start().await;
    for name in ["a", "b", "c", "d"] {
        h.http.post(CM, configmap(name, json!({"n": name}))).await;
    }
    let first = h.http.get(&format!("{CM}?limit=1")).await.body;
    assert_eq!(first["metadata"]["remainingItemCount"], 3);
    let token = first["metadata"]["continue"].as_str().unwrap().to_string();
    let second = h
        .http
        .get(&format!("{CM}?limit=2&continue={token}"))
        .await
        .body;
    assert_eq!(second["metadata"]["remainingItemCount"], 1);
    let last = h.http.get(&format!("{CM}?limit=10")).await.body;
    assert!(last["metadata"].get("remainingItemCount").is_none());
    // With a selector the server cannot know how many match: no count, as etcd3's list.
    let filtered = h
        .http
        .get(&format!("{CM}?limit=1&labelSelector=n"))
        .await
        .body;
    assert!(filtered["metadata"]["continue"].is_string());
    assert!(filtered["metadata"].get("remainingItemCount").is_none());
}
