//! Creating and deleting a Job's Pods toward `parallelism`: the back-off before replacements,
//! slow-start batches, Indexed Pods with their completion index, and the removal of the tracking
//! finalizer.
//!
//! Mirrors `manageJob`, `podControl.CreatePodsWithGenerateName`, `deleteJobPods`,
//! `getPodFromTemplate` with `addCompletionIndexEnvVariables` of
//! `pkg/controller/job/job_controller.go`.

use std::{collections::HashMap, sync::Arc, time::Duration};

use futures_util::future::join_all;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{EnvVar, EnvVarSource, ObjectFieldSelector, Pod};
use k8s_openapi::jiff::Timestamp;
use kubegen_client::{CreateOptions, DeleteOptions, Patch, PatchOptions, ResourceClient};
use kubegen_runtime::EventType;
use serde_json::json;

use super::indexes::{COMPLETION_INDEX, completion_index};
use super::rules::{TRACKING_FINALIZER, has_tracking_finalizer, spec};
use super::{
    COMPLETION_INDEX_ENV, Inner, MAX_POD_CHANGES, SyncContext, count, indexes, per_index, rules,
};
use crate::workload::meta::{controller_ref, describe, key_of};
use crate::workload::pods;
use crate::workload::shared::{FIELD_MANAGER, api_message, go_message, namespace_terminating};
use crate::{Error, Result, error::request};

impl Inner {
    /// `manageJob`: returns the active count, the error of a failed create or delete, and when
    /// to look again if creating waits for the back-off.
    pub(super) async fn manage(
        &self,
        ctx: &mut SyncContext,
        key: &str,
        indexed: bool,
    ) -> (i32, Option<Error>, Option<Duration>) {
        let job_spec = spec(&ctx.job);
        let mut active = count(ctx.active.iter());
        if job_spec.suspend == Some(true) {
            let doomed = removal_order(&job_spec, ctx.active.clone(), ctx.active.len(), indexed);
            let (ready, deleted, error) = self.delete_pods(&ctx.job, key, &doomed, true).await;
            ctx.ready -= ready;
            ctx.terminating += deleted;
            return (active - deleted, error, None);
        }
        let want = rules::want_active(&job_spec, active, ctx.succeeded);
        let extra = usize::try_from(active - want).unwrap_or(0);
        let mut doomed = removal_order(&job_spec, ctx.active.clone(), extra, indexed);
        doomed.truncate(MAX_POD_CHANGES);
        if !doomed.is_empty() {
            let (ready, deleted, error) = self.delete_pods(&ctx.job, key, &doomed, true).await;
            ctx.ready -= ready;
            ctx.terminating += deleted;
            return (active - deleted, error, None);
        }
        let terminating = if rules::only_replace_failed(&job_spec) {
            ctx.terminating
        } else {
            0
        };
        let diff = usize::try_from(want - terminating - active).unwrap_or(0);
        if diff == 0 {
            return (active, None, None);
        }
        let per_index = per_index::applies(&job_spec);
        let wait = match per_index {
            true => Duration::ZERO,
            false => ctx.backoff.remaining(Timestamp::now()),
        };
        if !wait.is_zero() {
            return (0, None, Some(wait));
        }
        let mut diff = diff.min(MAX_POD_CHANGES);
        let mut to_start = Vec::new();
        if indexed {
            let completions = usize::try_from(job_spec.completions.unwrap_or(0)).unwrap_or(0);
            let mut running: Vec<usize> = ctx
                .active
                .iter()
                .filter_map(|p| completion_index(p))
                .collect();
            if rules::only_replace_failed(&job_spec) {
                let terminating = ctx.pods.iter().filter(|p| pods::is_terminating(p));
                running.extend(terminating.filter_map(|p| completion_index(p)));
            }
            let done = match &ctx.failed_indexes {
                Some(failed) => ctx.succeeded_indexes.with(failed.iter()),
                None => ctx.succeeded_indexes.clone(),
            };
            to_start = indexes::first_pending(&done, running, diff, completions);
            if per_index {
                let now = Timestamp::now();
                let wait = |ix: &usize| {
                    let replaced = ctx.awaiting.get(ix).map(|p| p.as_ref());
                    per_index::wait_before_replacing(replaced, now)
                };
                let shortest = to_start.iter().map(wait).min().unwrap_or_default();
                to_start.retain(|ix| wait(ix).is_zero());
                if to_start.is_empty() && !shortest.is_zero() {
                    return (0, None, Some(shortest));
                }
            }
            diff = to_start.len();
        }
        self.expectations.expect_creations(key, diff);
        let (created, error) = self
            .create_pods(&ctx.job, key, diff, to_start, (indexed, &ctx.awaiting))
            .await;
        active += i32::try_from(created).unwrap_or(i32::MAX);
        (active, error, None)
    }

