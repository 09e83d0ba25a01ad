//! `/openapi/v2` and `/openapi/v3` through raw HTTP: index, documents, hashes and caching, content
//! negotiation, custom resources appearing and disappearing, and the server-side field validation
//! that relies on the same schemas.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

use crate::common::*;

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const WL_DOC: &str = "apis/police.example.com/v1beta1";

/// GET with extra headers: status, headers, body bytes.
async fn get_with(
    base: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, http::HeaderMap, Bytes) {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let mut request = http::Request::builder().uri(format!("{base}{path}"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = client
        .request(request.body(Full::new(Bytes::new())).unwrap())
        .await
        .unwrap();
    let code = response.status().as_u16();
    let headers = response.headers().clone();
    (
        code,
        headers,
        response.into_body().collect().await.unwrap().to_bytes(),
    )
}

fn whitelist_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "whitelists.police.example.com"},
        "spec": {
            "group": "police.example.com", "scope": "Namespaced",
            "names": {"plural": "whitelists", "singular": "whitelist", "kind": "WhiteList", "listKind": "WhiteListList"},
            "versions": [{"name": "v1beta1", "served": true, "storage": true, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "description": "What the whitelist allows.", "properties": {
                        "images": {"type": "array", "items": {"type": "string"}, "description": "Allowed image prefixes."}}}}}}}],
        },
    })
}

async fn index(h: &Harness) -> Value {
    let reply = h.http.get("/openapi/v3").await;
    assert_eq!(reply.code, 200);
    reply.body
}

fn url_of(index: &Value, path: &str) -> Option<String> {
    index["paths"][path]["serverRelativeURL"]
        .as_str()
        .map(str::to_string)
}

#[tokio::test]
async fn v3_index_lists_every_served_group_version_with_a_hash() {
    let h = start().await;
    let index = index(&h).await;
    for path in [
        "api/v1",
        "apis/apps/v1",
        "apis/batch/v1",
        "apis/coordination.k8s.io/v1",
        "apis/authorization.k8s.io/v1",
    ] {
        let url = url_of(&index, path).unwrap_or_else(|| panic!("{path} missing from {index}"));
        let (prefix, hash) = url.split_once("?hash=").unwrap();
        assert_eq!(prefix, format!("/openapi/v3/{path}"));
        assert_eq!(hash.len(), 128, "SHA-512 in hex");
    }
    assert!(
        url_of(&index, "apis/networking.k8s.io/v1").is_none(),
        "not served, not listed"
    );
}

