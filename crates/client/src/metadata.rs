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
//! The ranges, in order, as client-go's metadata client sends them: protobuf `meta.k8s.io/v1`
//! (with [`WireFormat::Protobuf`], the default), JSON `meta.k8s.io/v1` (servers since 1.15),
//! JSON `meta.k8s.io/v1beta1` (older ones), then plain `application/json`, which any server
//! answers with whole objects. The answer is decoded by its `Content-Type`.
//!
//! Protobuf is asked for custom resources too: the conversion's result is a `meta.k8s.io` type,
//! which v1.15 and v1.36 write in protobuf for any resource. A `PartialObjectMetadataList`'s items
//! carry `apiVersion` and `kind` in JSON; decoded from protobuf they get the same.
//!
//! # Differences from client-go
//! - A `meta.k8s.io/v1beta1` range between v1 and plain JSON, for servers older than 1.15. Like
//!   client-go, the last range is plain `application/json`; whole objects answered to it decode
//!   into [`PartialObjectMeta<K>`] as well (every field but `metadata` is skipped), so a server
//!   or aggregated API without the conversion still works, only at the cost of transferring whole
//!   objects ("never depend on a server feature without a fallback").

use kube_core::metadata::PartialObjectMeta;
use kubegen_codec::ProtoKind;

use crate::client::Client;
use crate::protobuf::{ACCEPT_PROTOBUF, ACCEPT_PROTOBUF_WATCH, WireFormat};
use crate::resource_client::{ApiObject, ResourceClient};

/// `Accept` of a metadata-only get or watch in JSON.
const OBJECT_ACCEPT: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1,application/json";

/// `Accept` of a metadata-only list in JSON.
const LIST_ACCEPT: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1,application/json";

/// `Accept` of a metadata-only get or watch, protobuf first (the ranges of client-go's metadata
/// client, plus `v1beta1`). A watch gets `application/vnd.kubernetes.protobuf;stream=watch`.
const OBJECT_ACCEPT_PROTOBUF: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1,application/json";

/// `Accept` of a metadata-only list, protobuf first.
const LIST_ACCEPT_PROTOBUF: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1,application/json";

/// What a [`ResourceClient`]'s reads ask the server for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Representation {
    /// Whole objects.
    Object,
    /// `PartialObjectMetadata[List]`, falling back to whole objects.
    Metadata,
}

/// The read a request makes: each has its own `Accept`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Read {
    Get,
    List,
    Watch,
}

impl Representation {
    /// The `Accept` of `read` in this representation; protobuf ranges first when `protobuf`.
    pub(crate) fn accept(self, read: Read, protobuf: bool) -> &'static str {
        match (self, read, protobuf) {
            (Representation::Object, _, false) => "application/json",
            (Representation::Object, Read::Watch, true) => ACCEPT_PROTOBUF_WATCH,
            (Representation::Object, _, true) => ACCEPT_PROTOBUF,
            (Representation::Metadata, Read::List, false) => LIST_ACCEPT,
            (Representation::Metadata, Read::List, true) => LIST_ACCEPT_PROTOBUF,
            (Representation::Metadata, _, false) => OBJECT_ACCEPT,
            (Representation::Metadata, _, true) => OBJECT_ACCEPT_PROTOBUF,
        }
    }

    /// The protobuf messages of reads of kind `api_version`/`kind` in this representation,
    /// when `format` is protobuf: the kind's own for a built-in kind, `PartialObjectMetadata`
    /// for every kind.
    pub(crate) fn proto_kind(
        self,
        format: WireFormat,
        api_version: &str,
        kind: &str,
    ) -> Option<ProtoKind> {
        match (format, self) {
            (WireFormat::Json, _) => None,
            (WireFormat::Protobuf, Representation::Object) => ProtoKind::lookup(api_version, kind),
            (WireFormat::Protobuf, Representation::Metadata) => {
                ProtoKind::partial_object_metadata()
            }
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_objects_ask_for_json_or_protobuf_then_json() {
        for read in [Read::Get, Read::List, Read::Watch] {
            assert_eq!(
                Representation::Object.accept(read, false),
                "application/json"
            );
        }
        assert_eq!(
            Representation::Object.accept(Read::List, true),
            "application/vnd.kubernetes.protobuf, application/json"
        );
        assert_eq!(
            Representation::Object.accept(Read::Watch, true),
            "application/vnd.kubernetes.protobuf;stream=watch, application/json"
        );
    }

    #[test]
    fn metadata_lists_ask_for_the_list_conversion_then_v1beta1_then_whole_objects() {
        assert_eq!(
            Representation::Metadata.accept(Read::List, false),
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,\
             application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1,\
             application/json"
        );
        assert_eq!(
            Representation::Metadata.accept(Read::List, true),
            "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,\
             application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,\
             application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1,\
             application/json"
        );
    }

    #[test]
    fn metadata_gets_and_watches_ask_for_the_single_object_conversion() {
        for read in [Read::Get, Read::Watch] {
            assert_eq!(
                Representation::Metadata.accept(read, false),
                "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,\
                 application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1,\
                 application/json"
            );
            assert_eq!(
                Representation::Metadata.accept(read, true),
                "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,\
                 application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,\
                 application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1,\
                 application/json"
            );
        }
    }

    #[test]
    fn metadata_reads_decode_partial_object_metadata_in_protobuf_for_every_kind() {
        let proto = Representation::Metadata
            .proto_kind(WireFormat::Protobuf, "v1", "ConfigMap")
            .expect("PartialObjectMetadata has a protobuf form");
        assert_eq!(
            proto.message_name(),
            "k8s.io.apimachinery.pkg.apis.meta.v1.PartialObjectMetadata"
        );
        assert!(
            Representation::Metadata
                .proto_kind(WireFormat::Json, "v1", "ConfigMap")
                .is_none()
        );
    }
}
