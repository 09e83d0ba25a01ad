//! The manager: runs one controller's informers, its workers (under leader election if asked),
//! the `/healthz`, `/readyz` and `/metrics` endpoints, and a graceful shutdown. The counterpart
//! of controller-runtime's `manager.Manager` and of sample-controller's `main.go`.
//!
//! # Order of events in [`Manager::run`]
//! 1. (Before: [`serve_endpoints`] serves `/healthz` and `/metrics`; liveness waits for nothing.)
//! 2. Start the informer factory; wait for the controller's caches (`cache_sync_timeout`); then
//!    `/readyz` turns ready. Standby replicas keep their caches warm too, so a takeover starts
//!    from a full cache.
//! 3. Without leader election, run the workers until shutdown. With it, run them only while
//!    holding the Lease (and `/healthz` fails if this leader stops renewing; see
//!    [`LEADER_RENEWAL_TOLERANCE`]): when leadership is lost the workers stop at once and `run`
//!    returns [`Error::LeadershipLost`] so the process restarts as a fresh candidate.
//! 4. On shutdown: stop handing out keys, let in-flight reconciles finish (`shutdown_timeout`),
//!    then release the Lease, then stop the informers and wait for their tasks.
//!
//! # Differences from controller-runtime
//! One manager runs one controller: every kubegen controller so far has one, and it keeps the
//! manager free of type erasure. Run several managers for several controllers.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use kubegen_cache::{ClientListWatchSource, InformerFactory};
use kubegen_client::Client;
use kubegen_leaderelection::{
    LeaderCallbacks, LeaderElectionConfig, LeaderElector, Leadership, RunOutcome,
};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::controller::{Controller, Object, Reconciler};
use crate::endpoints::{Endpoints, Health, LEADER_RENEWAL_TOLERANCE, LivenessCheck};
use crate::error::Error;
use crate::metrics::{Metrics, Scrape};

/// A one-shot, cloneable stop signal: `trigger` once, any number of `wait`ers wake.
#[derive(Clone, Debug)]
struct Stop(Arc<watch::Sender<bool>>);

impl Stop {
    fn new() -> Stop {
        Stop(Arc::new(watch::channel(false).0))
    }

    fn trigger(&self) {
        self.0.send_replace(true);
    }

    fn is_triggered(&self) -> bool {
        *self.0.borrow()
    }

    async fn wait(&self) {
        let mut stopped = self.0.subscribe();
        let _ = stopped.wait_for(|stopped| *stopped).await;
    }
}

/// How the manager runs its controller.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ManagerOptions {
    /// Parallel reconciles.
    pub workers: usize,
    /// How long to wait for the caches before giving up.
    pub cache_sync_timeout: Duration,
    /// How long in-flight reconciles may take to finish on shutdown.
    pub shutdown_timeout: Duration,
    /// Run the workers only while holding this Lease; `None` runs them unconditionally.
    pub leader_election: Option<LeaderElectionConfig>,
}

impl Default for ManagerOptions {
    fn default() -> Self {
        ManagerOptions {
            workers: 2,
            cache_sync_timeout: Duration::from_secs(120),
            shutdown_timeout: Duration::from_secs(30),
            leader_election: None,
        }
    }
}

/// Owns the informer factory, health, metrics and the client leader election uses.
#[derive(Clone)]
pub struct Manager {
    client: Client,
    factory: InformerFactory<ClientListWatchSource>,
    health: Health,
    metrics: Metrics,
    options: ManagerOptions,
}

