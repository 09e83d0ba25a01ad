//! `scale-out`: one controller at 1, 2, 3 and 5 replicas, unsharded (leader election) and
//! sharded (labels, or the server's `shardSelector`), under a rising rate of object changes;
//! prints throughput at a p99 wait under 1 s and memory and traffic per replica, each against the
//! single replica's.
//!
//! ```text
//! cargo run --release -p kubegen-bench --bin scale-out                     # in-process test server
//! cargo run --release -p kubegen-bench --bin scale-out -- \
//!     --kubeconfig /opt/k8s136/admin.kubeconfig --cleanup                  # a real API server
//! cargo run --release -p kubegen-bench --bin scale-out -- --modes labels --replicas 1,5
//! cargo run --release -p kubegen-bench --bin scale-out -- --plot-dir docs/img   # and plot it
//! ```
//!
//! Without `--replica` this is the parent: it starts an in-process test server (or uses the
//! kubeconfig's), loads `--objects` ConfigMaps into `<--namespace>-<objects>` (reused by a rerun),
//! measures one replica of each mode over no objects (the idle baseline of its heap), and for
//! each mode and replica count starts the replicas (re-executions of this binary with
//! `--replica`, each behind its own counting link; with labels, after labelling the objects with
//! their shards, `kubegen_bench::scale::placement`), waits until they settle, kills them and starts
//! their successors (a warm restart: the steady state of a running ring), waits again, searches
//! the highest sustained rate (`kubegen_bench::scale::steps`), reads their memory and traffic,
//! and stops them.
//! See `kubegen_bench::scale` and `docs/performance.md`.

use std::alloc::System;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use kubegen_bench::http::{RawClient, kubeconfig_client};
use kubegen_bench::roles::Dataset;
use kubegen_bench::scale::driver::Driver;
use kubegen_bench::scale::group::{Group, GroupSpec, Upstream};
use kubegen_bench::scale::placement;
use kubegen_bench::scale::replica::{self, Endpoint, ReplicaArgs};
use kubegen_bench::scale::results::{self, Run};
use kubegen_bench::scale::steps::{self, Plan};
use kubegen_bench::scale::{Mode, now_us};
use kubegen_bench::{loader, server};
use kubegen_client::{Client, Config, LoadOptions};
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

/// Counting allocator: each replica reports its live heap.
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Command line of both the parent and the replicas.
#[derive(Parser, Debug)]
#[command(
    name = "scale-out",
    about = "One controller at 1..N replicas: throughput at p99 < 1 s, memory and traffic per replica"
)]
struct Args {
    /// Replica mode: run one replica with this identity (the parent passes the rest).
    #[arg(long)]
    replica: Option<String>,
    /// Server URL: the parent uses this test server instead of starting one; a replica its link.
    #[arg(long)]
    url: Option<String>,
    /// A real API server's kubeconfig (its current context).
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// Replica: the URL of its link in front of the kubeconfig's server.
    #[arg(long)]
    master: Option<String>,
    /// ConfigMaps the controller watches.
    #[arg(long, default_value_t = 10_000)]
    objects: usize,
    /// Parent: the prefix of the namespace, `<prefix>-<objects>`. Replica: the namespace.
    #[arg(long, default_value = "kubegen-scale")]
    namespace: String,
    /// Replica counts to measure, in order.
    #[arg(long, value_delimiter = ',', default_value = "1,2,3,5")]
    replicas: Vec<usize>,
    /// Modes to measure, in order (unsharded, labels, shard-selector: the last needs a server
    /// with KEP-5866, the test server here or v1.36 with `--feature-gates=ShardedListAndWatch=true`).
    #[arg(long, value_delimiter = ',', default_value = "unsharded,labels")]
    modes: Vec<Mode>,
    /// Replica: its mode.
    #[arg(long, default_value = "labels")]
    mode: Mode,
    /// Workers per replica.
    #[arg(long, default_value_t = 4)]
    workers: usize,
    /// What one reconcile of a change costs (it sleeps), ms.
    #[arg(long, default_value_t = 20)]
    cost_ms: u64,
    /// Replica: changes stamped before this instant (µs since the epoch) cost nothing.
    #[arg(long, default_value_t = 0)]
    epoch_us: u64,
    /// Length of the saturation probe, seconds.
    #[arg(long, default_value_t = 6)]
    probe_secs: u64,
    /// Length of each step, seconds.
    #[arg(long, default_value_t = 10)]
    step_secs: u64,
    /// Give up on a group that has not settled after this many seconds.
    #[arg(long, default_value_t = 300)]
    settle_timeout_secs: u64,
    /// Also write the throughput and per-replica cache against the replica count as an SVG plot
    /// into this directory, named `scale-out-<server version>.svg`.
    #[arg(long)]
    plot_dir: Option<PathBuf>,
    /// Delete the ConfigMaps and both namespaces (the bench's and the idle one) afterwards.
    #[arg(long)]
    cleanup: bool,
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = Args::parse();
    match args.replica.clone() {
        Some(identity) => replica::run(replica_args(&args, identity)?).await,
        None => parent(&args).await,
    }
}

