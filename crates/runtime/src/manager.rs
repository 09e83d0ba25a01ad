//! The manager: one process's controllers over one informer factory, under one leader election,
//! with the `/healthz`, `/readyz` and `/metrics` endpoints and a graceful shutdown. The
//! counterpart of controller-runtime's `manager.Manager` (`ctrl.NewManager(cfg, options)`, then
//! `builder.ControllerManagedBy(mgr)...Complete(r)`, then `mgr.Start(ctx)`).
//!
//! ```ignore
//! let mut manager = Manager::new(Client::new(config)?, ManagerOptions::default());
//! let informers = SharedInformerFactory::from(manager.factory().clone());
//! let shops = informers.shop_v1().shops();
//! let controller = manager.controller("shop", &shops.informer()).build()?;
//! manager.add(controller, ShopReconciler { .. });
//! manager.run(kubegen_runtime::shutdown_signal()).await?;
//! ```
//!
//! # What one manager shares
//! - **One informer factory**: every controller (and the [`CachedClient`]) asking for a kind gets
//!   the same informer, so a kind is listed and watched once however many controllers read it.
//! - **One metrics registry** ([`ProcessMetrics`]), wired in [`Manager::new`]: the REST client's,
//!   the informers', each controller's workqueue and reconcile series (labelled by controller
//!   name), leader election's, and the application's own ([`ProcessMetrics::register`]).
//! - **One leader election** for all controllers, and one set of endpoints. Or, with
//!   [`ManagerOptions::sharding`], no leader election: every replica runs its controllers on its
//!   own shard of one kind's objects (see `sharding.rs`).
//!
//! # Order of events in [`Manager::run`]
//! 1. Serve `/healthz` + `/readyz` and `/metrics` (when their addresses are set); liveness waits
//!    for nothing. Serve the webhooks ([`Manager::webhook_server`], when
//!    [`ManagerOptions::webhook`] is set): before the caches, on every replica.
//! 2. Start the informer factory; wait for every controller's caches (`cache_sync_timeout`);
//!    then `/readyz` turns ready. Standby replicas keep their caches warm too, so a takeover
//!    starts from a full cache.
//! 3. Without leader election, run every controller's workers until shutdown. With it, run them
//!    only while holding the Lease (and `/healthz` fails if this leader stops renewing; see
//!    [`LEADER_RENEWAL_TOLERANCE`]): when leadership is lost the workers stop at once and `run`
//!    returns [`Error::LeadershipLost`] so the process restarts as a fresh candidate.
//! 4. On shutdown: stop handing out keys, let in-flight reconciles finish (`shutdown_timeout`),
//!    then release the Lease, then stop the informers and wait for their tasks, then close the
//!    endpoints.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::{BoxFuture, join_all};
use kubegen_cache::{ClientListWatchSource, InformerFactory, SharedIndexInformer};
use kubegen_client::Client;
use kubegen_leaderelection::{LeaderCallbacks, LeaderElector, Leadership, RunOutcome};
use kubegen_sharding::HashRing;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::builder::Builder;
use crate::cached::CachedClient;
use crate::controller::Controller;
use crate::endpoints::{Endpoints, Health, LEADER_RENEWAL_TOLERANCE, LivenessCheck};
use crate::error::Error;
use crate::events::Recorder;
use crate::metrics::ProcessMetrics;
pub use crate::options::ManagerOptions;
use crate::reconcile::{Object, Reconciler};
use crate::sharding::{Gate, Shard};
use crate::stop::Stop;
use crate::webhook::WebhookServer;

/// What the manager needs of a controller without knowing its kinds (also implemented by the
/// multi-cluster fleet, which [`Manager::add_runnable`] adds).
pub(crate) trait Runnable: Send + Sync {
    fn name(&self) -> &str;
    fn wait_for_sync(&self, timeout: Duration) -> BoxFuture<'_, Result<(), Error>>;
    /// Runs the workers until `stop`, then drains for `drain`.
    fn run(&self, workers: usize, stop: Stop, drain: Duration) -> BoxFuture<'_, bool>;
}

