//! The cronjob controller: creates a Job from a CronJob's `jobTemplate` at each scheduled
//! time, honours `concurrencyPolicy`, `startingDeadlineSeconds` and `suspend`, keeps
//! `status.active`, `lastScheduleTime` and `lastSuccessfulTime`, and deletes finished Jobs
//! beyond the history limits.
//!
//! Mirrors `pkg/controller/cronjob/cronjob_controllerv2.go` and `utils.go` (v1.36).
//!
//! # One sync
//! 1. Delete the oldest finished Jobs beyond `successfulJobsHistoryLimit` /
//!    `failedJobsHistoryLimit` (`SuccessfulDelete`, "Deleted job NAME").
//! 2. Reconcile `status.active` with the Jobs the CronJob controls: finished ones leave it
//!    (`SawCompletedJob`), vanished ones too (`MissingJob`), unknown running ones are reported
//!    (`UnexpectedJob`); `lastSuccessfulTime` follows the latest completion.
//! 3. Unless being deleted, suspended, or its schedule or zone is invalid: find the most recent
//!    scheduled time not yet run; too late for `startingDeadlineSeconds` (`MissSchedule`),
//!    `Forbid` with a Job running (`JobAlreadyActive`), or `Replace` (delete the running ones),
//!    then create the Job `<name>-<minutes since the epoch>` (`SuccessfulCreate`,
//!    "Created job NAME") and add it to `status.active`.
//! 4. Write the status once if anything changed, and look again just after the next time.
//!
//! The time comes from the manager's [`Clock`](crate::Clock), so a test can stand just before
//! a scheduled minute instead of waiting for it.

mod schedule;

use std::{sync::Arc, time::Duration};

use k8s_openapi::api::batch::v1::{CronJob, CronJobSpec, CronJobStatus, Job};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube_core::Selector;
use kubegen_cache::{DeletedObject, HandlerFns, Lister};
use kubegen_client::{
    Client, CreateOptions, DeleteOptions, GetOptions, PropagationPolicy, ResourceClient,
    UpdateOptions,
};
use kubegen_runtime::EventType;
use kubegen_workqueue::RateLimitingQueue;

use crate::context::{Context, Runner};
use crate::options::Clock;
use crate::worker::{self, Next, QueueLoop, Retries};
use crate::workload::events::EventSink;
use crate::workload::meta::{
    controller_of, controller_ref, describe, fetch_latest, key_of, split_key,
};
use crate::workload::shared::{FIELD_MANAGER, api_message, namespace_terminating, register};
use crate::workload::versioned::Field;
use crate::{Result, error::request};
use schedule::{Schedule, ScheduleError};

/// The annotation a created Job carries with its scheduled time.
const SCHEDULED_TIMESTAMP: &str = "batch.kubernetes.io/cronjob-scheduled-timestamp";

/// Registers the cronjob controller on the manager's shared informers (CronJobs, Jobs); the
/// runner works its queue with `workers` workers (`--concurrent-cron-job-syncs`, 5) until the
/// manager stops, reading the time from `clock`.
pub(crate) fn start(context: &Context, workers: usize, clock: Clock) -> Runner {
    let loops = CronJobController::new(context, clock).map(|controller| {
        let queue = controller.inner.queue.clone();
        vec![QueueLoop::new(
            queue,
            workers,
            Retries::Forever,
            move |key: String| {
                let c = controller.clone();
                async move { c.inner.sync(&key).await }
            },
        )]
    });
    worker::run("cronjob", context.stop.clone(), loops)
}

/// The CronJob controller; cheap to clone.
#[derive(Clone)]
struct CronJobController {
    inner: Arc<Inner>,
}

struct Inner {
    client: Client,
    cronjobs: Lister<CronJob>,
    jobs: Lister<Job>,
    queue: RateLimitingQueue<String>,
    events: EventSink,
    clock: Clock,
}

fn spec_of(cronjob: &CronJob) -> CronJobSpec {
    cronjob.spec.value().cloned().unwrap_or_default()
}

