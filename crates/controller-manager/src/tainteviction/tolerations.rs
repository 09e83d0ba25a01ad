//! Which of a Pod's tolerations cover a Node's `NoExecute` taints, and how long they let it stay.
//! Mirrors `v1helper.GetMatchingTolerations` (`pkg/apis/core/v1/helper/helpers.go`, one
//! toleration per taint by `kubegen-scheduling`'s `tolerates`) and
//! `getMinTolerationTime` of `pkg/controller/tainteviction/taint_eviction.go`.

use std::time::Duration;

use k8s_openapi::api::core::v1::{Taint, Toleration};
use kubegen_scheduling::tolerates;

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
