//! A hand-written stand-in for the generated `WhiteList` type (police.example.com/v1beta1), so the
//! fake's tests do not depend on codegen output.

use std::borrow::Cow;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube_core::{NamespaceResourceScope, Resource};
use serde::{Deserialize, Serialize};

/// Allowed images of a namespace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WhiteList {
    pub api_version: String,
    pub kind: String,
    pub metadata: ObjectMeta,
    pub spec: WhiteListSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<WhiteListStatus>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WhiteListSpec {
    pub images: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WhiteListStatus {
    pub violations: i64,
}

impl WhiteList {
    pub fn new(namespace: &str, name: &str, images: &[&str]) -> WhiteList {
        WhiteList {
            api_version: "police.example.com/v1beta1".to_owned(),
            kind: "WhiteList".to_owned(),
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some(namespace.to_owned()),
                ..ObjectMeta::default()
            },
            spec: WhiteListSpec {
                images: images.iter().map(|s| s.to_string()).collect(),
            },
            status: None,
        }
    }
}

impl Resource for WhiteList {
    type DynamicType = ();
    type Scope = NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        "WhiteList".into()
    }
    fn group(_: &()) -> Cow<'_, str> {
        "police.example.com".into()
    }
    fn version(_: &()) -> Cow<'_, str> {
        "v1beta1".into()
    }
    fn plural(_: &()) -> Cow<'_, str> {
        "whitelists".into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// A cluster-scoped custom kind without status (clusterprovisioner.example.com/v1alpha1).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cluster {
    pub api_version: String,
    pub kind: String,
    pub metadata: ObjectMeta,
}

impl Cluster {
    pub fn new(name: &str) -> Cluster {
        Cluster {
            api_version: "clusterprovisioner.example.com/v1alpha1".to_owned(),
            kind: "Cluster".to_owned(),
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                ..ObjectMeta::default()
            },
        }
    }
}

impl Resource for Cluster {
    type DynamicType = ();
    type Scope = kube_core::ClusterResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        "Cluster".into()
    }
    fn group(_: &()) -> Cow<'_, str> {
        "clusterprovisioner.example.com".into()
    }
    fn version(_: &()) -> Cow<'_, str> {
        "v1alpha1".into()
    }
    fn plural(_: &()) -> Cow<'_, str> {
        "clusters".into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}
