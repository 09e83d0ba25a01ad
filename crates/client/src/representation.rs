//! What a [`ResourceClient`](crate::ResourceClient)'s reads ask the server for: whole objects or
//! their metadata only, and the `Accept` header and protobuf message of each read. Below both the
//! resource client, which sends the reads, and the metadata-only constructors (`metadata.rs`),
//! which choose [`Representation::Metadata`].
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

use kubegen_codec::ProtoKind;

use crate::protobuf::{ACCEPT_PROTOBUF, ACCEPT_PROTOBUF_WATCH, WireFormat};

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

#[cfg(test)]
#[path = "representation_tests.rs"]
mod tests;