impl CronJobController {
    fn new(context: &Context, clock: Clock) -> Result<Self> {
        let cronjobs = context.factory.informer::<CronJob>();
        let jobs = context.factory.informer::<Job>();
        let client = context.client.clone();
        let inner = Arc::new(Inner {
            events: EventSink::new(client.clone(), "cronjob-controller"),
            client,
            cronjobs: cronjobs.lister(),
            jobs: jobs.lister(),
            queue: worker::queue("cronjob"),
            clock,
        });
        let (a, u, d) = (inner.clone(), inner.clone(), inner.clone());
        register(
            &cronjobs,
            HandlerFns::new()
                .on_add(move |cj: &Arc<CronJob>, _| a.queue.add(key_of(cj.as_ref())))
                .on_update(move |old: &Arc<CronJob>, new: &Arc<CronJob>| u.update_cronjob(old, new))
                .on_delete(move |gone: &DeletedObject<CronJob>| {
                    d.queue.add(key_of(gone.object().as_ref()))
                }),
        )?;
        let (a, u, d) = (inner.clone(), inner.clone(), inner.clone());
        register(
            &jobs,
            HandlerFns::new()
                .on_add(move |job: &Arc<Job>, _| a.enqueue_owner(job))
                .on_update(move |old: &Arc<Job>, new: &Arc<Job>| {
                    if old.metadata.resource_version != new.metadata.resource_version {
                        if controller_of(old.as_ref()) != controller_of(new.as_ref()) {
                            u.enqueue_owner(old);
                        }
                        u.enqueue_owner(new);
                    }
                })
                .on_delete(move |gone: &DeletedObject<Job>| d.enqueue_owner(gone.object())),
        )?;
        Ok(Self { inner })
    }
}

impl Inner {
    /// Queues the CronJob controlling `job`, if it is cached with the same UID.
    fn enqueue_owner(&self, job: &Job) {
        let Some(r) = controller_of(job).filter(|r| r.kind == "CronJob") else {
            return;
        };
        let owner = self
            .cronjobs
            .get(job.metadata.namespace.as_deref(), &r.name);
        if let Some(cj) = owner.filter(|c| c.metadata.uid.as_deref() == Some(r.uid.as_str())) {
            self.queue.add(key_of(cj.as_ref()));
        }
    }

    /// A changed schedule or zone: look again at the new next time (`updateCronJob`).
    fn update_cronjob(&self, old: &CronJob, new: &CronJob) {
        let (old_spec, new_spec) = (spec_of(old), spec_of(new));
        if old_spec.schedule == new_spec.schedule && old_spec.time_zone == new_spec.time_zone {
            return self.queue.add(key_of(new));
        }
        match Schedule::parse(&new_spec.schedule, new_spec.time_zone.as_deref()) {
            Ok(schedule) => {
                let (last, created) = times(new);
                let wait = schedule::next_after(&schedule, last, created, self.clock.now());
                self.queue.add_after(key_of(new), wait);
            }
            Err(_) => {
                let message = format!("unparseable schedule for cronjob: {}", new_spec.schedule);
                self.events.record(
                    new,
                    EventType::Warning,
                    "UnParseableCronJobSchedule",
                    message,
                );
            }
        }
    }

    /// `sync`: one CronJob.
    async fn sync(&self, key: &str) -> Result<Next> {
        let (namespace, name) = split_key(key);
        let Some(cached) = self.cronjobs.get(Some(namespace), name) else {
            return Ok(Next::Done);
        };
        let jobs: Vec<Arc<Job>> = self
            .jobs
            .namespaced(namespace)
            .list(&Selector::default())
            .into_iter()
            .filter(|j| controller_of(j.as_ref()).is_some_and(|r| r.name == name))
            .collect();
        let mut cronjob = (*cached).clone();
        let cleaned = self.clean_up_finished(&mut cronjob, &jobs).await;
        let outcome = self.sync_cronjob(&mut cronjob, &jobs).await;
        let changed = cleaned || outcome.as_ref().is_ok_and(|(_, changed)| *changed);
        if changed {
            ResourceClient::<CronJob>::namespaced(self.client.clone(), namespace)
                .update_status(
                    &cronjob,
                    &UpdateOptions::default().field_manager(FIELD_MANAGER),
                )
                .await
                .map_err(request(format!("update status of {}", describe(&cronjob))))?;
        }
        match outcome {
            Ok((Some(wait), _)) => Ok(Next::After(wait)),
            Ok((None, _)) => Ok(Next::Done),
            Err(e) => Err(e),
        }
    }