/// The replica's arguments from its command line.
fn replica_args(args: &Args, identity: String) -> Result<ReplicaArgs> {
    let endpoint = match (&args.url, &args.kubeconfig, &args.master) {
        (Some(url), None, _) => Endpoint::Url(url.clone()),
        (None, Some(path), Some(master)) => Endpoint::Kubeconfig {
            path: path.clone(),
            master: master.clone(),
        },
        _ => anyhow::bail!("a replica needs --url, or --kubeconfig and --master"),
    };
    Ok(ReplicaArgs {
        endpoint,
        namespace: args.namespace.clone(),
        identity,
        mode: args.mode,
        workers: args.workers,
        cost: Duration::from_millis(args.cost_ms),
        epoch_us: args.epoch_us,
    })
}

/// The server the parent measures against: its raw client (loading), a kubegen client (the
/// driver), where the replicas' links forward to, and its name for the tables.
struct Target {
    raw: RawClient,
    client: Client,
    upstream: Upstream,
    name: String,
    /// Keeps an in-process test server running.
    _server: Option<server::Server>,
}

async fn target(args: &Args) -> Result<Target> {
    if let Some(path) = &args.kubeconfig {
        let options = LoadOptions::default().kubeconfig_path(path);
        let config = Config::load(&options)
            .await
            .context("loading the kubeconfig")?;
        let server = config.cluster_url().to_string();
        return Ok(Target {
            raw: RawClient::from_kubeconfig(path).await?,
            client: kubeconfig_client(path, None).await?,
            upstream: Upstream::Kubeconfig {
                path: path.clone(),
                server: server.clone(),
            },
            name: format!("real API server {server}"),
            _server: None,
        });
    }
    let (server, url) = match &args.url {
        Some(url) => (None, url.clone()),
        None => {
            let mut options = kubegen_testserver::ServerOptions::default();
            options.sharded_list_and_watch = true;
            let server = server::Server::start_with(options).await?;
            let url = server.url();
            (Some(server), url)
        }
    };
    Ok(Target {
        raw: RawClient::new(&url),
        client: Client::new(Config::new(url.parse()?))?,
        upstream: Upstream::Url(url.clone()),
        name: if server.is_some() {
            "in-process test server".to_owned()
        } else {
            format!("test server {url}")
        },
        _server: server,
    })
}

async fn parent(args: &Args) -> Result<()> {
    let target = target(args).await?;
    let namespace = format!("{}-{}", args.namespace, args.objects);
    eprintln!(
        "loading {} ConfigMaps into {namespace} on the {}",
        args.objects, target.name
    );
    loader::load(&target.raw, Dataset::ConfigMaps, &namespace, args.objects).await?;
    let idle_namespace = format!("{}-idle", args.namespace);
    loader::ensure_namespace(&target.raw, &idle_namespace).await?;
    let mut driver = Driver::new(target.client.clone(), &namespace, args.objects);
    let mut runs = Vec::new();
    for &mode in &args.modes {
        let spec = GroupSpec {
            exe: std::env::current_exe().context("locating the bench binary")?,
            upstream: target.upstream.clone(),
            namespace: idle_namespace.clone(),
            mode,
            workers: args.workers,
            cost: Duration::from_millis(args.cost_ms),
        };
        let idle_heap = idle(args, &spec).await?;
        let spec = GroupSpec {
            namespace: namespace.clone(),
            ..spec
        };
        for &replicas in &args.replicas {
            runs.push(
                measure_placed(args, &target, &spec, replicas, &mut driver, idle_heap).await?,
            );
        }
    }
    print_tables(args, &target, &runs);
    if let Some(dir) = &args.plot_dir {
        plot(dir, &target, &runs).await?;
    }
    if args.cleanup {
        for namespace in [&namespace, &idle_namespace] {
            loader::delete_all(&target.raw, Dataset::ConfigMaps, namespace).await?;
        }
    }
    Ok(())
}

/// [`measure`], after placing the objects on their shards for a labelled group, or clearing
/// those labels for another; logs progress.
async fn measure_placed(
    args: &Args,
    target: &Target,
    spec: &GroupSpec,
    replicas: usize,
    driver: &mut Driver,
    idle_heap: u64,
) -> Result<Run> {
    let mode = spec.mode;
    if mode == Mode::Labels {
        let moved = placement::label(&target.client, &spec.namespace, replicas).await?;
        eprintln!("{mode} × {replicas}: labelled {moved} objects with their shards");
    } else {
        let cleared = placement::unlabel(&target.client, &spec.namespace).await?;
        if cleared > 0 {
            eprintln!("{mode} × {replicas}: cleared the shard labels of {cleared} objects");
        }
    }
    let run = measure(args, &target.client, spec, replicas, driver, idle_heap).await?;
    eprintln!(
        "{mode} × {replicas}: settled in {:.1}s cold, {:.1}s warm, sustained {:.0}/s",
        run.cold_settle.as_secs_f64(),
        run.settle.as_secs_f64(),
        run.search.sustained.as_ref().map_or(0.0, |o| o.made)
    );
    Ok(run)
}

