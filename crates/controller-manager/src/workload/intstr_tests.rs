use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::*;

fn pct(s: &str) -> IntOrString {
    IntOrString::String(s.into())
}

#[test]
fn percentages_round_surge_up_and_unavailable_down() {
    assert_eq!(scaled(&pct("25%"), 3, true), 1);
    assert_eq!(scaled(&pct("25%"), 3, false), 0);
    assert_eq!(scaled(&pct("25%"), 5, true), 2);
    assert_eq!(scaled(&pct("25%"), 5, false), 1);
    assert_eq!(scaled(&pct("100%"), 7, false), 7);
    assert_eq!(scaled(&IntOrString::Int(4), 7, true), 4);
    assert_eq!(scaled(&pct("x%"), 7, true), 0);
}
