//! Installing CustomResourceDefinitions on every server an operator supports (Kubernetes 1.15
//! on): which manifest a server takes, and creating its CRDs until they are served.
//!
//! # Why discovery decides
//! kubegen writes each CRD twice: as `apiextensions.k8s.io/v1` (`crd = ...` in `kubegen.toml`),
//! which servers before 1.16 do not serve, and optionally as `v1beta1` (`crd_v1beta1 = ...`),
//! which servers from 1.22 on no longer serve. Guessing from the server's version string breaks
//! on distributions that backport or disable APIs, so [`served_version`] asks discovery
//! (`GET /apis/apiextensions.k8s.io`, as `kubectl api-versions` does) and takes v1 when it can.

use std::path::Path;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::APIGroup;
use kubegen_client::Client;

use crate::error::Error;
use crate::manifests;

/// The discovery path of the CRD API group.
pub const DISCOVERY_PATH: &str = "/apis/apiextensions.k8s.io";

/// The `apiextensions.k8s.io` version of the CRD manifest a server takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrdVersion {
    /// `apiextensions.k8s.io/v1`: Kubernetes 1.16 on.
    V1,
    /// `apiextensions.k8s.io/v1beta1`: before 1.16 (and up to 1.21).
    V1beta1,
}

/// Which CRD version the server behind `client` takes: [`CrdVersion::V1`] when discovery lists
/// `apiextensions.k8s.io/v1`, else [`CrdVersion::V1beta1`] when it lists `v1beta1`.
///
/// # Errors
/// [`Error::DiscoveryFailed`] when discovery fails or lists neither version.
pub async fn served_version(client: &Client) -> Result<CrdVersion, Error> {
    let failed = |reason: String| Error::DiscoveryFailed {
        path: DISCOVERY_PATH.to_owned(),
        reason,
    };
    let request = manifests::get(DISCOVERY_PATH).map_err(|e| failed(e.to_string()))?;
    let group: APIGroup = client
        .request_json(request)
        .await
        .map_err(|e| failed(e.to_string()))?;
    let served: Vec<&str> = group.versions.iter().map(|v| v.version.as_str()).collect();
    version_for(&served).ok_or_else(|| {
        failed(format!(
            "the server serves apiextensions.k8s.io {served:?}, neither v1 nor v1beta1"
        ))
    })
}

/// Of two CRD manifests holding the same CRDs, `v1` (`apiextensions.k8s.io/v1`) and `v1beta1`,
/// the one the server behind `client` takes (see [`served_version`]), with its version.
///
/// # Errors
/// As [`served_version`].
pub async fn manifest_for<'a>(
    client: &Client,
    v1: &'a Path,
    v1beta1: &'a Path,
) -> Result<(&'a Path, CrdVersion), Error> {
    let version = served_version(client).await?;
    let manifest = match version {
        CrdVersion::V1 => v1,
        CrdVersion::V1beta1 => v1beta1,
    };
    Ok((manifest, version))
}

impl CrdVersion {
    /// `v1` or `v1beta1`: the version in `apiextensions.k8s.io/<version>`.
    pub fn as_str(self) -> &'static str {
        match self {
            CrdVersion::V1 => "v1",
            CrdVersion::V1beta1 => "v1beta1",
        }
    }
}

/// The CRD version for a server serving these `apiextensions.k8s.io` versions, v1 first.
fn version_for(served: &[&str]) -> Option<CrdVersion> {
    if served.contains(&"v1") {
        Some(CrdVersion::V1)
    } else if served.contains(&"v1beta1") {
        Some(CrdVersion::V1beta1)
    } else {
        None
    }
}

/// Creates every CRD of `yaml` that does not exist yet and waits until each is `Established`
/// (served). Other kinds in `yaml` are created too, after the CRDs before them.
///
/// # Errors
/// As [`manifests::create_from_yaml`]; [`Error::NotEstablished`] when a CRD is not served in time.
pub async fn install(client: &Client, yaml: &str) -> Result<(), Error> {
    manifests::create_from_yaml(client, "CustomResourceDefinitions", yaml)
        .await
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_is_preferred_and_v1beta1_is_the_fallback() {
        assert_eq!(version_for(&["v1", "v1beta1"]), Some(CrdVersion::V1));
        assert_eq!(version_for(&["v1beta1"]), Some(CrdVersion::V1beta1));
        assert_eq!(version_for(&["v2"]), None);
    }
}
