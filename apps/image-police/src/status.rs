//! Computing a WhiteList's `status` from what one reconcile did. Pure: the reconciler passes in
//! the previous status, the outcome and the current time, and writes the result only if it differs
//! (so an idle controller writes nothing).
//!
//! # What the status says
//! - `observedGeneration`: the `metadata.generation` this status describes; a reader compares it
//!   with `generation` to know whether the controller has seen the latest spec.
//! - A `Ready` condition (Kubernetes API conventions): `True`/`Enforcing` while the namespace's
//!   policy (this list with the others of its namespace) is enforced, `False` otherwise, with
//!   reason `InvalidSpec` (this list is invalid, so enforcement in its namespace is paused),
//!   `EnforcementPaused` (another list of the namespace is invalid) or `ProtectedNamespace`. Its
//!   `lastTransitionTime` changes only when `status` flips, never on a mere message change.
//! - `violationsHandled`: how many offending containers have been found in Deployments of the
//!   namespace that were deleted while this list was part of its policy (monotonic).
//! - `lastViolations`: the most recent [`MAX_LAST_VIOLATIONS`], newest first (as the API documents).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kubegen_api::police::v1beta1::{Violation, WhiteListCondition, WhiteListStatus};

use crate::policy::ContainerViolation;

/// The condition type this controller owns.
pub const READY: &str = "Ready";
/// How many recent violations `status.lastViolations` keeps.
pub const MAX_LAST_VIOLATIONS: usize = 10;

/// Whether the WhiteList is enforced, as shown by the `Ready` condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Readiness {
    /// The list is valid and every Deployment in the namespace has been checked against it.
    Enforcing,
    /// The spec cannot be turned into a policy (the message lists every problem), so enforcement
    /// in the namespace is paused until it is fixed.
    InvalidSpec(String),
    /// This list is valid, but enforcement in its namespace is paused because these other lists
    /// of the namespace are invalid.
    Paused(Vec<String>),
    /// The list lives in a namespace the controller does not act in.
    ProtectedNamespace(String),
}

impl Readiness {
    /// `(status, reason, message)` of the `Ready` condition.
    fn condition(&self) -> (&'static str, &'static str, String) {
        match self {
            Readiness::Enforcing => (
                "True",
                "Enforcing",
                "Deployments running images not on this list are deleted".to_owned(),
            ),
            Readiness::InvalidSpec(problems) => (
                "False",
                "InvalidSpec",
                format!(
                    "{problems}; nothing in this namespace is enforced until this WhiteList is \
                     fixed or deleted"
                ),
            ),
            Readiness::Paused(invalid) => (
                "False",
                "EnforcementPaused",
                format!(
                    "nothing in this namespace is enforced until every WhiteList there is valid; \
                     invalid: {}",
                    invalid.join(", ")
                ),
            ),
            Readiness::ProtectedNamespace(namespace) => (
                "False",
                "ProtectedNamespace",
                format!(
                    "image-police does not act in namespace {namespace:?} (its own or kube-system); \
                     start it with --allow-protected-namespaces to change that"
                ),
            ),
        }
    }
}

/// One `status.lastViolations` entry for a container of a deleted Deployment.
pub fn violation_record(deployment: &str, found: &ContainerViolation, now: &Time) -> Violation {
    let container = if found.init {
        format!("{} (init)", found.container)
    } else {
        found.container.clone()
    };
    Violation {
        deployment: deployment.to_owned(),
        container,
        image: found.image.clone(),
        reason: found.denial.reason().to_owned(),
        time: Some(now.clone()),
    }
}

/// The status after a reconcile of the WhiteList at `generation` that ended in `readiness` and
/// handled `new_violations` (containers of Deployments it deleted).
pub fn next_status(
    previous: Option<&WhiteListStatus>,
    generation: Option<i64>,
    readiness: &Readiness,
    new_violations: Vec<Violation>,
    now: &Time,
) -> WhiteListStatus {
    let previous = previous.cloned().unwrap_or_default();
    let handled = previous.violations_handled.unwrap_or(0)
        + i64::try_from(new_violations.len()).unwrap_or(i64::MAX);
    // Newest first: this reconcile's violations (latest found last, so reversed), then the old.
    let mut last_violations: Vec<Violation> = new_violations.into_iter().rev().collect();
    last_violations.extend(previous.last_violations);
    last_violations.truncate(MAX_LAST_VIOLATIONS);

    let (status, reason, message) = readiness.condition();
    let old_ready = previous.conditions.iter().find(|c| c.type_ == READY);
    let last_transition_time = match old_ready {
        Some(old) if old.status == status => old.last_transition_time.clone().or(Some(now.clone())),
        _ => Some(now.clone()),
    };
    let ready = WhiteListCondition {
        type_: READY.to_owned(),
        status: status.to_owned(),
        reason: Some(reason.to_owned()),
        message: Some(message),
        last_transition_time,
    };
    // Conditions owned by someone else are kept as they are, in place.
    let mut conditions: Vec<WhiteListCondition> = previous.conditions;
    match conditions.iter_mut().find(|c| c.type_ == READY) {
        Some(slot) => *slot = ready,
        None => conditions.push(ready),
    }
    WhiteListStatus {
        observed_generation: generation,
        conditions,
        violations_handled: Some(handled),
        last_violations,
    }
}

/// Whether writing `next` would change what the API server holds. Compared through JSON so the
/// check does not depend on which traits the generated types derive.
pub fn status_differs(previous: Option<&WhiteListStatus>, next: &WhiteListStatus) -> bool {
    let as_json = |status: &WhiteListStatus| serde_json::to_value(status).ok();
    previous.map(as_json) != Some(as_json(next))
}

