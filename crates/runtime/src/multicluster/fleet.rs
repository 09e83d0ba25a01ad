//! The fleet: a [`crate::Manager`]'s controllers over many clusters. Providers report clusters,
//! the fleet engages each one this replica should run (a cluster and its controllers start),
//! disengages the ones that go, and re-engages the ones whose credentials changed. The
//! counterpart of multicluster-runtime's `mcmanager.Manager` (`pkg/manager/manager.go`:
//! `Engage`, `GetCluster`, `GetProvider`) and of controller-runtime#2746's design.
//!
//! # How it composes with the manager
//! [`Fleet::attach`] adds the fleet to the manager as one more runnable, so the fleet runs
//! exactly when the manager's controllers run: only on the leader under leader election (a
//! standby replica engages nothing), and on every replica of a sharded manager, where each
//! engages only the clusters the shard ring gives it ([`placement`]; the ring is the manager's
//! own `kubegen-sharding` ring, keyed by cluster name). When the ring changes, clusters move:
//! the old replica disengages, the new one engages.
//!
//! # Order of events in the fleet's run
//! 1. Every provider starts, each on its own task, reporting into one inbox.
//! 2. Each report updates the set of known clusters; the engaged set follows it: a new cluster
//!    this replica owns is engaged (`engagement.rs`), a removed one disengaged, one whose
//!    fingerprint changed is disengaged and engaged again.
//! 3. A disengage runs on its own task: a cluster whose in-flight reconciles hang for the whole
//!    drain timeout delays no other cluster's engage.
//! 4. On stop: providers stop, every cluster is disengaged, the fleet waits for all of them.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use kubegen_cache::{ClientListWatchSource, FactoryOptions, InformerFactory, ObjectKey};
use kubegen_client::Client;
use kubegen_sharding::HashRing;
use kubegen_workqueue::RateLimitingQueue;
use parking_lot::Mutex;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use crate::builder::Builder;
use crate::error::Error;
use crate::manager::{Manager, Runnable};
use crate::metrics::ProcessMetrics;
use crate::multicluster::cluster::{Cluster, ClusterParts, ClusterState};
use crate::multicluster::engagement::{Defined, Engagement, FleetController, RunSettings};
use crate::multicluster::metrics::FleetMetrics;
use crate::multicluster::provider::{ClusterEvent, ClusterSink, Provider};
use crate::multicluster::request::FleetReconciler;
use crate::multicluster::watches::MemberWatch;
use crate::reconcile::Object;
use crate::stop::Stop;

/// How a [`Fleet`] runs its clusters. Built with methods:
/// `FleetOptions::default().probe_period(Duration::from_secs(5))`.
#[derive(Clone)]
pub struct FleetOptions {
    workers: Option<usize>,
    probe_period: Duration,
    probe_timeout: Duration,
    factory: FactoryOptions,
}

impl std::fmt::Debug for FleetOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The factory options hold closures: left out.
        f.debug_struct("FleetOptions")
            .field("workers", &self.workers)
            .field("probe_period", &self.probe_period)
            .field("probe_timeout", &self.probe_timeout)
            .finish_non_exhaustive()
    }
}

impl Default for FleetOptions {
    /// The manager's worker count per controller and cluster; a probe every 10 s that gives a
    /// cluster 5 s to answer.
    fn default() -> Self {
        FleetOptions {
            workers: None,
            probe_period: Duration::from_secs(10),
            probe_timeout: Duration::from_secs(5),
            factory: FactoryOptions::default(),
        }
    }
}

impl FleetOptions {
    /// Workers per controller *and cluster* (default: the manager's). At least 1.
    #[must_use]
    pub fn workers(mut self, workers: usize) -> Self {
        self.workers = Some(workers.max(1));
        self
    }

    /// How often each cluster is asked whether it answers.
    #[must_use]
    pub fn probe_period(mut self, period: Duration) -> Self {
        self.probe_period = period;
        self
    }

    /// How every member's informer factory is made (namespace, selectors, transforms such as
    /// `strip_managed_fields`, store mode); default: all namespaces, objects as served.
    #[must_use]
    pub fn factory(mut self, options: FactoryOptions) -> Self {
        self.factory = options;
        self
    }

