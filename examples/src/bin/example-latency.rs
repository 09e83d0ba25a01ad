//! Measures each example's end-to-end latency, create → reconciled, and prints a table:
//! for `n` objects, one at a time, the time from sending the create until a watcher sees the
//! result (network-controller: its handler was called; cluster-provisioner: the Kubeconfig
//! exists, with the simulated cloud set to no delay and no failures; vm-controller: the
//! VirtualMachine's status says Running, with a boot time of zero).
//!
//! `cargo run --release -p kubegen-examples --bin example-latency -- --embedded --n 200`
//! (or `--kubeconfig <file>` for a real cluster). A measurement, not a test: nothing asserts on it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use kubegen_api::cloudnative::v1alpha1::{VirtualMachine, VirtualMachinePhase};
use kubegen_api::clusterprovisioner::v1alpha1::{Cluster, Kubeconfig};
use kubegen_api::samplecrd::v1::Network;
use kubegen_cache::{FactoryOptions, HandlerFns};
use kubegen_client::{Client, DeleteOptions, ResourceClient};
use kubegen_examples::network::trace::{PipelineTrace, TraceOutput};
use kubegen_examples::network::{self, NetworkController};
use kubegen_examples::provisioner::cloud::CloudOptions;
use kubegen_examples::provisioner::{self, ClusterProvisioner, ProvisionerOptions};
use kubegen_examples::target::{Target, TargetFlags, create_if_absent, unique_suffix};
use kubegen_examples::vm::{self, VmController, VmOptions};
use kubegen_informers::SharedInformerFactory;
use tokio::sync::mpsc;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// How long one object may take before the run fails.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Measure create → reconciled latency of the examples.
#[derive(Debug, Parser)]
struct Flags {
    #[command(flatten)]
    target: TargetFlags,
    /// Objects per example, created one at a time.
    #[arg(long, default_value_t = 100)]
    n: usize,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let flags = Flags::parse();
    let trace = PipelineTrace::new(TraceOutput::Quiet);
    tracing_subscriber::registry().with(trace.layer()).init();
    let target = Target::connect(&flags.target).await?;
    let client = target.client().clone();
    let run = unique_suffix();

    let mut rows = Vec::new();
    rows.push((
        "network-controller",
        network_latency(&client, &trace, &run, flags.n).await?,
    ));
    rows.push((
        "cluster-provisioner",
        provisioner_latency(&client, &run, flags.n).await?,
    ));
    rows.push(("vm-controller", vm_latency(&client, &run, flags.n).await?));

