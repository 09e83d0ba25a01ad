use std::sync::Arc;

use k8s_openapi::api::core::v1::{ContainerStatus, PodSpec, PodStatus, PodTemplateSpec};

use super::*;

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + seconds).unwrap()
}

fn pod(phase: &str) -> Pod {
    Pod {
        status: Some(PodStatus {
            phase: Some(phase.into()),
            ..PodStatus::default()
        }),
        ..Pod::default()
    }
}

#[test]
fn a_missing_condition_is_added_only_when_not_false() {
    let mut list = Vec::new();
    assert!(!ensure_condition(
        &mut list,
        condition("Suspended", "False", "JobResumed", "Job resumed", at(0))
    ));
    assert!(list.is_empty());
    assert!(ensure_condition(
        &mut list,
        condition("Suspended", "True", "JobSuspended", "Job suspended", at(0))
    ));
    assert!(!ensure_condition(
        &mut list,
        condition("Suspended", "True", "JobSuspended", "Job suspended", at(5))
    ));
    assert_eq!(list[0].last_transition_time, Some(Time(at(0))));
    assert!(ensure_condition(
        &mut list,
        condition("Suspended", "False", "JobResumed", "Job resumed", at(9))
    ));
    assert_eq!(list[0].status, "False");
    assert_eq!(list[0].last_transition_time, Some(Time(at(9))));
}

#[test]
fn deleted_pods_count_as_failed_unless_only_failed_ones_are_replaced() {
    let mut deleting = pod("Running");
    deleting.metadata.deletion_timestamp = Some(Time(at(0)));
    let mut spec = JobSpec::default();
    assert!(is_failed(&deleting, &spec));
    assert!(is_failed(&pod("Failed"), &spec));
    assert!(!is_failed(&pod("Succeeded"), &spec));
    spec.pod_replacement_policy = Some("Failed".into());
    assert!(!is_failed(&deleting, &spec));
    assert!(is_failed(&pod("Failed"), &spec));
}

#[test]
fn active_pods_wanted_follow_parallelism_and_remaining_completions() {
    let mut spec = JobSpec {
        parallelism: Some(3),
        completions: Some(5),
        ..JobSpec::default()
    };
    assert_eq!(want_active(&spec, 0, 0), 3);
    assert_eq!(want_active(&spec, 3, 4), 1);
    assert_eq!(want_active(&spec, 0, 7), 0);
    spec.completions = None;
    assert_eq!(want_active(&spec, 2, 0), 3);
    assert_eq!(want_active(&spec, 2, 1), 2);
}

#[test]
fn restarts_of_on_failure_pods_count_against_the_backoff_limit() {
    let mut spec = JobSpec {
        backoff_limit: Some(2),
        template: PodTemplateSpec {
            spec: Some(PodSpec {
                restart_policy: Some("OnFailure".into()),
                ..PodSpec::default()
            }),
            ..PodTemplateSpec::default()
        },
        ..JobSpec::default()
    };
    let mut running = pod("Running");
    running.status.as_mut().unwrap().container_statuses = Some(vec![ContainerStatus {
        restart_count: 1,
        ..ContainerStatus::default()
    }]);
    let pods = vec![Arc::new(running.clone())];
    assert!(!past_backoff_limit_on_failure(&spec, &pods));
    let pods = vec![Arc::new(running.clone()), Arc::new(running)];
    assert!(past_backoff_limit_on_failure(&spec, &pods));
    spec.template.spec.as_mut().unwrap().restart_policy = Some("Never".into());
    assert!(!past_backoff_limit_on_failure(&spec, &pods));
}

#[test]
fn the_backoff_doubles_per_failure_and_resets_on_success() {
    let none = Backoff::default();
    assert_eq!(none.remaining(at(0)), Duration::ZERO);
    let one = none.after(vec![], vec![at(0)]);
    assert_eq!(one.remaining(at(4)), Duration::from_secs(6));
    let three = one.after(vec![], vec![at(10), at(20)]);
    assert_eq!(three.failures, 3);
    assert_eq!(three.remaining(at(20)), Duration::from_secs(40));
    let many = Backoff {
        failures: 30,
        last_failure: Some(at(0)),
    };
    assert_eq!(many.remaining(at(0)), Duration::from_secs(600));
    let reset = three.after(vec![at(30)], vec![at(25), at(35)]);
    assert_eq!(
        reset,
        Backoff {
            failures: 1,
            last_failure: Some(at(35))
        }
    );
    assert_eq!(reset.remaining(at(40)), Duration::from_secs(5));
}

#[test]
fn a_job_managed_by_another_controller_is_left_to_it() {
    let mut job = Job::default();
    assert!(!managed_elsewhere(&job));
    job.spec = Some(JobSpec {
        managed_by: Some("kubernetes.io/job-controller".into()),
        ..JobSpec::default()
    });
    assert!(!managed_elsewhere(&job));
    job.spec.as_mut().unwrap().managed_by = Some("kueue.x-k8s.io/multikueue".into());
    assert!(managed_elsewhere(&job));
}