    /// `syncCronJob`: returns when to look again and whether the status changed.
    async fn sync_cronjob(
        &self,
        cronjob: &mut CronJob,
        jobs: &[Arc<Job>],
    ) -> Result<(Option<Duration>, bool)> {
        let now = self.clock.now();
        let namespace = cronjob.metadata.namespace.clone().unwrap_or_default();
        let mut changed = false;
        for job in jobs {
            let job_uid = job.metadata.uid.as_deref().unwrap_or_default();
            let listed = is_active(cronjob, job_uid);
            let job_name = job.metadata.name.as_deref().unwrap_or_default();
            match finished_type(job) {
                None if !listed => {
                    let fresh = fetch_latest(&self.client, &*cronjob).await?;
                    if is_active(&fresh, job_uid) {
                        *cronjob = fresh;
                        continue;
                    }
                    let message = format!(
                        "Saw a job that the controller did not create or forgot: {job_name}"
                    );
                    self.events
                        .record(&*cronjob, EventType::Warning, "UnexpectedJob", message);
                }
                None => {}
                Some(condition) => {
                    if listed {
                        remove_active(cronjob, job_uid);
                        let message =
                            format!("Saw completed job: {job_name}, condition: {condition}");
                        self.events.record(
                            &*cronjob,
                            EventType::Normal,
                            "SawCompletedJob",
                            message,
                        );
                        changed = true;
                    }
                    let completed = job.status.as_ref().and_then(|s| s.completion_time.clone());
                    if condition == "Complete"
                        && let Some(completed) = completed
                    {
                        let status = cronjob.status.get_or_insert_with(CronJobStatus::default);
                        if status
                            .last_successful_time
                            .as_ref()
                            .is_none_or(|t| completed.0 > t.0)
                        {
                            status.last_successful_time = Some(completed);
                            changed = true;
                        }
                    }
                }
            }
        }
        let active: Vec<ObjectReference> = active_refs(cronjob).to_vec();
        for reference in active {
            let reference_uid = reference.uid.as_deref().unwrap_or_default();
            if jobs
                .iter()
                .any(|j| j.metadata.uid.as_deref() == Some(reference_uid))
            {
                continue;
            }
            let job_name = reference.name.clone().unwrap_or_default();
            match self
                .job_client(&namespace)
                .get(&job_name, &GetOptions::default())
                .await
            {
                Err(e) if e.is_not_found() => {
                    let message = format!("Active job went missing: {job_name}");
                    self.events
                        .record(&*cronjob, EventType::Normal, "MissingJob", message);
                    remove_active(cronjob, reference_uid);
                    changed = true;
                }
                Err(e) => return Err(request(format!("get Job {namespace}/{job_name}"))(e)),
                Ok(_) => {}
            }
        }
        if cronjob.metadata.deletion_timestamp.is_some() {
            return Ok((None, changed));
        }
        let spec = spec_of(cronjob);
        let parsed = Schedule::parse(&spec.schedule, spec.time_zone.as_deref());
        if let Err(ScheduleError::UnknownTimeZone(detail)) = &parsed {
            let message = format!("invalid timeZone: {detail}");
            self.events
                .record(&*cronjob, EventType::Warning, "UnknownTimeZone", message);
            return Ok((None, changed));
        }
        if spec.suspend == Some(true) {
            return Ok((None, changed));
        }
        if spec.schedule.contains("TZ") {
            let message = format!(
                "CRON_TZ or TZ used in schedule {:?} is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details",
                spec.schedule
            );
            self.events.record(
                &*cronjob,
                EventType::Warning,
                "UnsupportedSchedule",
                message,
            );
        }
        let schedule = match parsed {
            Ok(schedule) => schedule,
            Err(ScheduleError::Unparseable(detail) | ScheduleError::UnknownTimeZone(detail)) => {
                let message = format!("unparseable schedule: {:?} : {detail}", spec.schedule);
                self.events.record(
                    &*cronjob,
                    EventType::Warning,
                    "UnparseableSchedule",
                    message,
                );
                return Ok((None, changed));
            }
        };
        let (last, created) = times(cronjob);
        let next = || Some(schedule::next_after(&schedule, last, created, now));
        let recent = match schedule::most_recent(
            &schedule,
            last.unwrap_or(created),
            spec.starting_deadline_seconds,
            now,
        ) {
            Ok(recent) => recent,
            Err(detail) => {
                let message = format!("invalid schedule: {} : {detail}", spec.schedule);
                self.events
                    .record(&*cronjob, EventType::Warning, "InvalidSchedule", message);
                return Ok((None, changed));
            }
        };
        let Some(scheduled) = recent.most_recent.filter(|t| *t <= now) else {
            return Ok((next(), changed));
        };
        if schedule::too_many_missed(&recent) {
            let message = "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew";
            self.events.record(
                &*cronjob,
                EventType::Warning,
                "TooManyMissedTimes",
                message.into(),
            );
        }
        if let Some(deadline) = spec.starting_deadline_seconds {
            let limit = scheduled + SignedDuration::from_secs(deadline);
            if limit < now {
                let when = scheduled.strftime("%a, %d %b %Y %H:%M:%S %z");
                let message = format!("Missed scheduled time to start a job: {when}");
                self.events
                    .record(&*cronjob, EventType::Warning, "MissSchedule", message);
                return Ok((next(), changed));
            }
        }
        let cronjob_name = cronjob.metadata.name.clone().unwrap_or_default();
        let job_name = schedule::job_name(&cronjob_name, scheduled);
        let already = active_refs(cronjob)
            .iter()
            .any(|r| r.name.as_deref() == Some(&job_name))
            || last.is_some_and(|t| t == scheduled);
        if already {
            return Ok((next(), changed));
        }
        let policy = spec.concurrency_policy.as_deref().unwrap_or("Allow");
        if policy == "Forbid" && !active_refs(cronjob).is_empty() {
            let message = "Not starting job because prior execution is running and concurrency policy is Forbid";
            self.events.record(
                &*cronjob,
                EventType::Normal,
                "JobAlreadyActive",
                message.into(),
            );
            return Ok((next(), changed));
        }
        if policy == "Replace" {
            for reference in active_refs(cronjob).to_vec() {
                let name = reference.name.clone().unwrap_or_default();
                let job = match self
                    .job_client(&namespace)
                    .get(&name, &GetOptions::default())
                    .await
                {
                    Ok(job) => job,
                    Err(e) => {
                        let message = format!("Get job: {}", api_message(&e));
                        self.events
                            .record(&*cronjob, EventType::Warning, "FailedGet", message);
                        return Err(request(format!("get Job {namespace}/{name}"))(e));
                    }
                };
                self.delete_job(cronjob, &job).await?;
                changed = true;
            }
        }
        let job = job_from_template(cronjob, &spec, &schedule, &job_name, scheduled);
        let created = match self
            .job_client(&namespace)
            .create(&job, &CreateOptions::default().field_manager(FIELD_MANAGER))
            .await
        {
            Ok(created) => {
                let message = format!("Created job {job_name}");
                self.events
                    .record(&*cronjob, EventType::Normal, "SuccessfulCreate", message);
                created
            }
            Err(e) if e.is_already_exists() => {
                let existing = self
                    .job_client(&namespace)
                    .get(&job_name, &GetOptions::default())
                    .await
                    .map_err(request(format!("get Job {namespace}/{job_name}")))?;
                let ours = controller_of(&existing)
                    .is_some_and(|r| Some(&r.uid) == cronjob.metadata.uid.as_ref());
                if !ours
                    || is_active(
                        cronjob,
                        existing.metadata.uid.as_deref().unwrap_or_default(),
                    )
                {
                    return Ok((None, changed));
                }
                existing
            }
            Err(e) => {
                if !namespace_terminating(&e) {
                    let message = format!("Error creating job: {}", api_message(&e));
                    self.events
                        .record(&*cronjob, EventType::Warning, "FailedCreate", message);
                }
                return Err(request(format!("create Job for {}", describe(cronjob)))(e));
            }
        };
        let status = cronjob.status.get_or_insert_with(CronJobStatus::default);
        status
            .active
            .get_or_insert_with(Vec::new)
            .push(reference_to(&created));
        status.last_schedule_time = Some(Time(scheduled));
        let (last, created_at) = times(cronjob);
        Ok((
            Some(schedule::next_after(&schedule, last, created_at, now)),
            true,
        ))
    }

