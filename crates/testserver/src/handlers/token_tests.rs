use serde_json::json;

use super::*;
use crate::registry::ResourceKey;

fn put(state: &mut State, plural: &str, namespace: &str, object: Value) {
    let name = object["metadata"]["name"].as_str().unwrap().to_string();
    state.store.insert(
        &ResourceKey::new("", "v1", plural),
        (namespace.into(), name),
        object,
    );
}

fn state() -> State {
    let mut state = State::new(10);
    put(
        &mut state,
        "nodes",
        "",
        json!({"metadata": {"name": "n", "uid": "u-n"}}),
    );
    put(
        &mut state,
        "pods",
        "ns",
        json!({"metadata": {"name": "p", "uid": "u-p"},
        "spec": {"serviceAccountName": "bot", "nodeName": "n"}}),
    );
    put(
        &mut state,
        "pods",
        "ns",
        json!({"metadata": {"name": "lost", "uid": "u-l"},
        "spec": {"serviceAccountName": "bot", "nodeName": "gone"}}),
    );
    put(
        &mut state,
        "secrets",
        "ns",
        json!({"metadata": {"name": "s", "uid": "u-s"}}),
    );
    state
}

fn bind(state: &State, reference: Value) -> Result<Vec<BoundObject>, (u16, String)> {
    bound_objects(state, &reference, "ns", "bot").map_err(|e| (e.code, e.message))
}

fn object(claim: &'static str, name: &str, uid: &str) -> BoundObject {
    BoundObject {
        claim,
        name: name.into(),
        uid: uid.into(),
    }
}

#[test]
fn expiration_lies_between_ten_minutes_and_two_to_the_32_seconds() {
    for ok in [MIN_EXPIRATION, DEFAULT_EXPIRATION, MAX_EXPIRATION] {
        assert!(check_expiration(ok).is_ok(), "{ok}");
    }
    let short = check_expiration(599).unwrap_err();
    assert_eq!(
        short.message,
        "TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes"
    );
    let long = check_expiration(MAX_EXPIRATION + 1).unwrap_err();
    assert_eq!(long.code, 422);
}

#[test]
fn a_pod_binding_names_its_node_when_the_node_exists() {
    let state = state();
    let pod = json!({"kind": "Pod", "apiVersion": "v1", "name": "p"});
    assert_eq!(
        bind(&state, pod),
        Ok(vec![object("pod", "p", "u-p"), object("node", "n", "u-n")])
    );
    let lost = json!({"kind": "Pod", "apiVersion": "v1", "name": "lost", "uid": "u-l"});
    assert_eq!(bind(&state, lost), Ok(vec![object("pod", "lost", "u-l")]));
    let secret = json!({"kind": "Secret", "apiVersion": "v1", "name": "s"});
    assert_eq!(bind(&state, secret), Ok(vec![object("secret", "s", "u-s")]));
    // The real server looks at the group and kind only: `v2` is still the core group.
    let node = json!({"kind": "Node", "apiVersion": "v2", "name": "n"});
    assert_eq!(bind(&state, node), Ok(vec![object("node", "n", "u-n")]));
}

#[test]
fn a_binding_is_refused_with_v1_36_s_answers() {
    let state = state();
    let cases = [
        (
            json!({"kind": "ConfigMap", "apiVersion": "v1", "name": "x"}),
            400,
            "cannot bind token to object of type /v1, Kind=ConfigMap",
        ),
        (
            json!({"kind": "Secret", "apiVersion": "v1", "name": "nope"}),
            404,
            "secrets \"nope\" not found",
        ),
        (
            json!({"kind": "Node", "apiVersion": "v1", "name": "nope"}),
            404,
            "nodes \"nope\" not found",
        ),
        (
            json!({"kind": "Pod", "apiVersion": "v1", "name": "p", "uid": "old"}),
            409,
            "Operation cannot be fulfilled on Pod \"p\": the UID in the bound object reference (old) does not match the UID in record. The object might have been deleted and then recreated",
        ),
    ];
    for (reference, code, message) in cases {
        assert_eq!(bind(&state, reference), Err((code, message.to_string())));
    }
    let other = bound_objects(
        &state,
        &json!({"kind": "Pod", "apiVersion": "v1", "name": "p"}),
        "ns",
        "erin",
    );
    assert_eq!(other.unwrap_err().code, 400);
}
