//! `/openapi/v2` and `/openapi/v3` (index and per group-version documents): the schemas `kubectl
//! apply` validates against, `kubectl explain` prints and client-go's `openapi3` / kube-rs read.
//!
//! Mirrors kube-openapi `pkg/handler` (v2) and `pkg/handler3` (v3) as kube-apiserver mounts them,
//! with apiextensions-apiserver's OpenAPI controller adding every CustomResourceDefinition:
//! - `/openapi/v3` lists each document as `{"paths": {"apis/apps/v1": {"serverRelativeURL":
//!   "/openapi/v3/apis/apps/v1?hash=<SHA-512>"}}}`; the hash is the document's ETag, so it changes
//!   exactly when the document does (a CRD created, changed or deleted).
//! - A document asked for with a stale `?hash=` redirects (301) to the current one; with the current
//!   hash it may be cached for a year (`Cache-Control: public, immutable`); `If-None-Match` with the
//!   ETag answers 304.
//! - Built-in kinds come from the real server's own documents shipped as data ([`builtin`]); custom
//!   resources from their CRD's structural schema ([`crd`]).
//!
//! - Both are served in JSON and, when `Accept` asks for it first, in gnostic's protobuf
//!   (`openapi.v2.Document` / `openapi.v3.Document`, converted by kubegen-codec), as client-go's
//!   `OpenAPISchema()` and `kubectl explain --output plaintext-openapiv2` read them. The v3 index
//!   is JSON only.
//!
//! # Differences from the real server
//! - No `Last-Modified` header (and so no `If-Modified-Since`); `If-None-Match` works.

pub(crate) mod builtin;
pub(crate) mod crd;
mod negotiate;
mod paths;
pub(crate) mod unknown_fields;

use std::borrow::Cow;
use std::collections::BTreeMap;

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode, header};
use serde_json::{Map, Value, json};

use kubegen_codec::{
    OPENAPI_V2_CONTENT_TYPE, OPENAPI_V2_MEDIA_TYPE, OPENAPI_V3_CONTENT_TYPE, OPENAPI_V3_MEDIA_TYPE,
    OpenApiVersion, openapi_to_protobuf,
};

use crate::apiserver::ApiServer;
use crate::body::{BoxBody, full};
use crate::openapi::unknown_fields::KindSchema;
use crate::request::query::Query;
use crate::status::ApiError;
pub(crate) use builtin::Document;
use negotiate::Format;

pub(crate) use crate::request::route::Endpoint;

/// Serves a GET on an OpenAPI endpoint.
///
/// # Errors
/// 500 when the shipped documents are unreadable. (A v3 path without a document is an empty 404
/// and an Accept header without JSON an empty 406, as from the real handlers, not `Status`
/// errors.)
pub(crate) fn serve(
    api: &ApiServer,
    endpoint: &Endpoint,
    headers: &HeaderMap,
    query: &Query,
) -> Result<Response<BoxBody>, ApiError> {
    let protobuf: &[&str] = match endpoint {
        Endpoint::V2 => &[OPENAPI_V2_MEDIA_TYPE, OPENAPI_V2_CONTENT_TYPE],
        Endpoint::V3Index => &[],
        Endpoint::V3(_) => &[OPENAPI_V3_MEDIA_TYPE, OPENAPI_V3_CONTENT_TYPE],
    };
    let Some(format) = negotiate::choose(headers, protobuf) else {
        return Ok(empty(StatusCode::NOT_ACCEPTABLE));
    };
    match endpoint {
        Endpoint::V2 => {
            let served = (OpenApiVersion::V2, format);
            document_response(&v2_document(api)?, headers, None, served)
        }
        Endpoint::V3Index => {
            let documents = v3_documents(api, None)?;
            let paths: serde_json::Map<String, Value> = documents
                .iter()
                .map(|(path, doc)| {
                    let url = relative_url(path, &doc.hash);
                    (path.clone(), json!({"serverRelativeURL": url}))
                })
                .collect();
            let body = Bytes::from(json!({"paths": paths}).to_string());
            // The real index is written without a content type and so sniffed as text.
            let response = Response::builder()
                .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
                .header(header::CACHE_CONTROL, NO_CACHE)
                .body(full(body));
            Ok(response.unwrap_or_else(|_| empty(StatusCode::INTERNAL_SERVER_ERROR)))
        }
        Endpoint::V3(path) => {
            let documents = v3_documents(api, Some(path))?;
            let Some(doc) = documents.get(path) else {
                return Ok(empty(StatusCode::NOT_FOUND));
            };
            match query.get("hash") {
                Some(asked) if !asked.is_empty() && asked != doc.hash => {
                    Ok(redirect(&relative_url(path, &doc.hash), &doc.hash))
                }
                asked => document_response(
                    doc,
                    headers,
                    asked.filter(|h| !h.is_empty()),
                    (OpenApiVersion::V3, format),
                ),
            }
        }
    }
}

