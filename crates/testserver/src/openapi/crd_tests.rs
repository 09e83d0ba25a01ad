use serde_json::json;

use super::*;
use crate::openapi::builtin;

fn crd(schema: Value) -> Value {
    json!({
        "metadata": {"name": "whitelists.police.example.com"},
        "spec": {
            "group": "police.example.com", "scope": "Namespaced",
            "names": {"plural": "whitelists", "kind": "WhiteList", "listKind": "WhiteListList"},
            "versions": [
                {"name": "v1beta1", "served": true, "storage": true, "subresources": {"status": {}},
                 "schema": {"openAPIV3Schema": schema}},
                {"name": "v1alpha1", "served": false, "storage": false},
            ],
        },
    })
}

fn spec_schema() -> Value {
    json!({"type": "object", "description": "A whitelist.", "properties": {
        "spec": {"type": "object", "properties": {
            "images": {"type": "array", "items": {"type": "string"}, "description": "Allowed images."},
            "port": {"x-kubernetes-int-or-string": true},
            "note": {"type": "string", "nullable": true},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"a": {"type": "string"}}},
        }, "required": ["images", "note"]},
    }})
}

#[test]
fn definition_names_reverse_the_group() {
    assert_eq!(
        definition_name("police.example.com", "v1beta1", "WhiteList"),
        "com.example.police.v1beta1.WhiteList"
    );
}

#[test]
fn a_served_version_gets_a_v3_document_with_kind_list_paths_and_meta() {
    let builtin = builtin::get().unwrap();
    let crds = vec![crd(spec_schema())];
    let docs = v3_documents(&crds, builtin, None);
    assert_eq!(docs.len(), 1, "only the served version");
    let (path, doc) = &docs[0];
    assert_eq!(path, "apis/police.example.com/v1beta1");
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    let kind = &schemas["com.example.police.v1beta1.WhiteList"];
    assert_eq!(
        kind["x-kubernetes-group-version-kind"],
        json!([{"group": "police.example.com", "version": "v1beta1", "kind": "WhiteList"}])
    );
    assert_eq!(
        kind["properties"]["spec"]["properties"]["images"]["description"],
        "Allowed images."
    );
    assert_eq!(
        kind["properties"]["metadata"]["allOf"][0]["$ref"],
        "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    assert_eq!(kind["properties"]["kind"]["type"], "string");
    assert_eq!(
        kind["properties"]["spec"]["properties"]["port"]["anyOf"],
        json!([{"type": "integer"}, {"type": "string"}])
    );
    let list = &schemas["com.example.police.v1beta1.WhiteListList"];
    assert_eq!(
        list["properties"]["items"]["items"]["$ref"],
        "#/components/schemas/com.example.police.v1beta1.WhiteList"
    );
    for needed in [
        "ObjectMeta",
        "ListMeta",
        "ManagedFieldsEntry",
        "Status",
        "Patch",
        "DeleteOptions",
    ] {
        assert!(
            schemas.contains_key(&format!("io.k8s.apimachinery.pkg.apis.meta.v1.{needed}")),
            "{needed}"
        );
    }
    let paths = doc["paths"].as_object().unwrap();
    let mut keys: Vec<&str> = paths.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        vec![
            "/apis/police.example.com/v1beta1/namespaces/{namespace}/whitelists",
            "/apis/police.example.com/v1beta1/namespaces/{namespace}/whitelists/{name}",
            "/apis/police.example.com/v1beta1/namespaces/{namespace}/whitelists/{name}/status",
            "/apis/police.example.com/v1beta1/whitelists",
        ]
    );
}

#[test]
fn patch_operations_offer_field_validation_and_name_the_kind() {
    let builtin = builtin::get().unwrap();
    let docs = v3_documents(&[crd(spec_schema())], builtin, None);
    let item = &docs[0].1["paths"]["/apis/police.example.com/v1beta1/namespaces/{namespace}/whitelists/{name}"];
    let patch = &item["patch"];
    assert_eq!(
        patch["operationId"],
        "patchPoliceExampleComV1beta1NamespacedWhiteList"
    );
    assert_eq!(patch["x-kubernetes-action"], "patch");
    assert_eq!(
        patch["x-kubernetes-group-version-kind"],
        json!({"group": "police.example.com", "version": "v1beta1", "kind": "WhiteList"})
    );
    let params: Vec<&str> = patch["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(
        params.contains(&"fieldValidation") && params.contains(&"fieldManager"),
        "{params:?}"
    );
    let body_types: Vec<&String> = patch["requestBody"]["content"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert!(
        !body_types.iter().any(|t| t.contains("strategic")),
        "{body_types:?}"
    );
    let path_params: Vec<&str> = item["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(
        path_params.contains(&"name") && path_params.contains(&"namespace"),
        "{path_params:?}"
    );
}

#[test]
fn v2_drops_what_swagger_cannot_say() {
    let builtin = builtin::get().unwrap();
    let mut doc = json!({"definitions": {}, "paths": {}});
    add_to_v2(&mut doc, &[crd(spec_schema())], builtin);
    let kind = &doc["definitions"]["com.example.police.v1beta1.WhiteList"];
    let spec = &kind["properties"]["spec"];
    assert_eq!(
        spec["required"],
        json!(["images"]),
        "nullable fields are not required"
    );
    assert!(spec["properties"]["note"].get("type").is_none());
    assert!(
        spec["properties"]["port"].get("anyOf").is_none()
            && spec["properties"]["port"].get("type").is_none()
    );
    assert!(spec["properties"]["free"].get("properties").is_none());
    assert_eq!(
        kind["properties"]["metadata"]["$ref"],
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    assert!(doc["definitions"]["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"].is_object());
    assert!(doc["paths"]["/apis/police.example.com/v1beta1/namespaces/{namespace}/whitelists/{name}"]["patch"].is_object());
}

#[test]
fn a_root_that_preserves_unknown_fields_is_a_bare_object_in_v2_only() {
    let builtin = builtin::get().unwrap();
    let open = crd(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}));
    let mut doc = json!({"definitions": {}, "paths": {}});
    add_to_v2(&mut doc, std::slice::from_ref(&open), builtin);
    let v2 = &doc["definitions"]["com.example.police.v1beta1.WhiteList"];
    assert_eq!(v2["type"], "object");
    assert!(v2.get("properties").is_none());
    let v3 = &v3_documents(&[open], builtin, None)[0].1["components"]["schemas"]["com.example.police.v1beta1.WhiteList"];
    assert!(v3["properties"]["metadata"].is_object());
}
