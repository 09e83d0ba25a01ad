//! `vm-controller`: runs VirtualMachine objects on a simulated hypervisor, on kubegen-runtime
//! (finalizer, status with conditions, requeue-after while booting). See `kubegen_examples::vm`.
//!
//! `cargo run -p kubegen-examples --bin vm-controller -- --embedded`

use std::time::Duration;

use clap::Parser;
use kubegen_examples::target::{Target, TargetFlags, create_if_absent};
use kubegen_examples::vm::{self, VmController, VmOptions};
use kubegen_runtime::webhook::WebhookOptions;
use kubegen_sharding::{ReplicaConfig, Ring};
use tracing_subscriber::EnvFilter;

/// Run VirtualMachines on a simulated hypervisor.
#[derive(Debug, Parser)]
struct Flags {
    #[command(flatten)]
    target: TargetFlags,
    /// Watch only this namespace (default: all).
    #[arg(long)]
    namespace: Option<String>,
    /// Milliseconds a machine takes to boot.
    #[arg(long, default_value_t = 2000)]
    boot_ms: u64,
    /// Concurrent reconciles.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Serve the CRD conversion webhook (v1alpha1 <-> v1) on this port; 0 (the default) does not.
    /// The in-process server (`--embedded`) reaches webhooks by `url` only, not the CRD's Service.
    #[arg(long, default_value_t = 0)]
    webhook_port: u16,
    /// The directory holding the webhook's `tls.crt` and `tls.key`.
    #[arg(long, default_value = kubegen_runtime::webhook::DEFAULT_CERT_DIR)]
    webhook_cert_dir: std::path::PathBuf,
    /// Shard the VirtualMachines across the replicas over the ring of this name (every replica
    /// active on its share) instead of one replica doing all.
    #[arg(long)]
    sharding_ring: Option<String>,
    /// The namespace of the shard Leases. Default: the client's (in a pod, its own).
    #[arg(long)]
    lease_namespace: Option<String>,
    /// This replica's shard name. Default: the host name (in a pod, its name).
    #[arg(long, env = "POD_NAME")]
    identity: Option<String>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let flags = Flags::parse();
    let log = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(log).init();

    let target = Target::connect(&flags.target).await?;
    target.print_banner(
        "vm-controller",
        "kubectl get vm -w   (then kubectl delete vm demo: the finalizer destroys the machine first)",
    );
    let mut options = VmOptions::default();
    options.namespace = flags.namespace.clone();
    options.boot_time = Duration::from_millis(flags.boot_ms);
    options.workers = flags.workers;
    options.webhook = (flags.webhook_port != 0).then(|| {
        WebhookOptions::default()
            .bind_address(std::net::SocketAddr::from((
                [0, 0, 0, 0],
                flags.webhook_port,
            )))
            .cert_dir(&flags.webhook_cert_dir)
    });
    options.identity = flags.identity.clone();
    options.sharding = flags.sharding_ring.as_deref().map(|ring| {
        let client = target.client();
        let lease_namespace = flags
            .lease_namespace
            .as_deref()
            .unwrap_or_else(|| client.default_namespace());
        let mut config = ReplicaConfig::new(Ring::new(ring, lease_namespace), "");
        config.namespace = flags.namespace.clone();
        config
    });
    let controller = VmController::start(target.client().clone(), options).await?;
    if flags.target.embedded {
        create_if_absent(target.client(), &vm::sample("default", "demo")).await?;
        println!("  created VirtualMachine default/demo");
    }
    controller
        .run_until(kubegen_runtime::shutdown_signal())
        .await
}
