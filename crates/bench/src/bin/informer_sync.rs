//! `informer-sync`: cold informer sync, kubegen vs kube-rs vs the decode and transfer floors.
//!
//! ```text
//! cargo run --release -p kubegen-bench --bin informer-sync -- --n 10000
//! cargo run --release -p kubegen-bench --bin informer-sync -- --full      # 100k ConfigMaps
//! cargo run --release -p kubegen-bench --bin informer-sync -- --link-mbit 1000   # over a paced link
//! cargo run --release -p kubegen-bench --features mimalloc --bin informer-sync   # every client on mimalloc
//! # a real API server (TLS + token from the kubeconfig); data is loaded once and reused
//! cargo run --release -p kubegen-bench --bin informer-sync -- \
//!     --kubeconfig /opt/k8s136/admin.kubeconfig --n 60000 --deployments 10000 --runs 5
//! # the same, also plotted (docs/img/informer-sync-v1.36.2-configmaps.svg, ...)
//! cargo run --release -p kubegen-bench --bin informer-sync -- \
//!     --kubeconfig /opt/k8s136/admin.kubeconfig --n 60000 --deployments 10000 --plot-dir docs/img
//! ```
//!
//! Without `--role` this is the parent: it starts an in-process test server (or uses `--url` or
//! `--kubeconfig`), loads the data, then runs each client in its own child process, the clients
//! interleaved run after run, and prints the medians and one table of ratios per dataset. With
//! `--role` it is such a child. See `docs/performance.md` and the crate's README.

#[cfg(not(feature = "mimalloc"))]
use std::alloc::System;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Parser;
use kubegen_bench::http::RawClient;
use kubegen_bench::measure::Cost;
use kubegen_bench::plot::{self, Bar, Panel};
use kubegen_bench::roles::client_go::{self, ClientGo};
use kubegen_bench::roles::{Dataset, Job, Role};
use kubegen_bench::runner::{Runner, child_main};
use kubegen_bench::table::{Row, median, ratios, render};
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
    /// Child mode: measure this client (kubegen, kubegen-protobuf, kubegen-metadata, kube-rs,
    /// kube-rs-any, kube-rs-metadata, floor, raw) and print one result line.
    #[arg(long)]
    role: Option<Role>,
    /// Server URL. Parent: use this server instead of starting a test server (data must fit).
    #[arg(long)]
    url: Option<String>,
    /// A real API server's kubeconfig (its current context): every client, the loader and the
    /// baselines reach the server through it (TLS, token). Replaces `--url`.
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
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
    /// Child: the namespace holding the dataset. Parent: the prefix of the namespaces it loads,
    /// `<prefix>-cm-<n>` and `<prefix>-deploy-<n>`: a rerun with the same counts reuses the data.
    #[arg(long, default_value = "kubegen-bench")]
    namespace: String,
    /// Child: strip managedFields before caching.
    #[arg(long)]
    strip_managed_fields: bool,
    /// Child: list in pages instead of streaming the initial list.
    #[arg(long)]
    no_streaming_list: bool,
    /// Child (kubegen roles): keep the cache as bytes decoded on read (`StoreMode::Bytes`).
    #[arg(long)]
    byte_store: bool,
    /// Child (kubegen roles), run by hand: once synced, time reads of the cache (`get` p50/p99,
    /// a second `get`, a `list` of 1,000 by the `group` label) and print them on stderr.
    #[arg(long)]
    read_cost: bool,
    /// Parent: measure only the rows whose label contains one of these, e.g.
    /// `--only client-go,kubegen-protobuf`. Entries are separated by commas not followed by a
    /// space (labels contain ", "); an entry starting with `=` selects the row of exactly that
    /// label: `--only '=client-go,=kubegen-protobuf, byte store'`.
    #[arg(long)]
    only: Option<String>,
    /// Parent: client-go's benchmark binary (`../shared/realservers/client-go-bench/build.sh`
    /// builds it); its rows are left out when it is missing.
    #[arg(long, default_value = kubegen_bench::roles::client_go::DEFAULT_BINARY)]
    client_go_bench: PathBuf,
    /// Parent: measure each client this many times, the clients interleaved, and report medians.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Parent: after measuring, delete the loaded objects and their namespaces (a real server
    /// without a controller-manager keeps such a namespace Terminating: reruns then need another
    /// `--namespace`).
    #[arg(long)]
    cleanup: bool,
    /// Parent: put a simulated network link of this many Mbit/s between the clients and the server
    /// (see `kubegen_bench::link`); without it the clients use loopback at full speed.
    #[arg(long)]
    link_mbit: Option<f64>,
    /// Parent: round-trip time of the simulated link, in milliseconds.
    #[arg(long, default_value_t = 2)]
    link_rtt_ms: u64,
    /// Parent: also write each dataset's table as an SVG plot (max RSS and process CPU per client)
    /// into this directory, named `informer-sync-<server version>-<dataset>.svg`.
    #[arg(long)]
    plot_dir: Option<PathBuf>,
    /// Parent: load the data, print the server URL, serve for this many seconds and exit without
    /// measuring (to profile one role by hand: `perf record informer-sync --role kubegen --url ..`).
    #[arg(long)]
    serve_secs: Option<u64>,
}

