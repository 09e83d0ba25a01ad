//! The deployment controller: one ReplicaSet per pod template, rolled out by RollingUpdate or
//! Recreate, scaled proportionally, with revisions and status conditions.
//!
//! Mirrors `pkg/controller/deployment/deployment_controller.go` (this file: event handlers and
//! the sync dispatch), `sync.go` (`sync.rs`), `rolling.go` (`rolling.rs`), `recreate.go`
//! (`recreate.rs`), `progress.go` (`progress.rs`) and `util/deployment_util.go` (`util.rs`),
//! v1.36.
//!
//! # Faithful to the stale copy
//! Like the real controller, a sync works on the Deployment as the cache had it and does not
//! refresh it after its own writes: a sync that writes the Deployment's status twice gets a
//! 409 Conflict on the second write and is retried with the fresh object. This is why a new
//! Deployment's status is written in two steps on a real cluster, and we reproduce it.
//!
//! # Events
//! As the real controller: `ScalingReplicaSet` ("Scaled up replica set web-abc from 0 to 1"),
//! `ReplicaSetCreateError` and `SelectingAll`, core/v1 Events from `deployment-controller`.
//!
//! # Differences from kube-controller-manager
//! - The deprecated `extensions/v1beta1` rollback annotation is ignored (apps/v1 has no
//!   `rollbackTo`; `kubectl rollout undo` patches the template client-side).
//! - `pod-template-hash` values differ (see `crate::workload::hash`).

mod progress;
mod recreate;
mod rolling;
mod sync;
mod util;

use std::{collections::HashMap, sync::Arc};

use k8s_openapi::api::{
    apps::v1::{Deployment, ReplicaSet},
    core::v1::Pod,
};
use kube_core::Selector;
use kubegen_cache::{DeletedObject, HandlerFns, Lister};
use kubegen_client::Client;
use kubegen_runtime::EventType;
use kubegen_workqueue::RateLimitingQueue;

use super::informers::Informers;
use crate::Result;
use crate::workload::events::EventSink;
use crate::workload::meta::{controller_of, fetch_latest, key_of, selector_of, selects, split_key};
use crate::workload::pod_index::{self, Orphans};
use crate::workload::shared::register;
use crate::workload::versioned::Field;

/// The Deployment controller; cheap to clone.
#[derive(Clone)]
pub(crate) struct DeploymentController {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    client: Client,
    deployments: Lister<Deployment>,
    replica_sets: Lister<ReplicaSet>,
    pods: Lister<Pod>,
    queue: RateLimitingQueue<String>,
    events: EventSink,
}

impl DeploymentController {
    /// Builds the controller and registers its event handlers on the informers.
    pub(crate) fn new(client: Client, informers: &Informers) -> Result<Self> {
        let inner = Arc::new(Inner {
            events: EventSink::new(client.clone(), "deployment-controller"),
            client,
            deployments: informers.deployments.lister(),
            replica_sets: informers.replica_sets.lister(),
            pods: informers.pods.lister(),
            queue: crate::worker::queue("deployment"),
        });
        let (a, u, d) = (inner.clone(), inner.clone(), inner.clone());
        register(
            &informers.deployments,
            HandlerFns::new()
                .on_add(move |o: &Arc<Deployment>, _| a.queue.add(key_of(o.as_ref())))
                .on_update(move |_, o: &Arc<Deployment>| u.queue.add(key_of(o.as_ref())))
                .on_delete(move |o: &DeletedObject<Deployment>| {
                    d.queue.add(key_of(o.object().as_ref()));
                }),
        )?;
        let (a, u, d) = (inner.clone(), inner.clone(), inner.clone());
        register(
            &informers.replica_sets,
            HandlerFns::new()
                .on_add(move |rs: &Arc<ReplicaSet>, _| a.add_rs(rs))
                .on_update(move |old: &Arc<ReplicaSet>, new: &Arc<ReplicaSet>| {
                    u.update_rs(old, new)
                })
                .on_delete(move |rs: &DeletedObject<ReplicaSet>| d.enqueue_owner(rs.object())),
        )?;
        let d = inner.clone();
        register(
            &informers.pods,
            HandlerFns::new().on_delete(move |pod: &DeletedObject<Pod>| d.delete_pod(pod.object())),
        )?;
        pod_index::add_to(&informers.pods)?;
        Ok(Self { inner })
    }

    /// The controller's workqueue.
    pub(crate) fn queue(&self) -> RateLimitingQueue<String> {
        self.inner.queue.clone()
    }

    /// Syncs the Deployment `key` (`syncDeployment`).
    pub(crate) async fn sync(&self, key: &str) -> Result<()> {
        self.inner.sync(key).await
    }
}

impl Inner {
    /// The Deployment controlling `rs`, if cached with the same UID (`resolveControllerRef`).
    fn owner_of(&self, rs: &ReplicaSet) -> Option<Arc<Deployment>> {
        let r = controller_of(rs)?;
        let namespace = rs.metadata.namespace.as_deref();
        (r.kind == "Deployment")
            .then(|| self.deployments.get(namespace, &r.name))
            .flatten()
            .filter(|d| d.metadata.uid.as_deref() == Some(r.uid.as_str()))
    }

    fn enqueue_owner(&self, rs: &Arc<ReplicaSet>) {
        if let Some(d) = self.owner_of(rs) {
            self.queue.add(key_of(d.as_ref()));
        }
    }

