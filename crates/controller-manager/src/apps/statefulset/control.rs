//! One StatefulSet sync's work on its Pods: create the missing ordinals, replace finished Pods,
//! delete the ordinals scaled away (highest first), roll Pods onto the update revision (highest
//! ordinal first, down to the partition), then write the status.
//!
//! Mirrors `defaultStatefulSetControl` of `pkg/controller/statefulset/stateful_set_control.go`
//! (`UpdateStatefulSet`, `performUpdate`, `updateStatefulSet`, `processReplica`,
//! `processCondemned`, `runForAll`, `slowStartBatch`) and `stateful_set_status_updater.go`.
//!
//! # OrderedReady and Parallel
//! With `OrderedReady` (monotonic) one Pod changes at a time: `db-1` is created only once `db-0`
//! is Running, Ready and available, and scale-down waits for each deletion to finish. With
//! `Parallel` all missing Pods are created at once (in slow-start batches) and all extra ones
//! deleted. Rolling updates are one Pod at a time in both (v1.36's `MaxUnavailableStatefulSet`
//! is beta and off by default, so `maxUnavailable` is not read).

use std::sync::Arc;

use futures_util::future::join_all;
use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetStatus};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kubegen_client::{GetOptions, ResourceClient, UpdateOptions};

use super::history::{History, Revisions};
use super::identity::{
    identity_matches, in_range, new_versioned_pod, ordinal, pod_revision, replicas, spec,
    start_ordinal, storage_matches,
};
use super::pod_control::{PodControl, aggregate};
use super::revision::apply;
use super::status::{
    complete_rolling_update, count_pods, differs, is_created, is_finished, is_pending,
    is_running_and_ready, is_terminating, is_unavailable,
};
use crate::workload::meta::{describe, selector_of};
use crate::workload::shared::{FIELD_MANAGER, go_message};
use crate::{Error, Result, error::request};

/// Most Pods created or deleted at once in a slow-start batch (`MaxBatchSize`).
const MAX_BATCH: usize = 500;

/// Syncs one StatefulSet's Pods and status.
pub(crate) struct Control {
    pub(crate) pods: PodControl,
    pub(crate) history: History,
}

/// What one pass over the Pods decided.
enum Pass {
    /// Go on to the next step.
    Continue,
    /// Stop this sync here (waiting on a Pod, or a write failed).
    Stop(Result<()>),
}

impl Control {
    /// `UpdateStatefulSet`: revisions, Pods, status, then history truncation. Returns the status
    /// written (or that would have been).
    ///
    /// # Errors
    /// The first failed write; the status is still written when it can be.
    pub(crate) async fn update(
        &self,
        set: &StatefulSet,
        pods: &[Arc<Pod>],
        now: Timestamp,
    ) -> Result<StatefulSetStatus> {
        let selector = selector_of(set, Some(&spec(set).selector))?;
        let revisions = self.history.list(set, selector.as_ref());
        let Revisions {
            current,
            update,
            collision_count,
        } = self.history.revisions(set, &revisions).await?;
        let current_name = current.metadata.name.clone().unwrap_or_default();
        let update_name = update.metadata.name.clone().unwrap_or_default();
        let mut status = StatefulSetStatus {
            observed_generation: set.metadata.generation,
            current_revision: Some(current_name.clone()),
            update_revision: Some(update_name.clone()),
            collision_count: Some(collision_count),
            ..StatefulSetStatus::default()
        };
        let outcome = match (apply(set, &current), apply(set, &update)) {
            (Ok(current_set), Ok(update_set)) => {
                let sets = (
                    (&current_set, current_name.as_str()),
                    (&update_set, update_name.as_str()),
                );
                self.update_pods(set, sets, pods, &mut status, now).await
            }
            (Err(e), _) | (_, Err(e)) => Err(e),
        };
        complete_rolling_update(set, &mut status);
        let status_outcome = match differs(set, &status) {
            true => self.write_status(set, &status).await,
            false => Ok(()),
        };
        let truncated = self
            .history
            .truncate(set, pods, &revisions, [&current_name, &update_name])
            .await;
        outcome.and(status_outcome).and(truncated).map(|()| status)
    }

