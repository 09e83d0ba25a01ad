//! Transforms: rewrite objects before they are cached.
//!
//! Mirrors client-go `tools/cache/controller.go` (`TransformFunc`) and the common
//! "drop managed fields" transform from `k8s.io/client-go/tools/cache` users.
//!
//! # Why?
//! An informer keeps every object of a type in memory for the life of the process. Fields a
//! controller never reads still cost memory, and `metadata.managedFields` (server-side apply
//! bookkeeping) is often the largest part of small objects.

use std::sync::Arc;

use kube_core::Resource;

/// Rewrites an object before it is stored. It gets the object by value, so dropping fields
/// costs no copy. It must keep the name, namespace and resourceVersion: the cache relies on them.
pub type Transform<K> = Arc<dyn Fn(K) -> K + Send + Sync>;

/// Removes `metadata.managedFields`. Use it as [`InformerOptions::transform`](crate::InformerOptions::transform)
/// unless a handler reads managed fields.
pub fn strip_managed_fields<K: Resource>(mut obj: K) -> K {
    obj.meta_mut().managed_fields = None;
    obj
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;

    use super::*;

    #[test]
    fn strip_managed_fields_keeps_identity() {
        let mut obj = crate::test_util::cm("ns", "x", "7");
        obj.metadata.managed_fields = Some(vec![ManagedFieldsEntry::default()]);
        let obj = strip_managed_fields(obj);
        assert_eq!(obj.metadata.managed_fields, None);
        assert_eq!(crate::key::ObjectKey::of(&obj).as_str(), "ns/x");
        assert_eq!(crate::test_util::rv(&obj), "7");
    }
}
