//! The replicaset controller: keeps `spec.replicas` active Pods for every ReplicaSet and reports
//! them in its status.
//!
//! Mirrors `pkg/controller/replicaset/replica_set.go` and `replica_set_utils.go` (v1.36).
//!
//! # One sync
//! 1. Read the ReplicaSet from the cache; gone: forget its expectations.
//! 2. Claim the active Pods it controls and the namespace's orphans, found through the Pod
//!    informer's controller index (`pod_index.rs`): adopt matching orphans, release strays (see
//!    `controller_ref.rs`).
//! 3. Only if the [expectations](crate::workload::expectations) of earlier creates and deletes are met:
//!    create the missing Pods (in slow-start batches 1, 2, 4, ...) or delete the extras, the
//!    least valuable first (`pods::pods_to_delete`).
//! 4. Write `status` (`replicas`, `fullyLabeledReplicas`, `readyReplicas`,
//!    `availableReplicas`, `terminatingReplicas`, `observedGeneration`, a `ReplicaFailure`
//!    condition after a failed create or delete) through `/status` when it changed.
//!
//! Every Pod created or deleted is recorded as a core/v1 Event on the ReplicaSet from
//! `replicaset-controller`, as `controller_utils.go`'s `RealPodControl` does:
//! `SuccessfulCreate` ("Created pod: web-abc-xyz"), `SuccessfulDelete` ("Deleted pod: ..."),
//! and the Warnings `FailedCreate` ("Error creating: `<API` message>") and `FailedDelete`.

use std::{sync::Arc, time::Duration};

use futures_util::future::join_all;
use k8s_openapi::api::{
    apps::v1::{ReplicaSet, ReplicaSetStatus},
    core::v1::Pod,
};
use k8s_openapi::jiff::Timestamp;
use kube_core::Selector;
use kubegen_cache::{DeletedObject, HandlerFns, Lister};
use kubegen_client::{
    Client, CreateOptions, DeleteOptions, GetOptions, ResourceClient, UpdateOptions,
};
use kubegen_runtime::EventType;
use kubegen_workqueue::RateLimitingQueue;

use super::informers::Informers;
use crate::workload::events::EventSink;
use crate::workload::meta::{
    controller_of, controller_ref, describe, fetch_latest, key_of, selector_of, selects, split_key,
};
use crate::workload::pod_index::{self, Orphans};
use crate::workload::shared::{FIELD_MANAGER, api_message, namespace_terminating, register};
use crate::workload::versioned::Field;
use crate::workload::{expectations::Expectations, pods};
use crate::{Error, Result, error::request};

mod status;

use status::{calculate_status, same_counts};

/// Most Pods created or deleted by one sync (`BurstReplicas`).
const BURST_REPLICAS: usize = 500;

/// The ReplicaSet controller; cheap to clone.
#[derive(Clone)]
pub(crate) struct ReplicaSetController {
    inner: Arc<Inner>,
}

struct Inner {
    client: Client,
    replica_sets: Lister<ReplicaSet>,
    pods: Lister<Pod>,
    queue: RateLimitingQueue<String>,
    expectations: Expectations,
    events: EventSink,
}

impl ReplicaSetController {
    /// Builds the controller and registers its event handlers on the informers.
    pub(crate) fn new(client: Client, informers: &Informers) -> Result<Self> {
        let inner = Arc::new(Inner {
            events: EventSink::new(client.clone(), "replicaset-controller"),
            client,
            replica_sets: informers.replica_sets.lister(),
            pods: informers.pods.lister(),
            queue: crate::worker::queue("replicaset"),
            expectations: Expectations::default(),
        });
        let (a, u, d) = (inner.clone(), inner.clone(), inner.clone());
        let rs_handler = HandlerFns::new()
            .on_add(move |rs: &Arc<ReplicaSet>, _| a.queue.add(key_of(rs.as_ref())))
            .on_update(move |_, rs: &Arc<ReplicaSet>| u.queue.add(key_of(rs.as_ref())))
            .on_delete(move |gone: &DeletedObject<ReplicaSet>| {
                let key = key_of(gone.object().as_ref());
                d.expectations.delete(&key);
                d.queue.add(key);
            });
        let (a, u, d) = (inner.clone(), inner.clone(), inner.clone());
        let pod_handler = HandlerFns::new()
            .on_add(move |pod: &Arc<Pod>, _| a.add_pod(pod))
            .on_update(move |old: &Arc<Pod>, new: &Arc<Pod>| u.update_pod(old, new))
            .on_delete(move |gone: &DeletedObject<Pod>| d.delete_pod(gone.object()));
        register(&informers.replica_sets, rs_handler)?;
        register(&informers.pods, pod_handler)?;
        pod_index::add_to(&informers.pods)?;
        Ok(Self { inner })
    }

