//! Discovery: what groups, versions and resources a server serves, read in as few requests as
//! the server allows. Mirrors client-go `discovery/discovery_client.go`
//! (`GroupsAndMaybeResources`, `ServerGroupsAndResources`, `ServerPreferredResources`); the caches
//! are in [`cache`] and the kind ↔ resource mapping in
//! [`rest_mapper`].
//!
//! # Aggregated first, classic where not served
//! `/api` and `/apis` are asked for with client-go v1.36's `Accept` header
//! ([`ACCEPT_DISCOVERY`]: `apidiscovery.k8s.io` `v2`, then `v2beta1`, then plain JSON). What came
//! back is told by the response's `Content-Type`, parameters in any order, as client-go's
//! `ContentTypeIsGVK` does:
//! - `application/json;g=apidiscovery.k8s.io;v=v2[beta1];as=APIGroupDiscoveryList`: the whole API
//!   in two documents (1.26+ serve it; 1.26–1.29 as `v2beta1`, 1.30+ as `v2`). A version marked
//!   `Stale` is reported as failed, not trusted.
//! - anything else: the classic `APIVersions` / `APIGroupList` (1.15 answers so), and then one
//!   `APIResourceList` per group version (`/api/v1`, `/apis/<group>/<version>`), fetched in
//!   parallel; one that fails is reported in [`ServerResources::failed`] and the rest are kept
//!   (client-go's `ErrGroupDiscoveryFailed` partial answer).
//!
//! # JSON, not protobuf
//! Discovery is read once and then cached (memory, disk), so its wire cost hardly matters; the
//! aggregated document has no protobuf message in `kubegen-codec`, and JSON is what kubectl's
//! disk cache holds and what every server from 1.15 on answers. So discovery is always JSON,
//! whatever [`WireFormat`](crate::WireFormat) the client uses for objects.

pub mod cache;
mod documents;
pub mod rest_mapper;

use std::collections::BTreeMap;

use bytes::Bytes;
use tokio::task::JoinSet;

pub use documents::{ApiGroup, ApiGroupList, ApiResourceEntry, ApiResourceList, GroupVersionRef};
use documents::{ApiVersions, GroupDiscoveryList, Split};

use crate::client::{Client, read_body};
use crate::error::{Error, Result};

/// The `Accept` header of client-go v1.36's discovery requests (`acceptDiscoveryFormats`).
pub const ACCEPT_DISCOVERY: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

/// Everything discovery found: client-go's `GroupsAndMaybeResources` with the resources always
/// filled in.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerResources {
    /// The groups, core group (named `""`) first, then in the server's priority order; each
    /// group's versions in the server's preference order.
    pub groups: Vec<ApiGroup>,
    /// The resource list of every group version that could be read, by group version (`v1`,
    /// `apps/v1`).
    pub resources: BTreeMap<String, ApiResourceList>,
    /// Group versions whose resources could not be read (their document failed, or aggregated
    /// discovery marked them stale), with the reason.
    pub failed: BTreeMap<String, String>,
    /// Whether the server answered with aggregated discovery.
    pub aggregated: bool,
}

impl ServerResources {
    /// The top-level resources (no subresources) of every group in its preferred version, or,
    /// for a resource its preferred version does not serve, in the first version that does
    /// (client-go `ServerPreferredResources`). Each item is `(group, version, resource)`.
    pub fn preferred(&self) -> Vec<(&str, &str, &ApiResourceEntry)> {
        let mut chosen: Vec<(&str, &str, &ApiResourceEntry)> = Vec::new();
        for group in &self.groups {
            let preferred = group.preferred_version.as_ref().map(|v| v.version.as_str());
            let mut ordered: Vec<&GroupVersionRef> = group.versions.iter().collect();
            ordered.sort_by_key(|v| Some(v.version.as_str()) != preferred);
            for version in ordered {
                let Some(list) = self.resources.get(&version.group_version) else {
                    continue;
                };
                for entry in list.resources.iter().filter(|r| !r.name.contains('/')) {
                    let taken = chosen
                        .iter()
                        .any(|(g, _, r)| *g == group.name && r.name == entry.name);
                    if !taken {
                        chosen.push((&group.name, &version.version, entry));
                    }
                }
            }
        }
        chosen
    }
}

/// The group version string of `group` and `version`: `v1` for the core group.
pub(crate) fn group_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    }
}

/// The discovery path of a group version: `/api/v1` or `/apis/<group>/<version>`.
fn group_version_path(group_version: &str) -> String {
    if group_version.contains('/') {
        format!("/apis/{group_version}")
    } else {
        format!("/api/{group_version}")
    }
}

/// Which form a discovery response's `Content-Type` announces.
#[derive(Debug, PartialEq, Eq)]
enum Form {
    Aggregated,
    Classic,
}

