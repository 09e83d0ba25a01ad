use k8s_openapi::api::core::v1::{PodCondition, PodSpec, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;

fn at(second: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + second).unwrap()
}

fn pod(conditions: Vec<PodCondition>) -> Pod {
    let mut pod = Pod {
        status: Some(PodStatus {
            conditions: Some(conditions),
            ..PodStatus::default()
        }),
        ..Pod::default()
    };
    pod.metadata.uid = Some("u1".into());
    pod.metadata.generation = Some(1);
    pod
}

fn body(patch: Patch) -> serde_json::Value {
    match patch {
        Patch::Strategic(value) => value,
        _ => unreachable!("the condition is written by strategic merge patch"),
    }
}

#[test]
fn the_disruption_condition_is_patched_with_the_uid_as_precondition() {
    let patch = body(disruption_patch(&pod(vec![]), at(5)).unwrap());
    assert_eq!(
        patch,
        json!({
            "metadata": {"uid": "u1"},
            "status": {"conditions": [{
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "DeletionByTaintManager",
                "message": "Taint manager: deleting due to NoExecute taint",
                "lastTransitionTime": Time(at(5)),
                "observedGeneration": 1,
            }]},
        })
    );
}

#[test]
fn a_present_condition_is_not_written_again_and_keeps_its_transition() {
    let same = PodCondition {
        type_: "DisruptionTarget".into(),
        status: "True".into(),
        reason: Some(REASON.into()),
        message: Some(MESSAGE.into()),
        last_transition_time: Some(Time(at(1))),
        ..PodCondition::default()
    };
    assert!(disruption_patch(&pod(vec![same.clone()]), at(5)).is_none());
    let other = PodCondition {
        reason: Some("EvictionByEvictionAPI".into()),
        ..same
    };
    let patch = body(disruption_patch(&pod(vec![other]), at(5)).unwrap());
    assert_eq!(
        patch["status"]["conditions"][0]["lastTransitionTime"],
        json!(Time(at(1)))
    );
}

#[test]
fn only_no_execute_taints_count_and_items_carry_the_node() {
    let taint = |effect: &str| Taint {
        key: "k".into(),
        effect: effect.into(),
        ..Taint::default()
    };
    assert_eq!(
        no_execute(&[taint("NoSchedule"), taint("NoExecute")]),
        [taint("NoExecute")]
    );
    let mut p = Pod {
        spec: Some(PodSpec {
            node_name: Some("n1".into()),
            ..PodSpec::default()
        }),
        ..Pod::default()
    };
    p.metadata.namespace = Some("ns".into());
    p.metadata.name = Some("web".into());
    assert_eq!(pod_item(&p), "ns/web|n1");
}

#[test]
fn decisions_follow_how_long_the_pod_may_stay() {
    let now = Instant::now();
    let earlier = now - Duration::from_secs(1);
    let wait = Duration::from_secs(2);
    assert_eq!(decide(Stay::Forever, Some(earlier), now), Decision::Cancel);
    assert_eq!(
        decide(Stay::None, Some(earlier), now),
        Decision::Plan {
            created: now,
            fire_at: now
        }
    );
    assert_eq!(
        decide(Stay::For(wait), None, now),
        Decision::Plan {
            created: now,
            fire_at: now + wait
        }
    );
    assert_eq!(
        decide(Stay::For(wait), Some(earlier), now),
        Decision::Keep,
        "a plan made earlier stands"
    );
    assert_eq!(
        decide(Stay::For(wait), Some(now), now),
        Decision::Plan {
            created: now,
            fire_at: now + wait
        }
    );
}