    /// `updateStatefulSet`.
    async fn update_pods(
        &self,
        set: &StatefulSet,
        sets: ((&StatefulSet, &str), (&StatefulSet, &str)),
        pods: &[Arc<Pod>],
        status: &mut StatefulSetStatus,
        now: Timestamp,
    ) -> Result<()> {
        let spec = spec(set);
        let min_ready = spec.min_ready_seconds.unwrap_or(0);
        count_pods(status, pods, min_ready, now);
        let start = start_ordinal(&spec);
        let count = usize::try_from(replicas(&spec)).unwrap_or(0);
        let mut slots: Vec<Option<Arc<Pod>>> = vec![None; count];
        let mut condemned = Vec::new();
        for pod in pods {
            match ordinal(pod) {
                Some(o) if in_range(&spec, o) => {
                    if let Some(slot) = usize::try_from(o - start)
                        .ok()
                        .and_then(|i| slots.get_mut(i))
                    {
                        *slot = Some(pod.clone());
                    }
                }
                Some(_) => condemned.push(pod.clone()),
                None => {}
            }
        }
        let (current, update) = sets;
        let replicas: Vec<Arc<Pod>> = slots
            .into_iter()
            .enumerate()
            .map(|(i, pod)| {
                pod.unwrap_or_else(|| {
                    let o = start + i32::try_from(i).unwrap_or(i32::MAX);
                    Arc::new(new_versioned_pod(current, update, o))
                })
            })
            .collect();
        condemned.sort_by_key(|p| std::cmp::Reverse(ordinal(p)));
        let first_unhealthy = replicas
            .iter()
            .chain(condemned.iter().rev())
            .find(|p| is_unavailable(p, min_ready, now))
            .cloned();
        if set.metadata.deletion_timestamp.is_some() {
            return Ok(());
        }
        let monotonic = spec.pod_management_policy.as_deref() != Some("Parallel");
        let recount = |status: &mut StatefulSetStatus| {
            count_pods(
                status,
                replicas.iter().chain(condemned.iter()),
                min_ready,
                now,
            );
        };
        if let Pass::Stop(outcome) = self
            .process_replicas(set, update.0, &replicas, monotonic, now)
            .await
        {
            recount(status);
            return outcome;
        }
        if let Pass::Stop(outcome) = self
            .process_condemned(set, &condemned, first_unhealthy.as_ref(), monotonic, now)
            .await
        {
            recount(status);
            return outcome;
        }
        recount(status);
        let strategy = spec.update_strategy.unwrap_or_default();
        if strategy.type_.as_deref() == Some("OnDelete") {
            return Ok(());
        }
        let partition = strategy
            .rolling_update
            .and_then(|r| r.partition)
            .unwrap_or(0);
        let update_min = usize::try_from(partition).unwrap_or(0);
        for target in (update_min..replicas.len()).rev() {
            let pod = &replicas[target];
            if pod_revision(pod) != update.1 && !is_terminating(pod) {
                let outcome = self.pods.delete(set, pod).await;
                status.current_replicas =
                    status.current_replicas.map(|n| n - 1).filter(|n| *n != 0);
                return outcome;
            }
            if is_unavailable(pod, min_ready, now) {
                return Ok(());
            }
        }
        Ok(())
    }

    /// `runForAll(replicas, processReplica)`.
    async fn process_replicas(
        &self,
        set: &StatefulSet,
        update_set: &StatefulSet,
        replicas: &[Arc<Pod>],
        monotonic: bool,
        now: Timestamp,
    ) -> Pass {
        let min_ready = spec(set).min_ready_seconds.unwrap_or(0);
        let step = |pod: Arc<Pod>| async move {
            self.process_replica(set, update_set, &pod, monotonic, min_ready, now)
                .await
        };
        self.run_for_all(replicas, monotonic, step).await
    }

    /// `processReplica`: returns whether to stop, and any error.
    async fn process_replica(
        &self,
        set: &StatefulSet,
        update_set: &StatefulSet,
        pod: &Pod,
        monotonic: bool,
        min_ready: i32,
        now: Timestamp,
    ) -> (bool, Result<()>) {
        if is_finished(pod) {
            if pod.metadata.deletion_timestamp.is_none() {
                return (true, self.pods.delete(set, pod).await);
            }
            return (true, Ok(()));
        }
        if !is_created(pod) {
            if let Err(e) = self.pods.create(set, pod).await {
                return (true, Err(e));
            }
            if monotonic {
                return (true, Ok(()));
            }
            // In Parallel mode the Pod just created has no phase yet: nothing more to check.
            return (false, Ok(()));
        }
        if is_pending(pod)
            && let Err(e) = self.pods.create_claims(set, pod).await
        {
            return (true, Err(e));
        }
        if monotonic
            && (is_terminating(pod)
                || !is_running_and_ready(pod)
                || is_unavailable(pod, min_ready, now))
        {
            return (true, Ok(()));
        }
        if identity_matches(set, pod) && storage_matches(set, pod) {
            return (false, Ok(()));
        }
        (false, self.pods.update(update_set, pod).await)
    }

