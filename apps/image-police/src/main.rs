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
    let deploy = flags.deploy_dir.clone();
    let mut embedded = kubegen_embedded::Embedded::start("image-police").await?;
    embedded
        .install_crds(&deploy.join("crd.yaml"), &deploy.join("crd-v1beta1.yaml"))
        .await?;
    embedded
        .install(&[
            deploy.join("samples"),
            deploy.join("sa.yaml"),
            deploy.join("rbac.yaml"),
        ])
        .await?;
    let webhook = embedded
        .install_webhooks(&deploy.join("webhook.yaml"))
        .await?;
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
