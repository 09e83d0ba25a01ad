//! Where an example runs: `--embedded` (an in-process API server, kubegen-embedded's, as
//! image-police's `--embedded` runs on) or a real cluster (`--kubeconfig`, else the usual
//! kubeconfig chain), with the examples' CRDs installed. The one piece of set-up every example
//! shares, so none of them repeats it.
//!
//! CRD installation is the runtime's (`kubegen_runtime::crds`, `manifests`): discovery picks
//! `deploy/crd.yaml` (`apiextensions.k8s.io/v1`) or `deploy/crd-v1beta1.yaml` (servers before
//! 1.16), and each CRD is waited for until it is established. Existing CRDs are then given the
//! manifest's spec, as `kubectl apply` would.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use kubegen_client::{ApiObject, Client, Config, CreateOptions, LoadOptions, ResourceClient};
use kubegen_embedded::Embedded;
use kubegen_runtime::crds::{self, CrdVersion};
use kubegen_runtime::manifests;

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
    /// Leave the CRDs alone (in a pod, where they were applied from `deploy/crd.yaml` and the
    /// source tree the examples install them from is absent).
    #[arg(long, conflicts_with = "embedded")]
    pub no_install_crds: bool,
}

/// A connected API server with the examples' CRDs installed.
pub struct Target {
    client: Client,
    /// The in-process server of `--embedded`; held so it runs as long as the target (it removes
    /// its kubeconfig file when dropped).
    embedded: Option<Embedded>,
}

impl Target {
    /// Connects as `flags` say and installs the CRDs. With `--embedded` the in-process server
    /// writes an administrator's kubeconfig file so `kubectl` can join in (printed by
    /// [`Target::print_banner`]).
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
                embedded: None,
            }
        };
        if !flags.no_install_crds {
            target.install_crds().await?;
        }
        Ok(target)
    }

    async fn embedded() -> anyhow::Result<Target> {
        let embedded = Embedded::start("kubegen-example").await?;
        Ok(Target {
            client: embedded.client(),
            embedded: Some(embedded),
        })
    }

    async fn install_crds(&self) -> anyhow::Result<()> {
        let deploy = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy");
        let (v1, v1beta1) = (deploy.join("crd.yaml"), deploy.join("crd-v1beta1.yaml"));
        let (manifest, version) = crds::manifest_for(&self.client, &v1, &v1beta1).await?;
        let manifest = manifest.to_path_buf();
        manifests::create_from_paths(&self.client, std::slice::from_ref(&manifest)).await?;
        self.update_crds(&manifest, version).await
    }

    /// Gives every CRD of `manifest` (of `apiextensions.k8s.io/<version>`) the manifest's spec.
    /// [`manifests::create_from_paths`] leaves existing CRDs alone, and a cluster that ran an
    /// older version of these examples would keep the older schema, whose pruning silently
    /// drops the fields added since (a status, conditions). A JSON patch replacing `/spec` works
    /// on both CRD versions and needs no read-modify-write.
    async fn update_crds(&self, manifest: &Path, version: CrdVersion) -> anyhow::Result<()> {
        let text = std::fs::read_to_string(manifest)?;
        for crd in manifests::documents(manifest, &text)? {
            let name = crd["metadata"]["name"].as_str().unwrap_or_default();
            let patch =
                serde_json::json!([{"op": "replace", "path": "/spec", "value": crd["spec"]}]);
            let version = version.as_str();
            let path =
                format!("/apis/apiextensions.k8s.io/{version}/customresourcedefinitions/{name}");
            let request = http::Request::patch(&path)
                .header(http::header::CONTENT_TYPE, "application/json-patch+json")
                .body(Bytes::from(serde_json::to_vec(&patch)?))?;
            let _updated: serde_json::Value = self
                .client
                .request_json(request)
                .await
                .map_err(|e| anyhow::anyhow!("updating CRD {name}: {e}"))?;
        }
        Ok(())
    }

    /// The client for the target.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Prints where the example runs and, when embedded, how to join in with kubectl.
    pub fn print_banner(&self, example: &str, try_this: &str) {
        match &self.embedded {
            Some(embedded) => {
                let kubeconfig = embedded.kubeconfig().display();
                println!(
                    "{example} --embedded: in-process API server at {}",
                    embedded.server().url()
                );
                println!("  kubeconfig: {kubeconfig}");
                println!("  try: KUBECONFIG={kubeconfig} {try_this}");
            }
            None => println!("{example}: running against the cluster of the kubeconfig"),
        }
        println!("  Ctrl-C stops it");
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
