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

/// Runs one async test once per [`StoreMode`](crate::StoreMode):
/// `per_store_mode! { #[tokio::test] async fn name(mode) { .. } }` defines the module `name`
/// with the tests `decoded` and `bytes`, each running the body with its mode in `mode`. The
/// byte-backed run keeps no decoded objects, so every read and every update decodes.
macro_rules! per_store_mode {
    ($(#[$attr:meta])+ async fn $name:ident($mode:ident) $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            async fn run($mode: $crate::StoreMode) $body

            $(#[$attr])+
            async fn decoded() {
                run($crate::StoreMode::Decoded).await;
            }

            $(#[$attr])+
            async fn bytes() {
                run($crate::StoreMode::Bytes { decoded_cache: 0 }).await;
            }
        }
    };
}
pub(crate) use per_store_mode;
