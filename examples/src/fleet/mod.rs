//! `fleet-policy`: one policy, every member cluster. A policy is a ConfigMap in the hub cluster
//! labelled `fleet.example.com/policy=true`; the controller writes a copy of it into every
//! member cluster the hub's kubeconfig Secrets name (Cluster API's `<cluster>-kubeconfig`, key
//! `value`), and puts it back when someone edits the copy in a member. The seed example of
//! kubegen-runtime's `multicluster` fleet: a hub object reconciled in each member, members
//! engaged and disengaged as their Secrets come and go, rotated credentials re-engaging a
//! member, a member that stops answering isolated from the others.
//!
//! # How it is wired
//! - Provider: [`KubeconfigSecrets`] over the hub's Cluster API Secrets in one namespace.
//! - Controller `fleet-policy`, built per member: its primary is the *hub's* informer of
//!   ConfigMaps (a policy enqueues its key in every member's queue), and it watches the
//!   *member's* ConfigMaps, so an edited or deleted copy enqueues its policy again.
//! - Reconcile: read the member's copy from the member's cache, create or update it through the
//!   member's client. The request carries the member ([`ClusterContext::cluster`]).
//!
//! A policy's copies stay in the members when the policy is deleted from the hub (a finalizer on
//! the policy would remove them; left out to keep the example about the fleet).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubegen_cache::ObjectKey;
use kubegen_client::{Client, CreateOptions, UpdateOptions};
use kubegen_runtime::multicluster::{
    ClusterContext, Fleet, FleetOptions, FleetReconciler, KubeconfigSecrets, SecretOptions,
};
use kubegen_runtime::{Action, Manager, ManagerOptions};
use parking_lot::Mutex;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The label that makes a hub ConfigMap a policy.
pub const POLICY_LABEL: &str = "fleet.example.com/policy";
/// The label on a member's copy.
pub const COPY_LABEL: &str = "fleet.example.com/copy-of";

/// Where the example looks.
#[derive(Clone, Debug)]
pub struct FleetPolicyOptions {
    /// The hub namespace of the members' kubeconfig Secrets.
    pub secrets_namespace: String,
    /// The namespace of the policies (in the hub) and of their copies (in every member).
    pub namespace: String,
    /// How often each member is probed.
    pub probe_period: Duration,
}

impl Default for FleetPolicyOptions {
    fn default() -> Self {
        FleetPolicyOptions {
            secrets_namespace: "default".to_owned(),
            namespace: "default".to_owned(),
            probe_period: Duration::from_secs(5),
        }
    }
}

/// Every write of a copy: (member, policy).
type Writes = Arc<Mutex<Vec<(String, String)>>>;

/// Writes each policy's copy into the member of the request.
struct Enforce {
    writes: Writes,
}

impl FleetReconciler<ConfigMap> for Enforce {
    type Error = kubegen_runtime::Error;

    async fn reconcile(
        &self,
        policy: Arc<ConfigMap>,
        request: &ClusterContext,
    ) -> Result<Action, Self::Error> {
        let (namespace, name) = (request.key().namespace(), request.key().name());
        let member = request.cluster().cached_client();
        let wanted = copy_of(&policy, namespace.unwrap_or("default"), name);
        let current = member.get::<ConfigMap>(namespace, name).await?;
        let writer = member.writer::<ConfigMap>(namespace);
        let failed = |source| kubegen_runtime::Error::ClusterUnusable {
            cluster: request.cluster_name().to_owned(),
            reason: format!("writing the copy of {name}: {source}"),
        };
        match current {
            None => {
                writer
                    .create(&wanted, &CreateOptions::default())
                    .await
                    .map_err(failed)?;
            }
            Some(current) if current.data != wanted.data || !is_copy(&current) => {
                let mut updated = (*current).clone();
                updated.data = wanted.data;
                updated.metadata.labels = wanted.metadata.labels;
                writer
                    .update(&updated, &UpdateOptions::default())
                    .await
                    .map_err(failed)?;
            }
            Some(_) => return Ok(Action::Done),
        }
        tracing::info!(
            cluster = request.cluster_name(),
            policy = name,
            "policy enforced"
        );
        self.writes
            .lock()
            .push((request.cluster_name().to_owned(), name.to_owned()));
        Ok(Action::Done)
    }
}