/// A controller with its reconciler and worker count.
struct Managed<K, R> {
    controller: Controller<K>,
    reconciler: Arc<R>,
}

impl<K: Object, R: Reconciler<K>> Runnable for Managed<K, R> {
    fn name(&self) -> &str {
        self.controller.name()
    }

    fn wait_for_sync(&self, timeout: Duration) -> BoxFuture<'_, Result<(), Error>> {
        Box::pin(self.controller.wait_for_sync(timeout))
    }

    fn run(&self, workers: usize, stop: Stop, drain: Duration) -> BoxFuture<'_, bool> {
        let workers = self.controller.workers().unwrap_or(workers);
        let reconciler = Arc::clone(&self.reconciler);
        Box::pin(async move {
            let stopped = async move { stop.wait().await };
            self.controller
                .run(reconciler, workers, stopped, drain)
                .await
        })
    }
}

/// Owns a process's client, informer factory, metrics, health and controllers. See the module
/// docs for what it shares and the order of events of [`Manager::run`].
pub struct Manager {
    client: Client,
    factory: InformerFactory<ClientListWatchSource>,
    /// With sharding: informers that see every shard's objects (see [`Manager::unsharded_factory`]).
    unsharded: Option<InformerFactory<ClientListWatchSource>>,
    health: Health,
    metrics: ProcessMetrics,
    identity: String,
    options: ManagerOptions,
    controllers: Vec<Box<dyn Runnable>>,
    webhooks: WebhookServer,
    /// The shard replica of a sharded manager, or why it could not be made (returned by `run`).
    shard: Result<Option<Box<dyn Shard>>, Error>,
}

impl std::fmt::Debug for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.controllers.iter().map(|c| c.name()).collect();
        f.debug_struct("Manager")
            .field("controllers", &names)
            .field("health", &self.health)
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

impl Manager {
    /// A manager over `client`: one informer factory and one metrics registry, into which
    /// the client's `rest_client_*` series and the informers' `informer_*` series are wired.
    /// With [`ManagerOptions::sharding`], the factory's informer of the sharded kind selects
    /// this replica's shard.
    pub fn new(client: Client, mut options: ManagerOptions) -> Manager {
        let metrics = ProcessMetrics::new(client.metrics());
        let identity = match (&options.identity, &options.sharding) {
            (Some(identity), _) => identity.clone(),
            (None, Some(_)) => host_name(),
            (None, None) => default_identity(),
        };
        let factory_options = options.factory.clone().metrics(metrics.informers().clone());
        let source = ClientListWatchSource::new(client.clone());
        let factory = InformerFactory::new(source.clone(), factory_options.clone());
        let unsharded = options.sharding.as_mut().map(|sharding| {
            sharding.config.identity.clone_from(&identity);
            InformerFactory::new(source, factory_options)
        });
        let shard = options
            .sharding
            .as_ref()
            .map(|sharding| sharding.replica(&client, &factory, &options.shard_owned))
            .transpose();
        let webhooks = WebhookServer::new(&metrics);
        Manager {
            shard,
            webhooks,
            client,
            factory,
            unsharded,
            health: Health::default(),
            metrics,
            identity,
            options,
            controllers: Vec::new(),
        }
    }

    /// The client every piece of the manager uses (writes, leader election, Events).
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The one informer factory; wrap it in a generated `SharedInformerFactory` with
    /// `SharedInformerFactory::from(manager.factory().clone())` for typed accessors.
    pub fn factory(&self) -> &InformerFactory<ClientListWatchSource> {
        &self.factory
    }

    /// Informers that see the objects of every shard: with [`ManagerOptions::sharding`] the
    /// sharded kind's informer in [`Manager::factory`] holds only this replica's shard, so
    /// readers that judge any object (an admission webhook, which every replica serves) take
    /// theirs from here. Started and stopped with the manager; without sharding it is
    /// [`Manager::factory`] itself.
    pub fn unsharded_factory(&self) -> &InformerFactory<ClientListWatchSource> {
        self.unsharded.as_ref().unwrap_or(&self.factory)
    }

