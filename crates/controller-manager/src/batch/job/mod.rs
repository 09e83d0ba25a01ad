//! The job controller: runs a Job's Pods to `completions` successes (or until it fails), counts
//! them with the `batch.kubernetes.io/job-tracking` finalizer, and reports them in its status.
//!
//! Mirrors `pkg/controller/job/job_controller.go` (v1.36, feature gates at their defaults).
//!
//! # One sync
//! 1. Skip a finished Job, or one this controller marked finished whose update the informer has
//!    not shown yet.
//! 2. Claim the namespace's Pods (adopt orphans the selector matches, release strays).
//! 3. Count: Pods newly `Succeeded`/`Failed` that still carry the finalizer, plus
//!    `status.uncountedTerminatedPods`, plus the counters. Decide whether the Job is finished:
//!    failed beyond `backoffLimit` or `activeDeadlineSeconds` (`FailureTarget`, then `Failed`),
//!    `completions` reached (`SuccessCriteriaMet`, then `Complete`).
//! 4. Finished: delete the active Pods. Otherwise, once earlier creates and deletes were seen,
//!    create Pods toward `parallelism` (after a back-off of 10 s doubling per failure since
//!    the last success), each Indexed one with its completion index, or delete extra ones;
//!    a `suspend`ed Job loses all of them.
//! 5. Track: write the newly finished Pods' UIDs into `uncountedTerminatedPods`, remove their
//!    finalizers, move them into `succeeded`/`failed`, and only then add `Complete` or
//!    `Failed` (with `completionTime`), once no Pod is uncounted or terminating.
//!
//! Events on the Job, from `job-controller`: `SuccessfulCreate`, `FailedCreate`,
//! `SuccessfulDelete`, `Completed` ("Job completed"), `BackoffLimitExceeded` and
//! `DeadlineExceeded` (Warnings), `Suspended`, `Resumed`.
//!
//! # Not here
//! `podFailurePolicy` rules, `successPolicy`, `backoffLimitPerIndex`/`maxFailedIndexes` and the
//! gang-scheduling PodGroups of v1.36 are not evaluated (such Jobs run as if they had none).
//! Adopted orphans do not get the tracking finalizer added. A Job whose `managedBy` names
//! another controller is left to it, as v1.36 does.

mod indexes;
mod rules;

use std::{
    collections::{HashMap, HashSet},
    sync::Arc,
    time::Duration,
};

use futures_util::future::join_all;
use k8s_openapi::api::batch::v1::{Job, JobCondition, JobStatus, UncountedTerminatedPods};
use k8s_openapi::api::core::v1::{EnvVar, EnvVarSource, ObjectFieldSelector, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube_core::Selector;
use kubegen_cache::{DeletedObject, HandlerFns, Lister};
use kubegen_client::{
    Client, CreateOptions, DeleteOptions, GetOptions, Patch, PatchOptions, ResourceClient,
    UpdateOptions,
};
use kubegen_runtime::EventType;
use kubegen_workqueue::RateLimitingQueue;
use parking_lot::Mutex;
use serde_json::json;

use crate::context::{Context, Runner, stopped};
use crate::worker::{self, Next, Retries};
use crate::workload::events::EventSink;
use crate::workload::expectations::Expectations;
use crate::workload::meta::{
    controller_of, controller_ref, describe, key_of, selector_of, split_key,
};
use crate::workload::pod_index::{self, Orphans};
use crate::workload::pods;
use crate::workload::shared::{
    FIELD_MANAGER, api_message, go_message, namespace_terminating, register,
};
use crate::{Error, Result, error::request};
use indexes::{COMPLETION_INDEX, Intervals, completion_index};
use rules::{Backoff, TRACKING_FINALIZER, has_tracking_finalizer, phase, spec};

/// How long Pod events are batched before the Job syncs (`SyncJobBatchPeriod`).
const BATCH_PERIOD: Duration = Duration::from_secs(1);
/// Most Pods created or deleted by one sync (`MaxPodCreateDeletePerSync`).
const MAX_POD_CHANGES: usize = 500;
/// Most Pods counted by one sync (`MaxUncountedPods`).
const MAX_UNCOUNTED: usize = 500;
/// The environment variable an Indexed Job's containers read their index from.
const COMPLETION_INDEX_ENV: &str = "JOB_COMPLETION_INDEX";

/// Registers the job controller on the manager's shared informers (Jobs, Pods); the runner
/// works its queues with `workers` workers (`--concurrent-job-syncs`, 5) until the manager
/// stops.
pub(crate) fn start(context: &Context, workers: usize) -> Runner {
    let controller = JobController::new(context);
    let stop = context.stop.clone();
    Box::pin(async move {
        let controller = match controller {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "the job controller cannot start");
                return;
            }
        };
        let jobs = controller.clone();
        let running = worker::spawn(
            controller.inner.queue.clone(),
            workers,
            Retries::Forever,
            move |key: String| {
                let c = jobs.clone();
                async move { c.inner.sync(&key).await }
            },
        );
        let orphans = worker::spawn(
            controller.inner.orphans.clone(),
            1,
            Retries::Forever,
            move |key: String| {
                let c = controller.clone();
                async move { c.inner.release_orphan(&key).await.map(|()| Next::Done) }
            },
        );
        stopped(stop).await;
        running.stop().await;
        orphans.stop().await;
    })
}

