//! Apply configurations of the built-in kinds (`builtins.toml`) and of the well-known types user
//! structs name, from the upstream OpenAPI v3 component schemas (`codegen/openapi/wellknown.json`,
//! a real kube-apiserver's own documents). Only types reachable from those roots are emitted.
//!
//! # From a component schema to a configuration
//! - An object schema with `properties` becomes `<Name>ApplyConfiguration` in
//!   `<module>::<version>` (`io.k8s.api.apps.v1.StatefulSetSpec` -> `apps::v1`,
//!   `io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta` -> `meta::v1`), one field per property
//!   with the schema's JSON name.
//! - `$ref`s (bare or in a one-element `allOf`) to such schemas nest their configuration;
//!   `Quantity`, `IntOrString`, `Time` and `MicroTime` stay k8s-openapi's types, other schemas
//!   without properties (`RawExtension`, ...) are `serde_json::Value`.
//! - `type: array` is a list (its `x-kubernetes-list-type` is the server's business: the merge
//!   keys reach `extract` through `managedFields`' `k:` elements), `additionalProperties` a map.
//! - `ObjectMeta.managedFields` is left out, as client-go's `ObjectMetaApplyConfiguration` does:
//!   the server owns it.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use proc_macro2::{Ident, TokenStream};
use quote::quote;
use serde_json::Value;

use super::config_type::{ConfigField, ConfigType, KindInfo, Shape, config_path};
use crate::Error;
use crate::diag::Diagnostic;
use crate::emit::ctx::EmitCtx;
use crate::model::{FieldType, Location, Verb};
use crate::wellknown::{WellKnown, component_schemas};

