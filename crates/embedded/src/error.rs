//! Why an embedded server could not be set up: one variant per step of [`crate::Embedded`].

use std::path::PathBuf;

/// The step of the set-up that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The in-process API server did not start.
    #[error("starting the in-process API server failed")]
    StartFailed {
        /// The test server's error.
        #[source]
        source: kubegen_testserver::Error,
    },
    /// A kubeconfig file could not be written.
    #[error("writing the kubeconfig to {} failed", path.display())]
    KubeconfigWriteFailed {
        /// Where it was written.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The CRDs, a manifest or a webhook configuration could not be installed.
    #[error("installing the manifests failed")]
    InstallFailed {
        /// The runtime's error, naming the file and object.
        #[source]
        source: kubegen_runtime::Error,
    },
    /// A manifest file could not be read.
    #[error("reading the manifests failed")]
    ManifestUnreadable {
        /// The runtime's error, naming the file.
        #[source]
        source: kubegen_runtime::Error,
    },
    /// No free loopback port for the webhook server.
    #[error("finding a free port on 127.0.0.1 for the webhook server failed")]
    NoWebhookPort(#[source] std::io::Error),
    /// A webhook configuration manifest is not a webhook configuration.
    #[error("{manifest}: {reason}")]
    WebhookConfigurationInvalid {
        /// The manifest's name.
        manifest: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No token or kubeconfig for the operator's ServiceAccount could be made.
    #[error("running as the operator's ServiceAccount failed")]
    IdentityFailed {
        /// The runtime's error, naming the ServiceAccount.
        #[source]
        source: kubegen_runtime::Error,
    },
}
