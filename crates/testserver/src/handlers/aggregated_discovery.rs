//! Aggregated discovery: `/api` and `/apis` as one `APIGroupDiscoveryList`
//! (`apidiscovery.k8s.io/v2`) each, holding every group, version and resource, so a client learns
//! the whole API in two requests instead of one per group version. Mirrors apiserver
//! `endpoints/discovery/aggregated/{handler,wrapper,etag}.go`.
//!
//! # What a real v1.36 server does (asked with curl; the shapes are copied)
//! - Only `/api` and `/apis` are aggregated. The answer is aggregated when *any* range of the
//!   `Accept` header is `application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`
//!   (extra parameters allowed, order of parameters free), whatever its `q` or position: client-go
//!   and kubectl send `v2, v2beta1, application/json` and get `v2`.
//! - The aggregated answer has `Content-Type:
//!   application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`, `Vary: Accept`,
//!   `Cache-Control: public` and an `ETag` (a quoted upper-case hex SHA-512 digest of the
//!   document); a request whose `If-None-Match` names it gets 304 with those headers and no body.
//! - A range asking for another conversion (`v=v2beta1`, which 1.26–1.29 served; `v=v2` without
//!   `as`; a wildcard with `g`/`v`/`as`) is not acceptable: with no plain JSON, `*/*` or
//!   `application/*` range the answer is 406 "only the following media types are accepted: ...".
//!   So does a range of another type altogether (`text/plain`).
//! - Items: the core group's has `metadata: {}`, the others `metadata: {name}`; each version
//!   lists its resources by name with `responseKind` (empty group and version for built-in kinds,
//!   the CRD's group and version for custom resources), `scope` (`Namespaced` or `Cluster`),
//!   `singularResource`, `verbs`, `shortNames` and `categories` when set, and `subresources`
//!   (by name) each with its own `responseKind` and verbs; and `freshness: "Current"`.
//!
//! # Differences from kube-apiserver
//! This server writes the aggregated document in JSON only: a protobuf range asking for it
//! (`application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`)
//! is skipped, and the 406 lists `application/json` (a real server adds YAML and protobuf), as
//! for resources (`request/negotiation.rs`).

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode, header};
use serde_json::{Value, json};

use crate::body::{BoxBody, full};
use crate::kinds::strategy_for;
use crate::registry::ResourceDefinition;
use crate::request::negotiation::{MediaRange, parse_accept, speaks_protobuf};
use crate::status::ApiError;
use crate::verb::Verb;

/// The media type of the aggregated document this server writes.
pub(crate) const AGGREGATED_V2: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// The verbs discovery lists for `def`: its own, or those its kind's strategy serves. A custom
/// resource's come in the order the real server's CRD handler lists them (`delete,
/// deletecollection, get, list, patch, create, update, watch`), built-in kinds' sorted.
pub(crate) fn verbs_of(def: &ResourceDefinition) -> Vec<String> {
    let served = strategy_for(def).verbs();
    if !def.verbs.is_empty() {
        def.verbs.clone()
    } else if served.len() == Verb::ALL.len() && !speaks_protobuf(def) {
        CUSTOM_RESOURCE_VERBS
            .iter()
            .map(|v| (*v).to_owned())
            .collect()
    } else {
        served.iter().map(|v| v.as_str().to_owned()).collect()
    }
}

/// Verbs of a custom resource in v1.36's discovery order.
const CUSTOM_RESOURCE_VERBS: [&str; 8] = [
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "create",
    "update",
    "watch",
];

/// How the client's `Accept` header lets `/api` or `/apis` be answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DiscoveryFormat {
    /// `APIGroupDiscoveryList` (`apidiscovery.k8s.io/v2`).
    Aggregated,
    /// The classic `APIVersions` / `APIGroupList` / `APIGroup` / `APIResourceList`.
    Classic,
}

