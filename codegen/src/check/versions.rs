//! A kind served in several versions: one CRD, one storage version, one name and scope.
//!
//! controller-gen requires `+kubebuilder:storageversion` on exactly one version of a
//! multi-version kind (it fails with "multiple storage versions" or "no storage version"); kubegen
//! asks the same, in either spelling, and names every file involved so the fix is obvious. The
//! versions must also agree on what one CRD cannot vary per version: the kind's name and scope.

use std::collections::BTreeMap;

use crate::diag::Diagnostics;
use crate::model::{Kind, Model};

/// Checks every kind that appears in more than one version of its group.
pub(super) fn check(model: &Model, diags: &mut Diagnostics) {
    // Two kinds sharing a plural in one version are `check_unique_plurals`' business.
    let mut by_crd: BTreeMap<(&str, &str), BTreeMap<&str, &Kind>> = BTreeMap::new();
    for kind in model.packages.iter().flat_map(|p| &p.kinds) {
        by_crd
            .entry((kind.group.as_str(), kind.plural.as_str()))
            .or_default()
            .entry(kind.version.as_str())
            .or_insert(kind);
    }
    for by_version in by_crd.values().filter(|versions| versions.len() > 1) {
        let versions: Vec<&Kind> = by_version.values().copied().collect();
        let versions = versions.as_slice();
        check_storage(versions, diags);
        check_same_shape(versions, diags);
    }
}

/// Where each version is declared, for messages: `apis/a/v1/x.rs:3, apis/a/v2/x.rs:3`.
fn places(kinds: &[&Kind]) -> String {
    kinds
        .iter()
        .map(|kind| format!("{}:{}", kind.location.file.display(), kind.location.line))
        .collect::<Vec<_>>()
        .join(", ")
}

fn check_storage(versions: &[&Kind], diags: &mut Diagnostics) {
    let Some(first) = versions.first() else {
        return;
    };
    let marked: Vec<&Kind> = versions
        .iter()
        .copied()
        .filter(|kind| kind.storage_version)
        .collect();
    match marked.as_slice() {
        [_] => {}
        [] => diags.error(
            &first.location,
            format!(
                "`{}` is served in {} versions but none is marked as the storage version ({})",
                first.name,
                versions.len(),
                places(versions)
            ),
            "add `/// +kubegen:storageversion` (or `+kubebuilder:storageversion`) to the kind in \
             exactly one of these files",
        ),
        several => {
            for kind in several {
                diags.error(
                    &kind.location,
                    format!(
                        "`{}` has several storage versions ({})",
                        kind.name,
                        places(several)
                    ),
                    "keep `+kubegen:storageversion` on exactly one version",
                );
            }
        }
    }
}

fn check_same_shape(versions: &[&Kind], diags: &mut Diagnostics) {
    let Some(first) = versions.first() else {
        return;
    };
    for kind in &versions[1..] {
        if kind.name != first.name || kind.scope != first.scope {
            diags.error(
                &kind.location,
                format!(
                    "`{}` ({}) and `{}` ({}) share the plural `{}` but differ in name or scope",
                    kind.name,
                    kind.api_version(),
                    first.name,
                    first.api_version(),
                    kind.plural
                ),
                "the versions of one CRD must have the same kind name and scope",
            );
        }
    }
}

#[cfg(test)]
#[path = "versions_tests.rs"]
mod tests;
