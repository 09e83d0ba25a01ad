//! `--embedded`: a complete playground in one process. Starts kubegen-testserver, installs the
//! CRDs (deploy/crd.yaml, or whichever CRD manifest discovery says the server takes, like every
//! installer here) and the samples (deploy/samples/), and writes a kubeconfig so a person
//! can add objects while the controller runs against it. README's first command.

use std::path::{Path, PathBuf};

use kubegen_client::{Client, Config, Kubeconfig, LoadOptions};
use kubegen_testserver::TestServer;

use crate::crd::crd_manifest;
use crate::manifests::{self, ManifestError};

/// A running in-process API server with image-police's CRDs and samples loaded. Stops on drop.
pub struct Embedded {
    server: TestServer,
    kubeconfig: PathBuf,
    created: Vec<String>,
}

/// Why the embedded server could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum EmbeddedError {
    /// Writing the kubeconfig failed.
    #[error("writing the kubeconfig to {} failed", path.display())]
    KubeconfigWriteFailed {
        /// Where it was written.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A client for the embedded server could not be built.
    #[error("connecting to the embedded server failed")]
    ClientFailed {
        /// The client error.
        #[source]
        source: kubegen_client::Error,
    },
    /// The CRDs or a sample could not be installed.
    #[error("installing the manifests failed")]
    InstallFailed {
        /// The manifest error.
        #[source]
        source: ManifestError,
    },
}

impl Embedded {
    /// Starts the server, writes its kubeconfig next to the system temp files, and installs
    /// the CRD manifest of `deploy_dir` the server takes ([`crd_manifest`]) and
    /// `deploy_dir/samples/`.
    ///
    /// # Errors
    /// An [`EmbeddedError`] naming the step that failed.
    pub async fn start(deploy_dir: &Path) -> Result<Embedded, EmbeddedError> {
        let server = TestServer::start().await;
        let kubeconfig = std::env::temp_dir().join(format!(
            "image-police-embedded-{}.kubeconfig",
            std::process::id()
        ));
        server.write_kubeconfig(&kubeconfig).map_err(|source| {
            EmbeddedError::KubeconfigWriteFailed {
                path: kubeconfig.clone(),
                source,
            }
        })?;
        let client =
            client_for(&server).map_err(|source| EmbeddedError::ClientFailed { source })?;
        let install_failed = |source| EmbeddedError::InstallFailed { source };
        let crds = crd_manifest(&client, deploy_dir)
            .await
            .map_err(install_failed)?;
        let paths = [crds, deploy_dir.join("samples")];
        let created = manifests::apply(&client, &paths)
            .await
            .map_err(install_failed)?;
        Ok(Embedded {
            server,
            kubeconfig,
            created,
        })
    }

    /// The kubeconfig file pointing at the server.
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// What a person needs to know to play along, printed at start-up.
    pub fn banner(&self) -> String {
        let kubeconfig = self.kubeconfig.display();
        let mut text = format!(
            "image-police --embedded: in-process API server at {}\n  kubeconfig: {kubeconfig}\n",
            self.server.url()
        );
        for object in &self.created {
            text.push_str(&format!("  created {object}\n"));
        }
        text.push_str(&format!(
            "  try: KUBECONFIG={kubeconfig} kubectl -n police-demo get whitelists,deployments,events\n  \
             the controller deletes Deployments whose images are not on the WhiteList; Ctrl-C stops it\n"
        ));
        text
    }
}

impl Drop for Embedded {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.kubeconfig);
    }
}

/// A client for `server`, from the kubeconfig it hands out.
///
/// # Errors
/// The client's error (the kubeconfig is generated, so this does not happen in practice).
pub fn client_for(server: &TestServer) -> kubegen_client::Result<Client> {
    let kubeconfig = Kubeconfig::parse(&server.kubeconfig_yaml(), Path::new("."))?;
    Client::new(Config::from_kubeconfig(
        &kubeconfig,
        &LoadOptions::default(),
    )?)
}
