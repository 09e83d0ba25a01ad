//! Protobuf bodies of built-in kinds decoded straight into serde types (the k8s-openapi types an
//! informer's cache holds), through the wire decoder in `de`: no `DynamicMessage`, no JSON value.
//!
//! client-go counterpart: the protobuf serializer's `Decode` into a typed Go object
//! (`runtime/serializer/protobuf`), which runs the gogo-generated `Unmarshal` of the type.

use serde::Deserialize;

use crate::borrowed_envelope::BorrowedEnvelope;
use crate::de::{ObjectDe, TypeHeader};
use crate::error::{CodecError, Result};
use crate::plan::{self, MessagePlan, ValueKind, plans};
use crate::schema::KindSchema;

/// Decodes a whole protobuf body (`k8s\0` + envelope) into `T`, as the JSON of the same object
/// would decode: `apiVersion` and `kind` come from the envelope. For a `get` response, an error
/// `Status`, a watch event's object.
///
/// # Errors
/// [`CodecError::MissingMagic`] / [`CodecError::EnvelopeDecodeFailed`] for a body that is not a
/// protobuf object, [`CodecError::UnknownKind`] for a kind without a schema here,
/// [`CodecError::InvalidField`] naming the JSON path where the message or `T` did not fit.
pub fn from_body<'de, T: Deserialize<'de>>(body: &'de [u8]) -> Result<T> {
    let envelope = BorrowedEnvelope::parse(body)?;
    let plan = envelope.plan()?;
    let header: TypeHeader<'de> = Some((envelope.api_version, envelope.kind));
    T::deserialize(ObjectDe::new(plan, envelope.raw, header))
}

/// Decodes a meta/v1 `Status` message (an envelope's `raw`) into `S`.
pub(crate) fn decode_status<'de, S: Deserialize<'de>>(
    api_version: &'de str,
    raw: &'de [u8],
) -> Result<S> {
    let plan = plan::by_name("k8s.io.apimachinery.pkg.apis.meta.v1.Status").ok_or_else(|| {
        CodecError::UnknownKind {
            api_version: api_version.to_string(),
            kind: "Status".into(),
        }
    })?;
    S::deserialize(ObjectDe::new(plan, raw, Some((api_version, "Status"))))
}

/// The protobuf messages of one built-in kind: the kind itself and its `XxxList`.
#[derive(Clone, Copy, Debug)]
pub struct ProtoKind {
    pub(crate) item: &'static MessagePlan,
    pub(crate) list: &'static MessagePlan,
    /// The `apiVersion` and `kind` each decoded list item gets: `None` for built-in kinds, whose
    /// list items carry neither in JSON; set for `PartialObjectMetadataList`, whose items do.
    item_types: Option<(&'static str, &'static str)>,
}

impl ProtoKind {
    /// The kind `kind` of `api_version` (`apps/v1`, `Deployment`) when it is a built-in kind with
    /// a protobuf form; `None` for custom resources and unknown kinds.
    pub fn lookup(api_version: &str, kind: &str) -> Option<ProtoKind> {
        let schema = KindSchema::lookup(api_version, kind)?;
        let item = plan::by_name(schema.message_name())?;
        let list = plan::by_name(&format!("{}List", schema.message_name()))?;
        let items = list.field(2).map(|index| list.fields[index].kind);
        (items == Some(ValueKind::Message(item.index))).then_some(ProtoKind {
            item,
            list,
            item_types: None,
        })
    }

    /// `meta.k8s.io/v1` `PartialObjectMetadata`, what a metadata-only read
    /// (`as=PartialObjectMetadata[List]`) is answered with, for built-in kinds and custom
    /// resources alike. Its list items are decoded with their `apiVersion` and `kind`, as a real
    /// server writes them in a JSON `PartialObjectMetadataList` (v1.15 and v1.36 do).
    pub fn partial_object_metadata() -> Option<ProtoKind> {
        const API_VERSION: &str = "meta.k8s.io/v1";
        const KIND: &str = "PartialObjectMetadata";
        let kind = Self::lookup(API_VERSION, KIND)?;
        Some(ProtoKind {
            item_types: Some((API_VERSION, KIND)),
            ..kind
        })
    }

    /// Full protobuf name of the kind's message, e.g. `k8s.io.api.apps.v1.Deployment`.
    pub fn message_name(&self) -> &'static str {
        self.item.name()
    }

    /// Decodes the kind's message bytes (an element of a list's `items`, without envelope) into
    /// `T`, as a real server writes list items in JSON: with no `apiVersion` or `kind`, except
    /// for [`partial_object_metadata`](Self::partial_object_metadata).
    ///
    /// # Errors
    /// [`CodecError::InvalidField`] naming the JSON path where the message or `T` did not fit.
    pub fn decode<'de, T: Deserialize<'de>>(&self, message: &'de [u8]) -> Result<T> {
        T::deserialize(ObjectDe::new(self.item, message, self.item_types))
    }

    /// Decodes the list's `metadata` (a `ListMeta`) message bytes into `T`.
    pub(crate) fn decode_list_meta<'de, T: Deserialize<'de>>(&self, bytes: &'de [u8]) -> Result<T> {
        let Some(ValueKind::Message(meta)) = self.list.field(1).map(|i| self.list.fields[i].kind)
        else {
            return Err(CodecError::field(
                "metadata",
                "the list message has no metadata",
            ));
        };
        T::deserialize(ObjectDe::new(&plans()[meta], bytes, None))
            .map_err(|e: CodecError| e.within("metadata"))
    }
}
