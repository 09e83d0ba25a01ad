//! `image-police`: deletes Deployments that run images not on their namespace's WhiteList.
//! Everything but flag parsing, logging and signals lives in the library (`kubegen_controller::run`).

use std::process::ExitCode;

use clap::Parser as _;
use kubegen_controller::endpoints::Health;
use kubegen_controller::flags::{Flags, LogFormat};
use kubegen_controller::metrics::ProcessMetrics;
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> ExitCode {
    let mut flags = Flags::parse();
    init_logging(flags.log_format);
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
    kubegen_controller::run::run(
        flags,
        Health::default(),
        ProcessMetrics::default(),
        terminated(),
    )
    .await?;
    Ok(())
}

/// Starts the in-process API server and points `flags` at it; it stops when the result drops.
#[cfg(feature = "embedded")]
async fn start_embedded(
    flags: &mut Flags,
) -> anyhow::Result<kubegen_controller::embedded::Embedded> {
    let embedded = kubegen_controller::embedded::Embedded::start(&flags.deploy_dir).await?;
    eprintln!("{}", embedded.banner());
    flags.kubeconfig = Some(embedded.controller_kubeconfig().to_path_buf());
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

/// Resolves on SIGTERM (kubelet stopping the pod) or SIGINT (Ctrl-C).
async fn terminated() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => tracing::info!("SIGINT received"),
        () = term => tracing::info!("SIGTERM received"),
    }
}

fn init_logging(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
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
        assert_eq!(flags.kubeconfig, None, "flags are left alone");
    }
}
