use serde_json::{Value, json};

use super::*;

fn policy(rules: Value) -> SuccessPolicy {
    serde_json::from_value(json!({ "rules": rules })).unwrap()
}

#[test]
fn no_policy_or_no_success_meets_nothing() {
    let done = Intervals::parse("0-4", 5);
    assert_eq!(met(None, 5, &done), None);
    let rules = policy(json!([{"succeededCount": 1}]));
    assert_eq!(met(Some(&rules), 5, &Intervals::default()), None);
}

#[test]
fn named_indexes_must_all_succeed_unless_a_count_is_given() {
    let rules = policy(json!([
        {"succeededIndexes": "0,2-3"},
        {"succeededIndexes": "5-9", "succeededCount": 2}
    ]));
    assert_eq!(met(Some(&rules), 10, &Intervals::parse("0,2", 10)), None);
    assert_eq!(
        met(Some(&rules), 10, &Intervals::parse("0-3", 10)),
        Some("Matched rules at index 0".into())
    );
    assert_eq!(
        met(Some(&rules), 10, &Intervals::parse("1,6,9", 10)),
        Some("Matched rules at index 1".into())
    );
}

#[test]
fn a_count_alone_counts_any_indexes_and_unparsable_rules_are_skipped() {
    let rules = policy(json!([
        {"succeededIndexes": "12-15"},
        {"succeededCount": 3}
    ]));
    assert_eq!(met(Some(&rules), 10, &Intervals::parse("1,4", 10)), None);
    assert_eq!(
        met(Some(&rules), 10, &Intervals::parse("1,4,8", 10)),
        Some("Matched rules at index 1".into())
    );
}
