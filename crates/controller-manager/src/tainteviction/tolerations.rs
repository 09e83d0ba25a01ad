//! Which of a Pod's tolerations cover a Node's `NoExecute` taints, and how long they let it stay.
//! Mirrors `v1helper.GetMatchingTolerations` and `Toleration.ToleratesTaint`
//! (`pkg/apis/core/v1/helper/helpers.go`, `k8s.io/api/core/v1/toleration.go`) and
//! `getMinTolerationTime` of `pkg/controller/tainteviction/taint_eviction.go`.

use std::time::Duration;

use k8s_openapi::api::core::v1::{Taint, Toleration};

/// How long a Pod may stay on a Node with some `NoExecute` taints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stay {
    /// A taint is not tolerated, or a toleration allows no time: delete now.
    None,
    /// Until the shortest `tolerationSeconds` of the tolerations used.
    For(Duration),
    /// Every taint is tolerated forever.
    Forever,
}

/// `Toleration.ToleratesTaint`: an empty effect matches every effect; an empty key with
/// `Exists` matches every key; `Exists` ignores the value, `Equal` (the default) compares it.
pub(crate) fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    let effect = toleration.effect.as_deref().unwrap_or_default();
    if !effect.is_empty() && effect != taint.effect {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or_default();
    if !key.is_empty() && key != taint.key {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or_default() {
        "Exists" => true,
        "" | "Equal" => {
            toleration.value.as_deref().unwrap_or_default()
                == taint.value.as_deref().unwrap_or_default()
        }
        _ => false,
    }
}

/// How long `tolerations` let a Pod stay on a Node with `taints` (`GetMatchingTolerations`,
/// then `getMinTolerationTime` over the first toleration matching each taint).
pub(crate) fn stay(taints: &[Taint], tolerations: &[Toleration]) -> Stay {
    if taints.is_empty() {
        return Stay::Forever;
    }
    let mut used = Vec::new();
    for taint in taints {
        match tolerations.iter().find(|t| tolerates(t, taint)) {
            Some(toleration) => used.push(toleration),
            None => return Stay::None,
        }
    }
    let mut shortest: Option<i64> = None;
    for seconds in used.iter().filter_map(|t| t.toleration_seconds) {
        if seconds <= 0 {
            return Stay::None;
        }
        shortest = Some(shortest.map_or(seconds, |s| s.min(seconds)));
    }
    match shortest {
        None => Stay::Forever,
        Some(seconds) => Stay::For(Duration::from_secs(seconds.unsigned_abs())),
    }
}

#[cfg(test)]
#[path = "tolerations_tests.rs"]
mod tests;
