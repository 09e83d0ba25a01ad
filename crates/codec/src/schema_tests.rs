use serde_json::json;

use super::*;

#[test]
fn built_in_groups_map_to_their_proto_packages() {
    for (api_version, package) in [
        ("v1", "k8s.io.api.core.v1"),
        ("apps/v1", "k8s.io.api.apps.v1"),
        ("rbac.authorization.k8s.io/v1", "k8s.io.api.rbac.v1"),
        ("coordination.k8s.io/v1", "k8s.io.api.coordination.v1"),
        (
            "apiextensions.k8s.io/v1",
            "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1",
        ),
    ] {
        assert_eq!(
            package_of(api_version).as_deref(),
            Some(package),
            "{api_version}"
        );
    }
}

#[test]
fn custom_groups_have_no_protobuf_form() {
    for api_version in [
        "police.example.com/v1beta1",
        "apps.example.com/v1",
        "",
        "a/b/c",
        "apps/",
    ] {
        assert_eq!(package_of(api_version), None, "{api_version:?}");
    }
    assert!(KindSchema::lookup("police.example.com/v1beta1", "WhiteList").is_none());
    assert!(KindSchema::lookup("apps/v1", "WhiteList").is_none());
}

#[test]
fn every_kind_the_test_server_serves_has_a_schema() {
    for (api_version, kind) in [
        ("v1", "Namespace"),
        ("v1", "ConfigMap"),
        ("v1", "Secret"),
        ("v1", "Pod"),
        ("v1", "Service"),
        ("v1", "ServiceAccount"),
        ("v1", "Node"),
        ("v1", "Event"),
        ("events.k8s.io/v1", "Event"),
        ("apps/v1", "Deployment"),
        ("apps/v1", "ReplicaSet"),
        ("apps/v1", "StatefulSet"),
        ("apps/v1", "DaemonSet"),
        ("batch/v1", "Job"),
        ("batch/v1", "CronJob"),
        ("coordination.k8s.io/v1", "Lease"),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
        ("autoscaling/v1", "Scale"),
        ("authorization.k8s.io/v1", "SelfSubjectAccessReview"),
        ("v1", "Status"),
    ] {
        assert!(
            KindSchema::lookup(api_version, kind).is_some(),
            "{api_version} {kind}"
        );
    }
}

#[test]
fn a_deployment_survives_encode_then_decode() {
    let deployment = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "labels": {"app": "web"},
            "creationTimestamp": "2026-11-23T19:00:00Z",
        },
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{
                    "name": "nginx",
                    "image": "nginx:1.27",
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}},
                }]},
            },
        },
    });
    let schema = KindSchema::lookup("apps/v1", "Deployment").unwrap();
    let bytes = schema.encode_json(&deployment).unwrap();
    assert_eq!(schema.decode_json(&bytes).unwrap(), deployment);
}

#[test]
fn type_meta_of_embedded_objects_is_left_out_as_go_protobuf_leaves_it_out() {
    // What the test server stores for a StatefulSet with a claim template (v1.36 defaults the
    // template's `apiVersion` and `kind`); Go's `TypeMeta` has no protobuf fields.
    let set = json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
            "volumeClaimTemplates": [{
                "apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"]},
            }],
        },
    });
    let schema = KindSchema::lookup("apps/v1", "StatefulSet").unwrap();
    let bytes = schema.encode_json(&set).unwrap();
    let mut without = set.clone();
    let claim = &mut without["spec"]["volumeClaimTemplates"][0];
    claim
        .as_object_mut()
        .unwrap()
        .retain(|k, _| k != "apiVersion" && k != "kind");
    assert_eq!(schema.decode_json(&bytes).unwrap(), without);
    let not_an_object = KindSchema::lookup("apps/v1", "Deployment").unwrap();
    let refused = not_an_object
        .encode_json(&json!({"spec": {"selector": {"kind": "x"}}}))
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "spec.selector.kind: unknown field of LabelSelector"
    );
}

#[test]
fn secret_bytes_micro_times_and_raw_json_keep_their_json_forms() {
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "s"},
        "data": {"password": "aHVudGVyMg=="},
        "type": "Opaque",
    });
    let lease = json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "l", "managedFields": [{"manager": "m", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]},
        "spec": {"holderIdentity": "a", "renewTime": "2026-11-23T19:00:00.123456Z", "leaseDurationSeconds": 15},
    });
    for (api_version, kind, object) in [
        ("v1", "Secret", secret),
        ("coordination.k8s.io/v1", "Lease", lease),
    ] {
        let schema = KindSchema::lookup(api_version, kind).unwrap();
        let bytes = schema.encode_json(&object).unwrap();
        assert_eq!(schema.decode_json(&bytes).unwrap(), object);
    }
}

#[test]
fn unknown_fields_and_mistyped_values_are_errors_naming_the_field() {
    let schema = KindSchema::lookup("v1", "ConfigMap").unwrap();
    let unknown = schema
        .encode_json(&json!({"metadata": {"nmae": "x"}}))
        .unwrap_err();
    assert_eq!(
        unknown.to_string(),
        "metadata.nmae: unknown field of ObjectMeta"
    );
    let mistyped = schema.encode_json(&json!({"data": {"k": 1}})).unwrap_err();
    assert_eq!(
        mistyped.to_string(),
        "data[k]: 1 does not fit a string field"
    );
}