#[cfg(test)]
mod tests {
    use jiff::Timestamp;

    use super::*;
    use crate::policy::Denial;

    fn at(seconds: i64) -> Time {
        Time(Timestamp::from_second(seconds).unwrap_or_else(|e| panic!("{e}")))
    }

    fn found(container: &str, init: bool) -> ContainerViolation {
        ContainerViolation {
            container: container.to_owned(),
            image: "redis:7".to_owned(),
            init,
            denial: Denial::NotListed,
        }
    }

    fn ready(status: &WhiteListStatus) -> &WhiteListCondition {
        status
            .conditions
            .iter()
            .find(|c| c.type_ == READY)
            .unwrap_or_else(|| panic!("no Ready"))
    }

    #[test]
    fn first_status_sets_generation_ready_and_transition_time() {
        let status = next_status(None, Some(3), &Readiness::Enforcing, vec![], &at(100));
        assert_eq!(status.observed_generation, Some(3));
        assert_eq!(status.violations_handled, Some(0));
        let condition = ready(&status);
        assert_eq!(
            (condition.status.as_str(), condition.reason.as_deref()),
            ("True", Some("Enforcing"))
        );
        assert_eq!(condition.last_transition_time, Some(at(100)));
    }

    #[test]
    fn transition_time_moves_only_when_the_status_flips() {
        let first = next_status(None, Some(1), &Readiness::Enforcing, vec![], &at(100));
        let same = next_status(
            Some(&first),
            Some(2),
            &Readiness::Enforcing,
            vec![],
            &at(200),
        );
        assert_eq!(ready(&same).last_transition_time, Some(at(100)));
        let invalid = Readiness::InvalidSpec("spec.images is empty".into());
        let flipped = next_status(Some(&same), Some(3), &invalid, vec![], &at(300));
        assert_eq!(ready(&flipped).last_transition_time, Some(at(300)));
        assert_eq!(
            ready(&flipped).message.as_deref(),
            Some(
                "spec.images is empty; nothing in this namespace is enforced until this \
                 WhiteList is fixed or deleted"
            )
        );
        let other_message = Readiness::InvalidSpec("another problem".into());
        let still_false = next_status(Some(&flipped), Some(4), &other_message, vec![], &at(400));
        assert_eq!(ready(&still_false).last_transition_time, Some(at(300)));
    }

    #[test]
    fn violations_accumulate_and_only_the_last_ones_are_kept() {
        let mut status = next_status(None, Some(1), &Readiness::Enforcing, vec![], &at(0));
        for i in 0..7 {
            let batch = vec![
                violation_record(&format!("d{i}"), &found("a", false), &at(i)),
                violation_record(&format!("d{i}"), &found("b", true), &at(i)),
            ];
            status = next_status(Some(&status), Some(1), &Readiness::Enforcing, batch, &at(i));
        }
        assert_eq!(status.violations_handled, Some(14));
        assert_eq!(status.last_violations.len(), MAX_LAST_VIOLATIONS);
        assert_eq!(status.last_violations[0].deployment, "d6");
        assert_eq!(status.last_violations[0].container, "b (init)");
        assert_eq!(status.last_violations[0].reason, "ImageNotListed");
        assert_eq!(status.last_violations[1].container, "a");
        assert_eq!(status.last_violations[9].deployment, "d2");
    }

    #[test]
    fn foreign_conditions_are_kept_in_place() {
        let mut previous = WhiteListStatus::default();
        previous.conditions.push(WhiteListCondition {
            type_: "Audited".into(),
            status: "True".into(),
            ..WhiteListCondition::default()
        });
        let status = next_status(
            Some(&previous),
            Some(1),
            &Readiness::Enforcing,
            vec![],
            &at(5),
        );
        assert_eq!(status.conditions.len(), 2);
        assert_eq!(status.conditions[0].type_, "Audited");
    }

    #[test]
    fn protected_namespace_is_not_ready_with_a_hint() {
        let readiness = Readiness::ProtectedNamespace("kube-system".into());
        let status = next_status(None, Some(1), &readiness, vec![], &at(5));
        let condition = ready(&status);
        assert_eq!(
            (condition.status.as_str(), condition.reason.as_deref()),
            ("False", Some("ProtectedNamespace"))
        );
        assert!(
            condition
                .message
                .as_deref()
                .unwrap_or_default()
                .contains("--allow-protected-namespaces")
        );
    }

    #[test]
    fn a_valid_list_names_the_invalid_ones_that_pause_its_namespace() {
        let readiness = Readiness::Paused(vec!["a".into(), "b".into()]);
        let status = next_status(None, Some(1), &readiness, vec![], &at(5));
        let condition = ready(&status);
        assert_eq!(
            (
                condition.status.as_str(),
                condition.reason.as_deref(),
                condition.message.as_deref()
            ),
            (
                "False",
                Some("EnforcementPaused"),
                Some(
                    "nothing in this namespace is enforced until every WhiteList there is \
                     valid; invalid: a, b"
                )
            )
        );
    }

    #[test]
    fn an_unchanged_reconcile_needs_no_write() {
        let first = next_status(None, Some(1), &Readiness::Enforcing, vec![], &at(1));
        assert!(status_differs(None, &first));
        let again = next_status(
            Some(&first),
            Some(1),
            &Readiness::Enforcing,
            vec![],
            &at(99),
        );
        assert!(!status_differs(Some(&first), &again));
        let newer = next_status(
            Some(&first),
            Some(2),
            &Readiness::Enforcing,
            vec![],
            &at(99),
        );
        assert!(status_differs(Some(&first), &newer));
    }
}