/// The schema of `group/version` `kind` and the named schemas it refers to, as `/openapi/v3`
/// serves them; None for a kind no document describes.
///
/// # Errors
/// 500 when the shipped documents are unreadable.
pub(crate) fn with_kind_schema<T>(
    api: &ApiServer,
    gvk: (&str, &str, &str),
    use_schema: impl FnOnce(&KindSchema<'_>) -> T,
) -> Result<Option<T>, ApiError> {
    let (group, version, _) = gvk;
    let Some(schemas) = GroupSchemas::load((group, version), || crd::installed(api))? else {
        return Ok(None);
    };
    let components = schemas.get();
    Ok(kind_root(components, gvk).map(|root| use_schema(&KindSchema { root, components })))
}

/// The named schemas of one group-version's v3 document.
pub(crate) enum GroupSchemas {
    /// A shipped document's.
    Builtin(&'static Map<String, Value>),
    /// Built from the custom resources' definitions.
    Custom(Map<String, Value>),
}

impl GroupSchemas {
    /// The schemas of `group/version`, built from `crds()` when no shipped document has them.
    ///
    /// # Errors
    /// 500 when the shipped documents are unreadable.
    pub(crate) fn load(
        (group, version): (&str, &str),
        crds: impl FnOnce() -> Vec<Value>,
    ) -> Result<Option<GroupSchemas>, ApiError> {
        let builtin = builtin::get()?;
        let path = if group.is_empty() {
            format!("api/{version}")
        } else {
            format!("apis/{group}/{version}")
        };
        Ok(match builtin.v3.get(&path) {
            Some(doc) => doc
                .value
                .pointer("/components/schemas")
                .and_then(Value::as_object)
                .map(GroupSchemas::Builtin),
            None => Some(GroupSchemas::Custom(crd::v3_schemas(
                &crds(),
                builtin,
                (group, version),
            ))),
        })
    }

    pub(crate) fn get(&self) -> &Map<String, Value> {
        match self {
            GroupSchemas::Builtin(map) => map,
            GroupSchemas::Custom(map) => map,
        }
    }
}

/// The schema of `kind` among a group-version's schemas.
pub(crate) fn kind_root<'a>(
    schemas: &'a Map<String, Value>,
    (group, version, kind): (&str, &str, &str),
) -> Option<&'a Value> {
    let gvk = json!({"group": group, "version": version, "kind": kind});
    schemas.values().find(|s| {
        s["x-kubernetes-group-version-kind"]
            .as_array()
            .is_some_and(|all| all.contains(&gvk))
    })
}

/// The v3 documents by path: the shipped ones plus one per group-version custom resources serve
/// (only `only`'s when given, to spare building the others).
fn v3_documents(
    api: &ApiServer,
    only: Option<&str>,
) -> Result<BTreeMap<String, Cow<'static, Document>>, ApiError> {
    let builtin = builtin::get()?;
    let mut documents: BTreeMap<String, Cow<'static, Document>> = builtin
        .v3
        .iter()
        .filter(|(path, _)| only.is_none_or(|o| o == path.as_str()))
        .map(|(path, doc)| (path.clone(), Cow::Borrowed(doc)))
        .collect();
    if only.is_some() && !documents.is_empty() {
        return Ok(documents);
    }
    for (path, doc) in crd::v3_documents(&crd::installed(api), builtin, only) {
        documents.insert(path, Cow::Owned(Document::new(doc)));
    }
    Ok(documents)
}

fn v2_document(api: &ApiServer) -> Result<Document, ApiError> {
    let builtin = builtin::get()?;
    let mut doc = builtin.v2.clone();
    crd::add_to_v2(&mut doc, &crd::installed(api), builtin);
    Ok(Document::new(doc))
}

/// apiserver's default for responses that set none.
const NO_CACHE: &str = "no-cache, private";

fn relative_url(path: &str, hash: &str) -> String {
    format!("/openapi/v3/{path}?hash={hash}")
}

