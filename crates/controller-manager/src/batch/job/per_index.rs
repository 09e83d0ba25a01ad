//! `backoffLimitPerIndex`: an Indexed Job whose indexes fail on their own. Each index may fail
//! `backoffLimitPerIndex` times before it is marked failed (`status.failedIndexes`); the Job
//! goes on with its other indexes, and fails once every index succeeded or failed
//! (`FailedIndexes`), or as soon as more than `maxFailedIndexes` failed
//! (`MaxFailedIndexesExceeded`). A `FailIndex` rule of the `podFailurePolicy` fails the index
//! at once.
//!
//! Mirrors the per-index parts of `pkg/controller/job/indexed_job_utils.go`
//! (`calculateFailedIndexes`, `isIndexFailed`, `getPodsWithDelayedDeletionPerIndex`,
//! `getNewIndexFailureCounts`, the failure-count annotations) and `getRemainingTimePerIndex`
//! of `backoff_utils.go`.
//!
//! # Rules
//! - A replacement Pod carries its index's failures so far in
//!   `batch.kubernetes.io/job-index-failure-count` (failures the policy ignored in
//!   `...-ignored-failure-count`), taken from the failed Pod it replaces plus that Pod's own.
//!   So the failed Pod keeps its tracking finalizer (and stays) until its replacement exists.
//! - An index fails when a failed Pod of it is counted (not ignored by the policy) and its
//!   failure count has reached `backoffLimitPerIndex`, or a `FailIndex` rule matches it.
//! - Replacements wait per index: 10 s after the first failure, doubling per further failure
//!   (ignored ones too) up to 10 min, from when the last failed Pod finished. The Job-wide
//!   back-off does not apply.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;

use super::indexes::{Intervals, completion_index};
use super::pod_failure_policy::{self, Verdict};
use super::rules::{self, Backoff, has_tracking_finalizer};

/// The annotation counting an index's failures before the Pod that carries it.
pub(crate) const FAILURE_COUNT: &str = "batch.kubernetes.io/job-index-failure-count";
/// The annotation counting an index's failures the `podFailurePolicy` ignored.
pub(crate) const IGNORED_FAILURE_COUNT: &str =
    "batch.kubernetes.io/job-index-ignored-failure-count";

/// Whether the Job fails its indexes one by one (`hasBackoffLimitPerIndex`).
pub(crate) fn applies(spec: &JobSpec) -> bool {
    spec.backoff_limit_per_index.is_some()
}

/// A non-negative count annotation of `pod`; 0 when absent, malformed, negative or too large
/// (`parseInt32`).
fn annotation_count(pod: &Pod, key: &str) -> i32 {
    pod.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .and_then(|v| v.parse::<i32>().ok())
        .filter(|n| *n >= 0)
        .unwrap_or(0)
}

/// Whether `pod` fails its index (`isIndexFailed`).
pub(crate) fn fails_index(spec: &JobSpec, pod: &Pod) -> bool {
    if !rules::is_failed(pod, spec) {
        return false;
    }
    let counted = match pod_failure_policy::judge(spec.pod_failure_policy.as_ref(), pod) {
        Verdict::FailIndex => return true,
        verdict => verdict.counts(),
    };
    counted && annotation_count(pod, FAILURE_COUNT) >= spec.backoff_limit_per_index.unwrap_or(0)
}

/// The failed indexes: those in `status.failedIndexes` plus the indexes of Pods still carrying
/// the finalizer that fail theirs (`calculateFailedIndexes`).
pub(crate) fn failed_indexes(job: &Job, pods: &[Arc<Pod>], completions: usize) -> Intervals {
    let spec = rules::spec(job);
    let text = job
        .status
        .as_ref()
        .and_then(|s| s.failed_indexes.as_deref())
        .unwrap_or_default();
    let new = pods
        .iter()
        .filter(|p| has_tracking_finalizer(p) && fails_index(&spec, p))
        .filter_map(|p| completion_index(p))
        .filter(|ix| *ix < completions);
    Intervals::parse(text, completions).with(new.collect::<Vec<_>>())
}

/// Per index neither succeeded, failed nor running: its last failed Pod, whose finalizer (and
/// so whose removal) waits until a replacement carries its failure count
/// (`getPodsWithDelayedDeletionPerIndex`). `valid` says which Pods are not counted yet.
pub(crate) fn awaiting_replacement(
    spec: &JobSpec,
    pods: &[Arc<Pod>],
    valid: impl Fn(&Pod) -> bool,
    settled: (&Intervals, &Intervals),
    active: &[Arc<Pod>],
    now: Timestamp,
) -> HashMap<usize, Arc<Pod>> {
    let (succeeded, failed) = settled;
    let running: Vec<usize> = active.iter().filter_map(|p| completion_index(p)).collect();
    let mut last: HashMap<usize, Arc<Pod>> = HashMap::new();
    for pod in pods
        .iter()
        .filter(|p| valid(p) && rules::is_failed(p, spec))
    {
        let Some(ix) = completion_index(pod) else {
            continue;
        };
        if succeeded.has(ix) || failed.has(ix) || running.contains(&ix) {
            continue;
        }
        let later = last.get(&ix).is_none_or(|known| {
            absolute_failures(known) <= absolute_failures(pod)
                && rules::finished_time(pod, now) >= rules::finished_time(known, now)
        });
        if later {
            last.insert(ix, pod.clone());
        }
    }
    last
}

/// Every failure of the Pod's index before it, counted or ignored.
fn absolute_failures(pod: &Pod) -> i32 {
    annotation_count(pod, FAILURE_COUNT)
        .saturating_add(annotation_count(pod, IGNORED_FAILURE_COUNT))
}

/// The failure-count annotations of the Pod that replaces `replaced` (none: the index's first
/// Pod), as `(key, value)` pairs (`getNewIndexFailureCounts`, `addIndexFailureCountAnnotation`).
pub(crate) fn replacement_annotations(
    spec: &JobSpec,
    replaced: Option<&Pod>,
) -> Vec<(&'static str, String)> {
    let (mut failures, mut ignored) = replaced.map_or((0, 0), |pod| {
        (
            annotation_count(pod, FAILURE_COUNT),
            annotation_count(pod, IGNORED_FAILURE_COUNT),
        )
    });
    if let Some(pod) = replaced {
        if pod_failure_policy::judge(spec.pod_failure_policy.as_ref(), pod).counts() {
            failures = failures.saturating_add(1);
        } else {
            ignored = ignored.saturating_add(1);
        }
    }
    let mut out = vec![(FAILURE_COUNT, failures.to_string())];
    if ignored > 0 {
        out.push((IGNORED_FAILURE_COUNT, ignored.to_string()));
    }
    out
}

/// How long the replacement of `replaced` must still wait at `now`
/// (`getRemainingTimePerIndex`).
pub(crate) fn wait_before_replacing(replaced: Option<&Pod>, now: Timestamp) -> Duration {
    let Some(pod) = replaced else {
        return Duration::ZERO;
    };
    let record = Backoff {
        failures: u32::try_from(absolute_failures(pod)).unwrap_or(0) + 1,
        last_failure: Some(rules::finished_time(pod, now)),
    };
    record.remaining(now)
}

#[cfg(test)]
#[path = "per_index_tests.rs"]
mod tests;