#[tokio::test]
async fn group_version_document_describes_deployment_and_caches_by_hash() {
    let h = start().await;
    let url = url_of(&index(&h).await, "apis/apps/v1").unwrap();
    let base = h.server.url();
    let (code, headers, body) = get_with(&base, &url, &[("accept", "application/json")]).await;
    assert_eq!(code, 200);
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(headers["cache-control"], "public, immutable");
    let hash = url.split_once("?hash=").unwrap().1;
    assert_eq!(headers["etag"], format!("\"{hash}\""));
    let doc: Value = serde_json::from_slice(&body).unwrap();
    let deployment = &doc["components"]["schemas"]["io.k8s.api.apps.v1.Deployment"];
    assert_eq!(
        deployment["x-kubernetes-group-version-kind"],
        json!([{"group": "apps", "kind": "Deployment", "version": "v1"}])
    );
    assert!(
        doc["components"]["schemas"]["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["replicas"]
            .is_object()
    );
    let patch = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
    assert!(
        patch["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "fieldValidation")
    );

    let (code, headers, _) = get_with(&base, "/openapi/v3/apis/apps/v1?hash=STALE", &[]).await;
    assert_eq!(
        (code, headers["location"].to_str().unwrap()),
        (301, url.as_str())
    );
    let etag = format!("\"{hash}\"");
    let (code, _, body) = get_with(
        &base,
        "/openapi/v3/apis/apps/v1",
        &[("if-none-match", &etag)],
    )
    .await;
    assert_eq!((code, body.len()), (304, 0));
    let (code, headers, _) = get_with(&base, "/openapi/v3/apis/apps/v1", &[]).await;
    assert_eq!(code, 200);
    assert_eq!(
        headers["cache-control"], "no-cache, private",
        "only hash-addressed documents are immutable"
    );
    assert_eq!(h.http.get("/openapi/v3/apis/nope/v1").await.code, 404);
}

/// v1.36 answers both spellings of the v2 type (and the v3 type) with gnostic's protobuf
/// `Document`, `Content-Type: application/com.github.proto-openapi.spec.v2.v1.0+protobuf`.
#[tokio::test]
async fn protobuf_openapi_is_the_json_document_in_gnostics_form() {
    use kubegen_codec::{OpenApiVersion, openapi_to_protobuf};
    let h = start().await;
    assert_eq!(h.http.post(CRDS, whitelist_crd()).await.code, 201);
    let base = h.server.url();
    let v2 = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
    let v3 = "application/com.github.proto-openapi.spec.v3.v1.0+protobuf";
    for (path, accept, content_type, version) in [
        (
            "/openapi/v2",
            "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
            v2,
            OpenApiVersion::V2,
        ),
        ("/openapi/v2", v2, v2, OpenApiVersion::V2),
        (
            "/openapi/v3/apis/police.example.com/v1beta1",
            "application/com.github.proto-openapi.spec.v3@v1.0+protobuf",
            v3,
            OpenApiVersion::V3,
        ),
    ] {
        let (code, headers, body) = get_with(&base, path, &[("accept", accept)]).await;
        assert_eq!(
            (code, headers["content-type"].to_str().unwrap()),
            (200, content_type),
            "{path}"
        );
        let json = h.http.get(path).await.body;
        assert_eq!(body, openapi_to_protobuf(version, &json).unwrap(), "{path}");
        let later = format!("{accept};q=0.5, application/json");
        let (code, headers, _) = get_with(&base, path, &[("accept", &later)]).await;
        assert_eq!(
            (code, headers["content-type"].to_str().unwrap()),
            (200, "application/json"),
            "{path}"
        );
    }
    let only_v3 = "application/com.github.proto-openapi.spec.v3@v1.0+protobuf";
    let (code, _, body) = get_with(&base, "/openapi/v2", &[("accept", only_v3)]).await;
    assert_eq!((code, body.len()), (406, 0));
}

#[tokio::test]
async fn v2_document_is_swagger_with_builtin_and_custom_definitions() {
    let h = start().await;
    assert_eq!(h.http.post(CRDS, whitelist_crd()).await.code, 201);
    let doc = h.http.get("/openapi/v2").await.body;
    assert_eq!(doc["swagger"], "2.0");
    assert!(doc["definitions"]["io.k8s.api.apps.v1.Deployment"]["properties"]["spec"].is_object());
    assert!(doc["paths"]["/api/v1/namespaces/{namespace}/configmaps"]["get"].is_object());
    let wl = &doc["definitions"]["com.example.police.v1beta1.WhiteList"];
    assert_eq!(
        wl["properties"]["spec"]["properties"]["images"]["description"],
        "Allowed image prefixes."
    );
    assert_eq!(
        wl["properties"]["metadata"]["$ref"],
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
}

#[tokio::test]
async fn crd_schema_appears_on_create_and_disappears_on_delete() {
    let h = start().await;
    let before = index(&h).await;
    assert!(url_of(&before, WL_DOC).is_none());
    assert_eq!(h.http.post(CRDS, whitelist_crd()).await.code, 201);
    let created = index(&h).await;
    let url = url_of(&created, WL_DOC).expect("CRD group-version listed");
    assert_eq!(
        url_of(&created, "apis/apps/v1"),
        url_of(&before, "apis/apps/v1"),
        "others unchanged"
    );
    let doc = h.http.get(&url).await.body;
    let wl = &doc["components"]["schemas"]["com.example.police.v1beta1.WhiteList"];
    assert_eq!(
        wl["properties"]["spec"]["description"],
        "What the whitelist allows."
    );
    assert!(doc["paths"]["/apis/police.example.com/v1beta1/namespaces/{namespace}/whitelists/{name}/status"]["patch"].is_object());

    let mut changed = whitelist_crd();
    changed["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["description"] =
        json!("Changed.");
    changed["metadata"]["resourceVersion"] = h
        .http
        .get(&format!("{CRDS}/whitelists.police.example.com"))
        .await
        .body["metadata"]["resourceVersion"]
        .clone();
    assert_eq!(
        h.http
            .put(&format!("{CRDS}/whitelists.police.example.com"), changed)
            .await
            .code,
        200
    );
    let updated = url_of(&index(&h).await, WL_DOC).unwrap();
    assert_ne!(updated, url, "a schema change changes the hash");

    assert_eq!(
        h.http
            .delete(&format!("{CRDS}/whitelists.police.example.com"))
            .await
            .code,
        200
    );
    assert!(url_of(&index(&h).await, WL_DOC).is_none());
    assert_eq!(h.http.get(&format!("/openapi/v3/{WL_DOC}")).await.code, 404);
}

#[tokio::test]
async fn strict_field_validation_rejects_unknown_fields_and_warn_reports_them() {
    let h = start().await;
    let path = "/apis/apps/v1/namespaces/default/deployments";
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 1, "bogus": true, "selector": {"matchLabels": {"a": "b"}},
                 "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "nginx", "imag": "x"}]}}}});
    let strict = h
        .http
        .post(
            &format!("{path}?fieldValidation=Strict"),
            deployment.clone(),
        )
        .await;
    assert_status(&strict, 400, "BadRequest");
    assert_eq!(
        strict.body["message"],
        "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: unknown field \"spec.bogus\", unknown field \"spec.template.spec.containers[0].imag\""
    );
    let warned = h.http.post(path, deployment).await;
    assert_eq!(warned.code, 201);
    let warnings: Vec<&str> = warned
        .headers
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    assert_eq!(
        warnings,
        vec![
            "299 - \"unknown field \\\"spec.bogus\\\"\"",
            "299 - \"unknown field \\\"spec.template.spec.containers[0].imag\\\"\""
        ]
    );
    let bad = h
        .http
        .post(
            &format!("{path}?fieldValidation=Sometimes"),
            json!({"metadata": {"name": "x"}}),
        )
        .await;
    assert_status(&bad, 422, "Invalid");
    assert_eq!(bad.body["details"]["kind"], "CreateOptions");
}

#[tokio::test]
async fn strict_field_validation_uses_the_crd_schema() {
    let h = start().await;
    assert_eq!(h.http.post(CRDS, whitelist_crd()).await.code, 201);
    let path =
        "/apis/police.example.com/v1beta1/namespaces/default/whitelists?fieldValidation=Strict";
    let good = json!({"apiVersion": "police.example.com/v1beta1", "kind": "WhiteList", "metadata": {"name": "a"}, "spec": {"images": ["x"]}});
    assert_eq!(h.http.post(path, good).await.code, 201);
    let bad = json!({"apiVersion": "police.example.com/v1beta1", "kind": "WhiteList", "metadata": {"name": "b"}, "spec": {"imagez": ["x"]}});
    let reply = h.http.post(path, bad).await;
    assert_status(&reply, 400, "BadRequest");
    assert!(
        reply.body["message"]
            .as_str()
            .unwrap()
            .ends_with("unknown field \"spec.imagez\""),
        "{}",
        reply.body
    );
    let patch = h
        .http
        .patch(
            "/apis/police.example.com/v1beta1/namespaces/default/whitelists/a?fieldValidation=Strict",
            "application/merge-patch+json",
            json!({"spec": {"images": null, "extra": 1}}),
        )
        .await;
    assert_status(&patch, 422, "Invalid");
    assert_eq!(patch.body["details"]["causes"][0]["field"], "patch");
    assert!(
        patch.body["message"]
            .as_str()
            .unwrap()
            .ends_with("strict decoding error: unknown field \"spec.extra\"")
    );
}

/// The document a real kube-apiserver (v1.36.2) published for the CRD in
/// `fixtures/widget-crd.json` (namespaced; status and scale; int-or-string, nullable,
/// unknown-preserving, embedded and list-map fields), downloaded with
/// `kubectl get --raw /openapi/v3/apis/openapihelper.kubegen.example.com/v1beta1`.
#[tokio::test]
async fn crd_document_equals_the_one_a_real_server_publishes() {
    use std::io::Read;
    let h = start().await;
    let crd: Value = serde_json::from_str(include_str!("fixtures/widget-crd.json")).unwrap();
    assert_eq!(h.http.post(CRDS, crd).await.code, 201);
    let compressed: &[u8] = include_bytes!("fixtures/widget-openapi-v3-k8s-1.36.2.json.gz");
    let mut text = String::new();
    flate2::read::GzDecoder::new(compressed)
        .read_to_string(&mut text)
        .unwrap();
    let real: Value = serde_json::from_str(&text).unwrap();
    let ours = h
        .http
        .get("/openapi/v3/apis/openapihelper.kubegen.example.com/v1beta1")
        .await
        .body;
    assert_eq!(ours, real);
}