/// The Job controller; cheap to clone.
#[derive(Clone)]
struct JobController {
    inner: Arc<Inner>,
}

struct Inner {
    client: Client,
    jobs: Lister<Job>,
    pods: Lister<Pod>,
    queue: RateLimitingQueue<String>,
    /// Pods (`namespace/name`) whose tracking finalizer may have no Job left to remove it.
    orphans: RateLimitingQueue<String>,
    expectations: Expectations,
    /// Per Job key: UIDs of Pods whose finalizer removal was sent but not yet seen
    /// (`finalizerExpectations`).
    removing: Mutex<HashMap<String, HashSet<String>>>,
    backoffs: Mutex<HashMap<String, Backoff>>,
    /// UIDs of Jobs marked finished whose update the informer has not shown yet
    /// (`finishedJobExpectations`).
    finished: Mutex<HashSet<String>>,
    events: EventSink,
}

impl JobController {
    fn new(context: &Context) -> Result<Self> {
        let jobs = context.factory.informer::<Job>();
        let pods = context.factory.informer::<Pod>();
        let client = context.client.clone();
        let inner = Arc::new(Inner {
            events: EventSink::new(client.clone(), "job-controller"),
            client,
            jobs: jobs.lister(),
            pods: pods.lister(),
            queue: worker::queue("job"),
            orphans: worker::queue("job_orphan_pod"),
            expectations: Expectations::default(),
            removing: Mutex::default(),
            backoffs: Mutex::default(),
            finished: Mutex::default(),
        });
        let (a, u, d) = (inner.clone(), inner.clone(), inner.clone());
        register(
            &jobs,
            HandlerFns::new()
                .on_add(move |job: &Arc<Job>, _| a.queue.add(key_of(job.as_ref())))
                .on_update(move |old: &Arc<Job>, new: &Arc<Job>| u.update_job(old, new))
                .on_delete(move |gone: &DeletedObject<Job>| d.delete_job(gone.object())),
        )?;
        let (a, u, d) = (inner.clone(), inner.clone(), inner.clone());
        register(
            &pods,
            HandlerFns::new()
                .on_add(move |pod: &Arc<Pod>, _| a.add_pod(pod))
                .on_update(move |old: &Arc<Pod>, new: &Arc<Pod>| u.update_pod(old, new))
                .on_delete(move |gone: &DeletedObject<Pod>| d.delete_pod(gone.object(), true)),
        )?;
        pod_index::add_to(&pods)?;
        Ok(Self { inner })
    }
}