    /// Reads from the manager's informers, writes to the server: controller-runtime's
    /// delegating client.
    pub fn cached_client(&self) -> CachedClient {
        CachedClient::new(
            self.client.clone(),
            self.factory.clone(),
            self.options.cache_sync_timeout,
        )
    }

    /// The process's metrics registry (to register the application's own series, or read
    /// what a scrape would show).
    pub fn metrics(&self) -> &ProcessMetrics {
        &self.metrics
    }

    /// The process's webhook server: add admission handlers and conversions here; [`Manager::run`]
    /// serves them when [`ManagerOptions::webhook`] is set, before the caches sync (a CRD's
    /// conversion webhook must answer for its informer to list), on every replica (webhooks do
    /// not need the Lease), and `/readyz` fails until it serves.
    pub fn webhook_server(&mut self) -> &mut WebhookServer {
        &mut self.webhooks
    }

    /// Readiness and liveness as the probes report them.
    pub fn health(&self) -> &Health {
        &self.health
    }

    /// An Event recorder for `component`, reporting this replica's identity.
    pub fn recorder(&self, component: &str) -> Recorder {
        Recorder::new(self.client.clone(), component, &self.identity)
    }

    /// A builder for the controller `name` of the primary kind `K`, with the manager's metrics
    /// (labelled `controller="<name>"`) and an Event recorder for terminal errors. Hand the
    /// built controller to [`Manager::add`].
    pub fn controller<K: Object>(
        &self,
        name: &str,
        primary: &SharedIndexInformer<K>,
    ) -> Builder<K> {
        let builder = Controller::builder(name, primary)
            .metrics(&self.metrics)
            .recorder(self.recorder(name));
        let Ok(Some(shard)) = &self.shard else {
            return builder;
        };
        match shard.gate().downcast::<Arc<dyn Gate<K>>>() {
            Ok(gate) => builder.gate(*gate),
            Err(_) => {
                tracing::warn!(
                    controller = name,
                    "the manager shards another kind: this controller runs on every replica"
                );
                builder
            }
        }
    }

    /// Adds `controller`, reconciled by `reconciler`, to what [`Manager::run`] runs.
    pub fn add<K: Object, R: Reconciler<K>>(&mut self, controller: Controller<K>, reconciler: R) {
        self.controllers.push(Box::new(Managed {
            controller,
            reconciler: Arc::new(reconciler),
        }));
    }

    /// How the manager runs (the fleet takes its worker, sync and drain settings from here).
    pub(crate) fn options(&self) -> &ManagerOptions {
        &self.options
    }

    /// This replica's identity (leader election, Events).
    pub(crate) fn identity(&self) -> &str {
        &self.identity
    }

    /// Adds something the manager runs as it runs its controllers: only on the leader, or on
    /// every shard replica, until shutdown (the multi-cluster fleet, `multicluster/`).
    pub(crate) fn add_runnable(&mut self, runnable: Box<dyn Runnable>) {
        self.controllers.push(runnable);
    }

    /// With [`ManagerOptions::sharding`]: this replica's name on the ring and the ring's changes
    /// (the multi-cluster fleet spreads clusters over the same ring).
    pub(crate) fn shard_ring(&self) -> Option<(String, tokio::sync::watch::Receiver<HashRing>)> {
        match &self.shard {
            Ok(Some(shard)) => Some(shard.ring()),
            _ => None,
        }
    }

