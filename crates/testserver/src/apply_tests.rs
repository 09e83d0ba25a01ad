use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::authz::UserInfo;
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
    }
}

fn target(group: &str, kind: &str, writer: Writer) -> Scope {
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
        subresource: None,
        watch_path: false,
    };
    Scope {
        target,
        verb: Verb::Update,
        user: UserInfo::admin(),
        dry_run: false,
        request_version: None,
        authorizer: std::sync::Arc::new(crate::authz::AllowAll),
        format: crate::request::negotiation::WireFormat::Json,
        writer,
        audit: crate::audit::RequestAudit::default(),
    }
}

fn writer(manager: &str) -> Writer {
    Writer {
        field_manager: Some(manager.into()),
        agent: "agent".into(),
        force: false,
    }
}

fn parsed(config: &Value, target: &Scope) -> Config {
    parse_config(config.to_string().as_bytes(), target).unwrap()
}

#[test]
fn the_shipped_documents_key_container_ports_on_port_and_defaulted_protocol() {
    let schemas = builtin_schemas("apps", "v1");
    let applier = target("apps", "Deployment", writer("m1"));
    let config = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
        "spec": {"template": {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80}]}]}}}});
    let out = schemas
        .tracker(&applier)
        .apply(None, &parsed(&config, &applier), "m1")
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
fn a_create_is_compared_against_the_zero_value_of_the_go_type() {
    let schemas = builtin_schemas("apps", "v1");
    let creator = target("apps", "Deployment", writer("kubectl-create"));
    let mut object = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
        "spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}}});
    schemas
        .tracker(&creator)
        .record_update(None, &mut object, &[])
        .unwrap();
    assert_eq!(
        object["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
            "k:{\"name\":\"nginx\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}})
    );
}

#[test]
fn configurations_that_cannot_be_typed_are_500s_naming_object_and_path() {
    let schemas = builtin_schemas("apps", "v1");
    let applier = target("apps", "Deployment", writer("m1"));
    let config = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
        "spec": {"template": {"spec": {"containers": [{"name": "a"}, {"name": "a", "image": "b"}]}}}});
    let err = schemas
        .tracker(&applier)
        .apply(None, &parsed(&config, &applier), "m1")
        .map_err(ApiError::from)
        .unwrap_err();
    assert_eq!((err.code, &*err.reason), (500, ""));
    assert_eq!(
        err.message,
        "failed to create typed patch object (/x; apps/v1, Kind=Deployment): .spec.template.spec.containers: duplicate entries for key [name=\"a\"]"
    );
}

#[test]
fn configurations_of_another_kind_or_name_are_rejected() {
    let target = target("", "ConfigMap", writer("m1"));
    let other = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}});
    let err = parse_config(other.to_string().as_bytes(), &target)
        .err()
        .unwrap();
    assert_eq!(
        (err.code, err.message.as_str()),
        (400, "invalid object type: /v1, Kind=Secret")
    );
    let untyped = json!({"kind": "ConfigMap", "metadata": {"name": "x"}});
    let err = parse_config(untyped.to_string().as_bytes(), &target)
        .err()
        .unwrap();
    assert_eq!(err.message, "invalid object type: /, Kind=ConfigMap");
    let renamed = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "y"}});
    let err = parse_config(renamed.to_string().as_bytes(), &target)
        .err()
        .unwrap();
    assert_eq!(
        err.message,
        "the name of the object (y) does not match the name on the URL (x)"
    );
}

#[test]
fn field_manager_and_force_refusals_are_the_real_422s() {
    let err = ApiError::from(Error::FieldManagerRequired);
    assert_eq!(err.code, 422);
    assert_eq!(
        err.message,
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
    let err = ApiError::from(Error::ForceOutsideApply);
    assert_eq!(
        (err.code, err.message.as_str()),
        (
            422,
            "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"
        )
    );
}

#[test]
fn conflicts_are_409s_with_a_cause_per_field() {
    let conflicts = vec![
        kubegen_apply::Conflict {
            manager: "\"a\" using apps/v1".into(),
            field: ".y".into(),
        },
        kubegen_apply::Conflict {
            manager: "\"b\"".into(),
            field: ".x".into(),
        },
    ];
    let err = ApiError::from(Error::Conflicts(conflicts));
    assert_eq!((err.code, &*err.reason), (409, "Conflict"));
    assert_eq!(
        err.message,
        "Apply failed with 2 conflicts: conflicts with \"a\" using apps/v1:\n- .y\nconflicts with \"b\":\n- .x"
    );
    let causes: Vec<(&str, &str, &str)> = err
        .details
        .causes
        .iter()
        .map(|c| (c.reason.as_str(), c.message.as_str(), c.field.as_str()))
        .collect();
    assert_eq!(
        causes,
        [
            (
                "FieldManagerConflict",
                "conflict with \"a\" using apps/v1",
                ".y"
            ),
            ("FieldManagerConflict", "conflict with \"b\"", ".x"),
        ]
    );
    assert!(err.details.name.is_empty() && err.details.kind.is_empty());
}

#[test]
fn managed_fields_refusals_are_400s() {
    let err = ApiError::from(Error::ManagedFieldsInConfiguration);
    assert_eq!(
        (err.code, err.message.as_str()),
        (400, "metadata.managedFields must be nil")
    );
}
