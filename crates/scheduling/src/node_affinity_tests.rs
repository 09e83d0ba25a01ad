use k8s_openapi::api::core::v1::{Affinity, NodeAffinity, NodeSelector};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::*;

fn node(name: &str, labels: &[(&str, &str)]) -> Node {
    Node {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| ((*k).into(), (*v).into()))
                    .collect(),
            ),
            ..ObjectMeta::default()
        },
        ..Node::default()
    }
}

fn requirement(key: &str, operator: &str, values: &[&str]) -> NodeSelectorRequirement {
    NodeSelectorRequirement {
        key: key.into(),
        operator: operator.into(),
        values: Some(values.iter().map(|v| (*v).into()).collect()),
    }
}

fn expressions(requirements: Vec<NodeSelectorRequirement>) -> NodeSelectorTerm {
    NodeSelectorTerm {
        match_expressions: Some(requirements),
        ..NodeSelectorTerm::default()
    }
}

fn fields(requirements: Vec<NodeSelectorRequirement>) -> NodeSelectorTerm {
    NodeSelectorTerm {
        match_fields: Some(requirements),
        ..NodeSelectorTerm::default()
    }
}

fn spec(selector: &[(&str, &str)], terms: Option<Vec<NodeSelectorTerm>>) -> PodSpec {
    PodSpec {
        node_selector: (!selector.is_empty()).then(|| {
            selector
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect()
        }),
        affinity: terms.map(|node_selector_terms| Affinity {
            node_affinity: Some(NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                    node_selector_terms,
                }),
                ..NodeAffinity::default()
            }),
            ..Affinity::default()
        }),
        ..PodSpec::default()
    }
}

fn fits(spec: &PodSpec, node: &Node) -> bool {
    RequiredNodeAffinity::of(spec).matches(node)
}

#[test]
fn no_requirement_fits_every_node() {
    assert!(fits(&spec(&[], None), &node("n", &[])));
}

#[test]
fn every_node_selector_label_must_be_there_with_its_value() {
    let s = spec(&[("zone", "a"), ("disk", "ssd")], None);
    assert!(fits(
        &s,
        &node("n", &[("zone", "a"), ("disk", "ssd"), ("x", "y")])
    ));
    assert!(!fits(&s, &node("n", &[("zone", "a")])));
    assert!(!fits(&s, &node("n", &[("zone", "b"), ("disk", "ssd")])));
}

#[test]
fn terms_are_ored_and_their_requirements_anded() {
    let s = spec(
        &[],
        Some(vec![
            expressions(vec![
                requirement("zone", "In", &["a", "b"]),
                requirement("gpu", "DoesNotExist", &[]),
            ]),
            expressions(vec![requirement("pool", "Exists", &[])]),
        ]),
    );
    assert!(fits(&s, &node("n", &[("zone", "b")])));
    assert!(!fits(&s, &node("n", &[("zone", "b"), ("gpu", "1")])));
    assert!(fits(&s, &node("n", &[("zone", "c"), ("pool", "x")])));
    assert!(!fits(&s, &node("n", &[("zone", "c")])));
}

#[test]
fn not_in_matches_an_absent_label_and_gt_lt_compare_integers() {
    let not_in = spec(
        &[],
        Some(vec![expressions(vec![requirement(
            "zone",
            "NotIn",
            &["a"],
        )])]),
    );
    assert!(fits(&not_in, &node("n", &[])));
    assert!(!fits(&not_in, &node("n", &[("zone", "a")])));
    let gt = spec(
        &[],
        Some(vec![expressions(vec![requirement("cores", "Gt", &["4"])])]),
    );
    assert!(fits(&gt, &node("n", &[("cores", "8")])));
    assert!(!fits(&gt, &node("n", &[("cores", "4")])));
    assert!(!fits(&gt, &node("n", &[("cores", "many")])));
    assert!(!fits(&gt, &node("n", &[])));
    let lt = spec(
        &[],
        Some(vec![expressions(vec![requirement("cores", "Lt", &["4"])])]),
    );
    assert!(fits(&lt, &node("n", &[("cores", "2")])));
}

#[test]
fn a_term_that_does_not_parse_or_is_empty_matches_nothing() {
    let labelled = node("n", &[("zone", "a")]);
    for broken in [
        requirement("zone", "In", &[]),
        requirement("zone", "Exists", &["a"]),
        requirement("cores", "Gt", &["1", "2"]),
        requirement("cores", "Gt", &["x"]),
        requirement("zone", "Near", &["a"]),
    ] {
        let s = spec(
            &[],
            Some(vec![expressions(vec![
                requirement("zone", "Exists", &[]),
                broken.clone(),
            ])]),
        );
        assert!(!fits(&s, &labelled), "{broken:?}");
    }
    assert!(!fits(
        &spec(&[], Some(vec![NodeSelectorTerm::default()])),
        &labelled
    ));
    assert!(
        !fits(&spec(&[], Some(vec![])), &labelled),
        "a required affinity without terms selects nothing"
    );
}

#[test]
fn match_fields_name_the_node_with_one_value_in_or_not_in() {
    let n = node("node-1", &[]);
    let pinned = spec(
        &[],
        Some(vec![fields(vec![requirement(
            NODE_NAME_FIELD,
            "In",
            &["node-1"],
        )])]),
    );
    assert!(fits(&pinned, &n));
    assert!(!fits(&pinned, &node("node-2", &[])));
    let not = spec(
        &[],
        Some(vec![fields(vec![requirement(
            NODE_NAME_FIELD,
            "NotIn",
            &["node-1"],
        )])]),
    );
    assert!(!fits(&not, &n));
    assert!(fits(&not, &node("node-2", &[])));
    for broken in [
        requirement(NODE_NAME_FIELD, "In", &["node-1", "node-2"]),
        requirement(NODE_NAME_FIELD, "Exists", &[]),
    ] {
        let s = spec(&[], Some(vec![fields(vec![broken.clone()])]));
        assert!(!fits(&s, &n), "{broken:?}");
    }
    let other_field = spec(
        &[],
        Some(vec![fields(vec![requirement("spec.x", "In", &["a"])])]),
    );
    assert!(
        !fits(&other_field, &n),
        "a field the Node lacks reads as empty"
    );
}

#[test]
fn fields_and_expressions_of_one_term_are_anded() {
    let s = spec(
        &[],
        Some(vec![NodeSelectorTerm {
            match_expressions: Some(vec![requirement("zone", "In", &["a"])]),
            match_fields: Some(vec![requirement(NODE_NAME_FIELD, "In", &["node-1"])]),
        }]),
    );
    assert!(fits(&s, &node("node-1", &[("zone", "a")])));
    assert!(!fits(&s, &node("node-1", &[("zone", "b")])));
    assert!(!fits(&s, &node("node-2", &[("zone", "a")])));
}
