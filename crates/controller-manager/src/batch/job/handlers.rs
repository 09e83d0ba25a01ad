//! The job controller's event handlers: which Job a Pod or Job change concerns, the
//! expectations its creates and deletes are checked against, and the release of orphans'
//! tracking finalizers.
//!
//! Mirrors the handlers of `pkg/controller/job/job_controller.go` (`addPod`, `updatePod`,
//! `deletePod`, `updateJob`, `deleteJob`, `resolveControllerRef`, the orphan-Pod queue).

use std::sync::Arc;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kube_core::Selector;

use super::rules::{has_tracking_finalizer, spec};
use super::{BATCH_PERIOD, Inner, deadline_left, rules};
use crate::Result;
use crate::workload::meta::{controller_of, key_of, selector_of, split_key};

impl Inner {
    pub(super) fn resolve(&self, pod: &Pod) -> Option<Arc<Job>> {
        let r = controller_of(pod)?;
        if r.kind != "Job" || r.api_version != "batch/v1" {
            return None;
        }
        self.jobs
            .get(pod.metadata.namespace.as_deref(), &r.name)
            .filter(|j| j.metadata.uid.as_deref() == Some(r.uid.as_str()))
    }

    pub(super) fn selecting(&self, pod: &Pod) -> Vec<Arc<Job>> {
        let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
        self.jobs
            .namespaced(namespace)
            .list(&Selector::default())
            .into_iter()
            .filter(|job| {
                let selector = spec(job).selector;
                let selector = selector_of(job.as_ref(), selector.as_ref()).ok().flatten();
                crate::workload::meta::selects(selector.as_ref(), pod.metadata.labels.as_ref())
            })
            .collect()
    }

    pub(super) fn batched(&self, job: &Job) {
        self.queue.add_after(key_of(job), BATCH_PERIOD);
    }

    pub(super) fn update_job(&self, old: &Job, new: &Job) {
        let key = key_of(new);
        if rules::is_finished(new) {
            self.release_orphans_of(new);
            return;
        }
        if old.metadata.generation == new.metadata.generation {
            self.batched(new);
        } else {
            self.queue.add(key.clone());
        }
        let started = new.status.as_ref().and_then(|s| s.start_time.as_ref());
        let (Some(started), Some(deadline)) = (started, spec(new).active_deadline_seconds) else {
            return;
        };
        if spec(old).active_deadline_seconds != Some(deadline) {
            self.queue
                .add_after(key, deadline_left(started.0, deadline, Timestamp::now()));
        }
    }

    pub(super) fn delete_job(&self, job: &Arc<Job>) {
        let key = key_of(job.as_ref());
        if let Some(uid) = &job.metadata.uid {
            self.finished.lock().remove(uid);
        }
        self.backoffs.lock().remove(&key);
        self.queue.add(key);
        self.release_orphans_of(job);
    }

    /// Queues every Pod the Job's selector matches for the orphan check
    /// (`enqueueLabelSelector`).
    pub(super) fn release_orphans_of(&self, job: &Job) {
        let namespace = job.metadata.namespace.as_deref().unwrap_or_default();
        let Ok(Some(selector)) = selector_of(job, spec(job).selector.as_ref()) else {
            return;
        };
        for pod in self.pods.namespaced(namespace).list(&selector) {
            if has_tracking_finalizer(&pod) {
                self.orphans.add(key_of(pod.as_ref()));
            }
        }
    }

    pub(super) fn add_pod(&self, pod: &Arc<Pod>) {
        if pod.metadata.deletion_timestamp.is_some() {
            return self.delete_pod(pod, false);
        }
        if controller_of(pod.as_ref()).is_some() {
            if let Some(job) = self.resolve(pod) {
                self.expectations.creation_observed(&key_of(job.as_ref()));
                self.batched(&job);
            }
            return;
        }
        if has_tracking_finalizer(pod) {
            self.orphans.add(key_of(pod.as_ref()));
        }
        for job in self.selecting(pod) {
            self.batched(&job);
        }
    }

    pub(super) fn update_pod(&self, old: &Arc<Pod>, new: &Arc<Pod>) {
        if old.metadata.resource_version == new.metadata.resource_version {
            return;
        }
        if new.metadata.deletion_timestamp.is_some() {
            return self.delete_pod(new, false);
        }
        let finalizer_removed = !has_tracking_finalizer(new);
        let (old_ref, new_ref) = (controller_of(old.as_ref()), controller_of(new.as_ref()));
        let ref_changed = old_ref != new_ref;
        let uid = new.metadata.uid.clone().unwrap_or_default();
        for job in [old, new]
            .into_iter()
            .filter(|p| controller_of(p.as_ref()).is_some())
            .filter_map(|p| self.resolve(p))
        {
            if finalizer_removed {
                self.removal_observed(&key_of(job.as_ref()), &uid);
            }
            self.batched(&job);
        }
        if new_ref.is_some() {
            return;
        }
        if has_tracking_finalizer(new) {
            self.orphans.add(key_of(new.as_ref()));
        }
        if ref_changed || old.metadata.labels != new.metadata.labels {
            for job in self.selecting(new) {
                self.batched(&job);
            }
        }
    }

    /// A Pod deleted (`last`) or marked for deletion.
    pub(super) fn delete_pod(&self, pod: &Arc<Pod>, last: bool) {
        let has_finalizer = has_tracking_finalizer(pod);
        let job = controller_of(pod.as_ref()).and_then(|_| self.resolve(pod));
        let Some(job) = job.filter(|j| !rules::is_finished(j)) else {
            if has_finalizer {
                self.orphans.add(key_of(pod.as_ref()));
            }
            return;
        };
        let key = key_of(job.as_ref());
        self.expectations
            .deletion_observed(&key, &key_of(pod.as_ref()));
        if last || !has_finalizer {
            self.removal_observed(&key, pod.metadata.uid.as_deref().unwrap_or_default());
        }
        self.batched(&job);
    }

    pub(super) fn removal_observed(&self, key: &str, uid: &str) {
        if let Some(uids) = self.removing.lock().get_mut(key) {
            uids.remove(uid);
        }
    }

    /// Removes the finalizer of a Pod no unfinished Job controls (`handleSingleOrphanPod`).
    pub(super) async fn release_orphan(&self, key: &str) -> Result<()> {
        let (namespace, name) = split_key(key);
        let Some(pod) = self.pods.get(Some(namespace), name) else {
            return Ok(());
        };
        if let Some(r) = controller_of(pod.as_ref()) {
            if r.kind != "Job" || r.api_version != "batch/v1" {
                return Ok(());
            }
            if self
                .resolve(&pod)
                .is_some_and(|job| !rules::is_finished(&job))
            {
                return Ok(());
            }
        }
        match self.remove_finalizer(&pod).await {
            Err(e) if !e.is_not_found() => Err(e),
            _ => Ok(()),
        }
    }
}
