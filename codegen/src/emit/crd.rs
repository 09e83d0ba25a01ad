//! `deploy/crd.yaml`: one apiextensions.k8s.io/v1 CustomResourceDefinition per user kind, and the
//! CRD model both manifest layouts share (controller-gen's `crd` generator).
//!
//! Kinds with the same group and plural in several versions share one CRD with one entry per
//! version; the storage version is the one marked `+kubegen:storageversion` (the checker makes
//! sure exactly one is), and the CRD converts between them through the webhook Service configured
//! in `kubegen.toml` (`conversion_webhook`), where kubegen-runtime serves the generated
//! conversions (`conversion.rs` in the api crate). A kind with one version has no `conversion`.
//!
//! Two layouts wrap the same [`Crd`]: the v1 one here, and the v1beta1 one in `crd_v1beta1.rs`
//! for API servers older than 1.16. Everything that is not a layout decision (names, scope,
//! storage version, the schema) is decided once, in [`crds`].

use std::collections::BTreeMap;

use serde_yaml::Value;

use super::ctx::EmitCtx;
use super::schema::{insert, kind_schema, map};
use crate::Error;
use crate::model::{Kind, Package, PrintColumn, ScaleSubresource, Scope};

/// One CustomResourceDefinition, before it is laid out as v1 or v1beta1.
pub(super) struct Crd<'a> {
    /// `metadata.name`: `<plural>.<group>`.
    pub(super) name: String,
    /// `spec.group`.
    pub(super) group: &'a str,
    /// The `api-approved.kubernetes.io` annotation (`+kubegen:apiApproved=`).
    pub(super) api_approved: Option<&'a str>,
    /// `spec.names`: kind, listKind, plural, singular, shortNames, categories.
    pub(super) names: Value,
    /// `spec.scope`: `Namespaced` or `Cluster`.
    pub(super) scope: &'static str,
    /// One entry per version, in package order. Invariant: not empty, exactly one is `storage`.
    pub(super) versions: Vec<CrdVersion<'a>>,
    /// With several versions: the conversion webhook's `clientConfig.service`.
    pub(super) conversion_service: Option<Value>,
}

/// One served version of a [`Crd`].
pub(super) struct CrdVersion<'a> {
    /// Version name, e.g. `v1beta1`.
    pub(super) name: &'a str,
    /// Whether objects are persisted in this version.
    pub(super) storage: bool,
    /// The `openAPIV3Schema` as v1 takes it (with `default`s); `None` only if the kind's struct is
    /// missing, which the checker rules out.
    pub(super) schema: Option<Value>,
    /// Whether the kind has the `status` subresource.
    pub(super) status: bool,
    /// The `scale` subresource, if any.
    pub(super) scale: Option<&'a ScaleSubresource>,
    /// Additional printer columns, in marker order.
    pub(super) columns: &'a [PrintColumn],
}

/// Whose CRDs a manifest holds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Owner {
    /// The user's own kinds: `crd` and `crd_v1beta1`, installed with the operator.
    User,
    /// The kinds `kubegen import` wrote (`+kubegen:imported`): `[import] crd`. Another project
    /// installs them and decides how they convert, so they name no conversion webhook.
    Imported,
}

/// Every CRD of `owner`'s packages, sorted by (group, plural).
pub(super) fn crds<'a>(ctx: &EmitCtx<'a>, owner: Owner) -> Vec<Crd<'a>> {
    let (namespace, name, path, port) = ctx.config.conversion_service();
    let service = map([
        ("namespace", Value::from(namespace)),
        ("name", Value::from(name)),
        ("path", Value::from(path)),
        ("port", Value::from(port)),
    ]);
    let mut grouped: BTreeMap<(&str, &str), Vec<(&Package, &Kind)>> = BTreeMap::new();
    let imported = owner == Owner::Imported;
    for package in ctx.model.packages.iter().filter(|p| p.imported == imported) {
        for kind in &package.kinds {
            grouped
                .entry((kind.group.as_str(), kind.plural.as_str()))
                .or_default()
                .push((package, kind));
        }
    }
    grouped
        .into_values()
        .filter_map(|versions| crd(&versions, (!imported).then_some(&service)))
        .collect()
}

fn crd<'a>(versions: &[(&'a Package, &'a Kind)], service: Option<&Value>) -> Option<Crd<'a>> {
    let (_, first) = versions.first()?;
    // One version is the storage version; of several, the checker made sure one is marked.
    let storage = versions
        .iter()
        .find(|(_, kind)| kind.storage_version)
        .unwrap_or(versions.first()?)
        .1
        .version
        .as_str();
    let strings =
        |items: &[String]| Value::Sequence(items.iter().map(|s| Value::from(s.as_str())).collect());
    let mut names = map([
        ("kind", Value::from(first.name.as_str())),
        ("listKind", Value::from(format!("{}List", first.name))),
        ("plural", Value::from(first.plural.as_str())),
        ("singular", Value::from(first.singular.as_str())),
    ]);
    if !first.short_names.is_empty() {
        insert(&mut names, "shortNames", strings(&first.short_names));
    }
    if !first.categories.is_empty() {
        insert(&mut names, "categories", strings(&first.categories));
    }
    let conversion_service = service.filter(|_| versions.len() > 1).cloned();
    let api_approved = versions
        .iter()
        .find_map(|(package, _)| package.api_approved.as_deref());
    let versions = versions.iter().map(|(package, kind)| CrdVersion {
        name: &kind.version,
        storage: kind.version == storage,
        schema: package
            .structs
            .iter()
            .find(|def| def.name == kind.name)
            .map(|def| kind_schema(package, def)),
        status: kind.has_status,
        scale: kind.scale.as_ref(),
        columns: &kind.print_columns,
    });
    Some(Crd {
        name: format!("{}.{}", first.plural, first.group),
        group: &first.group,
        api_approved,
        names,
        scope: match first.scope {
            Scope::Namespaced => "Namespaced",
            Scope::Cluster => "Cluster",
        },
        versions: versions.collect(),
        conversion_service,
    })
}

