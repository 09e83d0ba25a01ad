use serde_json::{Map, json};

use super::*;
use crate::{Config, Error};

/// The parts of v1.36's `api/v1` and `apis/apps/v1` documents the tests touch, as they are
/// there: a ConfigMap's `data`, and a Deployment down to its containers' ports (keyed by
/// `containerPort` and `protocol`, which defaults to TCP), with `status`.
fn components() -> Map<String, Value> {
    let reference = |name: &str| json!({"allOf": [{"$ref": format!("#/components/schemas/{name}")}], "default": {}});
    let json = json!({
        "ObjectMeta": {"type": "object", "properties": {
            "name": {"type": "string"}, "namespace": {"type": "string"}, "uid": {"type": "string"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "managedFields": {"type": "array", "x-kubernetes-list-type": "atomic",
                              "items": {"type": "object"}}}},
        "ConfigMap": {"type": "object", "properties": {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"},
            "metadata": reference("ObjectMeta"),
            "data": {"type": "object", "additionalProperties": {"type": "string"}}}},
        "Deployment": {"type": "object", "properties": {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"},
            "metadata": reference("ObjectMeta"),
            "spec": reference("DeploymentSpec"),
            "status": reference("DeploymentStatus")}},
        "DeploymentSpec": {"type": "object", "required": ["selector", "template"], "properties": {
            "replicas": {"type": "integer"},
            "selector": {"type": "object", "x-kubernetes-map-type": "atomic"},
            "template": reference("PodTemplateSpec")}},
        "DeploymentStatus": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
        "PodTemplateSpec": {"type": "object", "properties": {
            "metadata": reference("ObjectMeta"), "spec": reference("PodSpec")}},
        "PodSpec": {"type": "object", "required": ["containers"], "properties": {
            "containers": {"type": "array", "x-kubernetes-list-type": "map",
                           "x-kubernetes-list-map-keys": ["name"],
                           "x-kubernetes-patch-strategy": "merge",
                           "x-kubernetes-patch-merge-key": "name",
                           "items": {"$ref": "#/components/schemas/Container"}}}},
        "Container": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "default": ""}, "image": {"type": "string"},
            "ports": {"type": "array", "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
                      "items": {"$ref": "#/components/schemas/ContainerPort"}}}},
        "ContainerPort": {"type": "object", "required": ["containerPort"], "properties": {
            "containerPort": {"type": "integer", "default": 0},
            "protocol": {"type": "string", "default": "TCP"}}}
    });
    match json {
        Value::Object(map) => map,
        _ => unreachable!("a literal object"),
    }
}

const NOW: &str = "2030-01-01T00:00:00Z";

/// The tracker of a write by `writer` to `kind` (ConfigMap in v1, Deployment in apps/v1 with a
/// status subresource), through `subresource`.
fn tracker<'a>(
    components: &'a Map<String, Value>,
    kind: &str,
    subresource: Option<&str>,
    writer: &'a Writer,
) -> Tracker<'a> {
    let schema = Schema::openapi(components, components.get(kind)).built_in();
    let endpoint = Endpoint {
        api_version: if kind == "Deployment" {
            "apps/v1"
        } else {
            "v1"
        }
        .into(),
        subresource: subresource.unwrap_or_default().into(),
        status_subresource: kind == "Deployment",
    };
    Tracker::new(schema, endpoint, writer, NOW)
}

fn writer(manager: &str, force: bool) -> Writer {
    Writer {
        field_manager: Some(manager.into()),
        agent: "agent".into(),
        force,
    }
}