const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.";
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// The configurations of every built-in kind, ObjectMeta, the well-known types the user's packages
/// name, and everything they reach.
///
/// # Errors
/// [`Error::Invalid`] naming a built-in kind that has no schema in the shipped documents.
pub(super) fn types(ctx: &EmitCtx<'_>, api: &Ident) -> Result<Vec<ConfigType>, Error> {
    let schemas = component_schemas();
    let mut roots: BTreeMap<String, Option<KindInfo>> = BTreeMap::new();
    roots.insert(OBJECT_META.to_owned(), None);
    let used = well_known_used(ctx)
        .into_iter()
        .filter_map(WellKnown::from_name);
    for name in used.filter_map(WellKnown::definition) {
        roots.insert(name, None);
    }
    let mut missing = Vec::new();
    for package in &ctx.model.builtins {
        for kind in &package.kinds {
            let Some(name) = kind_schema(schemas, &package.group, &package.version, &kind.name)
            else {
                missing.push(Diagnostic {
                    location: Location {
                        file: ctx.builtins_source().into(),
                        line: 0,
                    },
                    message: format!(
                        "built-in kind `{}` of `{}/{}` has no schema in kubegen's OpenAPI data",
                        kind.name, package.group, package.version
                    ),
                    hint: "kubegen ships the schemas of the kinds kubegen-testserver serves \
                           (codegen/openapi/wellknown.json, hack/update-openapi-data.py)"
                        .to_owned(),
                });
                continue;
            };
            let (module, version, ty) = (
                crate::names::ident(&package.module),
                crate::names::ident(&package.version),
                crate::names::ident(&kind.name),
            );
            let info = KindInfo {
                scope: kind.scope,
                has_status: kind.has_status && kind.has(Verb::UpdateStatus),
                api_type: quote!(::#api::#module::#version::#ty),
            };
            roots.insert(name, Some(info));
        }
    }
    if !missing.is_empty() {
        return Err(Error::Invalid(missing));
    }
    Ok(reachable(schemas, roots))
}

/// The well-known types (`Condition`, `LabelSelector`, ...) fields of user structs name.
fn well_known_used(ctx: &EmitCtx<'_>) -> BTreeSet<&'static str> {
    fn visit(ty: &FieldType, out: &mut BTreeSet<&'static str>) {
        match ty {
            FieldType::WellKnown(wk) => {
                out.insert(wk.name());
            }
            FieldType::Option(inner) | FieldType::Vec(inner) | FieldType::Map(inner) => {
                visit(inner, out);
            }
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    let fields = ctx.model.packages.iter().flat_map(|p| &p.structs);
    for field in fields.flat_map(|s| &s.fields) {
        visit(&field.ty, &mut out);
    }
    out
}

/// The component schema of a kind, found by its `x-kubernetes-group-version-kind`.
fn kind_schema(
    schemas: &serde_json::Map<String, Value>,
    group: &str,
    version: &str,
    kind: &str,
) -> Option<String> {
    let wanted = serde_json::json!({"group": group, "version": version, "kind": kind});
    schemas
        .iter()
        .find(|(_, schema)| {
            schema["x-kubernetes-group-version-kind"]
                .as_array()
                .is_some_and(|gvks| gvks.contains(&wanted))
        })
        .map(|(name, _)| name.clone())
}

/// Converts the roots and every object schema they reach, sorted by (module, version, name).
fn reachable(
    schemas: &serde_json::Map<String, Value>,
    mut roots: BTreeMap<String, Option<KindInfo>>,
) -> Vec<ConfigType> {
    let mut queue: VecDeque<String> = roots.keys().cloned().collect();
    let mut seen: BTreeSet<String> = queue.iter().cloned().collect();
    let mut out = Vec::new();
    while let Some(name) = queue.pop_front() {
        let (Some(schema), Some((module, version, ty))) = (schemas.get(&name), locate(&name))
        else {
            continue;
        };
        let mut fields = Vec::new();
        let properties = schema["properties"].as_object().into_iter().flatten();
        for (json, property) in properties {
            if name == OBJECT_META && json == "managedFields" {
                continue;
            }
            let mut refs = Vec::new();
            let shape = shape(schemas, property, &mut refs);
            for reference in refs {
                if seen.insert(reference.clone()) {
                    queue.push_back(reference);
                }
            }
            fields.push(ConfigField {
                rust: rust_name(json),
                json: json.clone(),
                shape,
                // k8s-openapi reads no built-in field as nullable (`Option<T>` throughout).
                nullable: false,
            });
        }
        out.push(ConfigType {
            at: (module, version),
            name: ty,
            source: name.clone(),
            fields,
            kind: roots.remove(&name).flatten(),
        });
    }
    out.sort_by(|a, b| (&a.at, &a.name).cmp(&(&b.at, &b.name)));
    out
}

/// `(module, version, type)` of a schema that becomes a configuration, `None` for the others.
fn locate(name: &str) -> Option<(String, String, String)> {
    let (module, rest) = if let Some(rest) = name.strip_prefix(META) {
        ("meta", format!("v1.{rest}"))
    } else {
        let rest = name.strip_prefix("io.k8s.api.")?;
        let (module, rest) = rest.split_once('.')?;
        (module, rest.to_owned())
    };
    let (version, ty) = rest.split_once('.')?;
    Some((module.to_owned(), version.to_owned(), ty.to_owned()))
}

/// The shape of a property; configuration schemas it references are pushed to `refs`.
fn shape(schemas: &serde_json::Map<String, Value>, node: &Value, refs: &mut Vec<String>) -> Shape {
    match node["type"].as_str() {
        Some("array") => Shape::List(element(schemas, &node["items"], refs)),
        Some("object") if node["additionalProperties"].is_object() => {
            Shape::Map(element(schemas, &node["additionalProperties"], refs))
        }
        _ => Shape::One(element(schemas, node, refs)),
    }
}

/// The Rust type of a value of schema `node`.
fn element(
    schemas: &serde_json::Map<String, Value>,
    node: &Value,
    refs: &mut Vec<String>,
) -> TokenStream {
    if let Some(name) = reference(node) {
        return referenced(schemas, name, refs);
    }
    match (node["type"].as_str(), node["format"].as_str()) {
        (Some("string"), Some("byte")) => quote!(::k8s_openapi::ByteString),
        (Some("string"), _) => quote!(::std::string::String),
        (Some("integer"), Some("int32")) => quote!(i32),
        (Some("integer"), _) => quote!(i64),
        (Some("number"), _) => quote!(f64),
        (Some("boolean"), _) => quote!(bool),
        (Some("array"), _) => {
            let item = element(schemas, &node["items"], refs);
            quote!(::std::vec::Vec<#item>)
        }
        (Some("object"), _) if node["additionalProperties"].is_object() => {
            let value = element(schemas, &node["additionalProperties"], refs);
            quote!(::std::collections::BTreeMap<::std::string::String, #value>)
        }
        _ => quote!(::serde_json::Value),
    }
}

/// The Rust type of a well-known type in a user's configuration: its configuration when it is an
/// object (a root of [`types`], so it is emitted), k8s-openapi's type for `MicroTime`, kube-core's
/// for `Duration`.
pub(super) fn well_known(wk: WellKnown) -> TokenStream {
    match wk.definition() {
        Some(name) => referenced(component_schemas(), &name, &mut Vec::new()),
        None => {
            let segments = wk.rust_path();
            let segments = segments.split("::").map(crate::names::ident);
            quote!(#(::#segments)*)
        }
    }
}

/// `$ref`, bare or as the one element of an `allOf`.
fn reference(node: &Value) -> Option<&str> {
    let target = node["allOf"][0].get("$ref").or_else(|| node.get("$ref"))?;
    target.as_str()?.strip_prefix("#/components/schemas/")
}

fn referenced(
    schemas: &serde_json::Map<String, Value>,
    name: &str,
    refs: &mut Vec<String>,
) -> TokenStream {
    const SCALARS: [(&str, &str); 4] = [
        (
            "io.k8s.apimachinery.pkg.api.resource.Quantity",
            "api::resource::Quantity",
        ),
        (
            "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
            "util::intstr::IntOrString",
        ),
        (
            "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
            "apis::meta::v1::Time",
        ),
        (
            "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
            "apis::meta::v1::MicroTime",
        ),
    ];
    if let Some((_, path)) = SCALARS.iter().find(|(n, _)| *n == name) {
        let segments = path.split("::").map(crate::names::ident);
        return quote!(::k8s_openapi::apimachinery::pkg #(::#segments)*);
    }
    let is_object = schemas
        .get(name)
        .is_some_and(|schema| schema["properties"].is_object());
    match locate(name) {
        Some((module, version, ty)) if is_object => {
            refs.push(name.to_owned());
            config_path(&module, &version, &ty)
        }
        _ => quote!(::serde_json::Value),
    }
}

/// The Rust field name of a JSON name: snake case, acronyms kept together (`podIPs` -> `pod_ips`,
/// `hostIPC` -> `host_ipc`), anything not alphanumeric as `_`.
pub(super) fn rust_name(json: &str) -> String {
    let chars: Vec<char> = json.chars().collect();
    let mut out = String::with_capacity(json.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            out.push('_');
            continue;
        }
        if c.is_ascii_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next = chars.get(i + 1).copied();
            // An acronym's plural `s` (`IPs`) stays with it.
            let plural =
                next == Some('s') && chars.get(i + 2).is_none_or(|c| c.is_ascii_uppercase());
            let starts_word = next.is_some_and(|n| n.is_ascii_lowercase()) && !plural;
            if prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && starts_word)
            {
                out.push('_');
            }
        }
        out.push(c.to_ascii_lowercase());
    }
    let out = out.trim_start_matches('_').to_owned();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        format!("field_{out}")
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_names_follow_k8s_openapi() {
        let names: Vec<String> = [
            "podIPs",
            "hostIPC",
            "serviceName",
            "type",
            "$ref",
            "x-y",
            "IP",
        ]
        .into_iter()
        .map(rust_name)
        .collect();
        assert_eq!(
            names,
            [
                "pod_ips",
                "host_ipc",
                "service_name",
                "type",
                "ref",
                "x_y",
                "ip"
            ]
        );
    }

    #[test]
    fn schemas_locate_in_their_group_module() {
        assert_eq!(
            locate("io.k8s.api.apps.v1.StatefulSetSpec"),
            Some(("apps".into(), "v1".into(), "StatefulSetSpec".into()))
        );
        assert_eq!(
            locate(OBJECT_META),
            Some(("meta".into(), "v1".into(), "ObjectMeta".into()))
        );
        assert_eq!(locate("io.k8s.apimachinery.pkg.runtime.RawExtension"), None);
    }
}
