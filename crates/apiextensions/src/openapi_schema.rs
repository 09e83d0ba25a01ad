//! One kind's schema out of an OpenAPI v3 document, every `$ref` filled in: what the type
//! checker of admission policies types `object` and `params` with (apiserver
//! `pkg/cel/openapi/resolver`: `ClientDiscoveryResolver.ResolveSchema` finds the component by its
//! `x-kubernetes-group-version-kind`, `PopulateRefs` fills in its references).
//!
//! # As v1.36 fills references
//! A node that is a reference (`$ref`, or an `allOf` holding one, as built-in schemas wrap them
//! to add a `default` or `description`) becomes the referenced schema whole: its siblings go. A
//! reference back into its own path (a recursive type) becomes `{"type": "object"}`, an object
//! with no fields. Built-in schemas say `format: int-or-string` where custom resources say
//! `x-kubernetes-int-or-string`; the CEL types read both as `dyn`, so the former gains the latter
//! here and the typing code knows one spelling.

use serde_json::{Map, Value, json};

/// Where `$ref`s of an OpenAPI v3 document point.
const REF_PREFIX: &str = "#/components/schemas/";

/// The schema of `group`/`version`/`kind` in `document` (an `/openapi/v3/<path>` document), its
/// references filled in; `None` when no component declares that kind or a reference names no
/// component.
#[must_use]
pub fn kind_schema(document: &Value, group: &str, version: &str, kind: &str) -> Option<Value> {
    let schemas = document.get("components")?.get("schemas")?.as_object()?;
    let (name, _) = schemas.iter().find(|(_, schema)| {
        schema
            .get("x-kubernetes-group-version-kind")
            .and_then(Value::as_array)
            .is_some_and(|gvks| {
                gvks.iter().any(|gvk| {
                    gvk["group"].as_str().unwrap_or("") == group
                        && gvk["version"] == version
                        && gvk["kind"] == kind
                })
            })
    })?;
    let root = json!({ "$ref": format!("{REF_PREFIX}{name}") });
    populate(schemas, &mut Vec::new(), &root)
}

/// `schema` with its references filled in; `visited` holds the references of the path here.
fn populate(
    schemas: &Map<String, Value>,
    visited: &mut Vec<String>,
    schema: &Value,
) -> Option<Value> {
    let reference = reference(schema);
    let mut result = match reference {
        Some(reference) if visited.iter().any(|seen| seen == reference) => {
            return Some(json!({"type": "object"}));
        }
        Some(reference) => {
            visited.push(reference.to_owned());
            schemas.get(reference.strip_prefix(REF_PREFIX)?)?.clone()
        }
        None => schema.clone(),
    };
    let filled = fill_children(schemas, visited, &mut result);
    if reference.is_some() {
        visited.pop();
    }
    filled?;
    if let Some(object) = result.as_object_mut()
        && object.get("format").and_then(Value::as_str) == Some("int-or-string")
    {
        object.insert("x-kubernetes-int-or-string".into(), Value::Bool(true));
    }
    Some(result)
}

/// Fills in the references of `schema`'s properties, map values and list items.
fn fill_children(
    schemas: &Map<String, Value>,
    visited: &mut Vec<String>,
    schema: &mut Value,
) -> Option<()> {
    let Some(object) = schema.as_object_mut() else {
        return Some(());
    };
    if let Some(properties) = object.get_mut("properties").and_then(Value::as_object_mut) {
        for property in properties.values_mut() {
            *property = populate(schemas, visited, property)?;
        }
    }
    for key in ["additionalProperties", "items"] {
        if let Some(child) = object.get_mut(key).filter(|child| child.is_object()) {
            *child = populate(schemas, visited, child)?;
        }
    }
    Some(())
}

/// The reference `schema` is: its `$ref`, or the first `$ref` among its `allOf`.
fn reference(schema: &Value) -> Option<&str> {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        return Some(reference);
    }
    schema
        .get("allOf")?
        .as_array()?
        .iter()
        .find_map(|part| part.get("$ref").and_then(Value::as_str))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn document() -> Value {
        json!({"components": {"schemas": {
            "io.k8s.api.apps.v1.Deployment": {
                "type": "object",
                "x-kubernetes-group-version-kind": [{"group": "apps", "version": "v1", "kind": "Deployment"}],
                "properties": {
                    "spec": {"default": {}, "description": "d", "allOf": [{"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"}]},
                    "items": {"type": "array", "items": {"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"}}
                }
            },
            "io.k8s.api.apps.v1.DeploymentSpec": {
                "type": "object",
                "properties": {
                    "replicas": {"type": "integer", "format": "int32"},
                    "maxSurge": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString"},
                    "labels": {"type": "object", "additionalProperties": {"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"}}
                }
            },
            "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"format": "int-or-string", "oneOf": [{"type": "integer"}, {"type": "string"}]},
            "io.k8s.api.core.v1.Pod": {
                "type": "object",
                "x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "Pod"}],
                "properties": {"broken": {"$ref": "#/components/schemas/missing"}}
            }
        }}})
    }

    #[test]
    fn a_reference_is_replaced_whole_and_a_cycle_becomes_an_empty_object() {
        let schema = kind_schema(&document(), "apps", "v1", "Deployment").unwrap();
        let spec = &schema["properties"]["spec"];
        assert_eq!(spec.get("default"), None, "the reference's siblings go");
        assert_eq!(spec["properties"]["replicas"]["type"], "integer");
        assert_eq!(
            spec["properties"]["labels"]["additionalProperties"],
            json!({"type": "object"}),
            "DeploymentSpec inside DeploymentSpec"
        );
        assert_eq!(
            schema["properties"]["items"]["items"]["properties"]["replicas"]["format"],
            "int32"
        );
        assert_eq!(
            spec["properties"]["maxSurge"]["x-kubernetes-int-or-string"],
            true
        );
    }

    #[test]
    fn an_unknown_kind_or_a_dangling_reference_has_no_schema() {
        assert_eq!(kind_schema(&document(), "apps", "v1", "StatefulSet"), None);
        assert_eq!(kind_schema(&document(), "apps", "v2", "Deployment"), None);
        assert_eq!(kind_schema(&document(), "", "v1", "Pod"), None);
        assert_eq!(kind_schema(&json!({}), "", "v1", "Pod"), None);
    }
}
