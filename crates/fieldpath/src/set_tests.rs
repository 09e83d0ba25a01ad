use serde_json::json;

use super::*;

fn set(paths: &[&[&str]]) -> FieldSet {
    let mut out = FieldSet::default();
    for path in paths {
        let owned: Vec<String> = path.iter().map(|s| s.to_string()).collect();
        out.insert(&owned);
    }
    out
}

#[test]
fn members_with_children_carry_a_dot_and_leaves_are_empty_objects() {
    let s = set(&[
        &["f:data"],
        &["f:data", "f:a"],
        &["f:metadata", "f:labels", "f:app"],
    ]);
    assert_eq!(
        s.to_fields_v1(),
        json!({"f:data": {".": {}, "f:a": {}}, "f:metadata": {"f:labels": {"f:app": {}}}})
    );
}

#[test]
fn fields_v1_round_trips_and_rejects_unknown_elements() {
    let encoded =
        json!({"f:spec": {"f:containers": {"k:{\"name\":\"a\"}": {".": {}, "f:image": {}}}}});
    let decoded = FieldSet::from_fields_v1(&encoded).expect("valid fieldsV1");
    assert_eq!(decoded.to_fields_v1(), encoded);
    assert_eq!(
        decoded.paths(),
        vec![
            vec!["f:spec", "f:containers", "k:{\"name\":\"a\"}"],
            vec!["f:spec", "f:containers", "k:{\"name\":\"a\"}", "f:image"],
        ]
    );
    let err = FieldSet::from_fields_v1(&json!({"x:y": {}})).expect_err("unknown element");
    assert_eq!(err.to_string(), "unknown path element \"x:y\"");
    assert!(FieldSet::from_fields_v1(&json!({"f:a": 1})).is_err());
}

#[test]
fn difference_removes_members_only_and_prunes_empty_nodes() {
    let all = set(&[&["f:data"], &["f:data", "f:a"], &["f:data", "f:b"]]);
    let out = all.difference(&set(&[&["f:data", "f:a"]]));
    assert_eq!(out, set(&[&["f:data"], &["f:data", "f:b"]]));
    let out = all.difference(&set(&[&["f:data"]]));
    assert_eq!(out, set(&[&["f:data", "f:a"], &["f:data", "f:b"]]));
    assert!(all.difference(&all).is_empty());
}

#[test]
fn union_and_intersection_are_member_wise() {
    let a = set(&[&["f:a"], &["f:b", "f:c"]]);
    let b = set(&[&["f:b", "f:c"], &["f:d"]]);
    assert_eq!(a.union(&b), set(&[&["f:a"], &["f:b", "f:c"], &["f:d"]]));
    assert_eq!(a.intersection(&b), set(&[&["f:b", "f:c"]]));
    assert!(a.intersection(&set(&[&["f:b"]])).is_empty());
}

#[test]
fn without_subtrees_drops_everything_below_an_ignored_member() {
    let all = set(&[&["f:status", "f:replicas"], &["f:spec", "f:replicas"]]);
    let out = all.without_subtrees(&set(&[&["f:status"]]));
    assert_eq!(out, set(&[&["f:spec", "f:replicas"]]));
}

#[test]
fn paths_display_as_the_real_server_prints_them_in_conflicts() {
    let path: Vec<String> = ["f:spec", "f:containers", "k:{\"name\":\"a\"}", "f:image"]
        .map(String::from)
        .to_vec();
    assert_eq!(display(&path), ".spec.containers[name=\"a\"].image");
    let ports: Vec<String> = ["f:ports", "k:{\"containerPort\":80,\"protocol\":\"TCP\"}"]
        .map(String::from)
        .to_vec();
    assert_eq!(display(&ports), ".ports[containerPort=80,protocol=\"TCP\"]");
    let set_item: Vec<String> = ["f:metadata", "f:finalizers", "v:\"x/a\""]
        .map(String::from)
        .to_vec();
    assert_eq!(display(&set_item), ".metadata.finalizers[=\"x/a\"]");
    assert_eq!(display(&["f:args".into(), "i:0".into()]), ".args[0]");
}
