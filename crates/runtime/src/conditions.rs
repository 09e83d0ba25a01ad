//! Status helpers: `metav1.Condition` lists whose `lastTransitionTime` moves only when the
//! status changes, and `observedGeneration`. The counterpart of apimachinery's
//! `meta.SetStatusCondition` / `FindStatusCondition`.
//!
//! Why the rule: `lastTransitionTime` answers "since when is this Ready=False?". Rewriting it on
//! every reconcile would answer "since the last resync" instead, and make every status write a
//! change (so writes never settle).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

/// Sets `wanted` in `conditions` (matched by `type`). An existing condition keeps its
/// `lastTransitionTime` unless its `status` changes; reason, message and observedGeneration
/// are always updated. Returns whether anything changed.
pub fn set_condition(conditions: &mut Vec<Condition>, wanted: Condition) -> bool {
    let Some(existing) = conditions.iter_mut().find(|c| c.type_ == wanted.type_) else {
        conditions.push(wanted);
        return true;
    };
    let transition = if existing.status == wanted.status {
        existing.last_transition_time.clone()
    } else {
        wanted.last_transition_time.clone()
    };
    let next = Condition {
        last_transition_time: transition,
        ..wanted
    };
    let changed = *existing != next;
    *existing = next;
    changed
}

/// The condition of type `type_`, if present.
pub fn find_condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// A condition's `status`: metav1's `ConditionStatus`. `Unknown` says the controller cannot tell
/// (yet): a dependency it could not reach, a check still running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConditionStatus {
    /// `"True"`.
    True,
    /// `"False"`.
    False,
    /// `"Unknown"`.
    Unknown,
}

impl ConditionStatus {
    /// The wire spelling: `True`, `False` or `Unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            ConditionStatus::True => "True",
            ConditionStatus::False => "False",
            ConditionStatus::Unknown => "Unknown",
        }
    }
}

impl From<bool> for ConditionStatus {
    fn from(status: bool) -> Self {
        if status {
            ConditionStatus::True
        } else {
            ConditionStatus::False
        }
    }
}

/// A condition of `type_` for an object at `generation`, stamped `now`; `status` is a
/// [`ConditionStatus`] or a `bool`.
pub fn condition(
    type_: &str,
    status: impl Into<ConditionStatus>,
    reason: &str,
    message: &str,
    generation: Option<i64>,
    now: &Time,
) -> Condition {
    Condition {
        type_: type_.to_owned(),
        status: status.into().as_str().to_owned(),
        reason: reason.to_owned(),
        message: message.to_owned(),
        observed_generation: generation,
        last_transition_time: now.clone(),
    }
}

#[cfg(test)]
mod tests {
    use jiff::Timestamp;

    use super::*;

    fn at(second: i64) -> Time {
        Time(Timestamp::from_second(second).unwrap_or_else(|e| panic!("{e}")))
    }

    #[test]
    fn transition_time_moves_only_when_the_status_changes() {
        let mut conditions = Vec::new();
        assert!(set_condition(
            &mut conditions,
            condition("Ready", false, "Wait", "", Some(1), &at(10))
        ));
        assert!(set_condition(
            &mut conditions,
            condition("Ready", false, "Still", "m", Some(2), &at(20))
        ));
        let ready = find_condition(&conditions, "Ready")
            .cloned()
            .unwrap_or_else(|| panic!("Ready missing"));
        assert_eq!(
            (ready.reason.as_str(), ready.last_transition_time.clone()),
            ("Still", at(10))
        );
        assert_eq!(ready.observed_generation, Some(2));
        assert!(set_condition(
            &mut conditions,
            condition("Ready", true, "Up", "", Some(2), &at(30))
        ));
        let ready = find_condition(&conditions, "Ready")
            .cloned()
            .unwrap_or_else(|| panic!("Ready missing"));
        assert_eq!(ready.last_transition_time, at(30));
        assert_eq!(conditions.len(), 1);
    }

    #[test]
    fn unknown_is_a_status_of_its_own_and_moves_the_transition_time() {
        let mut conditions = vec![condition("Ready", true, "Up", "", Some(1), &at(10))];
        let unknown = condition(
            "Ready",
            ConditionStatus::Unknown,
            "Unreachable",
            "the hypervisor does not answer",
            Some(1),
            &at(20),
        );
        assert!(set_condition(&mut conditions, unknown));
        assert_eq!(conditions[0].status, "Unknown");
        assert_eq!(conditions[0].last_transition_time, at(20));
    }

    #[test]
    fn an_identical_condition_is_no_change() {
        let mut conditions = vec![condition("Ready", true, "Up", "", Some(1), &at(10))];
        assert!(!set_condition(
            &mut conditions,
            condition("Ready", true, "Up", "", Some(1), &at(99))
        ));
        assert_eq!(conditions[0].last_transition_time, at(10));
    }
}
