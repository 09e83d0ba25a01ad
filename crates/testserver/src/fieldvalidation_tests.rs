use serde_json::{Map, Value, json};

use super::*;
use crate::openapi::unknown_fields::KindSchema;

fn components() -> Map<String, Value> {
    let c = json!({
        "Deployment": {"type": "object", "properties": {
            "apiVersion": {"type": "string"},
            "metadata": {"allOf": [{"$ref": "#/components/schemas/ObjectMeta"}], "default": {}},
            "spec": {"allOf": [{"$ref": "#/components/schemas/DeploymentSpec"}], "default": {}},
        }},
        "DeploymentSpec": {"type": "object", "properties": {
            "replicas": {"type": "integer"},
            "containers": {"type": "array", "items": {"allOf": [{"$ref": "#/components/schemas/Container"}]}},
            "raw": {"$ref": "#/components/schemas/RawExtension"},
        }},
        "Container": {"type": "object", "properties": {"name": {"type": "string"}}},
        "ObjectMeta": {"type": "object", "properties": {
            "name": {"type": "string"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        }},
        "RawExtension": {"type": "object"},
    });
    c.as_object().unwrap().clone()
}

fn unknown(root: &Value, object: Value, patch: bool) -> Vec<String> {
    let components = components();
    let schema = KindSchema {
        root,
        components: &components,
    };
    unknown_fields(&schema, &object, patch)
}

fn deployment() -> Value {
    json!({"$ref": "#/components/schemas/Deployment"})
}

#[test]
fn declared_fields_maps_and_opaque_named_types_pass() {
    let object = json!({"apiVersion": "apps/v1", "metadata": {"name": "a", "labels": {"any": "x"}},
                        "spec": {"replicas": 1, "containers": [{"name": "c"}], "raw": {"anything": {"goes": 1}}}});
    assert!(unknown(&deployment(), object, false).is_empty());
}

#[test]
fn unknown_fields_are_reported_with_dotted_paths_and_list_indexes() {
    let object = json!({"spec": {"foo": 1, "containers": [{"name": "a"}, {"name": "b", "imag": "x"}]},
                        "metadata": {"nam": "x"}});
    assert_eq!(
        unknown(&deployment(), object, false),
        vec!["metadata.nam", "spec.containers[1].imag", "spec.foo"]
    );
}

#[test]
fn inline_schemas_declare_exactly_their_properties() {
    let root = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"a": {"type": "string"}, "empty": {"type": "object"}}},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "mixed": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                  "properties": {"typed": {"type": "object", "properties": {}}}},
        "embedded": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"spec": {"type": "object"}}},
    }});
    let object = json!({"spec": {"a": "x", "b": 1, "empty": {"c": 1}},
                        "free": {"x": {"y": 1}},
                        "mixed": {"other": 1, "typed": {"bad": 1}},
                        "embedded": {"apiVersion": "v1", "kind": "Pod", "metadata": {}, "extra": 1}});
    assert_eq!(
        unknown(&root, object, false),
        vec![
            "embedded.extra",
            "mixed.typed.bad",
            "spec.b",
            "spec.empty.c"
        ]
    );
}

#[test]
fn patches_skip_directives_and_deletions() {
    let object = json!({"spec": {"$setElementOrder/containers": [{"name": "a"}], "gone": null,
                                 "containers": [{"name": "a", "$patch": "delete"}], "bad": 1}});
    assert_eq!(
        unknown(&deployment(), object.clone(), true),
        vec!["spec.bad"]
    );
    assert_eq!(
        unknown(&deployment(), object, false),
        vec![
            "spec.$setElementOrder/containers",
            "spec.bad",
            "spec.containers[0].$patch",
            "spec.gone"
        ]
    );
}

#[test]
fn a_dangling_reference_accepts_anything() {
    let root = json!({"$ref": "#/components/schemas/Missing"});
    assert!(unknown(&root, json!({"x": 1}), false).is_empty());
}

#[test]
fn directive_defaults_to_warn_and_rejects_unknown_values() {
    assert_eq!(
        Directive::parse(None, Verb::Create).unwrap(),
        Directive::Warn
    );
    assert_eq!(
        Directive::parse(Some("Strict"), Verb::Create).unwrap(),
        Directive::Strict
    );
    assert_eq!(
        Directive::parse(Some("Ignore"), Verb::Patch).unwrap(),
        Directive::Ignore
    );
    let e = Directive::parse(Some("strict"), Verb::Create).unwrap_err();
    assert_eq!(e.code, 422);
    assert_eq!(
        e.message,
        "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"strict\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""
    );
    assert!(
        Directive::parse(Some("x"), Verb::Patch)
            .unwrap_err()
            .message
            .starts_with("PatchOptions.")
    );
}

#[test]
fn strict_message_lists_every_field() {
    assert_eq!(
        strict_error_message(&["spec.a".into(), "spec.b".into()]),
        "strict decoding error: unknown field \"spec.a\", unknown field \"spec.b\""
    );
}
