//! List semantics through raw HTTP: selectors, pagination, resourceVersion matching.

use std::time::Duration;

use crate::common::*;
use kubegen_testserver::ServerOptions;
use serde_json::{Value, json};

/// Four ConfigMaps on a server without the controller-manager: its writes (the default
/// ServiceAccounts of the first namespaces) would move the resourceVersion a list answers with.
async fn seeded() -> Harness {
    let h = start_without_controllers().await;
    for (name, labels) in [
        ("a", json!({"app": "web", "tier": "front"})),
        ("b", json!({"app": "web", "tier": "back"})),
        ("c", json!({"app": "db"})),
        ("d", json!({})),
    ] {
        assert_eq!(h.http.post(CM, configmap(name, labels)).await.code, 201);
    }
    h
}

#[tokio::test]
async fn label_selectors_support_every_operator() {
    let h = seeded().await;
    for (selector, want) in [
        ("app%3Dweb", vec!["a", "b"]),
        ("app%3D%3Dweb", vec!["a", "b"]),
        ("app!%3Dweb", vec!["c", "d"]),
        ("tier+in+(front,back)", vec!["a", "b"]),
        ("tier+notin+(front)", vec!["b", "c", "d"]),
        ("tier", vec!["a", "b"]),
        ("!tier", vec!["c", "d"]),
        ("app%3Dweb,tier%3Dback", vec!["b"]),
    ] {
        let list = h.http.get(&format!("{CM}?labelSelector={selector}")).await;
        assert_eq!(names(&list.body), want, "{selector}");
    }
}

#[tokio::test]
async fn invalid_label_selectors_are_bad_requests() {
    let h = seeded().await;
    let reply = h.http.get(&format!("{CM}?labelSelector=app+in+web")).await;
    assert_status(&reply, 400, "BadRequest");
}

#[tokio::test]
async fn field_selectors_filter_by_name_and_namespace_and_reject_unknown_fields() {
    let h = seeded().await;
    let list = h
        .http
        .get(&format!("{CM}?fieldSelector=metadata.name%3Db"))
        .await;
    assert_eq!(names(&list.body), vec!["b"]);
    let list = h
        .http
        .get("/api/v1/configmaps?fieldSelector=metadata.namespace!%3Ddefault")
        .await;
    assert_eq!(names(&list.body), Vec::<String>::new());
    let reply = h
        .http
        .get(&format!("{CM}?fieldSelector=spec.color%3Dred"))
        .await;
    assert_status(&reply, 400, "BadRequest");
    assert_eq!(
        reply.body["message"],
        "\"spec.color\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
    );
}

#[tokio::test]
async fn list_across_namespaces_includes_every_namespace() {
    let h = seeded().await;
    h.http
        .post("/api/v1/namespaces", json!({"metadata": {"name": "other"}}))
        .await;
    h.http
        .post(
            "/api/v1/namespaces/other/configmaps",
            configmap("z", json!({})),
        )
        .await;
    let all = h.http.get("/api/v1/configmaps").await.body;
    assert_eq!(names(&all), vec!["a", "b", "c", "d", "z"]);
    assert_eq!(names(&h.http.get(CM).await.body), vec!["a", "b", "c", "d"]);
}

#[tokio::test]
async fn pages_are_served_from_the_first_pages_snapshot() {
    let h = seeded().await;
    let first = h.http.get(&format!("{CM}?limit=2")).await.body;
    assert_eq!(names(&first), vec!["a", "b"]);
    let token = first["metadata"]["continue"].as_str().unwrap().to_string();
    // Changes after the first page do not show up in later pages.
    h.http.delete(&format!("{CM}/c")).await;
    h.http.post(CM, configmap("e", json!({}))).await;
    let second = h
        .http
        .get(&format!("{CM}?limit=2&continue={token}"))
        .await
        .body;
    assert_eq!(names(&second), vec!["c", "d"]);
    assert_eq!(
        second["metadata"]["resourceVersion"],
        first["metadata"]["resourceVersion"]
    );
    let token = second["metadata"]["continue"].as_str();
    if let Some(token) = token {
        let third = h
            .http
            .get(&format!("{CM}?limit=2&continue={token}"))
            .await
            .body;
        assert_eq!(names(&third), Vec::<String>::new());
        assert!(third["metadata"].get("continue").is_none());
    }
    let fresh = h.http.get(CM).await.body;
    assert_eq!(names(&fresh), vec!["a", "b", "d", "e"]);
}

