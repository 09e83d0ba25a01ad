//! The discovery documents' JSON shapes: the classic ones (`APIVersions`, `APIGroupList`,
//! `APIResourceList`, apimachinery `pkg/apis/meta/v1/types.go`) and the aggregated
//! `APIGroupDiscoveryList` (`k8s.io/api/apidiscovery/v2`, same JSON in `v2beta1`), and the
//! conversion of the latter into the former (client-go `discovery/aggregated_discovery.go`,
//! `SplitGroupsAndResources`).
//!
//! # Why our own types
//! k8s-openapi's `APIResource` and `APIGroup` change shape between the Kubernetes versions it is
//! built for (fields becoming required), and a library never picks that version; these structs
//! read every server from 1.15 on and write the exact JSON kubectl keeps in its disk cache.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// `/api`: the versions of the core group.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ApiVersions {
    #[serde(default)]
    pub(crate) versions: Vec<String>,
}

/// `/apis` (client-go `metav1.APIGroupList`), also kubectl's cached `servergroups.json`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiGroupList {
    /// The groups, in the server's priority order.
    #[serde(default)]
    pub groups: Vec<ApiGroup>,
}

/// One API group and its versions (client-go `metav1.APIGroup`); the core group has name `""`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiGroup {
    /// `apps`, `police.example.com`, or `""` for the core group.
    pub name: String,
    /// Served versions, in the server's preference order.
    #[serde(default)]
    pub versions: Vec<GroupVersionRef>,
    /// The version the server prefers (the first of `versions` on every real server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_version: Option<GroupVersionRef>,
}

/// A version of a group (client-go `metav1.GroupVersionForDiscovery`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupVersionRef {
    /// `apps/v1`, or `v1` for the core group.
    pub group_version: String,
    /// `v1`.
    pub version: String,
}

/// `/api/v1`, `/apis/<group>/<version>` (client-go `metav1.APIResourceList`), also kubectl's
/// cached `serverresources.json`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiResourceList {
    /// `apps/v1`, or `v1`.
    #[serde(default)]
    pub group_version: String,
    /// The resources, subresources (`deployments/status`) included.
    #[serde(default)]
    pub resources: Vec<ApiResourceEntry>,
}

/// One resource or subresource of a group version (client-go `metav1.APIResource`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiResourceEntry {
    /// Plural (`deployments`) or `resource/subresource` (`deployments/scale`).
    pub name: String,
    /// `deployment`; empty for subresources and on servers that do not say (1.15 built-ins).
    #[serde(default)]
    pub singular_name: String,
    /// Whether objects live in namespaces.
    #[serde(default)]
    pub namespaced: bool,
    /// The group of the objects served, when it differs from the list's (`autoscaling` for a
    /// scale subresource).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The version of the objects served, when it differs from the list's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// `Deployment`, or `Scale` for a scale subresource.
    pub kind: String,
    /// `get`, `list`, `watch`, `create`, ...
    #[serde(default)]
    pub verbs: Vec<String>,
    /// `deploy` (`kubectl get deploy`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub short_names: Vec<String>,
    /// `all`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
}

/// `apidiscovery.k8s.io/v2` (or `v2beta1`) `APIGroupDiscoveryList`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct GroupDiscoveryList {
    #[serde(default)]
    pub(crate) items: Vec<GroupDiscovery>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct GroupDiscovery {
    #[serde(default)]
    metadata: NameOnly,
    #[serde(default)]
    versions: Vec<VersionDiscovery>,
}

#[derive(Debug, Default, Deserialize)]
struct NameOnly {
    #[serde(default)]
    name: String,
}

#[derive(Debug, Default, Deserialize)]
struct VersionDiscovery {
    #[serde(default)]
    version: String,
    #[serde(default)]
    resources: Vec<ResourceDiscovery>,
    /// `Current` or `Stale` (an aggregated API server whose document is out of date).
    #[serde(default)]
    freshness: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResourceDiscovery {
    resource: String,
    response_kind: Option<ResponseKind>,
    #[serde(default)]
    scope: String,
    #[serde(default)]
    singular_resource: String,
    #[serde(default)]
    verbs: Vec<String>,
    #[serde(default)]
    short_names: Vec<String>,
    #[serde(default)]
    categories: Vec<String>,
    #[serde(default)]
    subresources: Vec<SubresourceDiscovery>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SubresourceDiscovery {
    subresource: String,
    response_kind: Option<ResponseKind>,
    #[serde(default)]
    verbs: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
struct ResponseKind {
    #[serde(default)]
    group: String,
    #[serde(default)]
    version: String,
    #[serde(default)]
    kind: String,
}

/// `Some(text)` unless `text` is empty.
fn non_empty(text: String) -> Option<String> {
    (!text.is_empty()).then_some(text)
}

/// What an aggregated document says, split as the classic documents say it.
#[derive(Debug, Default)]
pub(crate) struct Split {
    pub(crate) groups: Vec<ApiGroup>,
    pub(crate) resources: BTreeMap<String, ApiResourceList>,
    /// Group versions marked `Stale`: their resources are not trusted (client-go
    /// `StaleGroupVersionError`).
    pub(crate) stale: Vec<String>,
}

/// Splits an `APIGroupDiscoveryList` into groups and per-group-version resource lists, as
/// client-go's `SplitGroupsAndResources` does: a stale version is left out of its group and
/// reported; the preferred version is the first one served; a resource without a
/// `responseKind` is skipped.
pub(crate) fn split(list: GroupDiscoveryList) -> Split {
    let mut out = Split::default();
    for item in list.items {
        let group = item.metadata.name;
        let mut versions = Vec::new();
        for version in item.versions {
            let group_version = if group.is_empty() {
                version.version.clone()
            } else {
                format!("{group}/{}", version.version)
            };
            if version.freshness == "Stale" {
                out.stale.push(group_version);
                continue;
            }
            let resources = version.resources.into_iter().flat_map(entries).collect();
            out.resources.insert(
                group_version.clone(),
                ApiResourceList {
                    group_version: group_version.clone(),
                    resources,
                },
            );
            versions.push(GroupVersionRef {
                group_version,
                version: version.version,
            });
        }
        let preferred_version = versions.first().cloned();
        out.groups.push(ApiGroup {
            name: group,
            versions,
            preferred_version,
        });
    }
    out
}

/// The classic entries of one aggregated resource: itself, then its subresources.
fn entries(resource: ResourceDiscovery) -> Vec<ApiResourceEntry> {
    let Some(kind) = resource.response_kind else {
        return Vec::new();
    };
    let namespaced = resource.scope == "Namespaced";
    let mut out = vec![ApiResourceEntry {
        name: resource.resource.clone(),
        singular_name: resource.singular_resource,
        namespaced,
        group: non_empty(kind.group),
        version: non_empty(kind.version),
        kind: kind.kind,
        verbs: resource.verbs,
        short_names: resource.short_names,
        categories: resource.categories,
    }];
    for sub in resource.subresources {
        let Some(kind) = sub.response_kind else {
            continue;
        };
        out.push(ApiResourceEntry {
            name: format!("{}/{}", resource.resource, sub.subresource),
            namespaced,
            group: non_empty(kind.group),
            version: non_empty(kind.version),
            kind: kind.kind,
            verbs: sub.verbs,
            ..ApiResourceEntry::default()
        });
    }
    out
}
