//! The built-in kinds list: which k8s-openapi types the clientset, listers and informers cover.
//!
//! client-go ships one huge `kubernetes.Clientset` for every built-in type; kubegen generates
//! facades only for the kinds a project lists here (`apis/builtins.toml`), so the generated crates
//! stay small. The types themselves are re-exported from k8s-openapi, never regenerated.
//!
//! ```toml
//! [[group]]
//! module = "apps"          # kubegen_api::apps::v1, k8s_openapi::api::apps::v1
//! group = "apps"           # API group ("" for the legacy core group)
//! version = "v1"
//! namespaced = ["Deployment"]
//! cluster = []             # cluster-scoped kinds
//! no_status = []           # kinds without a status subresource
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;

use crate::diag::Diagnostics;
use crate::model::{BuiltinPackage, Kind, Location, Scope, Verb};
use crate::names;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    group: Vec<Group>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Group {
    module: String,
    group: String,
    version: String,
    #[serde(default)]
    namespaced: Vec<String>,
    #[serde(default)]
    cluster: Vec<String>,
    #[serde(default)]
    no_status: Vec<String>,
    #[serde(default)]
    plurals: BTreeMap<String, String>,
}

/// Reads the list at `path` (shown as `display`); problems go to `diags`.
pub(crate) fn read(path: &Path, display: &Path, diags: &mut Diagnostics) -> Vec<BuiltinPackage> {
    let location = Location {
        file: display.to_path_buf(),
        line: 1,
    };
    let parsed: File = match std::fs::read_to_string(path)
        .map_err(|error| error.to_string())
        .and_then(|text| toml::from_str(&text).map_err(|error| error.to_string()))
    {
        Ok(file) => file,
        Err(error) => {
            let hint = "see the format in codegen/src/builtins.rs";
            diags.error(
                &location,
                format!("cannot read built-in kinds list: {error}"),
                hint,
            );
            return Vec::new();
        }
    };
    let mut packages: Vec<BuiltinPackage> = parsed
        .group
        .into_iter()
        .map(|group| package(group, &location))
        .collect();
    packages.sort_by(|a, b| (&a.module, &a.version).cmp(&(&b.module, &b.version)));
    packages
}

fn package(group: Group, location: &Location) -> BuiltinPackage {
    let no_status: BTreeSet<&String> = group.no_status.iter().collect();
    let scoped = group
        .namespaced
        .iter()
        .map(|name| (name, Scope::Namespaced))
        .chain(group.cluster.iter().map(|name| (name, Scope::Cluster)));
    let mut kinds: Vec<Kind> = scoped
        .map(|(name, scope)| {
            let has_status = !no_status.contains(name);
            let mut verbs: BTreeSet<Verb> = Verb::ALL.into_iter().collect();
            if !has_status {
                verbs.remove(&Verb::UpdateStatus);
            }
            Kind {
                name: name.clone(),
                module: group.module.clone(),
                group: group.group.clone(),
                version: group.version.clone(),
                scope,
                verbs,
                has_status,
                plural: group
                    .plurals
                    .get(name)
                    .cloned()
                    .unwrap_or_else(|| names::default_plural(name)),
                singular: name.to_ascii_lowercase(),
                short_names: Vec::new(),
                categories: Vec::new(),
                print_columns: Vec::new(),
                scale: None,
                methods: Vec::new(),
                location: location.clone(),
                builtin: true,
                storage_version: false,
            }
        })
        .collect();
    kinds.sort_by(|a, b| a.name.cmp(&b.name));
    BuiltinPackage {
        module: group.module,
        group: group.group,
        version: group.version,
        kinds,
    }
}
