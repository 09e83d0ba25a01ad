//! `watch-fanin`: events/s and write-to-handler latency through reflector -> DeltaFIFO ->
//! indexer -> handler -> workqueue.
//!
//! ```text
//! cargo run --release -p kubegen-bench --bin watch-fanin
//! ```
//!
//! Runs the `pipeline` source (synthetic watch, no HTTP: the informer's own ceiling) and the
//! `server` source (in-process test server, watch over HTTP) at full speed, then paced at 1k and
//! 10k events/s. See `kubegen_bench::fanin` and `docs/performance.md`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use clap::Parser;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube_core::WatchEvent;
use kubegen_bench::fanin::{
    ChannelListWatch, Clock, FanIn, KEYS, informer, measure, paced, seq_from_data, seq_from_rv,
};
use kubegen_cache::ClientListWatch;
use kubegen_client::{Client, Config, ListOptions, ResourceClient};
use kubegen_testserver::{ApiServer, TestServer};
use parking_lot::Mutex;

/// Command line.
#[derive(Parser, Debug)]
#[command(name = "watch-fanin", about = "Watch fan-in throughput and latency")]
struct Args {
    /// Events of the full-speed pipeline run.
    #[arg(long, default_value_t = 200_000)]
    pipeline_events: usize,
    /// Events of the full-speed server run.
    #[arg(long, default_value_t = 20_000)]
    server_events: usize,
    /// Seconds of each paced run.
    #[arg(long, default_value_t = 5)]
    secs: u64,
}

#[tokio::main]
async fn main() -> Result<()> {
    run(Args::parse()).await
}

async fn run(args: Args) -> Result<()> {
    let mut rows = Vec::new();
    for rate in [0, 1_000, 10_000] {
        let count = if rate == 0 {
            args.pipeline_events
        } else {
            (rate * args.secs) as usize
        };
        rows.push(("pipeline", rate, pipeline(count, rate).await?));
    }
    let server = TestServer::start().await;
    let mut offset = 0;
    for rate in [0, 1_000, 10_000] {
        let count = if rate == 0 {
            args.server_events
        } else {
            (rate * args.secs) as usize
        };
        rows.push((
            "server",
            rate,
            through_server(&server, count, rate, offset).await?,
        ));
        offset += count;
    }
    println!(
        "\n| source | target events/s | events | achieved events/s | p50 µs | p99 µs | max µs | keys processed |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (source, rate, result) in rows {
        let target = if rate == 0 {
            "max".to_owned()
        } else {
            rate.to_string()
        };
        let [p50, p99, max] = result.latency_us;
        println!(
            "| {source} | {target} | {} | {:.0} | {p50:.0} | {p99:.0} | {max:.0} | {} |",
            result.events, result.events_per_second, result.processed
        );
    }
    Ok(())
}

/// The synthetic source: pre-built events through a channel into the informer.
async fn pipeline(count: usize, rate: u64) -> Result<FanIn> {
    let (list_watch, sender) = ChannelListWatch::new();
    let events: Vec<WatchEvent<ConfigMap>> = (0..count)
        .map(|seq| {
            let object = config_map(&format!("obj-{:05}", seq % KEYS), seq, Some(seq + 2));
            if seq < KEYS {
                WatchEvent::Added(object)
            } else {
                WatchEvent::Modified(object)
            }
        })
        .collect();
    let clock = Clock::new(count);
    let producer_clock = Arc::clone(&clock);
    let events = Arc::new(Mutex::new(events.into_iter()));
    let produce = async move {
        paced(count, rate, |seq| {
            let next = events.lock().next();
            producer_clock.stamp(seq);
            let sent = next.map(|event| sender.send(event).is_ok());
            async move {
                match sent {
                    Some(true) => Ok(()),
                    _ => bail!("the informer stopped reading events"),
                }
            }
        })
        .await
    };
    let informer = informer(list_watch, "fanin-pipeline");
    measure(
        informer,
        clock,
        seq_from_rv,
        produce,
        Duration::from_secs(120),
    )
    .await
}

/// The server source: creates through `ApiServer::handle`, informer over HTTP.
async fn through_server(
    server: &TestServer,
    count: usize,
    rate: u64,
    offset: usize,
) -> Result<FanIn> {
    let client = Client::new(Config::new(server.url().parse()?)).context("client")?;
    let namespace = format!("fanin-{offset}");
    create_named_namespace(&server.api(), &namespace).await?;
    let resources = ResourceClient::<ConfigMap>::namespaced(client, &namespace);
    let informer = informer(
        ClientListWatch::new(resources, ListOptions::default()),
        "fanin-server",
    );
    let clock = Clock::new(count);
    let producer_clock = Arc::clone(&clock);
    let api = server.api();
    let path = format!("/api/v1/namespaces/{namespace}/configmaps");
    let produce = async move {
        paced(count, rate, |seq| {
            let body = serde_json::to_vec(&config_map(&format!("ev-{seq:06}"), seq, None));
            producer_clock.stamp(seq);
            let (api, path) = (api.clone(), path.clone());
            async move { post(&api, &path, Bytes::from(body?)).await }
        })
        .await
    };
    measure(
        informer,
        clock,
        seq_from_data,
        produce,
        Duration::from_secs(120),
    )
    .await
}

fn config_map(name: &str, seq: usize, rv: Option<usize>) -> ConfigMap {
    // Pipeline events carry a namespace (their key); server writes take it from the URL.
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: rv.map(|_| "fanin".to_owned()),
            resource_version: rv.map(|rv| rv.to_string()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("seq".to_owned(), seq.to_string())])),
        ..ConfigMap::default()
    }
}

async fn create_named_namespace(api: &ApiServer, name: &str) -> Result<()> {
    let body =
        serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
    post(api, "/api/v1/namespaces", Bytes::from(body.to_string())).await
}

async fn post(api: &ApiServer, path: &str, body: Bytes) -> Result<()> {
    let request = http::Request::builder()
        .method(http::Method::POST)
        .uri(path)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(body)
        .context("building request")?;
    let response = api.handle(request).await;
    let status = response.status();
    if !status.is_success() && status != http::StatusCode::CONFLICT {
        bail!("POST {path}: {status}");
    }
    Ok(())
}
