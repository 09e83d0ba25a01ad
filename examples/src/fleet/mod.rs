//! `fleet-policy`: image-police over a fleet. The WhiteLists (`police.example.com/v1beta1`) live
//! in the hub cluster only; in every member cluster the hub's kubeconfig Secrets name (Cluster
//! API's `<cluster>-kubeconfig`, key `value`), each Deployment is judged against the WhiteLists
//! of its namespace and deleted when it runs an image none of them allows, as image-police does
//! in its own cluster. The seed example of kubegen-runtime's `multicluster` fleet: a hub object
//! reconciled in each member, members engaged and disengaged as their Secrets come and go,
//! rotated credentials re-engaging a member, a member that stops answering isolated from the
//! others, and one that restarts picked up again.
//!
//! # How it is wired
//! - Provider: [`KubeconfigSecrets`] over the hub's Cluster API Secrets in one namespace.
//! - Controller `fleet-policy`, built per member: its primary is the *hub's* WhiteList informer,
//!   keyed by namespace as image-police's is (a WhiteList created, changed or deleted in the hub
//!   enqueues its namespace in every member's queue), and it watches the *member's*
//!   Deployments, so a Deployment created or changed in a member enqueues its namespace when the
//!   hub has WhiteLists there (image-police's [`policed_namespace`]).
//! - Reconcile: image-police's own judgement ([`judge`]: the union of the namespace's lists, an
//!   invalid list pausing the namespace, protected namespaces left alone) over the hub's cache,
//!   applied to the member's Deployments from the member's cache; offenders are deleted through
//!   the member's client (image-police's [`Writer`]: uid precondition) with a Warning Event in
//!   the member.
//!
//! # What it leaves to image-police
//! The WhiteLists' status (`Ready`, violations) is image-police's, written by the controller of
//! the cluster the list lives in; N members writing one hub status would fight over it. The
//! fleet's deletions are reported as Events in the member and counted per member
//! ([`FleetPolicy::deletions`]). Deleting a WhiteList undoes nothing (a deleted Deployment stays
//! deleted, as with image-police); it only stops enforcement in that namespace.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube_core::Selector;
use kubegen_api::police::v1beta1::WhiteList;
use kubegen_client::Client;
use kubegen_clientset::Clientset;
use kubegen_controller::controller::policed_namespace;
use kubegen_controller::namespaces::ProtectedNamespaces;
use kubegen_controller::reconcile::{Verdict, judge};
use kubegen_controller::writer::Writer;
use kubegen_listers::apps::v1::DeploymentLister;
use kubegen_listers::police::v1beta1::WhiteListLister;
use kubegen_runtime::multicluster::{
    ClusterContext, ClusterState, Fleet, FleetOptions, FleetReconciler, KubeconfigSecrets,
    SecretOptions,
};
use kubegen_runtime::{Action, EventType, Manager, ManagerOptions};
use parking_lot::Mutex;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The controller's name (its queues' and metrics' label in every member).
pub const NAME: &str = "fleet-policy";
/// The reason of the Event on a deleted Deployment.
pub const REASON_DELETED: &str = "DeletedByFleetPolicy";

/// Where the example looks.
#[derive(Clone, Debug)]
pub struct FleetPolicyOptions {
    /// The hub namespace of the members' kubeconfig Secrets.
    pub secrets_namespace: String,
    /// Only this namespace (WhiteLists in the hub, Deployments in the members); `None`: all.
    pub namespace: Option<String>,
    /// How often each member is probed.
    pub probe_period: Duration,
}

impl Default for FleetPolicyOptions {
    fn default() -> Self {
        FleetPolicyOptions {
            secrets_namespace: "default".to_owned(),
            namespace: None,
            probe_period: Duration::from_secs(5),
        }
    }
}

/// Every deletion: (member, `namespace/deployment`).
type Deletions = Arc<Mutex<Vec<(String, String)>>>;

/// Enforces the hub's WhiteLists of the request's namespace in the request's member.
struct Enforce {
    /// The hub's WhiteLists (the manager's informer, shared by every member's controller).
    whitelists: WhiteListLister,
    /// Namespaces never acted in (image-police's default set: `kube-system`).
    protected: ProtectedNamespaces,
    deletions: Deletions,
}

impl FleetReconciler<WhiteList> for Enforce {
    type Error = kubegen_client::Error;

