use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Pod, PodSpec};
use serde_json::json;

use super::*;
use crate::apps::daemonset::fixtures::{daemon_set, node, pod};
use crate::apps::daemonset::placement::pin_to_node;

fn at(s: i64) -> (Instant, Timestamp) {
    (Instant::now(), Timestamp::from_second(s).unwrap())
}

fn run(ds_spec: serde_json::Value, nodes: &[Arc<Node>], pods: &[Arc<Pod>]) -> Plan {
    let ds = daemon_set(ds_spec);
    let daemon = Daemon::new(&ds, "h1".into()).unwrap();
    plan(
        &daemon,
        nodes,
        &by_node(pods, false),
        &mut Backoff::default(),
        at(1_000),
    )
}

#[test]
fn every_qualifying_node_without_a_pod_gets_one() {
    let nodes = [
        node("a", json!({"role": "edge"}), json!([])),
        node("b", json!({"role": "core"}), json!([])),
        node("c", json!({"role": "edge"}), json!([])),
    ];
    let has_one = [pod("p", "c", 1, "h1", "Running", Some(1))];
    let p = run(
        json!({"template": {"spec": {"nodeSelector": {"role": "edge"}}}}),
        &nodes,
        &has_one,
    );
    assert_eq!(p.create_on, ["a"]);
    assert!(p.delete.is_empty());
}

#[test]
fn pods_leave_nodes_that_no_longer_qualify_but_a_no_schedule_taint_keeps_them() {
    let nodes = [
        node("relabelled", json!({"role": "core"}), json!([])),
        node(
            "tainted",
            json!({"role": "edge"}),
            json!([{"key": "k", "effect": "NoSchedule"}]),
        ),
        node(
            "evicting",
            json!({"role": "edge"}),
            json!([{"key": "k", "effect": "NoExecute"}]),
        ),
    ];
    let pods = [
        pod("p1", "relabelled", 1, "h1", "Running", Some(1)),
        pod("p2", "tainted", 1, "h1", "Running", Some(1)),
        pod("p3", "evicting", 1, "h1", "Running", Some(1)),
    ];
    let p = run(
        json!({"template": {"spec": {"nodeSelector": {"role": "edge"}}}}),
        &nodes,
        &pods,
    );
    assert_eq!(p.delete, ["p1", "p3"]);
    assert!(p.create_on.is_empty());
}

#[test]
fn of_duplicate_pods_the_oldest_stays() {
    let nodes = [node("a", json!({}), json!([]))];
    let pods = [
        pod("young", "a", 50, "h1", "Running", Some(50)),
        pod("old", "a", 10, "h1", "Running", Some(10)),
    ];
    assert_eq!(run(json!({}), &nodes, &pods).delete, ["young"]);
}

#[test]
fn failed_pods_are_deleted_once_per_backoff_and_succeeded_ones_always() {
    let ds = daemon_set(json!({}));
    let daemon = Daemon::new(&ds, "h1".into()).unwrap();
    let nodes = [
        node("a", json!({}), json!([])),
        node("b", json!({}), json!([])),
    ];
    let pods = [
        pod("failed", "a", 1, "h1", "Failed", None),
        pod("done", "b", 1, "h1", "Succeeded", None),
    ];
    let mut backoff = Backoff::default();
    let now = at(1_000);
    let first = plan(&daemon, &nodes, &by_node(&pods, false), &mut backoff, now);
    assert_eq!(first.delete, ["failed", "done"]);
    assert_eq!(
        first.events,
        [
            (
                EventType::Warning,
                "FailedDaemonPod",
                "Found failed daemon pod ns/failed on node a, will try to kill it".to_string()
            ),
            (
                EventType::Normal,
                "SucceededDaemonPod",
                "Found succeeded daemon pod ns/done on node b, will try to delete it".to_string()
            ),
        ]
    );
    let again = plan(&daemon, &nodes, &by_node(&pods, false), &mut backoff, now);
    assert_eq!(
        again.delete,
        ["done"],
        "the failed one waits out its back-off"
    );
    assert_eq!(again.retry_after, Some(Duration::from_secs(1)));
}

#[test]
fn unbound_pods_pinned_to_a_deleted_node_go_and_bound_ones_stay() {
    let nodes = [node("a", json!({}), json!([]))];
    let mut pinned = (*pod("pinned", "", 1, "h1", "Pending", None)).clone();
    pinned.spec = Some(PodSpec {
        affinity: Some(pin_to_node(None, "gone")),
        ..PodSpec::default()
    });
    let pods = [
        pod("here", "a", 1, "h1", "Running", Some(1)),
        Arc::new(pinned),
        pod("bound", "gone-too", 1, "h1", "Running", Some(1)),
    ];
    assert_eq!(run(json!({}), &nodes, &pods).delete, ["pinned"]);
}

#[test]
fn a_surge_keeps_the_old_pod_until_the_new_one_is_available() {
    let nodes = [node("a", json!({}), json!([]))];
    let surge = json!({"updateStrategy": {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}});
    let waiting = [
        pod("old", "a", 1, "h0", "Running", Some(1)),
        pod("new", "a", 900, "h1", "Running", None),
    ];
    assert!(run(surge.clone(), &nodes, &waiting).delete.is_empty());
    let ready = [
        pod("old", "a", 1, "h0", "Running", Some(1)),
        pod("new", "a", 900, "h1", "Running", Some(950)),
    ];
    assert_eq!(run(surge, &nodes, &ready).delete, ["old"]);
}

#[test]
fn finished_pods_being_deleted_are_not_counted() {
    let mut gone = (*pod("gone", "a", 1, "h1", "Failed", None)).clone();
    gone.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        Timestamp::from_second(5).unwrap(),
    ));
    let pods = [Arc::new(gone)];
    assert!(by_node(&pods, false).is_empty());
    assert_eq!(by_node(&pods, true).len(), 1);
}