    println!(
        "create → reconciled, {} objects each, one at a time",
        flags.n
    );
    println!("| example | p50 | p90 | p99 | max |");
    println!("|---|---|---|---|---|");
    for (example, mut samples) in rows {
        samples.sort();
        let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
        println!(
            "| {example} | {:.1} ms | {:.1} ms | {:.1} ms | {:.1} ms |",
            ms(at(0.5)),
            ms(at(0.9)),
            ms(at(0.99)),
            ms(at(1.0))
        );
    }
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Create a Network, wait for the handler call.
async fn network_latency(
    client: &Client,
    trace: &PipelineTrace,
    run: &str,
    n: usize,
) -> anyhow::Result<Vec<Duration>> {
    let controller =
        NetworkController::start(client.clone(), Some("default".to_owned()), trace.clone()).await?;
    let networks = ResourceClient::<Network>::namespaced(client.clone(), "default");
    let mut samples = Vec::with_capacity(n);
    for i in 0..n {
        let name = format!("latency-{run}-{i}");
        let start = Instant::now();
        create_if_absent(client, &network::sample("default", &name)).await?;
        let key = format!("default/{name}");
        trace
            .wait_handler_calls(&key, 1, TIMEOUT)
            .await
            .map_err(anyhow::Error::msg)?;
        samples.push(start.elapsed());
        networks.delete(&name, &DeleteOptions::default()).await?;
    }
    controller.shutdown().await;
    Ok(samples)
}

/// Create a Cluster (on a cloud without delay or failures), wait until a watcher sees its
/// Kubeconfig.
async fn provisioner_latency(
    client: &Client,
    run: &str,
    n: usize,
) -> anyhow::Result<Vec<Duration>> {
    let mut cloud = CloudOptions::default();
    cloud.provision_time = Duration::ZERO;
    cloud.fail_first_attempts = 0;
    let mut options = ProvisionerOptions::default();
    options.cloud = cloud;
    let controller = ClusterProvisioner::start(client.clone(), options).await?;
    let (mut written, watcher) = watch_names(client, |_: &Kubeconfig| true).await?;
    let clusters = ResourceClient::<Cluster>::cluster(client.clone());
    let mut samples = Vec::with_capacity(n);
    for i in 0..n {
        let name = format!("latency-{run}-{i}");
        let start = Instant::now();
        create_if_absent(client, &provisioner::sample(&name)).await?;
        wait_for(&mut written, &name).await?;
        samples.push(start.elapsed());
        clusters.delete(&name, &DeleteOptions::default()).await?;
    }
    watcher.shutdown().await;
    controller.shutdown().await;
    Ok(samples)
}

/// Create a VirtualMachine (booting in no time), wait until a watcher sees it Running.
async fn vm_latency(client: &Client, run: &str, n: usize) -> anyhow::Result<Vec<Duration>> {
    let mut options = VmOptions::default();
    options.namespace = Some("default".to_owned());
    options.boot_time = Duration::ZERO;
    let controller = VmController::start(client.clone(), options).await?;
    let running = |machine: &VirtualMachine| {
        let phase = machine.status.as_ref().and_then(|s| s.phase.as_ref());
        phase == Some(&VirtualMachinePhase::Running)
    };
    let (mut seen, watcher) = watch_names(client, running).await?;
    let machines = ResourceClient::<VirtualMachine>::namespaced(client.clone(), "default");
    let mut samples = Vec::with_capacity(n);
    for i in 0..n {
        let name = format!("latency-{run}-{i}");
        let start = Instant::now();
        create_if_absent(client, &vm::sample("default", &name)).await?;
        wait_for(&mut seen, &name).await?;
        samples.push(start.elapsed());
        machines.delete(&name, &DeleteOptions::default()).await?;
    }
    // The finalizer holds the last one until the controller has destroyed its machine.
    let last = format!("latency-{run}-{}", n.saturating_sub(1));
    while machines.get(&last, &Default::default()).await.is_ok() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    watcher.shutdown().await;
    controller.shutdown().await?;
    Ok(samples)
}

/// An informer of its own that reports the name of every `K` it sees added or updated in a
/// state where `done` holds.
async fn watch_names<K>(
    client: &Client,
    done: impl Fn(&K) -> bool + Send + Sync + 'static,
) -> anyhow::Result<(mpsc::UnboundedReceiver<String>, SharedInformerFactory)>
where
    K: kubegen_client::ApiObject + k8s_openapi::ListableResource + Send + Sync + 'static,
{
    let factory = SharedInformerFactory::new(client.clone(), FactoryOptions::default());
    let informer = factory.generic().informer::<K>();
    let (tx, rx) = mpsc::unbounded_channel();
    let report = Arc::new(move |obj: &K| {
        if done(obj) {
            let _ = tx.send(obj.meta().name.clone().unwrap_or_default());
        }
    });
    let on_update = Arc::clone(&report);
    let handler = HandlerFns::new()
        .on_add(move |obj: &Arc<K>, _| report(obj))
        .on_update(move |_, obj: &Arc<K>| on_update(obj));
    informer.add_event_handler(handler)?;
    factory.start();
    factory.wait_for_cache_sync(TIMEOUT).await?;
    Ok((rx, factory))
}

/// Waits until `names` yields `name`.
async fn wait_for(names: &mut mpsc::UnboundedReceiver<String>, name: &str) -> anyhow::Result<()> {
    let wait = async {
        while let Some(seen) = names.recv().await {
            if seen == name {
                return Ok(());
            }
        }
        Err(anyhow::anyhow!("the watcher stopped"))
    };
    tokio::time::timeout(TIMEOUT, wait)
        .await
        .map_err(|_| anyhow::anyhow!("{name}: not reconciled within {TIMEOUT:?}"))?
}
