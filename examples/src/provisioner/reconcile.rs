//! One reconcile of one Cluster: make the (simulated) cloud hold it, and once it is ready,
//! write its `Kubeconfig`; when the Cluster is gone, delete both.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kubegen_api::clusterprovisioner::v1alpha1::{
    Cluster, ClusterPhase, ClusterStatus, Kubeconfig, KubeconfigSpec,
};
use kubegen_client::{CreateOptions, DeleteOptions, UpdateOptions};
use kubegen_clientset::clusterprovisioner::v1alpha1::{ClusterClient, KubeconfigClient};
use kubegen_listers::clusterprovisioner::v1alpha1::{ClusterLister, KubeconfigLister};

use super::cloud::{Cloud, CloudError, Progress};

/// What the worker does with the key after a successful reconcile.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing more to do until the next change.
    Done,
    /// Look again after this long (the cluster is still being created): `add_after`, not a
    /// failure, so the backoff is not raised.
    RequeueAfter(Duration),
}

/// Why a reconcile failed; the worker retries it with backoff (`add_rate_limited`).
#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    /// The cloud call failed.
    #[error(transparent)]
    CloudFailed(#[from] CloudError),
    /// Writing the Cluster's status failed (a conflict: the Cluster changed meanwhile).
    #[error("writing the status of Cluster {name} failed")]
    StatusWriteFailed {
        /// The Cluster.
        name: String,
        /// The server's answer.
        #[source]
        source: kubegen_client::Error,
    },
    /// Writing or deleting the Kubeconfig failed.
    #[error("{action} Kubeconfig {name} failed")]
    KubeconfigWriteFailed {
        /// `creating`, `updating` or `deleting`.
        action: &'static str,
        /// The Kubeconfig.
        name: String,
        /// The server's answer.
        #[source]
        source: kubegen_client::Error,
    },
}

/// Everything a reconcile reads and writes.
pub(super) struct Reconciler {
    pub(super) clusters: ClusterLister,
    pub(super) kubeconfigs: KubeconfigLister,
    pub(super) cluster_client: ClusterClient,
    pub(super) kubeconfig_client: KubeconfigClient,
    pub(super) cloud: Cloud,
}

impl Reconciler {
    /// Reconciles Cluster `name` (cluster-scoped: its key is its name).
    pub(super) async fn reconcile(&self, name: &str) -> Result<Outcome, ReconcileError> {
        let Some(cluster) = self.clusters.get(name) else {
            return self.cluster_deleted(name).await;
        };
        let progress = self.cloud.ensure_cluster(name, &cluster.spec)?;
        match progress {
            Progress::Creating { ready_in } => {
                self.set_phase(&cluster, ClusterPhase::Provisioning).await?;
                tracing::info!(
                    cluster = name,
                    ?ready_in,
                    "creating; looking again later (requeue-after)"
                );
                Ok(Outcome::RequeueAfter(ready_in))
            }
            Progress::Ready { server } => {
                self.write_kubeconfig(&cluster, server).await?;
                self.set_phase(&cluster, ClusterPhase::Ready).await?;
                Ok(Outcome::Done)
            }
        }
    }

    /// Writes `status.phase` unless the cache shows it already. `Cluster` has no status
    /// subresource (`+genclient:noStatus`), so this is a plain update of the whole object, and
    /// the server bumps `metadata.generation` for it: which is why the Cluster handler ignores
    /// updates that leave the spec alone, and why this status has no `observedGeneration`.
    async fn set_phase(
        &self,
        cluster: &Cluster,
        phase: ClusterPhase,
    ) -> Result<(), ReconcileError> {
        let current = cluster.status.as_ref().and_then(|s| s.phase.as_ref());
        if current == Some(&phase) {
            return Ok(());
        }
        let mut updated = cluster.clone();
        updated
            .status
            .get_or_insert_with(ClusterStatus::default)
            .phase = Some(phase);
        match self
            .cluster_client
            .update(&updated, &UpdateOptions::default())
            .await
        {
            Ok(_) => Ok(()),
            Err(source) => Err(ReconcileError::StatusWriteFailed {
                name: cluster.metadata.name.clone().unwrap_or_default(),
                source,
            }),
        }
    }

    /// Creates or updates the Kubeconfig named after `cluster`, unless the cache shows it
    /// already says `server`.
    async fn write_kubeconfig(
        &self,
        cluster: &Cluster,
        server: String,
    ) -> Result<(), ReconcileError> {
        let name = cluster.metadata.name.clone().unwrap_or_default();
        let spec = KubeconfigSpec {
            cluster_name: name.clone(),
            server,
            secret_name: Some(format!("{name}-kubeconfig")),
        };
        let failed = |action, source| ReconcileError::KubeconfigWriteFailed {
            action,
            name: name.clone(),
            source,
        };
        match self.kubeconfigs.get(&name) {
            Some(current) if current.spec == spec => return Ok(()),
            Some(current) => {
                let mut updated = Kubeconfig::clone(&current);
                updated.spec = spec;
                self.kubeconfig_client
                    .update(&updated, &UpdateOptions::default())
                    .await
                    .map_err(|e| failed("updating", e))?;
            }
            None => {
                let kubeconfig = Kubeconfig {
                    metadata: ObjectMeta {
                        name: Some(name.clone()),
                        owner_references: owner_reference(cluster).map(|o| vec![o]),
                        ..ObjectMeta::default()
                    },
                    spec,
                };
                self.kubeconfig_client
                    .create(&kubeconfig, &CreateOptions::default())
                    .await
                    .map_err(|e| failed("creating", e))?;
            }
        }
        tracing::info!(cluster = name, "ready: Kubeconfig written");
        Ok(())
    }

    /// The Cluster object is gone: delete the cloud cluster and its Kubeconfig. The Kubeconfig's
    /// ownerReference would let a garbage collector do the latter; deleting it here also works
    /// where none runs.
    async fn cluster_deleted(&self, name: &str) -> Result<Outcome, ReconcileError> {
        if self.cloud.has_cluster(name) {
            self.cloud.delete_cluster(name);
            tracing::info!(cluster = name, "deleted from the cloud");
        }
        if self.kubeconfigs.get(name).is_some() {
            match self
                .kubeconfig_client
                .delete(name, &DeleteOptions::default())
                .await
            {
                Ok(()) => {}
                Err(error) if error.is_not_found() => {}
                Err(source) => {
                    return Err(ReconcileError::KubeconfigWriteFailed {
                        action: "deleting",
                        name: name.to_owned(),
                        source,
                    });
                }
            }
        }
        Ok(Outcome::Done)
    }
}

/// The controller ownerReference to `cluster` (`None` if it has no uid yet, which a cached
/// object always has).
fn owner_reference(cluster: &Cluster) -> Option<OwnerReference> {
    use k8s_openapi::Resource as _;
    Some(OwnerReference {
        api_version: Cluster::API_VERSION.to_owned(),
        kind: Cluster::KIND.to_owned(),
        name: cluster.metadata.name.clone()?,
        uid: cluster.metadata.uid.clone()?,
        controller: Some(true),
        block_owner_deletion: None,
    })
}