/// A document in the negotiated format with the ETag (the same for both formats), Vary and (for a
/// hash-addressed request) immutable caching headers kube-openapi sends; 304 when `If-None-Match`
/// names the current ETag.
///
/// # Errors
/// 500 when the document does not convert to gnostic's protobuf form.
fn document_response(
    doc: &Document,
    headers: &HeaderMap,
    hash: Option<&str>,
    (version, format): (OpenApiVersion, Format),
) -> Result<Response<BoxBody>, ApiError> {
    let etag = format!("\"{}\"", doc.hash);
    let unchanged = headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| {
            v.split(',')
                .any(|tag| tag.trim() == etag || tag.trim() == "*")
        });
    let mut builder = Response::builder()
        .header(header::ETAG, &etag)
        .header(header::VARY, "Accept");
    if hash.is_some() {
        let expires = jiff::Timestamp::now()
            .to_zoned(jiff::tz::TimeZone::UTC)
            .saturating_add(jiff::Span::new().years(1));
        builder = builder
            .header(header::CACHE_CONTROL, "public, immutable")
            .header(
                header::EXPIRES,
                expires.strftime("%a, %d %b %Y %H:%M:%S UTC").to_string(),
            );
    } else {
        builder = builder.header(header::CACHE_CONTROL, NO_CACHE);
    }
    let response = if unchanged {
        builder
            .status(StatusCode::NOT_MODIFIED)
            .body(full(Bytes::new()))
    } else {
        let (content_type, body) = match (format, version) {
            (Format::Json, _) => ("application/json", doc.bytes.clone()),
            (Format::Protobuf, version) => {
                let bytes = openapi_to_protobuf(version, &doc.value)
                    .map_err(|e| ApiError::internal(format!("OpenAPI in protobuf: {e}")))?;
                let content_type = match version {
                    OpenApiVersion::V2 => OPENAPI_V2_CONTENT_TYPE,
                    OpenApiVersion::V3 => OPENAPI_V3_CONTENT_TYPE,
                };
                (content_type, Bytes::from(bytes))
            }
        };
        builder
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, content_type)
            .body(full(body))
    };
    Ok(response.unwrap_or_else(|_| empty(StatusCode::INTERNAL_SERVER_ERROR)))
}

fn redirect(location: &str, hash: &str) -> Response<BoxBody> {
    Response::builder()
        .status(StatusCode::MOVED_PERMANENTLY)
        .header(header::LOCATION, location)
        .header(header::ETAG, format!("\"{hash}\""))
        .header(header::VARY, "Accept")
        .header(header::CACHE_CONTROL, NO_CACHE)
        .header(header::CONTENT_TYPE, "application/json")
        .body(full(Bytes::new()))
        .unwrap_or_else(|_| empty(StatusCode::INTERNAL_SERVER_ERROR))
}

fn empty(code: StatusCode) -> Response<BoxBody> {
    let mut response = Response::new(full(Bytes::new()));
    *response.status_mut() = code;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSON_V3: (OpenApiVersion, Format) = (OpenApiVersion::V3, Format::Json);

    #[test]
    fn hash_is_upper_case_hex_sha512_of_the_served_bytes() {
        let doc = Document::new(json!({"a": 1}));
        assert_eq!(doc.bytes, Bytes::from_static(br#"{"a":1}"#));
        assert_eq!(doc.hash.len(), 128);
        assert!(
            doc.hash
                .chars()
                .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
        );
        assert_ne!(doc.hash, Document::new(json!({"a": 2})).hash);
    }

    #[test]
    fn if_none_match_with_the_etag_is_not_modified() {
        let doc = Document::new(json!({}));
        let mut headers = HeaderMap::new();
        headers.insert(
            header::IF_NONE_MATCH,
            format!("\"{}\"", doc.hash).parse().unwrap(),
        );
        assert_eq!(
            document_response(&doc, &headers, None, JSON_V3)
                .unwrap()
                .status(),
            304
        );
        headers.insert(header::IF_NONE_MATCH, "\"other\"".parse().unwrap());
        assert_eq!(
            document_response(&doc, &headers, None, JSON_V3)
                .unwrap()
                .status(),
            200
        );
    }

    #[test]
    fn only_hash_addressed_documents_are_immutable() {
        let doc = Document::new(json!({}));
        let plain = document_response(&doc, &HeaderMap::new(), None, JSON_V3).unwrap();
        assert_eq!(plain.headers()[header::CACHE_CONTROL], NO_CACHE);
        let hashed = document_response(&doc, &HeaderMap::new(), Some(&doc.hash), JSON_V3).unwrap();
        assert_eq!(hashed.headers()[header::CACHE_CONTROL], "public, immutable");
        assert!(
            hashed.headers()[header::EXPIRES]
                .to_str()
                .unwrap()
                .ends_with(" UTC")
        );
    }
}
