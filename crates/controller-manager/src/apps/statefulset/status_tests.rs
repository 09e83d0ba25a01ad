use k8s_openapi::api::apps::v1::{StatefulSetSpec, StatefulSetUpdateStrategy};
use k8s_openapi::api::core::v1::{PodCondition, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

use super::*;

fn pod(revision: &str, phase: &str, ready_at: Option<i64>, deleting: bool) -> Arc<Pod> {
    let conditions = ready_at.map(|s| {
        vec![PodCondition {
            type_: "Ready".into(),
            status: "True".into(),
            last_transition_time: Some(Time(Timestamp::from_second(s).unwrap())),
            ..PodCondition::default()
        }]
    });
    Arc::new(Pod {
        metadata: ObjectMeta {
            labels: Some([("controller-revision-hash".to_string(), revision.to_string())].into()),
            deletion_timestamp: deleting.then_some(Time(Timestamp::UNIX_EPOCH)),
            ..ObjectMeta::default()
        },
        spec: None,
        status: (!phase.is_empty()).then(|| PodStatus {
            phase: Some(phase.into()),
            conditions,
            ..PodStatus::default()
        }),
    })
}

fn at(s: i64) -> Timestamp {
    Timestamp::from_second(s).unwrap()
}

#[test]
fn counts_follow_phase_readiness_availability_and_revision() {
    let mut status = StatefulSetStatus {
        current_revision: Some("old".into()),
        update_revision: Some("new".into()),
        ..StatefulSetStatus::default()
    };
    let pods = [
        pod("old", "Running", Some(100), false),
        pod("new", "Running", Some(195), false),
        pod("new", "Pending", None, false),
        pod("new", "", None, false),
        pod("old", "Running", Some(100), true),
    ];
    count_pods(&mut status, &pods, 10, at(200));
    assert_eq!(
        status.replicas, 4,
        "a Pod without a phase is not created yet"
    );
    assert_eq!(status.ready_replicas, Some(3));
    assert_eq!(
        status.available_replicas,
        Some(2),
        "ready for 5 s < minReadySeconds 10"
    );
    assert_eq!(
        status.current_replicas,
        Some(1),
        "terminating Pods are not counted"
    );
    assert_eq!(status.updated_replicas, Some(2));
}

#[test]
fn zero_counts_are_omitted_but_available_is_written() {
    let mut status = StatefulSetStatus::default();
    count_pods(&mut status, &[pod("x", "Pending", None, false)], 0, at(0));
    assert_eq!(status.ready_replicas, None);
    assert_eq!(status.current_replicas, None);
    assert_eq!(status.available_replicas, Some(0));
}

fn rolling_set(replicas: i32) -> StatefulSet {
    StatefulSet {
        spec: Some(StatefulSetSpec {
            replicas: Some(replicas),
            update_strategy: Some(StatefulSetUpdateStrategy {
                type_: Some("RollingUpdate".into()),
                rolling_update: None,
            }),
            ..StatefulSetSpec::default()
        }),
        ..StatefulSet::default()
    }
}

#[test]
fn a_finished_rollout_makes_the_update_revision_current() {
    let mut status = StatefulSetStatus {
        replicas: 2,
        ready_replicas: Some(2),
        updated_replicas: Some(2),
        current_replicas: Some(0),
        current_revision: Some("old".into()),
        update_revision: Some("new".into()),
        ..StatefulSetStatus::default()
    };
    let mut unfinished = status.clone();
    unfinished.ready_replicas = Some(1);
    complete_rolling_update(&rolling_set(2), &mut unfinished);
    assert_eq!(unfinished.current_revision.as_deref(), Some("old"));
    complete_rolling_update(&rolling_set(2), &mut status);
    assert_eq!(status.current_revision.as_deref(), Some("new"));
    assert_eq!(status.current_replicas, Some(2));
}

#[test]
fn a_status_is_written_only_when_it_changes() {
    let mut set = rolling_set(1);
    let status = StatefulSetStatus {
        observed_generation: Some(1),
        replicas: 1,
        available_replicas: Some(0),
        ..StatefulSetStatus::default()
    };
    assert!(differs(&set, &status));
    set.status = Some(status.clone());
    assert!(!differs(&set, &status));
    let mut older = status.clone();
    older.observed_generation = Some(0);
    assert!(!differs(&set, &older), "an older generation is not news");
}