    async fn reconcile(
        &self,
        _first: Arc<WhiteList>,
        request: &ClusterContext,
    ) -> Result<Action, Self::Error> {
        let namespace = request.key().as_str();
        let mut lists = self
            .whitelists
            .white_lists(namespace)
            .list(&Selector::default());
        if lists.is_empty() {
            return Ok(Action::Done);
        }
        lists.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        let policy = match judge(&self.protected, namespace, &lists) {
            Verdict::Enforce(policy) => policy,
            Verdict::Protected => return Ok(Action::Done),
            Verdict::Paused(invalid) => {
                tracing::info!(
                    namespace,
                    ?invalid,
                    "enforcement paused: invalid WhiteLists"
                );
                return Ok(Action::Done);
            }
        };
        let member = request.cluster();
        let deployments = DeploymentLister::new(member.factory().informer::<Deployment>().lister());
        let writer = Writer::new(Clientset::new(member.client().clone()));
        for deployment in deployments
            .deployments(namespace)
            .list(&Selector::default())
        {
            let found = policy.violations(&*deployment);
            if found.is_empty() || deployment.metadata.deletion_timestamp.is_some() {
                continue;
            }
            let name = deployment.metadata.name.clone().unwrap_or_default();
            let uid = deployment.metadata.uid.clone();
            if !writer.delete_deployment(namespace, &name, uid).await? {
                continue; // already gone, or replaced by a new object of that name
            }
            let offenses: Vec<String> = found
                .iter()
                .map(|v| {
                    format!(
                        "container {:?} runs {} ({})",
                        v.container, v.image, v.denial
                    )
                })
                .collect();
            let message = format!(
                "Deleted by fleet-policy (WhiteLists of the hub): {}",
                offenses.join("; ")
            );
            let now = Time(jiff::Timestamp::now());
            let recorded = member
                .recorder()
                .record(
                    &*deployment,
                    EventType::Warning,
                    REASON_DELETED,
                    &message,
                    &now,
                )
                .await;
            if let Err(error) = recorded {
                tracing::warn!(%error, "recording an Event failed");
            }
            tracing::info!(
                cluster = request.cluster_name(),
                namespace,
                deployment = name,
                "deleted Deployment running a denied image"
            );
            self.deletions.lock().push((
                request.cluster_name().to_owned(),
                format!("{namespace}/{name}"),
            ));
        }
        Ok(Action::Done)
    }
}

/// The running example: a manager on the hub running the fleet.
pub struct FleetPolicy {
    fleet: Fleet,
    deletions: Deletions,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), kubegen_runtime::Error>>,
}

impl std::fmt::Debug for FleetPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FleetPolicy")
            .field("clusters", &self.fleet.clusters())
            .finish_non_exhaustive()
    }
}

impl FleetPolicy {
    /// Starts the controller on the hub reached by `hub` (the WhiteList CRD must be installed
    /// there; the members need none).
    pub fn start(hub: Client, options: &FleetPolicyOptions) -> FleetPolicy {
        let factory = kubegen_cache::FactoryOptions::default().namespace(options.namespace.clone());
        let manager_options = ManagerOptions::default()
            .factory(factory.clone())
            .shutdown_timeout(Duration::from_secs(5));
        let mut manager = Manager::new(hub.clone(), manager_options);
        let fleet_options = FleetOptions::default()
            .probe_period(options.probe_period)
            .factory(factory);
        let fleet = Fleet::new(&manager, fleet_options);
        let secrets = SecretOptions::cluster_api(&options.secrets_namespace);
        fleet.add_provider(KubeconfigSecrets::new(hub, secrets));
        let deletions = Deletions::default();
        let whitelists = WhiteListLister::new(manager.factory().informer::<WhiteList>().lister());
        let reconciler = Enforce {
            whitelists: whitelists.clone(),
            protected: ProtectedNamespaces::new(kubegen_controller::namespaces::KUBE_SYSTEM, false),
            deletions: Arc::clone(&deletions),
        };
        fleet.add_controller(
            NAME,
            move |cluster| {
                let lists = cluster.hub().informer::<WhiteList>();
                let deployments = cluster.factory().informer::<Deployment>();
                let hub_lists = whitelists.clone();
                cluster
                    .controller(NAME, &lists)
                    .group_by_namespace()
                    .generation_changes_only()
                    .watches(&deployments, move |deployment: &Deployment| {
                        policed_namespace(&hub_lists, deployment)
                    })
            },
            reconciler,
        );
        fleet.attach(&mut manager);
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(manager.run(async move {
            let _ = stopped.await;
        }));
        FleetPolicy {
            fleet,
            deletions,
            stop,
            task,
        }
    }

    /// The member clusters engaged now.
    pub fn clusters(&self) -> Vec<String> {
        self.fleet.clusters()
    }

    /// How the engaged member `cluster` is doing (`None` when it is not engaged).
    pub fn state(&self, cluster: &str) -> Option<ClusterState> {
        self.fleet.cluster(cluster).map(|c| c.state())
    }

    /// How many Deployments the fleet deleted in `cluster`.
    pub fn deletions(&self, cluster: &str) -> usize {
        let deletions = self.deletions.lock();
        deletions.iter().filter(|(c, _)| c == cluster).count()
    }

    /// Runs until `shutdown`, then stops.
    ///
    /// # Errors
    /// The manager failed.
    pub async fn run_until(self, shutdown: impl Future<Output = ()>) -> anyhow::Result<()> {
        shutdown.await;
        self.shutdown().await
    }

    /// Stops the manager and waits for it (every member disengaged).
    ///
    /// # Errors
    /// The manager failed.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        let _ = self.stop.send(());
        self.task.await??;
        Ok(())
    }
}
