//! [`Embedded`]: the in-process API server of an operator's `--embedded` mode and what was
//! installed on it. It starts kubegen-testserver as a cluster runs: HTTPS (kubectl sends tokens
//! over TLS only), an unguessable administrator token, and RBAC on, so the operator's own
//! ServiceAccount ([`Embedded::run_as`]) has exactly the permissions its manifests grant. The
//! administrator's kubeconfig is written to a file, printed by [`Embedded::banner`], so a person
//! can add objects with kubectl while the operator runs. Three simulated Nodes run beside it by
//! default (`kubegen-nodesim`): the operator's Deployments and Pods run and become ready, as on
//! a cluster; [`Embedded::start_with`] picks other Nodes, or none.

use std::hash::BuildHasher as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use kubegen_client::Client;
use kubegen_nodesim::NodeSimOptions;
use kubegen_runtime::crds::{self, CrdVersion};
use kubegen_runtime::{manifests, service_account};
use kubegen_testserver::{ServerOptions, TestServer};

use crate::error::Error;
use crate::loopback::{self, LoopbackWebhook};
use crate::manifest::Manifest;

/// A running in-process API server with an operator's manifests installed. Stops on drop, and
/// removes the files it wrote.
pub struct Embedded {
    server: TestServer,
    /// The operator's name: in the banner and in the names of the files written.
    app: String,
    /// The administrator's kubeconfig (`system:masters`).
    kubeconfig: PathBuf,
    /// The ServiceAccount the operator runs as and its kubeconfig, once [`Embedded::run_as`] ran.
    identity: Option<(String, PathBuf)>,
    /// Certificate directories handed out by [`Embedded::install_webhooks`].
    cert_dirs: Vec<PathBuf>,
    /// `Kind namespace/name` of every object installed, in order.
    created: Vec<String>,
}

impl Embedded {
    /// Starts the server for the operator `app`, with three simulated Nodes, and writes the
    /// administrator's kubeconfig next to the system temp files.
    ///
    /// # Errors
    /// [`Error::StartFailed`], [`Error::KubeconfigWriteFailed`].
    pub async fn start(app: &str) -> Result<Embedded, Error> {
        Embedded::start_with(app, Some(NodeSimOptions::default())).await
    }

    /// [`Embedded::start`] with the simulated Nodes `simulated_nodes` describes (`None`: no
    /// Nodes, so Pods stay Pending as on a cluster without nodes), as
    /// `kubegen_testserver::TestServer::start_with` picks its options.
    ///
    /// # Errors
    /// [`Error::StartFailed`], [`Error::KubeconfigWriteFailed`].
    pub async fn start_with(
        app: &str,
        simulated_nodes: Option<NodeSimOptions>,
    ) -> Result<Embedded, Error> {
        let mut options = ServerOptions::default();
        options.simulated_nodes = simulated_nodes;
        options.tls = true;
        options.bearer_token = Some(random_token());
        options.rbac = true;
        let server = TestServer::try_start(options)
            .await
            .map_err(|source| Error::StartFailed { source })?;
        let kubeconfig = temp_path(app, "embedded.kubeconfig");
        write(&kubeconfig, &server.kubeconfig_yaml())?;
        Ok(Embedded {
            server,
            app: app.to_owned(),
            kubeconfig,
            identity: None,
            cert_dirs: Vec::new(),
            created: Vec::new(),
        })
    }

    /// Installs the CRDs of whichever manifest the server takes, `v1` (`apiextensions.k8s.io/v1`)
    /// or `v1beta1`, as every installer here decides ([`crds::served_version`]); returns which.
    ///
    /// # Errors
    /// [`Error::InstallFailed`].
    pub async fn install_crds(
        &mut self,
        v1: &Manifest,
        v1beta1: &Manifest,
    ) -> Result<CrdVersion, Error> {
        let version = crds::served_version(&self.client())
            .await
            .map_err(|source| Error::InstallFailed { source })?;
        let manifest = match version {
            CrdVersion::V1 => v1,
            CrdVersion::V1beta1 => v1beta1,
        };
        self.install(std::slice::from_ref(manifest)).await?;
        Ok(version)
    }

    /// Creates every object of `manifests`, in order, as `kubectl create -f` does
    /// ([`manifests::create_from_yaml`]).
    ///
    /// # Errors
    /// [`Error::InstallFailed`] naming the manifest and object.
    pub async fn install(&mut self, manifests: &[Manifest]) -> Result<(), Error> {
        let client = self.client();
        for manifest in manifests {
            let created = manifests::create_from_yaml(&client, &manifest.source, &manifest.yaml)
                .await
                .map_err(|source| Error::InstallFailed { source })?;
            self.created.extend(created);
        }
        Ok(())
    }

