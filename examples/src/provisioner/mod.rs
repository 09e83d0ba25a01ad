//! `cluster-provisioner`: the classic controller shape written out by hand, on the pieces
//! kubegen-runtime hides: informer callbacks enqueue keys into a rate-limited workqueue, and
//! workers reconcile them against a slow, sometimes failing (simulated) cloud.
//!
//! ```text
//! Cluster informer    ─on_add/on_update/on_delete──► queue.add("name")
//! Kubeconfig informer ─on_update/on_delete─────────► queue.add(spec.clusterName)
//! worker: queue.get() → reconcile(name) ─Ok(Done)─────────► forget + done
//!                                       ─Ok(RequeueAfter)─► forget + add_after(d) + done
//!                                       ─Err(_)───────────► add_rate_limited (backoff) + done
//! ```
//!
//! `Cluster` and `Kubeconfig` (`clusterprovisioner.example.com/v1alpha1`) are cluster-scoped and
//! have no status subresource: the controller writes the Cluster's `status.phase`
//! (`Provisioning`, `Ready`) with a plain update, and the result of provisioning is the
//! `Kubeconfig` object it writes once the cloud says the cluster is ready. A failed cloud call is retried with per-key
//! exponential backoff ([`ProvisionerOptions::retry_base`], doubling); a cluster still being
//! created is looked at again after the time the cloud says (requeue-after), without raising its
//! backoff.

pub mod cloud;
mod reconcile;

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubegen_api::clusterprovisioner::v1alpha1::{Cluster, ClusterSpec, Kubeconfig};
use kubegen_cache::{DeletedObject, FactoryOptions, HandlerFns, ObjectKey, UpdateFilter};
use kubegen_client::Client;
use kubegen_clientset::Clientset;
use kubegen_informers::SharedInformerFactory;
use kubegen_workqueue::{
    ItemExponentialBackoff, MaxOf, NoopMetrics, RateLimiter, RateLimitingQueue, TokenBucket,
};
use tokio::task::JoinHandle;

use self::cloud::{Cloud, CloudOptions};
use self::reconcile::Reconciler;
pub use self::reconcile::{Outcome, ReconcileError};

/// How long the informers may take to list at start.
const SYNC_TIMEOUT: Duration = Duration::from_secs(30);
/// How long shutdown waits for in-flight reconciles.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// How the provisioner runs.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ProvisionerOptions {
    /// The simulated cloud.
    pub cloud: CloudOptions,
    /// Concurrent reconciles.
    pub workers: usize,
    /// The first retry delay of a failing key; it doubles with each failure.
    pub retry_base: Duration,
    /// The longest retry delay.
    pub retry_max: Duration,
}

impl Default for ProvisionerOptions {
    fn default() -> Self {
        ProvisionerOptions {
            cloud: CloudOptions::default(),
            workers: 2,
            retry_base: Duration::from_millis(250),
            retry_max: Duration::from_secs(30),
        }
    }
}

/// A running provisioner: two informers, a queue and its workers.
pub struct ClusterProvisioner {
    factory: SharedInformerFactory,
    queue: RateLimitingQueue<String>,
    workers: Vec<JoinHandle<()>>,
    reconciler: Arc<Reconciler>,
}

impl ClusterProvisioner {
    /// Starts the informers, waits for their caches, then starts the workers.
    ///
    /// # Errors
    /// A handler could not be added or the caches did not sync within 30 s.
    pub async fn start(
        client: Client,
        options: ProvisionerOptions,
    ) -> anyhow::Result<ClusterProvisioner> {
        let factory = SharedInformerFactory::new(client.clone(), FactoryOptions::default());
        let informers = factory.clusterprovisioner_v1alpha1();
        let (clusters, kubeconfigs) = (informers.clusters(), informers.kubeconfigs());
        let queue =
            RateLimitingQueue::new("clusters", rate_limiter(&options)?, NoopMetrics::shared());
        clusters
            .informer()
            .add_event_handler(cluster_handler(&queue))?;
        kubeconfigs
            .informer()
            .add_event_handler(kubeconfig_handler(&queue))?;
        factory.start();
        factory.wait_for_cache_sync(SYNC_TIMEOUT).await?;

        let clientset = Clientset::new(client).clusterprovisioner_v1alpha1();
        let reconciler = Arc::new(Reconciler {
            clusters: clusters.lister(),
            kubeconfigs: kubeconfigs.lister(),
            cluster_client: clientset.clusters(),
            kubeconfig_client: clientset.kubeconfigs(),
            cloud: Cloud::new(options.cloud.clone()),
        });
        let workers = (0..options.workers.max(1))
            .map(|_| tokio::spawn(worker(queue.clone(), Arc::clone(&reconciler))))
            .collect();
        Ok(ClusterProvisioner {
            factory,
            queue,
            workers,
            reconciler,
        })
    }

