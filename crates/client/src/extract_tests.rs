use k8s_openapi::api::core::v1::ConfigMap;
use serde_json::{Value, json};

use super::extract;

fn config_map() -> ConfigMap {
    serde_json::from_value(json!({
        "metadata": {"name": "cm", "namespace": "ns", "managedFields": [
            {"manager": "a", "operation": "Apply", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:data": {"f:x": {}}}},
            {"manager": "a", "operation": "Update", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:data": {"f:y": {}}}},
            {"manager": "b", "operation": "Apply", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:metadata": {"f:labels": {"f:l": {}}}}},
        ], "labels": {"l": "v"}},
        "data": {"x": "1", "y": "2", "z": "3"},
    }))
    .expect("test object is valid")
}

#[test]
fn only_the_managers_apply_entry_counts_and_identity_is_always_set() {
    let config: Value = extract(&config_map(), "a", None).expect("extracts");
    assert_eq!(
        config,
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "cm", "namespace": "ns"}, "data": {"x": "1"}})
    );
    let config: Value = extract(&config_map(), "b", None).expect("extracts");
    assert_eq!(
        config["metadata"],
        json!({"name": "cm", "namespace": "ns", "labels": {"l": "v"}})
    );
}

#[test]
fn a_manager_without_an_apply_entry_gets_the_identity_only() {
    let config: Value = extract(&config_map(), "a", Some("status")).expect("extracts");
    assert_eq!(
        config,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "ns"}})
    );
}

#[test]
fn malformed_fields_v1_names_object_and_manager() {
    let mut object = config_map();
    let entries = object
        .metadata
        .managed_fields
        .as_mut()
        .expect("has entries");
    entries[0].fields_v1 = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1(
        json!({"x:data": {}}),
    ));
    let error = extract::<_, Value>(&object, "a", None).expect_err("must fail");
    assert_eq!(
        error.to_string(),
        "extracting the fields \"a\" owns of v1 ConfigMap ns/cm: unknown path element \"x:data\""
    );
}

#[test]
fn an_object_without_managed_fields_is_an_error_naming_object_and_manager() {
    let mut object = config_map();
    object.metadata.managed_fields = None;
    let error = extract::<_, Value>(&object, "a", None).expect_err("must fail");
    assert!(
        matches!(&error, crate::Error::ManagedFieldsMissing { what, manager }
        if what == "v1 ConfigMap ns/cm" && manager == "a")
    );
    let message = error.to_string();
    assert!(
        message.starts_with("extracting the fields \"a\" owns of v1 ConfigMap ns/cm: the object has no managedFields (stripped"),
        "{message}"
    );
}

#[test]
fn an_empty_managed_fields_list_still_gives_the_identity_only() {
    let mut object = config_map();
    object.metadata.managed_fields = Some(Vec::new());
    let config: Value = extract(&object, "a", None).expect("extracts");
    assert_eq!(
        config,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "ns"}})
    );
}