/// The versions a conversion webhook is sent `ConversionReview`s in, preferred first:
/// kubegen-runtime answers both.
pub(super) fn review_versions() -> Value {
    Value::Sequence(vec![Value::from("v1"), Value::from("v1beta1")])
}

/// The first line of both manifests.
pub(super) fn header(ctx: &EmitCtx<'_>) -> String {
    format!(
        "# {}\n",
        crate::generated::header(&ctx.config.input.display().to_string())
    )
}

/// Appends `document` to a multi-document YAML file.
pub(super) fn push_document(out: &mut String, document: &Value) -> Result<(), Error> {
    let text = serde_yaml::to_string(document)
        .map_err(|error| Error::Internal(format!("CRD does not serialize: {error}")))?;
    out.push_str("---\n");
    out.push_str(&text);
    Ok(())
}

/// `metadata` and the `spec` keys both layouts share, before the version-dependent ones.
pub(super) fn document(api_version: &str, crd: &Crd<'_>) -> Value {
    let mut metadata = map([("name", Value::from(crd.name.as_str()))]);
    if let Some(approved) = crd.api_approved {
        let annotation = map([("api-approved.kubernetes.io", Value::from(approved))]);
        insert(&mut metadata, "annotations", annotation);
    }
    map([
        ("apiVersion", Value::from(api_version)),
        ("kind", Value::from("CustomResourceDefinition")),
        ("metadata", metadata),
        (
            "spec",
            map([
                ("group", Value::from(crd.group)),
                ("names", crd.names.clone()),
                ("scope", Value::from(crd.scope)),
            ]),
        ),
    ])
}

/// A version's `subresources`: `status` and `scale`, or `None` without either.
pub(super) fn subresources(version: &CrdVersion<'_>) -> Option<Value> {
    let mut subresources = map([]);
    if version.status {
        insert(&mut subresources, "status", map([]));
    }
    if let Some(scale) = version.scale {
        let mut paths = map([
            (
                "specReplicasPath",
                Value::from(scale.spec_replicas_path.as_str()),
            ),
            (
                "statusReplicasPath",
                Value::from(scale.status_replicas_path.as_str()),
            ),
        ]);
        if let Some(selector) = &scale.label_selector_path {
            insert(
                &mut paths,
                "labelSelectorPath",
                Value::from(selector.as_str()),
            );
        }
        insert(&mut subresources, "scale", paths);
    }
    (version.status || version.scale.is_some()).then_some(subresources)
}

/// `additionalPrinterColumns`; v1 spells the path key `jsonPath`, v1beta1 `JSONPath`.
pub(super) fn printer_columns(columns: &[PrintColumn], json_path_key: &str) -> Value {
    let columns = columns.iter().map(|column| {
        let mut value = map([
            ("name", Value::from(column.name.as_str())),
            ("type", Value::from(column.type_.as_str())),
            (json_path_key, Value::from(column.json_path.as_str())),
        ]);
        if let Some(description) = &column.description {
            insert(&mut value, "description", Value::from(description.as_str()));
        }
        if let Some(format) = &column.format {
            insert(&mut value, "format", Value::from(format.as_str()));
        }
        if let Some(priority) = column.priority {
            insert(&mut value, "priority", Value::from(priority));
        }
        value
    });
    Value::Sequence(columns.collect())
}

/// The whole v1 multi-document YAML file of `owner`'s CRDs.
pub(super) fn emit(ctx: &EmitCtx<'_>, owner: Owner) -> Result<String, Error> {
    let mut out = header(ctx);
    for crd in crds(ctx, owner) {
        let mut document = document("apiextensions.k8s.io/v1", &crd);
        if let Some(spec) = document.get_mut("spec") {
            let versions = crd.versions.iter().map(v1_version);
            insert(spec, "versions", Value::Sequence(versions.collect()));
            if let Some(service) = &crd.conversion_service {
                let webhook = map([
                    ("conversionReviewVersions", review_versions()),
                    ("clientConfig", map([("service", service.clone())])),
                ]);
                let conversion = map([("strategy", Value::from("Webhook")), ("webhook", webhook)]);
                insert(spec, "conversion", conversion);
            }
        }
        push_document(&mut out, &document)?;
    }
    Ok(out)
}

/// The keys every `versions[]` entry has in both layouts: name, served, storage.
pub(super) fn version_entry(version: &CrdVersion<'_>) -> Value {
    map([
        ("name", Value::from(version.name)),
        ("served", Value::Bool(true)),
        ("storage", Value::Bool(version.storage)),
    ])
}

/// A v1 `versions[]` entry: v1 keeps schema, subresources and columns per version.
fn v1_version(version: &CrdVersion<'_>) -> Value {
    let mut entry = version_entry(version);
    if let Some(schema) = &version.schema {
        insert(
            &mut entry,
            "schema",
            map([("openAPIV3Schema", schema.clone())]),
        );
    }
    if let Some(subresources) = subresources(version) {
        insert(&mut entry, "subresources", subresources);
    }
    if !version.columns.is_empty() {
        insert(
            &mut entry,
            "additionalPrinterColumns",
            printer_columns(version.columns, "jsonPath"),
        );
    }
    entry
}
