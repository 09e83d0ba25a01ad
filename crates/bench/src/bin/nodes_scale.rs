//! `nodes-scale`: the test server with its controller-manager and `--nodes` simulated Nodes
//! (`kubegen-nodesim`, kwok-style) in this process; `--deployments` Deployments of `--replicas`
//! Pods each are created at once, and the table says how long until every Pod is Ready (each
//! Deployment's `readyReplicas`), with the process's CPU time and memory. Issue 33's target:
//! 1,000 Nodes and 30,000 Pods Ready in under 60 s on 2 cores (kwok's own anchor is "1k Nodes
//! and 100k Pods"). A measurement printed as a table, never a timed assertion.
//!
//! ```text
//! cargo run --release -p kubegen-bench --bin nodes-scale                        # 1,000 × 30,000
//! cargo run --release -p kubegen-bench --bin nodes-scale -- --nodes 100 --deployments 3 --replicas 1000
//! ```
//!
//! Everything a Pod goes through is real work of the server: the ReplicaSet controller's creates
//! (slow-start batches), the scheduler's bindings, the kubelet's status writes (Running, then
//! Ready), each a request to the API server (the embedded components call it in-process, see
//! `kubegen_testserver`'s `in_process` module), watched by the controllers' informers. The
//! table counts the server's writes (each takes a resourceVersion: Pods, their status, Events,
//! the Nodes' Leases) from just before the Deployments are created to the last Pod Ready. The
//! memory is the whole process's: server, stored objects, controllers, simulator.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use clap::Parser;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Namespace;
use kubegen_bench::measure::Snapshot;
use kubegen_bench::table::markdown;
use kubegen_client::{CreateOptions, ListOptions, ResourceClient};
use kubegen_nodesim::NodeSimOptions;
use kubegen_testserver::{ServerOptions, TestServer};
use serde_json::json;

/// The namespace of the Deployments.
const NAMESPACE: &str = "nodes-scale";

#[derive(Parser, Debug)]
#[command(
    name = "nodes-scale",
    about = "Simulated Nodes and Pods on the test server: time until every Pod is Ready, memory"
)]
struct Args {
    /// Simulated Nodes.
    #[arg(long, default_value_t = 1000)]
    nodes: usize,
    /// Deployments.
    #[arg(long, default_value_t = 30)]
    deployments: usize,
    /// Pods per Deployment.
    #[arg(long, default_value_t = 1000)]
    replicas: i32,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 600)]
    timeout: u64,
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let args = Args::parse();
    let before = Snapshot::take();
    let mut options = ServerOptions::default();
    // Each Node holds its share and some room: the kubelet's 110 is too few for 30 per Node.
    let per_node = (args.deployments * args.replicas as usize).div_ceil(args.nodes.max(1)) + 10;
    options.simulated_nodes = Some(
        NodeSimOptions::default()
            .nodes(args.nodes)
            .capacity("64", "512Gi", per_node as u32)
            .kubelet_server(false),
    );
    let started = Instant::now();
    let server = TestServer::start_with(options).await;
    let client = server.client();
    let nodes_up = started.elapsed();
    let writes_before = server.api().resource_version();

    let namespace: Namespace = serde_json::from_value(json!({"metadata": {"name": NAMESPACE}}))?;
    ResourceClient::<Namespace>::cluster(client.clone())
        .create(&namespace, &CreateOptions::default())
        .await?;
    let deployments = ResourceClient::<Deployment>::namespaced(client.clone(), NAMESPACE);
    let created = Instant::now();
    for index in 0..args.deployments {
        let name = format!("web-{index}");
        let deployment: Deployment = serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {
                "replicas": args.replicas,
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}
                }
            }
        }))?;
        deployments
            .create(&deployment, &CreateOptions::default())
            .await?;
    }
    let want = args.deployments as i64 * i64::from(args.replicas);
    let mut ready = 0;
    let mut peak = Snapshot::take();
    while ready < want {
        if created.elapsed() > Duration::from_secs(args.timeout) {
            bail!("{ready} of {want} Pods Ready after {} s", args.timeout);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let list = deployments.list(&ListOptions::default()).await?;
        ready = list
            .items
            .iter()
            .filter_map(|d| d.status.as_ref()?.ready_replicas)
            .map(i64::from)
            .sum();
        peak = Snapshot::take();
        eprintln!(
            "{:>6.1} s: {ready} of {want} Pods Ready",
            created.elapsed().as_secs_f64()
        );
    }
    let all_ready = created.elapsed();
    // Every write (create, update, patch, delete, Event) takes the next resourceVersion.
    let writes = server.api().resource_version() - writes_before;
    let cpu = peak.cpu.saturating_sub(before.cpu);
    let rows = vec![vec![
        args.nodes.to_string(),
        want.to_string(),
        format!("{:.1}", nodes_up.as_secs_f64()),
        format!("{:.1}", all_ready.as_secs_f64()),
        format!("{:.0}", want as f64 / all_ready.as_secs_f64()),
        format!("{:.1}", cpu.as_secs_f64()),
        writes.to_string(),
        format!("{:.1}", writes as f64 / want as f64),
        format!("{:.0}", peak.rss_kib as f64 / 1024.0),
        format!("{:.0}", peak.hwm_kib as f64 / 1024.0),
    ]];
    println!(
        "{}",
        markdown(
            "Simulated Nodes and Pods on the test server",
            &[
                "Nodes",
                "Pods",
                "server + Nodes up (s)",
                "all Pods Ready (s)",
                "Pods/s",
                "CPU (s)",
                "writes",
                "writes per Pod",
                "RSS at the end (MiB)",
                "peak RSS (MiB)",
            ],
            &rows
        )
    );
    drop(server);
    Ok(())
}