    /// Creates the webhook configuration of `manifest` with every webhook calling loopback on a
    /// free port (see `loopback.rs`); the operator's webhook server must listen there with a
    /// certificate in the returned directory (`--webhook-host 127.0.0.1 --webhook-port <port>
    /// --webhook-cert-path <dir>`, self-signed).
    ///
    /// # Errors
    /// [`Error::NoWebhookPort`], [`Error::WebhookConfigurationInvalid`], [`Error::InstallFailed`].
    pub async fn install_webhooks(
        &mut self,
        manifest: &Manifest,
    ) -> Result<LoopbackWebhook, Error> {
        let port = loopback::free_port()?;
        let configuration = loopback::configuration(manifest, port)?;
        let created = manifests::create_object(&self.client(), configuration)
            .await
            .map_err(|source| Error::InstallFailed { source })?;
        self.created.extend(created);
        let cert_dir = temp_path(&self.app, &format!("webhook-{port}"));
        self.cert_dirs.push(cert_dir.clone());
        Ok(LoopbackWebhook { port, cert_dir })
    }

    /// Writes a kubeconfig for the same server with a fresh token of ServiceAccount
    /// `namespace/name` (which [`Embedded::install`] created, with its RBAC) and that namespace;
    /// returns its path. The operator runs with it, so it has exactly the permissions granted.
    ///
    /// # Errors
    /// [`Error::IdentityFailed`] naming the ServiceAccount, [`Error::KubeconfigWriteFailed`].
    pub async fn run_as(&mut self, namespace: &str, name: &str) -> Result<PathBuf, Error> {
        let failed = |source| Error::IdentityFailed { source };
        let token = service_account::issue_token(&self.client(), namespace, name)
            .await
            .map_err(failed)?;
        let yaml = service_account::kubeconfig_with_token(
            &self.server.kubeconfig_yaml(),
            &token,
            namespace,
        )
        .map_err(failed)?;
        let path = temp_path(&self.app, &format!("embedded-{name}.kubeconfig"));
        write(&path, &yaml)?;
        if let Some((_, previous)) = self
            .identity
            .replace((format!("{namespace}/{name}"), path.clone()))
        {
            let _ = std::fs::remove_file(previous);
        }
        Ok(path)
    }

    /// The in-process server.
    pub fn server(&self) -> &TestServer {
        &self.server
    }

    /// An administrator's client for the server.
    pub fn client(&self) -> Client {
        self.server.client()
    }

    /// The administrator's kubeconfig file (`system:masters`).
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// `Kind namespace/name` of every object installed so far, in order.
    pub fn created(&self) -> &[String] {
        &self.created
    }

    /// What a person needs to know to play along, to print at start-up: the server, both
    /// kubeconfigs, what was installed, and which identity the operator runs as.
    pub fn banner(&self) -> String {
        let mut text = format!(
            "{} --embedded: in-process API server at {}\n  kubeconfig: {}\n",
            self.app,
            self.server.url(),
            self.kubeconfig.display()
        );
        if let Some((_, path)) = &self.identity {
            text.push_str(&format!("  controller kubeconfig: {}\n", path.display()));
        }
        for object in &self.created {
            text.push_str(&format!("  created {object}\n"));
        }
        if let Some((account, _)) = &self.identity {
            text.push_str(&format!(
                "  the controller runs as ServiceAccount {account}; the kubeconfig above is an \
                 administrator's\n"
            ));
        }
        text
    }
}

impl Drop for Embedded {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.kubeconfig);
        if let Some((_, path)) = &self.identity {
            let _ = std::fs::remove_file(path);
        }
        for dir in &self.cert_dirs {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// `<temp>/<app>-<pid>-<n>-<what>`: unique to this process and this server (tests start many).
fn temp_path(app: &str, what: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("{app}-{}-{n}-{what}", std::process::id()))
}

fn write(path: &Path, yaml: &str) -> Result<(), Error> {
    std::fs::write(path, yaml).map_err(|source| Error::KubeconfigWriteFailed {
        path: path.to_path_buf(),
        source,
    })
}

/// An unguessable administrator token for this run (std's randomly seeded hasher: 128 bits).
fn random_token() -> String {
    let random = || std::collections::hash_map::RandomState::new().hash_one(std::process::id());
    format!("{:016x}{:016x}", random(), random())
}

#[cfg(test)]
#[path = "embedded_tests.rs"]
mod tests;
