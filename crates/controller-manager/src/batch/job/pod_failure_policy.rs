//! A Job's `podFailurePolicy`: what a failed Pod means for its Job. The first rule that matches
//! the Pod decides: `FailJob` fails the whole Job at once (reason `PodFailurePolicy`), `Ignore`
//! keeps the failure out of `status.failed` (so out of `backoffLimit`), `Count` counts it as
//! usual, and `FailIndex` counts it and fails its index at once (with `backoffLimitPerIndex`,
//! `per_index.rs`); a Pod no rule matches is counted.
//!
//! Mirrors `pkg/controller/job/pod_failure_policy.go` (`matchPodFailurePolicy`,
//! `matchOnExitCodes`, `matchOnPodConditions`).

use k8s_openapi::api::batch::v1::{
    PodFailurePolicy, PodFailurePolicyOnExitCodesRequirement,
    PodFailurePolicyOnPodConditionsPattern,
};
use k8s_openapi::api::core::v1::{ContainerStatus, Pod, PodCondition};

/// What the policy says of one failed Pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The Job fails, with this message.
    FailJob(String),
    /// The failure is not counted.
    Ignore,
    /// The failure is counted, and its index fails (`FailIndex`).
    FailIndex,
    /// The failure is counted (`Count`, or no rule matched).
    Count,
}

impl Verdict {
    /// Whether the failure counts toward `status.failed`.
    pub(crate) fn counts(&self) -> bool {
        *self != Verdict::Ignore
    }
}

/// The verdict of `policy` (none: every failure counts) on the failed `pod`.
pub(crate) fn judge(policy: Option<&PodFailurePolicy>, pod: &Pod) -> Verdict {
    let Some(policy) = policy else {
        return Verdict::Count;
    };
    let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    for (index, rule) in policy.rules.iter().enumerate() {
        let matched = if let Some(requirement) = &rule.on_exit_codes {
            exited_matching(pod, requirement).map(|container| {
                let code = container
                    .state
                    .as_ref()
                    .and_then(|s| s.terminated.as_ref())
                    .map_or(0, |t| t.exit_code);
                format!(
                    "Container {} for pod {namespace}/{name} failed with exit code {code} \
                     matching {} rule at index {index}",
                    container.name, rule.action
                )
            })
        } else if let Some(patterns) = &rule.on_pod_conditions {
            condition_matching(pod, patterns).map(|condition| {
                format!(
                    "Pod {namespace}/{name} has condition {} matching {} rule at index {index}",
                    condition.type_, rule.action
                )
            })
        } else {
            None
        };
        let Some(message) = matched else {
            continue;
        };
        match rule.action.as_str() {
            "FailJob" => return Verdict::FailJob(message),
            "Ignore" => return Verdict::Ignore,
            "FailIndex" => return Verdict::FailIndex,
            "Count" => return Verdict::Count,
            // An action the API server would not accept: the rule is passed over, as in Go.
            _ => {}
        }
    }
    Verdict::Count
}

/// The first terminated container (then init container) with a non-zero exit code that
/// `requirement` matches.
fn exited_matching<'a>(
    pod: &'a Pod,
    requirement: &PodFailurePolicyOnExitCodesRequirement,
) -> Option<&'a ContainerStatus> {
    let status = pod.status.as_ref()?;
    let lists = [
        status.container_statuses.as_deref(),
        status.init_container_statuses.as_deref(),
    ];
    lists.into_iter().flatten().flatten().find(|container| {
        let Some(code) = container
            .state
            .as_ref()
            .and_then(|s| s.terminated.as_ref())
            .map(|t| t.exit_code)
        else {
            return false;
        };
        let named = requirement
            .container_name
            .as_ref()
            .is_none_or(|wanted| *wanted == container.name);
        let listed = requirement.values.contains(&code);
        let operator_matches = match requirement.operator.as_str() {
            "In" => listed,
            "NotIn" => !listed,
            _ => false,
        };
        named && code != 0 && operator_matches
    })
}

/// The first of the Pod's conditions that one of `patterns` names with its status.
fn condition_matching<'a>(
    pod: &'a Pod,
    patterns: &[PodFailurePolicyOnPodConditionsPattern],
) -> Option<&'a PodCondition> {
    let conditions = pod.status.as_ref()?.conditions.as_deref()?;
    conditions.iter().find(|condition| {
        patterns.iter().any(|pattern| {
            pattern.type_ == condition.type_ && pattern_status(pattern) == condition.status
        })
    })
}

/// The status a pattern wants, `True` when it names none (the API server's default). Read from
/// its JSON form: k8s-openapi types the field `String` up to 1.34 and `Option<String>` after, and
/// this crate builds with any of them.
fn pattern_status(pattern: &PodFailurePolicyOnPodConditionsPattern) -> String {
    serde_json::to_value(pattern)
        .ok()
        .and_then(|v| v.get("status")?.as_str().map(str::to_owned))
        .filter(|status| !status.is_empty())
        .unwrap_or_else(|| "True".to_owned())
}

#[cfg(test)]
#[path = "pod_failure_policy_tests.rs"]
mod tests;
