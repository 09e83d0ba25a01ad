//! Content negotiation for resource requests: which request bodies the server reads
//! (`Content-Type`) and whether the client's `Accept` lets it answer. Mirrors apiserver
//! `endpoints/handlers/negotiation` (`NegotiateInputSerializer`, `NegotiateMediaTypeOptions`) plus the
//! go-restful route check that runs before the handlers of built-in kinds.
//!
//! # What real servers do (asked v1.15 and v1.36; the shapes are copied)
//! - Bodies: JSON (also with no `Content-Type`), YAML, and for built-in kinds protobuf. Anything
//!   else is 415 `UnsupportedMediaType`, "the body of the request was in an unknown format -
//!   accepted media types include: application/json, application/yaml[,
//!   application/vnd.kubernetes.protobuf]" (the protobuf entry only for built-in kinds; a custom
//!   resource POSTed as protobuf gets this 415 too).
//! - `Accept`, built-in kinds: go-restful first rejects a header none of whose media ranges is
//!   JSON, YAML, protobuf or `*/*` (so also `application/*`) with 406 "406: Not Acceptable\n\n
//!   Available representations: <the route's types>" (v1.36; v1.15 has no second line) and
//!   `details: {}`.
//! - `Accept`, then the handler: ranges are tried by descending `q` (ties keep their order, exact
//!   types before wildcards; `q=0` is *not* treated as "refused"), `type/*` matches too, and a
//!   range with `as`/`g`/`v` must name a conversion the endpoint offers (`Table`,
//!   `PartialObjectMetadata[List]` in `meta.k8s.io/v1` or `v1beta1`). Nothing acceptable: 406
//!   "only the following media types are accepted: <the server's types>", no details.
//! - The answer follows the chosen range: protobuf for built-in kinds (and `PartialObjectMetadata`
//!   conversions) when it names `application/vnd.kubernetes.protobuf`, JSON otherwise. A `Table`
//!   is offered in JSON only: a protobuf range asking for one is skipped (v1.36 answers 406 to
//!   `application/vnd.kubernetes.protobuf;as=Table;...` alone). `PartialObjectMetadata[List]` is
//!   written in protobuf for custom resources too, whose own objects are JSON only.
//!
//! # Differences from kube-apiserver
//! This server does not write YAML. A range that a real server would answer in YAML is skipped,
//! and the next range it can write is used (kubectl and client-go always offer JSON or `*/*`
//! too); with none, the 406 lists the types this server can write (`application/json[,
//! application/vnd.kubernetes.protobuf]`, where a real server adds `application/yaml`).

use bytes::Bytes;
use http::{HeaderMap, header};
use kubegen_codec::{KindSchema, PROTOBUF_MEDIA_TYPE};

use crate::registry::ResourceDefinition;
use crate::status::ApiError;

const JSON: &str = "application/json";
const YAML: &str = "application/yaml";

/// One media range of an `Accept` header.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct MediaRange<'a> {
    pub(crate) kind: &'a str,
    pub(crate) subtype: &'a str,
    /// Parameters other than `q`, in order.
    pub(crate) params: Vec<(&'a str, &'a str)>,
    q: f64,
}

impl MediaRange<'_> {
    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| *v)
    }

    fn is(&self, media_type: &str) -> bool {
        media_type.split_once('/') == Some((self.kind, self.subtype))
    }

    /// The handler's match: exact, `type/*` or `*/*`.
    fn matches(&self, media_type: &str) -> bool {
        let Some((kind, _)) = media_type.split_once('/') else {
            return false;
        };
        self.is(media_type) || (self.kind == kind && self.subtype == "*") || self.is("*/*")
    }

    /// Whether an `as`/`g`/`v` conversion, if any, is one the server offers.
    fn conversion_offered(&self) -> bool {
        let (kind, group, version) = (self.param("as"), self.param("g"), self.param("v"));
        if kind.is_none() && group.is_none() && version.is_none() {
            return true;
        }
        matches!(
            kind,
            Some("Table" | "PartialObjectMetadata" | "PartialObjectMetadataList")
        ) && group == Some("meta.k8s.io")
            && matches!(version, Some("v1" | "v1beta1"))
    }
}

/// Parses an `Accept` header into media ranges sorted as goautoneg sorts them: by descending `q`,
/// then exact types before wildcards; ties keep their order. A `q` that is not a number counts as 1.
pub(crate) fn parse_accept(header: &str) -> Vec<MediaRange<'_>> {
    let mut ranges: Vec<MediaRange<'_>> = header
        .split(',')
        .map(str::trim)
        .filter(|range| !range.is_empty())
        .map(|range| {
            let mut parts = range.split(';').map(str::trim);
            let media = parts.next().unwrap_or("");
            let (kind, subtype) = media.split_once('/').unwrap_or((media, ""));
            let mut q = 1.0;
            let mut params = Vec::new();
            for param in parts {
                let (key, value) = param.split_once('=').unwrap_or((param, ""));
                let (key, value) = (key.trim(), value.trim());
                if key == "q" {
                    q = value.parse().unwrap_or(1.0);
                } else {
                    params.push((key, value));
                }
            }
            MediaRange {
                kind,
                subtype,
                params,
                q,
            }
        })
        .collect();
    ranges.sort_by(|a, b| {
        b.q.total_cmp(&a.q)
            .then((a.kind == "*").cmp(&(b.kind == "*")))
            .then((a.subtype == "*").cmp(&(b.subtype == "*")))
    });
    ranges
}

