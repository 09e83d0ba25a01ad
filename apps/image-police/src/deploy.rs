//! image-police's `deploy/` directory as installers read it: which CRD manifest a server takes.
//! `--embedded`, the e2e harness and the examples' harness install from here.

use std::path::{Path, PathBuf};

use kubegen_runtime::crds;

/// The CRD manifest of `deploy_dir` that the server behind `client` takes: `crd.yaml`
/// (`apiextensions.k8s.io/v1`) or, on servers before 1.16, `crd-v1beta1.yaml` (discovery
/// decides: [`crds::manifest_for`]).
///
/// # Errors
/// Discovery failed or lists neither version.
pub async fn crd_manifest(
    client: &kubegen_client::Client,
    deploy_dir: &Path,
) -> Result<PathBuf, kubegen_runtime::Error> {
    let (v1, v1beta1) = (
        deploy_dir.join("crd.yaml"),
        deploy_dir.join("crd-v1beta1.yaml"),
    );
    let (manifest, _) = crds::manifest_for(client, &v1, &v1beta1).await?;
    Ok(manifest.to_path_buf())
}