/// What one sync found and decided (`syncJobCtx`).
struct SyncContext {
    job: Job,
    pods: Vec<Arc<Pod>>,
    active: Vec<Arc<Pod>>,
    ready: i32,
    terminating: i32,
    succeeded: i32,
    uncounted_succeeded: HashSet<String>,
    uncounted_failed: HashSet<String>,
    removing: HashSet<String>,
    previous_indexes: Intervals,
    succeeded_indexes: Intervals,
    finished: Option<JobCondition>,
    backoff: Backoff,
}

impl Inner {
    fn resolve(&self, pod: &Pod) -> Option<Arc<Job>> {
        let r = controller_of(pod)?;
        if r.kind != "Job" || r.api_version != "batch/v1" {
            return None;
        }
        self.jobs
            .get(pod.metadata.namespace.as_deref(), &r.name)
            .filter(|j| j.metadata.uid.as_deref() == Some(r.uid.as_str()))
    }

    fn selecting(&self, pod: &Pod) -> Vec<Arc<Job>> {
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

    fn batched(&self, job: &Job) {
        self.queue.add_after(key_of(job), BATCH_PERIOD);
    }

    fn update_job(&self, old: &Job, new: &Job) {
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

    fn delete_job(&self, job: &Arc<Job>) {
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
    fn release_orphans_of(&self, job: &Job) {
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

    fn add_pod(&self, pod: &Arc<Pod>) {
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

    fn update_pod(&self, old: &Arc<Pod>, new: &Arc<Pod>) {
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
    fn delete_pod(&self, pod: &Arc<Pod>, last: bool) {
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

    fn removal_observed(&self, key: &str, uid: &str) {
        if let Some(uids) = self.removing.lock().get_mut(key) {
            uids.remove(uid);
        }
    }

    /// Removes the finalizer of a Pod no unfinished Job controls (`handleSingleOrphanPod`).
    async fn release_orphan(&self, key: &str) -> Result<()> {
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

    /// `syncJob`.
    async fn sync(&self, key: &str) -> Result<Next> {
        let (namespace, name) = split_key(key);
        let Some(shared) = self.jobs.get(Some(namespace), name) else {
            self.expectations.delete(key);
            self.removing.lock().remove(key);
            self.backoffs.lock().remove(key);
            return Ok(Next::Done);
        };
        let uid = shared.metadata.uid.clone().unwrap_or_default();
        if rules::is_finished(&shared) {
            self.backoffs.lock().remove(key);
            self.finished.lock().remove(&uid);
            return Ok(Next::Done);
        }
        if self.finished.lock().contains(&uid) || rules::managed_elsewhere(&shared) {
            return Ok(Next::Done);
        }
        let mut job = (*shared).clone();
        let job_spec = spec(&job);
        let mode = job_spec.completion_mode.as_deref().unwrap_or("NonIndexed");
        if mode != "NonIndexed" && mode != "Indexed" {
            let message = "Skipped Job sync because completion mode is unknown".to_owned();
            self.events
                .record(&job, EventType::Warning, "UnknownCompletionMode", message);
            return Ok(Next::Done);
        }
        let indexed = mode == "Indexed";
        let status = job.status.get_or_insert_with(JobStatus::default);
        let uncounted = status
            .uncounted_terminated_pods
            .get_or_insert_with(UncountedTerminatedPods::default);
        let uncounted_succeeded: HashSet<String> =
            uncounted.succeeded.iter().flatten().cloned().collect();
        let uncounted_failed: HashSet<String> =
            uncounted.failed.iter().flatten().cloned().collect();
        let satisfied = self.expectations.satisfied(key);
        let pods = self.pods_for_job(&job).await?;
        let active: Vec<_> = pods
            .iter()
            .filter(|p| pods::is_active(p))
            .cloned()
            .collect();
        let removing = self.removing.lock().get(key).cloned().unwrap_or_default();
        let now = Timestamp::now();
        let mut ctx = SyncContext {
            ready: count(active.iter().filter(|p| pods::is_ready(p))),
            terminating: count(pods.iter().filter(|p| pods::is_terminating(p))),
            active,
            succeeded: 0,
            uncounted_succeeded,
            uncounted_failed,
            removing,
            previous_indexes: Intervals::default(),
            succeeded_indexes: Intervals::default(),
            finished: None,
            backoff: Backoff::default(),
            pods,
            job,
        };
        let (new_succeeded, new_failed) = ctx.newly_finished(indexed);
        let status = ctx.job.status.clone().unwrap_or_default();
        ctx.succeeded = status.succeeded.unwrap_or(0)
            + count(new_succeeded.iter())
            + count(ctx.uncounted_succeeded.iter());
        let failed = status.failed.unwrap_or(0)
            + count(new_failed.iter())
            + count(ctx.uncounted_failed.iter());
        let suspended = job_spec.suspend == Some(true);
        if status.start_time.is_none() && !suspended {
            ctx.status().start_time = Some(Time(now));
        }
        let finish_times = |pods: &[Arc<Pod>]| -> Vec<Timestamp> {
            pods.iter().map(|p| rules::finished_time(p, now)).collect()
        };
        let previous = self.backoffs.lock().get(key).copied().unwrap_or_default();
        ctx.backoff = previous.after(finish_times(&new_succeeded), finish_times(&new_failed));
        let mut requeue = None;
        ctx.finished = rules::true_condition(&ctx.job, "SuccessCriteriaMet").cloned();
        if ctx.finished.is_none()
            && let Some(target) = rules::true_condition(&ctx.job, "FailureTarget")
        {
            let reason = target.reason.as_deref().unwrap_or_default();
            let message = target.message.as_deref().unwrap_or_default();
            ctx.finished = Some(rules::condition("Failed", "True", reason, message, now));
        }
        if ctx.finished.is_none() {
            let started = ctx
                .job
                .status
                .as_ref()
                .and_then(|s| s.start_time.as_ref())
                .map(|t| t.0);
            if failed > job_spec.backoff_limit.unwrap_or(6)
                || rules::past_backoff_limit_on_failure(&job_spec, &ctx.pods)
            {
                let message = "Job has reached the specified backoff limit";
                ctx.finished = Some(rules::condition(
                    "FailureTarget",
                    "True",
                    "BackoffLimitExceeded",
                    message,
                    now,
                ));
            } else if let (Some(deadline), Some(started), false) =
                (job_spec.active_deadline_seconds, started, suspended)
            {
                let left = deadline_left(started, deadline, now);
                if left.is_zero() {
                    let message = "Job was active longer than specified deadline";
                    ctx.finished = Some(rules::condition(
                        "FailureTarget",
                        "True",
                        "DeadlineExceeded",
                        message,
                        now,
                    ));
                } else {
                    requeue = Some(left);
                }
            }
        }
        if indexed {
            let completions = usize::try_from(job_spec.completions.unwrap_or(0)).unwrap_or(0);
            let text = status.completed_indexes.as_deref().unwrap_or_default();
            ctx.previous_indexes = Intervals::parse(text, completions);
            let new = ctx
                .pods
                .iter()
                .filter(|p| phase(p) == "Succeeded" && has_tracking_finalizer(p));
            let new = new
                .filter_map(|p| completion_index(p))
                .filter(|ix| *ix < completions);
            ctx.succeeded_indexes = ctx.previous_indexes.with(new.collect::<Vec<_>>());
            ctx.succeeded = i32::try_from(ctx.succeeded_indexes.total()).unwrap_or(i32::MAX);
        }
        let mut active = count(ctx.active.iter());
        let mut manage_error = None;
        let mut suspend_changed = false;
        if ctx.finished.is_some() {
            let doomed = ctx.active.clone();
            let (deleted_ready, deleted, error) =
                self.delete_pods(&ctx.job, key, &doomed, false).await;
            if deleted != active || !satisfied {
                ctx.finished = None;
            }
            active -= deleted;
            ctx.terminating += deleted;
            ctx.ready -= deleted_ready;
            manage_error = error;
        } else {
            let mut managed = false;
            if satisfied && ctx.job.metadata.deletion_timestamp.is_none() {
                let (now_active, error, delay) = self.manage(&mut ctx, key, indexed).await;
                active = now_active;
                manage_error = error;
                requeue = requeue.into_iter().chain(delay).min();
                managed = true;
            }
            let complete = match job_spec.completions {
                None => ctx.succeeded > 0 && active == 0,
                Some(completions) => ctx.succeeded >= completions && active == 0,
            };
            if complete {
                let message = "Reached expected number of succeeded pods";
                ctx.finished = Some(rules::condition(
                    "SuccessCriteriaMet",
                    "True",
                    "CompletionsReached",
                    message,
                    now,
                ));
            } else if managed {
                suspend_changed = self.note_suspension(&mut ctx.job, suspended, now);
            }
        }
        let (ready, terminating) = (ctx.ready, ctx.terminating);
        let status = ctx.job.status.get_or_insert_with(JobStatus::default);
        let needs_update = suspend_changed
            || status.active.unwrap_or(0) != active
            || status.ready != Some(ready)
            || status.terminating != Some(terminating);
        status.active = Some(active).filter(|n| *n != 0);
        status.ready = Some(ready);
        status.terminating = Some(terminating);
        self.track(ctx, key, indexed, needs_update).await?;
        if let Some(e) = manage_error {
            return Err(e);
        }
        Ok(requeue.map_or(Next::Done, |d| Next::After(d.max(BATCH_PERIOD))))
    }

    /// Records the `Suspended` condition and its Event when suspension changed; a resumed Job
    /// starts its deadline anew. Returns whether the condition changed.
    fn note_suspension(&self, job: &mut Job, suspended: bool, now: Timestamp) -> bool {
        let wanted = if suspended {
            rules::condition("Suspended", "True", "JobSuspended", "Job suspended", now)
        } else {
            rules::condition("Suspended", "False", "JobResumed", "Job resumed", now)
        };
        let status = job.status.get_or_insert_with(JobStatus::default);
        let mut list = status.conditions.take().unwrap_or_default();
        let changed = rules::ensure_condition(&mut list, wanted);
        status.conditions = Some(list).filter(|l| !l.is_empty());
        if !changed {
            return false;
        }
        if suspended {
            status.start_time = None;
            self.events.record(
                &*job,
                EventType::Normal,
                "Suspended",
                "Job suspended".into(),
            );
        } else {
            status.start_time = Some(Time(now));
            self.events
                .record(&*job, EventType::Normal, "Resumed", "Job resumed".into());
        }
        true
    }

    /// The Pods the Job controls after adopting and releasing, from those it controls and the
    /// namespace's orphans (`getPodsForJob`).
    async fn pods_for_job(&self, job: &Job) -> Result<Vec<Arc<Pod>>> {
        let namespace = job.metadata.namespace.as_deref().unwrap_or_default();
        let name = job.metadata.name.as_deref().unwrap_or_default();
        let selector = selector_of(job, spec(job).selector.as_ref())?;
        let candidates = pod_index::pods_of(&self.pods, job, Orphans::Included);
        let fresh = || async move {
            ResourceClient::<Job>::namespaced(self.client.clone(), namespace)
                .get(name, &GetOptions::default())
                .await
                .map_err(request(format!("get Job {namespace}/{name}")))
        };
        crate::workload::controller_ref::claim(
            &self.client,
            job,
            selector.as_ref(),
            candidates,
            fresh,
        )
        .await
    }

    /// `manageJob`: returns the active count, the error of a failed create or delete, and when
    /// to look again if creating waits for the back-off.
    async fn manage(
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
        let wait = ctx.backoff.remaining(Timestamp::now());
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
            to_start = indexes::first_pending(&ctx.succeeded_indexes, running, diff, completions);
            diff = to_start.len();
        }
        self.expectations.expect_creations(key, diff);
        let (created, error) = self
            .create_pods(&ctx.job, key, diff, to_start, indexed)
            .await;
        active += i32::try_from(created).unwrap_or(i32::MAX);
        (active, error, None)
    }

    /// Creates `count` Pods in slow-start batches of 1, 2, 4, ... (each Indexed one with the
    /// next of `indexes`); stops after a batch with a failure, no longer expecting the Pods it
    /// skipped. Returns how many were created.
    async fn create_pods(
        &self,
        job: &Job,
        key: &str,
        count: usize,
        mut indexes: Vec<usize>,
        indexed: bool,
    ) -> (usize, Option<Error>) {
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
                        with_index(&mut pod, name, indexes.remove(0));
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
    async fn delete_pods(
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
    async fn remove_finalizer(&self, pod: &Pod) -> Result<()> {
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

    /// `trackJobStatusAndRemoveFinalizers`: counts finished Pods through
    /// `uncountedTerminatedPods` and their finalizers, then marks the Job finished.
    async fn track(
        &self,
        mut ctx: SyncContext,
        key: &str,
        indexed: bool,
        mut needs_flush: bool,
    ) -> Result<()> {
        let job_spec = spec(&ctx.job);
        let completions = usize::try_from(job_spec.completions.unwrap_or(0)).unwrap_or(0);
        if indexed {
            ctx.pods
                .sort_by_key(|p| completion_index(p).unwrap_or(usize::MAX));
        }
        let mut with_finalizer: HashSet<String> = ctx
            .pods
            .iter()
            .filter(|p| has_tracking_finalizer(p))
            .filter_map(|p| p.metadata.uid.clone())
            .filter(|uid| !ctx.removing.contains(uid))
            .collect();
        needs_flush |= count_uncounted(ctx.status(), &with_finalizer);
        let failing = ctx
            .finished
            .as_ref()
            .is_some_and(|c| c.type_ != "SuccessCriteriaMet");
        let mut to_release = Vec::new();
        let mut new_indexes = Vec::new();
        let mut reached_max = false;
        let pods = std::mem::take(&mut ctx.pods);
        for pod in &pods {
            let uid = pod.metadata.uid.clone().unwrap_or_default();
            if !has_tracking_finalizer(pod) || ctx.removing.contains(&uid) {
                continue;
            }
            let failed = rules::is_failed(pod, &job_spec);
            let removable = ctx.job.metadata.deletion_timestamp.is_some()
                || ctx.finished.is_some()
                || phase(pod) == "Succeeded"
                || failed;
            if !removable {
                continue;
            }
            to_release.push(pod.clone());
            let index = completion_index(pod);
            let status = ctx.job.status.get_or_insert_with(JobStatus::default);
            let uncounted = status
                .uncounted_terminated_pods
                .get_or_insert_with(Default::default);
            if phase(pod) == "Succeeded" && !ctx.uncounted_failed.contains(&uid) {
                if indexed {
                    if let Some(ix) =
                        index.filter(|ix| *ix < completions && !ctx.previous_indexes.has(*ix))
                    {
                        new_indexes.push(ix);
                        needs_flush = true;
                    }
                } else if !ctx.uncounted_succeeded.contains(&uid) {
                    uncounted.succeeded.get_or_insert_with(Vec::new).push(uid);
                    needs_flush = true;
                }
            } else if (failed || failing)
                && !ctx.uncounted_failed.contains(&uid)
                && (!indexed || index.is_some_and(|ix| ix < completions))
            {
                uncounted.failed.get_or_insert_with(Vec::new).push(uid);
                needs_flush = true;
            }
            let listed = uncounted.succeeded.as_ref().map_or(0, Vec::len)
                + uncounted.failed.as_ref().map_or(0, Vec::len);
            if new_indexes.len() + listed >= MAX_UNCOUNTED {
                reached_max = true;
                break;
            }
        }
        if indexed {
            ctx.succeeded_indexes = ctx.succeeded_indexes.with(new_indexes);
            let text = ctx.succeeded_indexes.to_string();
            let total = i32::try_from(ctx.succeeded_indexes.total()).unwrap_or(i32::MAX);
            let status = ctx.status();
            if status.completed_indexes.as_deref().unwrap_or_default() != text {
                needs_flush = true;
            }
            status.succeeded = Some(total).filter(|n| *n != 0);
            status.completed_indexes = Some(text).filter(|t| !t.is_empty());
        }
        let now = Timestamp::now();
        if let Some(finished) = ctx.finished.take() {
            let reason = finished.reason.clone().unwrap_or_default();
            let message = finished.message.clone().unwrap_or_default();
            let kind = finished.type_.clone();
            let final_type = match kind.as_str() {
                "FailureTarget" => {
                    ctx.status()
                        .conditions
                        .get_or_insert_with(Vec::new)
                        .push(finished);
                    needs_flush = true;
                    "Failed"
                }
                "SuccessCriteriaMet" => {
                    if rules::true_condition(&ctx.job, "SuccessCriteriaMet").is_none() {
                        ctx.status()
                            .conditions
                            .get_or_insert_with(Vec::new)
                            .push(finished);
                        needs_flush = true;
                    }
                    "Complete"
                }
                other => other,
            }
            .to_owned();
            ctx.finished = Some(rules::condition(
                &final_type,
                "True",
                &reason,
                &message,
                now,
            ));
        }
        if needs_flush {
            ctx.job = self.update_status(&ctx.job).await?;
            self.backoffs.lock().insert(key.to_owned(), ctx.backoff);
            needs_flush = false;
        }
        let mut release_error = None;
        if !to_release.is_empty() {
            let uids: Vec<String> = to_release
                .iter()
                .filter_map(|p| p.metadata.uid.clone())
                .collect();
            self.removing
                .lock()
                .entry(key.to_owned())
                .or_default()
                .extend(uids);
            let results = join_all(to_release.iter().map(|p| self.remove_finalizer(p))).await;
            for (pod, result) in to_release.iter().zip(results) {
                let uid = pod.metadata.uid.clone().unwrap_or_default();
                match result {
                    Ok(()) => {
                        with_finalizer.remove(&uid);
                    }
                    Err(e) => {
                        self.removal_observed(key, &uid);
                        if e.is_not_found() {
                            with_finalizer.remove(&uid);
                        } else {
                            release_error.get_or_insert(e);
                        }
                    }
                }
            }
        }
        needs_flush |= count_uncounted(ctx.status(), &with_finalizer);
        if let Some(e) = release_error {
            if needs_flush {
                self.update_status(&ctx.job).await?;
            }
            return Err(e);
        }
        let finished = !reached_max && self.enact_finished(&mut ctx);
        if finished || needs_flush {
            let job = self.update_status(&ctx.job).await?;
            if finished && let Some(condition) = &ctx.finished {
                self.record_finished(&job, condition);
                self.finished
                    .lock()
                    .insert(job.metadata.uid.clone().unwrap_or_default());
            }
        }
        Ok(())
    }

    /// Adds the final `Complete` or `Failed` condition once no Pod is uncounted or terminating
    /// (`enactJobFinished`). Returns whether it did.
    fn enact_finished(&self, ctx: &mut SyncContext) -> bool {
        let Some(finished) = ctx.finished.clone() else {
            return false;
        };
        let terminating = ctx.terminating;
        let status = ctx.status();
        let uncounted = status.uncounted_terminated_pods.as_ref();
        let listed = uncounted.map_or(0, |u| {
            u.succeeded.as_ref().map_or(0, Vec::len) + u.failed.as_ref().map_or(0, Vec::len)
        });
        if listed > 0 || terminating > 0 {
            return false;
        }
        let complete = finished.type_ == "Complete";
        let time = finished.last_transition_time.clone();
        let mut list = status.conditions.take().unwrap_or_default();
        rules::ensure_condition(&mut list, finished);
        status.conditions = Some(list);
        if complete {
            status.completion_time = time;
        }
        true
    }

    /// The Events of a finished Job (`recordJobFinished`).
    fn record_finished(&self, job: &Job, condition: &JobCondition) {
        if condition.type_ == "Complete" {
            let succeeded = job.status.as_ref().and_then(|s| s.succeeded).unwrap_or(0);
            if spec(job).completions.is_some_and(|c| succeeded > c) {
                let message = "Too many succeeded pods running after completion count reached";
                self.events.record(
                    job,
                    EventType::Warning,
                    "TooManySucceededPods",
                    message.into(),
                );
            }
            self.events
                .record(job, EventType::Normal, "Completed", "Job completed".into());
        } else {
            let reason = condition.reason.as_deref().unwrap_or_default();
            let message = condition.message.clone().unwrap_or_default();
            self.events.record(job, EventType::Warning, reason, message);
        }
    }

    /// Writes the Job's status through `/status` (`updateJobStatus`).
    async fn update_status(&self, job: &Job) -> Result<Job> {
        let namespace = job.metadata.namespace.as_deref().unwrap_or_default();
        ResourceClient::<Job>::namespaced(self.client.clone(), namespace)
            .update_status(job, &UpdateOptions::default().field_manager(FIELD_MANAGER))
            .await
            .map_err(request(format!("update status of {}", describe(job))))
    }
}

impl SyncContext {
    fn status(&mut self) -> &mut JobStatus {
        self.job.status.get_or_insert_with(JobStatus::default)
    }

    /// Pods newly `Succeeded` and newly failed: carrying the finalizer, not yet listed as
    /// uncounted, not being released, and for Indexed Jobs with a valid index
    /// (`getNewFinishedPods`).
    fn newly_finished(&self, indexed: bool) -> (Vec<Arc<Pod>>, Vec<Arc<Pod>>) {
        let job_spec = spec(&self.job);
        let completions = usize::try_from(job_spec.completions.unwrap_or(0)).unwrap_or(0);
        let valid = |p: &Arc<Pod>, uncounted: &HashSet<String>| {
            let uid = p.metadata.uid.clone().unwrap_or_default();
            has_tracking_finalizer(p)
                && !uncounted.contains(&uid)
                && !self.removing.contains(&uid)
                && (!indexed || completion_index(p).is_some_and(|ix| ix < completions))
        };
        let succeeded = self
            .pods
            .iter()
            .filter(|p| valid(p, &self.uncounted_succeeded) && phase(p) == "Succeeded")
            .cloned()
            .collect();
        let failed = self
            .pods
            .iter()
            .filter(|p| valid(p, &self.uncounted_failed) && rules::is_failed(p, &job_spec))
            .cloned()
            .collect();
        (succeeded, failed)
    }
}

/// Moves the uncounted Pods whose finalizer is gone into the counters
/// (`cleanUncountedPodsWithoutFinalizers`). Returns whether anything moved.
fn count_uncounted(status: &mut JobStatus, with_finalizer: &HashSet<String>) -> bool {
    let uncounted = status
        .uncounted_terminated_pods
        .get_or_insert_with(Default::default);
    let mut moved = (0, 0);
    for (list, moved) in [
        (&mut uncounted.succeeded, &mut moved.0),
        (&mut uncounted.failed, &mut moved.1),
    ] {
        let before = list.as_ref().map_or(0, Vec::len);
        if let Some(uids) = list.as_mut() {
            uids.retain(|uid| with_finalizer.contains(uid));
        }
        *moved = before - list.as_ref().map_or(0, Vec::len);
        if list.as_ref().is_some_and(Vec::is_empty) {
            *list = None;
        }
    }
    let add = |field: &mut Option<i32>, n: usize| {
        let total = field.unwrap_or(0) + i32::try_from(n).unwrap_or(i32::MAX);
        *field = Some(total).filter(|t| *t != 0);
    };
    add(&mut status.succeeded, moved.0);
    add(&mut status.failed, moved.1);
    moved != (0, 0)
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

/// The time left before `deadline` seconds since `started` pass at `now`.
fn deadline_left(started: Timestamp, deadline: i64, now: Timestamp) -> Duration {
    let total = Duration::from_secs(u64::try_from(deadline).unwrap_or(0));
    let elapsed = Duration::try_from(now.duration_since(started)).unwrap_or(Duration::ZERO);
    total.saturating_sub(elapsed)
}

fn count<T>(items: impl Iterator<Item = T>) -> i32 {
    i32::try_from(items.count()).unwrap_or(i32::MAX)
}
