//! `image-police`: deletes Deployments that run images not on their namespace's WhiteList.
//! Everything but flag parsing, logging and signals lives in the library (`kubegen_controller::run`).

use std::process::ExitCode;

use clap::Parser as _;
use kubegen_controller::embedded::Embedded;
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
        let embedded = Embedded::start(&flags.deploy_dir).await?;
        eprintln!("{}", embedded.banner());
        flags.kubeconfig = Some(embedded.kubeconfig().to_path_buf());
        Some(embedded)
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