    /// How long a cluster has to answer a probe before it counts as unreachable.
    #[must_use]
    pub fn probe_timeout(mut self, timeout: Duration) -> Self {
        self.probe_timeout = timeout;
        self
    }
}

/// A manager's controllers over every cluster its providers report. Cheap to clone. See the
/// module docs; start with [`Fleet::new`].
#[derive(Clone)]
pub struct Fleet {
    inner: Arc<Inner>,
}

struct Inner {
    hub: InformerFactory<ClientListWatchSource>,
    process_metrics: ProcessMetrics,
    metrics: FleetMetrics,
    identity: String,
    settings: RunSettings,
    /// How each member's informer factory is made.
    factory: FactoryOptions,
    /// With a sharded manager: this replica's name and the ring's changes.
    ring: Option<(String, watch::Receiver<HashRing>)>,
    providers: Mutex<Vec<Arc<dyn Provider>>>,
    controllers: Mutex<Vec<Arc<dyn FleetController>>>,
    /// The clusters engaged now. Invariant: each one's tasks run until it is removed from here
    /// and ended.
    engaged: Arc<Mutex<BTreeMap<String, Cluster>>>,
}

impl std::fmt::Debug for Fleet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fleet")
            .field("engaged", &self.clusters())
            .finish_non_exhaustive()
    }
}

impl Fleet {
    /// A fleet under `manager` (one per manager: the fleet's metric families are registered
    /// once): the manager's client and informers are the hub's, its metrics
    /// registry gets the fleet's series, its `/readyz` prints each cluster's state, and with
    /// [`crate::ManagerOptions::sharding`] clusters are spread over its ring. Add providers and
    /// controllers, then [`Fleet::attach`] it.
    pub fn new(manager: &Manager, options: FleetOptions) -> Fleet {
        let settings = RunSettings {
            workers: options.workers.unwrap_or(manager.options().workers),
            drain: manager.options().shutdown_timeout,
            sync_timeout: manager.options().cache_sync_timeout,
            probe_period: options.probe_period,
            probe_timeout: options.probe_timeout,
        };
        let fleet = Fleet {
            inner: Arc::new(Inner {
                hub: manager.factory().clone(),
                process_metrics: manager.metrics().clone(),
                metrics: FleetMetrics::new(manager.metrics()),
                identity: manager.identity().to_owned(),
                settings,
                factory: options.factory,
                ring: manager.shard_ring(),
                providers: Mutex::new(Vec::new()),
                controllers: Mutex::new(Vec::new()),
                engaged: Arc::new(Mutex::new(BTreeMap::new())),
            }),
        };
        let engaged = Arc::clone(&fleet.inner.engaged);
        manager
            .health()
            .add_readiness_detail(Arc::new(move || readiness_lines(&engaged.lock())));
        fleet
    }

    /// Adds a source of clusters. Providers added after the fleet started are not run.
    pub fn add_provider(&self, provider: impl Provider) {
        self.inner.providers.lock().push(Arc::new(provider));
    }

    /// Adds the controller `name`, built for each engaged cluster by `build` (usually
    /// `cluster.controller(name, &cluster.factory().informer::<K>())` plus its owned and
    /// watched kinds, from the cluster or from the hub) and reconciled by `reconciler` with a
    /// [`crate::multicluster::ClusterContext`] naming the cluster. Add controllers before the
    /// fleet runs: a cluster engaged earlier does not get a controller added later.
    pub fn add_controller<K: Object, R: FleetReconciler<K>>(
        &self,
        name: &str,
        build: impl Fn(&Cluster) -> Builder<K> + Send + Sync + 'static,
        reconciler: R,
    ) {
        self.inner.controllers.lock().push(Arc::new(Defined {
            name: name.to_owned(),
            build: Arc::new(build),
            reconciler: Arc::new(reconciler),
            metrics: self.inner.metrics.clone(),
        }));
    }

    /// Objects of kind `W` in every engaged member enqueue the keys `map(cluster, object)` in
    /// `queue` (a hub controller's, [`crate::Controller::queue`]): the member-to-hub direction
    /// of a cross-cluster watch. Handlers are added when a member is engaged and removed when it
    /// goes. Add it before the fleet runs.
    pub fn watch_members<W: Object + kubegen_client::ApiObject>(
        &self,
        queue: &RateLimitingQueue<ObjectKey>,
        map: impl Fn(&str, &W) -> Vec<ObjectKey> + Send + Sync + 'static,
    ) {
        self.inner.controllers.lock().push(Arc::new(MemberWatch {
            queue: queue.clone(),
            map: Arc::new(map),
        }));
    }

