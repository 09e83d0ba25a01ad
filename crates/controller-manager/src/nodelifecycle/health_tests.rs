use k8s_openapi::api::core::v1::NodeStatus;

use super::*;

const GRACE: Grace = Grace {
    monitor: Duration::from_secs(50),
    startup: Duration::from_secs(60),
};

fn at(second: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + second).unwrap()
}

fn ready(status: &str, heartbeat: i64, transition: i64) -> NodeCondition {
    NodeCondition {
        type_: "Ready".into(),
        status: status.into(),
        reason: Some("KubeletReady".into()),
        message: Some("kubelet is posting ready status".into()),
        last_heartbeat_time: Some(Time(at(heartbeat))),
        last_transition_time: Some(Time(at(transition))),
    }
}

fn node(conditions: Vec<NodeCondition>) -> Node {
    let mut node = Node::default();
    node.metadata.creation_timestamp = Some(Time(at(0)));
    node.status = Some(NodeStatus {
        conditions: (!conditions.is_empty()).then_some(conditions),
        ..NodeStatus::default()
    });
    node
}

fn memory(status: &str) -> NodeCondition {
    NodeCondition {
        type_: "MemoryPressure".into(),
        status: status.into(),
        ..NodeCondition::default()
    }
}

#[test]
fn a_node_first_seen_is_given_the_whole_grace_period() {
    let n = node(vec![ready("True", 0, 0)]);
    let v = judge(&n, None, None, at(10), GRACE);
    assert_eq!(v.health.probe, at(10));
    assert!(v.write.is_none());
    let later = judge(&n, Some(&v.health), None, at(60), GRACE);
    assert!(
        later.write.is_none(),
        "50 s after the first look is not past the grace period"
    );
    let past = judge(&n, Some(&v.health), None, at(61), GRACE);
    assert!(past.write.is_some());
}

#[test]
fn silence_past_the_grace_period_marks_kubelet_conditions_unknown() {
    let n = node(vec![ready("True", 0, 0), memory("False")]);
    let first = judge(&n, None, None, at(0), GRACE);
    let v = judge(&n, Some(&first.health), None, at(51), GRACE);
    let written = v.write.unwrap();
    let r = condition(Some(&written), "Ready").unwrap();
    assert_eq!(r.status, "Unknown");
    assert_eq!(r.reason.as_deref(), Some("NodeStatusUnknown"));
    assert_eq!(
        r.message.as_deref(),
        Some("Kubelet stopped posting node status.")
    );
    assert_eq!(r.last_transition_time, Some(Time(at(51))));
    assert_eq!(
        r.last_heartbeat_time,
        Some(Time(at(0))),
        "the heartbeat is kept"
    );
    assert_eq!(
        condition(Some(&written), "MemoryPressure").unwrap().status,
        "Unknown"
    );
    let never = condition(Some(&written), "DiskPressure").unwrap();
    assert_eq!(never.reason.as_deref(), Some("NodeStatusNeverUpdated"));
    assert_eq!(
        never.message.as_deref(),
        Some("Kubelet never posted node status.")
    );
    assert_eq!(never.last_heartbeat_time, Some(Time(at(0))));
    assert_eq!(v.observed.status, "True");
    assert_eq!(v.current.unwrap().status, "Unknown");
}

#[test]
fn a_renewed_lease_keeps_a_node_alive_without_status_heartbeats() {
    let n = node(vec![ready("True", 0, 0)]);
    let first = judge(&n, None, Some(at(0)), at(0), GRACE);
    let renewed = judge(&n, Some(&first.health), Some(at(40)), at(40), GRACE);
    assert_eq!(renewed.health.probe, at(40));
    let v = judge(&n, Some(&renewed.health), Some(at(40)), at(89), GRACE);
    assert!(v.write.is_none());
    let v = judge(&n, Some(&renewed.health), Some(at(40)), at(91), GRACE);
    assert!(v.write.is_some());
}

#[test]
fn a_new_heartbeat_moves_the_probe_and_a_new_transition_the_transition_time() {
    let n = node(vec![ready("True", 0, 0)]);
    let first = judge(&n, None, None, at(1), GRACE);
    let beat = judge(
        &node(vec![ready("True", 30, 0)]),
        Some(&first.health),
        None,
        at(31),
        GRACE,
    );
    assert_eq!(beat.health.probe, at(31));
    assert_eq!(beat.health.ready_transition, first.health.ready_transition);
    let flip = judge(
        &node(vec![ready("False", 40, 40)]),
        Some(&beat.health),
        None,
        at(41),
        GRACE,
    );
    assert_eq!(flip.health.ready_transition, at(41));
}

#[test]
fn a_node_that_never_posted_status_gets_the_startup_grace_from_its_creation() {
    let n = node(vec![]);
    let v = judge(&n, None, None, at(60), GRACE);
    assert!(v.write.is_none());
    let v = judge(&n, Some(&v.health), None, at(61), GRACE);
    let written = v.write.unwrap();
    assert_eq!(written.len(), 4);
    assert!(written.iter().all(|c| c.status == "Unknown"
        && c.reason.as_deref() == Some("NodeStatusNeverUpdated")));
    assert_eq!(v.observed.last_heartbeat_time, Some(Time(at(0))));
}

#[test]
fn an_already_unknown_node_is_not_written_again() {
    let mut unknown = ready("Unknown", 0, 51);
    unknown.reason = Some("NodeStatusUnknown".into());
    let n = node(vec![
        unknown,
        memory("Unknown"),
        NodeCondition {
            type_: "DiskPressure".into(),
            status: "Unknown".into(),
            ..Default::default()
        },
        NodeCondition {
            type_: "PIDPressure".into(),
            status: "Unknown".into(),
            ..Default::default()
        },
    ]);
    let first = judge(&n, None, None, at(0), GRACE);
    let v = judge(&n, Some(&first.health), None, at(200), GRACE);
    assert!(v.write.is_none());
    assert_eq!(v.current.unwrap().status, "Unknown");
}