/// Whether `range` is the aggregated v2 document in JSON.
fn is_aggregated_v2(range: &MediaRange<'_>) -> bool {
    range.kind == "application"
        && range.subtype == "json"
        && range.param("g") == Some("apidiscovery.k8s.io")
        && range.param("v") == Some("v2")
        && range.param("as") == Some("APIGroupDiscoveryList")
}

/// Whether `range` accepts a classic document: JSON, YAML or protobuf (or a wildcard) without a
/// conversion.
fn accepts_classic(range: &MediaRange<'_>) -> bool {
    let converts = ["g", "v", "as"].iter().any(|p| range.param(p).is_some());
    let media = (range.kind, range.subtype);
    let known = matches!(
        media,
        ("*", "*")
            | (
                "application",
                "*" | "json" | "yaml" | "vnd.kubernetes.protobuf"
            )
    );
    known && !converts
}

/// The format the answer to a discovery GET takes; `aggregable` is whether the route is `/api`
/// or `/apis`.
///
/// # Errors
/// 406 `NotAcceptable` when no range of `Accept` is one this server writes.
pub(crate) fn negotiate(
    headers: &HeaderMap,
    aggregable: bool,
) -> Result<DiscoveryFormat, ApiError> {
    let Some(value) = headers.get(header::ACCEPT) else {
        return Ok(DiscoveryFormat::Classic);
    };
    let text = value.to_str().unwrap_or("\u{0}");
    if text.trim().is_empty() {
        return Ok(DiscoveryFormat::Classic);
    }
    let ranges = parse_accept(text);
    if aggregable && ranges.iter().any(is_aggregated_v2) {
        return Ok(DiscoveryFormat::Aggregated);
    }
    if ranges.iter().any(accepts_classic) {
        return Ok(DiscoveryFormat::Classic);
    }
    Err(ApiError::not_acceptable("application/json"))
}

/// The `APIGroupDiscoveryList` of the core group (`core`: `/api`) or of the named groups
/// (`/apis`, in the order of `groups`, each with its versions in preference order).
pub(crate) fn document(groups: &[(String, Vec<String>)], defs: &[ResourceDefinition]) -> Value {
    let items: Vec<Value> = groups
        .iter()
        .map(|(group, versions)| {
            let metadata = if group.is_empty() {
                json!({})
            } else {
                json!({"name": group})
            };
            let versions: Vec<Value> = versions
                .iter()
                .map(|version| version_entry(group, version, defs))
                .collect();
            json!({"metadata": metadata, "versions": versions})
        })
        .collect();
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    })
}

fn version_entry(group: &str, version: &str, defs: &[ResourceDefinition]) -> Value {
    let mut served: Vec<&ResourceDefinition> = defs
        .iter()
        .filter(|d| d.group == group && d.version == version)
        .collect();
    served.sort_by(|a, b| a.plural.cmp(&b.plural));
    let resources: Vec<Value> = served.into_iter().map(resource_entry).collect();
    json!({"version": version, "resources": resources, "freshness": "Current"})
}

/// A subresource as both discovery documents list it.
pub(crate) struct Subresource {
    /// Its name after the `/`, e.g. `status`.
    pub(crate) name: &'static str,
    /// What it answers with.
    pub(crate) kind: SubresourceKind,
    /// Its verbs, sorted.
    pub(crate) verbs: &'static [&'static str],
}

