use serde_json::json;

use super::Schema;

fn schema() -> Schema {
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "spec": {"versions": [{"name": "v1",
    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
        "properties": {
            "a": {"type": "string", "default": "dflt"},
            "nul": {"type": "string", "nullable": true, "default": "x"},
            "nonnul": {"type": "string", "default": "y"},
            "word": {"type": "string"},
            "obj": {"type": "object", "default": {"req": "r"},
                    "properties": {"inner": {"type": "integer", "default": 7}, "req": {"type": "string"}}},
            "items": {"type": "array", "items": {"type": "object",
                      "properties": {"v": {"type": "integer", "default": 1}}}},
        }}}}}}]}});
    Schema::from_crd(&crd, "v1").unwrap().unwrap()
}

#[test]
fn defaults_fill_missing_fields_and_non_nullable_nulls_recursively() {
    let mut object = json!({"spec": {"nul": null, "nonnul": null, "word": null, "items": [{}]}});
    schema().default(&mut object);
    assert_eq!(
        object,
        json!({"spec": {"a": "dflt", "nul": null, "nonnul": "y", "items": [{"v": 1}],
                        "obj": {"inner": 7, "req": "r"}}})
    );
}

#[test]
fn given_values_are_kept() {
    let mut object = json!({"spec": {"a": "mine", "obj": {"req": "q", "inner": 1}}});
    schema().default(&mut object);
    assert_eq!(object["spec"]["a"], "mine");
    assert_eq!(object["spec"]["obj"], json!({"req": "q", "inner": 1}));
}
