use serde_json::json;

use super::Schema;

fn crd(api: &str, preserve: Option<bool>) -> serde_json::Value {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "x": {"type": "string"},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                 "properties": {"typed": {"type": "object", "properties": {"k": {"type": "string"}}}}},
        "emb": {"type": "object", "x-kubernetes-embedded-resource": true,
                "properties": {"spec": {"type": "object", "properties": {"x": {"type": "string"}}}}},
        "list": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}},
    }}}});
    let mut crd = json!({"apiVersion": api, "spec": {"versions": [{"name": "v1"}]}});
    if api.ends_with("v1beta1") {
        crd["spec"]["validation"] = json!({"openAPIV3Schema": schema});
    } else {
        crd["spec"]["versions"][0]["schema"] = json!({"openAPIV3Schema": schema});
    }
    if let Some(p) = preserve {
        crd["spec"]["preserveUnknownFields"] = json!(p);
    }
    crd
}

fn object() -> serde_json::Value {
    json!({"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "n"}, "extra": 1,
           "spec": {"x": "1", "y": 2,
                    "free": {"any": {"deep": 1}, "typed": {"k": "v", "drop": 1}},
                    "emb": {"apiVersion": "v1", "kind": "X", "metadata": {"name": "e", "junk": 1},
                            "spec": {"x": "1", "y": 2}, "other": 3},
                    "list": [{"k": "a", "z": 1}]}})
}

#[test]
fn unknown_fields_go_except_where_preserved_and_resource_fields() {
    let schema = Schema::from_crd(&crd("apiextensions.k8s.io/v1", None), "v1")
        .unwrap()
        .unwrap();
    let mut value = object();
    schema.prune(&mut value);
    assert_eq!(
        value,
        json!({"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "n"},
               "spec": {"x": "1",
                        "free": {"any": {"deep": 1}, "typed": {"k": "v"}},
                        "emb": {"apiVersion": "v1", "kind": "X", "metadata": {"name": "e"},
                                "spec": {"x": "1"}},
                        "list": [{"k": "a"}]}})
    );
}

#[test]
fn v1beta1_prunes_only_when_preserve_unknown_fields_is_false() {
    let keeps = Schema::from_crd(&crd("apiextensions.k8s.io/v1beta1", None), "v1")
        .unwrap()
        .unwrap();
    let mut value = object();
    keeps.prune(&mut value);
    assert_eq!(value["extra"], 1);
    let prunes = Schema::from_crd(&crd("apiextensions.k8s.io/v1beta1", Some(false)), "v1")
        .unwrap()
        .unwrap();
    let mut value = object();
    prunes.prune(&mut value);
    assert_eq!(value.get("extra"), None);
    assert_eq!(value["spec"].get("y"), None);
}

#[test]
fn an_embedded_resource_needs_api_version_and_kind() {
    let schema = Schema::from_crd(&crd("apiextensions.k8s.io/v1", None), "v1")
        .unwrap()
        .unwrap();
    let object = json!({"spec": {"emb": {"spec": {"x": "1"}}}});
    let errors: Vec<String> = schema
        .validate(&object, None)
        .iter()
        .map(ToString::to_string)
        .collect();
    // No "some validation rules were not checked": the schema has no CEL rule.
    assert_eq!(
        errors,
        [
            "spec.emb.apiVersion: Required value",
            "spec.emb.kind: Required value",
        ]
    );
}
