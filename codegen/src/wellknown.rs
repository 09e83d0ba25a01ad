//! Well-known Kubernetes types that API structs name by their bare name (`Condition`,
//! `LabelSelector`, `PodTemplateSpec`, ...): their Rust type (k8s-openapi, or kube-core for
//! `Duration`) and their CRD schema, inlined from the upstream OpenAPI v3 documents.
//!
//! controller-gen reads the Go types of `k8s.io/api` to write these schemas; kubegen has no Go
//! types, so it reads what the API server publishes for them: `codegen/openapi/wellknown.json`,
//! the component schemas of a real kube-apiserver's `/openapi/v3` (written by
//! `hack/update-openapi-data.py`, never by hand). Embedding the file keeps codegen free of runtime
//! crates and of network access.
//!
//! # From OpenAPI component schemas to a structural CRD schema
//! - `$ref`s (bare or wrapped in a one-element `allOf`, as v3 writes a reference with its own
//!   description) are inlined recursively; the referring node's `description` wins.
//! - `Quantity` and `IntOrString` (`oneOf` string/number in upstream) become kubegen's
//!   int-or-string node, as for fields of those types.
//! - Keywords a CRD schema does not have (`x-kubernetes-patch-*`, `x-kubernetes-unions`,
//!   `x-kubernetes-group-version-kind`) are dropped; list and map types, enums and formats stay.
//! - Only scalar `default`s stay: upstream writes `default: {}` on references to structs that have
//!   required fields, which a CRD server rejects as an invalid default, while scalar defaults are
//!   needed (a `x-kubernetes-list-map-keys` key must be required or defaulted, e.g. a container
//!   port's `protocol: TCP`). A default outside its node's `enum` goes too: upstream writes the Go
//!   zero value `""` as default of non-pointer enum fields (e.g. a seccomp profile's `type`),
//!   which the server rejects in a CRD as an unsupported value.
//!
//! `Duration` has no component schema: upstream declares `metav1.Duration` as a plain string in
//! Go (`OpenAPISchemaType`), so its schema is `type: string`, as controller-gen writes it.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use serde_json::Value as Json;
use serde_yaml::{Mapping, Value};

/// A well-known Kubernetes type usable by its bare name in `apis/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WellKnown {
    /// `metav1.Condition`.
    Condition,
    /// `metav1.LabelSelector`.
    LabelSelector,
    /// `metav1.MicroTime`.
    MicroTime,
    /// `metav1.OwnerReference`.
    OwnerReference,
    /// `metav1.Duration` (Rust: `kube_core::Duration`, Go duration strings such as `1h30m`).
    Duration,
    /// `corev1.EnvVar`.
    EnvVar,
    /// `corev1.LocalObjectReference`.
    LocalObjectReference,
    /// `corev1.ObjectReference`.
    ObjectReference,
    /// `corev1.PodTemplateSpec`.
    PodTemplateSpec,
    /// `corev1.ResourceRequirements`.
    ResourceRequirements,
    /// `corev1.Toleration`.
    Toleration,
}

const META: &str = "k8s_openapi::apimachinery::pkg::apis::meta::v1";
const CORE: &str = "k8s_openapi::api::core::v1";
const META_DEF: &str = "io.k8s.apimachinery.pkg.apis.meta.v1";
const CORE_DEF: &str = "io.k8s.api.core.v1";

impl WellKnown {
    /// Every well-known type.
    pub const ALL: [WellKnown; 11] = [
        WellKnown::Condition,
        WellKnown::LabelSelector,
        WellKnown::MicroTime,
        WellKnown::OwnerReference,
        WellKnown::Duration,
        WellKnown::EnvVar,
        WellKnown::LocalObjectReference,
        WellKnown::ObjectReference,
        WellKnown::PodTemplateSpec,
        WellKnown::ResourceRequirements,
        WellKnown::Toleration,
    ];

