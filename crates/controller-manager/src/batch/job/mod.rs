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
//! `podFailurePolicy` (`pod_failure_policy.rs`): a Pod a `FailJob` rule matches fails the Job
//! (`FailureTarget`, reason `PodFailurePolicy`, before the backoff limit is looked at), one an
//! `Ignore` rule matches is released without being counted. An Indexed Job's `successPolicy`
//! (`success_policy.rs`): once its succeeded indexes meet a rule, `SuccessCriteriaMet` (reason
//! `SuccessPolicy`), the remaining Pods deleted, then `Complete`.
//!
//! `backoffLimitPerIndex` and `maxFailedIndexes` (`per_index.rs`): an Indexed Job's indexes
//! fail one by one (`status.failedIndexes`), each replacement carrying its index's failure count
//! and waiting its own back-off; the Job fails with `MaxFailedIndexesExceeded` or, once every
//! index is settled, `FailedIndexes`.
//!
//! # Not here
//! The gang-scheduling PodGroups of v1.36 are not made (such Jobs run as if they had none).
//! Adopted orphans do not get the tracking finalizer added. A Job whose `managedBy` names
//! another controller is left to it, as v1.36 does.
//!
//! # Modules
//! This file holds the controller, its start and the sync (steps 1-4 in order); the event
//! handlers are in `handlers.rs`, step 4's creates and deletes in `pod_control.rs`, step 5 in
//! `tracking.rs`, the pure rules in `rules.rs`, `indexes.rs`, `per_index.rs`, `pod_failure_policy.rs`
//! and `success_policy.rs`. Like the deployment
//! controller's, the three first extend the controller's own state (`impl Inner`) and so import
//! from this file; `rules` and `indexes` import nothing of the controller.

mod handlers;
mod indexes;
mod per_index;
mod pod_control;
mod pod_failure_policy;
mod rules;
mod success_policy;
mod tracking;

use std::{
    collections::{HashMap, HashSet},
    sync::Arc,
    time::Duration,
};

use k8s_openapi::api::batch::v1::{Job, JobCondition, JobSpec, JobStatus, UncountedTerminatedPods};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kubegen_cache::{DeletedObject, HandlerFns, Lister};
use kubegen_client::{Client, ResourceClient, UpdateOptions};
use kubegen_runtime::EventType;
use kubegen_workqueue::RateLimitingQueue;
use parking_lot::Mutex;

use crate::context::{Context, Runner};
use crate::worker::{self, Next, QueueLoop, Retries};
use crate::workload::events::EventSink;
use crate::workload::expectations::Expectations;
use crate::workload::meta::{describe, fetch_latest, key_of, selector_of, split_key};
use crate::workload::pod_index::{self, Orphans};
use crate::workload::pods;
use crate::workload::shared::{FIELD_MANAGER, register};
use crate::{Result, error::request};
use indexes::{Intervals, completion_index};
use rules::{Backoff, has_tracking_finalizer, phase, spec};

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
    let loops = JobController::new(context).map(|controller| {
        let jobs = controller.clone();
        let job_queue = controller.inner.queue.clone();
        let orphan_queue = controller.inner.orphans.clone();
        vec![
            QueueLoop::new(job_queue, workers, Retries::Forever, move |key: String| {
                let c = jobs.clone();
                async move { c.inner.sync(&key).await }
            }),
            QueueLoop::new(orphan_queue, 1, Retries::Forever, move |key: String| {
                let c = controller.clone();
                async move { c.inner.release_orphan(&key).await.map(|()| Next::Done) }
            }),
        ]
    });
    worker::run("job", context.stop.clone(), loops)
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
    /// With `backoffLimitPerIndex`: the failed indexes.
    failed_indexes: Option<Intervals>,
    /// With `backoffLimitPerIndex`: per pending index, the failed Pod its replacement replaces.
    awaiting: HashMap<usize, Arc<Pod>>,
    finished: Option<JobCondition>,
    backoff: Backoff,
}

