//! Installing CustomResourceDefinitions on every server the controller supports (Kubernetes 1.15
//! on): which manifest a server takes, the `apiextensions.k8s.io/v1beta1` kind k8s-openapi no
//! longer has, and waiting until a created CRD is served. Used by [`crate::manifests`].
//!
//! # Why discovery decides
//! `deploy/crd.yaml` is `apiextensions.k8s.io/v1`, which servers before 1.16 do not serve;
//! `deploy/crd-v1beta1.yaml` holds the same CRDs as `v1beta1`, which servers from 1.22 on no longer
//! serve. Guessing from the server's version string would break on distributions that backport or
//! disable APIs, so [`crd_manifest`] asks discovery (`GET /apis/apiextensions.k8s.io`, as
//! `kubectl api-versions` does) which versions the server serves and takes v1 when it can.
//!
//! # Differences from client-go
//! client-go would create v1beta1 CRDs through its typed `apiextensions/v1beta1` client; k8s-openapi
//! dropped that version with Kubernetes 1.22, so [`CustomResourceDefinitionV1beta1`] is a minimal
//! stand-in here: typed metadata (name, for messages and `get`) and the spec passed through as
//! JSON, exactly as written in the manifest.

use std::path::{Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{APIGroup, ObjectMeta};
use kubegen_client::{ApiObject, Client, GetOptions, ResourceClient};
use serde::ser::SerializeStruct as _;
use serde_json::Value;

use crate::error::ManifestError;

/// The discovery path of the CRD API group.
pub const DISCOVERY_PATH: &str = "/apis/apiextensions.k8s.io";
/// The CRD manifest for servers that serve `apiextensions.k8s.io/v1` (1.16 on).
pub const CRD_V1: &str = "crd.yaml";
/// The CRD manifest for servers that serve only `apiextensions.k8s.io/v1beta1` (1.15).
pub const CRD_V1BETA1: &str = "crd-v1beta1.yaml";
/// How long a created CRD may take to be served.
const ESTABLISH_TIMEOUT: Duration = Duration::from_secs(30);
/// Discovery documents are a few hundred bytes; anything this large is not one.
const MAX_DISCOVERY_BYTES: usize = 1024 * 1024;

/// A CustomResourceDefinition as `apiextensions.k8s.io/v1beta1`, the version servers before 1.16
/// serve: what [`crate::manifests::apply`] creates from `deploy/crd-v1beta1.yaml`.
#[derive(Clone, Debug, Default, serde::Deserialize)]
pub struct CustomResourceDefinitionV1beta1 {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The spec as written (group, names, scope, versions, validation, subresources, ...).
    #[serde(default)]
    pub spec: Value,
    /// The status the server reports (conditions such as `Established`).
    #[serde(default)]
    pub status: Option<Value>,
}

impl serde::Serialize for CustomResourceDefinitionV1beta1 {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use k8s_openapi::Resource as _;
        let mut object = serializer.serialize_struct(Self::KIND, 5)?;
        object.serialize_field("apiVersion", Self::API_VERSION)?;
        object.serialize_field("kind", Self::KIND)?;
        object.serialize_field("metadata", &self.metadata)?;
        object.serialize_field("spec", &self.spec)?;
        match &self.status {
            Some(status) => object.serialize_field("status", status)?,
            None => object.skip_field("status")?,
        }
        object.end()
    }
}

impl k8s_openapi::Resource for CustomResourceDefinitionV1beta1 {
    const API_VERSION: &'static str = "apiextensions.k8s.io/v1beta1";
    const GROUP: &'static str = "apiextensions.k8s.io";
    const KIND: &'static str = "CustomResourceDefinition";
    const VERSION: &'static str = "v1beta1";
    const URL_PATH_SEGMENT: &'static str = "customresourcedefinitions";
    type Scope = k8s_openapi::ClusterResourceScope;
}

impl k8s_openapi::Metadata for CustomResourceDefinitionV1beta1 {
    type Ty = ObjectMeta;

    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// The CRD manifest in `deploy_dir` that the server behind `client` serves: [`CRD_V1`] when
/// discovery lists `apiextensions.k8s.io/v1`, else [`CRD_V1BETA1`] when it lists `v1beta1`.
///
/// # Errors
/// [`ManifestError::DiscoveryFailed`] when discovery fails or lists neither version.
pub async fn crd_manifest(client: &Client, deploy_dir: &Path) -> Result<PathBuf, ManifestError> {
    let failed = |reason: String| ManifestError::DiscoveryFailed {
        path: DISCOVERY_PATH,
        reason,
    };
    let request = http::Request::get(DISCOVERY_PATH)
        .header(http::header::ACCEPT, "application/json")
        .body(Bytes::new())
        .map_err(|e| failed(e.to_string()))?;
    let mut response = client
        .send(request)
        .await
        .map_err(|e| failed(e.to_string()))?;
    let body = response
        .body_mut()
        .collect_limited(MAX_DISCOVERY_BYTES)
        .await
        .map_err(|e| failed(e.to_string()))?;
    let group: APIGroup = serde_json::from_slice(&body).map_err(|e| failed(e.to_string()))?;
    let served: Vec<&str> = group.versions.iter().map(|v| v.version.as_str()).collect();
    let file = crd_file_for(&served).ok_or_else(|| {
        failed(format!(
            "the server serves apiextensions.k8s.io {served:?}, neither v1 nor v1beta1"
        ))
    })?;
    Ok(deploy_dir.join(file))
}

/// The manifest for a server serving these `apiextensions.k8s.io` versions, v1 first.
fn crd_file_for(served: &[&str]) -> Option<&'static str> {
    if served.contains(&"v1") {
        Some(CRD_V1)
    } else if served.contains(&"v1beta1") {
        Some(CRD_V1BETA1)
    } else {
        None
    }
}

/// Whether a v1 CRD's `Established` condition is `True`.
pub(crate) fn v1_established(crd: &CustomResourceDefinition) -> bool {
    let conditions = crd.status.as_ref().and_then(|s| s.conditions.as_ref());
    conditions.is_some_and(|conditions| {
        conditions
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True")
    })
}

/// Whether a v1beta1 CRD's `Established` condition is `True`.
pub(crate) fn v1beta1_established(crd: &CustomResourceDefinitionV1beta1) -> bool {
    let conditions = crd
        .status
        .as_ref()
        .and_then(|s| s.get("conditions"))
        .and_then(Value::as_array);
    conditions.is_some_and(|conditions| {
        conditions
            .iter()
            .any(|c| c["type"] == "Established" && c["status"] == "True")
    })
}

/// Polls CRD `name` (read as `K`) until `established` says so: only then does the server serve
/// its kind.
///
/// # Errors
/// [`ManifestError::NotEstablished`] after [`ESTABLISH_TIMEOUT`].
pub(crate) async fn wait_established<K: ApiObject>(
    client: &Client,
    name: &str,
    established: fn(&K) -> bool,
) -> Result<(), ManifestError> {
    let crds = ResourceClient::<K>::cluster(client.clone());
    let deadline = tokio::time::Instant::now() + ESTABLISH_TIMEOUT;
    loop {
        if let Ok(crd) = crds.get(name, &GetOptions::default()).await
            && established(&crd)
        {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(ManifestError::NotEstablished {
                name: name.to_owned(),
                timeout: ESTABLISH_TIMEOUT,
            });
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

// The tests reach the in-process server through `embedded::client_for`.
#[cfg(all(test, feature = "embedded"))]
#[path = "crd_tests.rs"]
mod tests;
