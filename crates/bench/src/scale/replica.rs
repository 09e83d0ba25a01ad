//! One replica of the measured controller: the child process the scale-out parent starts N of.
//!
//! It is what a user of kubegen-runtime writes for a sharded controller, nothing bench-specific
//! in the path of an event: a [`Manager`] over the bench namespace's ConfigMaps ([`SELECTOR`]), one controller
//! with `--workers` workers, and either leader election ([`Mode::Unsharded`]) or
//! `ManagerOptions::sharding::<ConfigMap>` with the label protocol ([`Mode::Labels`]) or the
//! server's `shardSelector` ([`Mode::ShardSelector`]). The reconcile stands in for real
//! work by sleeping `--cost-ms`, so one replica's capacity is known: workers / cost.
//!
//! # Which reconciles cost
//! Only those of a change the driver stamped during this run ([`SENT_AT`] at or after
//! `--epoch-us`): each prints a [`Report::Reconcile`] line and sleeps. The reconciles every
//! replica runs when its cache fills (the population, at start and when the ring moves objects
//! to it) find nothing to do and return at once, as a controller's do for objects already in
//! their desired state; otherwise settling 10,000 objects would take minutes per run.
//!
//! The replica stops when its stdin closes (the parent drops it, or dies): it drains, releases
//! its Lease and exits.

use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use k8s_openapi::api::core::v1::ConfigMap;
use kubegen_cache::{FactoryOptions, ListSelectors, SharedIndexInformer, TweakListOptions};
use kubegen_client::{Client, Config};
use kubegen_leaderelection::LeaderElectionConfig;
use kubegen_runtime::{Action, Context, Manager, ManagerOptions, ProcessMetrics, Reconciler};
use kubegen_sharding::{ReplicaConfig, Ring, Selection};

use super::{CONTROLLER, Mode, RING, Report, SELECTOR, SENT_AT, Stat, now_us};
use crate::http::kubeconfig_client;
use crate::measure::Snapshot;

/// How often a replica prints a [`Report::Stat`].
const STAT_PERIOD: Duration = Duration::from_millis(500);

/// How a replica reaches the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// A plain-HTTP URL (the test server, or the replica's link in front of it).
    Url(String),
    /// A real server's kubeconfig, reached at `master` (the replica's link in front of it).
    Kubeconfig {
        /// The kubeconfig (TLS material and token).
        path: PathBuf,
        /// The URL to use instead of the kubeconfig's server.
        master: String,
    },
}

/// Everything one replica process needs.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplicaArgs {
    /// The server.
    pub endpoint: Endpoint,
    /// The namespace of the objects, the Leases and nothing else.
    pub namespace: String,
    /// The replica's name: its shard's, its Lease holder identity's.
    pub identity: String,
    /// How the replicas split the work.
    pub mode: Mode,
    /// Parallel reconciles.
    pub workers: usize,
    /// What one reconcile of a change costs (a sleep).
    pub cost: Duration,
    /// Changes stamped before this instant (µs since the Unix epoch) cost nothing.
    pub epoch_us: u64,
}

impl ReplicaArgs {
    /// The command line (after the binary) that the `scale-out` binary parses back into these.
    pub fn to_args(&self) -> Vec<String> {
        let mut args = vec![
            format!("--replica={}", self.identity),
            format!("--namespace={}", self.namespace),
            format!("--mode={}", self.mode),
            format!("--workers={}", self.workers),
            format!("--cost-ms={}", self.cost.as_millis()),
            format!("--epoch-us={}", self.epoch_us),
        ];
        match &self.endpoint {
            Endpoint::Url(url) => args.push(format!("--url={url}")),
            Endpoint::Kubeconfig { path, master } => {
                args.push(format!("--kubeconfig={}", path.display()));
                args.push(format!("--master={master}"));
            }
        }
        args
    }
}

/// Runs one replica until its stdin closes.
///
/// # Errors
/// The client cannot be built, or the manager fails (caches never synced, a lost Lease).
pub async fn run(args: ReplicaArgs) -> Result<()> {
    let client = match &args.endpoint {
        Endpoint::Url(url) => {
            Client::new(Config::new(url.parse().context("parsing --url")?)).context("client")?
        }
        Endpoint::Kubeconfig { path, master } => kubeconfig_client(path, Some(master)).await?,
    };
    let mut manager = Manager::new(client, options(&args));
    let informer = manager.factory().informer::<ConfigMap>();
    let controller = manager
        .controller(CONTROLLER, &informer)
        .build()
        .context("building the controller")?;
    manager.add(
        controller,
        Sleeper {
            cost: args.cost,
            epoch_us: args.epoch_us,
        },
    );
    let stats = tokio::spawn(report_stats(informer, manager.metrics().clone(), args.mode));
    let outcome = manager.run(stdin_closed()).await;
    stats.abort();
    outcome.with_context(|| format!("replica {}", args.identity))
}