#[tokio::test]
async fn the_last_page_has_no_continue_token() {
    let h = seeded().await;
    let page = h.http.get(&format!("{CM}?limit=4")).await.body;
    assert_eq!(names(&page).len(), 4);
    assert!(page["metadata"].get("continue").is_none(), "{page}");
}

#[tokio::test]
async fn continue_tokens_expire_after_compaction() {
    let h = seeded().await;
    let first = h.http.get(&format!("{CM}?limit=1")).await.body;
    let token = first["metadata"]["continue"].as_str().unwrap().to_string();
    h.http.post(CM, configmap("e", json!({}))).await;
    h.server.faults().expire_history();
    let reply = h.http.get(&format!("{CM}?limit=1&continue={token}")).await;
    assert_status(&reply, 410, "Expired");
    assert!(
        reply.body["message"]
            .as_str()
            .unwrap()
            .starts_with("The provided continue parameter is too old")
    );
    // The Status carries a token that continues inconsistently at the latest version.
    let inconsistent = reply.body["metadata"]["continue"].as_str().unwrap();
    let rest = h
        .http
        .get(&format!("{CM}?limit=10&continue={inconsistent}"))
        .await
        .body;
    assert_eq!(names(&rest), vec!["b", "c", "d", "e"]);
}

#[tokio::test]
async fn exact_resource_version_lists_the_past_until_compacted() {
    let h = seeded().await;
    let before = h.server.api().resource_version();
    h.http.delete(&format!("{CM}/a")).await;
    let past = h
        .http
        .get(&format!(
            "{CM}?resourceVersion={before}&resourceVersionMatch=Exact"
        ))
        .await
        .body;
    assert_eq!(names(&past), vec!["a", "b", "c", "d"]);
    assert_eq!(past["metadata"]["resourceVersion"], before.to_string());
    h.server.faults().expire_history();
    let reply = h
        .http
        .get(&format!(
            "{CM}?resourceVersion={before}&resourceVersionMatch=Exact"
        ))
        .await;
    assert_status(&reply, 410, "Expired");
    assert_eq!(
        reply.body["message"],
        "The resourceVersion for the provided list is too old."
    );
}

#[tokio::test]
async fn resource_version_zero_and_not_older_than_serve_current_state() {
    let h = seeded().await;
    let current = h.server.api().resource_version();
    for query in [
        "resourceVersion=0",
        "resourceVersion=1&resourceVersionMatch=NotOlderThan",
        "",
    ] {
        let list = h.http.get(&format!("{CM}?{query}")).await.body;
        assert_eq!(names(&list), vec!["a", "b", "c", "d"], "{query}");
        assert_eq!(list["metadata"]["resourceVersion"], current.to_string());
    }
}

#[tokio::test]
async fn too_large_resource_version_times_out_like_the_real_server() {
    let mut options = ServerOptions::default();
    options.too_large_rv_wait = Duration::from_millis(50);
    let h = start_with(options).await;
    let reply = h
        .http
        .get(&format!(
            "{CM}?resourceVersion=999999&resourceVersionMatch=NotOlderThan"
        ))
        .await;
    assert_status(&reply, 504, "Timeout");
    assert_eq!(
        reply.body["details"]["causes"][0]["reason"],
        "ResourceVersionTooLarge"
    );
    assert!(
        reply.body["message"]
            .as_str()
            .unwrap()
            .starts_with("Timeout: Too large resource version: 999999, current: ")
    );
}

