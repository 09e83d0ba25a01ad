//! The Job controller's pure rules: conditions, how many Pods a Job wants, which Pods count as
//! failed, and the back-off before failed Pods are replaced.
//!
//! Mirrors `pkg/controller/job/job_controller.go` (`newCondition`, `ensureJobConditionStatus`,
//! `isPodFailed`, `pastBackoffLimitOnFailure`, `manageJob`'s `wantActive`) and
//! `backoff_utils.go` (`backoffRecord`, `getRemainingTimeForFailuresCount`,
//! `getFinishedTime`).

use std::time::Duration;

use k8s_openapi::api::batch::v1::{Job, JobCondition, JobSpec};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

/// The finalizer that keeps a Job's Pod until the controller has counted it.
pub(crate) const TRACKING_FINALIZER: &str = "batch.kubernetes.io/job-tracking";

/// The first back-off before a failed Pod is replaced (`DefaultJobPodFailureBackOff`).
const POD_FAILURE_BACKOFF: Duration = Duration::from_secs(10);
/// The longest back-off (`MaxJobPodFailureBackOff`).
const MAX_POD_FAILURE_BACKOFF: Duration = Duration::from_secs(600);

/// The Job's spec, or an empty one.
pub(crate) fn spec(job: &Job) -> JobSpec {
    job.spec.clone().unwrap_or_default()
}

/// The `managedBy` value of Jobs this controller runs.
const JOB_CONTROLLER_NAME: &str = "kubernetes.io/job-controller";

/// Whether the Job's `managedBy` names another controller, which then owns its Pods and status
/// (`managedByExternalController`).
pub(crate) fn managed_elsewhere(job: &Job) -> bool {
    spec(job)
        .managed_by
        .is_some_and(|name| name != JOB_CONTROLLER_NAME)
}

/// Whether the Job has a true `Complete` or `Failed` condition (`util.IsJobFinished`).
pub(crate) fn is_finished(job: &Job) -> bool {
    conditions(job)
        .iter()
        .any(|c| (c.type_ == "Complete" || c.type_ == "Failed") && c.status == "True")
}

/// The Job's conditions.
pub(crate) fn conditions(job: &Job) -> &[JobCondition] {
    job.status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default()
}

/// The true condition of `type_`, if any.
pub(crate) fn true_condition<'a>(job: &'a Job, type_: &str) -> Option<&'a JobCondition> {
    conditions(job)
        .iter()
        .find(|c| c.type_ == type_ && c.status == "True")
}

/// A condition as the controller writes it: probe and transition time both `now`.
pub(crate) fn condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: Timestamp,
) -> JobCondition {
    JobCondition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: Some(reason.to_owned()).filter(|r| !r.is_empty()),
        message: Some(message.to_owned()).filter(|m| !m.is_empty()),
        last_probe_time: Some(Time(now)),
        last_transition_time: Some(Time(now)),
    }
}

/// Sets the condition `type_` to `status` with `reason` and `message`; a missing condition is
/// added only when not `False`. Returns whether the list changed (`ensureJobConditionStatus`).
pub(crate) fn ensure_condition(list: &mut Vec<JobCondition>, wanted: JobCondition) -> bool {
    if let Some(existing) = list.iter_mut().find(|c| c.type_ == wanted.type_) {
        if existing.status != wanted.status
            || existing.reason != wanted.reason
            || existing.message != wanted.message
        {
            *existing = wanted;
            return true;
        }
        return false;
    }
    if wanted.status != "False" {
        list.push(wanted);
        return true;
    }
    false
}

/// `Running`, `Pending`, ...: the Pod's phase.
pub(crate) fn phase(pod: &Pod) -> &str {
    pod.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or_default()
}

/// Whether the Pod carries the tracking finalizer.
pub(crate) fn has_tracking_finalizer(pod: &Pod) -> bool {
    pod.metadata
        .finalizers
        .as_deref()
        .unwrap_or_default()
        .iter()
        .any(|f| f == TRACKING_FINALIZER)
}

/// Whether a failed Pod is replaced only once it has failed, not while it terminates: a
/// `podReplacementPolicy` of `Failed`, or any `podFailurePolicy` (`onlyReplaceFailedPods`).
pub(crate) fn only_replace_failed(spec: &JobSpec) -> bool {
    spec.pod_replacement_policy.as_deref() == Some("Failed") || spec.pod_failure_policy.is_some()
}

/// Whether the Pod counts as failed: `Failed`, or being deleted before it succeeded unless
/// only failed Pods are replaced (`isPodFailed`).
pub(crate) fn is_failed(pod: &Pod, spec: &JobSpec) -> bool {
    if phase(pod) == "Failed" {
        return true;
    }
    if only_replace_failed(spec) {
        return false;
    }
    pod.metadata.deletion_timestamp.is_some() && phase(pod) != "Succeeded"
}

