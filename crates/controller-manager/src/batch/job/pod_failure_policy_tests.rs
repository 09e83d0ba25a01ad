use serde_json::{Value, json};

use super::*;

fn policy(rules: Value) -> PodFailurePolicy {
    serde_json::from_value(json!({ "rules": rules })).unwrap()
}

/// A failed Pod `ns/p` whose containers exited with `codes` (name, code), with `conditions`.
fn failed_pod(codes: &[(&str, i32)], conditions: Value) -> Pod {
    let statuses: Vec<Value> = codes
        .iter()
        .map(|(name, code)| {
            json!({"name": name, "image": "i", "imageID": "", "ready": false, "restartCount": 0,
                   "state": {"terminated": {"exitCode": code}}})
        })
        .collect();
    serde_json::from_value(json!({
        "metadata": {"namespace": "ns", "name": "p"},
        "status": {"phase": "Failed", "containerStatuses": statuses, "conditions": conditions}
    }))
    .unwrap()
}

#[test]
fn without_a_policy_every_failure_counts() {
    let pod = failed_pod(&[("c", 1)], json!([]));
    assert_eq!(judge(None, &pod), Verdict::Count);
}

#[test]
fn the_first_matching_rule_decides_with_v1_36s_message() {
    let rules = policy(json!([
        {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [2]}},
        {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [1, 42]}},
        {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [42]}}
    ]));
    let pod = failed_pod(&[("side", 42), ("main", 42)], json!([]));
    assert_eq!(
        judge(Some(&rules), &pod),
        Verdict::FailJob(
            "Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 1"
                .into()
        )
    );
    let ignored = failed_pod(&[("main", 2)], json!([]));
    assert_eq!(judge(Some(&rules), &ignored), Verdict::Ignore);
    assert!(!Verdict::Ignore.counts());
    let unmatched = failed_pod(&[("main", 3)], json!([]));
    assert_eq!(judge(Some(&rules), &unmatched), Verdict::Count);
}

#[test]
fn not_in_never_matches_a_zero_exit_code() {
    let rules = policy(json!([
        {"action": "FailJob", "onExitCodes": {"operator": "NotIn", "values": [5]}}
    ]));
    let clean = failed_pod(&[("c", 0)], json!([]));
    assert_eq!(judge(Some(&rules), &clean), Verdict::Count);
    let other = failed_pod(&[("c", 6)], json!([]));
    assert!(matches!(judge(Some(&rules), &other), Verdict::FailJob(_)));
}

#[test]
fn pod_conditions_match_by_type_and_status_defaulting_to_true() {
    let rules = policy(json!([
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
        {"action": "FailJob", "onPodConditions": [{"type": "ConfigIssue", "status": "True"}]}
    ]));
    let disrupted = failed_pod(
        &[("c", 137)],
        json!([{"type": "DisruptionTarget", "status": "True"}]),
    );
    assert_eq!(judge(Some(&rules), &disrupted), Verdict::Ignore);
    let not_disrupted = failed_pod(
        &[("c", 137)],
        json!([{"type": "DisruptionTarget", "status": "False"}]),
    );
    assert_eq!(judge(Some(&rules), &not_disrupted), Verdict::Count);
    let misconfigured = failed_pod(&[], json!([{"type": "ConfigIssue", "status": "True"}]));
    assert_eq!(
        judge(Some(&rules), &misconfigured),
        Verdict::FailJob(
            "Pod ns/p has condition ConfigIssue matching FailJob rule at index 1".into()
        )
    );
}

#[test]
fn fail_index_counts_and_fails_the_index_and_unknown_actions_are_passed_over() {
    let rules = policy(json!([
        {"action": "Unknown", "onExitCodes": {"operator": "In", "values": [1]}},
        {"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [1]}},
        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1]}}
    ]));
    let pod = failed_pod(&[("c", 1)], json!([]));
    let verdict = judge(Some(&rules), &pod);
    assert_eq!(verdict, Verdict::FailIndex);
    assert!(verdict.counts());
}
