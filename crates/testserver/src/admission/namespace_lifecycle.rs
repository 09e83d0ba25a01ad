//! NamespaceLifecycle (`plugin/pkg/admission/namespace/lifecycle/admission.go`), a mutating
//! plugin: the system namespaces (`default`, `kube-system`, `kube-public`) cannot be deleted;
//! content of a namespace needs the namespace to exist; a namespace being terminated takes no new
//! content. Deletes of content and every write to cluster-scoped kinds pass.

use serde_json::{Map, Value};

use crate::admission::plugin::{Attributes, Operation, Plugin};
use crate::kinds::namespace::{namespaces, ns_key};
use crate::status::{ApiError, Qualified};

/// The namespaces a real server refuses to delete (its `immortalNamespaces`).
const IMMORTAL: [&str; 3] = ["default", "kube-system", "kube-public"];

/// The NamespaceLifecycle plugin.
pub(crate) struct NamespaceLifecycle;

impl Plugin for NamespaceLifecycle {
    fn admit(
        &self,
        attributes: &Attributes<'_>,
        _object: Option<&mut Map<String, Value>>,
    ) -> Result<(), ApiError> {
        let scope = attributes.scope;
        let is_namespace = scope.def.group.is_empty() && scope.def.plural == "namespaces";
        if is_namespace {
            if attributes.operation == Operation::Delete && IMMORTAL.contains(&attributes.name) {
                let why = "this namespace may not be deleted";
                return Err(ApiError::forbidden(scope.qualified(), attributes.name, why));
            }
            return Ok(());
        }
        let Some(ns) = scope.namespace.as_deref() else {
            return Ok(());
        };
        if attributes.operation == Operation::Delete {
            return Ok(());
        }
        let Some(namespace) = attributes.state.store.get(&namespaces(), &ns_key(ns)) else {
            let what = Qualified {
                group: "",
                resource: "namespaces",
            };
            return Err(ApiError::not_found(what, ns));
        };
        let terminating = namespace
            .value
            .pointer("/metadata/deletionTimestamp")
            .is_some();
        if attributes.operation == Operation::Create && terminating {
            let why = format!(
                "unable to create new content in namespace {ns} because it is being terminated"
            );
            return Err(ApiError::forbidden(
                scope.qualified(),
                attributes.name,
                &why,
            ));
        }
        Ok(())
    }
}
