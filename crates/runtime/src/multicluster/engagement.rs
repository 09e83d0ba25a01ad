//! One cluster's life in the fleet, from engage to disengage: its controllers are built on its
//! informers and run on tasks of their own, a probe watches whether it answers, and on
//! disengage every task ends, every handler leaves the hub's informers and the cluster's
//! informers end their watches. multicluster-runtime's counterpart is `mcmanager.Engage` plus
//! the per-cluster `cluster.Cluster.Start` (`pkg/manager`, `pkg/controller`), which runs the
//! cluster's cache on a context cancelled at disengage.
//!
//! # Isolation
//! Each cluster has its own queues and workers (one [`crate::Controller`] per controller and
//! cluster): a cluster that hangs ties up only its own workers. multicluster-runtime instead
//! feeds every cluster into one queue per controller and shares its workers, so a cluster whose
//! requests hang can take every worker; here the cost is a few idle tasks per cluster.
//!
//! # Guarantees
//! - [`Engagement::end`] returns only after the cluster's workers stopped (in-flight reconciles
//!   drained, up to the drain timeout), its handlers left the hub's informers, its informers'
//!   tasks ended (their watches closed), and its probe stopped: nothing of the cluster keeps
//!   running.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use tokio::task::JoinHandle;

use crate::builder::Builder;
use crate::error::Error;
use crate::multicluster::cluster::{Cluster, ClusterState};
use crate::multicluster::metrics::FleetMetrics;
use crate::multicluster::request::{FleetReconciler, OnCluster};
use crate::reconcile::Object;
use crate::stop::Stop;

/// How the fleet runs each cluster's controllers and probe.
#[derive(Clone, Debug)]
pub(crate) struct RunSettings {
    pub(crate) workers: usize,
    pub(crate) drain: Duration,
    pub(crate) sync_timeout: Duration,
    pub(crate) probe_period: Duration,
    pub(crate) probe_timeout: Duration,
}

/// A controller of the fleet, whatever its kind: builds and runs its instance for one cluster.
pub(crate) trait FleetController: Send + Sync {
    /// Builds the controller for `cluster` and starts the task running it until `stop`.
    fn start(
        &self,
        cluster: &Cluster,
        stop: Stop,
        progress: Progress,
        settings: &RunSettings,
    ) -> Result<Started, Error>;
}

/// A running controller instance: its task, and how to take its handlers off the informers.
pub(crate) struct Started {
    task: JoinHandle<()>,
    detach: Box<dyn FnOnce() + Send>,
}

impl Started {
    /// `task` runs until the cluster's stop; `detach` takes its handlers off their informers.
    pub(crate) fn new(task: JoinHandle<()>, detach: Box<dyn FnOnce() + Send>) -> Started {
        Started { task, detach }
    }
}

/// Builds the controller of `K` for a cluster.
pub(crate) type BuildFor<K> = Arc<dyn Fn(&Cluster) -> Builder<K> + Send + Sync>;

/// A controller of `K` reconciled by `R` in every engaged cluster.
pub(crate) struct Defined<K, R> {
    pub(crate) name: String,
    pub(crate) build: BuildFor<K>,
    pub(crate) reconciler: Arc<R>,
    pub(crate) metrics: FleetMetrics,
}

impl<K: Object, R: FleetReconciler<K>> FleetController for Defined<K, R> {
    fn start(
        &self,
        cluster: &Cluster,
        stop: Stop,
        progress: Progress,
        settings: &RunSettings,
    ) -> Result<Started, Error> {
        let controller = Arc::new((self.build)(cluster).build()?);
        let reconciler = Arc::new(OnCluster {
            reconciler: Arc::clone(&self.reconciler),
            cluster: cluster.clone(),
            controller: self.name.clone(),
            metrics: self.metrics.clone(),
        });
        let (running, settings) = (Arc::clone(&controller), settings.clone());
        let task = tokio::spawn(async move {
            if !wait_for_sync(&running, &stop, settings.sync_timeout, &progress).await {
                return;
            }
            let workers = running.workers().unwrap_or(settings.workers);
            running
                .run(reconciler, workers, stop.wait(), settings.drain)
                .await;
        });
        Ok(Started {
            task,
            detach: Box::new(move || controller.detach()),
        })
    }
}

/// Waits for the controller's caches, retrying after each timeout (a cluster that does not
/// answer yet keeps its controller waiting, not the fleet), until `stop`. Returns whether they
/// synced.
async fn wait_for_sync<K: Object>(
    controller: &crate::Controller<K>,
    stop: &Stop,
    timeout: Duration,
    progress: &Progress,
) -> bool {
    loop {
        tokio::select! {
            result = controller.wait_for_sync(timeout) => match result {
                Ok(()) => {
                    progress.synced_one();
                    return true;
                }
                Err(error) => tracing::warn!(
                    cluster = progress.cluster.name(),
                    controller = controller.name(),
                    error = %error,
                    "caches not synced yet; still waiting"
                ),
            },
            () = stop.wait() => return false,
        }
    }
}

