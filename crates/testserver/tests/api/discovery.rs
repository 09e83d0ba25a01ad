//! Discovery and CustomResourceDefinitions through raw HTTP.

use crate::common::*;
use kubegen_testserver::ResourceDefinition;
use serde_json::{Value, json};

fn crd(scope: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "whitelists.police.example.com"},
        "spec": {
            "group": "police.example.com",
            "scope": scope,
            "names": {"plural": "whitelists", "singular": "whitelist", "kind": "WhiteList", "listKind": "WhiteListList", "shortNames": ["wl"]},
            "versions": [{"name": "v1beta1", "served": true, "storage": true, "subresources": {"status": {}},
                          "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}],
        },
    })
}

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const WL: &str = "/apis/police.example.com/v1beta1/namespaces/default/whitelists";

fn resource<'a>(list: &'a Value, name: &str) -> Option<&'a Value> {
    list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
}

#[tokio::test]
async fn version_reports_a_real_looking_kubernetes_version() {
    let h = start().await;
    let v = h.http.get("/version").await.body;
    assert_eq!(
        (v["major"].as_str(), v["minor"].as_str()),
        (Some("1"), Some("36"))
    );
    assert!(v["gitVersion"].as_str().unwrap().starts_with("v1.36."));
    assert_eq!(v["platform"], "linux/amd64");
}

/// On a real v1.36 server the v2 document's `info.version` is `<major>.<minor>` of `/version`.
#[tokio::test]
async fn openapi_v2_info_version_is_the_servers_major_and_minor() {
    let h = start().await;
    let v = h.http.get("/version").await.body;
    let document = h.http.get("/openapi/v2").await.body;
    let expected = format!(
        "{}.{}",
        v["major"].as_str().unwrap(),
        v["minor"].as_str().unwrap()
    );
    assert_eq!(document["info"]["version"], expected.as_str());
}

#[tokio::test]
async fn core_discovery_lists_resources_with_verbs_short_names_and_subresources() {
    let h = start().await;
    let api = h.http.get("/api").await.body;
    assert_eq!(
        (api["kind"].as_str(), api["versions"].clone()),
        (Some("APIVersions"), json!(["v1"]))
    );
    let v1 = h.http.get("/api/v1").await.body;
    assert_eq!(v1["kind"], "APIResourceList");
    assert_eq!(v1["groupVersion"], "v1");
    let cm = resource(&v1, "configmaps").unwrap();
    assert_eq!(
        cm,
        &json!({"name": "configmaps", "singularName": "configmap", "namespaced": true, "kind": "ConfigMap",
                "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
                "shortNames": ["cm"]})
    );
    let status = resource(&v1, "pods/status").unwrap();
    assert_eq!(status["verbs"], json!(["get", "patch", "update"]));
    assert_eq!(resource(&v1, "nodes").unwrap()["namespaced"], false);
}

/// A Pod's and a ServiceAccount's subresources are listed as v1.36.2 lists them (its entries,
/// in its order), less those this server does not serve (`eviction`, `ephemeralcontainers`,
/// `proxy`, `resize`), in both discovery documents.
#[tokio::test]
async fn pod_and_service_account_subresources_are_listed_as_served() {
    let h = start().await;
    let v1 = h.http.get("/api/v1").await.body;
    let names: Vec<&str> = v1["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .filter(|name| name.starts_with("pods/") || name.starts_with("serviceaccounts/"))
        .collect();
    assert_eq!(
        names,
        [
            "pods/attach",
            "pods/binding",
            "pods/exec",
            "pods/log",
            "pods/portforward",
            "pods/status",
            "serviceaccounts/token"
        ]
    );
    assert_eq!(
        resource(&v1, "pods/exec").unwrap(),
        &json!({"name": "pods/exec", "singularName": "", "namespaced": true,
                "kind": "PodExecOptions", "verbs": ["create", "get"]})
    );
    assert_eq!(
        resource(&v1, "serviceaccounts/token").unwrap(),
        &json!({"name": "serviceaccounts/token", "singularName": "", "namespaced": true,
                "group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest", "verbs": ["create"]})
    );
    let aggregated = h
        .http
        .get_accept(
            "/api",
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
        )
        .await
        .body;
    let resources = &aggregated["items"][0]["versions"][0]["resources"];
    let pods = resources
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["resource"] == "pods")
        .unwrap();
    assert_eq!(
        pods["subresources"][3],
        json!({"subresource": "log", "responseKind": {"group": "", "version": "", "kind": "Pod"}, "verbs": ["get"]})
    );
    let accounts = resources
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["resource"] == "serviceaccounts")
        .unwrap();
    assert_eq!(
        accounts["subresources"],
        json!([{"subresource": "token", "responseKind": {"group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest"}, "verbs": ["create"]}])
    );
}