    /// Hands the fleet to `manager`, which runs it with its controllers (see the module docs).
    pub fn attach(&self, manager: &mut Manager) {
        manager.add_runnable(Box::new(self.clone()));
    }

    /// The names of the clusters engaged now.
    pub fn clusters(&self) -> Vec<String> {
        self.inner.engaged.lock().keys().cloned().collect()
    }

    /// The engaged cluster `name` (multicluster-runtime's `mgr.GetCluster`).
    pub fn cluster(&self, name: &str) -> Option<Cluster> {
        self.inner.engaged.lock().get(name).cloned()
    }

    /// Runs the providers and keeps the engaged clusters in step with them until `stop`; then
    /// disengages every cluster and waits for them.
    async fn run(&self, stop: Stop) {
        let (sender, mut inbox) = mpsc::unbounded_channel();
        let providers = self.inner.providers.lock().clone();
        let mut provider_tasks = JoinSet::new();
        for provider in providers {
            let (sink, until) = (ClusterSink(sender.clone()), stop.clone());
            provider_tasks.spawn(async move {
                let until = Box::pin(async move { until.wait().await });
                if let Err(error) = provider.run(sink, until).await {
                    tracing::error!(provider = provider.name(), %error, "cluster provider failed");
                }
            });
        }
        // The fleet keeps a sender itself: providers that report once and end (a static list
        // without re-reading) leave their clusters engaged until the fleet stops.
        let _keep_open = sender;
        let mut state = Running::new(self.clone());
        let mut ring = self.inner.ring.as_ref().map(|(_, ring)| ring.clone());
        loop {
            tokio::select! {
                Some(event) = inbox.recv() => state.apply(event).await,
                changed = ring_changed(&mut ring) => {
                    if changed {
                        state.follow().await;
                    } else {
                        ring = None;
                    }
                },
                () = stop.wait() => break,
            }
        }
        provider_tasks.shutdown().await;
        state.end_all().await;
    }

    /// Whether this replica runs `cluster`: always without sharding, else when the ring gives
    /// the cluster's name to this replica.
    fn owns(&self, cluster: &str) -> bool {
        match &self.inner.ring {
            None => true,
            Some((me, ring)) => placement(&ring.borrow(), me, cluster),
        }
    }
}

/// Whether `ring` gives `cluster` to the replica `me`: the ring's owner of the cluster's name.
/// An empty ring (no live shard seen yet) gives nothing to anyone.
pub(crate) fn placement(ring: &HashRing, me: &str, cluster: &str) -> bool {
    ring.owner(cluster) == Some(me)
}

/// Waits for the next change of the ring, if there is one; `false` when its sender is gone.
async fn ring_changed(ring: &mut Option<watch::Receiver<HashRing>>) -> bool {
    match ring {
        Some(ring) => ring.changed().await.is_ok(),
        None => std::future::pending().await,
    }
}

/// A known cluster: how to reach it.
struct Known {
    config: kubegen_client::Config,
    fingerprint: u64,
}

/// The fleet's run: known clusters, engaged ones, disengages in flight.
struct Running {
    fleet: Fleet,
    known: BTreeMap<String, Known>,
    engagements: BTreeMap<String, Engagement>,
    ending: JoinSet<()>,
}

impl Running {
    fn new(fleet: Fleet) -> Running {
        Running {
            fleet,
            known: BTreeMap::new(),
            engagements: BTreeMap::new(),
            ending: JoinSet::new(),
        }
    }

    async fn apply(&mut self, event: ClusterEvent) {
        match event {
            ClusterEvent::Engage {
                name,
                config,
                fingerprint,
            } => {
                let known = Known {
                    config: *config,
                    fingerprint,
                };
                self.known.insert(name.clone(), known);
            }
            ClusterEvent::Disengage { name } => {
                self.known.remove(&name);
            }
        }
        self.follow().await;
    }

