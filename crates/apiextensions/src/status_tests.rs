//! [`Schema::validate_status`] and what an update ratchets as a whole, with v1.36's answers
//! (`docs/crd-conversion-reference.md`, the Boat CRD's v2).

use serde_json::{Value, json};

use super::Schema;

/// The Boat's v2: a status `replicas` of at most 5, a scale subresource, and a CEL rule on the
/// spec (so that the CEL validator exists).
fn boat(rules: bool) -> Schema {
    let mut spec = json!({"type": "object", "properties": {
        "sailors": {"type": "integer", "maximum": 10},
        "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}}});
    if rules {
        spec["x-kubernetes-validations"] =
            json!([{"rule": "!has(self.sailors) || self.sailors < 100", "message": "too many"}]);
    }
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "spec": {"versions": [{"name": "v2",
        "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.sailors",
            "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}},
        "schema": {"openAPIV3Schema": {"type": "object", "properties": {
            "spec": spec,
            "status": {"type": "object", "properties": {
                "replicas": {"type": "integer", "maximum": 5},
                "selector": {"type": "string"}}}}}}}]}});
    Schema::from_crd(&crd, "v2").unwrap().unwrap()
}

fn shown(errors: &[super::FieldError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

fn status(object: Value, old: Value) -> Vec<String> {
    shown(&boat(true).validate_status(&object, &old))
}

#[test]
fn a_status_write_checks_the_status_against_its_own_schema() {
    let old = json!({"spec": {"sailors": 50}, "status": {"replicas": 1}});
    assert_eq!(
        status(
            json!({"spec": {"sailors": 50}, "status": {"replicas": 7}}),
            old.clone()
        ),
        ["status.replicas: Invalid value: 7: replicas in body should be less than or equal to 5"]
    );
    // The root of the status schema has an empty path; the spec is not checked (50 > 10).
    assert_eq!(
        status(json!({"spec": {"sailors": 50}, "status": "x"}), old.clone()),
        [
            "status: Invalid value: \"string\":  in body must be of type object: \"string\"",
            ".status.replicas: Invalid value: 0: .status.replicas accessor error: x is of the type \
             string, expected map[string]interface{}",
            ".status.selector: Invalid value: \"\": .status.selector accessor error: x is of the \
             type string, expected map[string]interface{}",
            "<nil>: Invalid value: null: some validation rules were not checked because the \
             object was invalid; correct the existing errors to complete validation",
        ]
    );
    // The scale subresource's status fields, not its spec replicas.
    assert_eq!(
        status(
            json!({"spec": {"sailors": -1}, "status": {"replicas": -1}}),
            json!({"spec": {"sailors": -1}})
        ),
        [".status.replicas: Invalid value: -1: should be a non-negative integer"]
    );
    // Ratcheting: a status value the old object had already is not checked again.
    let kept = json!({"status": {"replicas": 7, "selector": "a"}});
    assert_eq!(
        status(kept, json!({"status": {"replicas": 7}})),
        Vec::<String>::new()
    );
}

#[test]
fn without_cel_rules_a_blocking_error_adds_no_rules_not_checked() {
    let object = json!({"spec": {"sailors": "x"}});
    assert_eq!(
        shown(&boat(false).validate(&object, None)),
        [
            "spec.sailors: Invalid value: \"string\": spec.sailors in body must be of type \
             integer: \"string\"",
            ".spec.sailors: Invalid value: 0: .spec.sailors accessor error: x is of the type \
             string, expected int64",
        ]
    );
    assert_eq!(shown(&boat(true).validate(&object, None)).len(), 3);
}

#[test]
fn list_types_are_ratcheted_as_a_whole_on_update() {
    let duplicated = json!({"spec": {"tags": ["a", "a"]}});
    let message = "spec.tags[1]: Duplicate value: \"a\"";
    assert_eq!(shown(&boat(false).validate(&duplicated, None)), [message]);
    let grown = json!({"spec": {"tags": ["a", "a", "b"]}});
    assert_eq!(
        shown(&boat(false).validate(&grown, Some(&duplicated))),
        Vec::<String>::new()
    );
    let clean = json!({"spec": {"tags": ["a"]}});
    assert_eq!(
        shown(&boat(false).validate(&duplicated, Some(&clean))),
        [message]
    );
}
