//! The {{name}} binary: flags, logging, kubeconfig, then the manager built by [`{{crate}}::manager`]
//! until SIGTERM or SIGINT.
//!
//! The flags are controller-runtime's (`--metrics-bind-address`, `--health-probe-bind-address`,
//! `--leader-elect`, ...), so deploy/deployment.yaml reads like any operator's.

use clap::Parser;

/// Reconciles {{plural}}.{{group}}.
#[derive(Parser)]
#[command(version)]
struct Flags {
    #[command(flatten)]
    manager: kubegen_runtime::ManagerFlags,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let flags = Flags::parse();
    flags.manager.init_logging()?;
    let client = flags.manager.client().await?;
    let options = flags.manager.options(&client, {{crate}}::NAME)?;
    let manager = {{crate}}::manager(client, options)?;
    tracing::info!(name = {{crate}}::NAME, "starting");
    // Drains in-flight reconciles and releases the leader lease before returning.
    manager.run(kubegen_runtime::shutdown_signal()).await?;
    Ok(())
}