    /// The controller's workqueue.
    pub(crate) fn queue(&self) -> RateLimitingQueue<String> {
        self.inner.queue.clone()
    }

    /// Syncs the ReplicaSet `key` (`syncReplicaSet`).
    pub(crate) async fn sync(&self, key: &str) -> Result<()> {
        self.inner.sync(key).await
    }
}

impl Inner {
    /// The ReplicaSet a controller reference names, if cached with the same UID
    /// (`resolveControllerRef`).
    fn resolve(&self, namespace: &str, pod: &Pod) -> Option<Arc<ReplicaSet>> {
        let r = controller_of(pod)?;
        if r.kind != "ReplicaSet" {
            return None;
        }
        self.replica_sets
            .get(Some(namespace), &r.name)
            .filter(|rs| rs.metadata.uid.as_deref() == Some(r.uid.as_str()))
    }

    /// ReplicaSets whose selector matches an orphan Pod (`getPodReplicaSets`).
    fn selecting(&self, pod: &Pod) -> Vec<Arc<ReplicaSet>> {
        let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
        self.replica_sets
            .namespaced(namespace)
            .list(&Selector::default())
            .into_iter()
            .filter(|rs| {
                let selector = rs.spec.value().map(|s| &s.selector);
                let selector = selector_of(rs.as_ref(), selector).ok().flatten();
                selects(selector.as_ref(), pod.metadata.labels.as_ref())
            })
            .collect()
    }

    fn add_pod(&self, pod: &Arc<Pod>) {
        if pod.metadata.deletion_timestamp.is_some() {
            // A restarted controller sees Pods already being deleted as adds.
            return self.delete_pod(pod);
        }
        let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
        if controller_of(pod.as_ref()).is_some() {
            if let Some(rs) = self.resolve(namespace, pod) {
                let key = key_of(rs.as_ref());
                self.expectations.creation_observed(&key);
                self.queue.add(key);
            }
            return;
        }
        for rs in self.selecting(pod) {
            self.queue.add(key_of(rs.as_ref()));
        }
    }

    fn update_pod(&self, old: &Arc<Pod>, new: &Arc<Pod>) {
        if old.metadata.resource_version == new.metadata.resource_version {
            return; // a resync: nothing changed
        }
        let labels_changed = old.metadata.labels != new.metadata.labels;
        if new.metadata.deletion_timestamp.is_some() {
            self.delete_pod(new);
            if labels_changed {
                self.delete_pod(old);
            }
            return;
        }
        let namespace = new.metadata.namespace.as_deref().unwrap_or_default();
        let (old_ref, new_ref) = (controller_of(old.as_ref()), controller_of(new.as_ref()));
        let ref_changed = old_ref != new_ref;
        if ref_changed && let Some(rs) = self.resolve(namespace, old) {
            self.queue.add(key_of(rs.as_ref()));
        }
        if new_ref.is_some() {
            if let Some(rs) = self.resolve(namespace, new) {
                self.queue.add(key_of(rs.as_ref()));
            }
            return;
        }
        if labels_changed || ref_changed {
            for rs in self.selecting(new) {
                self.queue.add(key_of(rs.as_ref()));
            }
        }
    }

    fn delete_pod(&self, pod: &Arc<Pod>) {
        let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
        if let Some(rs) = self.resolve(namespace, pod) {
            let key = key_of(rs.as_ref());
            self.expectations
                .deletion_observed(&key, &key_of(pod.as_ref()));
            self.queue.add(key);
        }
    }