fn fields_of(object: &Value) -> Vec<(String, String, Value)> {
    object["metadata"]["managedFields"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|e| {
                    let op = e["operation"].as_str().unwrap_or_default().to_string();
                    let manager = e["manager"].as_str().unwrap_or_default().to_string();
                    (manager, op, e["fieldsV1"].clone())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `config` as the test server names a configuration of `x` without a namespace.
fn parsed(config: &Value) -> Config {
    let api_version = config["apiVersion"].as_str().unwrap_or_default();
    let group_version = match api_version.contains('/') {
        true => api_version.to_string(),
        false => format!("/{api_version}"),
    };
    let ident = format!(
        "/x; {group_version}, Kind={}",
        config["kind"].as_str().unwrap_or_default()
    );
    Config::new(config.clone(), ident)
}

fn cm(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": data})
}

fn apply_cm(
    live: Option<&Value>,
    config: Value,
    manager: &str,
    force: bool,
) -> Result<Value, Error> {
    let components = components();
    let writer = writer(manager, force);
    tracker(&components, "ConfigMap", None, &writer).apply(live, &parsed(&config), manager)
}

#[test]
fn a_create_records_maps_the_zero_value_lacks_with_a_dot() {
    let (components, writer) = (components(), writer("kubectl-create", false));
    let mut object = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "x", "uid": "u", "labels": {"app": "a"}}, "data": {"a": "1"}});
    tracker(&components, "ConfigMap", None, &writer)
        .record_update(None, &mut object, &[])
        .unwrap();
    assert_eq!(
        fields_of(&object),
        [(
            "kubectl-create".to_string(),
            "Update".to_string(),
            json!({"f:data": {".": {}, "f:a": {}}, "f:metadata": {"f:labels": {".": {}, "f:app": {}}}})
        )]
    );
}

#[test]
fn without_field_manager_an_update_is_named_by_the_user_agent() {
    let components = components();
    let anonymous = Writer {
        field_manager: None,
        agent: "curl".into(),
        force: false,
    };
    let old = cm(json!({"a": "1"}));
    let mut next = cm(json!({"a": "2"}));
    tracker(&components, "ConfigMap", None, &anonymous)
        .record_update(Some(&old), &mut next, &[])
        .unwrap();
    assert_eq!(
        fields_of(&next),
        [(
            "curl".into(),
            "Update".into(),
            json!({"f:data": {"f:a": {}}})
        )]
    );
}

#[test]
fn an_update_nobody_names_is_recorded_as_unknown() {
    let (components, nobody) = (components(), Writer::default());
    let mut next = cm(json!({"a": "1"}));
    tracker(&components, "ConfigMap", None, &nobody)
        .record_update(None, &mut next, &[])
        .unwrap();
    let managers: Vec<String> = fields_of(&next).into_iter().map(|(m, _, _)| m).collect();
    assert_eq!(managers, ["unknown"]);
}

#[test]
fn an_update_takes_changed_fields_from_other_managers_and_drops_removed_ones() {
    let first = apply_cm(None, cm(json!({"a": "1", "b": "2"})), "m1", false).unwrap();
    let (components, editor) = (components(), writer("editor", false));
    let mut next = first.clone();
    next["data"] = json!({"a": "9"});
    tracker(&components, "ConfigMap", None, &editor)
        .record_update(Some(&first), &mut next, &[])
        .unwrap();
    assert_eq!(
        fields_of(&next),
        [(
            "editor".into(),
            "Update".into(),
            json!({"f:data": {"f:a": {}}})
        )]
    );
}

#[test]
fn apply_creates_owning_exactly_the_applied_fields() {
    let out = apply_cm(None, cm(json!({"a": "1"})), "m1", false).unwrap();
    assert_eq!(out["data"], json!({"a": "1"}));
    assert_eq!(
        fields_of(&out),
        [("m1".into(), "Apply".into(), json!({"f:data": {"f:a": {}}}))]
    );
}

#[test]
fn applying_a_different_value_of_another_managers_field_conflicts() {
    let live = apply_cm(None, cm(json!({"a": "1"})), "m1", false).unwrap();
    let err = apply_cm(Some(&live), cm(json!({"a": "2"})), "m2", false).unwrap_err();
    assert!(err.is_conflict());
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"m1\": .data.a"
    );
}

#[test]
fn applying_the_same_value_shares_the_field() {
    let live = apply_cm(None, cm(json!({"a": "1"})), "m1", false).unwrap();
    let out = apply_cm(Some(&live), cm(json!({"a": "1", "b": "2"})), "m2", false).unwrap();
    assert_eq!(
        fields_of(&out),
        [
            ("m1".into(), "Apply".into(), json!({"f:data": {"f:a": {}}})),
            (
                "m2".into(),
                "Apply".into(),
                json!({"f:data": {"f:a": {}, "f:b": {}}})
            ),
        ]
    );
}

