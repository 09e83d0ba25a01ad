use serde_json::{Value, json};

use super::extract;
use crate::Error;

fn config_map() -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cm", "namespace": "ns", "managedFields": [
            {"manager": "a", "operation": "Apply", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:data": {"f:x": {}}}},
            {"manager": "a", "operation": "Update", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:data": {"f:y": {}}}},
            {"manager": "a", "operation": "Apply", "subresource": "status", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:data": {"f:z": {}}}},
            {"manager": "b", "operation": "Apply", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:metadata": {"f:labels": {"f:l": {}}}}},
            {"manager": "c", "operation": "Patch", "fieldsType": "FieldsV1",
             "fieldsV1": {"x:nonsense": {}}},
        ], "labels": {"l": "v"}},
        "data": {"x": "1", "y": "2", "z": "3"},
    })
}

#[test]
fn only_the_managers_apply_entry_on_the_subresource_counts() {
    assert_eq!(
        extract(&config_map(), "a", None),
        Ok(json!({"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"name": "cm", "namespace": "ns"}, "data": {"x": "1"}}))
    );
    assert_eq!(
        extract(&config_map(), "a", Some("status")).map(|c| c["data"].clone()),
        Ok(json!({"z": "3"}))
    );
    assert_eq!(
        extract(&config_map(), "b", None).map(|c| c["metadata"].clone()),
        Ok(json!({"name": "cm", "namespace": "ns", "labels": {"l": "v"}}))
    );
}

#[test]
fn a_manager_without_an_apply_entry_gets_the_identity_only() {
    assert_eq!(
        extract(&config_map(), "nobody", None),
        Ok(json!({"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"name": "cm", "namespace": "ns"}}))
    );
}

#[test]
fn only_the_managers_malformed_entries_fail() {
    let mut object = config_map();
    object["metadata"]["managedFields"][0]["fieldsV1"] = json!({"x:data": {}});
    assert_eq!(
        extract(&object, "a", None),
        Err(Error::InvalidManagedFields(
            "unknown path element \"x:data\"".into()
        ))
    );
    assert!(extract(&object, "b", None).is_ok());
}
