use serde_json::{Map, Value, json};

use super::*;

/// A kind with every shape: a struct with a granular map, an atomic map, an associative list
/// keyed by `name` whose elements have an associative `ports` list (keys `port` and `protocol`,
/// `protocol` defaulting to TCP), a set, an atomic list and an untyped field.
fn components() -> Map<String, Value> {
    let json = json!({
        "Kind": {"type": "object", "properties": {
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                         "additionalProperties": {"type": "string"}},
            "items": {"type": "array", "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["name"],
                      "items": {"$ref": "#/components/schemas/Item"}},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "args": {"type": "array", "items": {"type": "string"}},
            "legacy": {"type": "array", "x-kubernetes-patch-strategy": "merge",
                       "x-kubernetes-patch-merge-key": "ip",
                       "items": {"type": "object", "properties": {"ip": {"type": "string"}}}},
            "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "count": {"type": "integer"}
        }},
        "Item": {"type": "object", "properties": {
            "name": {"type": "string"},
            "image": {"type": "string"},
            "ports": {"type": "array", "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["port", "protocol"],
                      "items": {"type": "object", "properties": {
                          "port": {"type": "integer"},
                          "protocol": {"type": "string", "default": "TCP"}}}}
        }}
    });
    match json {
        Value::Object(map) => map,
        _ => unreachable!("a literal object"),
    }
}

fn with_walker<T>(run: impl FnOnce(&Walker<'_>, Node<'_>) -> T) -> T {
    let components = components();
    let walker = Walker {
        schemas: Schemas {
            components: Some(&components),
        },
    };
    let root = components.get("Kind");
    run(&walker, root)
}

fn to_set(value: Value) -> Result<Value, WalkError> {
    with_walker(|w, root| {
        let mut out = FieldSet::default();
        w.to_set(root, &value, &mut Vec::new(), &mut out)?;
        Ok(out.to_fields_v1())
    })
}

fn merge(live: Value, config: Value) -> Result<Value, WalkError> {
    with_walker(|w, root| w.merge(root, Some(&live), &config, &mut Vec::new()))
}

fn compare(lhs: Value, rhs: Value) -> [Value; 3] {
    with_walker(|w, root| {
        let mut out = Comparison::default();
        w.compare(root, (Some(&lhs), Some(&rhs)), &mut Vec::new(), &mut out)
            .unwrap();
        [
            out.added.to_fields_v1(),
            out.modified.to_fields_v1(),
            out.removed.to_fields_v1(),
        ]
    })
}

#[test]
fn to_set_owns_leaves_list_elements_and_key_fields() {
    let set = to_set(json!({
        "labels": {"a": "1"},
        "items": [{"name": "c", "ports": [{"port": 80}]}],
        "tags": ["x"],
        "count": 1
    }))
    .unwrap();
    assert_eq!(
        set,
        json!({
            "f:count": {},
            "f:labels": {"f:a": {}},
            "f:items": {"k:{\"name\":\"c\"}": {
                ".": {}, "f:name": {},
                "f:ports": {"k:{\"port\":80,\"protocol\":\"TCP\"}": {".": {}, "f:port": {}}}
            }},
            "f:tags": {"v:\"x\"": {}}
        })
    );
}

#[test]
fn atomic_lists_and_maps_are_owned_whole() {
    let set = to_set(json!({"args": ["a", "b"], "selector": {"k": "v"}})).unwrap();
    assert_eq!(set, json!({"f:args": {}, "f:selector": {}}));
}

#[test]
fn patch_merge_key_without_list_type_makes_an_associative_list() {
    let set = to_set(json!({"legacy": [{"ip": "1.2.3.4"}]})).unwrap();
    assert_eq!(
        set,
        json!({"f:legacy": {"k:{\"ip\":\"1.2.3.4\"}": {".": {}, "f:ip": {}}}})
    );
}

#[test]
fn untyped_fields_are_granular_maps_with_atomic_lists() {
    let set = to_set(json!({"raw": {"a": {"b": 1}, "l": [1, 2]}})).unwrap();
    assert_eq!(
        set,
        json!({"f:raw": {"f:a": {".": {}, "f:b": {}}, "f:l": {}}})
    );
}

#[test]
fn empty_maps_are_owned_as_leaves() {
    assert_eq!(
        to_set(json!({"labels": {}})).unwrap(),
        json!({"f:labels": {}})
    );
}

#[test]
fn an_element_without_its_key_is_an_error_naming_the_path() {
    let err = to_set(json!({"items": [{"image": "x"}]})).unwrap_err();
    assert_eq!(
        err,
        ".items: element 0: associative list with keys has an element that omits all key fields [\"name\"] (and doesn't have default values for any key fields)"
    );
}