    /// Runs every added controller until `shutdown` resolves (or leadership is lost); see the
    /// module docs for the order of events.
    ///
    /// # Errors
    /// An endpoint could not be bound, the caches did not sync, leader election failed, or
    /// leadership was lost; `Ok(())` after a clean shutdown.
    pub async fn run(
        mut self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), Error> {
        let shard = std::mem::replace(&mut self.shard, Ok(None))?;
        let mut servers = self.serve_endpoints().await?;
        match self.serve_webhooks().await {
            Ok(Some(webhooks)) => servers.push(webhooks),
            Ok(None) => {}
            Err(error) => {
                servers.iter().for_each(JoinHandle::abort);
                return Err(error);
            }
        }
        let stop = Stop::new();
        let trigger = stop.clone();
        let shutdown_task = tokio::spawn(async move {
            shutdown.await;
            trigger.trigger();
        });
        self.factory.start();
        self.unsharded.iter().for_each(InformerFactory::start);
        let result = match self.wait_for_sync(&stop).await {
            Ok(()) if !stop.is_triggered() => {
                self.health.set_ready(true);
                match &shard {
                    Some(shard) => self.work_sharded(shard.as_ref(), &stop).await,
                    None => self.work(&stop).await,
                }
            }
            Ok(()) => Ok(()),
            Err(error) => Err(error),
        };
        self.health.set_ready(false);
        self.factory.shutdown().await;
        if let Some(unsharded) = &self.unsharded {
            unsharded.shutdown().await;
        }
        shutdown_task.abort();
        servers.iter().for_each(JoinHandle::abort);
        result
    }

    /// Waits for every controller's caches, or for `stop`.
    async fn wait_for_sync(&self, stop: &Stop) -> Result<(), Error> {
        let timeout = self.options.cache_sync_timeout;
        let names: Vec<&str> = self.controllers.iter().map(|c| c.name()).collect();
        tracing::info!(controllers = ?names, "waiting for caches");
        let synced = join_all(self.controllers.iter().map(|c| c.wait_for_sync(timeout)));
        tokio::select! {
            results = synced => {
                results.into_iter().collect::<Result<Vec<()>, Error>>()?;
                tracing::info!("caches synced");
                Ok(())
            }
            () = stop.wait() => Ok(()),
        }
    }

    /// Serves the probes and `/metrics` on their addresses, each if set.
    async fn serve_endpoints(&self) -> Result<Vec<JoinHandle<()>>, Error> {
        let wanted = [
            (
                self.options.health_probe_bind_address,
                Endpoints::health(self.health.clone()),
            ),
            (
                self.options.metrics_bind_address,
                Endpoints::metrics(self.metrics.clone()),
            ),
        ];
        let mut servers = Vec::new();
        for (addr, endpoints) in wanted {
            let Some(addr) = addr else { continue };
            let listener = match TcpListener::bind(addr).await {
                Ok(listener) => listener,
                Err(source) => {
                    servers.iter().for_each(JoinHandle::abort);
                    return Err(Error::BindFailed { addr, source });
                }
            };
            let bound = listener.local_addr().unwrap_or(addr);
            tracing::info!(addr = %bound, "serving endpoints");
            servers.push(tokio::spawn(endpoints.serve(listener)));
        }
        Ok(servers)
    }

    /// Serves the webhooks when any were added and the options say where.
    async fn serve_webhooks(&self) -> Result<Option<JoinHandle<()>>, Error> {
        let options = match (&self.options.webhook, self.webhooks.is_empty()) {
            (Some(options), false) => options,
            (None, false) => {
                tracing::warn!(
                    "webhook handlers were added but ManagerOptions::webhook is not set: not serving them"
                );
                return Ok(None);
            }
            (_, true) => return Ok(None),
        };
        let started = self.webhooks.started_checker();
        self.health.add_readiness_check(
            "webhook server",
            Arc::new(move || started.load(std::sync::atomic::Ordering::Relaxed)),
        );
        let (task, _) = self.webhooks.start(&self.client, options).await?;
        Ok(Some(task))
    }

    /// Runs every controller's workers until `stop`, and drains them.
    async fn run_controllers(&self, until: Stop) {
        let (workers, drain) = (self.options.workers, self.options.shutdown_timeout);
        let runs = self
            .controllers
            .iter()
            .map(|controller| controller.run(workers, until.clone(), drain));
        join_all(runs).await;
    }