    /// How many calls the simulated cloud has had for cluster `name` since it last created it
    /// (failed ones included); 0 once deleted.
    pub fn cloud_calls(&self, name: &str) -> u32 {
        self.reconciler.cloud.calls(name)
    }

    /// Stops handing out keys, gives in-flight reconciles 10 s, then stops the informers.
    pub async fn shutdown(self) {
        if !self.queue.shut_down_with_drain(DRAIN_TIMEOUT).await {
            tracing::warn!("in-flight reconciles did not finish in time");
        }
        for worker in self.workers {
            let _ = worker.await;
        }
        self.factory.shutdown().await;
    }
}

/// Per-key exponential backoff, and an overall token bucket so a storm of failures cannot
/// flood the cloud: client-go's default controller limiter with this example's base delay.
fn rate_limiter(options: &ProvisionerOptions) -> anyhow::Result<MaxOf<String>> {
    let per_key: Box<dyn RateLimiter<String>> = Box::new(ItemExponentialBackoff::new(
        options.retry_base,
        options.retry_max,
    ));
    let overall: Box<dyn RateLimiter<String>> = Box::new(TokenBucket::new(10.0, 100)?);
    Ok(MaxOf::new(vec![per_key, overall]))
}

/// Every new or deleted Cluster, and every change to a Cluster's spec, enqueues its name.
/// Updates that leave the spec alone are the controller's own status writes: reacting to them
/// would reconcile each Cluster once more per write.
fn cluster_handler(
    queue: &RateLimitingQueue<String>,
) -> UpdateFilter<Cluster, HandlerFns<Cluster>> {
    let (on_add, on_update, on_delete) = (queue.clone(), queue.clone(), queue.clone());
    let enqueue = HandlerFns::new()
        .on_add(move |cluster: &Arc<Cluster>, _| {
            on_add.add(ObjectKey::of(cluster.as_ref()).to_string())
        })
        .on_update(move |_, cluster: &Arc<Cluster>| {
            on_update.add(ObjectKey::of(cluster.as_ref()).to_string());
        })
        .on_delete(move |gone: &DeletedObject<Cluster>| {
            on_delete.add(ObjectKey::of(gone.object().as_ref()).to_string());
        });
    UpdateFilter::new(|old: &Cluster, new: &Cluster| old.spec != new.spec, enqueue)
}

/// A changed or deleted Kubeconfig enqueues its Cluster, so a Kubeconfig someone deleted or
/// edited is written again.
fn kubeconfig_handler(queue: &RateLimitingQueue<String>) -> HandlerFns<Kubeconfig> {
    let (on_update, on_delete) = (queue.clone(), queue.clone());
    HandlerFns::new()
        .on_update(move |_, kubeconfig: &Arc<Kubeconfig>| {
            on_update.add(kubeconfig.spec.cluster_name.clone());
        })
        .on_delete(move |gone: &DeletedObject<Kubeconfig>| {
            on_delete.add(gone.object().spec.cluster_name.clone());
        })
}

/// The worker loop: every key ends in `done`, after `forget` (success) or `add_rate_limited`
/// (failure), so a key is never stuck and never processed twice at once.
async fn worker(queue: RateLimitingQueue<String>, reconciler: Arc<Reconciler>) {
    while let Some(name) = queue.get().await {
        match reconciler.reconcile(&name).await {
            Ok(Outcome::Done) => queue.forget(&name),
            Ok(Outcome::RequeueAfter(delay)) => {
                queue.forget(&name);
                queue.add_after(name.clone(), delay);
            }
            Err(error) => {
                let retry = queue.num_requeues(&name) + 1;
                tracing::warn!(cluster = %name, retry, "{error:#}; retrying with backoff");
                queue.add_rate_limited(name.clone());
            }
        }
        queue.done(&name);
    }
}

/// A sample Cluster `name` in region `eu-west`.
pub fn sample(name: &str) -> Cluster {
    Cluster {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        spec: ClusterSpec {
            kubernetes_version: "1.33.1".to_owned(),
            workers: 3,
            region: Some("eu-west".to_owned()),
        },
        status: None,
    }
}
