//! Whether a toleration covers a taint: `Toleration.ToleratesTaint` of `k8s.io/api/core/v1`
//! (`toleration.go`), and the two helpers over lists of them in
//! `component-helpers/scheduling/corev1/helpers.go`.
//!
//! # Rules
//! - An empty effect matches every effect; an empty key matches every key (validation allows
//!   that only with `Exists`).
//! - `Exists` ignores the value; `Equal`, or no operator, compares it.
//! - `Gt` and `Lt` compare numbers only under the `TaintTolerationComparisonOperators` feature
//!   gate (alpha, off by default in v1.36): here, as there by default, they tolerate nothing.

use k8s_openapi::api::core::v1::{Taint, Toleration};

/// Whether `toleration` covers `taint` (`ToleratesTaint`).
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    let effect = toleration.effect.as_deref().unwrap_or_default();
    if !effect.is_empty() && effect != taint.effect {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or_default();
    if !key.is_empty() && key != taint.key {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or_default() {
        "" | "Equal" => {
            toleration.value.as_deref().unwrap_or_default()
                == taint.value.as_deref().unwrap_or_default()
        }
        "Exists" => true,
        _ => false,
    }
}

/// Whether any of `tolerations` covers `taint` (`TolerationsTolerateTaint`).
pub fn tolerated(tolerations: &[Toleration], taint: &Taint) -> bool {
    tolerations.iter().any(|t| tolerates(t, taint))
}

/// The first of `taints` that `include` selects and no toleration covers
/// (`FindMatchingUntoleratedTaint`).
pub fn untolerated_taint<'a>(
    taints: &'a [Taint],
    tolerations: &[Toleration],
    include: impl Fn(&Taint) -> bool,
) -> Option<&'a Taint> {
    taints
        .iter()
        .filter(|t| include(t))
        .find(|t| !tolerated(tolerations, t))
}

#[cfg(test)]
#[path = "toleration_tests.rs"]
mod tests;
