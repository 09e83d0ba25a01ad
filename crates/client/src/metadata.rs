//! Metadata-only reads: `get`, `list` and `watch` that ask the server for
//! `PartialObjectMetadata` instead of whole objects, decoded into kube-core's
//! [`PartialObjectMeta<K>`].
//!
//! Mirrors client-go `metadata/metadata.go` (the metadata client behind `metadatainformer`) and
//! kube-rs `Api::get_metadata`/`list_metadata`/`watch_metadata`. A controller that only reads
//! owner references, labels, annotations or finalizers then neither transfers nor decodes nor
//! caches `spec`, `status` or `data`: the server converts each object to its `metadata` before
//! writing it.
//!
//! # Differences from client-go
//! - A `meta.k8s.io/v1beta1` range between v1 and plain JSON, for servers older than 1.15. Like
//!   client-go, the last range is plain `application/json`; whole objects answered to it decode
//!   into [`PartialObjectMeta<K>`] as well (every field but `metadata` is skipped), so a server
//!   or aggregated API without the conversion still works, only at the cost of transferring whole
//!   objects ("never depend on a server feature without a fallback").

use kube_core::metadata::PartialObjectMeta;

use crate::client::Client;
use crate::representation::Representation;
use crate::resource_client::{ApiObject, ResourceClient};

/// Metadata-only clients: `ResourceClient<PartialObjectMeta<K>>` addresses `K`'s resource (same
/// path, same verbs) and its `get`, `list` and `watch` ask for `PartialObjectMetadata`.
///
/// The plain constructors ([`ResourceClient::namespaced`] & co.) work for
/// `PartialObjectMeta<K>` too, but ask for (and transfer) whole objects: use these.
impl<K: ApiObject> ResourceClient<PartialObjectMeta<K>> {
    /// Asks for `PartialObjectMetadata`, in the client's wire format.
    fn metadata_only(mut self) -> Self {
        self.representation = Representation::Metadata;
        let format = self.client().policies().wire_format;
        self.proto = self.representation.proto_kind(format, "", "");
        self
    }

    /// Metadata of a namespaced kind in `namespace`.
    pub fn metadata_namespaced(client: Client, namespace: &str) -> Self {
        Self::namespaced(client, namespace).metadata_only()
    }

    /// Metadata of a namespaced kind across all namespaces (list and watch).
    pub fn metadata_all_namespaces(client: Client) -> Self {
        Self::all_namespaces(client).metadata_only()
    }

    /// Metadata of a cluster-scoped kind.
    pub fn metadata_cluster(client: Client) -> Self {
        Self::cluster(client).metadata_only()
    }
}