/// Whether the containers of a `restartPolicy: OnFailure` Job's running Pods restarted at least
/// `backoffLimit` times in all (more than 0 when the limit is 0) (`pastBackoffLimitOnFailure`).
pub(crate) fn past_backoff_limit_on_failure(spec: &JobSpec, pods: &[std::sync::Arc<Pod>]) -> bool {
    let restart_policy = spec
        .template
        .spec
        .as_ref()
        .and_then(|s| s.restart_policy.as_deref());
    if restart_policy != Some("OnFailure") {
        return false;
    }
    let restarts: i64 = pods
        .iter()
        .filter(|p| matches!(phase(p), "Running" | "Pending"))
        .filter_map(|p| p.status.as_ref())
        .flat_map(|s| {
            let init = s.init_container_statuses.as_deref().unwrap_or_default();
            let main = s.container_statuses.as_deref().unwrap_or_default();
            init.iter().chain(main).map(|c| i64::from(c.restart_count))
        })
        .sum();
    let limit = i64::from(spec.backoff_limit.unwrap_or(6));
    if limit == 0 {
        restarts > 0
    } else {
        restarts >= limit
    }
}

/// How many Pods should be active (`manageJob`'s `wantActive`): `parallelism`, but no more than
/// the completions left; a Job without `completions` keeps what runs once one Pod succeeded.
pub(crate) fn want_active(spec: &JobSpec, active: i32, succeeded: i32) -> i32 {
    let parallelism = spec.parallelism.unwrap_or(1);
    match spec.completions {
        None if succeeded > 0 => active,
        None => parallelism,
        Some(completions) => (completions - succeeded).min(parallelism).max(0),
    }
}

/// When a finished Pod finished: the last container termination, else when it stopped being
/// ready, else its deletion, else `now` (`getFinishedTime`).
pub(crate) fn finished_time(pod: &Pod, now: Timestamp) -> Timestamp {
    let status = pod.status.as_ref();
    let terminated = status
        .into_iter()
        .flat_map(|s| s.container_statuses.as_deref().unwrap_or_default())
        .filter_map(|c| c.state.as_ref()?.terminated.as_ref()?.finished_at.as_ref())
        .map(|t| t.0)
        .max();
    let unready = || {
        status?
            .conditions
            .as_deref()?
            .iter()
            .find(|c| c.type_ == "Ready" && c.status == "False")?
            .last_transition_time
            .as_ref()
            .map(|t| t.0)
    };
    let deleted = || pod.metadata.deletion_timestamp.as_ref().map(|t| t.0);
    terminated.or_else(unready).or_else(deleted).unwrap_or(now)
}

/// The failures since the last success and when the last of them happened (`backoffRecord`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Backoff {
    pub(crate) failures: u32,
    pub(crate) last_failure: Option<Timestamp>,
}

impl Backoff {
    /// The record after `succeeded` and `failed` Pods newly finished, given as finish times
    /// (`newBackoffRecord`): a success resets it, then failures after the last success count.
    pub(crate) fn after(
        self,
        mut succeeded: Vec<Timestamp>,
        mut failed: Vec<Timestamp>,
    ) -> Backoff {
        succeeded.sort();
        failed.sort();
        let Some(last_success) = succeeded.last().copied() else {
            return match failed.last() {
                None => self,
                Some(last) => Backoff {
                    failures: self.failures + u32::try_from(failed.len()).unwrap_or(u32::MAX),
                    last_failure: Some(*last),
                },
            };
        };
        let later: Vec<_> = failed.iter().filter(|t| **t > last_success).collect();
        Backoff {
            failures: u32::try_from(later.len()).unwrap_or(u32::MAX),
            last_failure: later.last().map(|t| **t),
        }
    }

    /// How long to wait before creating Pods at `now`: 10 s after the first failure, doubling
    /// per further failure up to 10 min, counted from the last failure
    /// (`getRemainingTimeForFailuresCount`).
    pub(crate) fn remaining(&self, now: Timestamp) -> Duration {
        let Some(last) = self.last_failure.filter(|_| self.failures > 0) else {
            return Duration::ZERO;
        };
        let mut backoff = POD_FAILURE_BACKOFF;
        for _ in 1..self.failures {
            backoff *= 2;
            if backoff >= MAX_POD_FAILURE_BACKOFF {
                backoff = MAX_POD_FAILURE_BACKOFF;
                break;
            }
        }
        let elapsed = now.duration_since(last);
        let elapsed = Duration::try_from(elapsed).unwrap_or(Duration::ZERO);
        backoff.saturating_sub(elapsed)
    }
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
