use std::sync::Arc;

use k8s_openapi::api::core::v1::Node;
use serde_json::{Value, json};

use super::*;
use crate::apps::daemonset::fixtures::{daemon_set, node, pod};
use crate::apps::daemonset::manage::by_node;

fn nodes(n: usize) -> Vec<Arc<Node>> {
    (0..n)
        .map(|i| node(&format!("n{i}"), json!({}), json!([])))
        .collect()
}

fn run(strategy: Value, nodes: &[Arc<Node>], pods: &[Arc<Pod>]) -> Step {
    let ds = daemon_set(json!({"updateStrategy": {"rollingUpdate": strategy}}));
    let daemon = Daemon::new(&ds, "new".into()).unwrap();
    step(
        &daemon,
        nodes,
        &by_node(pods, false),
        Timestamp::from_second(1_000).unwrap(),
    )
}

fn old_on(i: usize) -> Arc<Pod> {
    pod(
        &format!("old-{i}"),
        &format!("n{i}"),
        1,
        "old",
        "Running",
        Some(1),
    )
}

#[test]
fn without_surge_at_most_max_unavailable_old_pods_go() {
    let pods: Vec<_> = (0..4).map(old_on).collect();
    let s = run(
        json!({"maxUnavailable": 2, "maxSurge": 0}),
        &nodes(4),
        &pods,
    );
    assert_eq!(s.delete, ["old-0", "old-1"]);
    assert!(s.create_on.is_empty());
}

#[test]
fn an_updated_pod_not_yet_available_uses_up_the_budget() {
    let mut pods: Vec<_> = (1..3).map(old_on).collect();
    pods.push(pod("new-0", "n0", 990, "new", "Running", None));
    let s = run(
        json!({"maxUnavailable": 1, "maxSurge": 0}),
        &nodes(3),
        &pods,
    );
    assert!(s.delete.is_empty());
}

#[test]
fn unavailable_old_pods_are_replaced_regardless_of_the_budget() {
    let pods = vec![
        pod("old-0", "n0", 1, "old", "Running", None),
        pod("old-1", "n1", 1, "old", "Running", None),
        old_on(2),
    ];
    let s = run(
        json!({"maxUnavailable": 1, "maxSurge": 0}),
        &nodes(3),
        &pods,
    );
    assert_eq!(s.delete, ["old-0", "old-1"]);
}

#[test]
fn both_zero_means_one_unavailable() {
    let pods: Vec<_> = (0..2).map(old_on).collect();
    let s = run(
        json!({"maxUnavailable": 0, "maxSurge": 0}),
        &nodes(2),
        &pods,
    );
    assert_eq!(s.delete, ["old-0"]);
}

#[test]
fn with_surge_new_pods_start_beside_old_ones_and_old_ones_go_once_new_are_available() {
    let pods: Vec<_> = (0..3).map(old_on).collect();
    let s = run(
        json!({"maxUnavailable": 0, "maxSurge": 1}),
        &nodes(3),
        &pods,
    );
    assert_eq!(s.create_on, ["n0"]);
    assert!(s.delete.is_empty());
    let mut pods: Vec<_> = (0..3).map(old_on).collect();
    pods.push(pod("new-0", "n0", 900, "new", "Running", Some(950)));
    let s = run(
        json!({"maxUnavailable": 0, "maxSurge": 1}),
        &nodes(3),
        &pods,
    );
    assert_eq!(s.delete, ["old-0"]);
    assert_eq!(s.create_on, ["n1"], "the surge slot is free again");
}

#[test]
fn a_node_with_two_old_pods_is_left_to_manage() {
    let pods = vec![
        old_on(0),
        pod("old-0b", "n0", 2, "old", "Running", Some(2)),
        old_on(1),
    ];
    let s = run(
        json!({"maxUnavailable": 1, "maxSurge": 0}),
        &nodes(2),
        &pods,
    );
    assert!(
        s.delete.is_empty(),
        "the crowded node counts as unavailable: {s:?}"
    );
}