    /// The bare name written in `apis/`.
    pub fn name(self) -> &'static str {
        match self {
            WellKnown::Condition => "Condition",
            WellKnown::LabelSelector => "LabelSelector",
            WellKnown::MicroTime => "MicroTime",
            WellKnown::OwnerReference => "OwnerReference",
            WellKnown::Duration => "Duration",
            WellKnown::EnvVar => "EnvVar",
            WellKnown::LocalObjectReference => "LocalObjectReference",
            WellKnown::ObjectReference => "ObjectReference",
            WellKnown::PodTemplateSpec => "PodTemplateSpec",
            WellKnown::ResourceRequirements => "ResourceRequirements",
            WellKnown::Toleration => "Toleration",
        }
    }

    /// The type named `name`, if it is well-known.
    pub fn from_name(name: &str) -> Option<WellKnown> {
        WellKnown::ALL.into_iter().find(|wk| wk.name() == name)
    }

    /// The Rust path, without a leading `::`.
    pub fn rust_path(self) -> String {
        match self {
            WellKnown::Duration => "kube_core::Duration".to_owned(),
            WellKnown::Condition
            | WellKnown::LabelSelector
            | WellKnown::MicroTime
            | WellKnown::OwnerReference => format!("{META}::{}", self.name()),
            _ => format!("{CORE}::{}", self.name()),
        }
    }

    /// The upstream component schema name; `None` for `Duration`, a string in upstream.
    pub(crate) fn definition(self) -> Option<String> {
        match self {
            WellKnown::Duration => None,
            WellKnown::Condition
            | WellKnown::LabelSelector
            | WellKnown::MicroTime
            | WellKnown::OwnerReference => Some(format!("{META_DEF}.{}", self.name())),
            _ => Some(format!("{CORE_DEF}.{}", self.name())),
        }
    }

    /// Whether the Rust type implements `Default`: `Condition`, `MicroTime` (a timestamp has no
    /// sensible zero) and `kube_core::Duration` do not.
    pub fn has_default(self) -> bool {
        !matches!(
            self,
            WellKnown::Condition | WellKnown::MicroTime | WellKnown::Duration
        )
    }

    /// The structural CRD schema of the type.
    pub(crate) fn schema(self) -> Value {
        SCHEMAS.iter().find(|(wk, _)| *wk == self).map_or_else(
            || single("type", Value::from("string")),
            |(_, schema)| schema.clone(),
        )
    }
}

/// `codegen/openapi/wellknown.json`, parsed once. Compiled in, so a parse failure is a kubegen
/// bug that every test touching the data catches before release.
static DATA: LazyLock<Json> = LazyLock::new(|| {
    serde_json::from_str(include_str!("../openapi/wellknown.json"))
        .expect("codegen/openapi/wellknown.json is JSON")
});

/// The upstream component schemas by name (`io.k8s.api.apps.v1.StatefulSet`, ...): the
/// well-known types, the test server's built-in kinds and every schema they reference.
pub(crate) fn component_schemas() -> &'static serde_json::Map<String, Json> {
    static EMPTY: LazyLock<serde_json::Map<String, Json>> = LazyLock::new(serde_json::Map::new);
    DATA["schemas"].as_object().unwrap_or(&EMPTY)
}

/// The schema of every well-known type that has a definition, converted once. The data is
/// compiled in, so a failure is a kubegen bug that `every_well_known_type_has_a_structural_schema`
/// catches before release.
static SCHEMAS: LazyLock<Vec<(WellKnown, Value)>> = LazyLock::new(|| {
    let data = &*DATA;
    WellKnown::ALL
        .into_iter()
        .filter_map(|wk| {
            let name = wk.definition()?;
            let schema = definition_schema(&name, &data["schemas"])
                .unwrap_or_else(|error| panic!("codegen/openapi/wellknown.json: {error}"));
            Some((wk, schema))
        })
        .collect()
});

/// The structural schema of the component schema `name` of `schemas`.
fn definition_schema(name: &str, schemas: &Json) -> Result<Value, String> {
    let reference = Json::String(format!("#/components/schemas/{name}"));
    let node = Json::Object([("$ref".to_owned(), reference)].into_iter().collect());
    structural(&node, schemas, &mut Vec::new())
}

/// The keywords a converted node may have, in the order they are written.
const ORDER: [&str; 23] = [
    "description",
    "type",
    "format",
    "enum",
    "default",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "nullable",
    "anyOf",
    "x-kubernetes-int-or-string",
    "x-kubernetes-map-type",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-preserve-unknown-fields",
    "properties",
    "required",
    "items",
    "additionalProperties",
];

