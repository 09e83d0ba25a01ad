//! `kubegen-testserver`: runs the test API server until Ctrl-C so a person can point `curl` or
//! `kubectl` at it.

use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use kubegen_testserver::{ServerOptions, TestServer};

/// In-process Kubernetes API server (kubegen's test double).
#[derive(Debug, Parser)]
#[command(name = "kubegen-testserver", version)]
struct Args {
    /// Port on 127.0.0.1 (0: ephemeral).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Write a kubeconfig pointing at the server to this file.
    #[arg(long)]
    kubeconfig_out: Option<PathBuf>,
    /// Serve HTTPS with a generated CA (its data goes into the kubeconfig).
    #[arg(long)]
    tls: bool,
    /// Require this bearer token.
    #[arg(long)]
    token: Option<String>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // Logs go to stderr so stdout carries only the URL (scripts read it).
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let args = Args::parse();
    let mut options = ServerOptions::default();
    options.port = args.port;
    options.tls = args.tls;
    options.bearer_token = args.token;
    let server = TestServer::try_start(options)
        .await
        .context("starting the server")?;
    if let Some(path) = &args.kubeconfig_out {
        server
            .write_kubeconfig(path)
            .with_context(|| format!("writing {}", path.display()))?;
        tracing::info!(path = %path.display(), "kubeconfig written");
    }
    println!("{}", server.url());
    wait_for_signal().await?;
    tracing::info!("shutting down");
    Ok(())
}

/// Ctrl-C, or SIGTERM (how containers and process supervisors stop a program).
async fn wait_for_signal() -> anyhow::Result<()> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("installing the SIGTERM handler")?;
    tokio::select! {
        result = tokio::signal::ctrl_c() => result.context("waiting for Ctrl-C")?,
        _ = term.recv() => {}
    }
    Ok(())
}
