//! Resources known only at run time: [`ResourceClient<DynamicObject>`] and its metadata-only
//! twin, addressed by kube-core's [`ApiResource`], and [`discover`], which finds what a server
//! serves.
//!
//! Mirrors client-go's `dynamic/simple.go` (`dynamic.NewForConfig(...).Resource(gvr)`),
//! `metadata/metadata.go` (`metadata.Client.Resource(gvr)`) and the part of
//! `discovery/discovery_client.go` that controllers use (`ServerPreferredResources`). A garbage
//! collector or a namespace deleter must reach every resource the server serves, custom resources
//! included, without compiling a type for each: the verbs are [`ResourceClient`]'s own, written
//! once, with the path taken from the `ApiResource` instead of a `Resource` impl.
//!
//! # Differences from client-go
//! - One generic client instead of a separate dynamic and metadata package: the object type
//!   (`DynamicObject` or `PartialObjectMeta<DynamicObject>`) picks what is read.
//! - Discovery reads the per-group documents (`/api`, `/api/v1`, `/apis`, `/apis/<g>/<v>`), which
//!   every server from 1.15 on serves; aggregated discovery is not asked for.

use bytes::Bytes;
use kube_core::DynamicObject;
use kube_core::discovery::ApiResource;
use kube_core::metadata::PartialObjectMeta;
use serde::Deserialize;

use crate::client::Client;
use crate::error::{Error, Result};
use crate::metadata::Representation;
use crate::request::ResourcePath;
use crate::resource_client::ResourceClient;

fn path_of(resource: &ApiResource, namespace: Option<&str>) -> ResourcePath {
    ResourcePath::new(
        &resource.group,
        &resource.version,
        &resource.plural,
        namespace,
    )
}

impl ResourceClient<DynamicObject> {
    /// Whole objects of `resource` in `namespace` (`None`: all namespaces, or the cluster for a
    /// cluster-scoped resource). Reads are JSON, as client-go's dynamic client's are.
    pub fn dynamic(client: Client, resource: &ApiResource, namespace: Option<&str>) -> Self {
        let path = path_of(resource, namespace);
        ResourceClient::at(client, path, Representation::Object, None)
    }
}

impl ResourceClient<PartialObjectMeta<DynamicObject>> {
    /// Metadata only (`PartialObjectMetadata`, in protobuf when the client's wire format is) of
    /// `resource` in `namespace`; writes (delete, patch) go to the same paths.
    pub fn dynamic_metadata(
        client: Client,
        resource: &ApiResource,
        namespace: Option<&str>,
    ) -> Self {
        let path = path_of(resource, namespace);
        let format = client.policies().wire_format;
        let proto = Representation::Metadata.proto_kind(format, "", "");
        ResourceClient::at(client, path, Representation::Metadata, proto)
    }
}

/// One resource a server serves, in its group's preferred version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServedResource {
    /// Group, version, kind and plural.
    pub resource: ApiResource,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// The verbs discovery lists (`get`, `list`, `watch`, `delete`, `deletecollection`, ...).
    pub verbs: Vec<String>,
}

impl ServedResource {
    /// Whether discovery lists `verb` for it.
    pub fn supports(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }
}

/// What [`discover`] found: the resources of every group version it could read, and the group
/// versions it could not (client-go's `ErrGroupDiscoveryFailed`), so a caller can go on with a
/// partial answer as the namespace controller and the garbage collector do.
#[derive(Debug, Default)]
pub struct Discovery {
    /// Top-level resources (no subresources), core group first, then groups in server order.
    pub resources: Vec<ServedResource>,
    /// Group versions whose document failed, with the error.
    pub failed: Vec<(String, Error)>,
}