    /// Creates `count` Pods in slow-start batches of 1, 2, 4, ... (each Indexed one with the
    /// next of `indexes`, and with `backoffLimitPerIndex` the failure counts of the Pod it
    /// replaces, from `awaiting`); stops after a batch with a failure, no longer expecting the
    /// Pods it skipped. Returns how many were created.
    pub(super) async fn create_pods(
        &self,
        job: &Job,
        key: &str,
        count: usize,
        mut indexes: Vec<usize>,
        (indexed, awaiting): (bool, &HashMap<usize, Arc<Pod>>),
    ) -> (usize, Option<Error>) {
        let job_spec = spec(job);
        let per_index = per_index::applies(&job_spec);
        let namespace = job.metadata.namespace.as_deref().unwrap_or_default();
        let name = job.metadata.name.as_deref().unwrap_or_default();
        let template = pod_template(job, indexed);
        let client: ResourceClient<Pod> =
            ResourceClient::namespaced(self.client.clone(), namespace);
        let options = CreateOptions::default().field_manager(FIELD_MANAGER);
        let (mut created, mut left, mut batch) = (0, count, 1.min(count));
        while batch > 0 {
            let pods: Vec<Pod> = (0..batch)
                .map(|_| {
                    let mut pod = template.clone();
                    if !indexes.is_empty() {
                        let ix = indexes.remove(0);
                        with_index(&mut pod, name, ix);
                        if per_index {
                            let replaced = awaiting.get(&ix).map(|p| p.as_ref());
                            let counts = per_index::replacement_annotations(&job_spec, replaced);
                            let annotations = pod.metadata.annotations.get_or_insert_default();
                            annotations.extend(counts.into_iter().map(|(k, v)| (k.to_owned(), v)));
                        }
                    }
                    pod
                })
                .collect();
            let results = join_all(pods.iter().map(|p| client.create(p, &options))).await;
            let mut first_error = None;
            for result in results {
                match result {
                    Ok(pod) => {
                        created += 1;
                        let message =
                            format!("Created pod: {}", pod.metadata.name.unwrap_or_default());
                        self.events
                            .record(job, EventType::Normal, "SuccessfulCreate", message);
                    }
                    Err(e) => {
                        self.expectations.creation_observed(key);
                        if !namespace_terminating(&e) {
                            let message = format!("Error creating: {}", api_message(&e));
                            self.events
                                .record(job, EventType::Warning, "FailedCreate", message);
                        }
                        first_error.get_or_insert(e);
                    }
                }
            }
            left -= batch;
            if let Some(e) = first_error {
                for _ in 0..left {
                    self.expectations.creation_observed(key);
                }
                if namespace_terminating(&e) {
                    return (created, None);
                }
                return (
                    created,
                    Some(request(format!("create Pod for {}", describe(job)))(e)),
                );
            }
            batch = (2 * batch).min(left);
        }
        (created, None)
    }

    /// Deletes `doomed` in parallel, first removing their tracking finalizer when
    /// `remove_finalizers` (`deleteJobPods`; `deleteActivePods` keeps it for the tracking to
    /// count them). Returns how many of them were ready, how many went, and the first error.
    pub(super) async fn delete_pods(
        &self,
        job: &Job,
        key: &str,
        doomed: &[Arc<Pod>],
        remove_finalizers: bool,
    ) -> (i32, i32, Option<Error>) {
        if remove_finalizers {
            self.expectations
                .expect_deletions(key, doomed.iter().map(|p| key_of(p.as_ref())).collect());
        }
        let namespace = job.metadata.namespace.as_deref().unwrap_or_default();
        let client: ResourceClient<Pod> =
            ResourceClient::namespaced(self.client.clone(), namespace);
        let deletes = doomed.iter().map(|pod| {
            let client = client.clone();
            async move {
                if remove_finalizers && has_tracking_finalizer(pod) {
                    self.remove_finalizer(pod).await?;
                }
                let name = pod.metadata.name.as_deref().unwrap_or_default();
                client
                    .delete(name, &DeleteOptions::default())
                    .await
                    .map(drop)
                    .map_err(request(format!("delete Pod {}", key_of(pod.as_ref()))))
            }
        });
        let (mut ready, mut deleted, mut first_error) = (0, 0, None);
        for (pod, result) in doomed.iter().zip(join_all(deletes).await) {
            let name = pod.metadata.name.as_deref().unwrap_or_default();
            match result {
                Ok(()) => {
                    deleted += 1;
                    let message = format!("Deleted pod: {name}");
                    self.events
                        .record(job, EventType::Normal, "SuccessfulDelete", message);
                }
                Err(e) => {
                    self.expectations
                        .deletion_observed(key, &key_of(pod.as_ref()));
                    if e.is_not_found() {
                        deleted += 1;
                    } else {
                        let message = format!("Error deleting: {}", go_message(&e));
                        self.events
                            .record(job, EventType::Warning, "FailedDelete", message);
                        first_error.get_or_insert(e);
                    }
                }
            }
            if pods::is_ready(pod) {
                ready += 1;
            }
        }
        (ready, deleted, first_error)
    }