#[tokio::test]
async fn invalid_list_option_combinations_are_422() {
    let h = seeded().await;
    let reply = h
        .http
        .get(&format!("{CM}?resourceVersionMatch=Exact"))
        .await;
    assert_status(&reply, 422, "Invalid");
    assert_eq!(reply.body["details"]["kind"], "ListOptions");
    let reply = h
        .http
        .get(&format!(
            "{CM}?resourceVersion=0&resourceVersionMatch=Exact"
        ))
        .await;
    assert_status(&reply, 422, "Invalid");
    let reply = h
        .http
        .get(&format!("{CM}?continue=abc&resourceVersion=5"))
        .await;
    assert_status(&reply, 422, "Invalid");
    let reply = h.http.get(&format!("{CM}?continue=not-a-token")).await;
    assert_status(&reply, 400, "BadRequest");
}

#[tokio::test]
async fn unsupported_resource_version_match_names_the_supported_values() {
    let h = seeded().await;
    let reply = h
        .http
        .get(&format!(
            "{CM}?resourceVersion=1&resourceVersionMatch=Newest"
        ))
        .await;
    assert_status(&reply, 422, "Invalid");
    assert_eq!(
        reply.body["message"],
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Unsupported value: \"Newest\": supported values: \"Exact\", \"NotOlderThan\", \"\""
    );
}

#[tokio::test]
async fn kind_specific_field_selectors_are_supported() {
    let h = start().await;
    let pods = "/api/v1/namespaces/default/pods";
    for (name, node) in [("p1", "n1"), ("p2", "n2")] {
        let pod = json!({"metadata": {"name": name}, "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x"}]}});
        assert_eq!(h.http.post(pods, pod).await.code, 201);
    }
    let list = h
        .http
        .get(&format!("{pods}?fieldSelector=spec.nodeName%3Dn2"))
        .await
        .body;
    assert_eq!(names(&list), vec!["p2"]);
    let reply = h
        .http
        .get(&format!("{CM}?fieldSelector=spec.nodeName%3Dn2"))
        .await;
    assert_status(&reply, 400, "BadRequest");
}

/// `(kind, apiVersion)` of an object.
fn types_of(object: &Value) -> (Option<Value>, Option<Value>) {
    (
        object.get("kind").cloned(),
        object.get("apiVersion").cloned(),
    )
}

fn items(list: &Value) -> &[Value] {
    list["items"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Asserts that every item of `list` has the types `expected`.
fn assert_item_types(list: &Value, expected: (Option<Value>, Option<Value>)) {
    assert!(
        items(list).iter().all(|i| types_of(i) == expected),
        "{list}"
    );
}

/// As v1.15 and v1.36 write them: a built-in kind's list items (a deletecollection's too) carry
/// no `kind` or `apiVersion`, while a get, a custom resource's list items and a
/// `PartialObjectMetadataList`'s items carry both.
#[tokio::test]
async fn list_items_carry_their_types_as_a_real_server_writes_them() {
    let h = seeded().await;
    let list = h.http.get(CM).await;
    assert_eq!(items(&list.body).len(), 4);
    assert_item_types(&list.body, (None, None));
    let one = h.http.get(&format!("{CM}/a")).await;
    assert_eq!(
        types_of(&one.body),
        (Some(json!("ConfigMap")), Some(json!("v1")))
    );

    let accept = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
    let partial = h.http.get_accept(CM, accept).await;
    let expected = (
        Some(json!("PartialObjectMetadata")),
        Some(json!("meta.k8s.io/v1")),
    );
    assert_item_types(&partial.body, expected);

    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.list.example.com"},
        "spec": {"group": "list.example.com", "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}});
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    assert_eq!(h.http.post(crds, crd).await.code, 201);
    let gadgets = "/apis/list.example.com/v1/namespaces/default/gadgets";
    let gadget =
        json!({"apiVersion": "list.example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}});
    assert_eq!(h.http.post(gadgets, gadget).await.code, 201);
    let list = h.http.get(gadgets).await;
    let expected = (Some(json!("Gadget")), Some(json!("list.example.com/v1")));
    assert_eq!(
        items(&list.body).iter().map(types_of).collect::<Vec<_>>(),
        [expected]
    );

    let deleted = h
        .http
        .delete(&format!("{CM}?labelSelector=app%3Dweb"))
        .await;
    assert_eq!(names(&deleted.body), ["a", "b"]);
    assert_item_types(&deleted.body, (None, None));
}
