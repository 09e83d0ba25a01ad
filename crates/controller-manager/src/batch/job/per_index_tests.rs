use serde_json::{Value, json};

use super::*;

fn spec(extra: Value) -> JobSpec {
    let mut spec = json!({
        "completionMode": "Indexed", "completions": 3, "backoffLimitPerIndex": 1,
        "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}
    });
    if let (Value::Object(into), Value::Object(from)) = (&mut spec, extra) {
        into.extend(from);
    }
    serde_json::from_value(spec).unwrap()
}

/// A Pod of index `ix` in `phase`, with failure counts `(counted, ignored)` and the tracking
/// finalizer, its container finished at second `finished` (exit code 1 when failed).
fn pod(ix: usize, phase: &str, counts: (i32, i32), finished: i64) -> Arc<Pod> {
    let mut annotations = json!({
        "batch.kubernetes.io/job-completion-index": ix.to_string(),
        FAILURE_COUNT: counts.0.to_string(),
    });
    if counts.1 > 0 {
        annotations[IGNORED_FAILURE_COUNT] = json!(counts.1.to_string());
    }
    let at = Timestamp::from_second(1_800_000_000 + finished)
        .unwrap()
        .to_string();
    let code = i32::from(phase == "Failed");
    Arc::new(
        serde_json::from_value(json!({
            "metadata": {"name": format!("p{ix}-{finished}"), "namespace": "ns",
                         "uid": format!("u{ix}-{finished}"), "annotations": annotations,
                         "finalizers": ["batch.kubernetes.io/job-tracking"]},
            "status": {"phase": phase, "containerStatuses": [{
                "name": "c", "image": "i", "imageID": "", "ready": false, "restartCount": 0,
                "state": {"terminated": {"exitCode": code, "finishedAt": at}}}]}
        }))
        .unwrap(),
    )
}

fn job(spec: &JobSpec, failed_indexes: Option<&str>) -> Job {
    serde_json::from_value(json!({
        "metadata": {"name": "j", "namespace": "ns"},
        "spec": spec,
        "status": {"failedIndexes": failed_indexes}
    }))
    .unwrap()
}

#[test]
fn an_index_fails_once_its_counted_failures_reach_the_limit() {
    let s = spec(json!({}));
    assert!(
        !fails_index(&s, &pod(0, "Failed", (0, 0), 0)),
        "the first failure is retried"
    );
    assert!(
        fails_index(&s, &pod(0, "Failed", (1, 0), 0)),
        "the second fails the index"
    );
    assert!(!fails_index(&s, &pod(0, "Succeeded", (1, 0), 0)));
    assert!(!fails_index(&s, &pod(0, "Running", (5, 0), 0)));
}

#[test]
fn the_policy_can_fail_an_index_at_once_or_keep_a_failure_from_counting() {
    let fail_index = spec(json!({"podFailurePolicy": {"rules": [
        {"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [1]}}]}}));
    assert!(fails_index(&fail_index, &pod(0, "Failed", (0, 0), 0)));
    let ignore = spec(json!({"podFailurePolicy": {"rules": [
        {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [1]}}]}}));
    assert!(!fails_index(&ignore, &pod(0, "Failed", (7, 0), 0)));
}

#[test]
fn failed_indexes_join_the_status_and_the_pods_still_tracked() {
    let s = spec(json!({"completions": 5}));
    let pods = [pod(3, "Failed", (1, 0), 0), pod(1, "Failed", (0, 0), 0)];
    let found = failed_indexes(&job(&s, Some("0")), &pods, 5);
    assert_eq!(found.to_string(), "0,3");
    assert_eq!(failed_indexes(&job(&s, None), &[], 5).to_string(), "");
}

#[test]
fn the_last_failed_pod_of_a_pending_index_awaits_its_replacement() {
    let s = spec(json!({"completions": 4}));
    let now = Timestamp::from_second(1_800_000_100).unwrap();
    let pods = vec![
        pod(0, "Failed", (0, 0), 0),
        pod(0, "Failed", (1, 1), 10),
        pod(1, "Failed", (0, 0), 0),
        pod(2, "Failed", (0, 0), 0),
        pod(3, "Failed", (0, 0), 0),
    ];
    let succeeded = Intervals::parse("1", 4);
    let failed = Intervals::parse("2", 4);
    let active = vec![pod(3, "Running", (1, 0), 20)];
    let waiting = awaiting_replacement(&s, &pods, |_| true, (&succeeded, &failed), &active, now);
    assert_eq!(waiting.len(), 1, "indexes 1-3 are settled or running");
    assert_eq!(waiting[&0].metadata.name.as_deref(), Some("p0-10"));
}

#[test]
fn a_replacement_carries_the_failures_of_the_pod_it_replaces() {
    let s = spec(json!({}));
    assert_eq!(
        replacement_annotations(&s, None),
        vec![(FAILURE_COUNT, "0".to_owned())]
    );
    let replaced = pod(0, "Failed", (1, 2), 0);
    assert_eq!(
        replacement_annotations(&s, Some(&replaced)),
        vec![
            (FAILURE_COUNT, "2".into()),
            (IGNORED_FAILURE_COUNT, "2".into())
        ]
    );
    let ignore = spec(json!({"podFailurePolicy": {"rules": [
        {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [1]}}]}}));
    assert_eq!(
        replacement_annotations(&ignore, Some(&pod(0, "Failed", (0, 0), 0))),
        vec![
            (FAILURE_COUNT, "0".into()),
            (IGNORED_FAILURE_COUNT, "1".into())
        ]
    );
}

#[test]
fn replacements_wait_ten_seconds_doubling_per_failure_of_the_index() {
    let finished = Timestamp::from_second(1_800_000_000).unwrap();
    let at = |s: i64| Timestamp::from_second(1_800_000_000 + s).unwrap();
    assert_eq!(wait_before_replacing(None, finished), Duration::ZERO);
    let first = pod(0, "Failed", (0, 0), 0);
    assert_eq!(
        wait_before_replacing(Some(&first), at(4)),
        Duration::from_secs(6)
    );
    let third = pod(0, "Failed", (1, 1), 0);
    assert_eq!(
        wait_before_replacing(Some(&third), at(4)),
        Duration::from_secs(36)
    );
    assert_eq!(wait_before_replacing(Some(&third), at(60)), Duration::ZERO);
    let malformed = {
        let mut p = (*first).clone();
        p.metadata
            .annotations
            .as_mut()
            .unwrap()
            .insert(FAILURE_COUNT.into(), "-3".into());
        p
    };
    assert_eq!(
        wait_before_replacing(Some(&malformed), at(4)),
        Duration::from_secs(6),
        "a negative count reads as 0"
    );
}
