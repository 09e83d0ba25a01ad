//! `--embedded`: a complete playground in one process. Starts kubegen-testserver (HTTPS: kubectl
//! sends tokens over TLS only) with authentication and RBAC on, installs the CRDs (deploy/crd.yaml, or whichever CRD manifest
//! discovery says the server takes, like every installer here), the samples (deploy/samples/)
//! and the controller's identity and permissions (deploy/sa.yaml, deploy/rbac.yaml), and writes
//! two kubeconfigs: an administrator's, printed so a person can add objects while the controller
//! runs, and one with a token of the `image-police` ServiceAccount, which the controller uses, so
//! it runs with exactly the permissions deploy/rbac.yaml grants, as in a cluster. README's first
//! command.
//!
//! The admission webhook runs too: deploy/webhook.yaml's `ValidatingWebhookConfiguration` is
//! installed with its `clientConfig` pointing at `https://127.0.0.1:<port>` (there is no Service
//! in process), and the controller serves it there with the self-signed bootstrap, which writes
//! its CA into the configuration as in a cluster. So the server refuses a forbidden Deployment at
//! admission, exactly as a real one calling image-police would.

use std::path::{Path, PathBuf};

use std::hash::BuildHasher as _;

use kubegen_runtime::manifests;
use kubegen_testserver::{ServerOptions, TestServer};

use crate::deploy::crd_manifest;
use crate::service_account::{
    SERVICE_ACCOUNT, ServiceAccountError, issue_token, kubeconfig_with_token,
};

/// A running in-process API server with image-police's CRDs and samples loaded. Stops on drop.
pub struct Embedded {
    server: TestServer,
    kubeconfig: PathBuf,
    controller_kubeconfig: PathBuf,
    created: Vec<String>,
    /// The loopback port the webhook configuration calls.
    webhook_port: u16,
    /// Where the webhook's self-signed certificate is written.
    webhook_cert_dir: PathBuf,
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
    /// The CRDs or a sample could not be installed.
    #[error("installing the manifests failed")]
    InstallFailed {
        /// The runtime's error, naming the file and object.
        #[source]
        source: kubegen_runtime::Error,
    },
    /// No free loopback port for the webhook server.
    #[error("finding a free port on 127.0.0.1 for the webhook server failed")]
    NoWebhookPort(#[source] std::io::Error),
    /// deploy/webhook.yaml could not be read or is not a webhook configuration.
    #[error("{}: {reason}", path.display())]
    WebhookConfigurationInvalid {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// No token for the controller's ServiceAccount could be issued.
    #[error("issuing the controller's ServiceAccount token failed")]
    TokenFailed {
        /// What went wrong (boxed: it is large and rare).
        #[source]
        source: Box<ServiceAccountError>,
    },
}

impl Embedded {
    /// Starts the server (authentication and RBAC on), writes the administrator's kubeconfig next
    /// to the system temp files, installs the CRD manifest of `deploy_dir` the server takes
    /// ([`crd_manifest`]: discovery decides), `deploy_dir/samples/`, `deploy_dir/sa.yaml` and
    /// `deploy_dir/rbac.yaml`, and writes the controller's kubeconfig (the ServiceAccount's token,
    /// namespace `image-police`).
    ///
    /// # Errors
    /// An [`EmbeddedError`] naming the step that failed.
    pub async fn start(deploy_dir: &Path) -> Result<Embedded, EmbeddedError> {
        let mut options = ServerOptions::default();
        // kubectl sends tokens over TLS only.
        options.tls = true;
        options.bearer_token = Some(random_token());
        options.rbac = true;
        let server = TestServer::start_with(options).await;
        let kubeconfig = temp_kubeconfig("embedded");
        write(&kubeconfig, &server.kubeconfig_yaml())?;
        let client = server.client();
        let install_failed = |source| EmbeddedError::InstallFailed { source };
        let crds = crd_manifest(&client, deploy_dir)
            .await
            .map_err(install_failed)?;
        let paths = [
            crds,
            deploy_dir.join("samples"),
            deploy_dir.join("sa.yaml"),
            deploy_dir.join("rbac.yaml"),
        ];
        let mut created = manifests::create_from_paths(&client, &paths)
            .await
            .map_err(install_failed)?;
        let webhook_port = free_loopback_port()?;
        let configuration = webhook_configuration(&deploy_dir.join("webhook.yaml"), webhook_port)?;
        created.extend(
            manifests::create_object(&client, configuration)
                .await
                .map_err(install_failed)?,
        );
        let (namespace, name) = SERVICE_ACCOUNT;
        let token_failed = |source| EmbeddedError::TokenFailed {
            source: Box::new(source),
        };
        let token = issue_token(&client, namespace, name)
            .await
            .map_err(token_failed)?;
        let yaml = kubeconfig_with_token(&server.kubeconfig_yaml(), &token, namespace)
            .map_err(token_failed)?;
        let controller_kubeconfig = temp_kubeconfig("embedded-controller");
        write(&controller_kubeconfig, &yaml)?;
        Ok(Embedded {
            server,
            kubeconfig,
            controller_kubeconfig,
            created,
            webhook_port,
            webhook_cert_dir: std::env::temp_dir()
                .join(format!("image-police-webhook-{}", std::process::id())),
        })
    }

    /// The loopback port the installed webhook configuration calls: the controller's webhook
    /// server must listen there (`--webhook-host 127.0.0.1 --webhook-port <it>`).
    pub fn webhook_port(&self) -> u16 {
        self.webhook_port
    }

    /// A fresh directory for the webhook's self-signed certificate (`--webhook-cert-path`).
    pub fn webhook_cert_dir(&self) -> &Path {
        &self.webhook_cert_dir
    }

    /// The kubeconfig the controller runs with: the `image-police` ServiceAccount's token.
    pub fn controller_kubeconfig(&self) -> &Path {
        &self.controller_kubeconfig
    }

    /// The administrator's kubeconfig file pointing at the server (`system:masters`).
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// What a person needs to know to play along, printed at start-up.
    pub fn banner(&self) -> String {
        let kubeconfig = self.kubeconfig.display();
        let mut text = format!(
            "image-police --embedded: in-process API server at {}\n  kubeconfig: {kubeconfig}\n  \
             controller kubeconfig: {}\n",
            self.server.url(),
            self.controller_kubeconfig.display()
        );
        for object in &self.created {
            text.push_str(&format!("  created {object}\n"));
        }
        let (namespace, name) = SERVICE_ACCOUNT;
        text.push_str(&format!(
            "  the controller runs as ServiceAccount {namespace}/{name} (deploy/sa.yaml, deploy/rbac.yaml); \
             the kubeconfig above is an administrator's\n"
        ));
        text.push_str(&format!(
            "  try: KUBECONFIG={kubeconfig} kubectl -n police-demo get whitelists,deployments,events\n  \
             the admission webhook (https://127.0.0.1:{}) refuses Deployments whose images are not on the \
             WhiteList, and the controller deletes any admitted while it was down; Ctrl-C stops it\n",
            self.webhook_port
        ));
        text
    }
}

impl Drop for Embedded {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.kubeconfig);
        let _ = std::fs::remove_file(&self.controller_kubeconfig);
        let _ = std::fs::remove_dir_all(&self.webhook_cert_dir);
    }
}

