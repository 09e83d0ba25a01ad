//! The binary's main loop, as a library function so the e2e tests run exactly what `image-police`
//! runs. The counterpart of sample-controller's `main.go`.
//!
//! # Order of events
//! 1. Serve `/healthz` and `/metrics` (liveness does not wait for anything). Every metric of the
//!    process is in the one registry of [`ProcessMetrics`], built before anything records.
//! 2. Load the client configuration (recording into [`ProcessMetrics::client`]); build one
//!    shared informer factory with the WhiteList and Deployment informers; register the
//!    controller's handlers; start the informers.
//! 3. Wait for the caches (`--cache-sync-timeout`); then `/readyz` turns ready. Standby replicas
//!    keep their caches warm too, so a takeover starts from a full cache.
//! 4. Without `--leader-elect`, run the workers until shutdown. With it, run them only while
//!    holding the Lease (and `/healthz` fails if this leader stops renewing; see
//!    [`LEADER_RENEWAL_TOLERANCE`]): when leadership is lost the workers stop at once and [`run`]
//!    returns [`Error::LeadershipLost`] so the process restarts as a fresh candidate (client-go's
//!    controllers exit the same way).
//! 5. On shutdown (SIGTERM): stop handing out keys, let in-flight reconciles finish
//!    (`--shutdown-timeout`), then release the Lease, then stop the informers.

use std::future::Future;
use std::sync::Arc;

use kubegen_cache::FactoryOptions;
use kubegen_client::{Client, Config, LoadOptions};
use kubegen_clientset::Clientset;
use kubegen_informers::SharedInformerFactory;
use kubegen_leaderelection::{
    LeaderCallbacks, LeaderElectionConfig, LeaderElector, Leadership, RunOutcome,
};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::controller::Controller;
use crate::endpoints::{Endpoints, Health, LEADER_RENEWAL_TOLERANCE, LivenessCheck};
use crate::error::Error;
use crate::events::{COMPONENT, EventBuilder};
use crate::flags::Flags;
use crate::metrics::{Metrics, ProcessMetrics};
use crate::namespaces::ProtectedNamespaces;
use crate::reconcile::Reconciler;
use crate::writer::Writer;

/// A one-shot, cloneable stop signal: `trigger` once, any number of `wait`ers wake.
#[derive(Clone)]
struct Stop(Arc<watch::Sender<bool>>);

impl Stop {
    fn new() -> Stop {
        Stop(Arc::new(watch::channel(false).0))
    }

    fn trigger(&self) {
        self.0.send_replace(true);
    }

    async fn wait(&self) {
        let mut stopped = self.0.subscribe();
        let _ = stopped.wait_for(|stopped| *stopped).await;
    }
}

/// Runs the controller described by `flags` until `shutdown` resolves (or leadership is lost).
///
/// `health` and `metrics` are shared with the caller, so tests can watch readiness and work.
///
/// # Errors
/// Any [`Error`] that stops the controller; `Ok(())` after a clean shutdown.
pub async fn run(
    flags: &Flags,
    health: Health,
    metrics: ProcessMetrics,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    let stop = Stop::new();
    let trigger = stop.clone();
    let shutdown_task = tokio::spawn(async move {
        shutdown.await;
        trigger.trigger();
    });
    let result = match serve_endpoints(flags, &health, &metrics).await {
        Ok(servers) => {
            let result = run_controller(flags, &stop, &health, &metrics).await;
            servers.iter().for_each(JoinHandle::abort);
            result
        }
        Err(error) => Err(error),
    };
    health.set_ready(false);
    shutdown_task.abort();
    result
}

async fn serve_endpoints(
    flags: &Flags,
    health: &Health,
    metrics: &ProcessMetrics,
) -> Result<Vec<JoinHandle<()>>, Error> {
    let invalid = |addr: &str| Error::InvalidAddress {
        addr: addr.to_owned(),
    };
    let wanted = [
        (
            flags
                .health_socket()
                .map_err(|_| invalid(&flags.health_addr))?,
            Endpoints::health(health.clone()),
        ),
        (
            flags
                .metrics_socket()
                .map_err(|_| invalid(&flags.metrics_addr))?,
            Endpoints::metrics(metrics.clone()),
        ),
    ];
    let mut servers = Vec::new();
    for (addr, endpoints) in wanted {
        let Some(addr) = addr else { continue };
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| Error::BindFailed { addr, source })?;
        tracing::info!(%addr, "serving endpoints");
        servers.push(tokio::spawn(endpoints.serve(listener)));
    }
    Ok(servers)
}

/// What the controller runs with, resolved from the flags and the client configuration.
struct Setup {
    client: Client,
    own_namespace: String,
    identity: String,
}

async fn connect(flags: &Flags, metrics: &ProcessMetrics) -> Result<Setup, Error> {
    let mut load = LoadOptions::default();
    load.kubeconfig_path = flags.kubeconfig.clone();
    load.context = flags.context.clone();
    load.master_url = flags.master.clone();
    let mut config = Config::load(&load)
        .await
        .map_err(|source| Error::ConfigLoadFailed { source })?;
    config.metrics = metrics.client.clone();
    let own_namespace = flags
        .own_namespace
        .clone()
        .unwrap_or_else(|| config.default_namespace().to_owned());
    let client = Client::new(config).map_err(|source| Error::ClientBuildFailed { source })?;
    let identity = flags
        .leader_elect_identity
        .clone()
        .unwrap_or_else(default_identity);
    Ok(Setup {
        client,
        own_namespace,
        identity,
    })
}

