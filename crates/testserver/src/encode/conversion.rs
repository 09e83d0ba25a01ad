//! The `as=` conversions of reads: which one an `Accept` header asks for ([`Conversion`]), and
//! the `PartialObjectMetadata` form of objects and lists (`crate::object::partial_object_metadata`).
//!
//! Mirrors apiserver `endpoints/handlers/response.go` (`transformObject`, `asPartialObjectMetadata`,
//! `asPartialObjectMetadataList`) and `endpoints/handlers/watch.go` (each event's object is
//! transformed the same way). Metadata-only clients (client-go `metadatainformer`, kubegen's
//! metadata informers) ask for these forms; `Table` (the sibling conversion) lives in
//! `crate::table`.
//!
//! # What real servers do (asked v1.15 and v1.36; shapes copied)
//! - A get or a watch converts each object to `{"kind":"PartialObjectMetadata","apiVersion":
//!   "meta.k8s.io/<v>","metadata":{..}}`, `metadata` whole (with `managedFields` on v1.36).
//! - A list answers `PartialObjectMetadataList` of the same `apiVersion`, the list's `metadata`
//!   (`resourceVersion`, `continue`, `remainingItemCount`) kept, each item converted.
//! - `v1` and `v1beta1` are both served, by both versions.
//! - The single form on a list is 406 `NotAcceptable` "you requested PartialObjectMetadata, but
//!   the requested object is a list (*core.ConfigMapList)"; the list form on a get is 406 "you
//!   requested PartialObjectMetadataList, but the requested object is not a list
//!   (*core.ConfigMap)". Neither has `details`.
//!
//! # Differences from kube-apiserver
//! - The Go type in those 406 messages is guessed from the group for built-in kinds
//!   (`*core.ConfigMap`, `*apps.Deployment`) and is `*unstructured.Unstructured[List]` for
//!   custom resources (not checked against a real server).
//! - The list form on a watch: a real server answers 200 and a stream that carries no event (each
//!   conversion fails on the server's side); this server answers the same 406 as a get, so the
//!   mistake is visible.

use http::HeaderMap;

use crate::registry::ResourceDefinition;
use crate::request::negotiation::WireFormat;
use crate::request::negotiation::{choose, parse_accept};
use crate::request::query::Query;
use crate::status::ApiError;
use crate::table::TableRequest;
use crate::verb::Verb;

/// How a get, list or watch answer is converted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Conversion {
    /// `as=Table`.
    Table(TableRequest),
    /// `as=PartialObjectMetadata` (get, watch) or `as=PartialObjectMetadataList` (list), in
    /// `meta.k8s.io` of this version (`v1` or `v1beta1`).
    Metadata(&'static str),
}

impl Conversion {
    /// The conversion the client's `Accept` asks for on a `verb` (`get`, `list` or `watch`), if
    /// any: the one of the first media range the server can answer.
    ///
    /// # Errors
    /// 406 for a PartialObjectMetadata form that does not fit the verb; the Table's 400 for a bad
    /// `includeObject`.
    pub(crate) fn from_request(
        headers: &HeaderMap,
        query: &Query,
        def: &ResourceDefinition,
        verb: Verb,
    ) -> Result<Option<Conversion>, ApiError> {
        let accept = headers
            .get(http::header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let ranges = parse_accept(accept);
        let Some((range, format)) = choose(&ranges, def) else {
            return Ok(None);
        };
        let version = match range.param("v") {
            Some("v1beta1") => "v1beta1",
            _ => "v1",
        };
        let list = verb == Verb::List;
        match range.param("as") {
            Some("PartialObjectMetadata") if list => {
                Err(ApiError::not_acceptable_conversion(format!(
                    "you requested PartialObjectMetadata, but the requested object is a list ({})",
                    go_type(def, true)
                )))
            }
            Some("PartialObjectMetadataList") if !list => {
                Err(ApiError::not_acceptable_conversion(format!(
                    "you requested PartialObjectMetadataList, but the requested object is not a list ({})",
                    go_type(def, false)
                )))
            }
            Some("PartialObjectMetadata" | "PartialObjectMetadataList") => {
                Ok(Some(Conversion::Metadata(version)))
            }
            // Tables are JSON only: a protobuf range without a conversion is the plain object.
            _ if format == WireFormat::Protobuf => Ok(None),
            _ => Ok(TableRequest::from_request(headers, query)?.map(Conversion::Table)),
        }
    }
}

/// The Go type a real server names in its 406 messages.
fn go_type(def: &ResourceDefinition, list: bool) -> String {
    let suffix = if list { "List" } else { "" };
    if crate::request::negotiation::speaks_protobuf(def) {
        let package = def.group.split('.').next().filter(|g| !g.is_empty());
        format!("*{}.{}{suffix}", package.unwrap_or("core"), def.kind)
    } else {
        format!("*unstructured.Unstructured{suffix}")
    }
}

#[cfg(test)]
#[path = "conversion_tests.rs"]
mod tests;
