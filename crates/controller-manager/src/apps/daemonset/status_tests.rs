use std::sync::Arc;

use k8s_openapi::api::apps::v1::DaemonSetStatus;
use serde_json::json;

use super::*;
use crate::apps::daemonset::fixtures::{daemon_set, node, pod};
use crate::apps::daemonset::manage::by_node;

#[test]
fn counts_follow_the_oldest_pod_of_each_qualifying_node() {
    let ds = daemon_set(
        json!({"minReadySeconds": 30, "template": {"spec": {"nodeSelector": {"role": "edge"}}}}),
    );
    let daemon = Daemon::new(&ds, "new".into()).unwrap();
    let nodes: Vec<Arc<Node>> = vec![
        node("a", json!({"role": "edge"}), json!([])),
        node("b", json!({"role": "edge"}), json!([])),
        node("c", json!({"role": "edge"}), json!([])),
        node("d", json!({"role": "core"}), json!([])),
    ];
    let pods = vec![
        pod("a1", "a", 1, "new", "Running", Some(10)),
        pod("b1", "b", 1, "old", "Running", Some(990)),
        pod("d1", "d", 1, "new", "Running", Some(10)),
    ];
    let counts = Counts::of(
        &daemon,
        &nodes,
        &by_node(&pods, false),
        Timestamp::from_second(1_000).unwrap(),
    );
    assert_eq!(
        counts,
        Counts {
            desired: 3,
            current: 2,
            misscheduled: 1,
            ready: 2,
            available: 1,
            updated: 1
        }
    );
    assert_eq!(counts.unavailable(), 2);
}

#[test]
fn a_status_is_rewritten_only_when_a_count_or_the_generation_changed() {
    let counts = Counts {
        desired: 2,
        current: 2,
        misscheduled: 0,
        ready: 2,
        available: 2,
        updated: 2,
    };
    let mut status = DaemonSetStatus::default();
    assert!(!counts.written(&status, Some(1)));
    counts.apply(&mut status, Some(1), true);
    assert!(counts.written(&status, Some(1)));
    assert!(
        !counts.written(&status, Some(2)),
        "a newer generation is not observed yet"
    );
    let none = Counts::default();
    let mut empty = DaemonSetStatus::default();
    none.apply(&mut empty, Some(1), false);
    assert_eq!(
        (empty.number_available, empty.observed_generation),
        (None, None),
        "0 is left out, generation kept"
    );
}
