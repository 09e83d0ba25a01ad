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
//! One generic client instead of a separate dynamic and metadata package: the object type
//! (`DynamicObject` or `PartialObjectMeta<DynamicObject>`) picks what is read. Discovery itself
//! (aggregated or classic, cached) is in [`discovery`](crate::discovery).

use kube_core::DynamicObject;
use kube_core::discovery::ApiResource;
use kube_core::metadata::PartialObjectMeta;

use crate::client::Client;
use crate::discovery::{group_version, server_resources};
use crate::error::Result;
use crate::representation::Representation;
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
    /// Group versions whose resources could not be read, with the reason.
    pub failed: Vec<(String, String)>,
}

/// The resources every group serves in its preferred version (client-go
/// `ServerPreferredResources`), read through [`server_resources`]: aggregated discovery where
/// the server serves it, else `/api`, `/apis` and each group version's document.
///
/// # Errors
/// When `/api` or `/apis` cannot be read; a failing group version lands in
/// [`Discovery::failed`] instead.
pub async fn discover(client: &Client) -> Result<Discovery> {
    let found = server_resources(client).await?;
    let resources = found
        .preferred()
        .into_iter()
        .map(|(group, version, entry)| ServedResource {
            resource: ApiResource {
                group: group.to_owned(),
                version: version.to_owned(),
                api_version: group_version(group, version),
                kind: entry.kind.clone(),
                plural: entry.name.clone(),
            },
            namespaced: entry.namespaced,
            verbs: entry.verbs.clone(),
        })
        .collect();
    Ok(Discovery {
        resources,
        failed: found.failed.into_iter().collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