    async fn sync(&self, key: &str) -> Result<()> {
        let (namespace, name) = split_key(key);
        let Some(rs) = self.replica_sets.get(Some(namespace), name) else {
            self.expectations.delete(key);
            return Ok(());
        };
        let needs_sync = self.expectations.satisfied(key);
        let spec = rs.spec.value().cloned().unwrap_or_default();
        let selector = selector_of(rs.as_ref(), Some(&spec.selector))?;
        let all = pod_index::pods_of(&self.pods, rs.as_ref(), Orphans::Included);
        let active: Vec<_> = all.iter().filter(|p| pods::is_active(p)).cloned().collect();
        let client = self.client.clone();
        let fresh = || fetch_latest(&self.client, rs.as_ref());
        let claimed = crate::workload::controller_ref::claim(
            &client,
            rs.as_ref(),
            selector.as_ref(),
            active,
            fresh,
        )
        .await?;
        let rs_uid = rs.metadata.uid.as_deref();
        let terminating = all
            .iter()
            .filter(|p| pods::is_terminating(p))
            .filter(|p| controller_of(p.as_ref()).is_some_and(|r| Some(r.uid.as_str()) == rs_uid))
            .filter(|p| selects(selector.as_ref(), p.metadata.labels.as_ref()))
            .count();
        let manage_error = match needs_sync && rs.metadata.deletion_timestamp.is_none() {
            true => self.manage_replicas(&claimed, &rs, key).await.err(),
            false => None,
        };
        let now = Timestamp::now();
        let status = calculate_status(&rs, &claimed, terminating, manage_error.as_ref(), now);
        let updated = self.update_status(&rs, status).await?;
        let min_ready = spec.min_ready_seconds.unwrap_or(0);
        let st = updated.status.clone().unwrap_or_default();
        let replicas = spec.replicas.unwrap_or(1);
        if manage_error.is_none()
            && min_ready > 0
            && st.ready_replicas.unwrap_or(0) == replicas
            && st.available_replicas.unwrap_or(0) != replicas
        {
            let after = Duration::from_secs(u64::try_from(min_ready).unwrap_or(0));
            self.queue.add_after(key.to_owned(), after);
        }
        manage_error.map_or(Ok(()), Err)
    }

    fn rs_client(&self, namespace: &str) -> ResourceClient<ReplicaSet> {
        ResourceClient::namespaced(self.client.clone(), namespace)
    }

    /// Creates or deletes Pods toward `spec.replicas` (`manageReplicas`).
    async fn manage_replicas(&self, active: &[Arc<Pod>], rs: &ReplicaSet, key: &str) -> Result<()> {
        let want =
            usize::try_from(rs.spec.value().and_then(|s| s.replicas).unwrap_or(1)).unwrap_or(0);
        if active.len() < want {
            let diff = (want - active.len()).min(BURST_REPLICAS);
            self.expectations.expect_creations(key, diff);
            let (created, result) = self.create_pods(rs, diff).await;
            for _ in created..diff {
                self.expectations.creation_observed(key);
            }
            return result;
        }
        if active.len() > want {
            let diff = (active.len() - want).min(BURST_REPLICAS);
            let related = self.indirectly_related_pods(rs);
            let doomed = pods::pods_to_delete(active.to_vec(), &related, diff, Timestamp::now());
            self.expectations
                .expect_deletions(key, doomed.iter().map(|p| key_of(p.as_ref())).collect());
            return self.delete_pods(rs, key, &doomed).await;
        }
        Ok(())
    }

    /// Creates `count` Pods in slow-start batches of 1, 2, 4, ...; stops after the first batch
    /// with a failure. Returns how many were created (`slowStartBatch`).
    async fn create_pods(&self, rs: &ReplicaSet, count: usize) -> (usize, Result<()>) {
        let namespace = rs.metadata.namespace.as_deref().unwrap_or_default();
        let name = rs.metadata.name.as_deref().unwrap_or_default();
        let template = rs
            .spec
            .value()
            .and_then(|s| s.template.clone())
            .unwrap_or_default();
        if template
            .metadata
            .as_ref()
            .and_then(|m| m.labels.as_ref())
            .is_none_or(|l| l.is_empty())
        {
            let reason = "unable to create pods, no labels".to_string();
            return (
                0,
                Err(Error::InvalidObject {
                    object: describe(rs),
                    reason,
                }),
            );
        }
        let pod = pods::pod_from_template(&template, name, controller_ref(rs));
        let pods: ResourceClient<Pod> = ResourceClient::namespaced(self.client.clone(), namespace);
        let options = CreateOptions::default().field_manager(FIELD_MANAGER);
        let (mut created, mut batch) = (0, 1.min(count));
        while batch > 0 {
            let results = join_all((0..batch).map(|_| pods.create(&pod, &options))).await;
            let mut failures = Vec::new();
            for result in results {
                match result {
                    Ok(pod) => {
                        let name = pod.metadata.name.as_deref().unwrap_or_default();
                        let message = format!("Created pod: {name}");
                        self.events
                            .record(rs, EventType::Normal, "SuccessfulCreate", message);
                    }
                    Err(e) if namespace_terminating(&e) => failures.push(e),
                    Err(e) => {
                        let message = format!("Error creating: {}", api_message(&e));
                        self.events
                            .record(rs, EventType::Warning, "FailedCreate", message);
                        failures.push(e);
                    }
                }
            }
            created += batch - failures.len();
            if let Some(first) = failures.into_iter().next() {
                return (
                    created,
                    Err(request(format!("create Pod for {}", describe(rs)))(first)),
                );
            }
            batch = (2 * batch).min(count - created);
        }
        (created, Ok(()))
    }

