//! `informer-sync`: cold informer sync, kubegen vs kube-rs vs the decode and transfer floors.
//!
//! ```text
//! cargo run --release -p kubegen-bench --bin informer-sync -- --n 10000
//! cargo run --release -p kubegen-bench --bin informer-sync -- --full      # 100k ConfigMaps
//! cargo run --release -p kubegen-bench --bin informer-sync -- --link-mbit 1000   # over a paced link
//! cargo run --release -p kubegen-bench --features mimalloc --bin informer-sync   # every client on mimalloc
//! ```
//!
//! Without `--role` this is the parent: it starts an in-process test server (or uses `--url`),
//! loads the data, then runs each client in its own child process and prints the tables. With
//! `--role` it is such a child. See `docs/performance.md`.

#[cfg(not(feature = "mimalloc"))]
use std::alloc::System;

use anyhow::{Context, Result};
use clap::Parser;
use kubegen_bench::http::RawClient;
use kubegen_bench::roles::{Dataset, Job, Role};
use kubegen_bench::runner::{Runner, child_main};
use kubegen_bench::table::{Row, ratios, render};
use kubegen_bench::{link, loader, server};
#[cfg(not(feature = "mimalloc"))]
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

#[cfg(not(feature = "mimalloc"))]
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Command line of both the parent and the children.
#[derive(Parser, Debug)]
#[command(
    name = "informer-sync",
    about = "Cold informer sync: kubegen vs kube-rs vs floors"
)]
struct Args {
    /// Child mode: measure this client (kubegen, kube-rs, floor, raw) and print one result line.
    #[arg(long)]
    role: Option<Role>,
    /// Server URL. Parent: use this server instead of starting a test server (data must fit).
    #[arg(long)]
    url: Option<String>,
    /// Number of ConfigMaps (parent), or of objects expected (child).
    #[arg(long, default_value_t = 10_000)]
    n: usize,
    /// Number of Deployments with managedFields (parent); 0 skips that dataset.
    #[arg(long, default_value_t = 10_000)]
    deployments: usize,
    /// The large run: 100k ConfigMaps.
    #[arg(long)]
    full: bool,
    /// Child: which dataset to list.
    #[arg(long, default_value = "configmaps")]
    dataset: Dataset,
    /// Namespace holding the dataset.
    #[arg(long, default_value = "bench")]
    namespace: String,
    /// Child: strip managedFields before caching.
    #[arg(long)]
    strip_managed_fields: bool,
    /// Parent: measure each client this many times and keep the run with the median wall time.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Parent: put a simulated network link of this many Mbit/s between the clients and the server
    /// (see `kubegen_bench::link`); without it the clients use loopback at full speed.
    #[arg(long)]
    link_mbit: Option<f64>,
    /// Parent: round-trip time of the simulated link, in milliseconds.
    #[arg(long, default_value_t = 2)]
    link_rtt_ms: u64,
    /// Parent: load the data, print the server URL, serve for this many seconds and exit without
    /// measuring (to profile one role by hand: `perf record informer-sync --role kubegen --url ..`).
    #[arg(long)]
    serve_secs: Option<u64>,
}

fn main() -> Result<()> {
    let args = Args::parse();
    if let Some(role) = args.role {
        let url = args.url.clone().context("--role needs --url")?;
        return child_main(&Job {
            role,
            url,
            dataset: args.dataset,
            namespace: args.namespace.clone(),
            expect: args.n,
            strip_managed_fields: args.strip_managed_fields,
        });
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("building the runtime")?;
    runtime.block_on(parent(args))
}

async fn parent(args: Args) -> Result<()> {
    let configmaps = if args.full { 100_000 } else { args.n };
    let server = match &args.url {
        Some(url) => server::Server::External(url.clone()),
        None => server::Server::start().await?,
    };
    let server_url = server.url();
    eprintln!("server: {server_url}");
    let client = RawClient::new(&server_url);
    let link = match args.link_mbit {
        Some(mbit) => Some(link::Link::start(&server_url, mbit, args.link_rtt_ms).await?),
        None => None,
    };
    let (url, network) = match &link {
        Some(link) => (link.url().to_owned(), link.to_string()),
        None => (server_url.clone(), "loopback".to_owned()),
    };
    let runner = Runner::current()?;
    let mut sets = vec![(Dataset::ConfigMaps, "cm", configmaps)];
    if args.deployments > 0 {
        sets.push((Dataset::Deployments, "deploy", args.deployments));
    }
    for (dataset, namespace_prefix, count) in sets {
        let namespace = format!("{}-{namespace_prefix}-{count}", args.namespace);
        let started = std::time::Instant::now();
        loader::load(&client, dataset, &namespace, count).await?;
        eprintln!(
            "loaded {count} {} in {:.1?}",
            dataset.as_str(),
            started.elapsed()
        );
        if args.serve_secs.is_some() {
            println!("{} {namespace} {count} at {url}", dataset.as_str());
            continue;
        }
        let mut jobs: Vec<(String, Job)> = Role::ALL
            .iter()
            .map(|role| {
                (
                    role.as_str().to_owned(),
                    job(*role, &url, dataset, &namespace, count, false),
                )
            })
            .collect();
        if dataset == Dataset::Deployments {
            for role in [Role::KubeRs, Role::Kubegen] {
                let label = format!("{} + strip managedFields", role.as_str());
                jobs.push((label, job(role, &url, dataset, &namespace, count, true)));
            }
        }
        let mut rows = Vec::new();
        for (label, job) in jobs {
            match median_run(&runner, &job, args.runs).await {
                Ok(cost) => rows.push(Row { label, cost }),
                Err(error) => eprintln!("{label}: FAILED: {error:#}"),
            }
        }
        let title = format!("{count} {} (page size 500, {network})", dataset.as_str());
        print!("{}", render(&title, &rows));
        print!("{}", ratios(&rows, "kubegen"));
    }
    if let Some(secs) = args.serve_secs {
        tokio::time::sleep(std::time::Duration::from_secs(secs)).await;
    }
    Ok(())
}

fn job(
    role: Role,
    url: &str,
    dataset: Dataset,
    namespace: &str,
    expect: usize,
    strip: bool,
) -> Job {
    Job {
        role,
        url: url.to_owned(),
        dataset,
        namespace: namespace.to_owned(),
        expect,
        strip_managed_fields: strip,
    }
}

/// Runs `job` `runs` times (at least once) and returns the run with the median wall time.
async fn median_run(
    runner: &Runner,
    job: &Job,
    runs: usize,
) -> Result<kubegen_bench::measure::Cost> {
    let mut costs = Vec::new();
    for _ in 0..runs.max(1) {
        costs.push(runner.run(job).await?);
    }
    costs.sort_by(|a, b| a.wall_ms.total_cmp(&b.wall_ms));
    let middle = costs.len() / 2;
    Ok(costs.swap_remove(middle))
}