/// Prints the three tables of `runs` on stdout.
fn print_tables(args: &Args, target: &Target, runs: &[Run]) {
    let setting = format!(
        "{} ConfigMaps, {} workers × {} ms per replica, {}",
        args.objects, args.workers, args.cost_ms, target.name
    );
    print!(
        "{}",
        results::throughput(&format!("Throughput: {setting}"), runs)
    );
    let footprint = format!("Memory and traffic per replica: {setting}");
    print!("{}", results::footprint(&footprint, runs));
    print!(
        "{}",
        results::stretches(&format!("Every stretch: {setting}"), runs)
    );
}

/// Plots `runs` into `dir` (see `--plot-dir`) and says where.
async fn plot(dir: &std::path::Path, target: &Target, runs: &[Run]) -> Result<()> {
    let version = match (&target.upstream, target.raw.version().await) {
        (Upstream::Kubeconfig { .. }, Some(version)) => version.release(),
        _ => None,
    };
    let server = version.unwrap_or_else(|| "test-server".to_owned());
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join(format!("scale-out-{server}.svg"));
    let title = format!("One controller over 1..N replicas on {server}");
    kubegen_bench::plot::lines(&path, &title, &results::charts(runs))?;
    eprintln!("plotted {}", path.display());
    Ok(())
}

/// The live heap of one replica of `spec` (in an empty namespace) once settled.
async fn idle(args: &Args, spec: &GroupSpec) -> Result<u64> {
    let mut group = Group::start(spec, 1, now_us()).await?;
    let settled = group
        .settle(0, Duration::from_secs(args.settle_timeout_secs))
        .await;
    let heap = group.read().first().map_or(0, |r| r.stat.live_bytes);
    group.stop().await;
    settled?;
    Ok(heap)
}

/// Waits until `group` has settled; with labels, also until every object carries its ring
/// owner's label (the shards' caches can add up to the population while a handover is still to
/// come). Returns how long it took.
async fn settle(
    args: &Args,
    client: &Client,
    spec: &GroupSpec,
    replicas: usize,
    group: &mut Group,
) -> Result<Duration> {
    let timeout = Duration::from_secs(args.settle_timeout_secs);
    let started = tokio::time::Instant::now();
    loop {
        let left = timeout.saturating_sub(started.elapsed());
        group.settle(args.objects, left).await?;
        if spec.mode != Mode::Labels
            || placement::misplaced(client, &spec.namespace, replicas).await? == 0
        {
            return Ok(started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Measures one group of `replicas` replicas; `idle_heap` is [`idle`]'s for its mode.
///
/// The group starts cold and settles, is killed, and its successors (same names, the Leases
/// still live) settle again: the search and the steady-state readings are the warm group's,
/// the cold start's settle time, peak RSS and traffic are reported beside them.
async fn measure(
    args: &Args,
    client: &Client,
    spec: &GroupSpec,
    replicas: usize,
    driver: &mut Driver,
    idle_heap: u64,
) -> Result<Run> {
    let epoch_us = now_us();
    let mut cold = Group::start(spec, replicas, epoch_us).await?;
    let cold_settle = settle(args, client, spec, replicas, &mut cold).await;
    let cold_readings = cold.read();
    cold.kill().await;
    let cold_settle = cold_settle?;
    let mut group = Group::start(spec, replicas, epoch_us).await?;
    let settle = match settle(args, client, spec, replicas, &mut group).await {
        Ok(settle) => settle,
        Err(error) => {
            group.stop().await;
            return Err(error);
        }
    };
    let settled = group.read();
    let plan = Plan {
        replica_capacity: args.workers as f64 * 1000.0 / args.cost_ms.max(1) as f64,
        active: if spec.mode == Mode::Unsharded {
            1
        } else {
            replicas
        },
        warmup: Duration::from_secs(3),
        probe: Duration::from_secs(args.probe_secs),
        step: Duration::from_secs(args.step_secs),
        drain: Duration::from_secs(30),
    };
    let search = steps::search(driver, group.reconciles(), &plan).await;
    let end = group.read();
    group.stop().await;
    Ok(Run {
        mode: spec.mode,
        replicas,
        cold_settle,
        cold: cold_readings,
        settle,
        settled,
        end,
        search: search?,
        idle_heap,
    })
}