    /// Engages what is known and owned, disengages the rest, replaces changed clusters.
    async fn follow(&mut self) {
        let stale: Vec<String> = self
            .engagements
            .iter()
            .filter(|(name, engagement)| {
                self.known
                    .get(*name)
                    .is_none_or(|known| known.fingerprint != engagement.fingerprint)
                    || !self.fleet.owns(name)
            })
            .map(|(name, _)| name.clone())
            .collect();
        for name in stale {
            self.disengage(&name);
        }
        let wanted: Vec<String> = self
            .known
            .keys()
            .filter(|name| !self.engagements.contains_key(*name) && self.fleet.owns(name))
            .cloned()
            .collect();
        for name in wanted {
            self.engage(&name).await;
        }
    }

    async fn engage(&mut self, name: &str) {
        let Some(known) = self.known.get(name) else {
            return;
        };
        let inner = &self.fleet.inner;
        let client = match Client::new(known.config.clone()) {
            Ok(client) => client,
            Err(source) => {
                let error = Error::ClientBuildFailed { source };
                tracing::error!(cluster = name, %error, "cluster not engaged");
                return;
            }
        };
        let parts = ClusterParts {
            hub: inner.hub.clone(),
            metrics: inner.process_metrics.clone(),
            sync_timeout: inner.settings.sync_timeout,
            component: "kubegen-fleet".to_owned(),
            identity: inner.identity.clone(),
            factory: inner.factory.clone(),
        };
        let cluster = Cluster::new(name, client, parts);
        let controllers = inner.controllers.lock().clone();
        let started = Engagement::start(
            cluster.clone(),
            known.fingerprint,
            &controllers,
            &inner.settings,
            &inner.metrics,
        )
        .await;
        match started {
            Ok(engagement) => {
                self.engagements.insert(name.to_owned(), engagement);
                let total = {
                    let mut engaged = inner.engaged.lock();
                    engaged.insert(name.to_owned(), cluster);
                    engaged.len()
                };
                inner.metrics.set_engaged(name, true, total);
                tracing::info!(cluster = name, "cluster engaged");
            }
            Err(error) => tracing::error!(cluster = name, %error, "cluster not engaged"),
        }
    }

    /// Disengages `name` at once (no reconcile of it starts any more) and lets its teardown
    /// finish on a task of its own.
    fn disengage(&mut self, name: &str) {
        let Some(engagement) = self.engagements.remove(name) else {
            return;
        };
        engagement.stop_now();
        let inner = &self.fleet.inner;
        let total = {
            let mut engaged = inner.engaged.lock();
            engaged.remove(name);
            engaged.len()
        };
        inner.metrics.set_engaged(name, false, total);
        tracing::info!(cluster = name, "cluster disengaged");
        self.ending.spawn(engagement.end());
    }

    async fn end_all(mut self) {
        let names: Vec<String> = self.engagements.keys().cloned().collect();
        for name in names {
            self.disengage(&name);
        }
        while self.ending.join_next().await.is_some() {}
    }
}

/// `/readyz` lines: one per engaged cluster.
fn readiness_lines(engaged: &BTreeMap<String, Cluster>) -> Vec<String> {
    engaged
        .values()
        .map(|cluster| match cluster.state() {
            ClusterState::Ready => format!("[+]cluster/{} ok", cluster.name()),
            ClusterState::Syncing => format!("[-]cluster/{} syncing", cluster.name()),
            ClusterState::Unreachable { since, reason } => format!(
                "[-]cluster/{} unreachable for {}s (isolated): {reason}",
                cluster.name(),
                since.elapsed().as_secs()
            ),
        })
        .collect()
}

impl Runnable for Fleet {
    fn name(&self) -> &str {
        "fleet"
    }

    /// The fleet has no caches of its own to wait for: each cluster syncs on its own, after it
    /// is engaged, and reports it in `/readyz`'s detail.
    fn wait_for_sync(&self, _timeout: Duration) -> BoxFuture<'_, Result<(), Error>> {
        Box::pin(async { Ok(()) })
    }

    fn run(&self, _workers: usize, stop: Stop, _drain: Duration) -> BoxFuture<'_, bool> {
        Box::pin(async move {
            Fleet::run(self, stop).await;
            true
        })
    }
}

#[cfg(test)]
#[path = "fleet_tests.rs"]
mod tests;
