//! Step 1 of `kubegen import`: CustomResourceDefinition manifests in, [`Crd`]s out.
//!
//! Reads files, directories (every `*.yaml`/`*.yml`/`*.json` below, sorted) or standard input,
//! splits multi-document YAML, skips documents that are not CRDs (a kustomization, a policy
//! shipped beside them), and reads both layouts: apiextensions.k8s.io/v1 (schema, subresources
//! and columns per version) and v1beta1 (the same at the top of `spec`, a version may override).
//! The schema stays JSON here; `shape.rs` turns it into types.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::problems::Problems;

/// One CRD as the importer needs it.
#[derive(Clone, Debug)]
pub(crate) struct Crd {
    /// Where it came from: `file` (`-` for stdin) and the document's 1-based index.
    pub(crate) source: String,
    /// `metadata.name`, e.g. `gateways.gateway.networking.k8s.io`.
    pub(crate) name: String,
    /// `spec.group`.
    pub(crate) group: String,
    /// The `api-approved.kubernetes.io` annotation (CRDs of `*.k8s.io` groups have one).
    pub(crate) api_approved: Option<String>,
    /// `spec.names.kind`.
    pub(crate) kind: String,
    /// `spec.names.plural`.
    pub(crate) plural: String,
    /// `spec.names.singular` (may be empty: the server then uses the lower-case kind).
    pub(crate) singular: String,
    /// `spec.names.listKind` (empty when absent).
    pub(crate) list_kind: String,
    /// `spec.names.shortNames`.
    pub(crate) short_names: Vec<String>,
    /// `spec.names.categories`.
    pub(crate) categories: Vec<String>,
    /// `spec.scope` is `Namespaced`.
    pub(crate) namespaced: bool,
    /// The served versions, in the order the CRD lists them.
    pub(crate) versions: Vec<CrdVersion>,
}

/// One served version of a [`Crd`].
#[derive(Clone, Debug)]
pub(crate) struct CrdVersion {
    /// `v1`, `v1beta1`, ...
    pub(crate) name: String,
    /// `storage: true`.
    pub(crate) storage: bool,
    /// `schema.openAPIV3Schema` (`{}` when the CRD has none).
    pub(crate) schema: Value,
    /// `subresources.status` is set.
    pub(crate) status: bool,
    /// `subresources.scale`, as written.
    pub(crate) scale: Option<Scale>,
    /// `additionalPrinterColumns`.
    pub(crate) columns: Vec<Column>,
}

/// `subresources.scale`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Scale {
    /// `specReplicasPath`.
    pub(crate) spec_replicas_path: String,
    /// `statusReplicasPath`.
    pub(crate) status_replicas_path: String,
    /// `labelSelectorPath`.
    pub(crate) label_selector_path: Option<String>,
}

/// One `additionalPrinterColumns` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Column {
    /// `name`.
    pub(crate) name: String,
    /// `type`.
    pub(crate) type_: String,
    /// `jsonPath` (`JSONPath` in v1beta1).
    pub(crate) json_path: String,
    /// `description`.
    pub(crate) description: Option<String>,
    /// `format`.
    pub(crate) format: Option<String>,
    /// `priority`.
    pub(crate) priority: Option<i64>,
}

/// Every CRD in `inputs` (`-` is standard input), in input order.
pub(crate) fn read_all(inputs: &[PathBuf], problems: &mut Problems) -> Vec<Crd> {
    let mut crds = Vec::new();
    for input in inputs {
        if input.as_os_str() == "-" {
            let mut text = String::new();
            match std::io::Read::read_to_string(&mut std::io::stdin(), &mut text) {
                Ok(_) => crds.extend(documents("-", &text, problems)),
                Err(error) => problems.push("-", format!("cannot read standard input: {error}")),
            }
            continue;
        }
        for file in files(input, problems) {
            let label = file.display().to_string();
            match std::fs::read_to_string(&file) {
                Ok(text) => crds.extend(documents(&label, &text, problems)),
                Err(error) => problems.push(&label, format!("cannot read: {error}")),
            }
        }
    }
    crds
}

