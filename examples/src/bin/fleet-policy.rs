//! `fleet-policy`: image-police over a fleet. The hub's WhiteLists are enforced on the
//! Deployments of every member cluster named by the hub's Cluster API kubeconfig Secrets. See
//! `kubegen_examples::fleet`.
//!
//! `cargo run -p kubegen-examples --bin fleet-policy -- --kubeconfig hub.kubeconfig`

use std::time::Duration;

use clap::Parser;
use kubegen_examples::fleet::{FleetPolicy, FleetPolicyOptions};
use kubegen_examples::target::{Target, TargetFlags};
use tracing_subscriber::EnvFilter;

/// Enforce the hub's WhiteLists in every member cluster.
#[derive(Debug, Parser)]
struct Flags {
    #[command(flatten)]
    target: TargetFlags,
    /// The hub namespace of the members' `<cluster>-kubeconfig` Secrets.
    #[arg(long, default_value = "default")]
    secrets_namespace: String,
    /// Only this namespace: its WhiteLists in the hub, its Deployments in the members (default:
    /// every namespace).
    #[arg(long)]
    namespace: Option<String>,
    /// Seconds between probes of each member.
    #[arg(long, default_value_t = 5)]
    probe_seconds: u64,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let flags = Flags::parse();
    let log = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(log).init();

    let target = Target::connect(&flags.target).await?;
    target.print_banner(
        "fleet-policy",
        "kubectl create secret generic m1-kubeconfig --from-file=value=m1.kubeconfig && kubectl label secret m1-kubeconfig cluster.x-k8s.io/cluster-name=m1 && kubectl apply -f deploy/samples/00-namespace.yaml -f deploy/samples/10-whitelist.yaml",
    );
    let options = FleetPolicyOptions {
        secrets_namespace: flags.secrets_namespace,
        namespace: flags.namespace,
        probe_period: Duration::from_secs(flags.probe_seconds),
    };
    FleetPolicy::start(target.client().clone(), &options)
        .run_until(kubegen_runtime::shutdown_signal())
        .await
}
