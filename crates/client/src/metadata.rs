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
//! # What is asked for
//! The `Accept` header names the conversion per verb, as the real servers require it: a list
//! asks for `as=PartialObjectMetadataList`, a get or a watch (whose events carry single objects)
//! for `as=PartialObjectMetadata` (asking a list for the single form is 406 `NotAcceptable`, "you
//! requested PartialObjectMetadata, but the requested object is a list", on v1.15 and v1.36).
//! Three ranges, in order: `meta.k8s.io/v1` (servers since 1.15), `meta.k8s.io/v1beta1` (older
//! ones), then plain `application/json`, which any server answers with whole objects.
//!
//! # Differences from client-go
//! - No protobuf range: client-go puts `application/vnd.kubernetes.protobuf;as=...` first. This
//!   client decodes JSON only.
//! - A `meta.k8s.io/v1beta1` range between v1 and plain JSON, for servers older than 1.15. Like
//!   client-go, the last range is plain `application/json`; whole objects answered to it decode
//!   into [`PartialObjectMeta<K>`] as well (every field but `metadata` is skipped), so a server
//!   or aggregated API without the conversion still works, only at the cost of transferring whole
//!   objects ("never depend on a server feature without a fallback").

use bytes::Bytes;
use http::HeaderValue;
use kube_core::metadata::PartialObjectMeta;

use crate::client::Client;
use crate::resource_client::{ApiObject, ResourceClient};

/// `Accept` of a metadata-only get or watch.
pub(crate) const OBJECT_ACCEPT: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1,application/json";

/// `Accept` of a metadata-only list.
pub(crate) const LIST_ACCEPT: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1,application/json";

/// What a [`ResourceClient`]'s reads ask the server for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Representation {
    /// Whole objects (`Accept: application/json`).
    Object,
    /// `PartialObjectMetadata[List]`, falling back to whole objects.
    Metadata,
}

impl Representation {
    /// `request` (a get or a watch) asking for this representation of single objects.
    pub(crate) fn object(self, request: http::Request<Bytes>) -> http::Request<Bytes> {
        self.with_accept(request, OBJECT_ACCEPT)
    }

    /// `request` (a list) asking for this representation of a list.
    pub(crate) fn list(self, request: http::Request<Bytes>) -> http::Request<Bytes> {
        self.with_accept(request, LIST_ACCEPT)
    }

    fn with_accept(
        self,
        mut request: http::Request<Bytes>,
        metadata_accept: &'static str,
    ) -> http::Request<Bytes> {
        if self == Representation::Metadata {
            request.headers_mut().insert(
                http::header::ACCEPT,
                HeaderValue::from_static(metadata_accept),
            );
        }
        request
    }
}

/// Metadata-only clients: `ResourceClient<PartialObjectMeta<K>>` addresses `K`'s resource (same
/// path, same verbs) and its `get`, `list` and `watch` ask for `PartialObjectMetadata`.
///
/// The plain constructors ([`ResourceClient::namespaced`] & co.) work for
/// `PartialObjectMeta<K>` too, but ask for (and transfer) whole objects: use these.
impl<K: ApiObject> ResourceClient<PartialObjectMeta<K>> {
    /// Asks for `PartialObjectMetadata` in JSON (see the module docs on protobuf).
    fn metadata_only(mut self) -> Self {
        self.representation = Representation::Metadata;
        self.proto = None;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> http::Request<Bytes> {
        http::Request::builder()
            .header(http::header::ACCEPT, "application/json")
            .body(Bytes::new())
            .expect("a valid request")
    }

    fn accept(request: &http::Request<Bytes>) -> &str {
        request.headers()[http::header::ACCEPT]
            .to_str()
            .expect("an ASCII header")
    }

    #[test]
    fn whole_objects_keep_the_plain_json_accept() {
        assert_eq!(
            accept(&Representation::Object.list(request())),
            "application/json"
        );
        assert_eq!(
            accept(&Representation::Object.object(request())),
            "application/json"
        );
    }

    #[test]
    fn metadata_lists_ask_for_the_list_conversion_then_v1beta1_then_whole_objects() {
        assert_eq!(
            accept(&Representation::Metadata.list(request())),
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,\
             application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1,\
             application/json"
        );
    }

    #[test]
    fn metadata_gets_and_watches_ask_for_the_single_object_conversion() {
        assert_eq!(
            accept(&Representation::Metadata.object(request())),
            "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,\
             application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1,\
             application/json"
        );
    }
}
