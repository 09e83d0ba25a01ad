use serde_json::json;

use crate::FieldSet;

fn set(fields_v1: serde_json::Value) -> FieldSet {
    FieldSet::from_fields_v1(&fields_v1).expect("test fieldsV1 is valid")
}

#[test]
fn an_owned_scalar_is_extracted_without_its_siblings() {
    let object = json!({"apiVersion": "apps/v1", "spec": {"replicas": 3, "serviceName": "s"}});
    let owned = set(json!({"f:spec": {"f:replicas": {}}}));
    assert_eq!(owned.extract(&object), json!({"spec": {"replicas": 3}}));
}

#[test]
fn list_items_are_selected_by_their_merge_keys_in_object_order() {
    let object = json!({"spec": {"containers": [
        {"name": "a", "image": "a:1", "args": ["x"]},
        {"name": "b", "image": "b:1"},
        {"name": "c", "image": "c:1"},
    ]}});
    let owned = set(json!({"f:spec": {"f:containers": {
        "k:{\"name\":\"c\"}": {".": {}, "f:name": {}, "f:image": {}},
        "k:{\"name\":\"a\"}": {".": {}, "f:name": {}, "f:image": {}},
    }}}));
    assert_eq!(
        owned.extract(&object),
        json!({"spec": {"containers": [
            {"name": "a", "image": "a:1"},
            {"name": "c", "image": "c:1"},
        ]}})
    );
}

#[test]
fn compound_keys_must_all_match() {
    let object = json!({"ports": [
        {"containerPort": 80, "protocol": "TCP", "name": "http"},
        {"containerPort": 80, "protocol": "UDP", "name": "dns"},
    ]});
    let owned = set(json!({"f:ports": {
        "k:{\"containerPort\":80,\"protocol\":\"UDP\"}": {".": {}, "f:name": {}},
    }}));
    assert_eq!(owned.extract(&object), json!({"ports": [{"name": "dns"}]}));
}

#[test]
fn set_items_are_selected_by_value_and_map_entries_by_key() {
    let object = json!({"metadata": {
        "finalizers": ["a", "b", "c"],
        "labels": {"app": "x", "tier": "y"},
    }});
    let owned = set(json!({"f:metadata": {
        "f:finalizers": {"v:\"c\"": {}, "v:\"a\"": {}},
        "f:labels": {".": {}, "f:tier": {}},
    }}));
    assert_eq!(
        owned.extract(&object),
        json!({"metadata": {"finalizers": ["a", "c"], "labels": {"tier": "y"}}})
    );
}

#[test]
fn an_owned_object_without_owned_children_is_kept_whole_and_missing_paths_are_skipped() {
    let object = json!({"spec": {"selector": {"matchLabels": {"app": "x"}}, "args": ["p", "q"]}});
    let owned = set(json!({"f:spec": {
        "f:selector": {}, "f:gone": {}, "f:args": {"i:1": {}},
    }}));
    assert_eq!(
        owned.extract(&object),
        json!({"spec": {"selector": {"matchLabels": {"app": "x"}}, "args": ["q"]}})
    );
}

#[test]
fn a_member_whose_owned_children_are_gone_stays_as_an_empty_container() {
    let object = json!({"metadata": {"labels": {"other": "v"}}});
    let owned = set(json!({"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}));
    assert_eq!(owned.extract(&object), json!({"metadata": {"labels": {}}}));
    let nothing = set(json!({"f:status": {"f:phase": {}}}));
    assert_eq!(nothing.extract(&object), json!({}));
}