#[derive(Deserialize)]
struct ApiVersions {
    #[serde(default)]
    versions: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GroupList {
    #[serde(default)]
    groups: Vec<Group>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Group {
    name: String,
    #[serde(default)]
    versions: Vec<GroupVersion>,
    preferred_version: Option<GroupVersion>,
}

#[derive(Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GroupVersion {
    version: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResourceList {
    #[serde(default)]
    resources: Vec<ResourceEntry>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResourceEntry {
    name: String,
    kind: String,
    #[serde(default)]
    namespaced: bool,
    #[serde(default)]
    verbs: Vec<String>,
}

async fn get_json<T: serde::de::DeserializeOwned>(client: &Client, path: &str) -> Result<T> {
    let request = http::Request::get(path)
        .header(http::header::ACCEPT, "application/json")
        .body(Bytes::new())
        .map_err(|e| Error::BuildRequest(format!("GET {path}: {e}")))?;
    client.request_json(request).await
}

/// The resources every group serves in its preferred version (client-go
/// `ServerPreferredResources`): `/api` and `/api/v1`, then `/apis` and each group's preferred
/// `/apis/<group>/<version>`.
///
/// # Errors
/// When `/api` or `/apis` cannot be read; a failing group version lands in
/// [`Discovery::failed`] instead.
pub async fn discover(client: &Client) -> Result<Discovery> {
    let core: ApiVersions = get_json(client, "/api").await?;
    let groups: GroupList = get_json(client, "/apis").await?;
    let mut versions: Vec<(String, String)> = Vec::new();
    if let Some(version) = core
        .versions
        .iter()
        .find(|v| *v == "v1")
        .or(core.versions.first())
    {
        versions.push((String::new(), version.clone()));
    }
    for group in groups.groups {
        let preferred = group
            .preferred_version
            .or_else(|| group.versions.first().cloned());
        if let Some(preferred) = preferred {
            versions.push((group.name, preferred.version));
        }
    }
    let mut discovery = Discovery::default();
    for (group, version) in versions {
        let api_version = if group.is_empty() {
            version.clone()
        } else {
            format!("{group}/{version}")
        };
        let path = if group.is_empty() {
            format!("/api/{version}")
        } else {
            format!("/apis/{api_version}")
        };
        match get_json::<ResourceList>(client, &path).await {
            Ok(list) => discovery.resources.extend(served(&group, &version, list)),
            Err(e) => discovery.failed.push((api_version, e)),
        }
    }
    Ok(discovery)
}

/// The top-level resources of one group version's document.
fn served(group: &str, version: &str, list: ResourceList) -> impl Iterator<Item = ServedResource> {
    let api_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    let (group, version) = (group.to_owned(), version.to_owned());
    list.resources
        .into_iter()
        .filter(|entry| !entry.name.contains('/'))
        .map(move |entry| ServedResource {
            resource: ApiResource {
                group: group.clone(),
                version: version.clone(),
                api_version: api_version.clone(),
                kind: entry.kind,
                plural: entry.name,
            },
            namespaced: entry.namespaced,
            verbs: entry.verbs,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_version_document_yields_its_top_level_resources_only() -> serde_json::Result<()> {
        let list: ResourceList = serde_json::from_value(serde_json::json!({
            "resources": [
                {"name": "deployments", "kind": "Deployment", "namespaced": true, "verbs": ["get", "list", "delete"]},
                {"name": "deployments/scale", "kind": "Scale", "namespaced": true, "verbs": ["get"]},
            ]
        }))?;
        let found: Vec<_> = served("apps", "v1", list).collect();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].resource.api_version, "apps/v1");
        assert_eq!(found[0].resource.plural, "deployments");
        assert!(found[0].namespaced);
        assert!(found[0].supports("delete"));
        assert!(!found[0].supports("deletecollection"));
        Ok(())
    }

    #[test]
    fn dynamic_clients_address_the_resource_they_are_given() {
        let resource = ApiResource {
            group: "example.com".into(),
            version: "v1".into(),
            api_version: "example.com/v1".into(),
            kind: "Widget".into(),
            plural: "widgets".into(),
        };
        assert_eq!(
            path_of(&resource, Some("ns")).collection(),
            "/apis/example.com/v1/namespaces/ns/widgets"
        );
        assert_eq!(
            path_of(&resource, None).collection(),
            "/apis/example.com/v1/widgets"
        );
    }
}