/// Whether protobuf is a wire format of `def` (built-in kinds only).
pub(crate) fn speaks_protobuf(def: &ResourceDefinition) -> bool {
    KindSchema::lookup(&def.api_version(), &def.kind).is_some()
}

/// The media types a real server reads and writes for `def`, in its order.
fn served_types(def: &ResourceDefinition) -> &'static [&'static str] {
    if speaks_protobuf(def) {
        &[JSON, YAML, PROTOBUF_MEDIA_TYPE]
    } else {
        &[JSON, YAML]
    }
}

/// The media range the answer follows and the format it asks for: the first, in `q` order, that
/// allows JSON, or protobuf when `def` speaks it, with a conversion the server offers in that
/// format. `PartialObjectMetadata[List]` is offered in protobuf for every kind, custom resources
/// too (v1.36 answers a CR list so); `Table` in JSON only. `None` when there is none.
pub(crate) fn choose<'a, 'h>(
    ranges: &'a [MediaRange<'h>],
    def: &ResourceDefinition,
) -> Option<(&'a MediaRange<'h>, WireFormat)> {
    let protobuf = speaks_protobuf(def);
    ranges.iter().find_map(|range| {
        if !range.conversion_offered() {
            return None;
        }
        if range.matches(JSON) {
            return Some((range, WireFormat::Json));
        }
        let metadata = matches!(
            range.param("as"),
            Some("PartialObjectMetadata" | "PartialObjectMetadataList")
        );
        let plain = range.param("as").is_none();
        let writable = metadata || (protobuf && plain);
        (writable && range.is(PROTOBUF_MEDIA_TYPE)).then_some((range, WireFormat::Protobuf))
    })
}

/// Checks that the client accepts an answer this server can write, and says in which format.
///
/// # Errors
/// 406 `NotAcceptable`, shaped as the real server shapes it (see the module doc).
pub(crate) fn check_accept(
    headers: &HeaderMap,
    def: &ResourceDefinition,
) -> Result<WireFormat, ApiError> {
    let Some(value) = headers.get(header::ACCEPT) else {
        return Ok(WireFormat::Json);
    };
    let header = value.to_str().unwrap_or("\u{0}");
    if header.trim().is_empty() {
        return Ok(WireFormat::Json);
    }
    let ranges = parse_accept(header);
    let served = served_types(def);
    let route_accepts =
        |range: &MediaRange<'_>| range.is("*/*") || served.iter().any(|t| range.is(t));
    if speaks_protobuf(def) && !ranges.iter().any(route_accepts) {
        return Err(ApiError::not_acceptable_route(&served.join(", ")));
    }
    match choose(&ranges, def) {
        Some((_, format)) => Ok(format),
        None if speaks_protobuf(def) => Err(ApiError::not_acceptable(&format!(
            "{JSON}, {PROTOBUF_MEDIA_TYPE}"
        ))),
        None => Err(ApiError::not_acceptable(JSON)),
    }
}

/// The request body as JSON, whatever format the client sent it in (create, update, delete).
///
/// # Errors
/// 415 for a `Content-Type` the server does not read for `def`; 400 for a YAML or protobuf body
/// that does not decode, with the decoder's reason.
pub(crate) fn body_as_json(
    headers: &HeaderMap,
    body: Bytes,
    def: &ResourceDefinition,
) -> Result<Bytes, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap_or("\u{0}"))
        .unwrap_or("");
    let media = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let served = served_types(def);
    if !media.is_empty() && !served.contains(&media.as_str()) {
        return Err(ApiError::unsupported_media_type(&served.join(", ")));
    }
    if body.is_empty() {
        return Ok(body);
    }
    let unrecognized = |reason: String| {
        ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {}): {reason}",
            def.kind
        ))
    };
    let object: serde_json::Value = match media.as_str() {
        YAML => serde_yaml::from_slice(&body)
            .map_err(|e| unrecognized(format!("error converting YAML to JSON: {e}")))?,
        PROTOBUF_MEDIA_TYPE => {
            kubegen_codec::decode_object(&body).map_err(|e| unrecognized(e.to_string()))?
        }
        _ => return Ok(body),
    };
    Ok(Bytes::from(object.to_string()))
}

/// The format a response is written in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum WireFormat {
    /// `application/json` (also what `*/*` gets).
    #[default]
    Json,
    /// `application/vnd.kubernetes.protobuf`.
    Protobuf,
}

#[cfg(test)]
#[path = "negotiation_tests.rs"]
mod tests;