/// How many of a cluster's controllers have synced; the last one marks the cluster ready.
#[derive(Clone)]
pub(crate) struct Progress {
    cluster: Cluster,
    synced: Arc<AtomicUsize>,
    total: usize,
    metrics: FleetMetrics,
}

impl Progress {
    /// One more controller of the cluster has synced.
    pub(crate) fn synced_one(&self) {
        if self.synced.fetch_add(1, Ordering::AcqRel) + 1 == self.total {
            self.mark(ClusterState::Ready);
        }
    }

    fn all_synced(&self) -> bool {
        self.synced.load(Ordering::Acquire) >= self.total
    }

    fn mark(&self, state: ClusterState) {
        let (name, ready) = (self.cluster.name(), state == ClusterState::Ready);
        if let ClusterState::Unreachable { reason, .. } = &state
            && self.cluster.state() == ClusterState::Ready
        {
            tracing::warn!(
                cluster = name,
                reason,
                "cluster stopped answering; isolated"
            );
        }
        if self.cluster.set_state(state) && ready {
            tracing::info!(cluster = name, "cluster ready");
        }
        self.metrics.set_ready(name, ready);
    }
}

/// An engaged cluster and everything running for it.
pub(crate) struct Engagement {
    pub(crate) cluster: Cluster,
    pub(crate) fingerprint: u64,
    stop: Stop,
    started: Vec<Started>,
    probe: JoinHandle<()>,
}

impl Engagement {
    /// Builds and starts every controller of the fleet on `cluster`, starts its informers (and
    /// the hub's, which a controller may have asked for), and its probe.
    ///
    /// # Errors
    /// A controller could not be built (its handlers could not be registered); whatever was
    /// started is stopped again before returning.
    pub(crate) async fn start(
        cluster: Cluster,
        fingerprint: u64,
        controllers: &[Arc<dyn FleetController>],
        settings: &RunSettings,
        metrics: &FleetMetrics,
    ) -> Result<Engagement, Error> {
        let stop = Stop::new();
        let progress = Progress {
            cluster: cluster.clone(),
            synced: Arc::new(AtomicUsize::new(0)),
            total: controllers.len(),
            metrics: metrics.clone(),
        };
        let mut started = Vec::with_capacity(controllers.len());
        for controller in controllers {
            match controller.start(&cluster, stop.clone(), progress.clone(), settings) {
                Ok(one) => started.push(one),
                Err(error) => {
                    let probe = tokio::spawn(async {});
                    let partial = Engagement {
                        cluster,
                        fingerprint,
                        stop,
                        started,
                        probe,
                    };
                    partial.end().await;
                    return Err(error);
                }
            }
        }
        cluster.factory().start();
        cluster.hub().start();
        let probe = tokio::spawn(probe(progress, settings.clone()));
        Ok(Engagement {
            cluster,
            fingerprint,
            stop,
            started,
            probe,
        })
    }

    /// Stops handing out the cluster's keys at once: no reconcile of it starts after this.
    pub(crate) fn stop_now(&self) {
        self.cluster.mark_disengaged();
        self.stop.trigger();
    }

    /// Stops everything of the cluster and waits until it has stopped (see the module docs).
    pub(crate) async fn end(self) {
        self.stop_now();
        self.probe.abort();
        let _ = self.probe.await;
        for started in self.started {
            let _ = started.task.await;
            (started.detach)();
        }
        self.cluster.factory().shutdown().await;
    }
}

/// Asks the cluster `GET /version` every probe period: a cluster that does not answer within
/// the probe timeout is marked unreachable (its informers retry by themselves).
async fn probe(progress: Progress, settings: RunSettings) {
    let mut tick = tokio::time::interval(settings.probe_period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let answer = tokio::time::timeout(settings.probe_timeout, ask_version(&progress.cluster));
        let state = match answer.await {
            Ok(Ok(())) if progress.all_synced() => ClusterState::Ready,
            Ok(Ok(())) => ClusterState::Syncing,
            Ok(Err(reason)) => unreachable_since_now(reason),
            Err(_) => unreachable_since_now(format!(
                "no answer to GET /version within {:?}",
                settings.probe_timeout
            )),
        };
        progress.mark(state);
    }
}

fn unreachable_since_now(reason: String) -> ClusterState {
    ClusterState::Unreachable {
        since: std::time::Instant::now(),
        reason,
    }
}

/// `GET /version`: the cheapest request every server answers.
async fn ask_version(cluster: &Cluster) -> Result<(), String> {
    let request = http::Request::get("/version")
        .body(Bytes::new())
        .map_err(|error| error.to_string())?;
    cluster
        .client()
        .request_json::<serde_json::Value>(request)
        .await
        .map(drop)
        .map_err(|error| error.to_string())
}
