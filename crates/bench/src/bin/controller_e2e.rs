//! `controller-e2e`: how fast image-police clears a namespace of forbidden Deployments.
//!
//! ```text
//! cargo run --release -p kubegen-bench --bin controller-e2e -- --n 1000 --burst 100
//! # the same with the controller's informers keeping bytes (`StoreMode::Bytes`)
//! cargo run --release -p kubegen-bench --bin controller-e2e -- --n 1000 --burst 100 --cache-store bytes
//! ```
//!
//! One process holds everything: an in-process kubegen-testserver with deploy/crd.yaml, the
//! `police-demo` namespace and its WhiteList (deploy/samples/00 and 10, installed through
//! `kubegen_runtime::manifests`), the controller itself (`kubegen_controller::run::run`, the
//! same function the `image-police` binary calls, endpoints disabled), and the load driver. The
//! driver POSTs `--n` real-looking Deployments (`kubegen_bench::data::deployment`, ~5 KiB, images
//! not on the WhiteList) in bursts of `--burst` with `--pause-ms` between bursts, while a watch on
//! the namespace notes when each one's DELETED event arrives.
//!
//! Measured: the wall time from the first POST until the last deletion is observed, per-Deployment
//! latency from its POST being sent to its DELETED event (p50/p99/max), and deletions per second.
//! The latency includes the server's write, the controller's watch, queueing, the reconcile and
//! the DELETE, and our own watch: it is what a user would see, not the reconcile alone.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use clap::Parser;
use futures_util::StreamExt;
use futures_util::stream;
use http::{Method, StatusCode};
use k8s_openapi::api::apps::v1::Deployment;
use kubegen_bench::data;
use kubegen_bench::http::RawClient;
use kubegen_bench::measure::nearest_rank_ms;
use kubegen_client::{ListOptions, ResourceClient, WatchEvent};
use kubegen_controller::flags::Flags;
use kubegen_runtime::manifests;
use parking_lot::Mutex;
use tokio::sync::oneshot;

/// The namespace deploy/samples/00-namespace.yaml creates; its WhiteList allows nginx and busybox.
const NAMESPACE: &str = "police-demo";

/// POSTs in flight within one burst.
const CONCURRENCY: usize = 32;

/// Command line.
#[derive(Parser, Debug)]
#[command(
    name = "controller-e2e",
    about = "Controller end-to-end: forbidden Deployments created in bursts until all are deleted"
)]
struct Args {
    /// Number of forbidden Deployments.
    #[arg(long, default_value_t = 1_000)]
    n: usize,
    /// Deployments per burst.
    #[arg(long, default_value_t = 100)]
    burst: usize,
    /// Pause between bursts, in milliseconds.
    #[arg(long, default_value_t = 100)]
    pause_ms: u64,
    /// Controller workers (`--workers` of image-police).
    #[arg(long, default_value_t = 2)]
    workers: u16,
    /// How the controller's informers keep their objects (image-police's `--cache-store`):
    /// `decoded` or `bytes`.
    #[arg(long, default_value = "decoded")]
    cache_store: String,
    /// Give up when not everything is deleted after this many seconds.
    #[arg(long, default_value_t = 300)]
    timeout_secs: u64,
    /// Directory holding crd.yaml and samples/ (default: the repository's deploy/).
    #[arg(long)]
    deploy_dir: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> Result<()> {
    bench(Args::parse()).await
}

/// Create instants by Deployment name, filled by the driver, read by the watch.
type Created = Arc<Mutex<HashMap<String, Instant>>>;

async fn bench(args: Args) -> Result<()> {
    if args.n == 0 || args.burst == 0 {
        bail!("--n and --burst must be at least 1");
    }
    let deploy_dir = args
        .deploy_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../deploy"));
    let server = kubegen_testserver::TestServer::start().await;
    let client = server.client();
    let samples = deploy_dir.join("samples");
    manifests::create_from_paths(
        &client,
        &[
            deploy_dir.join("crd.yaml"),
            samples.join("00-namespace.yaml"),
            samples.join("10-whitelist.yaml"),
        ],
    )
    .await
    .context("installing the CRD, namespace and WhiteList")?;
    eprintln!("server: {}", server.url());

    let flags = Flags::try_parse_from([
        "image-police".to_owned(),
        "--own-namespace=image-police-bench".to_owned(),
        "--metrics-bind-address=0".to_owned(),
        "--health-probe-bind-address=0".to_owned(),
        // No admission webhook: it would need serving certificates, and without them the manager
        // stops before its caches are ready. The benchmark drives the reconcile loop only.
        "--webhook-port=0".to_owned(),
        format!("--workers={}", args.workers),
        format!("--cache-store={}", args.cache_store),
    ])
    .context("controller flags")?;
    let manager = kubegen_controller::run::manager(&flags, server.client())?;
    let ready = manager.health().clone();
    let (stop, stopped) = oneshot::channel::<()>();
    let controller = tokio::spawn(manager.run(async {
        let _ = stopped.await;
    }));
    let wait_ready = async {
        while !ready.is_ready() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), wait_ready)
        .await
        .context("controller not ready within 60s")?;

