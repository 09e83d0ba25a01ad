//! `cluster-provisioner`: provisions `Cluster` objects on a simulated cloud and writes their
//! `Kubeconfig`s, retrying failed cloud calls with backoff. See `kubegen_examples::provisioner`.
//!
//! `cargo run -p kubegen-examples --bin cluster-provisioner -- --embedded`

use std::time::Duration;

use clap::Parser;
use kubegen_examples::provisioner::cloud::CloudOptions;
use kubegen_examples::provisioner::{self, ClusterProvisioner, ProvisionerOptions};
use kubegen_examples::target::{Target, TargetFlags, create_if_absent};
use tracing_subscriber::EnvFilter;

/// Provision Clusters on a simulated cloud and write their Kubeconfigs.
#[derive(Debug, Parser)]
struct Flags {
    #[command(flatten)]
    target: TargetFlags,
    /// Milliseconds the simulated cloud takes to create a cluster.
    #[arg(long, default_value_t = 2000)]
    provision_ms: u64,
    /// How many cloud calls per cluster fail before one is accepted (deterministic failure
    /// injection: the retries and their backoff show in the log).
    #[arg(long, default_value_t = 2)]
    fail_first_attempts: u32,
    /// First retry delay of a failing cluster, in milliseconds; it doubles per failure.
    #[arg(long, default_value_t = 250)]
    retry_base_ms: u64,
    /// Concurrent reconciles.
    #[arg(long, default_value_t = 2)]
    workers: usize,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let flags = Flags::parse();
    let log = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(log).init();

    let target = Target::connect(&flags.target).await?;
    target.print_banner(
        "cluster-provisioner",
        "kubectl apply -f examples/manifests/cluster.yaml; kubectl get clusters,kubeconfigs",
    );
    let mut options = ProvisionerOptions::default();
    options.cloud = {
        let mut cloud = CloudOptions::default();
        cloud.provision_time = Duration::from_millis(flags.provision_ms);
        cloud.fail_first_attempts = flags.fail_first_attempts;
        cloud
    };
    options.retry_base = Duration::from_millis(flags.retry_base_ms);
    options.workers = flags.workers;
    let controller = ClusterProvisioner::start(target.client().clone(), options).await?;
    if flags.target.embedded {
        create_if_absent(target.client(), &provisioner::sample("demo")).await?;
        println!("  created Cluster demo");
    }
    kubegen_runtime::shutdown_signal().await;
    controller.shutdown().await;
    Ok(())
}
