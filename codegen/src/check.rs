//! Phase 2: validate the parsed packages and resolve type tags into [`Kind`]s.
//!
//! Everything that can be wrong with `apis/` beyond syntax is found here, all of it in one run:
//! bad group names, conflicting verb tags, a status verb without a status field, a kind without
//! `metadata`, dangling type references, markers on the wrong field type, duplicate plurals.
//! Emitters may then assume a consistent model. Mirrors the checks client-gen's `genclient`
//! tag extraction and controller-gen's CRD markers perform, but reports all problems at once.

use std::collections::BTreeMap;

use crate::diag::Diagnostics;
use crate::model::{Kind, Location, Model, Package};

mod kinds;
mod lists;
mod lookup;
mod structs;
mod versions;

/// Validates `model` in place: fills every package's `kinds`, reports problems to `diags`.
pub(crate) fn check(model: &mut Model, diags: &mut Diagnostics) {
    for package in &mut model.packages {
        check_package(package, diags);
        structs::check(package, diags);
        package.kinds = package
            .structs
            .iter()
            .filter_map(|def| kinds::resolve(package, def, diags))
            .collect();
    }
    check_unique_plurals(model, diags);
    check_modules(model, diags);
    versions::check(model, diags);
}

fn check_package(package: &Package, diags: &mut Diagnostics) {
    let at = &package.location;
    if !is_module_name(&package.module) {
        diags.error(
            at,
            format!(
                "group directory `{}` is not a Rust module name",
                package.module
            ),
            "use lower-case letters, digits and `_` (e.g. `cluster_provisioner`)",
        );
    }
    if !is_version(&package.version) {
        diags.error(
            at,
            format!(
                "version directory `{}` is not a Kubernetes API version",
                package.version
            ),
            "use v<N>, v<N>alpha<M> or v<N>beta<M>, e.g. `v1beta1`",
        );
    }
    if !package.group.is_empty()
        && let Some(problem) = group_problem(&package.group)
        && !(package.api_approved.is_some() && problem.contains("reserved"))
    {
        diags.error(
            at,
            format!("bad groupName `{}`: {problem}", package.group),
            GROUP_HINT,
        );
    }
}

const GROUP_HINT: &str = "a CRD group is a lower-case DNS name you own, e.g. `police.example.com`";

/// Why `group` cannot be a CRD group, if it cannot.
fn group_problem(group: &str) -> Option<&'static str> {
    let label_ok = |label: &str| {
        !label.is_empty()
            && label.len() <= 63
            && label
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    if !group.contains('.') {
        Some("it must contain a dot")
    } else if !group.split('.').all(label_ok) {
        Some("it is not a lower-case DNS subdomain")
    } else if group.ends_with("k8s.io") || group.ends_with("kubernetes.io") {
        Some("groups under k8s.io and kubernetes.io are reserved for Kubernetes itself")
    } else {
        None
    }
}

fn is_module_name(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn is_version(version: &str) -> bool {
    let Some(rest) = version.strip_prefix('v') else {
        return false;
    };
    let major_end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (major, tail) = rest.split_at(major_end);
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    digits(major)
        && (tail.is_empty()
            || tail.strip_prefix("alpha").is_some_and(digits)
            || tail.strip_prefix("beta").is_some_and(digits))
}

/// Two kinds of one group version cannot share a plural: they would share a URL.
fn check_unique_plurals(model: &Model, diags: &mut Diagnostics) {
    let mut seen: BTreeMap<(String, String, String), &Kind> = BTreeMap::new();
    let all = model.packages.iter().flat_map(|p| &p.kinds);
    for kind in all.chain(model.builtins.iter().flat_map(|p| &p.kinds)) {
        let key = (
            kind.group.clone(),
            kind.version.clone(),
            kind.plural.clone(),
        );
        if let Some(first) = seen.get(&key) {
            diags.error(
                &kind.location,
                format!(
                    "duplicate plural `{}` in {}: kinds `{}` and `{}`",
                    kind.plural,
                    kind.api_version(),
                    first.name,
                    kind.name
                ),
                "set a distinct `+kubegen:plural=` on one of them",
            );
        } else {
            seen.insert(key, kind);
        }
    }
}

/// One module name per group: `police` cannot be two groups, nor shadow a built-in module.
fn check_modules(model: &Model, diags: &mut Diagnostics) {
    let mut groups: BTreeMap<&str, (&str, &Location)> = BTreeMap::new();
    for builtin in &model.builtins {
        let location = builtin.kinds.first().map(|k| &k.location);
        if let Some(location) = location {
            groups
                .entry(&builtin.module)
                .or_insert((&builtin.group, location));
        }
    }
    for package in &model.packages {
        match groups.get(package.module.as_str()) {
            Some((group, _)) if *group != package.group => diags.error(
                &package.location,
                format!(
                    "module `{}` is already used by group `{group}`",
                    package.module
                ),
                "rename the directory: one module name per API group",
            ),
            _ => {
                groups.insert(&package.module, (&package.group, &package.location));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_names_are_validated() {
        assert_eq!(group_problem("police.example.com"), None);
        assert_eq!(group_problem("cluster-provisioner.example.com"), None);
        assert!(group_problem("police").is_some());
        assert!(group_problem("Police.example.com").is_some());
        assert!(group_problem("foo.k8s.io").is_some());
    }

    #[test]
    fn versions_are_validated() {
        assert!(is_version("v1") && is_version("v1beta1") && is_version("v2alpha3"));
        assert!(!is_version("1") && !is_version("v1gamma1") && !is_version("vbeta1"));
    }
}
