//! `kubegen-embedded`: an operator's `--embedded` mode, written once. One command runs the
//! operator against an API server inside its own process, set up as a cluster would be: the
//! CRDs the server takes installed, the operator's manifests (samples, ServiceAccount, RBAC)
//! created, its webhook configurations pointing at loopback, and a kubeconfig with a token of
//! its ServiceAccount, so it runs with exactly the permissions its RBAC grants. image-police's
//! `--embedded` (README's first command) and every example's `--embedded` use it.
//!
//! ```ignore
//! // Compiled in, so the binary's `--embedded` runs from any directory (`Manifest::read` reads
//! // a checkout's files instead).
//! const CRDS: Manifest = Manifest::compiled_in("deploy/crd.yaml", include_str!("../deploy/crd.yaml"));
//! const CRDS_V1BETA1: Manifest =
//!     Manifest::compiled_in("deploy/crd-v1beta1.yaml", include_str!("../deploy/crd-v1beta1.yaml"));
//! let mut embedded = Embedded::start("my-operator").await?;
//! embedded.install_crds(&CRDS, &CRDS_V1BETA1).await?;
//! embedded.install(&Manifest::read(&[deploy.join("sa.yaml"), deploy.join("rbac.yaml")])?).await?;
//! let webhook = embedded.install_webhooks(&WEBHOOKS).await?;
//! let kubeconfig = embedded.run_as("my-operator", "my-operator").await?;
//! eprintln!("{}", embedded.banner());
//! ```
//!
//! | envtest / kubebuilder                         | here                                      | file |
//! |-----------------------------------------------|-------------------------------------------|------|
//! | `envtest.Environment{CRDDirectoryPaths}.Start()` | [`Embedded::start`], [`Embedded::install_crds`] | `embedded.rs` |
//! | (none: envtest runs no nodes; kwok's simulated nodes) | [`Embedded::start_with`] (three `kubegen-nodesim` Nodes by default) | `embedded.rs` |
//! | `kubectl create -f config/`                   | [`Embedded::install`]                     | `embedded.rs` |
//! | `WebhookInstallOptions` (webhooks on localhost) | [`Embedded::install_webhooks`], [`LoopbackWebhook`] | `loopback.rs` |
//! | `kubectl create token` + a kubeconfig         | [`Embedded::run_as`] (`kubegen_runtime::service_account`) | `embedded.rs` |
//!
//! # Why a crate of its own
//! The runtime cannot hold this: `kubegen-testserver` depends on `kubegen-runtime` (its
//! controller-manager is built on it), so a runtime that started a test server would be a
//! dependency cycle, and an in-cluster build must not carry the test server anyway. The
//! ServiceAccount tokens and manifests it uses are the runtime's (`service_account`,
//! `manifests`, `crds`), which work on any server. An application depends on this crate behind
//! a cargo feature (image-police's `embedded`, on by default, off in its container image).
//!
//! # Layers
//! Top to bottom; a module imports only modules in its own row or rows below it, and no two modules
//! import each other (`hack/import-layers.py` checks both).
//! - `embedded`
//! - `loopback`
//! - `manifest`
//! - `error`

mod embedded;
mod error;
mod loopback;
mod manifest;

pub use embedded::Embedded;
pub use error::Error;
pub use loopback::LoopbackWebhook;
pub use manifest::Manifest;