impl Inner {
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
            failed_indexes: None,
            awaiting: HashMap::new(),
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
        let policy = job_spec.pod_failure_policy.as_ref();
        let failed = status.failed.unwrap_or(0)
            + count(
                new_failed
                    .iter()
                    .filter(|p| pod_failure_policy::judge(policy, p).counts()),
            )
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
        } else if ctx.finished.is_none()
            && let Some(message) = fail_job_message(&job_spec, &ctx.pods)
        {
            ctx.finished = Some(rules::condition(
                "FailureTarget",
                "True",
                "PodFailurePolicy",
                &message,
                now,
            ));
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
            if per_index::applies(&job_spec) {
                self.fail_indexes(&mut ctx, &job_spec, completions, now);
            }
            if ctx.finished.is_none()
                && let Some(message) = success_policy::met(
                    job_spec.success_policy.as_ref(),
                    completions,
                    &ctx.succeeded_indexes,
                )
            {
                ctx.finished = Some(rules::condition(
                    "SuccessCriteriaMet",
                    "True",
                    "SuccessPolicy",
                    &message,
                    now,
                ));
            }
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

    /// With `backoffLimitPerIndex`: finds the failed indexes, fails the Job when too many
    /// failed (`MaxFailedIndexesExceeded`) or every index is settled and some failed
    /// (`FailedIndexes`), and notes the failed Pods that wait for their replacement.
    fn fail_indexes(
        &self,
        ctx: &mut SyncContext,
        job_spec: &JobSpec,
        completions: usize,
        now: Timestamp,
    ) {
        let failed = per_index::failed_indexes(&ctx.job, &ctx.pods, completions);
        if ctx.finished.is_none() {
            let total = failed.total();
            let max = job_spec
                .max_failed_indexes
                .map(|m| usize::try_from(m).unwrap_or(0));
            let verdict = if max.is_some_and(|max| total > max) {
                Some((
                    "MaxFailedIndexesExceeded",
                    "Job has exceeded the specified maximal number of failed indexes",
                ))
            } else if total > 0 && total + ctx.succeeded_indexes.total() >= completions {
                Some(("FailedIndexes", "Job has failed indexes"))
            } else {
                None
            };
            ctx.finished = verdict.map(|(reason, message)| {
                rules::condition("FailureTarget", "True", reason, message, now)
            });
        }
        let valid = |p: &Pod| {
            let uid = p.metadata.uid.as_deref().unwrap_or_default();
            has_tracking_finalizer(p)
                && !ctx.removing.contains(uid)
                && completion_index(p).is_some_and(|ix| ix < completions)
        };
        let settled = (&ctx.succeeded_indexes, &failed);
        let awaiting =
            per_index::awaiting_replacement(job_spec, &ctx.pods, valid, settled, &ctx.active, now);
        ctx.awaiting = awaiting;
        ctx.failed_indexes = Some(failed);
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
        let selector = selector_of(job, spec(job).selector.as_ref())?;
        let candidates = pod_index::pods_of(&self.pods, job, Orphans::Included);
        let fresh = || fetch_latest(&self.client, job);
        crate::workload::controller_ref::claim(
            &self.client,
            job,
            selector.as_ref(),
            candidates,
            fresh,
        )
        .await
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

/// The time left before `deadline` seconds since `started` pass at `now`.
fn deadline_left(started: Timestamp, deadline: i64, now: Timestamp) -> Duration {
    let total = Duration::from_secs(u64::try_from(deadline).unwrap_or(0));
    let elapsed = Duration::try_from(now.duration_since(started)).unwrap_or(Duration::ZERO);
    total.saturating_sub(elapsed)
}

/// The message of the first failed Pod a `FailJob` rule of the Job's `podFailurePolicy` matches
/// (`getFailJobMessage`).
fn fail_job_message(spec: &JobSpec, pods: &[Arc<Pod>]) -> Option<String> {
    let policy = spec.pod_failure_policy.as_ref()?;
    pods.iter()
        .filter(|p| rules::is_failed(p, spec))
        .find_map(|p| match pod_failure_policy::judge(Some(policy), p) {
            pod_failure_policy::Verdict::FailJob(message) => Some(message),
            _ => None,
        })
}

fn count<T>(items: impl Iterator<Item = T>) -> i32 {
    i32::try_from(items.count()).unwrap_or(i32::MAX)
}
