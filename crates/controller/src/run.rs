//! The binary's main loop, as a library function so the e2e tests run exactly what `image-police`
//! runs. The counterpart of sample-controller's `main.go`: flags in, a [`kubegen_runtime::Manager`]
//! out; the manager does steps 3 to 5.
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

use kubegen_api::police::v1beta1::WhiteList;
use kubegen_cache::FactoryOptions;
use kubegen_client::{Client, Config, LoadOptions};
use kubegen_clientset::Clientset;
use kubegen_informers::SharedInformerFactory;
use kubegen_leaderelection::LeaderElectionConfig;
use kubegen_runtime::{Controller, Manager, ManagerOptions, Recorder, serve_endpoints};
use tokio::task::JoinHandle;

use crate::endpoints::Health;
use crate::error::Error;
use crate::flags::Flags;
use crate::metrics::ProcessMetrics;
use crate::namespaces::ProtectedNamespaces;
use crate::reconcile::{COMPONENT, Reconciler};
use crate::writer::Writer;

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
    let invalid = |addr: &str| Error::InvalidAddress {
        addr: addr.to_owned(),
    };
    let health_addr = flags
        .health_socket()
        .map_err(|_| invalid(&flags.health_addr))?;
    let metrics_addr = flags
        .metrics_socket()
        .map_err(|_| invalid(&flags.metrics_addr))?;
    let servers = serve_endpoints(health_addr, metrics_addr, &health, &metrics.scrape()).await?;
    let result = run_controller(flags, health.clone(), &metrics, shutdown).await;
    servers.iter().for_each(JoinHandle::abort);
    health.set_ready(false);
    result
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

/// One shared informer factory with the WhiteList and Deployment informers, the controller
/// whose handlers are registered on them (informers not started yet), and its reconciler.
fn build(
    flags: &Flags,
    setup: &Setup,
    metrics: &ProcessMetrics,
) -> Result<(SharedInformerFactory, Controller<WhiteList>, Reconciler), Error> {
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
        events: Recorder::new(setup.client.clone(), COMPONENT, &setup.identity),
        metrics: metrics.app.clone(),
    };
    let controller = crate::controller::build(
        &whitelists.informer(),
        &deployments.informer(),
        metrics.controller.clone(),
        Arc::new(metrics.queues.clone()),
    )?;
    Ok((factory, controller, reconciler))
}

async fn run_controller(
    flags: &Flags,
    health: Health,
    metrics: &ProcessMetrics,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    let setup = connect(flags, metrics).await?;
    let (factory, controller, reconciler) = build(flags, &setup, metrics)?;
    let mut options = ManagerOptions::default();
    options.workers = usize::from(flags.workers);
    options.cache_sync_timeout = flags.cache_sync_timeout;
    options.shutdown_timeout = flags.shutdown_timeout;
    options.leader_election = flags.leader_elect.then(|| election(flags, &setup));
    tracing::info!(
        namespace = flags.namespace.as_deref().unwrap_or("<all>"),
        own_namespace = setup.own_namespace,
        "starting"
    );
    let manager = Manager::new(
        setup.client,
        factory.generic().clone(),
        health,
        metrics.controller.clone(),
        options,
    );
    manager
        .run(&controller, Arc::new(reconciler), shutdown)
        .await?;
    Ok(())
}

/// The Lease configuration of `--leader-elect`; released on shutdown.
fn election(flags: &Flags, setup: &Setup) -> LeaderElectionConfig {
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
    election
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
