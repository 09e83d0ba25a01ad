use http::HeaderValue;

use super::*;
use crate::registry::Registry;

/// What client-go v1.36 and kubectl send (`discovery_client.go`, `acceptDiscoveryFormats`).
const CLIENT_GO: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

fn accept(value: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(header::ACCEPT, HeaderValue::from_str(value).unwrap());
    headers
}

fn negotiated(value: &str, aggregable: bool) -> Result<DiscoveryFormat, u16> {
    negotiate(&accept(value), aggregable).map_err(|e| e.code)
}

#[test]
fn accept_headers_are_answered_as_v1_36_answers_them() {
    use DiscoveryFormat::{Aggregated, Classic};
    let aggregated_only = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    let cases = [
        (CLIENT_GO, true, Ok(Aggregated)),
        (CLIENT_GO, false, Ok(Classic)),
        (aggregated_only, true, Ok(Aggregated)),
        (aggregated_only, false, Err(406)),
        // Any range asking for v2 wins, whatever its q or position.
        (
            "application/json,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0.1",
            true,
            Ok(Aggregated),
        ),
        (
            "application/json;as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io;foo=bar",
            true,
            Ok(Aggregated),
        ),
        (
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList",
            true,
            Err(406),
        ),
        (
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json",
            true,
            Ok(Classic),
        ),
        (
            "application/json;g=apidiscovery.k8s.io;v=v2",
            true,
            Err(406),
        ),
        (
            "application/*;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
            true,
            Err(406),
        ),
        ("text/plain", true, Err(406)),
        ("*/*", true, Ok(Classic)),
        ("", true, Ok(Classic)),
    ];
    for (header, aggregable, expected) in cases {
        assert_eq!(
            negotiated(header, aggregable),
            expected,
            "{header} ({aggregable})"
        );
    }
}

fn definitions() -> Vec<ResourceDefinition> {
    let registry = Registry::with_builtins();
    let mut defs: Vec<ResourceDefinition> = registry.all().map(|d| (**d).clone()).collect();
    defs.push(ResourceDefinition {
        group: "police.example.com".into(),
        version: "v1beta1".into(),
        kind: "WhiteList".into(),
        plural: "whitelists".into(),
        singular: "whitelist".into(),
        short_names: vec!["wl".into()],
        categories: vec!["police".into()],
        namespaced: true,
        status_subresource: true,
        ..ResourceDefinition::default()
    });
    defs
}

fn find<'a>(items: &'a Value, name: &str) -> &'a Value {
    items
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["resource"] == name)
        .unwrap()
}

/// Entries copied from v1.36's `/api` and `/apis` answers.
#[test]
fn the_document_has_the_shape_of_v1_36() {
    let defs = definitions();
    let core = document(&[(String::new(), vec!["v1".into()])], &defs);
    assert_eq!(core["kind"], "APIGroupDiscoveryList");
    assert_eq!(core["apiVersion"], "apidiscovery.k8s.io/v2");
    assert_eq!(core["items"][0]["metadata"], json!({}));
    let v1 = &core["items"][0]["versions"][0];
    assert_eq!(v1["freshness"], "Current");
    assert_eq!(
        find(&v1["resources"], "configmaps"),
        &json!({"resource": "configmaps", "responseKind": {"group": "", "version": "", "kind": "ConfigMap"},
                "scope": "Namespaced", "singularResource": "configmap",
                "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
                "shortNames": ["cm"]})
    );
    let names: Vec<&str> = v1["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["resource"].as_str().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);

    let police = document(
        &[("police.example.com".into(), vec!["v1beta1".into()])],
        &defs,
    );
    assert_eq!(
        police["items"][0]["metadata"],
        json!({"name": "police.example.com"})
    );
    assert_eq!(
        find(
            &police["items"][0]["versions"][0]["resources"],
            "whitelists"
        ),
        &json!({"resource": "whitelists",
                "responseKind": {"group": "police.example.com", "version": "v1beta1", "kind": "WhiteList"},
                "scope": "Namespaced", "singularResource": "whitelist",
                "verbs": ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],
                "shortNames": ["wl"], "categories": ["police"],
                "subresources": [{"subresource": "status",
                                  "responseKind": {"group": "police.example.com", "version": "v1beta1", "kind": "WhiteList"},
                                  "verbs": ["get", "patch", "update"]}]})
    );
    let apps = document(&[("apps".into(), vec!["v1".into()])], &defs);
    let deployments = find(&apps["items"][0]["versions"][0]["resources"], "deployments");
    assert_eq!(
        deployments["subresources"],
        json!([{"subresource": "scale", "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"}, "verbs": ["get", "patch", "update"]},
               {"subresource": "status", "responseKind": {"group": "", "version": "", "kind": "Deployment"}, "verbs": ["get", "patch", "update"]}])
    );
}

#[test]
fn an_etag_the_client_holds_gets_304_without_a_body() {
    let document = json!({"kind": "APIGroupDiscoveryList", "items": []});
    let first = respond(&HeaderMap::new(), &document);
    assert_eq!(first.status(), StatusCode::OK);
    let headers = first.headers();
    assert_eq!(headers[header::CONTENT_TYPE], AGGREGATED_V2);
    assert_eq!(headers[header::VARY], "Accept");
    assert_eq!(headers[header::CACHE_CONTROL], "public");
    let etag = headers[header::ETAG].clone();
    let text = etag.to_str().unwrap();
    assert_eq!(text.len(), 2 + 128, "{text}");
    assert!(
        text.trim_matches('"')
            .chars()
            .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
    );

    let mut conditional = HeaderMap::new();
    conditional.insert(header::IF_NONE_MATCH, etag.clone());
    let again = respond(&conditional, &document);
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(again.headers()[header::ETAG], etag);
    assert!(again.headers().get(header::CONTENT_TYPE).is_none());

    let changed = respond(
        &conditional,
        &json!({"kind": "APIGroupDiscoveryList", "items": [{}]}),
    );
    assert_eq!(changed.status(), StatusCode::OK);
}
