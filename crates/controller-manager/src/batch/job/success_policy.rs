//! An Indexed Job's `successPolicy`: the Job succeeds once the succeeded indexes meet one of its
//! rules, before every index has succeeded; its remaining Pods are then deleted. A rule names
//! `succeededIndexes` (all of them must succeed, or `succeededCount` of them) or only a
//! `succeededCount` of any indexes.
//!
//! Mirrors `pkg/controller/job/success_policy.go` (`matchSuccessPolicy`,
//! `matchSucceededIndexesRule`).

use k8s_openapi::api::batch::v1::SuccessPolicy;

use super::indexes::Intervals;

/// The message of the `SuccessCriteriaMet` condition (reason `SuccessPolicy`) when `succeeded`
/// meets a rule of `policy`; `None` otherwise.
pub(crate) fn met(
    policy: Option<&SuccessPolicy>,
    completions: usize,
    succeeded: &Intervals,
) -> Option<String> {
    let policy = policy?;
    if succeeded.total() == 0 {
        return None;
    }
    let wanted_count = |count: Option<i32>| count.and_then(|c| usize::try_from(c).ok());
    policy.rules.iter().enumerate().find_map(|(index, rule)| {
        let matched = match &rule.succeeded_indexes {
            Some(text) => {
                let required = Intervals::parse(text, completions);
                // A rule whose indexes do not parse (or lie beyond `completions`) is skipped.
                required.total() > 0 && {
                    let contained = required.iter().filter(|ix| succeeded.has(*ix)).count();
                    contained == required.total()
                        || wanted_count(rule.succeeded_count).is_some_and(|n| contained >= n)
                }
            }
            None => wanted_count(rule.succeeded_count).is_some_and(|n| succeeded.total() >= n),
        };
        matched.then(|| format!("Matched rules at index {index}"))
    })
}

#[cfg(test)]
#[path = "success_policy_tests.rs"]
mod tests;