/// A port on 127.0.0.1 nothing listens on now (the webhook server binds it moments later).
fn free_loopback_port() -> Result<u16, EmbeddedError> {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .map_err(EmbeddedError::NoWebhookPort)
}

/// deploy/webhook.yaml's configuration with every webhook's `clientConfig` calling
/// `https://127.0.0.1:<port><its path>` instead of the in-cluster Service.
fn webhook_configuration(path: &Path, port: u16) -> Result<serde_json::Value, EmbeddedError> {
    let invalid = |reason: String| EmbeddedError::WebhookConfigurationInvalid {
        path: path.to_path_buf(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| invalid(e.to_string()))?;
    let mut configuration = manifests::documents(path, &text)
        .map_err(|e| invalid(e.to_string()))?
        .into_iter()
        .next()
        .ok_or_else(|| invalid("no document".into()))?;
    let webhooks = configuration
        .get_mut("webhooks")
        .and_then(serde_json::Value::as_array_mut)
        .ok_or_else(|| invalid("no webhooks".into()))?;
    for webhook in webhooks {
        let service_path = webhook
            .pointer("/clientConfig/service/path")
            .and_then(serde_json::Value::as_str)
            .ok_or_else(|| invalid("a webhook without clientConfig.service.path".into()))?
            .to_owned();
        webhook["clientConfig"] =
            serde_json::json!({"url": format!("https://127.0.0.1:{port}{service_path}")});
    }
    Ok(configuration)
}

fn temp_kubeconfig(what: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "image-police-{what}-{}.kubeconfig",
        std::process::id()
    ))
}

fn write(path: &Path, yaml: &str) -> Result<(), EmbeddedError> {
    std::fs::write(path, yaml).map_err(|source| EmbeddedError::KubeconfigWriteFailed {
        path: path.to_path_buf(),
        source,
    })
}

/// An unguessable administrator token for this run (std's randomly seeded hasher: 128 bits).
fn random_token() -> String {
    let random = || std::collections::hash_map::RandomState::new().hash_one(std::process::id());
    format!("{:016x}{:016x}", random(), random())
}