    /// Removes the tracking finalizer (`removeTrackingFinalizerPatch`).
    pub(super) async fn remove_finalizer(&self, pod: &Pod) -> Result<()> {
        let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        let patch =
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": [TRACKING_FINALIZER]}});
        ResourceClient::<Pod>::namespaced(self.client.clone(), namespace)
            .patch(
                name,
                &Patch::Strategic(patch),
                &PatchOptions::default().field_manager(FIELD_MANAGER),
            )
            .await
            .map(drop)
            .map_err(request(format!(
                "remove the tracking finalizer of Pod {namespace}/{name}"
            )))
    }
}

/// The Pod a Job's template stamps out: with the tracking finalizer and, for an Indexed Job,
/// `JOB_COMPLETION_INDEX` in every container's environment (`addCompletionIndexEnvVariables`).
fn pod_template(job: &Job, indexed: bool) -> Pod {
    let name = job.metadata.name.as_deref().unwrap_or_default();
    let mut template = spec(job).template;
    let meta = template.metadata.get_or_insert_with(Default::default);
    let finalizers = meta.finalizers.get_or_insert_with(Vec::new);
    if !finalizers.iter().any(|f| f == TRACKING_FINALIZER) {
        finalizers.push(TRACKING_FINALIZER.to_owned());
    }
    if indexed && let Some(pod_spec) = template.spec.as_mut() {
        let containers = pod_spec
            .init_containers
            .iter_mut()
            .flatten()
            .chain(pod_spec.containers.iter_mut());
        for container in containers {
            let env = container.env.get_or_insert_with(Vec::new);
            if !env.iter().any(|e| e.name == COMPLETION_INDEX_ENV) {
                env.push(EnvVar {
                    name: COMPLETION_INDEX_ENV.to_owned(),
                    value_from: Some(EnvVarSource {
                        field_ref: Some(ObjectFieldSelector {
                            field_path: format!("metadata.labels['{COMPLETION_INDEX}']"),
                            ..ObjectFieldSelector::default()
                        }),
                        ..EnvVarSource::default()
                    }),
                    ..EnvVar::default()
                });
            }
        }
    }
    pods::pod_from_template(&template, name, controller_ref(job))
}

/// Gives an Indexed Job's Pod its index: annotation, label, hostname `<job>-<index>` and the
/// generated name `<job>-<index>-`.
fn with_index(pod: &mut Pod, job: &str, index: usize) {
    let value = index.to_string();
    let meta = &mut pod.metadata;
    meta.annotations
        .get_or_insert_with(Default::default)
        .insert(COMPLETION_INDEX.into(), value.clone());
    meta.labels
        .get_or_insert_with(Default::default)
        .insert(COMPLETION_INDEX.into(), value);
    meta.generate_name = Some(indexes::generate_name(job, index));
    if let Some(pod_spec) = pod.spec.as_mut() {
        pod_spec.hostname = Some(format!("{job}-{index}"));
    }
}

/// The `at_least` active Pods to delete first (`activePodsForRemoval`): for an Indexed Job,
/// Pods without a valid index and all but one Pod of a repeated index, then the least
/// advanced Pods.
fn removal_order(
    job_spec: &k8s_openapi::api::batch::v1::JobSpec,
    active: Vec<Arc<Pod>>,
    at_least: usize,
    indexed: bool,
) -> Vec<Arc<Pod>> {
    let (mut doomed, mut left) = (Vec::new(), Vec::new());
    if indexed {
        let completions = usize::try_from(job_spec.completions.unwrap_or(0)).unwrap_or(0);
        let mut by_index: HashMap<Option<usize>, Vec<Arc<Pod>>> = HashMap::new();
        for pod in active {
            let ix = completion_index(&pod).filter(|ix| *ix < completions);
            by_index.entry(ix).or_default().push(pod);
        }
        for (ix, group) in by_index {
            if ix.is_none() {
                doomed.extend(group);
                continue;
            }
            let repeated =
                pods::pods_to_delete(group.clone(), &[], group.len() - 1, Timestamp::now());
            left.extend(
                group
                    .into_iter()
                    .filter(|p| !repeated.iter().any(|r| Arc::ptr_eq(r, p))),
            );
            doomed.extend(repeated);
        }
    } else {
        left = active;
    }
    if doomed.len() < at_least {
        let more = at_least - doomed.len();
        doomed.extend(pods::pods_to_delete(left, &[], more, Timestamp::now()));
    }
    doomed
}