/// Keywords copied from upstream nodes (the others of [`ORDER`] are built here).
fn copied(key: &str) -> bool {
    !matches!(key, "anyOf" | "x-kubernetes-int-or-string" | "properties")
}

/// Definitions whose values are an integer or a string.
const INT_OR_STRING: [&str; 2] = [
    "io.k8s.apimachinery.pkg.api.resource.Quantity",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
];

fn single(key: &str, value: Value) -> Value {
    let mut mapping = Mapping::new();
    mapping.insert(Value::from(key), value);
    Value::Mapping(mapping)
}

/// Converts one upstream node; `stack` holds the definitions being inlined (recursion guard).
fn structural(node: &Json, schemas: &Json, stack: &mut Vec<String>) -> Result<Value, String> {
    let Json::Object(object) = node else {
        return Err(format!("schema node is not an object: {node}"));
    };
    let reference = match object.get("allOf").and_then(Json::as_array) {
        Some(all) if all.len() == 1 => all[0].get("$ref"),
        Some(_) => return Err("`allOf` with more than one schema".to_owned()),
        None => object.get("$ref"),
    };
    let mut out = match reference.and_then(Json::as_str) {
        Some(reference) => inline(reference, schemas, stack)?,
        None => Mapping::new(),
    };
    if object.contains_key("oneOf") && reference.is_none() {
        return Err(format!("`oneOf` outside int-or-string: {node}"));
    }
    for key in ORDER.into_iter().filter(|key| copied(key)) {
        let Some(value) = object.get(key) else {
            continue;
        };
        let converted = match key {
            "items" | "additionalProperties" => structural(value, schemas, stack)?,
            "default" if value.is_object() || value.is_array() => continue,
            _ => serde_yaml::to_value(value).map_err(|e| e.to_string())?,
        };
        out.insert(Value::from(key), converted);
    }
    if let Some(Json::Object(properties)) = object.get("properties") {
        let mut converted = Mapping::new();
        let names: BTreeSet<&String> = properties.keys().collect();
        for name in names {
            converted.insert(
                Value::from(name.as_str()),
                structural(&properties[name], schemas, stack)?,
            );
        }
        out.insert(Value::from("properties"), Value::Mapping(converted));
    }
    if let (Some(default), Some(Value::Sequence(allowed))) = (out.get("default"), out.get("enum"))
        && !allowed.contains(default)
    {
        out.remove("default");
    }
    let typed = [
        "type",
        "x-kubernetes-int-or-string",
        "x-kubernetes-preserve-unknown-fields",
    ]
    .iter()
    .any(|key| out.contains_key(*key));
    if !typed {
        return Err(format!("schema node without a type: {node}"));
    }
    Ok(Value::Mapping(ordered(out)))
}

/// The definition `reference` points to, converted; int-or-string definitions become the
/// structural int-or-string node.
fn inline(reference: &str, schemas: &Json, stack: &mut Vec<String>) -> Result<Mapping, String> {
    let name = reference
        .strip_prefix("#/components/schemas/")
        .ok_or_else(|| format!("unexpected reference `{reference}`"))?;
    if INT_OR_STRING.contains(&name) {
        let mut node = Mapping::new();
        let alternatives = ["integer", "string"].map(|ty| single("type", Value::from(ty)));
        node.insert(Value::from("anyOf"), Value::Sequence(alternatives.to_vec()));
        node.insert(Value::from("x-kubernetes-int-or-string"), Value::Bool(true));
        return Ok(node);
    }
    if stack.iter().any(|seen| seen == name) {
        return Err(format!("`{name}` is recursive"));
    }
    let target = schemas
        .get(name)
        .ok_or_else(|| format!("`{name}` is missing from wellknown.json"))?;
    stack.push(name.to_owned());
    let converted = structural(target, schemas, stack);
    stack.pop();
    match converted? {
        Value::Mapping(mapping) => Ok(mapping),
        _ => Err(format!("`{name}` is not an object schema")),
    }
}

/// The keys of `node` in [`ORDER`].
fn ordered(mut node: Mapping) -> Mapping {
    let mut out = Mapping::new();
    for key in ORDER {
        if let Some(value) = node.remove(key) {
            out.insert(Value::from(key), value);
        }
    }
    out
}

#[cfg(test)]
#[path = "wellknown_tests.rs"]
mod tests;
