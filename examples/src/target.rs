//! Where an example runs: `--embedded` (an in-process kubegen-testserver with the CRDs installed)
//! or a real cluster (`--kubeconfig`, else the usual kubeconfig chain). The one piece of set-up
//! every example shares, so none of them repeats it.
//!
//! CRD installation is image-police's (`kubegen_controller::crd`, `manifests`): discovery picks
//! `deploy/crd.yaml` (`apiextensions.k8s.io/v1`) or `deploy/crd-v1beta1.yaml` (servers before
//! 1.16), and each CRD is waited for until it is established. Existing CRDs are then given the
//! manifest's spec, as `kubectl apply` would.

use std::path::{Path, PathBuf};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionSpec,
};
use kubegen_client::{
    ApiObject, Client, Config, CreateOptions, GetOptions, LoadOptions, ResourceClient,
    UpdateOptions,
};
use kubegen_controller::crd::{self, CustomResourceDefinitionV1beta1};
use kubegen_controller::{embedded, manifests};
use kubegen_testserver::TestServer;
use serde::Deserialize as _;
use serde_json::Value;

/// How often a CRD update is retried after a conflict.
const CONFLICT_RETRIES: u32 = 5;

/// The flags every example takes.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct TargetFlags {
    /// Run against an in-process API server (kubegen-testserver) with the CRDs and samples
    /// installed: no cluster needed.
    #[arg(long, conflicts_with = "kubeconfig")]
    pub embedded: bool,
    /// The kubeconfig of the cluster to run against (default: `KUBECONFIG`, `~/.kube/config`,
    /// in-cluster).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
}

/// A connected API server with the examples' CRDs installed.
pub struct Target {
    client: Client,
    /// The in-process server of `--embedded`; held so it runs as long as the target.
    server: Option<TestServer>,
    /// The embedded server's kubeconfig file, removed on drop.
    written_kubeconfig: Option<PathBuf>,
}

impl Target {
    /// Connects as `flags` say and installs the CRDs. With `--embedded` it also writes a
    /// kubeconfig file so `kubectl` can join in (see [`Target::kubeconfig`]).
    ///
    /// # Errors
    /// The step that failed: starting, loading the kubeconfig, or installing the CRDs.
    pub async fn connect(flags: &TargetFlags) -> anyhow::Result<Target> {
        let target = if flags.embedded {
            Target::embedded().await?
        } else {
            let mut load = LoadOptions::default();
            load.kubeconfig_path.clone_from(&flags.kubeconfig);
            let config = Config::load(&load).await?;
            Target {
                client: Client::new(config)?,
                server: None,
                written_kubeconfig: None,
            }
        };
        target.install_crds().await?;
        Ok(target)
    }

    async fn embedded() -> anyhow::Result<Target> {
        let server = TestServer::start().await;
        let path = std::env::temp_dir().join(format!(
            "kubegen-example-{}-{}.kubeconfig",
            std::process::id(),
            unique_suffix()
        ));
        server
            .write_kubeconfig(&path)
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
        Ok(Target {
            client: embedded::client_for(&server)?,
            server: Some(server),
            written_kubeconfig: Some(path),
        })
    }

    async fn install_crds(&self) -> anyhow::Result<()> {
        let deploy = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy");
        let crds = crd::crd_manifest(&self.client, &deploy).await?;
        manifests::apply(&self.client, std::slice::from_ref(&crds)).await?;
        self.update_crds(&crds).await
    }

    /// Gives every CRD of `manifest` the manifest's spec. [`manifests::apply`] leaves existing
    /// CRDs alone, and a cluster that ran an older version of these examples would keep the older
    /// schema, whose pruning silently drops the fields added since (a status, conditions).
    async fn update_crds(&self, manifest: &Path) -> anyhow::Result<()> {
        let text = std::fs::read_to_string(manifest)?;
        for document in serde_yaml::Deserializer::from_str(&text) {
            let wanted = Value::deserialize(document)?;
            let name = wanted["metadata"]["name"].as_str().unwrap_or_default();
            let spec = &wanted["spec"];
            let result = if wanted["apiVersion"] == "apiextensions.k8s.io/v1" {
                let spec: CustomResourceDefinitionSpec = serde_json::from_value(spec.clone())?;
                self.update_crd(name, |crd: &mut CustomResourceDefinition| {
                    crd.spec = spec.clone()
                })
                .await
            } else {
                self.update_crd(name, |crd: &mut CustomResourceDefinitionV1beta1| {
                    crd.spec = spec.clone();
                })
                .await
            };
            result.map_err(|e| anyhow::anyhow!("updating CRD {name}: {e}"))?;
        }
        Ok(())
    }

    /// Reads CRD `name`, changes it with `change` and writes it back; again on a conflict
    /// (another process updating it meanwhile), as client-go's `RetryOnConflict`.
    async fn update_crd<K: ApiObject>(
        &self,
        name: &str,
        change: impl Fn(&mut K),
    ) -> kubegen_client::Result<()> {
        let crds = ResourceClient::<K>::cluster(self.client.clone());
        let mut attempts = 0;
        loop {
            let mut crd = crds.get(name, &GetOptions::default()).await?;
            change(&mut crd);
            match crds.update(&crd, &UpdateOptions::default()).await {
                Err(error) if error.is_conflict() && attempts < CONFLICT_RETRIES => attempts += 1,
                result => return result.map(drop),
            }
        }
    }

    /// The client for the target.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The embedded server's kubeconfig file (`None` on a real cluster).
    pub fn kubeconfig(&self) -> Option<&Path> {
        self.written_kubeconfig.as_deref()
    }

    /// The embedded server (`None` on a real cluster).
    pub fn server(&self) -> Option<&TestServer> {
        self.server.as_ref()
    }

    /// Prints where the example runs and, when embedded, how to join in with kubectl.
    pub fn print_banner(&self, example: &str, try_this: &str) {
        match (&self.server, self.kubeconfig()) {
            (Some(server), Some(kubeconfig)) => {
                let kubeconfig = kubeconfig.display();
                println!(
                    "{example} --embedded: in-process API server at {}",
                    server.url()
                );
                println!("  kubeconfig: {kubeconfig}");
                println!("  try: KUBECONFIG={kubeconfig} {try_this}");
            }
            _ => println!("{example}: running against the cluster of the kubeconfig"),
        }
        println!("  Ctrl-C stops it");
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        if let Some(path) = &self.written_kubeconfig {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Creates `object` unless an object of its name exists; returns whether it created it.
///
/// # Errors
/// The server's answer, unless it was AlreadyExists.
pub async fn create_if_absent<K: ApiObject>(client: &Client, object: &K) -> anyhow::Result<bool> {
    let resources = match &object.meta().namespace {
        Some(namespace) => ResourceClient::<K>::namespaced(client.clone(), namespace),
        None => ResourceClient::<K>::cluster(client.clone()),
    };
    match resources.create(object, &CreateOptions::default()).await {
        Ok(_) => Ok(true),
        Err(error) if error.is_already_exists() => Ok(false),
        Err(error) => Err(anyhow::anyhow!(
            "creating {} {}: {error}",
            K::kind(&()),
            object.meta().name.as_deref().unwrap_or_default()
        )),
    }
}

/// A lower-case suffix unique to this process and moment (valid in DNS-1123 names).
pub fn unique_suffix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    format!("{:x}{nanos:x}", std::process::id())
}

/// Resolves when the process gets Ctrl-C or SIGTERM: what every example's `main` passes as its
/// shutdown signal.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
