//! Scaling an `IntOrString` (a count or a percentage) against a total, as rolling updates size
//! their surge and unavailability: the deployment controller's `maxSurge`/`maxUnavailable` and
//! the daemonset controller's. Mirrors `intstr.GetScaledValueFromIntOrPercent` of
//! `k8s.io/apimachinery/pkg/util/intstr`.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// `intstr.GetScaledValueFromIntOrPercent`: an integer as is, `N%` of `total` rounded up or
/// down. A malformed percentage (which validation rejects) counts as 0.
pub(crate) fn scaled(value: &IntOrString, total: i32, round_up: bool) -> i32 {
    match value {
        IntOrString::Int(n) => *n,
        IntOrString::String(s) => {
            let Some(percent) = s.strip_suffix('%').and_then(|p| p.parse::<i64>().ok()) else {
                return 0;
            };
            let product = percent * i64::from(total);
            let v = if round_up {
                (product + 99).div_euclid(100)
            } else {
                product.div_euclid(100)
            };
            i32::try_from(v).unwrap_or(i32::MAX)
        }
    }
}

#[cfg(test)]
#[path = "intstr_tests.rs"]
mod tests;