/// The copy of `policy` a member should hold.
fn copy_of(policy: &ConfigMap, namespace: &str, name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(namespace.to_owned()),
            labels: Some(BTreeMap::from([(COPY_LABEL.to_owned(), name.to_owned())])),
            ..ObjectMeta::default()
        },
        data: policy.data.clone(),
        ..ConfigMap::default()
    }
}

fn is_copy(config_map: &ConfigMap) -> bool {
    config_map
        .metadata
        .labels
        .as_ref()
        .is_some_and(|labels| labels.contains_key(COPY_LABEL))
}

/// The policy a member's copy stands for.
fn policy_key(copy: &ConfigMap) -> Vec<ObjectKey> {
    let labels = copy.metadata.labels.as_ref();
    let policy = labels.and_then(|labels| labels.get(COPY_LABEL));
    policy
        .map(|policy| ObjectKey::new(copy.metadata.namespace.as_deref(), policy))
        .into_iter()
        .collect()
}

/// The running example: a manager on the hub running the fleet.
pub struct FleetPolicy {
    fleet: Fleet,
    writes: Writes,
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
    /// Starts the controller on the hub reached by `hub`.
    pub fn start(hub: Client, options: &FleetPolicyOptions) -> FleetPolicy {
        let manager_options = ManagerOptions::default()
            .factory(kubegen_cache::FactoryOptions::default().namespace(options.namespace.clone()))
            .shutdown_timeout(Duration::from_secs(5));
        let mut manager = Manager::new(hub.clone(), manager_options);
        let fleet = Fleet::new(
            &manager,
            FleetOptions::default().probe_period(options.probe_period),
        );
        let secrets = SecretOptions::cluster_api(&options.secrets_namespace);
        fleet.add_provider(KubeconfigSecrets::new(hub, secrets));
        let writes = Writes::default();
        fleet.add_controller(
            "fleet-policy",
            |cluster| {
                let policies = cluster.hub().informer::<ConfigMap>();
                let copies = cluster.factory().informer::<ConfigMap>();
                cluster
                    .controller("fleet-policy", &policies)
                    .watches(&copies, policy_key)
            },
            Policies {
                enforce: Enforce {
                    writes: Arc::clone(&writes),
                },
            },
        );
        fleet.attach(&mut manager);
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(manager.run(async move {
            let _ = stopped.await;
        }));
        FleetPolicy {
            fleet,
            writes,
            stop,
            task,
        }
    }

    /// The member clusters engaged now.
    pub fn clusters(&self) -> Vec<String> {
        self.fleet.clusters()
    }

    /// How many times a copy of `policy` was written into `cluster`.
    pub fn writes(&self, cluster: &str, policy: &str) -> usize {
        let writes = self.writes.lock();
        writes
            .iter()
            .filter(|(c, p)| c == cluster && p == policy)
            .count()
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

/// Only ConfigMaps labelled as policies are policies (the hub informer sees all ConfigMaps of
/// the namespace, the copies' informers too).
struct Policies {
    enforce: Enforce,
}

impl FleetReconciler<ConfigMap> for Policies {
    type Error = kubegen_runtime::Error;

    async fn reconcile(
        &self,
        object: Arc<ConfigMap>,
        request: &ClusterContext,
    ) -> Result<Action, Self::Error> {
        let labels = object.metadata.labels.as_ref();
        let value = labels.and_then(|labels| labels.get(POLICY_LABEL));
        if value.map(String::as_str) != Some("true") {
            return Ok(Action::Done);
        }
        self.enforce.reconcile(object, request).await
    }
}

/// A policy named `name` in `namespace` with `data`.
pub fn policy(namespace: &str, name: &str, data: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(namespace.to_owned()),
            labels: Some(BTreeMap::from([(
                POLICY_LABEL.to_owned(),
                "true".to_owned(),
            )])),
            ..ObjectMeta::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        ),
        ..ConfigMap::default()
    }
}
