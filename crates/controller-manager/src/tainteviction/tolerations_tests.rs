use super::*;

fn taint(key: &str, value: &str) -> Taint {
    Taint {
        key: key.into(),
        value: (!value.is_empty()).then(|| value.to_owned()),
        effect: "NoExecute".into(),
        ..Taint::default()
    }
}

fn toleration(
    key: &str,
    operator: &str,
    value: &str,
    effect: &str,
    seconds: Option<i64>,
) -> Toleration {
    let some = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    Toleration {
        key: some(key),
        operator: some(operator),
        value: some(value),
        effect: some(effect),
        toleration_seconds: seconds,
    }
}

#[test]
fn an_untolerated_taint_means_no_stay() {
    let taints = [taint("a", ""), taint("b", "")];
    let only_a = [toleration("a", "Exists", "", "", None)];
    assert_eq!(stay(&taints, &only_a), Stay::None);
    assert_eq!(stay(&taints, &[]), Stay::None);
}

#[test]
fn the_shortest_toleration_seconds_wins_and_none_means_forever() {
    let taints = [taint("a", ""), taint("b", "")];
    let both = [
        toleration("a", "Exists", "", "", Some(300)),
        toleration("b", "Exists", "", "", Some(2)),
    ];
    assert_eq!(stay(&taints, &both), Stay::For(Duration::from_secs(2)));
    let forever = [toleration("", "Exists", "", "", None)];
    assert_eq!(stay(&taints, &forever), Stay::Forever);
    let zero = [toleration("", "Exists", "", "", Some(0))];
    assert_eq!(stay(&taints, &zero), Stay::None);
    assert_eq!(stay(&[], &[]), Stay::Forever);
}

#[test]
fn only_the_first_matching_toleration_of_each_taint_counts() {
    let taints = [taint("a", "")];
    let tolerations = [
        toleration("a", "Exists", "", "", None),
        toleration("a", "Exists", "", "", Some(5)),
    ];
    assert_eq!(stay(&taints, &tolerations), Stay::Forever);
}
