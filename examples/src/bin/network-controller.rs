//! `network-controller`: prints every Network add/update/delete as its trip through the informer
//! (reflector → DeltaFIFO → indexer → handler). See `kubegen_examples::network` and
//! docs/informer-internals.md.
//!
//! `cargo run -p kubegen-examples --bin network-controller -- --embedded`

use clap::Parser;
use kubegen_examples::network::trace::{PipelineTrace, TraceOutput};
use kubegen_examples::network::{self, NetworkController};
use kubegen_examples::target::{Target, TargetFlags, unique_suffix};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer as _};

/// Watch Networks and print each one's trip through the informer.
#[derive(Debug, Parser)]
struct Flags {
    #[command(flatten)]
    target: TargetFlags,
    /// Watch only this namespace (default: all).
    #[arg(long)]
    namespace: Option<String>,
    /// Create, change and delete a sample Network once synced, so every kind of notification
    /// shows (on by default with --embedded).
    #[arg(long)]
    tour: bool,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let flags = Flags::parse();
    let trace = PipelineTrace::new(TraceOutput::Print);
    let log = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_filter(log))
        .with(trace.layer())
        .init();

    let target = Target::connect(&flags.target).await?;
    target.print_banner(
        "network-controller",
        "kubectl apply -f examples/manifests/network.yaml   (then edit or delete it)",
    );
    let client = target.client().clone();
    let controller =
        NetworkController::start(client.clone(), flags.namespace.clone(), trace.clone()).await?;
    if flags.tour || flags.target.embedded {
        let namespace = flags.namespace.as_deref().unwrap_or("default");
        let name = format!("tour-{}", unique_suffix());
        network::tour(&client, &trace, namespace, &name).await?;
    }
    kubegen_runtime::shutdown_signal().await;
    controller.shutdown().await;
    Ok(())
}