    /// Deletes the oldest finished Jobs beyond the history limits (`cleanupFinishedJobs`).
    /// Returns whether the status changed.
    async fn clean_up_finished(&self, cronjob: &mut CronJob, jobs: &[Arc<Job>]) -> bool {
        let spec = spec_of(cronjob);
        let mut changed = false;
        for (kind, limit) in [
            ("Complete", spec.successful_jobs_history_limit),
            ("Failed", spec.failed_jobs_history_limit),
        ] {
            let Some(limit) = limit else { continue };
            let mut finished: Vec<&Arc<Job>> = jobs
                .iter()
                .filter(|j| finished_type(j) == Some(kind))
                .collect();
            let extra = finished
                .len()
                .saturating_sub(usize::try_from(limit).unwrap_or(0));
            if extra == 0 {
                continue;
            }
            finished.sort_by(|a, b| oldest_first(a, b));
            for job in finished.into_iter().take(extra) {
                changed |= self.delete_job(cronjob, job).await.is_ok();
            }
        }
        changed
    }

    /// Deletes `job` with its Pods in the background and drops it from `status.active`
    /// (`deleteJob`).
    async fn delete_job(&self, cronjob: &mut CronJob, job: &Job) -> Result<()> {
        let namespace = job.metadata.namespace.as_deref().unwrap_or_default();
        let name = job.metadata.name.as_deref().unwrap_or_default();
        let options = DeleteOptions::default().propagation_policy(PropagationPolicy::Background);
        if let Err(e) = self.job_client(namespace).delete(name, &options).await {
            let message = format!("Deleted job: {}", api_message(&e));
            self.events
                .record(&*cronjob, EventType::Warning, "FailedDelete", message);
            return Err(request(format!("delete Job {namespace}/{name}"))(e));
        }
        remove_active(cronjob, job.metadata.uid.as_deref().unwrap_or_default());
        let message = format!("Deleted job {name}");
        self.events
            .record(&*cronjob, EventType::Normal, "SuccessfulDelete", message);
        Ok(())
    }

