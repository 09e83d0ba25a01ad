//! `image-police`: deletes Deployments that run images not on their namespace's WhiteList.
//! Everything but flag parsing, logging, signals and the `--embedded` set-up lives in the library
//! (`kubegen_controller::run`).

use std::process::ExitCode;

use clap::Parser as _;
use kubegen_controller::flags::Flags;

#[tokio::main]
async fn main() -> ExitCode {
    let mut flags = Flags::parse();
    if let Err(error) = flags.manager.init_logging() {
        eprintln!("image-police: {error}");
        return ExitCode::FAILURE;
    }
    match run(&mut flags).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(flags: &mut Flags) -> anyhow::Result<()> {
    let _embedded = if flags.embedded {
        Some(start_embedded(flags).await?)
    } else {
        None
    };
    kubegen_controller::run::run(flags, kubegen_runtime::shutdown_signal()).await?;
    Ok(())
}

/// Starts the in-process API server (`kubegen-embedded`) with deploy/'s CRDs, samples,
/// ServiceAccount, RBAC and webhook configuration (its webhooks calling loopback), and points
/// `flags` at it: the controller runs as its ServiceAccount and serves the webhook on loopback
/// with the self-signed bootstrap, which writes its CA into the configuration as in a cluster.
/// The server stops when the result drops.
#[cfg(feature = "embedded")]
async fn start_embedded(flags: &mut Flags) -> anyhow::Result<kubegen_embedded::Embedded> {
    let deploy = match &flags.deploy_dir {
        Some(dir) => embedded_manifests::Deploy::read(dir)?,
        None => embedded_manifests::Deploy::compiled_in(),
    };
    let mut embedded = kubegen_embedded::Embedded::start("image-police").await?;
    embedded
        .install_crds(&deploy.crds, &deploy.crds_v1beta1)
        .await?;
    embedded.install(&deploy.setup).await?;
    let webhook = embedded.install_webhooks(&deploy.webhooks).await?;
    let (namespace, name) = kubegen_controller::run::SERVICE_ACCOUNT;
    let kubeconfig = embedded.run_as(namespace, name).await?;
    eprintln!(
        "{}  try: KUBECONFIG={} kubectl -n police-demo get whitelists,deployments,events\n  \
         the admission webhook (https://127.0.0.1:{}) refuses Deployments whose images are not on \
         the WhiteList, and the controller deletes any admitted while it was down; Ctrl-C stops it",
        embedded.banner(),
        embedded.kubeconfig().display(),
        webhook.port
    );
    flags.manager.kubeconfig = Some(kubeconfig);
    flags.manager.webhook_host = Some(std::net::IpAddr::from([127, 0, 0, 1]));
    flags.manager.webhook_port = webhook.port;
    flags.manager.webhook_cert_path = webhook.cert_dir;
    flags.webhook_self_signed = true;
    Ok(embedded)
}

#[cfg(feature = "embedded")]
mod embedded_manifests {
    //! deploy/'s manifests for `--embedded`, compiled into the binary so that an installed
    //! `image-police` finds them wherever it runs; `--deploy-dir` reads a checkout's instead.

    use std::path::Path;

    use kubegen_embedded::Manifest;

    /// The samples of deploy/samples/, in the order they are created (the namespace first).
    /// A test checks this list against the directory.
    const SAMPLES: [Manifest; 4] = [
        Manifest::compiled_in(
            "deploy/samples/00-namespace.yaml",
            include_str!("../../../deploy/samples/00-namespace.yaml"),
        ),
        Manifest::compiled_in(
            "deploy/samples/10-whitelist.yaml",
            include_str!("../../../deploy/samples/10-whitelist.yaml"),
        ),
        Manifest::compiled_in(
            "deploy/samples/20-allowed-deployment.yaml",
            include_str!("../../../deploy/samples/20-allowed-deployment.yaml"),
        ),
        Manifest::compiled_in(
            "deploy/samples/30-forbidden-deployment.yaml",
            include_str!("../../../deploy/samples/30-forbidden-deployment.yaml"),
        ),
    ];

    /// What `--embedded` installs.
    pub(crate) struct Deploy {
        /// The CRDs, `apiextensions.k8s.io/v1` and (servers before 1.16) `v1beta1`.
        pub(crate) crds: Manifest,
        pub(crate) crds_v1beta1: Manifest,
        /// The samples, then the controller's ServiceAccount and RBAC.
        pub(crate) setup: Vec<Manifest>,
        /// The admission webhook's configuration.
        pub(crate) webhooks: Manifest,
    }

    impl Deploy {
        /// The copies compiled into the binary.
        pub(crate) fn compiled_in() -> Deploy {
            let mut setup = SAMPLES.to_vec();
            setup.push(Manifest::compiled_in(
                "deploy/sa.yaml",
                include_str!("../../../deploy/sa.yaml"),
            ));
            setup.push(Manifest::compiled_in(
                "deploy/rbac.yaml",
                include_str!("../../../deploy/rbac.yaml"),
            ));
            Deploy {
                crds: Manifest::compiled_in(
                    "deploy/crd.yaml",
                    include_str!("../../../deploy/crd.yaml"),
                ),
                crds_v1beta1: Manifest::compiled_in(
                    "deploy/crd-v1beta1.yaml",
                    include_str!("../../../deploy/crd-v1beta1.yaml"),
                ),
                setup,
                webhooks: Manifest::compiled_in(
                    "deploy/webhook.yaml",
                    include_str!("../../../deploy/webhook.yaml"),
                ),
            }
        }

        /// The same files of the deploy/ directory `dir` (`--deploy-dir`).
        pub(crate) fn read(dir: &Path) -> Result<Deploy, kubegen_embedded::Error> {
            let one = |name: &str| -> Result<Manifest, kubegen_embedded::Error> {
                let mut read = Manifest::read(&[dir.join(name)])?;
                Ok(read.remove(0))
            };
            Ok(Deploy {
                crds: one("crd.yaml")?,
                crds_v1beta1: one("crd-v1beta1.yaml")?,
                setup: Manifest::read(&[
                    dir.join("samples"),
                    dir.join("sa.yaml"),
                    dir.join("rbac.yaml"),
                ])?,
                webhooks: one("webhook.yaml")?,
            })
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// The compiled-in copies are exactly deploy/'s files, samples included, in the order
        /// `--deploy-dir` reads them: a sample added to deploy/samples/ must be added here too.
        #[test]
        fn the_compiled_in_manifests_are_deploys_files() {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy");
            let read = Deploy::read(&dir).unwrap_or_else(|e| panic!("{e}"));
            let compiled = Deploy::compiled_in();
            let texts = |d: &Deploy| -> Vec<String> {
                [&d.crds, &d.crds_v1beta1, &d.webhooks]
                    .into_iter()
                    .chain(&d.setup)
                    .map(|m| m.yaml.to_string())
                    .collect()
            };
            assert_eq!(texts(&compiled), texts(&read));
        }
    }
}

/// The in-cluster build leaves the in-process API server out: say so instead of running against
/// whatever cluster the kubeconfig names.
#[cfg(not(feature = "embedded"))]
async fn start_embedded(_: &mut Flags) -> anyhow::Result<std::convert::Infallible> {
    anyhow::bail!(
        "--embedded is not available: this image-police was built without the `embedded` cargo \
         feature (in-cluster builds leave the in-process API server out); build with default \
         features to use it, e.g. `cargo run -p kubegen-controller --bin image-police -- --embedded`"
    )
}

#[cfg(all(test, not(feature = "embedded")))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn embedded_without_the_feature_is_an_error_naming_the_feature() {
        let mut flags = Flags::parse_from(["image-police", "--embedded"]);
        let Err(error) = start_embedded(&mut flags).await;
        assert!(
            error
                .to_string()
                .contains("built without the `embedded` cargo feature"),
            "{error}"
        );
        assert_eq!(flags.manager.kubeconfig, None, "flags are left alone");
    }
}