    let deployments = ResourceClient::<Deployment>::namespaced(client.clone(), NAMESPACE);
    let mut watch = deployments
        .watch(&ListOptions::default())
        .await
        .context("watching Deployments")?;
    let created: Created = Arc::default();
    let started = Instant::now();
    let driver = tokio::spawn(drive(
        RawClient::new(&server.url()),
        args.n,
        args.burst,
        args.pause_ms,
        Arc::clone(&created),
    ));

    let mut latencies = Vec::with_capacity(args.n);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(args.timeout_secs);
    while latencies.len() < args.n {
        let event = tokio::time::timeout_at(deadline, watch.next())
            .await
            .with_context(|| format!("only {} of {} deleted in time", latencies.len(), args.n))?;
        let Some(event) = event else {
            bail!("the Deployment watch ended")
        };
        if let WatchEvent::Deleted(deployment) = event.context("Deployment watch")? {
            let at = Instant::now();
            let name = deployment.metadata.name.unwrap_or_default();
            match created.lock().get(&name) {
                Some(sent) => latencies.push(at.duration_since(*sent)),
                None => eprintln!("deleted {name}, which the driver did not create"),
            }
        }
    }
    let total = started.elapsed();
    driver.await.context("driver task")??;
    let _ = stop.send(());
    match tokio::time::timeout(Duration::from_secs(30), controller).await {
        Ok(Ok(Ok(()))) => {}
        Ok(Ok(Err(error))) => eprintln!("controller stopped with: {error:#}"),
        Ok(Err(error)) => eprintln!("controller task: {error}"),
        Err(_) => eprintln!("controller did not stop within 30s"),
    }
    print!("{}", render(&args, total, &mut latencies));
    Ok(())
}

/// POSTs Deployments `0..n` in bursts of `burst`, `CONCURRENCY` at a time, pausing between bursts.
async fn drive(
    client: RawClient,
    n: usize,
    burst: usize,
    pause_ms: u64,
    created: Created,
) -> Result<()> {
    let collection = format!("/apis/apps/v1/namespaces/{NAMESPACE}/deployments");
    let mut next = 0;
    while next < n {
        let end = (next + burst).min(n);
        let mut results = stream::iter(next..end)
            .map(|index| {
                let (client, collection, created) = (&client, &collection, &created);
                async move {
                    let deployment = data::deployment(NAMESPACE, index);
                    let body = Bytes::from(serde_json::to_vec(&deployment)?);
                    created
                        .lock()
                        .insert(data::deployment_name(index), Instant::now());
                    let (status, reply) = client.send(Method::POST, collection, body).await?;
                    if status != StatusCode::CREATED && !status.is_success() {
                        bail!(
                            "POST {collection}: {status}: {}",
                            String::from_utf8_lossy(&reply)
                        );
                    }
                    Ok(())
                }
            })
            .buffer_unordered(CONCURRENCY);
        while let Some(result) = results.next().await {
            result?;
        }
        next = end;
        if next < n {
            tokio::time::sleep(Duration::from_millis(pause_ms)).await;
        }
    }
    Ok(())
}

/// The result table; sorts `latencies`.
fn render(args: &Args, total: Duration, latencies: &mut [Duration]) -> String {
    latencies.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    #[allow(clippy::cast_precision_loss)]
    let rate = latencies.len() as f64 / total.as_secs_f64().max(f64::MIN_POSITIVE);
    format!(
        "\n### Controller end-to-end: {} forbidden Deployments, bursts of {} every {} ms, {} workers\n\n\
         | deleted | total ms (first create → last delete) | create→delete p50 ms | p99 ms | max ms | deletions/s |\n\
         |---:|---:|---:|---:|---:|---:|\n\
         | {} | {:.0} | {:.1} | {:.1} | {:.1} | {:.0} |\n",
        args.n,
        args.burst,
        args.pause_ms,
        args.workers,
        latencies.len(),
        ms(total),
        nearest_rank_ms(latencies, 0.50),
        nearest_rank_ms(latencies, 0.99),
        latencies.last().copied().map_or(f64::NAN, ms),
        rate,
    )
}
