//! Where a kind keeps what its `scale` subresource shows: part of a resource's definition (the
//! handler is `crate::handlers::scale`).

use serde_json::Value;

/// Where a kind keeps what its Scale shows (apiextensions `CustomResourceSubresourceScale`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScaleSubresource {
    /// Dotted path of the desired replicas, e.g. `.spec.replicas`.
    pub spec_replicas_path: String,
    /// Dotted path of the observed replicas, e.g. `.status.replicas`.
    pub status_replicas_path: String,
    /// Dotted path of the selector string (custom resources), e.g. `.status.selector`; empty
    /// for none. Built-in kinds format their `spec.selector` instead.
    pub label_selector_path: String,
}

impl ScaleSubresource {
    /// The subresource of Deployments, ReplicaSets and StatefulSets.
    pub(crate) fn builtin() -> ScaleSubresource {
        ScaleSubresource {
            spec_replicas_path: ".spec.replicas".into(),
            status_replicas_path: ".status.replicas".into(),
            label_selector_path: String::new(),
        }
    }

    /// Reads a CRD version's `subresources.scale`.
    pub(crate) fn from_crd(scale: &Value) -> ScaleSubresource {
        let text = |field: &str| scale.get(field).and_then(Value::as_str).unwrap_or("");
        ScaleSubresource {
            spec_replicas_path: text("specReplicasPath").into(),
            status_replicas_path: text("statusReplicasPath").into(),
            label_selector_path: text("labelSelectorPath").into(),
        }
    }
}
