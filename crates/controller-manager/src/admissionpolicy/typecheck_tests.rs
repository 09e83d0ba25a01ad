use serde_json::json;

use super::*;

fn resource(group: &str, version: &str, plural: &str) -> Resource {
    Resource {
        group: group.into(),
        version: version.into(),
        plural: plural.into(),
    }
}

fn kind(group: &str, version: &str, kind: &str) -> Kind {
    Kind {
        group: group.into(),
        version: version.into(),
        kind: kind.into(),
    }
}

#[test]
fn wildcard_groups_or_versions_skip_a_rule_and_wildcard_or_sub_resources_skip_themselves() {
    let policy = json!({"spec": {"matchConstraints": {"resourceRules": [
        {"apiGroups": ["apps", ""], "apiVersions": ["v1"], "resources": ["pods", "deployments", "configmaps/status", "*"]},
        {"apiGroups": ["*"], "apiVersions": ["v1"], "resources": ["pods"]},
        {"apiGroups": [""], "apiVersions": ["v*"], "resources": ["pods"]},
        {"apiGroups": [], "apiVersions": ["v1"], "resources": ["pods"]}
    ]}}});
    assert_eq!(
        resources(&policy),
        [
            vec![
                resource("", "v1", "deployments"),
                resource("", "v1", "pods"),
                resource("apps", "v1", "deployments"),
                resource("apps", "v1", "pods"),
            ],
            vec![],
            vec![],
            vec![],
        ]
    );
    assert!(resources(&json!({"spec": {}})).is_empty());
}

#[test]
fn kinds_are_the_served_ones_sorted_without_repeats_and_at_most_ten_found() {
    let rules = vec![
        vec![
            resource("", "v1", "pods"),
            resource("apps", "v1", "deployments"),
            resource("", "v1", "nothing"),
        ],
        vec![resource("", "v1", "pods")],
    ];
    let served = |r: &Resource| match r.plural.as_str() {
        "pods" => Some(kind("", "v1", "Pod")),
        "deployments" => Some(kind("apps", "v1", "Deployment")),
        _ => None,
    };
    assert_eq!(
        kinds(&rules, served),
        [kind("", "v1", "Pod"), kind("apps", "v1", "Deployment")]
    );
    let many: Vec<Vec<Resource>> = vec![
        (0..12)
            .map(|i| resource("g", "v1", &format!("r{i:02}")))
            .collect(),
    ];
    let found = kinds(&many, |r| Some(kind("g", "v1", &r.plural)));
    assert_eq!(found.len(), MAX_KINDS);
    assert_eq!(found.last(), Some(&kind("g", "v1", "r09")));
}

#[test]
fn expressions_are_validations_and_their_message_expressions() {
    let policy = json!({"spec": {
        "validations": [
            {"expression": "a"},
            {"expression": "b", "messageExpression": "c", "message": "m"}
        ],
        "auditAnnotations": [{"key": "k", "valueExpression": "d"}],
        "matchConditions": [{"name": "n", "expression": "e"}]
    }});
    assert_eq!(
        expressions(&policy),
        [
            ("spec.validations[0].expression".to_owned(), "a".to_owned()),
            ("spec.validations[1].expression".to_owned(), "b".to_owned()),
            (
                "spec.validations[1].messageExpression".to_owned(),
                "c".to_owned()
            ),
        ]
    );
}

/// The shape v1.36's controller-manager wrote for a policy matching pods and deployments.
#[test]
fn a_warning_is_one_block_per_failing_kind_as_v1_36_joins_them() {
    let issue = "ERROR: <input>:1:16: undefined field 'dataa'\n | 'bad ' + params.dataa\n | ...............^";
    assert_eq!(warning(&[]), None);
    assert_eq!(
        warning(&[
            (kind("", "v1", "Pod"), issue.to_owned()),
            (kind("apps", "v1", "Deployment"), issue.to_owned()),
        ])
        .unwrap(),
        format!("/v1, Kind=Pod: {issue}\n\napps/v1, Kind=Deployment: {issue}\n")
    );
}
