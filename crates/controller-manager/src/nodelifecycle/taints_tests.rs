use k8s_openapi::api::core::v1::{NodeCondition, NodeSpec, NodeStatus};

use super::*;

fn node(conditions: &[(&str, &str)], unschedulable: bool, taints: Vec<Taint>) -> Node {
    Node {
        spec: Some(NodeSpec {
            unschedulable: unschedulable.then_some(true),
            taints: Some(taints),
            ..NodeSpec::default()
        }),
        status: Some(NodeStatus {
            conditions: Some(
                conditions
                    .iter()
                    .map(|(t, s)| NodeCondition {
                        type_: (*t).into(),
                        status: (*s).into(),
                        ..NodeCondition::default()
                    })
                    .collect(),
            ),
            ..NodeStatus::default()
        }),
        ..Node::default()
    }
}

fn keys(taints: &[Taint]) -> Vec<&str> {
    taints.iter().map(|t| t.key.as_str()).collect()
}

#[test]
fn each_condition_state_calls_for_its_no_schedule_taint() {
    let cases = [
        (("Ready", "False"), Some(NOT_READY)),
        (("Ready", "Unknown"), Some(UNREACHABLE)),
        (("Ready", "True"), None),
        (
            ("MemoryPressure", "True"),
            Some("node.kubernetes.io/memory-pressure"),
        ),
        (("MemoryPressure", "False"), None),
        (
            ("DiskPressure", "True"),
            Some("node.kubernetes.io/disk-pressure"),
        ),
        (
            ("PIDPressure", "True"),
            Some("node.kubernetes.io/pid-pressure"),
        ),
        (
            ("NetworkUnavailable", "True"),
            Some("node.kubernetes.io/network-unavailable"),
        ),
        (("DiskPressure", "Unknown"), None),
    ];
    for (condition, key) in cases {
        let wanted = wanted_no_schedule(&node(&[condition], false, vec![]));
        assert_eq!(
            keys(&wanted),
            key.into_iter().collect::<Vec<_>>(),
            "{condition:?}"
        );
        assert!(wanted.iter().all(|t| t.effect == NO_SCHEDULE));
    }
}

#[test]
fn an_unschedulable_node_gets_the_unschedulable_taint_last() {
    let n = node(&[("Ready", "False")], true, vec![]);
    assert_eq!(keys(&wanted_no_schedule(&n)), [NOT_READY, UNSCHEDULABLE]);
}

#[test]
fn only_condition_and_unschedulable_no_schedule_taints_are_owned() {
    let n = node(
        &[],
        false,
        vec![
            template(NOT_READY, NO_SCHEDULE),
            template(NOT_READY, NO_EXECUTE),
            template("example.com/own", NO_SCHEDULE),
            template(UNSCHEDULABLE, NO_SCHEDULE),
        ],
    );
    assert_eq!(keys(&owned_no_schedule(&n)), [NOT_READY, UNSCHEDULABLE]);
}

#[test]
fn diff_matches_by_key_and_effect_only() {
    let mut valued = template(NOT_READY, NO_SCHEDULE);
    valued.value = Some("x".into());
    let (add, remove) = diff(
        &[
            template(NOT_READY, NO_SCHEDULE),
            template(UNREACHABLE, NO_SCHEDULE),
        ],
        &[valued, template(UNSCHEDULABLE, NO_SCHEDULE)],
    );
    assert_eq!(keys(&add), [UNREACHABLE]);
    assert_eq!(keys(&remove), [UNSCHEDULABLE]);
}

#[test]
fn added_stamps_time_and_replaces_a_match_in_place() {
    let now = Timestamp::from_second(1_800_000_000).unwrap();
    let current = vec![
        template("a", NO_SCHEDULE),
        template(UNREACHABLE, NO_EXECUTE),
    ];
    let next = added(&current, &[template(UNREACHABLE, NO_EXECUTE)], now).unwrap();
    assert_eq!(keys(&next), ["a", UNREACHABLE]);
    assert_eq!(next[1].time_added, Some(Time(now)));
    let appended = added(&current, &[template(NOT_READY, NO_EXECUTE)], now).unwrap();
    assert_eq!(keys(&appended), ["a", UNREACHABLE, NOT_READY]);
    assert_eq!(
        added(&next, &[template(UNREACHABLE, NO_EXECUTE)], now),
        None
    );
}

#[test]
fn removed_drops_matches_and_reports_no_change() {
    let current = vec![
        template("a", NO_SCHEDULE),
        template(UNREACHABLE, NO_EXECUTE),
    ];
    let next = removed(&current, &[template(UNREACHABLE, NO_EXECUTE)]).unwrap();
    assert_eq!(keys(&next), ["a"]);
    assert_eq!(
        removed(&current, &[template(UNREACHABLE, NO_SCHEDULE)]),
        None
    );
}