    /// Runs the workers beside the shard replica, until shutdown or the shard Lease is lost.
    async fn work_sharded(&self, shard: &dyn Shard, stop: &Stop) -> Result<(), Error> {
        let ring = self
            .options
            .sharding
            .as_ref()
            .map(|s| s.config.ring.name.clone())
            .unwrap_or_default();
        if self.options.leader_election.is_some() {
            tracing::warn!(
                ring,
                "sharding replaces leader election: the leader Lease is not used"
            );
        }
        crate::sharding::work(shard, &ring, &self.metrics, stop, |until| {
            self.run_controllers(until)
        })
        .await
    }

    /// Runs the workers: until shutdown, or (with leader election) while holding the Lease.
    async fn work(&self, stop: &Stop) -> Result<(), Error> {
        let Some(mut election) = self.options.leader_election.clone() else {
            self.run_controllers(stop.clone()).await;
            return Ok(());
        };
        election.identity.clone_from(&self.identity);
        let lease = election.lock_name.clone();
        let elector = LeaderElector::new(self.client.clone(), election)
            .map_err(|source| Error::LeaderElectionFailed { source })?;
        self.health
            .set_liveness_check(Some(leader_liveness(elector.clone())));
        let result = self.work_while_leading(&elector, &lease, stop).await;
        self.health.set_liveness_check(None);
        result
    }

    /// Campaigns for the Lease and runs the workers while holding it. The elector's own
    /// shutdown is "the workers have drained", so the Lease is released only after the last
    /// reconcile finished.
    async fn work_while_leading(
        &self,
        elector: &LeaderElector,
        lease: &str,
        stop: &Stop,
    ) -> Result<(), Error> {
        let (started, mut leadership) = mpsc::unbounded_channel();
        let callbacks = Callbacks {
            started,
            metrics: self.metrics.clone(),
            lease: lease.to_owned(),
        };
        let workers_done = Stop::new();
        let campaign = elector.run(callbacks, workers_done.wait());
        let work = async {
            let term = tokio::select! {
                term = leadership.recv() => term,
                () = stop.wait() => None,
            };
            if let Some(term) = term {
                let until = Stop::new();
                let run = self.run_controllers(until.clone());
                let end = async {
                    tokio::select! {
                        () = term.lost() => tracing::warn!("leadership lost; stopping workers"),
                        () = stop.wait() => {}
                    }
                    until.trigger();
                };
                tokio::join!(run, end);
            }
            workers_done.trigger();
        };
        let (outcome, ()) = tokio::join!(campaign, work);
        match outcome.map_err(|source| Error::LeaderElectionFailed { source })? {
            RunOutcome::ShutdownRequested => Ok(()),
            RunOutcome::LeadershipLost => Err(Error::LeadershipLost),
        }
    }
}

/// `/healthz`'s check while leader election runs: fails when this replica leads but has not
/// renewed for the lease duration plus [`LEADER_RENEWAL_TOLERANCE`].
fn leader_liveness(elector: LeaderElector) -> LivenessCheck {
    Arc::new(move || {
        elector
            .check_health(LEADER_RENEWAL_TOLERANCE)
            .map_err(|error| error.to_string())
    })
}

/// Hands the leadership token from the elector's callback to the work loop.
struct Callbacks {
    started: mpsc::UnboundedSender<Leadership>,
    metrics: ProcessMetrics,
    lease: String,
}

impl LeaderCallbacks for Callbacks {
    fn started_leading(&self, leadership: Leadership) {
        self.metrics.set_leader(&self.lease, true);
        let _ = self.started.send(leadership);
    }

    fn stopped_leading(&self) {
        self.metrics.set_leader(&self.lease, false);
    }

    fn new_leader(&self, identity: &str) {
        tracing::info!(leader = identity, "observed leader");
    }
}

/// `<host name>_<pid and nanoseconds in hex>`: unique per process, readable in
/// `kubectl get lease -o yaml` and in Events. In a pod the host name is the pod's name.
pub fn default_identity() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    format!("{}_{:x}{nanos:x}", host_name(), std::process::id())
}

/// The host name (in a pod, its name), `kubegen` when there is none. A shard's default name:
/// unique among a Deployment's pods, stable for the pod's life, and a label value.
fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "kubegen".to_owned())
}

#[cfg(test)]
#[path = "manager_tests.rs"]
mod tests;
