use super::*;

fn taint(key: &str, value: &str, effect: &str) -> Taint {
    Taint {
        key: key.into(),
        value: (!value.is_empty()).then(|| value.to_owned()),
        effect: effect.into(),
        ..Taint::default()
    }
}

fn toleration(key: &str, operator: &str, value: &str, effect: &str) -> Toleration {
    let some = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    Toleration {
        key: some(key),
        operator: some(operator),
        value: some(value),
        effect: some(effect),
        ..Toleration::default()
    }
}

#[test]
fn a_toleration_matches_by_key_operator_value_and_effect() {
    let t = taint("k", "v", "NoExecute");
    assert!(tolerates(&toleration("k", "Equal", "v", "NoExecute"), &t));
    assert!(
        tolerates(&toleration("k", "", "v", ""), &t),
        "no operator is Equal, no effect is every effect"
    );
    assert!(!tolerates(&toleration("k", "Equal", "w", ""), &t));
    assert!(
        !tolerates(&toleration("k", "Equal", "", ""), &t),
        "Equal compares the value"
    );
    assert!(tolerates(&toleration("k", "Exists", "", ""), &t));
    assert!(
        tolerates(&toleration("", "Exists", "", ""), &t),
        "an empty key with Exists tolerates every taint"
    );
    assert!(!tolerates(&toleration("k", "Exists", "", "NoSchedule"), &t));
    assert!(!tolerates(&toleration("other", "Exists", "", ""), &t));
}

#[test]
fn an_empty_value_equals_an_absent_one() {
    let t = taint("k", "", "NoSchedule");
    assert!(tolerates(&toleration("k", "Equal", "", "NoSchedule"), &t));
}

#[test]
fn comparison_operators_and_unknown_ones_tolerate_nothing() {
    let t = taint("k", "5", "NoSchedule");
    for operator in ["Gt", "Lt", "Bogus"] {
        assert!(
            !tolerates(&toleration("k", operator, "1", ""), &t),
            "{operator}"
        );
    }
}

#[test]
fn the_first_untolerated_taint_among_those_included_is_found() {
    let taints = [
        taint("soft", "", "PreferNoSchedule"),
        taint("a", "", "NoSchedule"),
        taint("b", "", "NoExecute"),
    ];
    let hard = |t: &Taint| t.effect != "PreferNoSchedule";
    let only_a = [toleration("a", "Exists", "", "")];
    assert_eq!(
        untolerated_taint(&taints, &only_a, hard).map(|t| t.key.as_str()),
        Some("b")
    );
    assert_eq!(
        untolerated_taint(&taints, &[], hard).map(|t| t.key.as_str()),
        Some("a"),
        "the soft taint is left out"
    );
    let all = [toleration("", "Exists", "", "")];
    assert!(untolerated_taint(&taints, &all, hard).is_none());
    assert!(tolerated(&only_a, &taints[1]));
    assert!(!tolerated(&only_a, &taints[2]));
}