/// `path` itself, or the manifests under it (sorted, so the import is deterministic).
fn files(path: &Path, problems: &mut Problems) -> Vec<PathBuf> {
    if !path.is_dir() {
        return vec![path.to_path_buf()];
    }
    let mut found = Vec::new();
    let mut pending = vec![path.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(error) => {
                problems.push(&dir.display().to_string(), format!("cannot list: {error}"));
                continue;
            }
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path
                .extension()
                .is_some_and(|ext| ext == "yaml" || ext == "yml" || ext == "json")
            {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The CRDs among the YAML documents of `text`; other kinds are skipped silently.
pub(crate) fn documents(label: &str, text: &str, problems: &mut Problems) -> Vec<Crd> {
    let mut crds = Vec::new();
    for (index, document) in serde_yaml::Deserializer::from_str(text).enumerate() {
        let source = format!("{label}#{}", index + 1);
        let value = match <Value as serde::Deserialize>::deserialize(document) {
            Ok(value) => value,
            Err(error) => {
                problems.push(&source, format!("not YAML: {error}"));
                continue;
            }
        };
        if value.get("kind").and_then(Value::as_str) != Some("CustomResourceDefinition") {
            continue;
        }
        if let Some(crd) = crd(&source, &value, problems) {
            crds.push(crd);
        }
    }
    crds
}

fn text(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn texts(value: &Value, key: &str) -> Vec<String> {
    value
        .get(key)
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// One CRD document, either layout; `None` (with problems) when a required key is missing.
fn crd(source: &str, value: &Value, problems: &mut Problems) -> Option<Crd> {
    let name = value
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("<unnamed>")
        .to_owned();
    let at = format!("{source} (CRD {name})");
    let spec = value.get("spec").unwrap_or(&Value::Null);
    let names = spec.get("names").unwrap_or(&Value::Null);
    let crd = Crd {
        source: source.to_owned(),
        name: name.clone(),
        group: text(spec, "group"),
        api_approved: value
            .pointer("/metadata/annotations/api-approved.kubernetes.io")
            .and_then(Value::as_str)
            .map(str::to_owned),
        kind: text(names, "kind"),
        plural: text(names, "plural"),
        singular: text(names, "singular"),
        list_kind: text(names, "listKind"),
        short_names: texts(names, "shortNames"),
        categories: texts(names, "categories"),
        namespaced: text(spec, "scope") != "Cluster",
        versions: versions(&at, spec, problems),
    };
    let missing: Vec<&str> = [
        ("spec.group", crd.group.is_empty()),
        ("spec.names.kind", crd.kind.is_empty()),
        ("spec.names.plural", crd.plural.is_empty()),
        ("spec.versions", crd.versions.is_empty()),
    ]
    .into_iter()
    .filter_map(|(key, missing)| missing.then_some(key))
    .collect();
    if missing.is_empty() {
        Some(crd)
    } else {
        problems.push(&at, format!("missing {}", missing.join(", ")));
        None
    }
}

/// The served versions; v1beta1's top-level schema, subresources and columns apply to every
/// version that does not set its own.
fn versions(at: &str, spec: &Value, problems: &mut Problems) -> Vec<CrdVersion> {
    let shared_schema = spec.pointer("/validation/openAPIV3Schema");
    let shared_subresources = spec.get("subresources");
    let shared_columns = spec.get("additionalPrinterColumns");
    let mut listed: Vec<Value> = spec
        .get("versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if listed.is_empty()
        && let Some(version) = spec.get("version").and_then(Value::as_str)
    {
        listed.push(serde_json::json!({"name": version, "served": true, "storage": true}));
    }
    let mut out = Vec::new();
    for entry in &listed {
        let name = text(entry, "name");
        if entry.get("served").and_then(Value::as_bool) == Some(false) {
            continue;
        }
        let schema = entry
            .pointer("/schema/openAPIV3Schema")
            .or(shared_schema)
            .cloned();
        let Some(schema) = schema else {
            problems.push(
                &format!("{at}, version {name}"),
                "no schema.openAPIV3Schema: nothing to import".to_owned(),
            );
            continue;
        };
        let subresources = entry.get("subresources").or(shared_subresources);
        let columns = entry.get("additionalPrinterColumns").or(shared_columns);
        out.push(CrdVersion {
            storage: entry.get("storage").and_then(Value::as_bool) == Some(true),
            schema,
            status: subresources.and_then(|s| s.get("status")).is_some(),
            scale: subresources.and_then(|s| s.get("scale")).map(scale),
            columns: columns.map(self::columns).unwrap_or_default(),
            name,
        });
    }
    out
}

fn scale(value: &Value) -> Scale {
    let label = text(value, "labelSelectorPath");
    Scale {
        spec_replicas_path: text(value, "specReplicasPath"),
        status_replicas_path: text(value, "statusReplicasPath"),
        label_selector_path: (!label.is_empty()).then_some(label),
    }
}

fn columns(value: &Value) -> Vec<Column> {
    let Some(items) = value.as_array() else {
        return Vec::new();
    };
    items
        .iter()
        .map(|item| {
            let path = match text(item, "jsonPath") {
                path if path.is_empty() => text(item, "JSONPath"),
                path => path,
            };
            let optional = |key| item.get(key).and_then(Value::as_str).map(str::to_owned);
            Column {
                name: text(item, "name"),
                type_: text(item, "type"),
                json_path: path,
                description: optional("description"),
                format: optional("format"),
                priority: item.get("priority").and_then(Value::as_i64),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1BETA1: &str = "apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata: {name: crontabs.stable.example.com}
spec:
  group: stable.example.com
  scope: Cluster
  names: {kind: CronTab, plural: crontabs, shortNames: [ct]}
  subresources: {status: {}, scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}}
  additionalPrinterColumns: [{name: Spec, type: string, JSONPath: .spec.cronSpec}]
  validation: {openAPIV3Schema: {type: object}}
  versions: [{name: v1, served: true, storage: true}, {name: v0, served: false, storage: false}]
";

    #[test]
    fn v1beta1_top_level_schema_columns_and_subresources_apply_to_each_served_version() {
        let mut problems = Problems::default();
        let crds = documents("crd.yaml", V1BETA1, &mut problems);
        assert!(problems.is_empty(), "{problems:?}");
        let [crd] = crds.as_slice() else {
            panic!("{crds:?}")
        };
        assert_eq!((crd.kind.as_str(), crd.namespaced), ("CronTab", false));
        let [version] = crd.versions.as_slice() else {
            panic!("only the served version: {:?}", crd.versions)
        };
        assert!(version.status && version.storage);
        assert_eq!(version.columns[0].json_path, ".spec.cronSpec");
        assert_eq!(
            version
                .scale
                .as_ref()
                .map(|s| s.spec_replicas_path.as_str()),
            Some(".spec.replicas")
        );
    }

    #[test]
    fn other_documents_are_skipped_and_a_crd_without_group_is_a_problem_naming_it() {
        let text = "kind: Kustomization\n---\nkind: CustomResourceDefinition\nmetadata: {name: x.y}\nspec: {names: {kind: X, plural: xs}, versions: [{name: v1, served: true, schema: {openAPIV3Schema: {type: object}}}]}\n";
        let mut problems = Problems::default();
        assert!(documents("in.yaml", text, &mut problems).is_empty());
        assert_eq!(
            problems.lines(),
            ["in.yaml#2 (CRD x.y): missing spec.group"]
        );
    }
}