/// Reads a `Content-Type`: aggregated when it is JSON with `g=apidiscovery.k8s.io`, `v=v2` or
/// `v2beta1` and `as=APIGroupDiscoveryList`, parameters in any order, others ignored.
fn form_of(content_type: &str) -> Form {
    let mut parts = content_type.split(';').map(str::trim);
    let base = parts.next().unwrap_or_default();
    let params: BTreeMap<String, String> = parts
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| {
            (
                k.trim().to_ascii_lowercase(),
                v.trim().trim_matches('"').to_owned(),
            )
        })
        .collect();
    let param = |name: &str| params.get(name).map(String::as_str);
    let aggregated = base.eq_ignore_ascii_case("application/json")
        && param("g") == Some("apidiscovery.k8s.io")
        && matches!(param("v"), Some("v2" | "v2beta1"))
        && param("as") == Some("APIGroupDiscoveryList");
    if aggregated {
        Form::Aggregated
    } else {
        Form::Classic
    }
}

/// GETs `path` accepting `accept`: the body and the form its `Content-Type` announces.
async fn get(client: &Client, path: &str, accept: &str) -> Result<(Vec<u8>, Form)> {
    let request = http::Request::get(path)
        .header(http::header::ACCEPT, accept)
        .body(Bytes::new())
        .map_err(|e| Error::BuildRequest(format!("GET {path}: {e}")))?;
    let read = async {
        let mut response = client.send(request).await?;
        let content_type = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let body = read_body(response.body_mut(), "GET", path).await?;
        Ok((body, form_of(&content_type)))
    };
    client.with_timeout("GET", path, read).await
}

fn decode<T: serde::de::DeserializeOwned>(path: &str, body: &[u8]) -> Result<T> {
    serde_json::from_slice(body).map_err(|source| Error::Decode {
        what: format!("discovery document {path}"),
        excerpt: crate::error::excerpt(body),
        source,
    })
}

/// One of `/api` and `/apis`, read: its groups, and their resources when aggregated.
struct Root {
    groups: Vec<ApiGroup>,
    split: Option<Split>,
}

async fn read_root(client: &Client, path: &str, accept: &str) -> Result<Root> {
    let (body, form) = match get(client, path, accept).await {
        Ok(answer) => answer,
        // Tolerated as client-go does: an aggregated API server may serve no `/api`.
        Err(e) if e.is_not_found() && path == "/api" => {
            return Ok(Root {
                groups: Vec::new(),
                split: None,
            });
        }
        Err(e) => return Err(e),
    };
    if form == Form::Aggregated {
        let split = documents::split(decode::<GroupDiscoveryList>(path, &body)?);
        return Ok(Root {
            groups: split.groups.clone(),
            split: Some(split),
        });
    }
    let groups = if path == "/api" {
        let versions: ApiVersions = decode(path, &body)?;
        core_group(versions.versions)
    } else {
        decode::<ApiGroupList>(path, &body)?.groups
    };
    Ok(Root {
        groups,
        split: None,
    })
}

/// The core group of an `APIVersions` document (none when it lists no version).
fn core_group(versions: Vec<String>) -> Vec<ApiGroup> {
    if versions.is_empty() {
        return Vec::new();
    }
    let versions: Vec<GroupVersionRef> = versions
        .into_iter()
        .map(|v| GroupVersionRef {
            group_version: v.clone(),
            version: v,
        })
        .collect();
    vec![ApiGroup {
        name: String::new(),
        preferred_version: versions.first().cloned(),
        versions,
    }]
}

/// Reads the server's whole API, aggregated where served (see the module doc).
///
/// # Errors
/// When `/api` or `/apis` cannot be read or decoded; a failing group version lands in
/// [`ServerResources::failed`] instead.
pub async fn server_resources(client: &Client) -> Result<ServerResources> {
    fetch(client, ACCEPT_DISCOVERY).await
}

/// [`server_resources`] asking with `accept` (tests ask for the classic form with
/// `application/json`, as client-go's `UseLegacyDiscovery` does).
pub(crate) async fn fetch(client: &Client, accept: &str) -> Result<ServerResources> {
    let core = read_root(client, "/api", accept).await?;
    let apis = read_root(client, "/apis", accept).await?;
    let mut out = ServerResources {
        groups: core.groups,
        ..ServerResources::default()
    };
    out.groups.extend(apis.groups);
    if let (Some(core), Some(apis)) = (core.split, apis.split) {
        out.aggregated = true;
        for split in [core, apis] {
            out.resources.extend(split.resources);
            for stale in split.stale {
                let reason = format!("the group version {stale} is stale in aggregated discovery");
                out.failed.insert(stale, reason);
            }
        }
        return Ok(out);
    }
    let mut fetches = JoinSet::new();
    for group in &out.groups {
        for version in &group.versions {
            let (client, group_version) = (client.clone(), version.group_version.clone());
            fetches.spawn(async move {
                let path = group_version_path(&group_version);
                let list = match get(&client, &path, "application/json").await {
                    Ok((body, _)) => decode::<ApiResourceList>(&path, &body),
                    // client-go tolerates a core group without `/api/v1`.
                    Err(e) if e.is_not_found() && group_version == "v1" => {
                        Ok(ApiResourceList::default())
                    }
                    Err(e) => Err(e),
                };
                (group_version, list)
            });
        }
    }
    while let Some(joined) = fetches.join_next().await {
        let Ok((group_version, list)) = joined else {
            continue;
        };
        match list {
            Ok(mut list) => {
                list.group_version.clone_from(&group_version);
                out.resources.insert(group_version, list);
            }
            Err(e) => {
                out.failed.insert(group_version, e.to_string());
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
#[path = "discovery_tests.rs"]
mod tests;