    /// `runForAll(condemned, processCondemned)`.
    async fn process_condemned(
        &self,
        set: &StatefulSet,
        condemned: &[Arc<Pod>],
        first_unhealthy: Option<&Arc<Pod>>,
        monotonic: bool,
        now: Timestamp,
    ) -> Pass {
        let min_ready = spec(set).min_ready_seconds.unwrap_or(0);
        let first = first_unhealthy.map(|p| p.metadata.name.clone());
        let step = |pod: Arc<Pod>| {
            let first = first.clone();
            async move {
                if is_terminating(&pod) {
                    return (monotonic, Ok(()));
                }
                let is_first = first.as_ref() == Some(&pod.metadata.name);
                if monotonic
                    && !is_first
                    && (!is_running_and_ready(&pod) || is_unavailable(&pod, min_ready, now))
                {
                    return (true, Ok(()));
                }
                (true, self.pods.delete(set, &pod).await)
            }
        };
        self.run_for_all(condemned, monotonic, step).await
    }

    /// `runForAll`: one Pod at a time until one says stop (monotonic), or all of them in
    /// slow-start batches of 1, 2, 4, ... until a batch has an error (burst).
    async fn run_for_all<F, Fut>(&self, pods: &[Arc<Pod>], monotonic: bool, step: F) -> Pass
    where
        F: Fn(Arc<Pod>) -> Fut,
        Fut: std::future::Future<Output = (bool, Result<()>)>,
    {
        if monotonic {
            for pod in pods {
                let (stop, outcome) = step(pod.clone()).await;
                if stop || outcome.is_err() {
                    return Pass::Stop(outcome);
                }
            }
            return Pass::Continue;
        }
        let (mut done, mut batch) = (0, 1.min(pods.len()));
        while batch > 0 {
            let results = join_all(pods[done..done + batch].iter().cloned().map(&step)).await;
            let errors: Vec<Error> = results.into_iter().filter_map(|(_, r)| r.err()).collect();
            if !errors.is_empty() {
                return Pass::Stop(Err(combine(set_of(&errors), errors)));
            }
            done += batch;
            batch = (2 * batch).min(pods.len() - done).min(MAX_BATCH);
        }
        Pass::Continue
    }

    /// Writes `status`, retrying conflicts from a fresh read (`UpdateStatefulSetStatus`).
    async fn write_status(&self, set: &StatefulSet, status: &StatefulSetStatus) -> Result<()> {
        let namespace = set.metadata.namespace.as_deref().unwrap_or_default();
        let api: ResourceClient<StatefulSet> =
            ResourceClient::namespaced(self.pods.client.clone(), namespace);
        let options = UpdateOptions::default().field_manager(FIELD_MANAGER);
        let action = || format!("update status of {}", describe(set));
        let mut next = set.clone();
        for _ in 0..5 {
            next.status = Some(status.clone());
            match api.update_status(&next, &options).await {
                Ok(_) => return Ok(()),
                Err(e) if e.is_conflict() => {
                    let name = set.metadata.name.as_deref().unwrap_or_default();
                    next = api
                        .get(name, &GetOptions::default())
                        .await
                        .map_err(request(action()))?;
                }
                Err(e) => return Err(request(action())(e)),
            }
        }
        Err(Error::InvalidObject {
            object: describe(set),
            reason: "status update kept conflicting".into(),
        })
    }
}

/// The object of the first error, for the combined error's description.
fn set_of(errors: &[Error]) -> String {
    match errors.first() {
        Some(Error::InvalidObject { object, .. }) => object.clone(),
        Some(e) => e.to_string(),
        None => String::new(),
    }
}

/// Several errors of one batch as one (`utilerrors.NewAggregate`).
fn combine(object: String, mut errors: Vec<Error>) -> Error {
    if errors.len() == 1 {
        return errors.remove(0);
    }
    let messages: Vec<String> = errors.iter().map(go_message).collect();
    Error::InvalidObject {
        object,
        reason: aggregate(&messages),
    }
}