#[test]
fn force_takes_the_field_and_the_loser_keeps_the_rest() {
    let live = apply_cm(None, cm(json!({"a": "1", "c": "3"})), "m1", false).unwrap();
    let out = apply_cm(Some(&live), cm(json!({"a": "2"})), "m2", true).unwrap();
    assert_eq!(out["data"], json!({"a": "2", "c": "3"}));
    assert_eq!(
        fields_of(&out),
        [
            ("m1".into(), "Apply".into(), json!({"f:data": {"f:c": {}}})),
            ("m2".into(), "Apply".into(), json!({"f:data": {"f:a": {}}})),
        ]
    );
}

#[test]
fn fields_no_longer_applied_are_removed_unless_another_manager_owns_them() {
    let live = apply_cm(None, cm(json!({"a": "1", "b": "2", "c": "3"})), "m1", false).unwrap();
    let live = apply_cm(Some(&live), cm(json!({"b": "2"})), "m2", false).unwrap();
    let out = apply_cm(Some(&live), cm(json!({"c": "3"})), "m1", false).unwrap();
    assert_eq!(out["data"], json!({"b": "2", "c": "3"}));
}

#[test]
fn apply_rejects_configurations_that_set_managed_fields() {
    let mut config = cm(json!({}));
    config["metadata"]["managedFields"] = json!([]);
    let err = apply_cm(None, config, "m1", false).unwrap_err();
    assert_eq!(err, Error::ManagedFieldsInConfiguration);
}

#[test]
fn status_applies_own_only_status_and_conflict_with_status_updaters() {
    let (components, ctrl, m3) = (components(), writer("ctrl", false), writer("m3", false));
    let live = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
                      "spec": {"replicas": 1}});
    let mut next = live.clone();
    next["status"] = json!({"replicas": 5});
    tracker(&components, "Deployment", Some("status"), &ctrl)
        .record_update(Some(&live), &mut next, &[])
        .unwrap();
    assert_eq!(
        fields_of(&next),
        [(
            "ctrl".into(),
            "Update".into(),
            json!({"f:status": {"f:replicas": {}}})
        )]
    );
    let config = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
                        "spec": {"replicas": 7}, "status": {"replicas": 3}});
    let err = tracker(&components, "Deployment", Some("status"), &m3)
        .apply(Some(&next), &parsed(&config), "m3")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"ctrl\" with subresource \"status\" using apps/v1: .status.replicas"
    );
}

#[test]
fn container_ports_key_on_port_and_defaulted_protocol() {
    let (components, m1) = (components(), writer("m1", false));
    let config = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
        "spec": {"template": {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80}]}]}}}});
    let out = tracker(&components, "Deployment", None, &m1)
        .apply(None, &parsed(&config), "m1")
        .unwrap();
    assert_eq!(
        out["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"a\"}": {
            ".": {}, "f:name": {},
            "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}}
        }}}}}})
    );
}

#[test]
fn configurations_the_schema_cannot_type_are_refused_naming_object_and_path() {
    let (components, m1) = (components(), writer("m1", false));
    let config = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
        "spec": {"template": {"spec": {"containers": [{"name": "a"}, {"name": "a", "image": "b"}]}}}});
    let err = tracker(&components, "Deployment", None, &m1)
        .apply(None, &parsed(&config), "m1")
        .unwrap_err();
    assert!(matches!(err, Error::UntypedConfiguration { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "failed to create typed patch object (/x; apps/v1, Kind=Deployment): .spec.template.spec.containers: duplicate entries for key [name=\"a\"]"
    );
}

#[test]
fn scale_writes_are_managers_of_the_scale_subresource() {
    let (components, kubectl) = (components(), writer("kubectl", false));
    let old = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
                     "spec": {"replicas": 1}});
    let mut next = old.clone();
    next["spec"]["replicas"] = json!(3);
    tracker(&components, "Deployment", None, &kubectl)
        .through("scale")
        .record_update(Some(&old), &mut next, &[])
        .unwrap();
    let entry = &next["metadata"]["managedFields"][0];
    assert_eq!(entry["subresource"], "scale");
    assert_eq!(entry["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));
    // v1.36 rebuilds the entry from the Scale's without a time.
    assert_eq!(entry.get("time"), None);
}

#[test]
fn a_created_pod_template_owns_its_containers_without_a_dot_on_the_list() {
    let (components, create) = (components(), writer("kubectl-create", false));
    let mut object = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
        "spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}}});
    tracker(&components, "Deployment", None, &create)
        .record_update(None, &mut object, &[])
        .unwrap();
    assert_eq!(
        object["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
            "k:{\"name\":\"nginx\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}})
    );
}