impl std::fmt::Debug for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manager")
            .field("health", &self.health)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Manager {
    /// A manager over `client` whose informers come from `factory` (the generated factory's
    /// `generic()`), reporting readiness into `health` and leadership into `metrics`.
    pub fn new(
        client: Client,
        factory: InformerFactory<ClientListWatchSource>,
        health: Health,
        metrics: Metrics,
        options: ManagerOptions,
    ) -> Manager {
        Manager {
            client,
            factory,
            health,
            metrics,
            options,
        }
    }

    /// Runs `controller` with `reconciler` until `shutdown` resolves (or leadership is lost).
    ///
    /// # Errors
    /// The caches did not sync, leader election failed, or leadership was lost; `Ok(())` after a
    /// clean shutdown.
    pub async fn run<K: Object, R: Reconciler<K>>(
        &self,
        controller: &Controller<K>,
        reconciler: Arc<R>,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), Error> {
        let stop = Stop::new();
        let trigger = stop.clone();
        let shutdown_task = tokio::spawn(async move {
            shutdown.await;
            trigger.trigger();
        });
        self.factory.start();
        tracing::info!(controller = controller.name(), "waiting for caches");
        let synced = tokio::select! {
            synced = controller.wait_for_sync(self.options.cache_sync_timeout) => synced,
            () = stop.wait() => Ok(()),
        };
        let result = match synced {
            Ok(()) if !stop.is_triggered() => {
                self.health.set_ready(true);
                tracing::info!(controller = controller.name(), "caches synced");
                self.work(controller, reconciler, &stop).await
            }
            Ok(()) => Ok(()),
            Err(error) => Err(error),
        };
        self.health.set_ready(false);
        self.factory.shutdown().await;
        shutdown_task.abort();
        result
    }

    /// Runs the workers: until shutdown, or (with leader election) while holding the Lease.
    async fn work<K: Object, R: Reconciler<K>>(
        &self,
        controller: &Controller<K>,
        reconciler: Arc<R>,
        stop: &Stop,
    ) -> Result<(), Error> {
        let Some(election) = self.options.leader_election.clone() else {
            controller
                .run(
                    reconciler,
                    self.options.workers,
                    stop.wait(),
                    self.options.shutdown_timeout,
                )
                .await;
            return Ok(());
        };
        let elector = LeaderElector::new(self.client.clone(), election)
            .map_err(|source| Error::LeaderElectionFailed { source })?;
        self.health
            .set_liveness_check(Some(leader_liveness(elector.clone())));
        let result = self
            .work_while_leading(controller, reconciler, &elector, stop)
            .await;
        self.health.set_liveness_check(None);
        result
    }

    /// Campaigns for the Lease and runs the workers while holding it. The elector's own
    /// shutdown is "the workers have drained", so the Lease is released only after the last
    /// reconcile finished.
    async fn work_while_leading<K: Object, R: Reconciler<K>>(
        &self,
        controller: &Controller<K>,
        reconciler: Arc<R>,
        elector: &LeaderElector,
        stop: &Stop,
    ) -> Result<(), Error> {
        let (started, mut leadership) = mpsc::unbounded_channel();
        let callbacks = Callbacks {
            started,
            metrics: self.metrics.clone(),
        };
        let workers_done = Stop::new();
        let campaign = elector.run(callbacks, workers_done.wait());
        let work = async {
            let term = tokio::select! {
                term = leadership.recv() => term,
                () = stop.wait() => None,
            };
            if let Some(term) = term {
                let until = async {
                    tokio::select! {
                        () = term.lost() => tracing::warn!("leadership lost; stopping workers"),
                        () = stop.wait() => {}
                    }
                };
                let (workers, timeout) = (self.options.workers, self.options.shutdown_timeout);
                controller.run(reconciler, workers, until, timeout).await;
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
    metrics: Metrics,
}

impl LeaderCallbacks for Callbacks {
    fn started_leading(&self, leadership: Leadership) {
        self.metrics.set_leader(true);
        let _ = self.started.send(leadership);
    }

    fn stopped_leading(&self) {
        self.metrics.set_leader(false);
    }

    fn new_leader(&self, identity: &str) {
        tracing::info!(leader = identity, "observed leader");
    }
}

/// Serves `/healthz` + `/readyz` on `health_addr` and `/metrics` on `metrics_addr` (each if
/// given; one address may not serve both). The servers run until their handles are aborted.
///
/// # Errors
/// [`Error::BindFailed`] naming the address that could not be bound.
pub async fn serve_endpoints(
    health_addr: Option<SocketAddr>,
    metrics_addr: Option<SocketAddr>,
    health: &Health,
    metrics: &Scrape,
) -> Result<Vec<JoinHandle<()>>, Error> {
    let wanted = [
        (health_addr, Endpoints::health(health.clone())),
        (metrics_addr, Endpoints::metrics(metrics.clone())),
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
        tracing::info!(%addr, "serving endpoints");
        servers.push(tokio::spawn(endpoints.serve(listener)));
    }
    Ok(servers)
}
