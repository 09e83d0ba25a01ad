use std::sync::Arc;

use k8s_openapi::api::core::v1::{Pod, PodCondition, PodSpec, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;

use super::*;

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(seconds).unwrap()
}

fn pod(name: &str, created: i64, node: &str, phase: &str, ready: bool) -> Arc<Pod> {
    let conditions = ready.then(|| {
        vec![PodCondition {
            type_: "Ready".into(),
            status: "True".into(),
            last_transition_time: Some(Time(at(created))),
            ..PodCondition::default()
        }]
    });
    Arc::new(Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            uid: Some(format!("uid-{name}")),
            creation_timestamp: Some(Time(at(created))),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            node_name: (!node.is_empty()).then(|| node.into()),
            ..PodSpec::default()
        }),
        status: Some(PodStatus {
            phase: Some(phase.into()),
            conditions,
            ..PodStatus::default()
        }),
    })
}

fn names(pods: &[Arc<Pod>]) -> Vec<&str> {
    pods.iter()
        .map(|p| p.metadata.name.as_deref().unwrap())
        .collect()
}

#[test]
fn unscheduled_pending_and_unready_pods_go_first() {
    let now = at(10_000);
    let pods = vec![
        pod("running-ready", 100, "n1", "Running", true),
        pod("running", 100, "n1", "Running", false),
        pod("pending-on-node", 100, "n1", "Pending", false),
        pod("unscheduled", 100, "", "Pending", false),
    ];
    let order = pods_to_delete(pods.clone(), &pods, 3, now);
    assert_eq!(names(&order), ["unscheduled", "pending-on-node", "running"]);
}

#[test]
fn among_equal_pods_the_newest_goes_first() {
    let now = at(10_000);
    // Ages 9900 s, 5000 s and 1 s fall in different log2 buckets.
    let pods = vec![
        pod("old", 100, "", "Pending", false),
        pod("mid", 5_000, "", "Pending", false),
        pod("new", 9_999, "", "Pending", false),
    ];
    let order = pods_to_delete(pods, &[], 2, now);
    assert_eq!(names(&order), ["new", "mid"]);
}

#[test]
fn pods_in_the_same_age_bucket_are_ordered_by_uid() {
    let now = at(10_000);
    // 9 s and 10 s old: both in the 2^33 ns bucket.
    let pods = vec![
        pod("b", 9_991, "", "Pending", false),
        pod("a", 9_990, "", "Pending", false),
    ];
    let order = pods_to_delete(pods, &[], 1, now);
    assert_eq!(names(&order), ["a"]);
}

#[test]
fn lower_deletion_cost_goes_first() {
    let now = at(10_000);
    let mut cheap = (*pod("cheap", 100, "", "Pending", false)).clone();
    cheap.metadata.annotations = Some([(DELETION_COST.to_string(), "-5".to_string())].into());
    let pods = vec![pod("new", 9_999, "", "Pending", false), Arc::new(cheap)];
    assert_eq!(names(&pods_to_delete(pods, &[], 1, now)), ["cheap"]);
}

#[test]
fn doubled_up_pods_go_first() {
    let now = at(10_000);
    let a = pod("alone", 100, "n1", "Running", true);
    let b = pod("crowded", 100, "n2", "Running", true);
    let related = vec![
        a.clone(),
        b.clone(),
        pod("other", 100, "n2", "Running", true),
    ];
    assert_eq!(
        names(&pods_to_delete(vec![a, b], &related, 1, now)),
        ["crowded"]
    );
}

#[test]
fn deleting_all_keeps_the_given_order() {
    let pods = vec![
        pod("x", 1, "n", "Running", true),
        pod("y", 2, "", "Pending", false),
    ];
    assert_eq!(names(&pods_to_delete(pods, &[], 5, at(10))), ["x", "y"]);
}

#[test]
fn active_terminating_and_available() {
    let mut p = (*pod("p", 100, "", "Running", true)).clone();
    assert!(is_active(&p) && !is_terminating(&p));
    assert!(is_available(&p, 10, at(110)));
    assert!(!is_available(&p, 10, at(109)));
    p.metadata.deletion_timestamp = Some(Time(at(200)));
    assert!(!is_active(&p) && is_terminating(&p));
    p.status.as_mut().unwrap().phase = Some("Succeeded".into());
    assert!(!is_active(&p) && !is_terminating(&p));
}
