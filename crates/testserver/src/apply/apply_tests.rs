use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::authz::UserInfo;
use crate::registry::ResourceDefinition;
use crate::request::route::Target;
use crate::verb::Verb;

fn builtin_schemas(group: &str, version: &str) -> KindSchemas {
    let path = if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    };
    let doc = &crate::openapi::builtin::get().unwrap().v3[&path];
    let map = doc
        .value
        .pointer("/components/schemas")
        .unwrap()
        .as_object()
        .unwrap();
    KindSchemas {
        schemas: Some(GroupSchemas::Builtin(map)),
        builtin: true,
    }
}

fn target(group: &str, kind: &str, subresource: Option<&str>, writer: Writer) -> Scope {
    let target = Target {
        def: Arc::new(ResourceDefinition {
            group: group.into(),
            version: "v1".into(),
            kind: kind.into(),
            status_subresource: kind == "Deployment",
            ..Default::default()
        }),
        namespace: Some("ns".into()),
        name: Some("x".into()),
        subresource: subresource.map(String::from),
        watch_path: false,
    };
    Scope {
        target,
        verb: Verb::Update,
        user: UserInfo::admin(),
        dry_run: false,
        request_version: None,
        format: crate::request::negotiation::WireFormat::Json,
        writer,
    }
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

fn parsed(config: &Value, target: &Scope) -> Config {
    Config::parse(config.to_string().as_bytes(), target).unwrap()
}

fn cm(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": data})
}

fn apply_cm(
    live: Option<&Value>,
    config: Value,
    manager: &str,
    force: bool,
) -> Result<Value, ApiError> {
    let schemas = builtin_schemas("", "v1");
    let target = target("", "ConfigMap", None, writer(manager, force));
    let config = parsed(&config, &target);
    Tracker::new(&schemas, &target).apply(live, &config, manager)
}

#[test]
fn a_create_records_maps_the_zero_value_lacks_with_a_dot() {
    let schemas = builtin_schemas("", "v1");
    let target = target("", "ConfigMap", None, writer("kubectl-create", false));
    let mut object = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "x", "uid": "u", "labels": {"app": "a"}}, "data": {"a": "1"}});
    Tracker::new(&schemas, &target)
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
    let schemas = builtin_schemas("", "v1");
    let anonymous = Writer {
        field_manager: None,
        agent: "curl".into(),
        force: false,
    };
    let target = target("", "ConfigMap", None, anonymous);
    let old = cm(json!({"a": "1"}));
    let mut next = cm(json!({"a": "2"}));
    Tracker::new(&schemas, &target)
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
    let schemas = builtin_schemas("", "v1");
    let target = target("", "ConfigMap", None, Writer::default());
    let mut next = cm(json!({"a": "1"}));
    Tracker::new(&schemas, &target)
        .record_update(None, &mut next, &[])
        .unwrap();
    let managers: Vec<String> = fields_of(&next).into_iter().map(|(m, _, _)| m).collect();
    assert_eq!(managers, ["unknown"]);
}

#[test]
fn an_update_takes_changed_fields_from_other_managers_and_drops_removed_ones() {
    let first = apply_cm(None, cm(json!({"a": "1", "b": "2"})), "m1", false).unwrap();
    let schemas = builtin_schemas("", "v1");
    let target = target("", "ConfigMap", None, writer("editor", false));
    let mut next = first.clone();
    next["data"] = json!({"a": "9"});
    Tracker::new(&schemas, &target)
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
    assert_eq!(err.code, 409);
    assert_eq!(
        err.message,
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
    assert_eq!(
        (err.code, err.message.as_str()),
        (400, "metadata.managedFields must be nil")
    );
}

#[test]
fn status_applies_own_only_status_and_conflict_with_status_updaters() {
    let schemas = builtin_schemas("apps", "v1");
    let updater = target("apps", "Deployment", Some("status"), writer("ctrl", false));
    let live = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
                      "spec": {"replicas": 1}});
    let mut next = live.clone();
    next["status"] = json!({"replicas": 5});
    Tracker::new(&schemas, &updater)
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
    let applier = target("apps", "Deployment", Some("status"), writer("m3", false));
    let config = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
                        "spec": {"replicas": 7}, "status": {"replicas": 3}});
    let config = parsed(&config, &applier);
    let err = Tracker::new(&schemas, &applier)
        .apply(Some(&next), &config, "m3")
        .unwrap_err();
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"ctrl\" with subresource \"status\" using apps/v1: .status.replicas"
    );
}

#[test]
fn container_ports_key_on_port_and_defaulted_protocol() {
    let schemas = builtin_schemas("apps", "v1");
    let applier = target("apps", "Deployment", None, writer("m1", false));
    let config = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
        "spec": {"template": {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80}]}]}}}});
    let config = parsed(&config, &applier);
    let out = Tracker::new(&schemas, &applier)
        .apply(None, &config, "m1")
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
fn configurations_the_schema_cannot_type_are_500s_naming_object_and_path() {
    let schemas = builtin_schemas("apps", "v1");
    let applier = target("apps", "Deployment", None, writer("m1", false));
    let config = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
        "spec": {"template": {"spec": {"containers": [{"name": "a"}, {"name": "a", "image": "b"}]}}}});
    let config = parsed(&config, &applier);
    let err = Tracker::new(&schemas, &applier)
        .apply(None, &config, "m1")
        .unwrap_err();
    assert_eq!((err.code, &*err.reason), (500, ""));
    assert_eq!(
        err.message,
        "failed to create typed patch object (/x; apps/v1, Kind=Deployment): .spec.template.spec.containers: duplicate entries for key [name=\"a\"]"
    );
}

#[test]
fn configurations_of_another_kind_or_name_are_rejected() {
    let target = target("", "ConfigMap", None, writer("m1", false));
    let other = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}});
    let err = Config::parse(other.to_string().as_bytes(), &target)
        .err()
        .unwrap();
    assert_eq!(
        (err.code, err.message.as_str()),
        (400, "invalid object type: /v1, Kind=Secret")
    );
    let untyped = json!({"kind": "ConfigMap", "metadata": {"name": "x"}});
    let err = Config::parse(untyped.to_string().as_bytes(), &target)
        .err()
        .unwrap();
    assert_eq!(err.message, "invalid object type: /, Kind=ConfigMap");
    let renamed = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "y"}});
    let err = Config::parse(renamed.to_string().as_bytes(), &target)
        .err()
        .unwrap();
    assert_eq!(
        err.message,
        "the name of the object (y) does not match the name on the URL (x)"
    );
}

#[test]
fn a_missing_field_manager_is_the_real_422() {
    let err = Writer::default().applier().unwrap_err();
    assert_eq!(err.code, 422);
    assert_eq!(
        err.message,
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
}

#[test]
fn scale_writes_are_managers_of_the_scale_subresource() {
    let schemas = builtin_schemas("apps", "v1");
    let target = target("apps", "Deployment", None, writer("kubectl", false));
    let old = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
                     "spec": {"replicas": 1}});
    let mut next = old.clone();
    next["spec"]["replicas"] = json!(3);
    Tracker::new(&schemas, &target)
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
    let schemas = builtin_schemas("apps", "v1");
    let target = target("apps", "Deployment", None, writer("kubectl-create", false));
    let mut object = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
        "spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}}});
    Tracker::new(&schemas, &target)
        .record_update(None, &mut object, &[])
        .unwrap();
    assert_eq!(
        object["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
            "k:{\"name\":\"nginx\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}})
    );
}
