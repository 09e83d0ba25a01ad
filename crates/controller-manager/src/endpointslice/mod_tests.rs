use serde_json::json;

use super::*;

fn endpoint(uid: &str, ready: bool) -> Value {
    json!({"addresses": ["10.0.0.1"], "conditions": {"ready": ready}, "targetRef": {"uid": uid}})
}

fn slice_holding(uids: &[&str]) -> Arc<DynamicObject> {
    let endpoints: Vec<Value> = uids.iter().map(|u| endpoint(u, true)).collect();
    Arc::new(
        serde_json::from_value(
            json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": uids.join("-")}, "endpoints": endpoints}),
        )
        .unwrap(),
    )
}

#[test]
fn endpoints_keep_the_order_a_slice_holds_them_in_and_new_ones_come_last() {
    let held = json!([endpoint("b", true), endpoint("a", true)]);
    let wanted = vec![
        endpoint("a", false),
        endpoint("c", true),
        endpoint("b", true),
    ];
    let ordered = keep_order(&held, wanted);
    let uids: Vec<&str> = ordered
        .iter()
        .map(|e| e["targetRef"]["uid"].as_str().unwrap())
        .collect();
    assert_eq!(uids, ["b", "a", "c"]);
    assert_eq!(ordered[1]["conditions"]["ready"], false, "the new content");
}

#[test]
fn the_slice_sharing_most_endpoints_is_reused_else_the_first() {
    let slices = vec![
        slice_holding(&["x"]),
        slice_holding(&["a", "b"]),
        slice_holding(&["c"]),
    ];
    let wanted = Slice {
        ports: json!([]),
        endpoints: vec![
            endpoint("b", true),
            endpoint("c", true),
            endpoint("a", true),
        ],
    };
    assert_eq!(best_match(&slices, &wanted), Some(1));
    let none = Slice {
        ports: Value::Null,
        endpoints: vec![],
    };
    assert_eq!(best_match(&slices, &none), Some(0));
    assert_eq!(best_match(&[], &none), None);
}

#[test]
fn no_endpoints_is_null_as_go_writes_an_empty_slice() {
    assert_eq!(endpoints_value(vec![]), Value::Null);
    assert_eq!(endpoints_value(vec![json!(1)]), json!([1]));
}
