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
