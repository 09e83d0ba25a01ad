//! Discovery documents: `/version`, `/api`, `/api/v1`, `/apis`, `/apis/<group>`,
//! `/apis/<group>/<version>` (apiserver `endpoints/discovery/*.go`), generated from the registry so
//! CRDs appear and disappear with their definitions.
//!
//! `/api` and `/apis` are also served aggregated (`APIGroupDiscoveryList`, one document holding
//! every group's resources) to a client that asks for it, as from v1.36: see
//! [`super::aggregated_discovery`] for the negotiation and the shape. Both
//! forms are built from the same registry snapshot, so they always agree.

use std::collections::BTreeSet;

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode};
use serde_json::{Value, json};

use crate::apiserver::ApiServer;
use crate::body::BoxBody;
use crate::body::json_response;
use crate::handlers::aggregated_discovery::{self, DiscoveryFormat, SubresourceKind, verbs_of};
use crate::registry::ResourceDefinition;
use crate::request::route::Route;
use crate::status::ApiError;

/// The Kubernetes version this server claims to be: the release its built-in OpenAPI documents
/// come from, so `/version` and the v2 document's `info.version` ("1.36") agree as on a real
/// v1.36 server.
pub(crate) const GIT_VERSION: &str = "v1.36.2";

/// Serves a discovery route (every non-resource GET), aggregated or classic as `headers` ask.
///
/// # Errors
/// 406 when the `Accept` header names nothing this server writes for the route.
pub(crate) fn serve(
    api: &ApiServer,
    route: &Route,
    headers: &HeaderMap,
) -> Result<Response<BoxBody>, ApiError> {
    let state = api.inner.storage.lock();
    let defs: Vec<ResourceDefinition> = state.registry.all().map(|d| (**d).clone()).collect();
    drop(state);
    let aggregable = matches!(route, Route::CoreVersions | Route::GroupList);
    let negotiated = matches!(route, Route::Group(_) | Route::ResourceList(..)) || aggregable;
    if negotiated
        && aggregated_discovery::negotiate(headers, aggregable)? == DiscoveryFormat::Aggregated
    {
        let groups = if matches!(route, Route::CoreVersions) {
            vec![(String::new(), vec!["v1".to_owned()])]
        } else {
            group_names(&defs)
                .into_iter()
                .map(|g| (g.to_owned(), versions_of(g, &defs)))
                .collect()
        };
        let document = aggregated_discovery::document(&groups, &defs);
        return Ok(aggregated_discovery::respond(headers, &document));
    }
    let body = match route {
        Route::Version => version(),
        Route::Health => return Ok(json_response(StatusCode::OK, Bytes::from_static(b"ok"))),
        Route::CoreVersions => json!({
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": *api.inner.address.lock()}],
        }),
        Route::GroupList => group_list(&defs),
        Route::Group(name) => {
            let mut group = group_entry(name, &defs);
            if let Some(map) = group.as_object_mut() {
                map.insert("kind".into(), "APIGroup".into());
                map.insert("apiVersion".into(), "v1".into());
            }
            group
        }
        Route::ResourceList(group, version) => resource_list(group, version, &defs),
        Route::Resource(_) | Route::OpenApi(_) | Route::OpenIdConfiguration | Route::Jwks => {
            Value::Null
        }
    };
    Ok(json_response(StatusCode::OK, Bytes::from(body.to_string())))
}

fn version() -> Value {
    json!({
        "major": "1",
        "minor": "36",
        "emulationMajor": "1",
        "emulationMinor": "36",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "35",
        "gitVersion": GIT_VERSION,
        "gitCommit": "98b35193b2ac7a23a673325f5e9b830ecd5ba406",
        "gitTreeState": "clean",
        "buildDate": "2026-11-23T19:42:23Z",
        "goVersion": "go1.27.3",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

/// Versions of a group, newest-looking first (v1 before v1beta1 before v1alpha1), as the real
/// server orders them by priority.
fn versions_of(group: &str, defs: &[ResourceDefinition]) -> Vec<String> {
    let mut versions: Vec<String> = defs
        .iter()
        .filter(|d| d.group == group)
        .map(|d| d.version.clone())
        .collect();
    versions.sort_by_key(|v| version_priority(v));
    versions.dedup();
    versions
}

/// Kubernetes version priority: GA > beta > alpha, higher numbers first.
fn version_priority(version: &str) -> (u8, std::cmp::Reverse<u32>, std::cmp::Reverse<u32>) {
    let rest = version.strip_prefix('v').unwrap_or(version);
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let major = digits.parse().unwrap_or(0);
    let tail = &rest[digits.len()..];
    let (rank, minor_text) = if tail.is_empty() {
        (0, "")
    } else if let Some(t) = tail.strip_prefix("beta") {
        (1, t)
    } else if let Some(t) = tail.strip_prefix("alpha") {
        (2, t)
    } else {
        (3, "")
    };
    (
        rank,
        std::cmp::Reverse(major),
        std::cmp::Reverse(minor_text.parse().unwrap_or(0)),
    )
}

fn group_entry(group: &str, defs: &[ResourceDefinition]) -> Value {
    let versions: Vec<Value> = versions_of(group, defs)
        .iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    let preferred = versions.first().cloned().unwrap_or(Value::Null);
    json!({"name": group, "versions": versions, "preferredVersion": preferred})
}

/// The named groups (not the core group), in the order both `/apis` documents list them.
fn group_names(defs: &[ResourceDefinition]) -> Vec<&str> {
    let groups: BTreeSet<&str> = defs
        .iter()
        .filter(|d| !d.group.is_empty())
        .map(|d| d.group.as_str())
        .collect();
    groups.into_iter().collect()
}

fn group_list(defs: &[ResourceDefinition]) -> Value {
    let groups: Vec<Value> = group_names(defs)
        .into_iter()
        .map(|g| group_entry(g, defs))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

fn resource_list(group: &str, version: &str, defs: &[ResourceDefinition]) -> Value {
    let mut resources = Vec::new();
    for def in defs
        .iter()
        .filter(|d| d.group == group && d.version == version)
    {
        let mut entry = json!({
            "name": def.plural,
            "singularName": def.singular_name(),
            "namespaced": def.namespaced,
            "kind": def.kind,
            "verbs": verbs_of(def),
        });
        if !def.short_names.is_empty() {
            entry["shortNames"] = json!(def.short_names);
        }
        if !def.categories.is_empty() {
            entry["categories"] = json!(def.categories);
        }
        resources.push(entry);
        for sub in aggregated_discovery::subresources(def) {
            let mut entry = json!({
                "name": format!("{}/{}", def.plural, sub.name),
                "singularName": "",
                "namespaced": def.namespaced,
                "kind": def.kind,
                "verbs": sub.verbs,
            });
            match sub.kind {
                SubresourceKind::Own => {}
                SubresourceKind::Core(kind) => entry["kind"] = kind.into(),
                SubresourceKind::Other(group, version, kind) => {
                    entry["group"] = group.into();
                    entry["version"] = version.into();
                    entry["kind"] = kind.into();
                }
            }
            resources.push(entry);
        }
    }
    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_ga_then_beta_then_alpha() {
        let mut v = vec!["v1alpha1", "v1beta1", "v2", "v1", "v1beta2"];
        v.sort_by_key(|x| version_priority(x));
        assert_eq!(v, vec!["v2", "v1", "v1beta2", "v1beta1", "v1alpha1"]);
    }
}
