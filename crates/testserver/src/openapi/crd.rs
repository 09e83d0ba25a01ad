//! OpenAPI for custom resources: each installed CustomResourceDefinition's served versions become
//! a kind schema, a list schema and the resource's paths ([`super::paths`]), in the
//! group-version's v3 document and in the v2 document.
//!
//! Mirrors apiextensions-apiserver `pkg/controller/openapi/builder/builder.go`
//! (`buildKubeNative`, `buildListSchema`) and `pkg/controller/openapi/v2/conversion.go`
//! (`ToStructuralOpenAPIV2`):
//! - the kind schema is the version's structural schema, unfolded (`x-kubernetes-int-or-string`
//!   spelled out as `anyOf`, embedded resources given `apiVersion`/`kind`/`metadata`), with
//!   `metadata` pointing at ObjectMeta and `apiVersion`/`kind` added; names are the group reversed
//!   (`com.example.police.v1beta1.WhiteList`);
//! - for v2, what Swagger 2.0 or kubectl's old client-side validation cannot take is dropped:
//!   junctors (`allOf`/`anyOf`/`oneOf`/`not`), the type of nullable, int-or-string and
//!   unknown-preserving schemas, and a root that preserves unknown fields becomes a bare object.
//!
//! # Differences from the real server
//! - The schema is published as given: the real server publishes nothing for a non-structural
//!   schema (this server does not check structurality).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::builtin::Builtin;
use super::paths::{self, Flavor, Resource};
use crate::apiserver::ApiServer;
use crate::registry::ResourceKey;
use crate::storage::State;

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
/// Any meta schema that carries TypeMeta's `apiVersion` and `kind` properties.
const TYPE_META_SOURCE: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
const EMBEDDED_API_VERSION_DOC: &str = "apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const EMBEDDED_KIND_DOC: &str = "kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";
const METADATA_DOC: &str = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const LIST_METADATA_DOC: &str = "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

/// Every stored CustomResourceDefinition.
pub(super) fn installed(api: &ApiServer) -> Vec<Value> {
    installed_in(&api.inner.storage.lock())
}

/// The stored CustomResourceDefinitions, read under a lock the caller holds.
pub(crate) fn installed_in(state: &State) -> Vec<Value> {
    let key = ResourceKey::new("apiextensions.k8s.io", "v1", "customresourcedefinitions");
    state
        .store
        .collection(&key)
        .map(|c| c.values().map(|s| (*s.value).clone()).collect())
        .unwrap_or_default()
}

/// One served version of a CRD.
struct Served<'a> {
    resource: Resource<'a>,
    /// Definition names of the kind and its list.
    definition: String,
    list_definition: String,
    /// `schema.openAPIV3Schema` of the version, if any.
    schema: Option<&'a Value>,
    /// The CRD's legacy `spec.preserveUnknownFields`.
    preserve_unknown: bool,
}

fn served(crds: &[Value]) -> Vec<Served<'_>> {
    let mut out = Vec::new();
    for crd in crds {
        let text = |p: &str| crd.pointer(p).and_then(Value::as_str).unwrap_or_default();
        let (group, kind) = (text("/spec/group"), text("/spec/names/kind"));
        let list_kind = match text("/spec/names/listKind") {
            "" => format!("{kind}List"),
            given => given.to_string(),
        };
        let versions = crd.pointer("/spec/versions").and_then(Value::as_array);
        for version in versions
            .into_iter()
            .flatten()
            .filter(|v| v["served"] == true)
        {
            let name = version["name"].as_str().unwrap_or_default();
            out.push(Served {
                resource: Resource {
                    group,
                    version: name,
                    kind,
                    list_kind: list_kind.clone(),
                    plural: text("/spec/names/plural"),
                    namespaced: text("/spec/scope") == "Namespaced",
                    status: version.pointer("/subresources/status").is_some(),
                    scale: version.pointer("/subresources/scale").is_some(),
                },
                definition: definition_name(group, name, kind),
                list_definition: definition_name(group, name, &list_kind),
                schema: version.pointer("/schema/openAPIV3Schema"),
                preserve_unknown: crd.pointer("/spec/preserveUnknownFields") == Some(&json!(true)),
            });
        }
    }
    out
}

/// kube-openapi `ToRESTFriendlyName` of `group/version.kind`: the group reversed.
fn definition_name(group: &str, version: &str, kind: &str) -> String {
    let reversed: Vec<&str> = group.split('.').rev().collect();
    format!("{}.{version}.{kind}", reversed.join("."))
}

/// The v3 documents of the group-versions only custom resources serve, by path
/// (`apis/<g>/<v>`); only `only`'s when given.
pub(super) fn v3_documents(
    crds: &[Value],
    builtin: &Builtin,
    only: Option<&str>,
) -> Vec<(String, Value)> {
    let mut by_path: BTreeMap<String, Vec<Served<'_>>> = BTreeMap::new();
    for s in served(crds) {
        let path = format!("apis/{}/{}", s.resource.group, s.resource.version);
        if only.is_none_or(|o| o == path) && !builtin.v3.contains_key(&path) {
            by_path.entry(path).or_default().push(s);
        }
    }
    by_path
        .into_iter()
        .map(|(path, all)| (path, v3_document(&all, builtin)))
        .collect()
}

