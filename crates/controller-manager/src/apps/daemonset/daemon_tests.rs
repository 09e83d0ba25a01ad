use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::apps::daemonset::fixtures::{daemon_set, pod};

#[test]
fn created_pods_carry_the_generation_hash_and_daemon_tolerations() {
    let ds = daemon_set(json!({}));
    let daemon = Daemon::new(&ds, "abc".into()).unwrap();
    let template = daemon.pod_template();
    let labels = template.metadata.unwrap().labels.unwrap();
    assert_eq!(labels["pod-template-generation"], "1");
    assert_eq!(labels["controller-revision-hash"], "abc");
    assert_eq!(labels["app"], "agent");
    assert_eq!(template.spec.unwrap().tolerations.unwrap().len(), 6);
}

#[test]
fn a_pod_is_updated_by_hash_or_by_template_generation() {
    let ds = daemon_set(json!({}));
    let daemon = Daemon::new(&ds, "new".into()).unwrap();
    assert!(daemon.is_updated(&pod("a", "n", 0, "new", "Running", None)));
    assert!(!daemon.is_updated(&pod("b", "n", 0, "old", "Running", None)));
    let mut by_generation = (*pod("c", "n", 0, "old", "Running", None)).clone();
    by_generation
        .metadata
        .labels
        .as_mut()
        .unwrap()
        .insert("pod-template-generation".into(), "1".into());
    assert!(daemon.is_updated(&by_generation));
}

#[test]
fn surge_and_unavailability_scale_with_the_desired_nodes() {
    let ds = daemon_set(
        json!({"updateStrategy": {"rollingUpdate": {"maxUnavailable": "50%", "maxSurge": "25%"}}}),
    );
    let daemon = Daemon::new(&ds, String::new()).unwrap();
    assert_eq!(daemon.unavailable_count(3), 2, "rounded up");
    assert_eq!(daemon.surge_count(3), 1);
    assert!(daemon.allows_surge());
    let on_delete =
        daemon_set(json!({"updateStrategy": {"type": "OnDelete", "rollingUpdate": null}}));
    let daemon = Daemon::new(&on_delete, String::new()).unwrap();
    assert!(!daemon.rolls());
    assert_eq!((daemon.unavailable_count(3), daemon.surge_count(3)), (0, 0));
}

#[test]
fn bound_pods_then_the_oldest_come_first() {
    let mut unbound = (*pod("a", "", 1, "h", "Pending", None)).clone();
    unbound.spec.as_mut().unwrap().node_name = None;
    let mut pods = [
        Arc::new(unbound),
        pod("c", "n", 5, "h", "Running", None),
        pod("b", "n", 5, "h", "Running", None),
        pod("d", "n", 2, "h", "Running", None),
    ];
    pods.sort_by(oldest_bound_first);
    let names: Vec<_> = pods
        .iter()
        .map(|p| p.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(names, ["d", "b", "c", "a"]);
}
