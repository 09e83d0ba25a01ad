//! `vm-controller`: a controller on kubegen-runtime, the shape most operators have. It runs
//! `VirtualMachine` objects (`cloudnative.example.com/v1alpha1`, namespaced, with a status
//! subresource and printer columns) on a simulated hypervisor ([`hypervisor`]):
//!
//! - a new VirtualMachine gets the finalizer `cloudnative.example.com/machine`, then a machine;
//!   its status says `Pending` (condition `Ready=False`, reason `Booting`) while the machine
//!   boots (the reconcile asks to be called again when it should be up: requeue-after), then
//!   `Running` with the machine's address and start time (`Ready=True`);
//! - a deleted VirtualMachine stays (terminating) until the reconcile has destroyed its machine
//!   and removed the finalizer: no machine outlives its object.
//!
//! The kind has two versions: `v1alpha1` (stored) and `v1`. With [`VmOptions::webhook`] set the
//! manager also serves the CRD conversion webhook (`/convert`, [`conversion`]) the CRD's
//! `spec.conversion` points at; the controller itself reads `v1alpha1` only.
//!
//! Everything else (informer, queue, retries with backoff, workers, cache sync, drain on
//! shutdown) is the runtime's: a `Controller` built for the kind, run by a `Manager`. Compare
//! with `cluster-provisioner`, which writes that loop by hand.
//!
//! Scale-out is the runtime's too: with [`VmOptions::sharding`] (the binary's `--sharding-ring`)
//! every replica runs at once, each on the VirtualMachines its shard holds
//! (`examples/deploy/vm-controller.yaml` runs three).

pub mod conversion;
pub mod hypervisor;
mod reconcile;

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubegen_api::cloudnative::v1alpha1::{VirtualMachine, VirtualMachineSpec};
use kubegen_cache::FactoryOptions;
use kubegen_client::Client;
use kubegen_informers::SharedInformerFactory;
use kubegen_runtime::webhook::WebhookOptions;
use kubegen_runtime::{Manager, ManagerOptions};
use kubegen_sharding::ReplicaConfig;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use self::hypervisor::Hypervisor;
pub use self::reconcile::{FINALIZER, VmReconciler};

/// How long the informer may take to list at start.
const SYNC_TIMEOUT: Duration = Duration::from_secs(30);
/// How long shutdown waits for in-flight reconciles.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// How the controller runs.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct VmOptions {
    /// Watch only this namespace (`None`: all).
    pub namespace: Option<String>,
    /// How long a machine takes to boot.
    pub boot_time: Duration,
    /// Concurrent reconciles.
    pub workers: usize,
    /// Where to serve the conversion webhook (`None`: not served).
    pub webhook: Option<WebhookOptions>,
    /// Shard the VirtualMachines across the replicas over this ring (`None`: one replica
    /// works on all of them).
    pub sharding: Option<ReplicaConfig>,
    /// This replica's name (with sharding, its shard's); default: the manager's.
    pub identity: Option<String>,
}

impl Default for VmOptions {
    fn default() -> Self {
        VmOptions {
            namespace: None,
            boot_time: Duration::from_secs(2),
            workers: 2,
            webhook: None,
            sharding: None,
            identity: None,
        }
    }
}

/// A running vm-controller: a kubegen-runtime [`Manager`] running the controller in a task.
pub struct VmController {
    reconciler: Arc<VmReconciler>,
    stop: oneshot::Sender<()>,
    run: JoinHandle<Result<(), kubegen_runtime::Error>>,
}

impl VmController {
    /// Starts the manager (informer, cache sync, workers) and returns once it is ready.
    ///
    /// # Errors
    /// The controller could not be built, or the manager failed before it was ready.
    pub async fn start(client: Client, options: VmOptions) -> anyhow::Result<VmController> {
        let factory = FactoryOptions::default().namespace(options.namespace.clone());
        let mut manager_options = ManagerOptions::default()
            .workers(options.workers)
            .cache_sync_timeout(SYNC_TIMEOUT)
            .shutdown_timeout(DRAIN_TIMEOUT)
            .factory(factory)
            .webhook(options.webhook.clone())
            .sharding::<VirtualMachine>(options.sharding);
        if let Some(identity) = &options.identity {
            manager_options = manager_options.identity(identity);
        }
        let mut manager = Manager::new(client.clone(), manager_options);
        if options.webhook.is_some() {
            manager
                .webhook_server()
                .add_conversion(conversion::hub_conversion());
        }
        let informers = SharedInformerFactory::from(manager.factory().clone());
        let machines = informers
            .cloudnative_v1alpha1()
            .virtual_machines()
            .informer();
        let controller = manager
            .controller("vm-controller", &machines)
            .generation_changes_only()
            .build()?;
        let reconciler = Arc::new(VmReconciler::new(
            client,
            Hypervisor::new(options.boot_time),
        ));
        manager.add(controller, Arc::clone(&reconciler));
        let health = manager.health().clone();
        let (stop, stopped) = oneshot::channel::<()>();
        let mut run = tokio::spawn(manager.run(async {
            let _ = stopped.await;
        }));
        while !health.is_ready() {
            if run.is_finished() {
                return Err(match (&mut run).await {
                    Ok(Err(error)) => error.into(),
                    _ => anyhow::anyhow!("the manager stopped before it was ready"),
                });
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(VmController {
            reconciler,
            stop,
            run,
        })
    }

    /// The machines the hypervisor runs (`namespace/name`), sorted.
    pub fn machines(&self) -> Vec<String> {
        self.reconciler.hypervisor().machines()
    }

    /// Runs until `shutdown`, then stops as [`VmController::shutdown`] does; or until the manager
    /// ends by itself (a lost shard Lease), returning its error so the process restarts.
    ///
    /// # Errors
    /// The manager's error, if it failed.
    pub async fn run_until(mut self, shutdown: impl Future<Output = ()>) -> anyhow::Result<()> {
        tokio::select! {
            () = shutdown => self.shutdown().await,
            ended = &mut self.run => Ok(ended??),
        }
    }

    /// Stops the manager: in-flight reconciles get 10 s, then the informer stops.
    ///
    /// # Errors
    /// The manager's error, if it failed.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        let _ = self.stop.send(());
        self.run.await??;
        Ok(())
    }
}

/// A sample VirtualMachine `namespace/name`: 2 CPUs, 4Gi, a Debian image.
pub fn sample(namespace: &str, name: &str) -> VirtualMachine {
    VirtualMachine {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(namespace.to_owned()),
            ..ObjectMeta::default()
        },
        spec: VirtualMachineSpec {
            cpu: 2,
            memory: Quantity("4Gi".to_owned()),
            image: "debian-12".to_owned(),
            ..VirtualMachineSpec::default()
        },
        status: None,
    }
}