#[tokio::test]
async fn group_discovery_lists_groups_and_their_resources() {
    let h = start().await;
    let groups = h.http.get("/apis").await.body;
    assert_eq!(groups["kind"], "APIGroupList");
    let apps = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "apps")
        .unwrap();
    assert_eq!(
        apps["preferredVersion"],
        json!({"groupVersion": "apps/v1", "version": "v1"})
    );
    assert_eq!(h.http.get("/apis/apps").await.body["kind"], "APIGroup");
    let list = h.http.get("/apis/apps/v1").await.body;
    assert_eq!(
        resource(&list, "deployments").unwrap()["shortNames"],
        json!(["deploy"])
    );
    assert!(resource(&list, "deployments/status").is_some());
    for path in [
        "/apis/coordination.k8s.io/v1",
        "/apis/events.k8s.io/v1",
        "/apis/apiextensions.k8s.io/v1",
    ] {
        assert_eq!(h.http.get(path).await.code, 200, "{path}");
    }
}

#[tokio::test]
async fn creating_a_crd_serves_its_resource_and_marks_it_established() {
    let h = start().await;
    let created = h.http.post(CRDS, crd("Namespaced")).await;
    assert_eq!(created.code, 201, "{}", created.body);
    let conditions = created.body["status"]["conditions"].as_array().unwrap();
    for kind in ["Established", "NamesAccepted"] {
        let c = conditions.iter().find(|c| c["type"] == kind).unwrap();
        assert_eq!(c["status"], "True", "{kind}");
    }
    assert_eq!(created.body["status"]["acceptedNames"]["kind"], "WhiteList");
    let list = h.http.get("/apis/police.example.com/v1beta1").await.body;
    let wl = resource(&list, "whitelists").unwrap();
    assert_eq!(
        (wl["kind"].as_str(), wl["shortNames"].clone()),
        (Some("WhiteList"), json!(["wl"]))
    );
    assert!(resource(&list, "whitelists/status").is_some());
    let obj = json!({"apiVersion": "police.example.com/v1beta1", "kind": "WhiteList", "metadata": {"name": "w"},
                     "spec": {"images": ["nginx"]}, "status": {"ignored": true}});
    let made = h.http.post(WL, obj).await;
    assert_eq!(made.code, 201, "{}", made.body);
    assert_eq!(made.body["metadata"]["generation"], 1);
    assert!(made.body.get("status").is_none(), "status is a subresource");
    let reply = h
        .http
        .patch(
            &format!("{WL}/w"),
            "application/strategic-merge-patch+json",
            json!({}),
        )
        .await;
    assert_status(&reply, 415, "UnsupportedMediaType");
}

#[tokio::test]
async fn deleting_a_crd_removes_its_resource_and_objects() {
    let h = start().await;
    h.http.post(CRDS, crd("Namespaced")).await;
    let obj = json!({"apiVersion": "police.example.com/v1beta1", "kind": "WhiteList", "metadata": {"name": "w"}});
    h.http.post(WL, obj).await;
    let mut watch = h
        .http
        .watch(&format!(
            "{WL}?watch=1&resourceVersion={}",
            h.server.api().resource_version()
        ))
        .await;
    assert_eq!(
        h.http
            .delete(&format!("{CRDS}/whitelists.police.example.com"))
            .await
            .code,
        200
    );
    assert_eq!(
        summary(&watch.next().await.unwrap()),
        ("DELETED".into(), "w".into())
    );
    // The group is gone with its last CRD: the plain-text 404 of a real server's mux.
    let gone = h.http.get(WL).await;
    assert_eq!(
        (gone.code, gone.text.as_str()),
        (404, "404 page not found\n")
    );
    assert_eq!(
        h.http.get("/apis/police.example.com/v1beta1").await.code,
        404
    );
    // Re-creating starts empty.
    h.http.post(CRDS, crd("Namespaced")).await;
    assert_eq!(names(&h.http.get(WL).await.body), Vec::<String>::new());
}

#[tokio::test]
async fn invalid_crds_are_rejected_with_causes() {
    let h = start().await;
    let mut bad = crd("Sideways");
    bad["metadata"]["name"] = json!("wrong");
    let reply = h.http.post(CRDS, bad).await;
    assert_status(&reply, 422, "Invalid");
    let fields: Vec<&str> = reply.body["details"]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, vec!["spec.scope", "metadata.name"]);
}