#[test]
fn duplicate_keys_and_objects_in_sets_are_errors() {
    let err = to_set(json!({"items": [{"name": "a"}, {"name": "a"}]})).unwrap_err();
    assert_eq!(err, ".items: duplicate entries for key [name=\"a\"]");
    let err = to_set(json!({"tags": ["x", {"a": 1}]})).unwrap_err();
    assert_eq!(
        err,
        ".tags: element 1: associative list without keys has an element that's a map type"
    );
}

#[test]
fn merge_is_granular_for_maps_and_replaces_atomic_values() {
    let live =
        json!({"labels": {"a": "1", "b": "2"}, "selector": {"x": "1", "y": "2"}, "args": ["a"]});
    let out = merge(
        live,
        json!({"labels": {"b": "3"}, "selector": {"z": "3"}, "args": ["b"]}),
    )
    .unwrap();
    assert_eq!(
        out,
        json!({"labels": {"a": "1", "b": "3"}, "selector": {"z": "3"}, "args": ["b"]})
    );
}

#[test]
fn merge_keeps_the_applied_order_and_live_only_elements_after_their_predecessors() {
    let live = json!({"items": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]});
    let out = merge(
        live,
        json!({"items": [{"name": "c"}, {"name": "a", "image": "a:2"}]}),
    )
    .unwrap();
    assert_eq!(
        out,
        json!({"items": [{"name": "c"}, {"name": "a", "image": "a:2"}, {"name": "b", "image": "b:1"}]})
    );
    let out = merge(json!({"tags": ["x"]}), json!({"tags": ["y"]})).unwrap();
    assert_eq!(out, json!({"tags": ["x", "y"]}));
}

#[test]
fn compare_reports_added_maps_as_members_and_leaves_by_change() {
    let [added, modified, removed] = compare(
        json!({"count": 1, "tags": ["x"]}),
        json!({"count": 2, "labels": {"a": "1"}}),
    );
    assert_eq!(added, json!({"f:labels": {".": {}, "f:a": {}}}));
    assert_eq!(modified, json!({"f:count": {}}));
    assert_eq!(removed, json!({"f:tags": {".": {}, "v:\"x\"": {}}}));
}

#[test]
fn compare_sees_no_change_in_equal_values() {
    let value = json!({"items": [{"name": "a", "ports": [{"port": 1}]}], "labels": {}});
    let [added, modified, removed] = compare(value.clone(), value);
    assert_eq!(
        [added, modified, removed],
        [json!({}), json!({}), json!({})]
    );
}

#[test]
fn remove_drops_members_unless_another_owner_keeps_a_descendant() {
    with_walker(|w, root| {
        let mut value = json!({"labels": {"a": "1", "b": "2"},
                               "items": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]});
        let remove = FieldSet::from_fields_v1(&json!({
            "f:labels": {"f:a": {}},
            "f:items": {"k:{\"name\":\"a\"}": {".": {}, "f:image": {}},
                        "k:{\"name\":\"b\"}": {".": {}, "f:image": {}}}
        }))
        .unwrap();
        let keep = FieldSet::from_fields_v1(&json!({
            "f:items": {"k:{\"name\":\"b\"}": {"f:name": {}}}
        }))
        .unwrap();
        w.remove(root, &mut value, (&remove, Some(&keep)), &mut Vec::new())
            .unwrap();
        assert_eq!(
            value,
            json!({"labels": {"b": "2"}, "items": [{"name": "b"}]})
        );
    });
}

#[test]
fn a_null_list_compares_as_present_and_empty() {
    let [added, modified, removed] =
        compare(json!({"items": null}), json!({"items": [{"name": "a"}]}));
    assert_eq!(
        added,
        json!({"f:items": {"k:{\"name\":\"a\"}": {".": {}, "f:name": {}}}})
    );
    assert_eq!([modified, removed], [json!({}), json!({})]);
}

#[test]
fn zero_values_hold_empty_structs_and_null_required_fields() {
    let components = json!({
        "Kind": {"type": "object", "required": ["list"], "properties": {
            "spec": {"allOf": [{"$ref": "#/components/schemas/Spec"}], "default": {}},
            "pointer": {"$ref": "#/components/schemas/Spec"},
            "list": {"type": "array", "items": {"type": "string"}}}},
        "Spec": {"type": "object", "properties": {"a": {"type": "string"}}}
    });
    let components = components.as_object().unwrap();
    let schemas = Schemas {
        components: Some(components),
    };
    assert_eq!(
        schemas.zero_value(components.get("Kind")),
        json!({"spec": {}, "list": null})
    );
}
