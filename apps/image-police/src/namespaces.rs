//! Namespaces the controller refuses to act in.
//!
//! image-police deletes Deployments. Run against its own namespace it could delete itself (the
//! seed's warning: "the police can arrest itself"), and in `kube-system` it could delete the
//! cluster's DNS or CNI. So by default a WhiteList in either namespace is reported in its status
//! and otherwise ignored; `--allow-protected-namespaces` lifts the rule for operators who mean it.

use std::collections::BTreeSet;

/// The namespace every cluster's system components live in.
pub const KUBE_SYSTEM: &str = "kube-system";

/// The set of namespaces in which no Deployment is deleted.
///
/// # Invariants
/// - Empty when protection is disabled; otherwise holds [`KUBE_SYSTEM`] and the own namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtectedNamespaces {
    names: BTreeSet<String>,
}

impl ProtectedNamespaces {
    /// Protects `own_namespace` and `kube-system`, unless `allow` (the
    /// `--allow-protected-namespaces` flag) is set.
    pub fn new(own_namespace: &str, allow: bool) -> ProtectedNamespaces {
        let names = if allow {
            BTreeSet::new()
        } else {
            [KUBE_SYSTEM, own_namespace]
                .into_iter()
                .filter(|ns| !ns.is_empty())
                .map(str::to_owned)
                .collect()
        };
        ProtectedNamespaces { names }
    }

    /// Whether the controller must not act in `namespace`.
    pub fn contains(&self, namespace: &str) -> bool {
        self.names.contains(namespace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_namespace_and_kube_system_are_protected_by_default() {
        let protected = ProtectedNamespaces::new("image-police", false);
        assert!(protected.contains("image-police"));
        assert!(protected.contains("kube-system"));
        assert!(!protected.contains("default"));
    }

    #[test]
    fn the_flag_lifts_all_protection() {
        let open = ProtectedNamespaces::new("image-police", true);
        assert!(!open.contains("image-police") && !open.contains("kube-system"));
    }
}