    /// Deletes `doomed` in parallel; a failed deletion is no longer expected (`DeletePod`).
    async fn delete_pods(&self, rs: &ReplicaSet, key: &str, doomed: &[Arc<Pod>]) -> Result<()> {
        let namespace = rs.metadata.namespace.as_deref().unwrap_or_default();
        let pods: ResourceClient<Pod> = ResourceClient::namespaced(self.client.clone(), namespace);
        let deletes = doomed.iter().map(|pod| {
            let name = pod.metadata.name.clone().unwrap_or_default();
            let pods = pods.clone();
            async move { (pod, pods.delete(&name, &DeleteOptions::default()).await) }
        });
        let mut first_error = None;
        for (pod, result) in join_all(deletes).await {
            let name = pod.metadata.name.as_deref().unwrap_or_default();
            let Err(e) = result else {
                let message = format!("Deleted pod: {name}");
                self.events
                    .record(rs, EventType::Normal, "SuccessfulDelete", message);
                continue;
            };
            self.expectations
                .deletion_observed(key, &key_of(pod.as_ref()));
            if !e.is_not_found() {
                let message = format!("Error deleting: {}", api_message(&e));
                self.events
                    .record(rs, EventType::Warning, "FailedDelete", message);
                let action = format!("delete Pod {}", key_of(pod.as_ref()));
                first_error.get_or_insert(request(action)(e));
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Pods of every ReplicaSet controlled by the same owner as `rs`, for ranking
    /// (`getIndirectlyRelatedPods`).
    fn indirectly_related_pods(&self, rs: &ReplicaSet) -> Vec<Arc<Pod>> {
        let Some(owner) = controller_of(rs) else {
            return Vec::new();
        };
        let namespace = rs.metadata.namespace.as_deref().unwrap_or_default();
        let mut seen = std::collections::HashSet::new();
        let mut related = Vec::new();
        for sibling in self
            .replica_sets
            .namespaced(namespace)
            .list(&Selector::default())
        {
            if controller_of(sibling.as_ref()).is_none_or(|r| r.uid != owner.uid) {
                continue;
            }
            let selector = sibling.spec.value().map(|s| &s.selector);
            let Ok(Some(selector)) = selector_of(sibling.as_ref(), selector) else {
                continue;
            };
            for pod in self.pods.namespaced(namespace).list(&selector) {
                if seen.insert(pod.metadata.uid.clone()) {
                    related.push(pod);
                }
            }
        }
        related
    }

    /// Writes `status` unless nothing changed; one retry after a conflict with a fresh GET
    /// (`updateReplicaSetStatus`, `statusUpdateRetries = 1`).
    async fn update_status(
        &self,
        rs: &Arc<ReplicaSet>,
        mut status: ReplicaSetStatus,
    ) -> Result<Arc<ReplicaSet>> {
        let old = rs.status.clone().unwrap_or_default();
        let generation = rs.metadata.generation;
        if same_counts(&old, &status)
            && generation == old.observed_generation
            && old.conditions == status.conditions
        {
            return Ok(rs.clone());
        }
        status.observed_generation = generation;
        let namespace = rs.metadata.namespace.as_deref().unwrap_or_default();
        let client = self.rs_client(namespace);
        let options = UpdateOptions::default().field_manager(FIELD_MANAGER);
        let action = || format!("update status of {}", describe(rs.as_ref()));
        let mut next = (**rs).clone();
        next.status = Some(status.clone());
        if let Ok(updated) = client.update_status(&next, &options).await {
            return Ok(Arc::new(updated));
        }
        let name = rs.metadata.name.as_deref().unwrap_or_default();
        let mut next = client
            .get(name, &GetOptions::default())
            .await
            .map_err(request(action()))?;
        next.status = Some(status);
        client
            .update_status(&next, &options)
            .await
            .map(Arc::new)
            .map_err(request(action()))
    }
}