/// One shared informer factory with the WhiteList and Deployment informers, and the controller
/// whose handlers are registered on them (informers not started yet).
fn build(
    flags: &Flags,
    setup: &Setup,
    metrics: &ProcessMetrics,
) -> Result<(SharedInformerFactory, Controller), Error> {
    let mut options = FactoryOptions::default();
    options.namespace = flags.namespace.clone();
    options.metrics = metrics.informers.clone();
    // managedFields are never read here and can be half of an object's size.
    options.transform = Some(Arc::new(|meta| meta.managed_fields = None));
    let factory = SharedInformerFactory::new(setup.client.clone(), options);
    let (whitelists, deployments) = (
        factory.police_v1beta1().white_lists(),
        factory.apps_v1().deployments(),
    );
    let reconciler = Reconciler {
        whitelists: whitelists.lister(),
        deployments: deployments.lister(),
        writer: Writer::new(Clientset::new(setup.client.clone())),
        protected: ProtectedNamespaces::new(&setup.own_namespace, flags.allow_protected_namespaces),
        events: EventBuilder::new(&setup.identity),
        metrics: metrics.controller.clone(),
    };
    let controller = Controller::new(
        &whitelists.informer(),
        &deployments.informer(),
        reconciler,
        Arc::new(metrics.queues.clone()),
    )?;
    Ok((factory, controller))
}

async fn run_controller(
    flags: &Flags,
    stop: &Stop,
    health: &Health,
    metrics: &ProcessMetrics,
) -> Result<(), Error> {
    let setup = connect(flags, metrics).await?;
    let (factory, controller) = build(flags, &setup, metrics)?;
    factory.start();
    let scope = flags.namespace.as_deref().unwrap_or("<all>");
    tracing::info!(
        namespace = scope,
        own_namespace = setup.own_namespace,
        "waiting for caches"
    );
    let synced = tokio::select! {
        synced = controller.wait_for_sync(flags.cache_sync_timeout) => synced,
        () = stop.wait() => Ok(()),
    };
    let result = match synced {
        Ok(()) if !*stop.0.borrow() => {
            health.set_ready(true);
            tracing::info!("caches synced");
            work(&controller, flags, setup, stop, health, &metrics.controller).await
        }
        Ok(()) => Ok(()),
        Err(error) => Err(error),
    };
    health.set_ready(false);
    factory.shutdown().await;
    result
}

/// Runs the workers: until shutdown, or (with `--leader-elect`) while holding the Lease.
async fn work(
    controller: &Controller,
    flags: &Flags,
    setup: Setup,
    stop: &Stop,
    health: &Health,
    metrics: &Metrics,
) -> Result<(), Error> {
    if !flags.leader_elect {
        controller
            .run_workers(
                usize::from(flags.workers),
                stop.wait(),
                flags.shutdown_timeout,
            )
            .await;
        return Ok(());
    }
    let lease_namespace = flags
        .leader_elect_namespace
        .as_deref()
        .unwrap_or(&setup.own_namespace);
    let mut election = LeaderElectionConfig::new(
        lease_namespace,
        &flags.leader_elect_lease_name,
        &setup.identity,
    );
    election.release_on_cancel = true;
    election.lease_duration = flags.leader_elect_lease_duration;
    election.renew_deadline = flags.leader_elect_renew_deadline;
    election.retry_period = flags.leader_elect_retry_period;
    let elector = LeaderElector::new(setup.client, election)
        .map_err(|source| Error::LeaderElectionFailed { source })?;
    health.set_liveness_check(Some(leader_liveness(elector.clone())));
    let result = work_while_leading(controller, flags, &elector, stop, metrics).await;
    health.set_liveness_check(None);
    result
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

/// Campaigns for the Lease and runs the workers while holding it. The elector's own shutdown is
/// "the workers have drained", so the Lease is released only after the last reconcile finished.
async fn work_while_leading(
    controller: &Controller,
    flags: &Flags,
    elector: &LeaderElector,
    stop: &Stop,
    metrics: &Metrics,
) -> Result<(), Error> {
    let (started, mut leadership) = mpsc::unbounded_channel();
    let callbacks = Callbacks {
        started,
        metrics: metrics.clone(),
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
            controller
                .run_workers(usize::from(flags.workers), until, flags.shutdown_timeout)
                .await;
        }
        workers_done.trigger();
    };
    let (outcome, ()) = tokio::join!(campaign, work);
    match outcome.map_err(|source| Error::LeaderElectionFailed { source })? {
        RunOutcome::ShutdownRequested => Ok(()),
        RunOutcome::LeadershipLost => Err(Error::LeadershipLost),
    }
}

/// `<host name>_<nanoseconds>`: unique per process, readable in `kubectl get lease -o yaml`.
fn default_identity() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| COMPONENT.to_owned());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    format!("{host}_{:x}{nanos:x}", std::process::id())
}