fn v3_document(all: &[Served<'_>], builtin: &Builtin) -> Value {
    let mut schemas = Map::new();
    let mut paths = Map::new();
    for s in all {
        let r = &s.resource;
        schemas.insert(s.definition.clone(), kind_schema(s, builtin, Flavor::V3));
        schemas.insert(
            s.list_definition.clone(),
            list_schema(s, builtin, Flavor::V3),
        );
        paths.extend(paths::paths(r, Flavor::V3, builtin));
    }
    let mut doc = json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    });
    add_referenced(&mut doc, Flavor::V3, builtin);
    doc
}

/// The `components.schemas` of `group/version`'s v3 document, without building its paths (what
/// field validation needs on every write).
pub(super) fn v3_schemas(
    crds: &[Value],
    builtin: &Builtin,
    (group, version): (&str, &str),
) -> Map<String, Value> {
    let mut schemas = Map::new();
    for s in served(crds) {
        let r = &s.resource;
        if r.group == group && r.version == version {
            schemas.insert(s.definition.clone(), kind_schema(&s, builtin, Flavor::V3));
        }
    }
    let mut doc = json!({"components": {"schemas": schemas}});
    add_referenced(&mut doc, Flavor::V3, builtin);
    match doc["components"]["schemas"].take() {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// Adds every custom resource's definitions and paths to the v2 document.
pub(super) fn add_to_v2(doc: &mut Value, crds: &[Value], builtin: &Builtin) {
    for s in served(crds) {
        let r = &s.resource;
        let kind = kind_schema(&s, builtin, Flavor::V2);
        let list = list_schema(&s, builtin, Flavor::V2);
        if let Some(definitions) = doc["definitions"].as_object_mut() {
            definitions.insert(s.definition.clone(), kind);
            definitions.insert(s.list_definition.clone(), list);
        }
        let new_paths = paths::paths(r, Flavor::V2, builtin);
        if let Some(all) = doc["paths"].as_object_mut() {
            all.extend(new_paths);
        }
    }
    add_referenced(doc, Flavor::V2, builtin);
}

/// Copies the built-in schemas the document refers to but lacks (ObjectMeta and what it refers
/// to, Status, Patch, DeleteOptions, Scale, ...).
fn add_referenced(doc: &mut Value, flavor: Flavor, builtin: &Builtin) {
    let (pointer, prefix) = match flavor {
        Flavor::V2 => ("/definitions", "#/definitions/"),
        Flavor::V3 => ("/components/schemas", "#/components/schemas/"),
    };
    let source = |name: &str| -> Option<Value> {
        match flavor {
            Flavor::V2 => builtin.v2["definitions"].get(name).cloned(),
            Flavor::V3 => builtin.meta.get(name).cloned().or_else(|| {
                builtin
                    .v3
                    .values()
                    .find_map(|d| d.value.pointer("/components/schemas")?.get(name).cloned())
            }),
        }
    };
    let mut pending = references(doc, prefix);
    while let Some(name) = pending.pop() {
        let Some(schemas) = doc.pointer(pointer).and_then(Value::as_object) else {
            return;
        };
        if schemas.contains_key(&name) {
            continue;
        }
        let Some(schema) = source(&name) else {
            continue;
        };
        pending.extend(references(&schema, prefix));
        if let Some(schemas) = doc.pointer_mut(pointer).and_then(Value::as_object_mut) {
            schemas.insert(name, schema);
        }
    }
}

/// Names of the schemas `value` refers to with `$ref: <prefix><name>`.
fn references(value: &Value, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                if let Some(name) = map
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|r| r.strip_prefix(prefix))
                {
                    out.push(name.to_string());
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    out
}

fn type_meta(builtin: &Builtin, field: &str) -> Value {
    builtin.meta[TYPE_META_SOURCE]["properties"][field].clone()
}

/// A described reference: a sibling `$ref` in v2, wrapped in `allOf` in v3 (where `$ref` siblings
/// are ignored), as the real documents have it.
fn reference(flavor: Flavor, name: &str, description: &str) -> Value {
    match flavor {
        Flavor::V2 => json!({"$ref": format!("#/definitions/{name}"), "description": description}),
        Flavor::V3 => json!({
            "allOf": [{"$ref": format!("#/components/schemas/{name}")}],
            "description": description,
        }),
    }
}

fn plain_reference(flavor: Flavor, name: &str) -> Value {
    match flavor {
        Flavor::V2 => json!({"$ref": format!("#/definitions/{name}")}),
        Flavor::V3 => json!({"$ref": format!("#/components/schemas/{name}")}),
    }
}

/// `buildKubeNative`: the kind's schema as published.
fn kind_schema(s: &Served<'_>, builtin: &Builtin, flavor: Flavor) -> Value {
    let r = &s.resource;
    let gvk = json!([{"group": r.group, "version": r.version, "kind": r.kind}]);
    let preserve_root = s
        .schema
        .is_some_and(|v| v["x-kubernetes-preserve-unknown-fields"] == true);
    let Some(schema) = s
        .schema
        .filter(|_| !(flavor == Flavor::V2 && (preserve_root || s.preserve_unknown)))
    else {
        return json!({"type": "object", "x-kubernetes-group-version-kind": gvk});
    };
    let mut schema = schema.clone();
    unfold(&mut schema, flavor);
    if flavor == Flavor::V2 {
        to_v2(&mut schema);
    }
    if let Some(props) = schema
        .as_object_mut()
        .map(|m| m.entry("properties").or_insert_with(|| json!({})))
    {
        props["metadata"] = reference(flavor, OBJECT_META, METADATA_DOC);
        props["apiVersion"] = type_meta(builtin, "apiVersion");
        props["kind"] = type_meta(builtin, "kind");
    }
    schema["x-kubernetes-group-version-kind"] = gvk;
    schema
}

/// `buildListSchema`.
fn list_schema(s: &Served<'_>, builtin: &Builtin, flavor: Flavor) -> Value {
    let r = &s.resource;
    json!({
        "description": format!("{} is a list of {}", r.list_kind, r.kind),
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": type_meta(builtin, "apiVersion"),
            "kind": type_meta(builtin, "kind"),
            "items": {
                "description": format!("List of {}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md", r.plural),
                "type": "array",
                "items": plain_reference(flavor, &s.definition),
            },
            "metadata": reference(flavor, LIST_META, LIST_METADATA_DOC),
        },
        "x-kubernetes-group-version-kind": [{"group": r.group, "version": r.version, "kind": r.list_kind}],
    })
}

/// Structural `Unfold` plus `addEmbeddedProperties`, applied to every nested schema.
fn unfold(schema: &mut Value, flavor: Flavor) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    if map.get("x-kubernetes-int-or-string") == Some(&json!(true))
        && !map.contains_key("anyOf")
        && flavor == Flavor::V3
    {
        map.insert(
            "anyOf".into(),
            json!([{"type": "integer"}, {"type": "string"}]),
        );
    }
    let embedded = map.get("x-kubernetes-embedded-resource") == Some(&json!(true));
    let preserve = map.get("x-kubernetes-preserve-unknown-fields") == Some(&json!(true));
    for key in ["properties", "patternProperties"] {
        if let Some(props) = map.get_mut(key).and_then(Value::as_object_mut) {
            props.values_mut().for_each(|p| unfold(p, flavor));
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = map.get_mut(key) {
            unfold(child, flavor);
        }
    }
    if embedded && !(preserve && flavor == Flavor::V2) {
        let props = map.entry("properties").or_insert_with(|| json!({}));
        props["apiVersion"] = json!({"description": EMBEDDED_API_VERSION_DOC, "type": "string"});
        props["kind"] = json!({"description": EMBEDDED_KIND_DOC, "type": "string"});
        props["metadata"] = reference(flavor, OBJECT_META, METADATA_DOC);
        let required = map.entry("required").or_insert_with(|| json!([]));
        if let Some(list) = required.as_array_mut() {
            for field in ["kind", "apiVersion"] {
                if !list.contains(&json!(field)) {
                    list.push(json!(field));
                }
            }
        }
    }
}

/// `ToStructuralOpenAPIV2`, applied to every nested schema.
fn to_v2(schema: &mut Value) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    for junctor in ["allOf", "anyOf", "oneOf", "not"] {
        map.remove(junctor);
    }
    let flag = |m: &Map<String, Value>, k: &str| m.get(k) == Some(&json!(true));
    if flag(map, "nullable") {
        map.remove("nullable");
        for k in ["type", "items", "properties"] {
            map.remove(k);
        }
    }
    // (The real conversion would also strip embedded resources, but the builder adds their
    // apiVersion/kind/metadata back afterwards; the published result keeps them.)
    if flag(map, "x-kubernetes-preserve-unknown-fields") {
        for k in ["type", "items", "properties"] {
            map.remove(k);
        }
    }
    if flag(map, "x-kubernetes-int-or-string") {
        map.remove("type");
    }
    let nullable: Vec<String> = map
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .filter(|(_, v)| v["nullable"] == true)
                .map(|(k, _)| k.clone())
                .collect()
        })
        .unwrap_or_default();
    if let Some(required) = map.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|r| !r.as_str().is_some_and(|r| nullable.iter().any(|n| n == r)));
    }
    if map
        .get("additionalProperties")
        .is_some_and(|a| a["nullable"] == true)
    {
        map.remove("required");
    }
    for key in ["properties", "patternProperties"] {
        if let Some(props) = map.get_mut(key).and_then(Value::as_object_mut) {
            props.values_mut().for_each(to_v2);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = map.get_mut(key) {
            to_v2(child);
        }
    }
}

#[cfg(test)]
#[path = "crd_tests.rs"]
mod tests;