/// The manager's options for `args`: the bench namespace only, and leader election or the ring.
fn options(args: &ReplicaArgs) -> ManagerOptions {
    let options = ManagerOptions::default()
        .workers(args.workers)
        .identity(&args.identity)
        .shutdown_timeout(Duration::from_secs(5));
    let factory = FactoryOptions::default().namespace(args.namespace.clone());
    match args.mode {
        Mode::Unsharded => {
            let mut election = LeaderElectionConfig::new(&args.namespace, RING, &args.identity);
            election.release_on_cancel = true;
            let bench_objects: TweakListOptions = Arc::new(|selectors: &mut ListSelectors| {
                selectors.label_selector = Some(SELECTOR.to_owned());
            });
            options
                .factory(factory.tweak_list_options(bench_objects))
                .leader_election(Some(election))
        }
        Mode::Labels | Mode::ShardSelector => {
            let options = options.factory(factory);
            let mut ring = ReplicaConfig::new(Ring::new(RING, &args.namespace), &args.identity);
            ring.namespace = Some(args.namespace.clone());
            ring.selector = Some(SELECTOR.to_owned());
            ring.selection = if args.mode == Mode::Labels {
                Selection::Labels
            } else {
                Selection::ShardSelector
            };
            options.sharding::<ConfigMap>(Some(ring))
        }
    }
}

/// The measured reconcile: see the module docs for which reconciles cost.
struct Sleeper {
    cost: Duration,
    epoch_us: u64,
}

impl Reconciler<ConfigMap> for Sleeper {
    type Error = Infallible;

    async fn reconcile(
        &self,
        object: Arc<ConfigMap>,
        _context: &Context,
    ) -> Result<Action, Infallible> {
        let start_us = now_us();
        let stamp = object
            .metadata
            .annotations
            .as_ref()
            .and_then(|annotations| annotations.get(SENT_AT))
            .and_then(|value| value.parse::<u64>().ok());
        if let Some(sent_us) = stamp.filter(|sent| *sent >= self.epoch_us) {
            let report = Report::Reconcile {
                name: object.metadata.name.clone().unwrap_or_default(),
                sent_us,
                start_us,
            };
            println!("{}", report.line());
            tokio::time::sleep(self.cost).await;
        }
        Ok(Action::Done)
    }
}

/// Prints a [`Report::Stat`] every [`STAT_PERIOD`], read from the informer and the manager's
/// metrics (what a scrape of `/metrics` would show).
async fn report_stats(
    informer: SharedIndexInformer<ConfigMap>,
    metrics: ProcessMetrics,
    mode: Mode,
) {
    let mut tick = tokio::time::interval(STAT_PERIOD);
    loop {
        tick.tick().await;
        let text = metrics.encode();
        let active = match mode {
            Mode::Unsharded => gauge(&text, "leader_election_master_status"),
            Mode::Labels | Mode::ShardSelector => gauge(&text, "controller_sharding_shard_member"),
        };
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let stat = Stat {
            objects: informer.indexer().len(),
            active: active >= 1.0,
            members: gauge(&text, "controller_sharding_ring_members") as usize,
            depth: gauge(&text, "workqueue_depth") as usize,
            live_bytes: u64::try_from(Snapshot::take().live).unwrap_or(0),
        };
        println!("{}", Report::Stat(stat).line());
    }
}

/// The sum of every series of the gauge `family` in a metrics scrape (0 when absent).
fn gauge(scrape: &str, family: &str) -> f64 {
    scrape
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter(|line| {
            let name_end = line.find(['{', ' ']).unwrap_or(line.len());
            &line[..name_end] == family
        })
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// Resolves when stdin reaches its end: the parent closed it (or exited).
fn stdin_closed() -> impl Future<Output = ()> + Send + 'static {
    let (closed, wait) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
        let _ = closed.send(());
    });
    async move {
        let _ = wait.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gauge_sums_the_series_of_one_family_only() {
        let scrape = "# HELP workqueue_depth Current depth.\n\
                      # TYPE workqueue_depth gauge\n\
                      workqueue_depth{name=\"scale\"} 3\n\
                      workqueue_depth{name=\"other\"} 4\n\
                      workqueue_depth_max 9\n\
                      controller_sharding_ring_members{ring=\"scale-bench\"} 5\n\
                      # EOF\n";
        assert!((gauge(scrape, "workqueue_depth") - 7.0).abs() < 1e-9);
        assert!((gauge(scrape, "controller_sharding_ring_members") - 5.0).abs() < 1e-9);
        assert!(gauge(scrape, "leader_election_master_status").abs() < 1e-9);
    }

    #[test]
    fn replica_args_name_every_setting_on_the_command_line() {
        let args = ReplicaArgs {
            endpoint: Endpoint::Kubeconfig {
                path: PathBuf::from("/k/admin.kubeconfig"),
                master: "https://127.0.0.1:4000".to_owned(),
            },
            namespace: "ns".to_owned(),
            identity: "r1".to_owned(),
            mode: Mode::Labels,
            workers: 4,
            cost: Duration::from_millis(20),
            epoch_us: 7,
        };
        assert_eq!(
            args.to_args(),
            [
                "--replica=r1",
                "--namespace=ns",
                "--mode=labels",
                "--workers=4",
                "--cost-ms=20",
                "--epoch-us=7",
                "--kubeconfig=/k/admin.kubeconfig",
                "--master=https://127.0.0.1:4000",
            ]
        );
    }
}
