//! Discovery documents: `/version`, `/api`, `/api/v1`, `/apis`, `/apis/<group>`,
//! `/apis/<group>/<version>` (apiserver `endpoints/discovery/*.go`), generated from the registry so
//! CRDs appear and disappear with their definitions.
//!
//! Only the classic (unaggregated) documents are served; a client asking for aggregated discovery
//! (`application/json;g=apidiscovery.k8s.io;v=v2`) gets the classic form, as from an older server.

use std::collections::BTreeMap;

use bytes::Bytes;
use http::{Response, StatusCode};
use serde_json::{Value, json};

use crate::apiserver::ApiServer;
use crate::body::BoxBody;
use crate::body::json_response;
use crate::registry::ResourceDefinition;
use crate::request::route::Route;

/// The Kubernetes version this server claims to be: the release its built-in OpenAPI documents
/// come from, so `/version` and the v2 document's `info.version` ("1.36") agree as on a real
/// v1.36 server.
pub(crate) const GIT_VERSION: &str = "v1.36.2";

/// Serves a discovery route (every non-resource GET).
pub(crate) fn serve(api: &ApiServer, route: &Route) -> Response<BoxBody> {
    let state = api.inner.storage.lock();
    let defs: Vec<ResourceDefinition> = state.registry.all().map(|d| (**d).clone()).collect();
    drop(state);
    let body = match route {
        Route::Version => version(),
        Route::Health => return json_response(StatusCode::OK, Bytes::from_static(b"ok")),
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
        Route::Resource(_) | Route::OpenApi(_) => Value::Null,
    };
    json_response(StatusCode::OK, Bytes::from(body.to_string()))
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

fn group_list(defs: &[ResourceDefinition]) -> Value {
    let mut groups: BTreeMap<&str, ()> = BTreeMap::new();
    for def in defs.iter().filter(|d| !d.group.is_empty()) {
        groups.insert(&def.group, ());
    }
    let groups: Vec<Value> = groups.keys().map(|g| group_entry(g, defs)).collect();
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
            "verbs": def.verb_list(),
        });
        if !def.short_names.is_empty() {
            entry["shortNames"] = json!(def.short_names);
        }
        if !def.categories.is_empty() {
            entry["categories"] = json!(def.categories);
        }
        resources.push(entry);
        if def.scale_subresource.is_some() {
            resources.push(json!({
                "name": format!("{}/scale", def.plural),
                "singularName": "",
                "namespaced": def.namespaced,
                "group": "autoscaling",
                "version": "v1",
                "kind": "Scale",
                "verbs": ["get", "patch", "update"],
            }));
        }
        if def.status_subresource {
            resources.push(json!({
                "name": format!("{}/status", def.plural),
                "singularName": "",
                "namespaced": def.namespaced,
                "kind": def.kind,
                "verbs": ["get", "patch", "update"],
            }));
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
