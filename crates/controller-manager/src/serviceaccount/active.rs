//! Whether a namespace still takes new objects. Both controllers here (ServiceAccounts and the
//! root-CA ConfigMap) leave a terminating namespace alone, as upstream's do: anything they created
//! there would be deleted again, or refused.

use k8s_openapi::api::core::v1::Namespace;

/// Whether `namespace` is active (not terminating).
pub(crate) fn active(namespace: &Namespace) -> bool {
    namespace.metadata.deletion_timestamp.is_none()
        && namespace.status.as_ref().and_then(|s| s.phase.as_deref()) != Some("Terminating")
}
