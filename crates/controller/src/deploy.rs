//! image-police's `deploy/` directory as installers read it: which CRD manifest a server takes.
//! `--embedded`, the e2e harness and the examples' harness install from here.

use std::path::{Path, PathBuf};

use kubegen_runtime::crds::{self, CrdVersion};

/// The CRD manifest of `deploy_dir` that the server behind `client` takes: `crd.yaml`
/// (`apiextensions.k8s.io/v1`) or, on servers before 1.16, `crd-v1beta1.yaml` (discovery
/// decides: [`crds::served_version`]).
///
/// # Errors
/// Discovery failed or lists neither version.
pub async fn crd_manifest(
    client: &kubegen_client::Client,
    deploy_dir: &Path,
) -> Result<PathBuf, kubegen_runtime::Error> {
    Ok(deploy_dir.join(match crds::served_version(client).await? {
        CrdVersion::V1 => "crd.yaml",
        CrdVersion::V1beta1 => "crd-v1beta1.yaml",
    }))
}
