//! The errors that stop the controller (as opposed to [`ReconcileError`](crate::reconcile::ReconcileError),
//! which only requeues one key). Each variant names the step that failed.

use std::path::PathBuf;
use std::time::Duration;

/// Why `image-police` could not start or keep running.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The kubeconfig or in-cluster configuration could not be loaded.
    #[error("loading the client configuration failed")]
    ConfigLoadFailed {
        /// The client's error.
        #[source]
        source: kubegen_client::Error,
    },
    /// The HTTP client could not be built (TLS material, proxy...).
    #[error("building the API client failed")]
    ClientBuildFailed {
        /// The client's error.
        #[source]
        source: kubegen_client::Error,
    },
    /// The runtime stopped: handler registration, cache sync, binding an endpoint, leader
    /// election, or lost leadership (then the process exits to restart as a clean candidate).
    #[error(transparent)]
    Runtime(#[from] kubegen_runtime::Error),
    /// `--metrics-addr` or `--health-addr` is not `ip:port`.
    #[error("{addr:?} is not an ip:port address")]
    InvalidAddress {
        /// The flag's value.
        addr: String,
    },
}

/// Why a manifest could not be applied ([`crate::manifests`], and the CRD discovery of
/// [`crate::crd`]). Here, not in `manifests.rs`, so `crd.rs` and `manifests.rs` share it without
/// importing each other.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The file could not be read or parsed, or holds a kind this module does not create.
    #[error("{}: {reason}", file.display())]
    Unreadable {
        /// The manifest file.
        file: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The API server refused an object.
    #[error("{}: creating {object} failed", file.display())]
    Rejected {
        /// The manifest file.
        file: PathBuf,
        /// `Kind namespace/name` of the object.
        object: String,
        /// The API error (boxed: it is large and rare).
        #[source]
        source: Box<kubegen_client::Error>,
    },
    /// Discovery could not say which CRD version the server serves.
    #[error("discovery of {path} failed: {reason}")]
    DiscoveryFailed {
        /// The discovery path asked.
        path: &'static str,
        /// What went wrong, or what the server served instead.
        reason: String,
    },
    /// A CustomResourceDefinition did not become Established in time.
    #[error("CustomResourceDefinition {name} was not Established within {timeout:?}")]
    NotEstablished {
        /// The CRD's name.
        name: String,
        /// How long we waited.
        timeout: Duration,
    },
}