/// The kind a subresource answers with.
pub(crate) enum SubresourceKind {
    /// The resource's own kind (`status`, `log`).
    Own,
    /// A core/v1 kind other than the resource's (`PodExecOptions`).
    Core(&'static str),
    /// A kind of another group: (group, version, kind), e.g. `autoscaling/v1` `Scale`.
    Other(&'static str, &'static str, &'static str),
}

/// The subresources served for `def`, by name, as v1.36 lists them: `scale` and `status` where
/// the resource has them, a Pod's `binding` and the streams a kubelet serves (`attach`, `exec`,
/// `log`, `portforward`), a ServiceAccount's `token`. Those this server does not serve
/// (`eviction`, `ephemeralcontainers`, `proxy`, `resize`) are not listed, so a client that reads
/// discovery finds out before it asks.
pub(crate) fn subresources(def: &ResourceDefinition) -> Vec<Subresource> {
    use SubresourceKind::{Core, Other, Own};
    let sub = |name, kind, verbs| Subresource { name, kind, verbs };
    let mut subs = Vec::new();
    match (def.group.as_str(), def.plural.as_str()) {
        ("", "pods") => subs.extend([
            sub("attach", Core("PodAttachOptions"), &["create", "get"][..]),
            sub("binding", Core("Binding"), &["create"]),
            sub("exec", Core("PodExecOptions"), &["create", "get"]),
            sub("log", Own, &["get"]),
            sub(
                "portforward",
                Core("PodPortForwardOptions"),
                &["create", "get"],
            ),
        ]),
        ("", "serviceaccounts") => subs.push(sub(
            "token",
            Other("authentication.k8s.io", "v1", "TokenRequest"),
            &["create"],
        )),
        _ => {}
    }
    if def.scale_subresource.is_some() {
        subs.push(sub(
            "scale",
            Other("autoscaling", "v1", "Scale"),
            &["get", "patch", "update"],
        ));
    }
    if def.status_subresource {
        subs.push(sub("status", Own, &["get", "patch", "update"]));
    }
    subs.sort_by_key(|sub| sub.name);
    subs
}

/// `responseKind` of a resource's own objects: built-in kinds leave group and version empty,
/// custom resources name theirs.
fn own_kind(def: &ResourceDefinition) -> Value {
    if speaks_protobuf(def) {
        json!({"group": "", "version": "", "kind": def.kind})
    } else {
        json!({"group": def.group, "version": def.version, "kind": def.kind})
    }
}

fn resource_entry(def: &ResourceDefinition) -> Value {
    let mut entry = json!({
        "resource": def.plural,
        "responseKind": own_kind(def),
        "scope": if def.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": def.singular_name(),
        "verbs": verbs_of(def),
    });
    if !def.short_names.is_empty() {
        entry["shortNames"] = json!(def.short_names);
    }
    if !def.categories.is_empty() {
        entry["categories"] = json!(def.categories);
    }
    let subresources: Vec<Value> = subresources(def)
        .into_iter()
        .map(|sub| {
            let kind = match sub.kind {
                SubresourceKind::Own => own_kind(def),
                SubresourceKind::Core(kind) => json!({"group": "", "version": "", "kind": kind}),
                SubresourceKind::Other(group, version, kind) => {
                    json!({"group": group, "version": version, "kind": kind})
                }
            };
            json!({"subresource": sub.name, "responseKind": kind, "verbs": sub.verbs})
        })
        .collect();
    if !subresources.is_empty() {
        entry["subresources"] = json!(subresources);
    }
    entry
}

/// The response carrying `document`: 200 with the body, or 304 without one when the client's
/// `If-None-Match` already names its `ETag`.
pub(crate) fn respond(headers: &HeaderMap, document: &Value) -> Response<BoxBody> {
    let body = Bytes::from(document.to_string());
    let digest = ring::digest::digest(&ring::digest::SHA512, &body);
    let hex: String = digest
        .as_ref()
        .iter()
        .map(|byte| format!("{byte:02X}"))
        .collect();
    let etag = format!("\"{hex}\"");
    let unchanged = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|tag| tag.trim() == etag));
    let builder = Response::builder()
        .header(header::CACHE_CONTROL, "public")
        .header(header::ETAG, &etag)
        .header(header::VARY, "Accept");
    let response = if unchanged {
        builder
            .status(StatusCode::NOT_MODIFIED)
            .body(full(Bytes::new()))
    } else {
        builder
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, AGGREGATED_V2)
            .body(full(body))
    };
    response.unwrap_or_else(|_| Response::new(full(Bytes::new())))
}

#[cfg(test)]
#[path = "aggregated_discovery_tests.rs"]
mod tests;