    /// Deployments whose selector matches an orphan ReplicaSet (`getDeploymentsForReplicaSet`).
    fn enqueue_selecting(&self, rs: &ReplicaSet) {
        let namespace = rs.metadata.namespace.as_deref().unwrap_or_default();
        for d in self
            .deployments
            .namespaced(namespace)
            .list(&Selector::default())
        {
            let selector = d.spec.value().map(|s| &s.selector);
            let selector = selector_of(d.as_ref(), selector).ok().flatten();
            if selector.as_ref().is_some_and(|s| !s.selects_all())
                && selects(selector.as_ref(), rs.metadata.labels.as_ref())
            {
                self.queue.add(key_of(d.as_ref()));
            }
        }
    }

    fn add_rs(&self, rs: &Arc<ReplicaSet>) {
        if rs.metadata.deletion_timestamp.is_some() || controller_of(rs.as_ref()).is_some() {
            return self.enqueue_owner(rs);
        }
        self.enqueue_selecting(rs);
    }

    fn update_rs(&self, old: &Arc<ReplicaSet>, new: &Arc<ReplicaSet>) {
        if old.metadata.resource_version == new.metadata.resource_version {
            return;
        }
        let (old_ref, new_ref) = (controller_of(old.as_ref()), controller_of(new.as_ref()));
        let ref_changed = old_ref != new_ref;
        if ref_changed && old_ref.is_some() {
            self.enqueue_owner(old);
        }
        if new_ref.is_some() {
            return self.enqueue_owner(new);
        }
        if ref_changed || old.metadata.labels != new.metadata.labels {
            self.enqueue_selecting(new);
        }
    }

    /// A Recreate Deployment waits for its old Pods to be gone: sync it when its last Pod goes.
    fn delete_pod(&self, pod: &Arc<Pod>) {
        let Some(r) = controller_of(pod.as_ref()).filter(|r| r.kind == "ReplicaSet") else {
            return;
        };
        let namespace = pod.metadata.namespace.as_deref();
        let Some(rs) = self.replica_sets.get(namespace, &r.name) else {
            return;
        };
        let Some(d) = self.owner_of(&rs) else { return };
        if !util::Spec::of(&d).recreate {
            return;
        }
        let rss = self.owned_replica_sets(&d);
        if self.pods_by_rs(&rss).values().all(Vec::is_empty) {
            self.queue.add(key_of(d.as_ref()));
        }
    }

    /// The cached ReplicaSets `d` controls (no adoption: `ListReplicaSets`'s filter).
    fn owned_replica_sets(&self, d: &Deployment) -> Vec<Arc<ReplicaSet>> {
        let namespace = d.metadata.namespace.as_deref().unwrap_or_default();
        self.replica_sets
            .namespaced(namespace)
            .list(&Selector::default())
            .into_iter()
            .filter(|rs| {
                controller_of(rs.as_ref()).is_some_and(|r| Some(&r.uid) == d.metadata.uid.as_ref())
            })
            .collect()
    }

    /// The Pods each ReplicaSet of `rss` controls, by its uid, found through the Pod informer's
    /// controller index (`getPodMapForDeployment`).
    fn pods_by_rs(&self, rss: &[Arc<ReplicaSet>]) -> HashMap<String, Vec<Arc<Pod>>> {
        rss.iter()
            .map(|rs| {
                let uid = rs.metadata.uid.clone().unwrap_or_default();
                (
                    uid,
                    pod_index::pods_of(&self.pods, rs.as_ref(), Orphans::Excluded),
                )
            })
            .collect()
    }

    async fn sync(&self, key: &str) -> Result<()> {
        let (namespace, name) = split_key(key);
        let Some(cached) = self.deployments.get(Some(namespace), name) else {
            return Ok(());
        };
        let mut d = (*cached).clone();
        let selector_spec = d.spec.value().map(|s| s.selector.clone());
        let selector = selector_of(&d, selector_spec.as_ref())?;
        if selector.as_ref().is_none_or(Selector::selects_all) {
            return self.sync_selecting_all(d).await;
        }
        let rss = self.claim_replica_sets(&d, selector.as_ref()).await?;
        let pod_map = self.pods_by_rs(&rss);
        if d.metadata.deletion_timestamp.is_some() {
            return self.sync_status_only(&mut d, rss).await;
        }
        self.check_paused_conditions(&mut d).await?;
        if util::Spec::of(&d).paused {
            return self.sync_scale(&mut d, rss).await;
        }
        if self.is_scaling_event(&mut d, &rss).await? {
            return self.sync_scale(&mut d, rss).await;
        }
        if util::Spec::of(&d).recreate {
            self.rollout_recreate(&mut d, rss, &pod_map).await
        } else {
            self.rollout_rolling(&mut d, rss).await
        }
    }

    /// A Deployment selecting everything is refused; only its observed generation moves.
    async fn sync_selecting_all(&self, mut d: Deployment) -> Result<()> {
        let message = "This deployment is selecting all pods. A non-empty selector is required.";
        self.events
            .record(&d, EventType::Warning, "SelectingAll", message.into());
        let status = d.status.get_or_insert_with(Default::default);
        if status.observed_generation.unwrap_or(0) < d.metadata.generation.unwrap_or(0) {
            status.observed_generation = d.metadata.generation;
            self.write_status(&d).await?;
        }
        Ok(())
    }

    /// The ReplicaSets `d` controls after adoption and release (`getReplicaSetsForDeployment`).
    async fn claim_replica_sets(
        &self,
        d: &Deployment,
        selector: Option<&Selector>,
    ) -> Result<Vec<Arc<ReplicaSet>>> {
        let namespace = d.metadata.namespace.as_deref().unwrap_or_default();
        let all = self
            .replica_sets
            .namespaced(namespace)
            .list(&Selector::default());
        let fresh = || fetch_latest(&self.client, d);
        crate::workload::controller_ref::claim(&self.client, d, selector, all, fresh).await
    }
}
