//! Object builders shared by the unit tests.

use k8s_openapi::{api::core::v1::ConfigMap, apimachinery::pkg::apis::meta::v1::ObjectMeta};

/// A ConfigMap `namespace/name` at resourceVersion `rv` (empty namespace: cluster-scoped key).
pub(crate) fn cm(namespace: &str, name: &str, rv: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            namespace: (!namespace.is_empty()).then(|| namespace.to_owned()),
            name: Some(name.to_owned()),
            resource_version: Some(rv.to_owned()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

/// `obj` with the label `key=value` added.
pub(crate) fn labeled(mut obj: ConfigMap, key: &str, value: &str) -> ConfigMap {
    obj.metadata
        .labels
        .get_or_insert_default()
        .insert(key.to_owned(), value.to_owned());
    obj
}

/// The resourceVersion of an object, for compact assertions.
pub(crate) fn rv(obj: &ConfigMap) -> &str {
    obj.metadata.resource_version.as_deref().unwrap_or_default()
}
