//! Counting finished Pods through `status.uncountedTerminatedPods` and the tracking
//! finalizer, and marking the Job finished only once every Pod is counted.
//!
//! Mirrors `trackJobStatusAndRemoveFinalizers`, `flushUncountedAndRemoveFinalizers`,
//! `cleanUncountedPodsWithoutFinalizers` and `enactJobFinished` of
//! `pkg/controller/job/job_controller.go`.

use std::{collections::HashSet, sync::Arc};

use futures_util::future::join_all;
use k8s_openapi::api::batch::v1::{Job, JobCondition, JobStatus};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kubegen_runtime::EventType;

use super::indexes::completion_index;
use super::rules::{has_tracking_finalizer, phase, spec};
use super::{Inner, MAX_UNCOUNTED, SyncContext, pod_failure_policy, rules};
use crate::Result;

impl Inner {
    /// `trackJobStatusAndRemoveFinalizers`: counts finished Pods through
    /// `uncountedTerminatedPods` and their finalizers, then marks the Job finished.
    pub(super) async fn track(
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
            let settled = ctx.job.metadata.deletion_timestamp.is_some()
                || ctx.finished.is_some()
                || phase(pod) == "Succeeded";
            // With `backoffLimitPerIndex` the last failed Pod of an index keeps its finalizer
            // until its replacement carries its failure count (`canRemoveFinalizer`).
            let awaited = completion_index(pod)
                .and_then(|ix| ctx.awaiting.get(&ix))
                .is_some_and(|p| p.metadata.uid == pod.metadata.uid);
            if !(settled || (failed && !awaited)) {
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
                && pod_failure_policy::judge(job_spec.pod_failure_policy.as_ref(), pod).counts()
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
            let failed = ctx.failed_indexes.as_ref().map(ToString::to_string);
            let status = ctx.status();
            if status.failed_indexes != failed {
                status.failed_indexes = failed;
                needs_flush = true;
            }
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
    pub(super) fn enact_finished(&self, ctx: &mut SyncContext) -> bool {
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
    pub(super) fn record_finished(&self, job: &Job, condition: &JobCondition) {
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
}

impl SyncContext {
    pub(super) fn status(&mut self) -> &mut JobStatus {
        self.job.status.get_or_insert_with(JobStatus::default)
    }

    /// Pods newly `Succeeded` and newly failed: carrying the finalizer, not yet listed as
    /// uncounted, not being released, and for Indexed Jobs with a valid index
    /// (`getNewFinishedPods`).
    pub(super) fn newly_finished(&self, indexed: bool) -> (Vec<Arc<Pod>>, Vec<Arc<Pod>>) {
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