    fn job_client(&self, namespace: &str) -> ResourceClient<Job> {
        ResourceClient::namespaced(self.client.clone(), namespace)
    }
}

/// The last schedule time and the creation time (the start of the first search).
fn times(cronjob: &CronJob) -> (Option<Timestamp>, Timestamp) {
    let last = cronjob
        .status
        .as_ref()
        .and_then(|s| s.last_schedule_time.as_ref())
        .map(|t| t.0);
    let created = cronjob
        .metadata
        .creation_timestamp
        .as_ref()
        .map_or(Timestamp::UNIX_EPOCH, |t| t.0);
    (last, created)
}

fn active_refs(cronjob: &CronJob) -> &[ObjectReference] {
    cronjob
        .status
        .as_ref()
        .and_then(|s| s.active.as_deref())
        .unwrap_or_default()
}

fn is_active(cronjob: &CronJob, uid: &str) -> bool {
    active_refs(cronjob)
        .iter()
        .any(|r| r.uid.as_deref() == Some(uid))
}

/// Drops the Job `uid` from `status.active` (an empty list is dropped too, as Go omits it).
fn remove_active(cronjob: &mut CronJob, uid: &str) {
    if let Some(status) = cronjob.status.as_mut()
        && let Some(active) = status.active.as_mut()
    {
        active.retain(|r| r.uid.as_deref() != Some(uid));
        if active.is_empty() {
            status.active = None;
        }
    }
}

/// `Complete` or `Failed` when the Job finished (`getFinishedStatus`).
fn finished_type(job: &Job) -> Option<&'static str> {
    let conditions = job
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    conditions
        .iter()
        .filter(|c| c.status == "True")
        .find_map(|c| match c.type_.as_str() {
            "Complete" => Some("Complete"),
            "Failed" => Some("Failed"),
            _ => None,
        })
}

/// Jobs without a start time last, then by start time, then by name (`byJobStartTime`).
fn oldest_first(a: &Job, b: &Job) -> std::cmp::Ordering {
    let start = |j: &Job| {
        j.status
            .as_ref()
            .and_then(|s| s.start_time.as_ref())
            .map(|t| t.0)
    };
    match (start(a), start(b)) {
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (Some(_), None) => std::cmp::Ordering::Less,
        (x, y) => x
            .cmp(&y)
            .then_with(|| a.metadata.name.cmp(&b.metadata.name)),
    }
}

/// A reference to a created Job as `status.active` holds it (`ref.GetReference`).
fn reference_to(job: &Job) -> ObjectReference {
    ObjectReference {
        api_version: Some("batch/v1".into()),
        kind: Some("Job".into()),
        name: job.metadata.name.clone(),
        namespace: job.metadata.namespace.clone(),
        uid: job.metadata.uid.clone(),
        resource_version: job.metadata.resource_version.clone(),
        ..ObjectReference::default()
    }
}

/// The Job for the time `scheduled` (`getJobFromTemplate2`): the template's labels,
/// annotations (plus the scheduled timestamp) and spec, named `job_name`, controlled by the
/// CronJob.
fn job_from_template(
    cronjob: &CronJob,
    spec: &CronJobSpec,
    schedule: &Schedule,
    job_name: &str,
    scheduled: Timestamp,
) -> Job {
    let template = spec.job_template.metadata.clone().unwrap_or_default();
    let mut annotations = template.annotations.unwrap_or_default();
    annotations.insert(
        SCHEDULED_TIMESTAMP.into(),
        schedule::scheduled_stamp(schedule, scheduled),
    );
    Job {
        metadata: ObjectMeta {
            name: Some(job_name.to_owned()),
            labels: template.labels.filter(|l| !l.is_empty()),
            annotations: Some(annotations),
            owner_references: Some(vec![controller_ref(cronjob)]),
            ..ObjectMeta::default()
        },
        spec: spec.job_template.spec.clone(),
        status: None,
    }
}