fn main() -> Result<()> {
    let args = Args::parse();
    if let Some(role) = args.role {
        let url = match (&args.url, &args.kubeconfig) {
            (Some(url), _) => url.clone(),
            (None, Some(_)) => String::new(),
            (None, None) => bail!("--role needs --url or --kubeconfig"),
        };
        return child_main(&Job {
            role,
            url,
            kubeconfig: args.kubeconfig.clone(),
            dataset: args.dataset,
            namespace: args.namespace.clone(),
            expect: args.n,
            strip_managed_fields: args.strip_managed_fields,
            streaming_list: !args.no_streaming_list,
            byte_store: args.byte_store,
            read_cost: args.read_cost,
        });
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("building the runtime")?;
    runtime.block_on(parent(args))
}

/// Where the clients find the server, and what keeps it (and the link) alive meanwhile.
struct Target {
    /// The URL children use (empty with a kubeconfig).
    url: String,
    kubeconfig: Option<PathBuf>,
    /// Describes the network for the table titles.
    network: String,
    /// The loader's and cleanup's client.
    client: RawClient,
    /// Whether the server serves streaming lists (its `/version` is 1.27 or later).
    streams: bool,
    /// What the plots' names and titles call the server: its release (`v1.36.2`), or
    /// `test-server` for the in-process one.
    name: String,
    _server: Option<server::Server>,
    _link: Option<link::Link>,
}

async fn target(args: &Args) -> Result<Target> {
    if let Some(path) = &args.kubeconfig {
        if args.url.is_some() || args.link_mbit.is_some() {
            bail!("--kubeconfig replaces --url and --link-mbit");
        }
        eprintln!("server: the current context of {}", path.display());
        return Ok(Target {
            url: String::new(),
            kubeconfig: Some(path.clone()),
            network: format!("real API server of {}", path.display()),
            client: RawClient::from_kubeconfig(path).await?,
            streams: true,
            name: "server".to_owned(),
            _server: None,
            _link: None,
        });
    }
    let server = match &args.url {
        Some(url) => server::Server::External(url.clone()),
        None => server::Server::start().await?,
    };
    let server_url = server.url();
    eprintln!("server: {server_url}");
    let link = match args.link_mbit {
        Some(mbit) => Some(link::Link::start(&server_url, mbit, args.link_rtt_ms).await?),
        None => None,
    };
    let (url, network) = match &link {
        Some(link) => (link.url().to_owned(), link.to_string()),
        None => (server_url.clone(), "test server, loopback".to_owned()),
    };
    Ok(Target {
        url,
        kubeconfig: None,
        network,
        client: RawClient::new(&server_url),
        streams: true,
        name: "test-server".to_owned(),
        _server: Some(server),
        _link: link,
    })
}

async fn parent(args: Args) -> Result<()> {
    let configmaps = if args.full { 100_000 } else { args.n };
    let mut target = target(&args).await?;
    let version = target.client.version().await;
    target.streams = match version.as_ref().and_then(|v| v.minor) {
        Some(minor) => !client_go::predates_streaming(minor),
        None => true,
    };
    if target.kubeconfig.is_some()
        && let Some(release) = version.and_then(|v| v.release())
    {
        target.name = release;
    }
    let scratch = std::env::temp_dir().join(format!("informer-sync-{}", std::process::id()));
    let runner = Runner::current(client_go(&args, &target, &scratch)?)?;
    let mut sets = vec![(Dataset::ConfigMaps, "cm", configmaps)];
    if args.deployments > 0 {
        sets.push((Dataset::Deployments, "deploy", args.deployments));
    }
    for (dataset, namespace_prefix, count) in sets {
        let namespace = format!("{}-{namespace_prefix}-{count}", args.namespace);
        let started = std::time::Instant::now();
        loader::load(&target.client, dataset, &namespace, count).await?;
        let held = loader::count(&target.client, dataset, &namespace).await?;
        eprintln!(
            "loaded {count} {} into {namespace} in {:.1?}; it holds {held}",
            dataset.as_str(),
            started.elapsed()
        );
        if args.serve_secs.is_some() {
            println!("{} {namespace} {count} at {}", dataset.as_str(), target.url);
            continue;
        }
        let mut jobs = jobs(&target, dataset, &namespace, held);
        if let Some(only) = &args.only {
            let only = only_entries(only);
            jobs.retain(|(label, _)| only.iter().any(|only| selects(only, label)));
        }
        let rows = measure(&runner, &jobs, args.runs).await;
        let title = format!(
            "{count} {} (median of {} interleaved runs, {})",
            dataset.as_str(),
            args.runs.max(1),
            target.network
        );
        print!("{}", render(&title, &rows));
        print!("{}", ratios(&rows));
        if let Some(dir) = &args.plot_dir {
            let file = format!("informer-sync-{}-{}.svg", target.name, dataset.as_str());
            let title = format!("{count} {} on {}", dataset.as_str(), target.name);
            plot_rows(&dir.join(file), &title, &rows)?;
        }
        if args.cleanup {
            loader::delete_all(&target.client, dataset, &namespace).await?;
            eprintln!("deleted the {} and namespace {namespace}", dataset.as_str());
        }
    }
    if let Some(secs) = args.serve_secs {
        tokio::time::sleep(std::time::Duration::from_secs(secs)).await;
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}

/// Plots `rows` as two panels, max RSS and process CPU, one bar per client, and says where.
fn plot_rows(path: &Path, title: &str, rows: &[Row]) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let panel = |title: &str, value: fn(&Cost) -> f64| Panel {
        title: title.to_owned(),
        bars: rows
            .iter()
            .map(|row| Bar {
                label: row.label.clone(),
                value: value(&row.cost),
            })
            .collect(),
    };
    plot::bars(
        path,
        title,
        &[
            panel("max RSS, MiB (whole process)", |c| c.peak_rss_mib),
            panel("CPU to synced, ms (user + system)", |c| c.process_cpu_ms),
        ],
    )?;
    eprintln!("plotted {}", path.display());
    Ok(())
}

/// How client-go's rows run, or `None` (with a note) when `cgbench` is not built.
fn client_go(args: &Args, target: &Target, scratch: &Path) -> Result<Option<ClientGo>> {
    if !args.client_go_bench.exists() {
        eprintln!(
            "client-go rows left out: {} is missing (../shared/realservers/client-go-bench/build.sh builds it)",
            args.client_go_bench.display()
        );
        return Ok(None);
    }
    let kubeconfig = match &target.kubeconfig {
        Some(path) => path.clone(),
        None => {
            std::fs::create_dir_all(scratch)
                .with_context(|| format!("creating {}", scratch.display()))?;
            client_go::write_test_server_kubeconfig(scratch, &target.url)?
        }
    };
    if !target.streams {
        eprintln!(
            "client-go runs with KUBE_FEATURE_WatchListClient=false: this server predates streaming lists and its default would never sync"
        );
    }
    Ok(Some(ClientGo {
        binary: args.client_go_bench.clone(),
        kubeconfig,
        gate_off: !target.streams,
    }))
}

/// The entries of `--only`: split at each comma that is not followed by a space.
fn only_entries(only: &str) -> Vec<&str> {
    let mut entries = Vec::new();
    let mut start = 0;
    for (at, _) in only.match_indices(',') {
        if !only[at + 1..].starts_with(' ') {
            entries.push(&only[start..at]);
            start = at + 1;
        }
    }
    entries.push(&only[start..]);
    entries.retain(|entry| !entry.is_empty());
    entries
}

/// Whether the `--only` entry `only` selects the row `label`: `=label` the row of exactly that
/// label, anything else every row whose label contains it.
fn selects(only: &str, label: &str) -> bool {
    match only.strip_prefix('=') {
        Some(exact) => label == exact,
        None => label.contains(only),
    }
}

/// Every client of a dataset, labelled; where the server streams lists, client-go and kubegen
/// also listing in pages; also with managedFields stripped (the full clients, and the
/// metadata-only informers, whose metadata is mostly managedFields on objects that tools apply),
/// so that each transform is compared with the same transform.
fn jobs(target: &Target, dataset: Dataset, namespace: &str, count: usize) -> Vec<(String, Job)> {
    let job = |role: Role, strip: bool, streaming_list: bool| Job {
        byte_store: false,
        read_cost: false,
        role,
        url: target.url.clone(),
        kubeconfig: target.kubeconfig.clone(),
        dataset,
        namespace: namespace.to_owned(),
        expect: count,
        strip_managed_fields: strip,
        streaming_list,
    };
    let mut jobs: Vec<(String, Job)> = Role::ALL
        .iter()
        .map(|role| (role.as_str().to_owned(), job(*role, false, true)))
        .collect();
    if target.streams {
        for role in [Role::ClientGo, Role::KubegenProtobuf] {
            let label = format!("{}, paged list", role.as_str());
            jobs.push((label, job(role, false, false)));
        }
    }
    for role in [Role::Kubegen, Role::KubegenProtobuf, Role::KubegenMetadata] {
        let label = format!("{}, byte store", role.as_str());
        let mut bytes = job(role, false, true);
        bytes.byte_store = true;
        jobs.push((label, bytes));
        let label = format!("{} + strip managedFields, byte store", role.as_str());
        let mut both = job(role, true, true);
        both.byte_store = true;
        jobs.push((label, both));
    }
    {
        for role in [
            Role::ClientGo,
            Role::KubeRs,
            Role::KubegenProtobuf,
            Role::ClientGoMetadata,
            Role::KubeRsMetadata,
            Role::KubegenMetadata,
        ] {
            let label = format!("{} + strip managedFields", role.as_str());
            jobs.push((label, job(role, true, true)));
        }
    }
    jobs
}

/// Runs every job `runs` times (at least once), one after the other in each round so that a
/// slow moment of a shared machine hits all clients alike, and returns each job's medians. A job
/// that fails is reported and left out.
async fn measure(runner: &Runner, jobs: &[(String, Job)], runs: usize) -> Vec<Row> {
    let mut costs: Vec<Option<Vec<Cost>>> = vec![Some(Vec::new()); jobs.len()];
    for _ in 0..runs.max(1) {
        for ((label, job), slot) in jobs.iter().zip(costs.iter_mut()) {
            let Some(done) = slot else { continue };
            match runner.run(job).await {
                Ok(cost) => done.push(cost),
                Err(error) => {
                    eprintln!("{label}: FAILED: {error:#}");
                    *slot = None;
                }
            }
        }
    }
    jobs.iter()
        .zip(costs)
        .filter_map(|((label, _), costs)| {
            let costs = costs?;
            Some(Row {
                label: label.clone(),
                cost: median(&costs),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_splits_at_commas_between_entries_and_matches_exact_labels() {
        let only = only_entries("=client-go,=kubegen-protobuf, byte store,metadata");
        assert_eq!(
            only,
            ["=client-go", "=kubegen-protobuf, byte store", "metadata"]
        );
        assert!(selects(only[0], "client-go"));
        assert!(!selects(only[0], "client-go + strip managedFields"));
        assert!(selects(only[1], "kubegen-protobuf, byte store"));
        assert!(!selects(
            only[1],
            "kubegen-protobuf + strip managedFields, byte store"
        ));
        assert!(selects(only[2], "kubegen-metadata + strip managedFields"));
    }
}