#[tokio::test]
async fn registered_definitions_are_served_without_a_crd_object() {
    let h = start().await;
    let def = ResourceDefinition {
        group: "example.com".into(),
        version: "v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
        ..Default::default()
    };
    h.server.api().register(def);
    let created = h
        .http
        .post(
            "/apis/example.com/v1/widgets",
            json!({"metadata": {"name": "w"}, "spec": {}}),
        )
        .await;
    assert_eq!(created.code, 201, "{}", created.body);
    assert_eq!(created.body["kind"], "Widget");
    assert_eq!(created.body["apiVersion"], "example.com/v1");
    let list = h.http.get("/apis/example.com/v1").await.body;
    assert_eq!(
        resource(&list, "widgets").unwrap()["singularName"],
        "widget"
    );
}

/// What client-go v1.36 and kubectl send for `/api` and `/apis`.
const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

fn group_item<'a>(list: &'a Value, name: &str) -> Option<&'a Value> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["metadata"]["name"] == name)
}

/// Headers, `If-None-Match` and 406 as v1.36 answers them (module doc of
/// `handlers/aggregated_discovery.rs`); the CRD's group appears and disappears with it.
#[tokio::test]
async fn aggregated_discovery_follows_crds_with_etags_and_406s_like_v1_36() {
    let h = start().await;
    let core = h.http.get_accept("/api", AGGREGATED).await;
    assert_eq!(core.code, 200);
    assert_eq!(
        core.headers["content-type"],
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    );
    assert_eq!(core.headers["vary"], "Accept");
    assert_eq!(core.headers["cache-control"], "public");
    assert_eq!(core.body["items"][0]["metadata"], json!({}));
    assert_eq!(core.body["items"][0]["versions"][0]["version"], "v1");

    let before = h.http.get_accept("/apis", AGGREGATED).await;
    assert_eq!(before.body["kind"], "APIGroupDiscoveryList");
    assert!(group_item(&before.body, "apps").is_some());
    assert!(group_item(&before.body, "police.example.com").is_none());
    let etag = before.headers["etag"].to_str().unwrap().to_owned();
    let headers = [("accept", AGGREGATED), ("if-none-match", etag.as_str())];
    let unchanged = h
        .http
        .send_with("GET", "/apis", "", Default::default(), &headers)
        .await;
    assert_eq!((unchanged.code, unchanged.text.as_str()), (304, ""));

    h.http.post(CRDS, crd("Namespaced")).await;
    let with_crd = h
        .http
        .send_with("GET", "/apis", "", Default::default(), &headers)
        .await;
    assert_eq!(with_crd.code, 200);
    assert_ne!(with_crd.headers["etag"].to_str().unwrap(), etag);
    let police = group_item(&with_crd.body, "police.example.com").unwrap();
    assert_eq!(police["versions"][0]["version"], "v1beta1");
    assert_eq!(police["versions"][0]["freshness"], "Current");
    let whitelists = &police["versions"][0]["resources"][0];
    assert_eq!(whitelists["resource"], "whitelists");
    assert_eq!(
        whitelists["responseKind"],
        json!({"group": "police.example.com", "version": "v1beta1", "kind": "WhiteList"})
    );
    assert_eq!(whitelists["shortNames"], json!(["wl"]));
    // A custom resource's verbs in the CRD handler's order, as v1.36 lists them.
    assert_eq!(
        whitelists["verbs"],
        json!([
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "create",
            "update",
            "watch"
        ])
    );
    assert_eq!(whitelists["subresources"][0]["subresource"], "status");

    h.http
        .delete(&format!("{CRDS}/whitelists.police.example.com"))
        .await;
    let after = h.http.get_accept("/apis", AGGREGATED).await;
    assert!(group_item(&after.body, "police.example.com").is_none());
    assert_eq!(after.headers["etag"].to_str().unwrap(), etag);

    // Only `/api` and `/apis` aggregate; v2beta1 alone, a group document asked for as
    // aggregated, and text are not acceptable.
    let group = h.http.get_accept("/apis/apps", AGGREGATED).await;
    assert_eq!(
        (group.code, group.body["kind"].as_str()),
        (200, Some("APIGroup"))
    );
    for (path, accept) in [
        (
            "/apis",
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList",
        ),
        (
            "/apis/apps/v1",
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
        ),
        ("/api", "text/plain"),
    ] {
        let refused = h.http.get_accept(path, accept).await;
        assert_status(&refused, 406, "NotAcceptable");
        assert_eq!(
            refused.body["message"],
            "only the following media types are accepted: application/json",
            "{path} {accept}"
        );
    }
    let classic = h.http.get_accept("/apis", "application/json").await;
    assert_eq!(classic.body["kind"], "APIGroupList");
    assert!(classic.headers.get("etag").is_none());
}
